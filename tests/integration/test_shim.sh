#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Secure Boot with Microsoft's keys: firmware -> Debian's signed shim 16 ->
# mshim (signed with a test MOK) -> Debian's signed kernel (issue 4).
# OVMF_CODE_4M.secboot.fd (= .ms.fd) with a copy of OVMF_VARS_4M.ms.fd
# into whose MokList `mshim vars add-mok` put a fresh test certificate.
#  (1) shim -> mshim -> kernel boots to the initramfs report; the PCRs
#      replay from the log; shim's own events are there (PCR 14 MokList,
#      MokListX, MokSBState; PCR 7 the authorities shim used: the MOK for
#      mshim, its vendor certificate for the kernel); PCR 4 holds shim,
#      mshim and the kernel exactly once each (mshim adds none).
#  (2a) mshim signed by a key that is not enrolled: shim refuses to start
#      it ("Verification failed"), nothing boots.
#  (2b) mshim MOK-signed, the kernel re-signed by an unknown key only: the
#      kernel's LoadImage goes through shim's verification and is refused;
#      mshim names the file; nothing boots.
set -u
. "$(dirname "$0")/lib.sh"
T=shim
it_init "$T"
SHIM=${SHIM:-/usr/lib/shim/shimx64.efi.signed}
MM_SIGNED=${MM_SIGNED:-/usr/lib/shim/mmx64.efi.signed}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$SHIM" "$MM_SIGNED" \
                /usr/share/OVMF/OVMF_CODE_4M.secboot.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd ||
   ! command -v sbsign >/dev/null || ! command -v sbattach >/dev/null; then
        it_fail "$T: prerequisites (shim-signed, ovmf, sbsigntool, make; make deps)"; exit 1
fi
if ! "$IT_CLI" vars --help >/dev/null 2>&1; then
        it_fail "$T: prerequisites: $IT_CLI has no 'vars' command"; exit 1
fi
# shellcheck disable=SC2034 # read by it_secure_boot_on (lib.sh)
IT_SB_CODE=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd

k=$IT_DIR/keys
it_shim_keys "$k" || { it_fail "$T: set-up (keys)"; exit 1; }
"$IT_CLI" vars add-mok /usr/share/OVMF/OVMF_VARS_4M.ms.fd --cert "$k/mok.pem" -o "$k/vars-mok.fd" ||
        { it_fail "$T: set-up (mshim vars add-mok)"; exit 1; }
# Microsoft's keys plus the test MOK: the store it_qemu copies for each boot.
it_secure_boot_on "$k/vars-mok.fd" || { it_fail "$T: set-up (Secure Boot)"; exit 1; }

good=$(it_shim_esp good "$k") || { it_fail "$T: set-up (esp)"; exit 1; }

# (1) the good chain.
if it_boot "$good"; then
        it_pass "$T: shim -> mshim (MOK-signed) -> Debian's signed kernel reaches the initramfs"
        r=$good/result
        args=(--result "$r" --name "$T: TPM PCRs equal the event-log replay")
        "$IT_CLI" log --json "$r/eventlog.bin" > "$good/mshim-log.json" 2>/dev/null &&
                args+=(--mshim-json "$good/mshim-log.json")
        tpm2_eventlog "$r/eventlog.bin" > "$good/tpm2_eventlog.yaml" 2>/dev/null &&
                args+=(--eventlog-yaml "$good/tpm2_eventlog.yaml")
        it_oracle check-replay "${args[@]}" || IT_FAILED=1
        "$IT_CLI" vars get "$k/vars-mok.fd" MokList -o "$k/MokList.bin" &&
        it_shim_events "$r/eventlog.bin" "$T" "$k/MokList.bin" "$k/mok.der" \
                "$good/esp/EFI/BOOT/BOOTX64.EFI" "$good/esp/EFI/BOOT/grubx64.efi" "$good/esp/vmlinuz" || IT_FAILED=1
else
        it_fail "$T: shim -> mshim (MOK-signed) -> Debian's signed kernel reaches the initramfs"
fi

# (2a) mshim signed by a key shim does not know.
a=$(it_shim_esp unknown-mshim "$k") || { it_fail "$T: set-up (esp)"; exit 1; }
rm -f "$a/esp/EFI/BOOT/grubx64.efi"
if ! "$IT_CLI" sign --key "$k/other.key" --cert "$k/other.pem" -o "$a/esp/EFI/BOOT/grubx64.efi" "$IT_EFI" >"$a/sign.log" 2>&1; then
        it_fail "$T: set-up (sign)"; cat "$a/sign.log" >&2; exit 1
fi
it_mkesp "$a" || { it_fail "$T: set-up (esp image)"; exit 1; }
it_log "booting unknown-mshim (mshim signed by a key not in MokList) ..."
it_qemu "$a" --timeout 150 --stop 'MSHIM-RESULT-BEGIN|Verification failed|start_image\(\) returned|Failed to load image'
rc=$?
it_log "boot unknown-mshim stopped after $(cat "$a/seconds") s (status $rc)"
log=$(tr -d '\r' < "$a/serial.log" | tr -c '\n -~' ' ')
if grep -q -E 'Verification failed: .*(Security Violation|Access Denied)' <<<"$log" &&
   ! grep -q -E 'mshim[: ]|MSHIM-RESULT-BEGIN|EFI stub' <<<"$log"; then
        it_pass "$T: mshim signed by a key not enrolled: shim refuses to start it"
        grep -o -m1 -E 'Verification failed: [^ ].*Violation' <<<"$log" | sed 's/^/  console: /' >&2
else
        it_fail "$T: mshim signed by a key not enrolled: shim refuses to start it"
        it_show_serial "$a"
fi

# (2b) the kernel re-signed by an unknown key only.
b=$(it_shim_esp unknown-kernel "$k") || { it_fail "$T: set-up (esp)"; exit 1; }
it_shim_resign "$IT_KERNEL" "$b/esp/vmlinuz" "$k/other.key" "$k/other.pem" || { it_fail "$T: set-up (kernel)"; exit 1; }
it_mkesp "$b" || { it_fail "$T: set-up (esp image)"; exit 1; }
it_log "booting unknown-kernel (kernel signed by an unknown key) ..."
it_qemu "$b" --timeout 150 --stop 'MSHIM-RESULT-BEGIN|EFI stub|start_image\(\) returned'
rc=$?
it_log "boot unknown-kernel stopped after $(cat "$b/seconds") s (status $rc)"
log=$(tr -d '\r' < "$b/serial.log" | tr -c '\n -~' ' ')
if grep -q -E 'mshim: \\vmlinuz: refused by Secure Boot \((Access Denied|Security Violation|Security Policy Violation)\)' <<<"$log" &&
   ! grep -q -E 'MSHIM-RESULT-BEGIN|EFI stub' <<<"$log"; then
        it_pass "$T: kernel signed by an unknown key: shim's verification refuses mshim's LoadImage, mshim names the file"
        grep -m4 -E 'refused by Secure Boot|Verification failed|no entry|start_image' <<<"$log" | sed 's/^/  console: /' >&2
else
        it_fail "$T: kernel signed by an unknown key: shim's verification refuses mshim's LoadImage, mshim names the file"
        it_show_serial "$b"
fi
exit "$IT_FAILED"
