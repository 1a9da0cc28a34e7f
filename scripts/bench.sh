#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench: `mshim log --json` against tpm2_eventlog (tpm2-tools) on a
# 100,000-event crypto-agile log built from a real one by
# scripts/bench/mklog.py (its header, then its other records repeated).
# Prints the median wall-clock and CPU (user+sys) time of BENCH_RUNS runs of
# each (taking turns), their ratio, and the peak RSS of each on the
# 100,000-event log and on a 10,000-event one (to show that mshim's memory
# does not grow with the number of events).
#
# Two source logs by default: the OVMF log of our own set-up (sha1, sha256,
# sha384, sha512 banks) and an Arch desktop's (sha1 and sha256, as most PCs
# have), since the number of banks decides how much hashing a replay does.
#
# Then `mshim predict` hashing a kernel and an initrd for all four banks
# (Authenticode of the kernel, plain hash of the initrd, sha1, sha256,
# sha384 and sha512) against `openssl dgst` computing the same four
# digests of the same two files (bench_predict below).
#
# Informative only: exits non-zero when a tool fails to run, never on the
# ratio. Environment: B (build dir, default build), BENCH_LOG (source logs,
# space-separated),
# BENCH_EVENTS (default 100000), BENCH_RUNS (default 5), BENCH_DIR (scratch).
set -u
export LC_ALL=C   # one decimal point for python and awk
cd "$(dirname "$0")/.."  || exit 1
B=${B:-build}
SOURCES=${BENCH_LOG:-tests/data/eventlogs/qemu-ovmf-systemd-boot-linux61.bin tests/data/eventlogs/tpm2-tools-event-arch-linux.bin}
N=${BENCH_EVENTS:-100000}
RUNS=${BENCH_RUNS:-5}
MSHIM=$B/mshim
DIR=${BENCH_DIR:-$(mktemp -d /tmp/mshim-bench.XXXXXX)}
[ -n "${BENCH_DIR:-}" ] || trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR"

die() { echo "bench: $*" >&2; exit 1; }
[ -x "$MSHIM" ] || die "$MSHIM not built (make B=$B)"
command -v tpm2_eventlog > /dev/null || die "tpm2_eventlog not found (tpm2-tools)"
command -v python3 > /dev/null || die "python3 not found"
TIME=/usr/bin/time
[ -x "$TIME" ] || TIME=

# bench_log SRC: the whole comparison on a log built from SRC.
bench_log() {
local SRC=$1
big=$DIR/bench-$N.bin small=$DIR/bench-$((N / 10)).bin
python3 scripts/bench/mklog.py "$SRC" "$N" "$big" || die "mklog failed"
python3 scripts/bench/mklog.py "$SRC" "$((N / 10))" "$small" || die "mklog failed"
# Write the new logs out now, so the kernel's write-back of them does not
# run during (and get counted in) the timed runs.
sync "$big" "$small" 2> /dev/null || sync

# Sanity: both tools accept the log, and mshim sees N events.
"$MSHIM" log --json "$big" > "$DIR/mshim.json" 2> "$DIR/mshim.err" || { cat "$DIR/mshim.err" >&2; die "mshim log --json failed on $big"; }
tpm2_eventlog "$big" > "$DIR/tpm2.yaml" 2> "$DIR/tpm2.err" || { cat "$DIR/tpm2.err" >&2; die "tpm2_eventlog failed on $big"; }
n_seen=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["events"]))' "$DIR/mshim.json" 2>/dev/null || echo "?")
[ "$n_seen" = "$N" ] || die "mshim decoded $n_seen events of $N"
# Both tools must have done the same work: the same replayed PCRs.
python3 - "$DIR/mshim.json" "$DIR/tpm2.yaml" <<'PY' || die "mshim and tpm2_eventlog replay the log differently"
import json, sys
sys.path.insert(0, "tests/integration")
from oracle import eventlog_yaml_pcrs
ours = json.load(open(sys.argv[1]))["pcrs"]
theirs = eventlog_yaml_pcrs(sys.argv[2])
bad = [f"{b}:{i}" for b, vals in theirs.items() for i, v in vals.items()
       if i < 24 and v.strip(b"\0") and ours.get(b, {}).get(str(i)) != v.hex()]
sys.exit(f"differing PCRs: {bad}" if bad or not theirs else 0)
PY

# peak_rss CMD...: peak resident set in KiB, or "n/a" without /usr/bin/time.
peak_rss() {
        [ -n "$TIME" ] || { echo n/a; return; }
        "$TIME" -f %M -o "$DIR/rss" "$@" > /dev/null 2>&1 || die "$* failed"
        tail -1 "$DIR/rss"
}

