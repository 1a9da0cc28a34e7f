#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Fetch, once, the real Debian kernel the integration tests boot: the
# package linux-image-amd64 depends on, unpacked with dpkg-deb (never
# installed). Result: build/kernel/vmlinuz and build/kernel/VERSION.
# Cached: does nothing when both exist. KDIR overrides the destination,
# KMETA the meta-package (linux-image-rt-amd64 gives the second kernel
# test_predict.sh boots, into build/kernel-rt).
set -eu
cd "$(dirname "$0")/.."
KDIR=${KDIR:-build/kernel}
KMETA=${KMETA:-linux-image-amd64}

if [ -s "$KDIR/vmlinuz" ] && [ -s "$KDIR/VERSION" ]; then
        exit 0
fi

pkg_of() {
        apt-cache depends "$KMETA" 2>/dev/null |
                sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -n1
}
pkg=$(pkg_of)
if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
        apt-get update -q >/dev/null
        pkg=$(pkg_of)
fi
if [ -z "$pkg" ]; then
        echo "fetch-kernel: apt-cache does not know $KMETA (run apt-get update?)" >&2
        exit 1
fi

echo "fetch-kernel: downloading $pkg"
mkdir -p "$KDIR"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mshim-kernel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 0777 "$tmp"       # apt-get download runs as the _apt user when root
( cd "$tmp" && apt-get download -q "$pkg" ) >&2
deb=$(ls "$tmp"/*.deb | head -n1)
dpkg-deb -x "$deb" "$tmp/root"
vmlinuz=$(ls "$tmp"/root/boot/vmlinuz-* | head -n1)
version=${vmlinuz##*/vmlinuz-}
cp "$vmlinuz" "$KDIR/vmlinuz.new"
mv "$KDIR/vmlinuz.new" "$KDIR/vmlinuz"
echo "$version" > "$KDIR/VERSION"
echo "$pkg" > "$KDIR/PACKAGE"
echo "fetch-kernel: $KDIR/vmlinuz ($version)"
