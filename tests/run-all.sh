#!/usr/bin/env bash
# make check: every unit test program (ASan/UBSan), the CLI tests, and the
# integration suite. Each test prints "PASS: name" or "FAIL: name"; this
# script counts them and ends with "N passed, N failed".
#
# Test files run MB_JOBS at a time (default 2: the two cores CI has; 3 in
# make check-quick, below); each file's output is shown whole when it ends.
# Integration files then boot one VM at a time (IT_JOBS=1 unless set), so
# at most MB_JOBS VMs share the CPUs and no boot's time limit is eaten by a
# neighbour.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
# python3 itself rather than a version manager's shim (tests/python3.sh):
# every file inherits the PATH.
. tests/python3.sh
# Debian's signed EFI images, unpacked by scripts/fetch-efi.sh.
export MB_EFIROOT=${MB_EFIROOT:-$B/debian-efi}
jobs=${MB_JOBS:-2}
# MB_ONLY=unit: the unit programs alone; MB_ONLY=quick (make check-quick):
# those and the CLI files, no boot.
only=${MB_ONLY:-}
# make check-quick with MB_SANITIZE=1 (below): the sanitized CLI without
# LeakSanitizer (tests/cli/lib.sh MB_LEAKS; MB_LEAKS=1 keeps it); make
# check runs everything with it.
[ "$only" = quick ] && export MB_LEAKS=${MB_LEAKS:-0}
# make check-quick runs the CLI files against the mshim users run ($B/mshim:
# -O2, _FORTIFY_SOURCE), not the sanitized one: AddressSanitizer's start-up
# alone is about 12 ms of page faults a run, and the files run mshim about
# 1,900 times (148 s against 200 s for the whole check-quick, 281 s of CPU
# against 380 s, 2026-12-07). make check runs the same files against the
# sanitized mshim with LeakSanitizer; the unit programs, the firmware
# harness and the fuzz-corpus replay stay sanitized here too.
# MB_SANITIZE=1 (or MSHIM=...) keeps the sanitized CLI in check-quick.
if [ "$only" = quick ] && [ -z "${MSHIM:-}" ] && [ "${MB_SANITIZE:-0}" != 1 ]; then
        case $B in /*) MSHIM=$B/mshim ;; *) MSHIM=$PWD/$B/mshim ;; esac
        export MSHIM
fi
# make check-quick runs three files at a time: its files wait at times (a
# swtpm starting, a second's sleep between two approvals' timestamps, a
# build's make), and a third keeps the two cores busier (two runs each:
# 174 s and 179 s with three, 181 s and 197 s with two; 1.92 cores busy
# against 1.84). It has no boots, whose time limits a third would eat.
[ "$only" = quick ] && jobs=${MB_JOBS:-3}
start=$SECONDS
work=$(mktemp -d)
log=$work/all.log
: > "$log"
# How fast each CPU ran over the run (tests/cpuspeed.py), printed at the
# end: a virtual machine's CPUs need not be equal, and the total time is
# only comparable with the CPUs' worth it had. Started from a subshell so
# that it is not one of the jobs `wait` waits for.
( python3 tests/cpuspeed.py "$work/cpuspeed" </dev/null >/dev/null 2>&1 & echo $! > "$work/cpuspeed.pid" )
trap 'kill "$(cat "$work/cpuspeed.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$work"' EXIT

# cpu_seconds FILE: the CPU time (user + sys, whole seconds) of the shell's
# children in FILE, the output of the `times` builtin (its second line).
# `times > FILE` must run in the shell whose children are counted: in a
# subshell, $(times) included, the count starts at zero.
cpu_seconds() {
        awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] } printf "%d\n", n + 0.5 }' "$1"
}

# run_one OUT CMD...: run a test program, its output (and a failure line
# when it died without naming a case) into OUT.
run_one() {
        local out=$1; shift
        local t0=$SECONDS c0
        times > "$out.cpu"
        c0=$(cpu_seconds "$out.cpu")
        echo "== $*" > "$out"
        "$@" >> "$out" 2>&1
        local rc=$?
        times > "$out.cpu"
        # The time per file shows which ones make the suite long; its CPU
        # time (its processes', QEMU's included), what it costs whatever
        # runs beside it.
        echo "-- $* took $((SECONDS - t0)) s (CPU $(($(cpu_seconds "$out.cpu") - c0)) s)" >> "$out"
        rm -f "$out.cpu"
        # A program that failed without saying which case (a crash, a
        # sanitizer report, a missing tool) still counts as one failure.
        if [ "$rc" != 0 ] && ! grep -q '^FAIL: ' "$out"; then
                echo "FAIL: $* exited with status $rc" >> "$out"
        fi
}

# show OUT: print one finished file's output and add it to the tally.
show() {
        cat "$1"; cat "$1" >> "$log"; rm -f "$1"
}

# run_units OUT: every unit program, one after the other, into OUT: one job
# of the pool below (about 15 s on one core; run alone before the pool, it
# left the other core idle).
run_units() {
        local t
        : > "$1"
        for t in "$B"/test/test_*; do
                [ -x "$t" ] || continue
                run_one "$1.one" "$t"
                cat "$1.one" >> "$1"
        done
        rm -f "$1.one"
}

# The longest files first, then the other integration files, then the CLI
# files: so the pool ends evenly (test_luks.sh and test_recovery.sh take
# about 7 and 5 minutes; started last they would run alone at the end).
slow="tests/integration/test_luks.sh tests/integration/test_recovery.sh tests/integration/test_predict.sh tests/integration/test_totp.sh"
files=()
boots="$slow tests/integration/test_*.sh"
# The longest CLI files first among the CLI files, for the same reason (in
# make check-quick they would otherwise start late, alphabetically, and run
# alone at the end).
clis="tests/cli/test_hooks.sh tests/cli/test_mshim_install.sh tests/cli/test_lint.sh tests/cli/test_luks_enroll.sh
      tests/cli/test_json_schema.sh tests/cli/test_*.sh"
[ "$only" = quick ] && boots=
# MB_ONLY=system (make check-system): the whole-system files alone.
[ "$only" = system ] && boots= clis="tests/system/test_*.sh"
# MB_ONLY=debian (make check-debian): the real-Debian files alone (each
# boots a VM for many minutes; they share the built image): test_install.sh
# first, alone (the others start from the system it leaves), then the
# others two at a time (one vCPU each; tests/debian/lib.sh deb_vm_lock).
[ "$only" = debian ] && boots= clis="tests/debian/test_*.sh" jobs=${MB_JOBS:-2}
if [ "$only" = debian ] && [ -f tests/debian/test_install.sh ]; then
        run_one "$work/0.out" bash tests/debian/test_install.sh
        show "$work/0.out"
        files+=(tests/debian/test_install.sh)
fi
if [ "$only" != unit ]; then
        for t in $boots $clis; do
                [ -f "$t" ] || continue
                case " ${files[*]} " in *" $t "*) continue ;; esac
                files+=("$t")
        done
fi
# (test_install.sh ran above: it was listed only to keep it out of the pool.)
[ "$only" = debian ] && [ "${files[0]:-}" = tests/debian/test_install.sh ] && files=("${files[@]:1}")
# "units" is run_units's job, second: beside the longest file.
[ "$only" = system ] || [ "$only" = debian ] || files=("${files[@]:0:1}" units "${files[@]:1}")
running=()
n=0
for t in "${files[@]}"; do
        n=$((n + 1))
        if [ "$t" = units ]; then
                run_units "$work/$n.out" &
        else
                ( IT_JOBS=${IT_JOBS:-1} run_one "$work/$n.out" bash "$t" ) &
        fi
        running+=("$!:$n")
        while [ "${#running[@]}" -ge "$jobs" ]; do
                wait -n 2>/dev/null
                left=()
                for r in "${running[@]}"; do
                        if kill -0 "${r%%:*}" 2>/dev/null; then left+=("$r"); else show "$work/${r#*:}.out"; fi
                done
                running=("${left[@]}")
        done
done
wait
for r in "${running[@]}"; do show "$work/${r#*:}.out"; done

p=$(grep -c '^PASS: ' "$log"); f=$(grep -c '^FAIL: ' "$log"); s=$(grep -c '^SKIP: ' "$log")
echo
# A case that cannot run here (e.g. no AVX-512) says SKIP; it is not a pass.
[ "$s" = 0 ] || grep '^SKIP: ' "$log"
# A known defect with a test waiting for its fix says XFAIL (tests/efiharness).
grep '^XFAIL: ' "$log"
# Where the time went: each file's own time, longest first (files run
# MB_JOBS at a time, so they add up to more than the total).
echo "Time per file (longest first; CPU: the file's processes', QEMU's included):"
sed -n 's/^-- \(.*\) took \([0-9]*\) s (CPU \([0-9]*\) s)$/\2 \3 \1/p' "$log" | sort -rn | head -n 15 |
        awk '{ t = $1; c = $2; $1 = $2 = ""; sub(/^ +/, ""); printf "  %5d s  (CPU %4d s)  %s\n", t, c, $0 }'
# Their sum: about MB_JOBS times the total when the pool stays full; the
# CPU's sum is what the two cores had to do.
sed -n 's/^-- .* took \([0-9]*\) s (CPU \([0-9]*\) s)$/\1 \2/p' "$log" |
        awk '{ s += $1; c += $2 } END { printf "Sum of the files'"'"' times: %d s (CPU %d s)\n", s, c }'
echo "Total: $((SECONDS - start)) s"
kill "$(cat "$work/cpuspeed.pid")" 2>/dev/null
# (It finishes the sample it is taking: at most a few seconds at its nice 19.)
for _ in $(seq 50); do [ -s "$work/cpuspeed" ] && break; sleep 0.2; done
cat "$work/cpuspeed" 2>/dev/null
echo "$p passed, $f failed"
[ "$f" = 0 ] && [ "$p" -gt 0 ]
