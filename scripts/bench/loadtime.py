#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Boot ESP images under QEMU (TCG) + OVMF + swtpm, taking turns, and time
each boot from QEMU's start to marks on the serial console
(scripts/bench/loadtime.sh, docs/BENCHMARK.md "Loader time").

    loadtime.py --runs N --dir DIR --tpm-state STATE NAME=ESP.IMG...

Each round boots every image once, under the VM lock (one QEMU on the
machine at a time); odd rounds go in reverse order, so drift in the
machine's speed hits the images alike. A boot stops at the last mark (the
Linux EFI stub's line saying it loaded the initrd), or fails after
--timeout seconds. Prints one line per boot, then the medians, as
"median NAME MARK SECONDS" lines (wall clock from QEMU's start) and "cpu
NAME MARK SECONDS" (the CPU time QEMU and swtpm used until then), and the phases a benchmark build of mshim
printed ("mshim-bench: MICROSECONDS PHASE") as "phase NAME MICROSECONDS
PHASE" lines (medians over the runs).
"""
import argparse
import fcntl
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time

# Marks, in the order they appear: (key, regex on the console).
MARKS = [
    # The firmware's boot manager is about to LoadImage the boot option:
    # everything before is the same firmware code whichever loader is on
    # the disk (the loader's own load, which depends on its size, is after).
    ("loading", rb"BdsDxe: loading Boot"),
    # The firmware has loaded the boot option and calls StartImage on it.
    ("loader", rb"BdsDxe: starting Boot"),
    # Linux's EFI stub got the initrd through LoadFile2 (efi_load_initrd):
    # the loader's work is over.
    # Its PCR 9 measurement comes next: the kernel's own SHA work, the same
    # whichever loader ran, not waited for.
    ("initrd", rb"EFI stub: Loaded initrd from LINUX_EFI_INITRD_MEDIA_GUID"),
]
PHASE = re.compile(rb"mshim-bench: (\d+) ([^\r\n]+)\r?\n")


def cpu_speeds(seconds=0.3):
    """{cpu: loop iterations per second} for each CPU this process may
    use, a busy loop pinned to each in turn. The CPUs of a virtual machine
    need not be equal: on the machine of 2026-12-07 one ran the same loop
    at half the other's speed for minutes at a time, and at the same speed
    later, so a boot's time depended on the CPU the scheduler gave it as
    much as on the loader."""
    allowed = sorted(os.sched_getaffinity(0))
    speeds = {}
    try:
        for c in allowed:
            os.sched_setaffinity(0, {c})
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                for _ in range(10000):
                    pass
                n += 10000
            speeds[c] = n / (time.perf_counter() - t0)
    finally:
        os.sched_setaffinity(0, allowed)
    return speeds


def pinned(cpu):
    """preexec_fn for Popen: the child (and its threads) on CPU cpu only."""
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def cpu_seconds(pid):
    """CPU time of all of a process's threads so far (schedstat: ns on a
    CPU), far less sensitive to the machine's other load than wall clock."""
    total = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[0])
    except (FileNotFoundError, ProcessLookupError):
        pass    # a thread that just ended
    return total / 1e9


