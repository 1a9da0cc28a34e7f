#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `mshim vars add-mok` and `mshim vars mok-import` against the real firmware
# and Debian's Microsoft-signed shim 16 (OVMF_VARS_4M.ms.fd):
#  - control: shim refuses a second stage signed by a key not in MokList;
#  - after add-mok, shim trusts the certificate added to MokList;
#  - after mok-import, shim finds MokNew and starts MokManager.
# (`mshim vars enroll` with and without --secure-boot is booted in
# test_secureboot.sh.) No disk but the ESP; each boot stops as soon as
# the firmware or shim decided.
set -u
# The SMM firmware, its 4 MB builds and stores (lib.sh IT_OVMF_SMM), as
# Debian's own VMs use them.
IT_OVMF_SMM=1
. "$(dirname "$0")/lib.sh"
T=vars-secureboot
SB_CODE=${SB_CODE:-/usr/share/OVMF/OVMF_CODE_4M.secboot.fd}
SB_TIMEOUT=${SB_TIMEOUT:-90}
it_init "$T"
if ! it_require "$IT_CLI" "$SB_CODE" || ! command -v sbsign >/dev/null; then
        it_fail "$T: prerequisites (mshim, OVMF secboot firmware, sbsigntool)"; exit 1
fi

# sb_boot DIR VARS STOP: boot DIR/esp.img with VARS until STOP (grep -E)
# shows on the console or SB_TIMEOUT passes; 0 when STOP matched.
sb_boot() {
        local d=$1 vars=$2 stop=$3 t0=$SECONDS rc=124
        cp "$vars" "$d/vars.fd"
        : > "$d/serial.log"
        # shellcheck disable=SC2054 # commas belong to QEMU options
        qemu-system-x86_64 -machine q35,smm=on,accel=tcg -m 512 -smp 1 \
                -global driver=cfi.pflash01,property=secure,value=on \
                -display none -monitor none -no-reboot -nic none -serial "file:$d/serial.log" \
                -drive "if=pflash,format=raw,unit=0,readonly=on,file=$SB_CODE" \
                -drive "if=pflash,format=raw,unit=1,file=$d/vars.fd" \
                -drive "if=none,id=esp,format=raw,file=$d/esp.img" \
                -device virtio-blk-pci,drive=esp,bootindex=1 </dev/null >"$d/qemu.log" 2>&1 &
        local qpid=$! con tick
        IT_PIDS="$IT_PIDS $qpid"
        # The console watched as it_qemu watches it (lib.sh it_console_new).
        exec {con}<"$d/serial.log" {tick}<> <(:)
        IT_CON_PART=
        while kill -0 "$qpid" 2>/dev/null && [ $((SECONDS - t0)) -lt "$SB_TIMEOUT" ]; do
                it_console_new "$con"
                if it_console_has "$stop"; then
                        sleep 1; rc=0; break
                fi
                read -r -t "$IT_POLL" -u "$tick"
        done
        exec {con}<&- {tick}<&-
        kill "$qpid" 2>/dev/null
        wait "$qpid" 2>/dev/null
        it_log "  $(basename "$d"): $((SECONDS - t0)) s"
        return $rc
}

k=$IT_DIR/keys
mkdir -p "$k"

# ---- shim and the MOK variables ----------------------------------------
# Debian's Microsoft-signed shim 16 with Microsoft's keys (OVMF_VARS_4M.ms.fd).
# The second stage shim starts (grubx64.efi) is MokManager signed with a
# fresh MOK key: shim runs it only if that key is in MokList. MokManager
# prints "Shim UEFI key management" when it runs; it also runs, from the
# Debian-signed mmx64.efi, when shim finds a MokNew request.
SHIM=${SHIM:-$IT_EFIROOT/usr/lib/shim/shimx64.efi.signed}
MM_SIGNED=${MM_SIGNED:-$IT_EFIROOT/usr/lib/shim/mmx64.efi.signed}
MM=${MM:-$IT_EFIROOT/usr/lib/shim/mmx64.efi}
MS_VARS=${MS_VARS:-/usr/share/OVMF/OVMF_VARS_4M.ms.fd}
if ! it_require "$SHIM" "$MM_SIGNED" "$MM" "$MS_VARS"; then
        it_fail "$T: prerequisites (shim-signed)"; exit 1
fi
openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mshim-test-mok/" -days 3650 \
        -keyout "$k/mok.key" -out "$k/mok.pem" 2>/dev/null &&
        "$IT_CLI" sign --key "$k/mok.key" --cert "$k/mok.pem" -o "$k/mm-mok.efi" "$MM" >/dev/null 2>&1 ||
        { it_fail "$T: MOK key"; exit 1; }
m=$IT_DIR/shim
mkdir -p "$m/esp/EFI/BOOT"
cp "$SHIM" "$m/esp/EFI/BOOT/BOOTX64.EFI"
cp "$MM_SIGNED" "$m/esp/EFI/BOOT/mmx64.efi"
cp "$k/mm-mok.efi" "$m/esp/EFI/BOOT/grubx64.efi"
it_mkesp "$m" || { it_fail "$T: set-up (esp)"; exit 1; }
if ! "$IT_CLI" vars add-mok "$MS_VARS" --cert "$k/mok.pem" -o "$k/addmok.fd" ||
   ! "$IT_CLI" vars mok-import "$MS_VARS" --cert "$k/mok.pem" --password mshim-test -o "$k/import.fd"; then
        it_fail "$T: mshim vars add-mok / mok-import"; exit 1
fi
SHIM_DECIDED='Verification failed|Shim UEFI key management|No bootable option'
MOKMANAGER='Shim UEFI key management'

it_log "booting shim with Microsoft's keys only (control) ..."
if sb_boot "$m" "$MS_VARS" "$SHIM_DECIDED" && grep -a -q "Verification failed" "$m/serial.log" &&
   ! grep -a -q "$MOKMANAGER" "$m/serial.log"; then
        it_pass "$T: shim refuses a second stage signed by a key not in MokList"
else
        it_fail "$T: shim refuses a second stage signed by a key not in MokList"
        it_show_serial "$m"
fi
it_log "booting shim after add-mok ..."
if sb_boot "$m" "$k/addmok.fd" "$SHIM_DECIDED" && grep -a -q "$MOKMANAGER" "$m/serial.log" &&
   ! grep -a -q "Verification failed" "$m/serial.log"; then
        it_pass "$T: add-mok: shim trusts the certificate added to MokList"
else
        it_fail "$T: add-mok: shim trusts the certificate added to MokList"
        it_show_serial "$m"
fi
it_log "booting shim after mok-import ..."
if sb_boot "$m" "$k/import.fd" "$SHIM_DECIDED" && grep -a -q "$MOKMANAGER" "$m/serial.log" &&
   ! grep -a -q "Verification failed" "$m/serial.log"; then
        it_pass "$T: mok-import: shim sees MokNew and starts MokManager"
else
        it_fail "$T: mok-import: shim sees MokNew and starts MokManager"
        it_show_serial "$m"
fi
exit "$IT_FAILED"
