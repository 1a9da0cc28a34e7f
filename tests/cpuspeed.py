#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""How fast each CPU ran during a test run (tests/run-all.sh starts this
beside the tests and stops it at the end).

    cpuspeed.py OUT [INTERVAL]

Every INTERVAL seconds (default 20) the same busy loop runs pinned to each
CPU in turn for 50 ms of its own CPU time; its rate (loop steps per second
of CPU time) is that CPU's speed at that moment. Time the CPU gave other
processes does not count against it, so the tests' load does not; a
virtual CPU that the host runs at half speed (another guest on its core, a
quota) does: on the machine of 2026-12-07 one of the two CPUs ran the loop
at 0.53 to 0.72 of the other's rate for minutes at a time, first the one,
then the other. On SIGTERM, writes to OUT one line: each CPU's median rate
over the run relative to the fastest sample seen, and their sum (the CPUs'
worth the run had, at most the number of CPUs).
"""
import os
import signal
import statistics
import sys
import time

SAMPLE_CPU_SECONDS = 0.05


def rate(cpu):
    """Loop steps per CPU-second on cpu (this process pinned to it)."""
    os.sched_setaffinity(0, {cpu})
    t0, n = time.thread_time(), 0
    while time.thread_time() - t0 < SAMPLE_CPU_SECONDS:
        for _ in range(2000):
            pass
        n += 2000
    return n / (time.thread_time() - t0)


def main():
    out = sys.argv[1]
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    cpus = sorted(os.sched_getaffinity(0))
    samples = {c: [] for c in cpus}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    # The lowest priority: the tests' time is what the run is about.
    os.nice(19)
    while not stop:
        for c in cpus:
            samples[c].append(rate(c))
        end = time.monotonic() + interval
        while not stop and time.monotonic() < end:
            time.sleep(0.5)
    if not all(samples.values()):
        return
    top = max(max(v) for v in samples.values())
    med = {c: statistics.median(v) / top for c, v in samples.items()}
    with open(out, "w") as f:
        f.write("CPU speed over the run (a busy loop's rate on each, the median of %d sample%s, "
                "1.00 = the fastest sample): %s; %.1f of %d CPUs' worth\n" % (
                    len(samples[cpus[0]]), "" if len(samples[cpus[0]]) == 1 else "s",
                    ", ".join("CPU %d %.2f" % (c, med[c]) for c in cpus), sum(med.values()), len(cpus)))


if __name__ == "__main__":
    main()
