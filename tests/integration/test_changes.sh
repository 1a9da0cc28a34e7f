#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Change one byte of one input and check that exactly the PCRs that cover it
# change, in every bank, compared with a baseline boot:
#   command line (the entry's options)  -> 5 (entry file), 9 (stub's
#                                          LoadOptions), 12 (mshim's EV_IPL)
#   initrd                              -> 9 (stub's initrd event)
#   loader.conf                         -> 5 (mshim's loader.conf event)
# PCR 10 (IMA; its boot_aggregate hashes PCRs 0-9) is left out of the
# comparison. Four boots, run IT_JOBS at a time.
set -u
# Every bank swtpm has: this file checks the measurements bank by bank.
IT_ALL_BANKS=1
. "$(dirname "$0")/lib.sh"
T=changes
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL"; then
        it_fail "$T: prerequisites"; exit 1
fi
base=$(it_newboot base) && cmd=$(it_newboot cmdline) && ird=$(it_newboot initrd) &&
        lc=$(it_newboot loaderconf) || { it_fail "$T: set-up"; exit 1; }
# One byte each: mshim.test=0 -> 1; a character of a comment in /init;
# the comment line of loader.conf ("test 0" -> "test 1").
it_oracle flip "$cmd/esp/loader/entries/mshim-test.conf" "mshim.test=0" --pos 11 &&
        it_oracle flip "$ird/esp/initrd.img" "mshim test initramfs" --pos 0 &&
        it_oracle flip "$lc/esp/loader/loader.conf" "integration test 0" --pos 17 ||
        { it_fail "$T: set-up (flip)"; exit 1; }
for f in "$cmd/esp/loader/entries/mshim-test.conf" "$ird/esp/initrd.img" "$lc/esp/loader/loader.conf"; do
        n=$(cmp -l "$base/esp/${f#*/esp/}" "$f" | wc -l)
        [ "$n" = 1 ] || { it_fail "$T: set-up: $f differs in $n bytes"; exit 1; }
done

it_boot_all "$base" "$cmd" "$ird" "$lc"
for x in base cmdline initrd loaderconf; do
        if [ "$(cat "$IT_DIR/$x/boot.rc" 2>/dev/null)" = 0 ]; then
                it_pass "$T: boot $x"
        else
                it_fail "$T: boot $x"
        fi
done
[ "$IT_FAILED" = 0 ] || exit 1
it_oracle diff --name "$T: one byte of the command line changes PCRs 5, 9, 12 only" \
        --expect 5,9,12 "$base/result" "$cmd/result" || IT_FAILED=1
it_oracle diff --name "$T: one byte of the initrd changes PCR 9 only" \
        --expect 9 "$base/result" "$ird/result" || IT_FAILED=1
it_oracle diff --name "$T: one byte of loader.conf changes PCR 5 only" \
        --expect 5 "$base/result" "$lc/result" || IT_FAILED=1
exit "$IT_FAILED"
