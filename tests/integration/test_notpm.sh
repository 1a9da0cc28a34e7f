#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# No TPM attached:
#  - by default mshim still boots the kernel (the initramfs reports NO-TPM);
#  - with "tpm-required yes" in loader.conf mshim refuses to boot and says so
#    on the console (a line naming tpm-required), and the kernel never runs;
#  - with "tpm-required yes" in the image's built-in policy (set with
#    `mshim boot-policy`) and "tpm-required no" in loader.conf, mshim still
#    refuses: loader.conf can make the built-in policy stricter, never weaker.
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
builtin_efi=$IT_DIR/mshim-tpm-required.efi
"$IT_CLI" boot-policy --set tpm-required=yes -o "$builtin_efi" "$IT_EFI" > /dev/null &&
        p=$(it_newboot builtin "$builtin_efi") || { it_fail "$T: set-up (builtin policy)"; exit 1; }
printf 'tpm-required no\n' >> "$p/esp/loader/loader.conf"
it_mkesp "$r" && it_mkesp "$p" || { it_fail "$T: set-up (esp)"; exit 1; }
for d in "$r" "$p"; do
        ( it_log "booting $(basename "$d") (tpm-required, no TPM) ..."
          it_qemu "$d" --no-tpm --timeout 120 --stop 'refus|MSHIM-RESULT-END'
          it_log "boot $(basename "$d") stopped after $(cat "$d/seconds") s (status $?)" ) &
done
wait
for x in "$r|loader.conf says tpm-required yes" "$p|the built-in policy says tpm-required yes, loader.conf no"; do
        d=${x%%|*}
        log=$(tr -d '\r' < "$d/serial.log")
        name="$T: ${x#*|}, no TPM: mshim refuses to boot"
        if grep -q -F 'tpm-required is set but no TPM was found' <<<"$log" && grep -q -i 'refusing to boot' <<<"$log" &&
                        ! grep -q 'MSHIM-RESULT-BEGIN' <<<"$log"; then
                it_pass "$name"
                grep -i -m1 'tpm-required' <<<"$log" | sed 's/^/  console: /' >&2
        else
                it_fail "$name"
                it_show_serial "$d"
        fi
done
exit "$IT_FAILED"
