#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A LUKS2 volume that mshim's keyscript unlocks (docs/SEALING.md), proven by
# booting: the disk is a GPT disk (it_mkdisk: partition 1 the ESP,
# partition 2 a LUKS2 volume made on the host by Debian's cryptsetup, its
# first data sector a marker encrypted on the host), the initramfs
# scripts/mkinitramfs-luks.sh (Debian's cryptsetup, the host-built mshim,
# the keyscript hooks/cryptroot-unseal as installed), the guest's serial
# console driven by mok_console.py to type the passphrase when asked.
#
# Cases:
#   nosealed   no sealed key on the ESP: the keyscript says why and asks
#              for the passphrase; typed, it unlocks the volume (the
#              marker decrypts); mshim set LoaderDevicePartUUID, volatile,
#              to the ESP's partition GUID as the disk's GPT holds it
#              (read back with sfdisk); the PCRs replay from the log.
set -u
. "$(dirname "$0")/lib.sh"
T=luks
PASS=${LUKS_PASSPHRASE:-mshim-luks-test}
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$IT_B/kernel/modules/KMODS" /usr/sbin/cryptsetup ||
   ! command -v sfdisk >/dev/null; then
        it_fail "$T: prerequisites (cryptsetup-bin, fdisk, kmod; make; make deps)"; exit 1
fi
it_initrd_luks "$IT_B/kernel" "$IT_B/it/initrd-luks.img" || { it_fail "$T: set-up (LUKS initramfs)"; exit 1; }
it_mkluks "$IT_DIR" "$PASS" || { it_fail "$T: set-up (LUKS volume)"; exit 1; }

# luks_boot NAME: a boot dir with the LUKS initramfs in place of the
# reporting one.
luks_boot() {
        local d
        d=$(it_newboot "$1") && cp "$IT_B/it/initrd-luks.img" "$d/esp/initrd.img" && echo "$d"
}

# has DIR NAME LINE: the guest printed LINE (whole line) on its console.
has() {
        if tr -d '\r' < "$1/serial.log" | grep -qxF -- "$3"; then
                it_pass "$T: $2"
        else
                it_fail "$T: $2: no line '$3'"
                tr -d '\r' < "$1/serial.log" | grep -a 'MSHIM-LUKS\|^mshim:' >&2
        fi
}

# ---- nosealed --------------------------------------------------------------------
d=$(luks_boot nosealed) || { it_fail "$T: set-up nosealed"; exit 1; }
it_console_script "$d/console.script" 'asking for the passphrase' "$PASS"
if it_boot "$d" --disk "$IT_DIR/luks.img" --console "$d/console.script"; then
        it_pass "$T: nosealed: boot, passphrase typed at the prompt"
        has "$d" "nosealed: the keyscript falls back and says why" \
                "MSHIM-LUKS FALLBACK no sealed key for root on the ESP (loader/mshim/root.sealed)"
        has "$d" "nosealed: the typed passphrase unlocks the volume" "MSHIM-LUKS UNLOCKED"
        has "$d" "nosealed: the volume decrypts to the marker written on the host" "MSHIM-LUKS MARKER $IT_LUKS_MARKER"
        # The GPT as sfdisk reads it from the disk, not the constant it was given.
        want=$(sfdisk --part-uuid "$d/disk.img" 1)
        has "$d" "nosealed: LoaderDevicePartUUID is the ESP's partition GUID ($want), upper case, volatile BS|RT" \
                "MSHIM-LUKS PARTUUID $want ATTRS 06000000"
        it_check_replay "$d" "$T: nosealed"
else
        it_fail "$T: nosealed: boot, passphrase typed at the prompt"
fi
exit "$IT_FAILED"
