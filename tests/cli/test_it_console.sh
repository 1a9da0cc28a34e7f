#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The integration harness's console watch (tests/integration/lib.sh
# it_console_new, it_console_has), which decides when a boot has ended,
# was refused or fell through to the firmware's shell: it must find what
# `grep -a -E` finds in the same bytes, line by line, whatever the reads'
# boundaries, with anchors, ignoring case with "i", and past bytes that
# are not UTF-8. grep is the oracle.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
t=$(mktemp -d)
cli_init it-console "$t"
. tests/integration/lib.sh >/dev/null 2>&1 || { fail "tests/integration/lib.sh sources"; exit 1; }

# The console so far, written in pieces as QEMU writes it: the reader sees
# each piece, a line may be cut anywhere.
log=$t/serial.log
: >"$log"
exec {con}<"$log"
IT_CON_PART=
seen=
# feed BYTES: append BYTES (printf %b) to the log, then one look; seen gets
# the look's whole lines (the cut one comes again, whole, in a later look).
feed() { printf '%b' "$1" >>"$log"; it_console_new "$con"; seen+=${IT_CON_NEW%"$IT_CON_PART"}; }
# agree NAME ERE [i]: it_console_has on the last look says what grep -a -E
# says of the lines the look added (the line still being written included).
agree() {
        local want=1 got=1 flags=-aqE
        [ "${3:-}" = i ] && flags=-aqEi
        printf '%s' "$IT_CON_NEW" | LC_ALL=C grep "$flags" -- "$2" && want=0
        it_console_has "$2" "${3:-}" && got=0
        if [ "$want" = "$got" ]; then pass "$1 (match: $([ "$got" = 0 ] && echo yes || echo no))"
        else fail "$1: grep says $want, it_console_has $got"; fi
}

feed 'BdsDxe: loading Boot0001 "UEFI Misc Device"\r\nmshim: vers'
agree "a whole line" 'BdsDxe: (loading|starting) Boot[0-9A-F]+ "UEFI'
agree "a line cut by the read, its first part" 'mshim: vers'
feed 'ion 0.1.0, measured boot loader\r\n'
agree "... the same line, whole on the next look" 'mshim: version 0\.1\.0'
check "... the cut line is read again, whole" test "$IT_CON_NEW" = $'mshim: version 0.1.0, measured boot loader\r\n'
feed 'first\nMSHIM-RESULT-END\nlast'
agree "^ anchors each line, not only the text's start" '^MSHIM-RESULT-END'
agree "... and a line's middle does not match it" '^RESULT-END'
agree "\$ anchors each line's end" 'RESULT-END$'
agree "^...\$ a whole middle line" '^MSHIM-RESULT-END$'
agree "case: no match without i" 'mshim-result-end'
agree "case: a match with i" 'mshim-result-end' i
feed 'Shim \xff\xfe\xc3 stray bytes: Verification failed\r\n'
agree "bytes that are not UTF-8 before the text" 'Verification failed'
agree "... and a bracket expression over them" 'Shim [^A-Za-z]+ stray'
feed 'a\0b after a NUL\n'
agree "a NUL byte: the text after it still seen" 'b after a NUL'
agree "nothing: no match" 'EFI Internal Shell'
all=$(tr -d '\0' <"$log"; echo .)      # the dot keeps the last newline
check "every byte but the NUL reached the looks, each whole line once" test "$seen$IT_CON_PART" = "${all%.}"
exec {con}<&-
