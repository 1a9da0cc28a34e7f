#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Time a command for scripts/bench.sh.

Usage: timeit.py RUNS CMD [ARG...]

Runs CMD RUNS times with its output to /dev/null and prints two numbers:
the median wall-clock time and the median CPU time (user + system of the
child) in seconds. Python starts the child with vfork/posix_spawn, so the
measurement adds well under a millisecond; a shell's fork of itself adds a
few, which is a tenth of mshim's time on the benchmark logs. Exits 1 if any
run fails.
"""
import resource
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs, cmd = int(sys.argv[1]), sys.argv[2:]
    walls, cpus = [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        t1 = time.perf_counter()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if rc != 0:
            sys.exit(1)
        walls.append(t1 - t0)
        cpus.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    print(f"{statistics.median(walls):.4f} {statistics.median(cpus):.4f}")


if __name__ == "__main__":
    main()
