#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Fetch, once, the real Debian kernel the integration tests boot: the
# package linux-image-amd64 depends on, unpacked with dpkg-deb (never
# installed). Result: build/kernel/vmlinuz and build/kernel/VERSION, and
# under build/kernel/modules/lib/modules/<VERSION>/ the loadable modules
# the LUKS test initramfs needs (KMODS, with what they depend on) and a
# modules.dep for exactly those (depmod -b, from kmod).
# Cached: does nothing when all of these exist. An older cache without the
# modules gets them from the same package ($KDIR/PACKAGE), never from a
# newer kernel. KDIR overrides the destination, KMETA the meta-package
# (linux-image-cloud-amd64 gives the kernel most integration boots start,
# into build/kernel-cloud; linux-image-rt-amd64 the second kernel
# test_predict.sh boots, into build/kernel-rt).
set -eu
cd "$(dirname "$0")/.."
KDIR=${KDIR:-build/kernel}
KMETA=${KMETA:-linux-image-amd64}
# The LUKS guest (scripts/mkinitramfs-luks.sh): the virtio disk, the ESP's
# FAT, efivarfs, device-mapper with dm-crypt, AES-XTS (xts over ecb(aes);
# aes itself is built in), and the kernel crypto API cryptsetup uses for
# keyslots.
KMODS=${KMODS:-"virtio_pci virtio_blk vfat nls_cp437 nls_ascii nls_utf8 efivarfs dm-mod dm-crypt ecb xts af_alg algif_skcipher"}

have_modules() {
        [ -s "$KDIR/modules/KMODS" ] && [ "$(cat "$KDIR/modules/KMODS")" = "$KMODS" ]
}
if [ -s "$KDIR/vmlinuz" ] && [ -s "$KDIR/VERSION" ] && have_modules; then
        exit 0
fi

pkg_of() {
        apt-cache depends "$KMETA" 2>/dev/null |
                sed -n 's/^ *Depends: *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -n1
}
if [ -s "$KDIR/PACKAGE" ] && [ -s "$KDIR/vmlinuz" ]; then
        pkg=$(cat "$KDIR/PACKAGE")     # the kernel already there: its own modules
else
        pkg=$(pkg_of)
        if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
                apt-get update -q >/dev/null
                pkg=$(pkg_of)
        fi
fi
if [ -z "$pkg" ]; then
        echo "fetch-kernel: apt-cache does not know $KMETA (run apt-get update?)" >&2
        exit 1
fi
if ! command -v depmod >/dev/null && ! [ -x /sbin/depmod ]; then
        echo "fetch-kernel: depmod is missing (Debian package kmod; make deps)" >&2
        exit 1
fi

echo "fetch-kernel: downloading $pkg"
mkdir -p "$KDIR"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mshim-kernel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 0777 "$tmp"       # apt-get download runs as the _apt user when root
if ! ( cd "$tmp" && apt-get download -q "$pkg" ) >&2; then
        echo "fetch-kernel: cannot download $pkg; if the archive moved on, remove $KDIR and run make deps" >&2
        exit 1
fi
deb=$(ls "$tmp"/*.deb | head -n1)
dpkg-deb -x "$deb" "$tmp/root"
vmlinuz=$(ls "$tmp"/root/boot/vmlinuz-* | head -n1)
version=${vmlinuz##*/vmlinuz-}
if [ -s "$KDIR/VERSION" ] && [ -s "$KDIR/vmlinuz" ] && [ "$(cat "$KDIR/VERSION")" != "$version" ]; then
        echo "fetch-kernel: $pkg is $version, but $KDIR holds $(cat "$KDIR/VERSION"); remove $KDIR and run make deps" >&2
        exit 1
fi

# The modules and what they need, by the package's own dependency data.
src=$tmp/root/lib/modules/$version
PATH=$PATH:/sbin:/usr/sbin depmod -b "$tmp/root" "$version"
python3 - "$src" $KMODS > "$tmp/closure" <<'PY'
import sys
src, want = sys.argv[1], sys.argv[2:]
dep = {}
for line in open(src + "/modules.dep"):
    mod, _, deps = line.partition(":")
    dep[mod] = deps.split()
byname = {m.rsplit("/", 1)[1].split(".ko")[0].replace("-", "_"): m for m in dep}
builtin = {l.strip().rsplit("/", 1)[1].split(".ko")[0].replace("-", "_") for l in open(src + "/modules.builtin")}
out, todo = set(), []
for n in want:
    k = n.replace("-", "_")
    if k in builtin:
        continue
    if k not in byname:
        sys.exit("fetch-kernel: no module %s in this kernel" % n)
    todo.append(byname[k])
while todo:
    m = todo.pop()
    if m not in out:
        out.add(m)
        todo.extend(dep[m])
print("\n".join(sorted(out)))
PY
dst=$tmp/modules/lib/modules/$version
mkdir -p "$dst"
cp "$src/modules.builtin" "$src/modules.order" "$dst/"
[ -f "$src/modules.builtin.modinfo" ] && cp "$src/modules.builtin.modinfo" "$dst/"
while read -r m; do
        mkdir -p "$dst/$(dirname "$m")"
        cp "$src/$m" "$dst/$m"
done < "$tmp/closure"
PATH=$PATH:/sbin:/usr/sbin depmod -b "$tmp/modules" "$version"
echo "$KMODS" > "$tmp/modules/KMODS"

rm -rf "$KDIR/modules.new"
mv "$tmp/modules" "$KDIR/modules.new"
rm -rf "$KDIR/modules"
mv "$KDIR/modules.new" "$KDIR/modules"
if [ ! -s "$KDIR/vmlinuz" ]; then
        cp "$vmlinuz" "$KDIR/vmlinuz.new"
        mv "$KDIR/vmlinuz.new" "$KDIR/vmlinuz"
fi
echo "$version" > "$KDIR/VERSION"
echo "$pkg" > "$KDIR/PACKAGE"
echo "fetch-kernel: $KDIR/vmlinuz ($version), $(wc -l < "$tmp/closure") modules in $KDIR/modules"
