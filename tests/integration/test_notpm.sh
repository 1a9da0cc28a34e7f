#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# No TPM attached:
#  - by default mshim still boots the kernel (the initramfs reports NO-TPM);
#  - with "tpm-required yes" in loader.conf mshim refuses to boot and says so
#    on the console (a line naming tpm-required), and the kernel never runs.
set -u
. "$(dirname "$0")/lib.sh"
T=notpm
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL"; then
        it_fail "$T: prerequisites"; exit 1
fi
d=$(it_newboot notpm) || { it_fail "$T: set-up"; exit 1; }
if it_boot "$d" --no-tpm; then
        if python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["tpm"])' "$d/result/result.json"; then
                it_pass "$T: without a TPM the kernel boots and sees no TPM"
        else
                it_fail "$T: without a TPM the kernel boots and sees no TPM"
                echo "  the guest reported a TPM although none was attached" >&2
        fi
else
        it_fail "$T: without a TPM the kernel boots and sees no TPM"
fi

r=$(it_newboot required) || { it_fail "$T: set-up"; exit 1; }
printf 'tpm-required yes\n' >> "$r/esp/loader/loader.conf"
it_mkesp "$r" || { it_fail "$T: set-up (esp)"; exit 1; }
it_log "booting required (tpm-required yes, no TPM) ..."
it_qemu "$r" --no-tpm --timeout 120 --stop 'refus|MSHIM-RESULT-END'
rc=$?
it_log "boot required stopped after $(cat "$r/seconds") s (status $rc)"
log=$(tr -d '\r' < "$r/serial.log")
if grep -q -i 'tpm-required' <<<"$log" && grep -q -i 'refus' <<<"$log" &&
                ! grep -q 'MSHIM-RESULT-BEGIN' <<<"$log"; then
        it_pass "$T: tpm-required yes without a TPM: mshim refuses to boot"
        grep -i -m1 'tpm-required' <<<"$log" | sed 's/^/  console: /' >&2
else
        it_fail "$T: tpm-required yes without a TPM: mshim refuses to boot"
        it_show_serial "$r"
fi
exit "$IT_FAILED"
