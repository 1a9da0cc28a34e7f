#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `mshim vars enroll` against the real firmware: fresh test keys are enrolled
# into a copy of OVMF_VARS_4M.fd and OVMF_CODE_4M.secboot.fd boots from it.
#  - with --secure-boot, the Debian kernel stripped of its signature is
#    refused ("Access Denied"/"Security Violation" from BdsDxe);
#  - with --secure-boot, the same kernel signed with the enrolled db key
#    runs (its EFI stub prints "UEFI Secure Boot is enabled");
#  - without --secure-boot (SecureBootEnable 0) the unsigned kernel runs.
# No disk but the ESP; each boot stops as soon as the firmware decided.
set -u
. "$(dirname "$0")/lib.sh"
T=vars-secureboot
SB_CODE=${SB_CODE:-/usr/share/OVMF/OVMF_CODE_4M.secboot.fd}
SB_VARS=${SB_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
SB_TIMEOUT=${SB_TIMEOUT:-90}
it_init "$T"
if ! it_require "$IT_CLI" "$IT_KERNEL" "$SB_CODE" "$SB_VARS" ||
   ! command -v sbsign >/dev/null || ! command -v sbattach >/dev/null; then
        it_fail "$T: prerequisites (mshim, kernel, OVMF secboot firmware, sbsigntool)"; exit 1
fi

# sb_boot DIR VARS STOP: boot DIR/esp.img with VARS until STOP (grep -E)
# shows on the console or SB_TIMEOUT passes; 0 when STOP matched.
sb_boot() {
        local d=$1 vars=$2 stop=$3 t0=$SECONDS rc=124
        cp "$vars" "$d/vars.fd"
        : > "$d/serial.log"
        # shellcheck disable=SC2054 # commas belong to QEMU options
        qemu-system-x86_64 -machine q35,smm=on,accel=tcg -m 1024 -smp 1 \
                -global driver=cfi.pflash01,property=secure,value=on \
                -display none -monitor none -no-reboot -nic none -serial "file:$d/serial.log" \
                -drive "if=pflash,format=raw,unit=0,readonly=on,file=$SB_CODE" \
                -drive "if=pflash,format=raw,unit=1,file=$d/vars.fd" \
                -drive "if=none,id=esp,format=raw,file=$d/esp.img" \
                -device virtio-blk-pci,drive=esp,bootindex=1 </dev/null >"$d/qemu.log" 2>&1 &
        local qpid=$!
        IT_PIDS="$IT_PIDS $qpid"
        while kill -0 "$qpid" 2>/dev/null && [ $((SECONDS - t0)) -lt "$SB_TIMEOUT" ]; do
                if grep -a -q -E "$stop" "$d/serial.log"; then
                        sleep 1; rc=0; break
                fi
                sleep 0.5
        done
        kill "$qpid" 2>/dev/null
        wait "$qpid" 2>/dev/null
        it_log "  $(basename "$d"): $((SECONDS - t0)) s"
        return $rc
}

# newesp NAME EFI: boot dir NAME whose ESP holds EFI as the default loader.
newesp() {
        local d=$IT_DIR/$1
        mkdir -p "$d/esp/EFI/BOOT"
        cp "$2" "$d/esp/EFI/BOOT/BOOTX64.EFI"
        it_mkesp "$d" && echo "$d"
}

k=$IT_DIR/keys
mkdir -p "$k"
for n in pk kek db; do
        openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mshim-test-$n/" -days 3650 \
                -keyout "$k/$n.key" -out "$k/$n.pem" 2>/dev/null || { it_fail "$T: key generation"; exit 1; }
done
cp "$IT_KERNEL" "$k/unsigned.efi"
sbattach --remove "$k/unsigned.efi" >/dev/null 2>&1   # fails harmlessly when already unsigned
sbsign --key "$k/db.key" --cert "$k/db.pem" --output "$k/signed.efi" "$k/unsigned.efi" >/dev/null 2>&1 ||
        { it_fail "$T: sbsign"; exit 1; }
if ! "$IT_CLI" vars enroll "$SB_VARS" --pk "$k/pk.pem" --kek "$k/kek.pem" --db "$k/db.pem" \
                --secure-boot -o "$k/sb.fd" ||
   ! "$IT_CLI" vars enroll "$SB_VARS" --pk "$k/pk.pem" --kek "$k/kek.pem" --db "$k/db.pem" \
                -o "$k/nosb.fd"; then
        it_fail "$T: mshim vars enroll"; exit 1
fi

DECIDED='No bootable option|EFI stub|BdsDxe: starting Boot[0-9A-F]+ "UEFI'
REFUSED='BdsDxe: failed to (load|start) Boot[0-9A-F]+ "UEFI[^"]*".*(Access Denied|Security Violation)'

u=$(newesp unsigned "$k/unsigned.efi") || { it_fail "$T: set-up (esp)"; exit 1; }
it_log "booting the unsigned kernel with Secure Boot on ..."
if sb_boot "$u" "$k/sb.fd" "$DECIDED" && grep -a -q -E "$REFUSED" "$u/serial.log" &&
   ! grep -a -q "EFI stub" "$u/serial.log"; then
        it_pass "$T: enrolled keys + --secure-boot: an unsigned kernel is refused"
else
        it_fail "$T: enrolled keys + --secure-boot: an unsigned kernel is refused"
        it_show_serial "$u"
fi

s=$(newesp signed "$k/signed.efi") || { it_fail "$T: set-up (esp)"; exit 1; }
it_log "booting the db-signed kernel with Secure Boot on ..."
if sb_boot "$s" "$k/sb.fd" 'No bootable option|EFI stub' &&
   grep -a -q "EFI stub: UEFI Secure Boot is enabled" "$s/serial.log"; then
        it_pass "$T: enrolled keys + --secure-boot: a kernel signed with the db key runs"
else
        it_fail "$T: enrolled keys + --secure-boot: a kernel signed with the db key runs"
        it_show_serial "$s"
fi

it_log "booting the unsigned kernel with keys but SecureBootEnable 0 ..."
if sb_boot "$u" "$k/nosb.fd" "$DECIDED" &&
   grep -a -q -E 'BdsDxe: starting Boot[0-9A-F]+ "UEFI' "$u/serial.log" &&
   ! grep -a -q -E "$REFUSED|Secure Boot is enabled" "$u/serial.log"; then
        it_pass "$T: enrolled keys without --secure-boot: an unsigned kernel runs"
else
        it_fail "$T: enrolled keys without --secure-boot: an unsigned kernel runs"
        it_show_serial "$u"
fi
exit "$IT_FAILED"
