#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Boot counting on a real FAT file system, written by both sides: the
# entry mshim-test+3-0.conf, renamed by the loader (UEFI, OVMF's FAT
# driver) to +2-1 before it boots it, then by `mshim bless` in the guest
# (Linux vfat) to mshim-test.conf; the power is cut right after the bless
# (scripts/mkinitramfs-luks.sh: poweroff -n -f, no sync, no unmount).
# The disk, read on the host with mtools, must hold mshim-test.conf with the
# entry's bytes. Linux's vfat writes a renamed file's directory entry with
# size 0 and no cluster, and fills them in only when the inode is written
# back: a bless that syncs only the directory leaves an empty entry after a
# power cut (found on the real Debian system, docs/TESTING.md), and mshim
# then skips the entry.
set -u
. "$(dirname "$0")/lib.sh"
T=bless
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$IT_KDIR/modules/KMODS" /usr/sbin/cryptsetup ||
   ! command -v sfdisk >/dev/null || ! command -v mtype >/dev/null; then
        it_fail "$T: prerequisites (cryptsetup-bin, fdisk, mtools; make; make deps)"; exit 1
fi
# The LUKS initramfs has mshim, vfat and efivarfs; the disk's volume is
# only there to make the GPT disk (the guest stops before it).
d=$(it_newboot powercut) &&
        it_initrd_luks "$IT_KDIR" "$IT_B/it/initrd-luks.img" && cp "$IT_B/it/initrd-luks.img" "$d/esp/initrd.img" &&
        it_mkluks "$IT_DIR" unused &&
        mv "$d/esp/loader/entries/mshim-test.conf" "$d/esp/loader/entries/mshim-test+3-0.conf" &&
        cp "$d/esp/loader/entries/mshim-test+3-0.conf" "$IT_DIR/entry.want" &&
        mkdir -p "$d/esp/mshim-test" && : > "$d/esp/mshim-test/bless-then-power-cut" &&
        it_mkdisk "$d" "$IT_DIR/luks.img" || { it_fail "$T: set-up"; exit 1; }
it_log "booting powercut (no TPM) ..."
it_qemu "$d" --no-tpm --image "$d/disk.img" --timeout 300
rc=$?
it_log "boot powercut finished in $(cat "$d/seconds") s (status $rc)"
if tr -d '\r' < "$d/serial.log" | grep -qx 'MSHIM-BLESS RC 0'; then
        it_pass "$T: the loader booted mshim-test+3-0.conf, mshim bless in the guest succeeded"
else
        it_fail "$T: the loader booted mshim-test+3-0.conf, mshim bless in the guest succeeded"
        it_show_serial "$d"; exit 1
fi
img="$d/disk.img@@1M"
names=$(mdir -i "$img" -b ::/loader/entries 2>&1 | sed 's|.*/||' | sort)
if [ "$names" = mshim-test.conf ]; then
        it_pass "$T: after the power cut loader/entries holds mshim-test.conf alone (blessed)"
else
        it_fail "$T: after the power cut loader/entries holds mshim-test.conf alone (blessed): $names"
fi
if mtype -i "$img" ::/loader/entries/mshim-test.conf > "$IT_DIR/entry.got" 2>&1 && cmp -s "$IT_DIR/entry.want" "$IT_DIR/entry.got"; then
        it_pass "$T: ... with the entry's bytes ($(wc -c < "$IT_DIR/entry.want") of them), not an empty file"
else
        it_fail "$T: ... with the entry's bytes ($(wc -c < "$IT_DIR/entry.want") of them), not an empty file: got $(wc -c < "$IT_DIR/entry.got")"
fi
exit "$IT_FAILED"
