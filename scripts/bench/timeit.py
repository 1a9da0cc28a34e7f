#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Time commands against each other for scripts/bench.sh.

Usage: timeit.py RUNS CMD [ARG...] [-- CMD [ARG...]]...

Runs each command RUNS times with its output to /dev/null, taking turns
(A, B, A, B, ...) so that a machine whose speed drifts while the benchmark
runs slows every command alike, and prints one line per command: the median
wall-clock time and the median CPU time (user + system of the child) in
seconds. Python starts each child with vfork/posix_spawn, which adds well
under a millisecond; a shell's fork of itself adds a few, a twentieth of
mshim's time on the benchmark logs. Exits 1 if any run fails.
"""
import resource
import statistics
import subprocess
import sys
import time


def run_once(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(1)
    return t1 - t0, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs, cmds = int(sys.argv[1]), [[]]
    for arg in sys.argv[2:]:
        if arg == "--":
            cmds.append([])
        else:
            cmds[-1].append(arg)
    times = [([], []) for _ in cmds]
    for _ in range(runs):
        for cmd, (walls, cpus) in zip(cmds, times):
            wall, cpu = run_once(cmd)
            walls.append(wall)
            cpus.append(cpu)
    for walls, cpus in times:
        print(f"{statistics.median(walls):.4f} {statistics.median(cpus):.4f}")


if __name__ == "__main__":
    main()
