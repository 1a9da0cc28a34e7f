#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Replay the committed fuzz corpus (tests/fuzz/corpus/<target>/) through each
# fuzz target built with gcc under ASan/UBSan ($B/test/replay_<target>, built
# by `make check`). One "PASS: fuzz-replay <target>" line per target.
set -u
cd "$(dirname "$0")/../.."  || exit 1
# Leak checks even in make check-quick (MB_LEAKS=0): a few runs, cheap.
MB_LEAKS=1 . tests/cli/lib.sh
cli_init fuzz-replay
B=${B:-build}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for src in tests/fuzz/fuzz_*.c; do
        t=${src##*/fuzz_}; t=${t%.c}
        bin=$B/test/replay_$t
        if [ ! -x "$bin" ]; then
                fail "$t: $bin not built (make check builds it)"
                continue
        fi
        if [ ! -d "tests/fuzz/corpus/$t" ]; then
                fail "$t: no corpus tests/fuzz/corpus/$t"
                continue
        fi
        out=$("$bin" "$t" "tests/fuzz/corpus/$t" 2>&1)
        rc=$?
        if [ $rc = 0 ] && grep -q "^PASS: fuzz-replay $t" <<<"$out"; then
                grep "^PASS: " <<<"$out"
        else
                # Name the input that was being replayed when it died.
                last=$(grep '^replay ' <<<"$out" | tail -1)
                fail "$t (exit $rc, ${last:-no input reached})"
                grep -E 'ERROR|runtime error|SUMMARY|^FAIL' <<<"$out" | head -5 | sed 's/^/  /'
        fi
done
