#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim predict, proven by booting: boot A (lib.sh's default ESP), then for
# each case build B's ESP, predict B on the host from A's event log and
# PCRs and B's files (`mshim predict --esp B/esp --json`), boot B, and
# compare every active bank's PCRs 0-15 except 10 with the prediction. The
# PCRs the prediction calls changed must be exactly those that differ
# between A's and B's TPMs. Cases:
#   initrd       one byte of the initrd
#   options      the entry's command line
#   entry        a new entry file (another title, options and name) and a
#                new loader.conf whose default selects it, plus an unusable
#                entry file
#   default      no loader.conf (measured absent) and a second entry that
#                sorts first (BLS order), so the default entry changes
#   loader       a new mshimx64.efi (built-in policy tpm-required yes)
#   kernel       Debian's linux-image-*-rt-amd64 kernel instead of its
#                cloud kernel (scripts/fetch-kernel.sh, build/kernel-rt)
#   loaderconf   one byte of loader.conf (its comment line)
# The one-byte cases (initrd, options, loaderconf) differ from A in that
# byte alone, so they also show exactly which PCRs cover each input, in
# every bank, whatever the prediction says (oracle.py diff of A's and B's
# TPMs):
#   command line (the entry's options) -> 5 (entry file), 9 (stub's
#                                         LoadOptions), 12 (mshim's EV_IPL)
#   initrd                             -> 9 (stub's initrd event)
#   loader.conf                        -> 5 (mshim's loader.conf event)
# PCR 10 (IMA; its boot_aggregate hashes PCRs 0-9) is left out.
# One boot of A, then the Bs IT_JOBS (default 2) at a time.
set -u
# Every bank swtpm has: this file checks the measurements bank by bank.
IT_ALL_BANKS=1
. "$(dirname "$0")/lib.sh"
T=predict
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_KERNEL_RT" "$IT_CLI"; then
        it_fail "$T: prerequisites"; exit 1
fi

a=$(it_newboot a) || { it_fail "$T: set-up"; exit 1; }
if it_boot "$a"; then it_pass "$T: boot A"; else it_fail "$T: boot A"; exit 1; fi

it_pcrs_file "$a" > "$a/pcrs.txt"

cases="initrd options entry default loader kernel loaderconf"
for c in $cases; do
        d=$(it_newboot "$c") || { it_fail "$T: set-up $c"; exit 1; }
        e=$d/esp
        case $c in
        initrd)
                it_oracle flip "$e/initrd.img" "mshim test initramfs" --pos 0 ;;
        options)
                it_oracle flip "$e/loader/entries/mshim-test.conf" "mshim.test=0" --pos 11 ;;
        entry)
                printf 'title a newer entry\nversion 2\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s mshim.entry=new\n' \
                        "$IT_OPTIONS" > "$e/loader/entries/newer.conf"
                printf 'title no linux line\n' > "$e/loader/entries/broken.conf"
                printf '# predicted\ntimeout 0\ndefault newer\n' > "$e/loader/loader.conf" ;;
        default)
                rm "$e/loader/loader.conf"
                printf 'title sorts first\nsort-key aaa\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s mshim.entry=first\n' \
                        "$IT_OPTIONS" > "$e/loader/entries/zz-first.conf" ;;
        loader)
                "$IT_CLI" boot-policy --set tpm-required=yes -o "$d/mshim-new.efi" "$IT_EFI" >/dev/null &&
                        cp "$d/mshim-new.efi" "$e/EFI/BOOT/BOOTX64.EFI" ;;
        kernel)
                cp "$IT_KERNEL_RT" "$e/vmlinuz" ;;
        loaderconf)
                it_oracle flip "$e/loader/loader.conf" "integration test 0" --pos 17 ;;
        esac || { it_fail "$T: set-up $c"; exit 1; }
        args=(--log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" --esp "$e" --json)
        [ "$c" = loader ] && args+=(--loader "$e/EFI/BOOT/BOOTX64.EFI")
        if "$IT_CLI" predict "${args[@]}" > "$d/predict.json" 2> "$d/predict.err"; then
                it_pass "$T: predict $c on the host"
        else
                it_fail "$T: predict $c on the host"; cat "$d/predict.err" >&2
        fi
        bs+=("$d")
done

# The one-byte cases: exactly one byte differs from A's file.
for f in initrd/esp/initrd.img options/esp/loader/entries/mshim-test.conf loaderconf/esp/loader/loader.conf; do
        n=$(cmp -l "$a/esp/${f#*/esp/}" "$IT_DIR/$f" | wc -l)
        [ "$n" = 1 ] || { it_fail "$T: set-up: $f differs from A's in $n bytes"; exit 1; }
done

IT_JOBS=${IT_JOBS:-2} it_boot_all "${bs[@]}"
for d in "${bs[@]}"; do
        c=$(basename "$d")
        if [ "$(cat "$d/boot.rc" 2>/dev/null)" != 0 ]; then
                it_fail "$T: boot $c"; continue
        fi
        it_pass "$T: boot $c"
        it_predict_check "$T: $c" "$a" "$d" "$d/predict.json" || IT_FAILED=1
done
# changed NAME PCRS CASE: the PCRs that differ between A's and CASE's TPMs
# (every bank, PCR 10 aside) are exactly PCRS.
changed() {
        [ "$(cat "$IT_DIR/$3/boot.rc" 2>/dev/null)" = 0 ] || return 0
        it_oracle diff --name "$T: $1" --expect "$2" "$a/result" "$IT_DIR/$3/result" || IT_FAILED=1
}
changed "one byte of the command line changes PCRs 5, 9, 12 only" 5,9,12 options
changed "one byte of the initrd changes PCR 9 only" 9 initrd
changed "one byte of loader.conf changes PCR 5 only" 5 loaderconf
exit "$IT_FAILED"