def boot(args, name, esp, run_dir):
    """One boot; returns ({mark: seconds}, [(phase, us)...]) or raises."""
    os.makedirs(run_dir, exist_ok=True)
    tpm = os.path.join(run_dir, "tpm")
    shutil.rmtree(tpm, ignore_errors=True)
    shutil.copytree(args.tpm_state, tpm)
    sock = os.path.join(run_dir, "tpm.sock")
    vars_fd = os.path.join(run_dir, "vars.fd")
    shutil.copyfile(args.ovmf_vars, vars_fd)
    if os.path.exists(sock):
        os.unlink(sock)
    swtpm = subprocess.Popen(["swtpm", "socket", "--tpm2", "--tpmstate", "dir=" + tpm,
                              "--ctrl", "type=unixio,path=" + sock, "--terminate",
                              "--log", "file=%s/swtpm.log,level=1" % run_dir],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                             preexec_fn=pinned(args.cpu))
    qemu = None
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("swtpm did not start")
        cmd = ["qemu-system-x86_64", "-machine", "q35,accel=tcg", "-m", "512", "-smp", "1",
               "-display", "none", "-monitor", "none", "-no-reboot", "-nic", "none", "-serial", "stdio",
               "-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + args.ovmf_code,
               "-drive", "if=pflash,format=raw,unit=1,file=" + vars_fd,
               "-drive", "if=none,id=esp,format=raw,file=" + esp,
               "-device", "virtio-blk-pci,drive=esp,bootindex=1",
               "-chardev", "socket,id=chrtpm,path=" + sock,
               "-tpmdev", "emulator,id=tpm0,chardev=chrtpm", "-device", "tpm-tis,tpmdev=tpm0"]
        with open(os.path.join(run_dir, "qemu.log"), "wb") as qlog:
            t0 = time.monotonic()
            qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=qlog,
                                    preexec_fn=pinned(args.cpu))
        seen, buf, stamps, cpu = {}, b"", [], {}
        fd = qemu.stdout.fileno()
        while len(seen) < len(MARKS):
            left = args.timeout - (time.monotonic() - t0)
            if left <= 0:
                raise RuntimeError("no %s mark within %d s" % (MARKS[len(seen)][0], args.timeout))
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            now = time.monotonic() - t0
            if not chunk:
                raise RuntimeError("QEMU exited before the %s mark" % MARKS[len(seen)][0])
            buf += chunk
            stamps.append((now, len(buf)))
            for key, rx in MARKS:
                if key not in seen and re.search(rx, buf):
                    seen[key] = now
                    cpu[key] = cpu_seconds(qemu.pid) + cpu_seconds(swtpm.pid)
        with open(os.path.join(run_dir, "serial.log"), "wb") as f:
            f.write(buf)
        # Each line with the time its end arrived, for a look at the gaps.
        with open(os.path.join(run_dir, "serial.times"), "w") as f:
            start, i = 0, 0
            for line in buf.split(b"\n"):
                start += len(line) + 1
                while i < len(stamps) - 1 and stamps[i][1] < start:
                    i += 1
                f.write("%8.3f %s\n" % (stamps[i][0], line.decode("latin-1").rstrip("\r")))
        phases = [(p.decode("latin-1"), int(us)) for us, p in PHASE.findall(buf)]
        return seen, cpu, phases
    finally:
        for p in (qemu, swtpm):
            if p and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--tpm-state", required=True)
    ap.add_argument("--lock", default="/tmp/mshim-vm.lock")
    ap.add_argument("--ovmf-code", default="/usr/share/OVMF/OVMF_CODE_4M.fd")
    ap.add_argument("--ovmf-vars", default="/usr/share/OVMF/OVMF_VARS_4M.fd")
    ap.add_argument("--cpu", default="fastest",
                    help="the CPU each round's QEMU and swtpm run on: a number, 'fastest' (measured "
                         "at each round's start) or 'any' (wherever the scheduler puts them)")
    ap.add_argument("images", nargs="+", help="NAME=ESP.IMG")
    a = ap.parse_args()
    images = [tuple(x.split("=", 1)) for x in a.images]
    mode = a.cpu
    if mode not in ("any", "fastest"):
        allowed = sorted(os.sched_getaffinity(0))
        if not mode.isdigit() or int(mode) not in allowed:
            ap.error("--cpu %r: want fastest, any, or one of the CPUs this may run on (%s)"
                     % (mode, " ".join(map(str, allowed))))
        a.cpu = int(mode)
    times = {n: {k: [] for k, _ in MARKS} for n, _ in images}
    cputimes = {n: {k: [] for k, _ in MARKS} for n, _ in images}
    phases = {n: {} for n, _ in images}
    order = {n: [] for n, _ in images}
    cpus = []   # each round's loop rates per CPU (--cpu fastest)
    for r in range(a.runs):
        turn = images if r % 2 == 0 else images[::-1]
        # One round under the lock: no other VM on the machine meanwhile.
        with open(a.lock, "a") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            load = open("/proc/loadavg").read().split()[0]
            # Each round's boots on one CPU, every loader's the same: by
            # default the CPU fastest at the round's start (a machine's
            # CPUs can differ, and change over a run), so each round's
            # ratio compares the loaders, not the CPUs they landed on.
            if mode == "any":
                a.cpu, where = None, "any CPU"
            elif mode == "fastest":
                speeds = cpu_speeds(0.2)
                a.cpu = max(speeds, key=speeds.get)
                where = "CPU %d (%s)" % (a.cpu, " ".join(
                    "%d=%.2f" % (c, v / speeds[a.cpu]) for c, v in sorted(speeds.items())))
                cpus.append(speeds)
            else:
                where = "CPU %d" % a.cpu
            for name, esp in turn:
                try:
                    seen, cpu, ph = boot(a, name, esp, os.path.join(a.dir, "%s.%d" % (name, r)))
                except RuntimeError as e:
                    sys.exit("loadtime: %s, run %d: %s (files in %s)" % (name, r + 1, e, a.dir))
                for k, v in seen.items():
                    times[name][k].append(v)
                    cputimes[name][k].append(cpu[k])
                for p, us in ph:
                    if p not in phases[name]:
                        order[name].append(p)
                    phases[name].setdefault(p, []).append(us)
                print("run %d %-7s %s  (load %s, %s)" % (r + 1, name, "  ".join(
                    "%s %.3f s, cpu %.3f s" % (k, seen[k], cpu[k]) for k, _ in MARKS), load, where),
                    file=sys.stderr, flush=True)
    if cpus:
        # How unequal the CPUs were: the slowest's rate over the fastest's,
        # each round; the lowest and the median.
        rel = [min(sp.values()) / max(sp.values()) for sp in cpus]
        print("cpus %d %.2f %.2f" % (len(cpus[0]), min(rel), statistics.median(rel)))
    # The firmware's start-up up to "loading", over every boot of every
    # image: the same code each time, so its spread is the machine's noise,
    # which a median over all boots shrinks.
    for kind, src in (("median", times), ("cpu", cputimes)):
        print("pooled %s loading %.3f" % (kind, statistics.median(
            [v for n, _ in images for v in src[n]["loading"]])))
    # Each round's ratio to systemd-boot's boot in the same round, then
    # their median: the machine's speed drifts over a run (by a third at
    # times, from one minute to the next), less within a round, where the
    # loaders boot back to back.
    if "sdboot" in times:
        for name, _ in images:
            for span, k0 in (("whole", None), ("loader", "loader")):
                for kind, src in (("median", times), ("cpu", cputimes)):
                    def s(n, r):
                        return src[n]["initrd"][r] - (src[n][k0][r] if k0 else 0)
                    rs = [s(name, r) / s("sdboot", r) for r in range(a.runs)]
                    print("roundratio %s %s %s %.3f" % (kind, name, span, statistics.median(rs)))
    # The floor issue 21 names for mshim: its whole span less its own work,
    # the phases of the -DMB_BENCH build ("phases") but LoadImage (the
    # firmware's hash of the kernel) and the image read (one read of the
    # kernel; the initrd's is in the stub's LoadFile2 call, after the last
    # phase). Each round's against systemd-boot's boot of the same round,
    # their median, like roundratio. The two names are efi/image.c's
    # MSHIM_BENCH_MARK labels.
    if "sdboot" in times and "mshim" in times and phases.get("phases"):
        own = sum(statistics.median(v) for p, v in phases["phases"].items()
                  if p not in ("total", "image read", "LoadImage (firmware: PE load, PCR 4)")) / 1e6
        rs = [(times["mshim"]["initrd"][r] - own) / times["sdboot"]["initrd"][r] for r in range(a.runs)]
        print("floor %.4f %.3f %.3f %.3f" % (own, statistics.median(rs), min(rs), max(rs)))
    for name, _ in images:
        for k, _ in MARKS:
            print("median %s %s %.3f" % (name, k, statistics.median(times[name][k])))
            print("cpu %s %s %.3f" % (name, k, statistics.median(cputimes[name][k])))
        for p in order[name]:
            print("phase %s %d %s" % (name, statistics.median(phases[name][p]), p))


if __name__ == "__main__":
    main()
