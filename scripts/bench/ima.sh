#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The IMA comparison of make bench: `mshim verify ima` against Keylime's
# own IMA verification (keylime.ima.ima.process_measurement_list, the
# unmodified snapshot in ../shared/oracles/keylime, through
# scripts/bench/ima_keylime.py) on the same measurement list, built by
# tests/cli/ima_fixture.py (hashlib): boot_aggregate and BENCH_IMA_ENTRIES
# files (default 10^6, the size of a busy server's list), every one in an
# allowlist, and PCR 10's sha256 value. Each replays the list to PCR 10 and
# checks every entry against the allowlist; both must accept, and both must
# refuse the same list with one allowlist line removed (so they did the same
# work). Median wall clock and CPU of BENCH_IMA_RUNS runs (default 3),
# taking turns. Informative: exits non-zero only when a tool fails.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
N=${BENCH_IMA_ENTRIES:-1000000}
RUNS=${BENCH_IMA_RUNS:-3}
KEYLIME=${KEYLIME_DIR:-../shared/oracles/keylime}
DIR=$(mktemp -d /tmp/mshim-bench-ima.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
die() { echo "bench ima: $*" >&2; exit 1; }
[ -d "$KEYLIME/keylime/ima" ] || { echo "ima: Keylime's snapshot not found at $KEYLIME: skipped"; exit 0; }
PY=/usr/bin/python3
python3 tests/cli/ima_fixture.py make "$DIR/list.bin" --entries "$N" --ascii "$DIR/list.txt" \
        --allow "$DIR/allow" --expect "$DIR/want.json" || die "ima_fixture.py failed"
S=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sha256"])' "$DIR/want.json")
sync
mshim_cmd=("$B/mshim" verify ima "$DIR/list.bin" --pcr "sha256:$S" --ima-allow "$DIR/allow")
keylime_cmd=("$PY" scripts/bench/ima_keylime.py "$KEYLIME" "$DIR/list.txt" "$DIR/allow" "$S")
"${mshim_cmd[@]}" > /dev/null 2> "$DIR/err" || { cat "$DIR/err" >&2; die "mshim refused the list"; }
"${keylime_cmd[@]}" > /dev/null 2> "$DIR/err" || { tail -3 "$DIR/err" >&2; die "Keylime refused the list"; }
# The same list with one file's allowlist line gone: both must refuse.
sed '2d' "$DIR/allow" > "$DIR/allow.cut"
"$B/mshim" verify ima "$DIR/list.bin" --pcr "sha256:$S" --ima-allow "$DIR/allow.cut" > /dev/null 2>&1 &&
        die "mshim accepted a file missing from the allowlist"
"$PY" scripts/bench/ima_keylime.py "$KEYLIME" "$DIR/list.txt" "$DIR/allow.cut" "$S" > /dev/null 2>&1 &&
        die "Keylime accepted a file missing from the allowlist"
echo "ima: $N entries + boot_aggregate ($(( $(stat -c %s "$DIR/list.bin") >> 20 )) MiB binary, $(( $(stat -c %s "$DIR/list.txt") >> 20 )) MiB ASCII), allowlist of $N files, PCR 10 sha256"
echo "runs: $RUNS each, median; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
times=$(python3 scripts/bench/timeit.py "$RUNS" "${mshim_cmd[@]}" -- "${keylime_cmd[@]}") || die "a tool failed to run"
{ read -r m_wall m_cpu; read -r k_wall k_cpu; } <<< "$times"
awk -v mw="$m_wall" -v kw="$k_wall" -v mc="$m_cpu" -v kc="$k_cpu" 'BEGIN {
        printf "mshim verify ima: %.3f s, Keylime process_measurement_list: %.3f s, ratio %.1fx  [wall clock]\n", mw, kw, kw / mw
        if (mc > 0) printf "mshim verify ima: %.3f s, Keylime process_measurement_list: %.3f s, ratio %.1fx  [CPU user+sys]\n", mc, kc, kc / mc
}'
