#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make fuzz-run: run every libFuzzer target built by `make fuzz` for
# FUZZ_SECONDS each, one after another (or only the targets named on the
# command line), starting from tests/fuzz/corpus/<target>/.
#
# New inputs go to $FUZZ_WORK/<target>/corpus (default /tmp/mshim-fuzz), never
# into the committed corpus; crashes to $FUZZ_WORK/<target>/crash-*. To keep a
# few interesting finds, minimise them into the committed corpus with
#   build/fuzz/fuzz_X -merge=1 tests/fuzz/corpus/X $FUZZ_WORK/X/corpus
# (see docs/FUZZING.md). Exits 1 when a target found a crash.
set -u
cd "$(dirname "$0")/../.."  || exit 1
B=${B:-build}
SECONDS_EACH=${FUZZ_SECONDS:-60}
WORK=${FUZZ_WORK:-/tmp/mshim-fuzz}
targets=("$@")
if [ ${#targets[@]} = 0 ]; then
        for f in tests/fuzz/fuzz_*.c; do
                t=${f##*/fuzz_}; targets+=("${t%.c}")
        done
fi
# Any UBSan report stops the run, like an ASan one.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rc=0
for t in "${targets[@]}"; do
        bin=$B/fuzz/fuzz_$t
        if [ ! -x "$bin" ]; then
                echo "FAIL: fuzz-run $t: $bin not built (make fuzz B=$B)"; rc=1; continue
        fi
        mkdir -p "$WORK/$t/corpus"
        echo "== fuzz_$t for ${SECONDS_EACH}s (log: $WORK/$t/fuzz.log)"
        opts=(); [ -f "tests/fuzz/$t.dict" ] && opts=(-dict="tests/fuzz/$t.dict")
        # PE seeds are whole images (>100 KiB) hashed four times per run:
        # capping the input keeps pe at thousands of runs a second.
        [ "$t" = pe ] && opts+=(-max_len=8192)
        nice -n 10 "$bin" "${opts[@]}" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
                -print_final_stats=1 -artifact_prefix="$WORK/$t/" \
                "$WORK/$t/corpus" "tests/fuzz/corpus/$t" > "$WORK/$t/fuzz.log" 2>&1
        r=$?
        grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added)' "$WORK/$t/fuzz.log"
        if [ $r != 0 ]; then
                echo "FAIL: fuzz-run $t (exit $r), see $WORK/$t/fuzz.log:"
                grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$WORK/$t/fuzz.log" | head -5
                rc=1
        else
                echo "PASS: fuzz-run $t"
        fi
done
exit $rc
