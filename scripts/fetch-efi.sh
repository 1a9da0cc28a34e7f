#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Fetch, once, Debian's signed shim, MokManager and GRUB images that the
# tests boot and hash: unpacked with `apt-get download` + `dpkg-deb -x` into
# EFIROOT (default build/debian-efi), never installed. Installing
# shim-signed on an EFI machine runs grub-install on the host's own ESP;
# a test suite must not touch the machine's boot chain.
# Result: EFIROOT/usr/lib/shim/{shimx64.efi.signed,mmx64.efi.signed,
# fbx64.efi.signed,mmx64.efi,fbx64.efi} and
# EFIROOT/usr/lib/grub/x86_64-efi-signed/{grubx64,gcdx64}.efi.signed.
set -eu
cd "$(dirname "$0")/.."
EFIROOT=${EFIROOT:-build/debian-efi}
PKGS="shim-signed shim-helpers-amd64-signed shim-unsigned grub-efi-amd64-signed"

[ -s "$EFIROOT/.complete" ] && exit 0

echo "fetch-efi: downloading $PKGS"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mshim-efi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 0777 "$tmp"       # apt-get download runs as the _apt user when root
if ! ( cd "$tmp" && apt-get download -q $PKGS ) >&2; then
        [ "$(id -u)" = 0 ] || { echo "fetch-efi: apt-get download failed (run apt-get update?)" >&2; exit 1; }
        apt-get update -q >/dev/null
        ( cd "$tmp" && apt-get download -q $PKGS ) >&2
fi
rm -rf "$EFIROOT.new"
mkdir -p "$EFIROOT.new"
for deb in "$tmp"/*.deb; do
        dpkg-deb -x "$deb" "$EFIROOT.new"
done
for f in usr/lib/shim/shimx64.efi.signed usr/lib/shim/mmx64.efi.signed usr/lib/shim/mmx64.efi \
         usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed; do
        [ -s "$EFIROOT.new/$f" ] || { echo "fetch-efi: $f missing from the packages" >&2; exit 1; }
done
(cd "$tmp" && ls *.deb) > "$EFIROOT.new/.complete"
rm -rf "$EFIROOT"
mv "$EFIROOT.new" "$EFIROOT"
echo "fetch-efi: $EFIROOT ($(tr '\n' ' ' < "$EFIROOT/.complete"))"