echo "log: $N events, $(stat -c %s "$big") bytes, built from $SRC ($(python3 -c 'import json,sys; print(",".join(json.load(open(sys.argv[1]))["algorithms"]))' "$DIR/mshim.json") banks); mshim decoded $n_seen"
echo "runs: $RUNS each, median; load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
# The two tools take turns (scripts/bench/timeit.py), so drift in the
# machine's speed during the runs hits both alike.
times=$(python3 scripts/bench/timeit.py "$RUNS" "$MSHIM" log --json "$big" -- tpm2_eventlog "$big") || die "a tool failed to run"
{ read -r m_wall m_cpu; read -r t_wall t_cpu; } <<< "$times"
awk -v mw="$m_wall" -v mc="$m_cpu" -v tw="$t_wall" -v tc="$t_cpu" 'BEGIN {
        printf "mshim log --json: %.3f s, tpm2_eventlog: %.3f s, ratio %.1fx (target >= 20x)  [wall clock]\n", mw, tw, tw / mw
        if (mc > 0) printf "mshim log --json: %.3f s, tpm2_eventlog: %.3f s, ratio %.1fx  [CPU user+sys]\n", mc, tc, tc / mc
}'
m_big=$(peak_rss "$MSHIM" log --json "$big"); m_small=$(peak_rss "$MSHIM" log --json "$small")
t_big=$(peak_rss tpm2_eventlog "$big"); t_small=$(peak_rss tpm2_eventlog "$small")
echo "peak RSS (KiB)    $((N / 10)) events   $N events   log size $(( $(stat -c %s "$small") / 1024 )) -> $(( $(stat -c %s "$big") / 1024 )) KiB"
printf '  %-16s %12s %12s\n' "mshim log --json" "$m_small" "$m_big" "tpm2_eventlog" "$t_small" "$t_big"
if [ "$m_big" != n/a ]; then
        grow_log=$(( ($(stat -c %s "$big") - $(stat -c %s "$small")) / 1024 ))
        echo "mshim RSS growth 10x events: $((m_big - m_small)) KiB for $grow_log KiB more log (mapped pages are given back as the output is written)"
fi
echo
}

# bench_predict: mshim predict --kernel --initrd on a four-bank baseline
# (the OVMF log; --select 0 keeps the exit status 0, as that boot did not
# run mshim and the touched PCRs are unpredictable: the hashing is done all
# the same) vs openssl dgst -sha1/-sha256/-sha384/-sha512 over both files.
# BENCH_KERNEL (default build/kernel/vmlinuz), BENCH_INITRD_MB (the initrd
# is that many MiB of random bytes, default 64: Debian's are 30-70 MiB).
bench_predict() {
local kernel=${BENCH_KERNEL:-$B/kernel/vmlinuz} initrd=$DIR/initrd.img
local log=tests/data/eventlogs/qemu-ovmf-systemd-boot-linux61.bin
[ -f "$kernel" ] || die "no kernel at $kernel (make deps)"
command -v openssl > /dev/null || die "openssl not found"
head -c $(( ${BENCH_INITRD_MB:-64} << 20 )) /dev/urandom > "$initrd"
sync "$initrd" 2> /dev/null || sync
"$MSHIM" log --json "$log" | python3 -c 'import json, sys
for b, v in json.load(sys.stdin)["pcrs"].items():
    for n, x in v.items():
        print("%s:%s=%s" % (b, n, x))' > "$DIR/pcrs.txt" || die "mshim log failed on $log"
"$MSHIM" predict --log "$log" --pcrs "$DIR/pcrs.txt" --kernel "$kernel" --initrd "$initrd" --select 0 > /dev/null ||
        die "mshim predict failed"
echo "predict: kernel $kernel ($(( $(stat -c %s "$kernel") >> 10 )) KiB), initrd $(( $(stat -c %s "$initrd") >> 20 )) MiB, 4 banks"
times=$(python3 scripts/bench/timeit.py "$RUNS" "$MSHIM" predict --log "$log" --pcrs "$DIR/pcrs.txt" \
        --kernel "$kernel" --initrd "$initrd" --select 0 -- \
        sh -c 'for a in sha1 sha256 sha384 sha512; do openssl dgst -$a "$1" "$2" || exit 1; done' sh "$kernel" "$initrd") ||
        die "a tool failed to run"
{ read -r m_wall m_cpu; read -r o_wall o_cpu; } <<< "$times"
awk -v mw="$m_wall" -v ow="$o_wall" 'BEGIN {
        printf "mshim predict: %.3f s, openssl dgst (4 digests of both files): %.3f s, speed ratio %.2fx (target >= 0.8x)  [wall clock]\n", mw, ow, ow / mw
}'
}

for src in $SOURCES; do
        bench_log "$src"
done
bench_predict
# IMA: mshim verify ima against Keylime's own IMA verification on a list of
# 10^6 entries (docs/BENCHMARK.md "IMA").
B=$B scripts/bench/ima.sh || die "the IMA comparison failed"
# Unsealing a disk key: mshim against clevis and systemd-cryptenroll's token
# (TPM commands counted on swtpm's side; docs/BENCHMARK.md).
B=$B BENCH_RUNS=$RUNS scripts/bench/unseal.sh || die "the unseal comparison failed"
# The TOTP code at boot: mshim's commands counted by swtpm under QEMU,
# next to tpm2-totp's sequence (docs/BENCHMARK.md).
B=$B BENCH_RUNS=$RUNS scripts/bench/totp.sh || die "the TOTP comparison failed"
# The loader's time, firmware start to the initrd handed over, against
# systemd-boot (docs/BENCHMARK.md "Loader time").
B=$B BENCH_RUNS=$RUNS scripts/bench/loadtime.sh || die "the loader-time comparison failed"
