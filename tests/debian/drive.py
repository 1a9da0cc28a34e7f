#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Drive a Debian guest over QEMU's serial console (a unix socket), as a
person at its console would: answer the firmware's and MokManager's
screens, type the passphrase at the cryptsetup prompt, type commands at
root's shell and read their output and exit status.

The script has one step a line (mok_console.py's, plus those for a shell):

    case LABEL            the steps up to the next `case` are one test case:
                          "PASS: LABEL" on stdout when they all succeed,
                          else "FAIL: LABEL" (and every later case is
                          "FAIL: LABEL: not reached"); then the run stops
    expect [T] REGEX      wait (at most T s) for REGEX after the last match
    failon REGEX          from here on, REGEX on the console fails the case
                          at once (e.g. a passphrase prompt where none is
                          expected); `failon` alone clears it
    mark NAME             remember where the console is now
    absent NAME REGEX     REGEX is not on the console since mark NAME
    send TEXT             keys one at a time, escapes decoded (firmware)
    type TEXT             in one write, byte for byte but <enter> (a tty)
    sleep S
    shell [T]             wait for root's autologin shell, then make its
                          output plain (no echo, a fixed prompt)
    run [T] CMD           run CMD in that shell; its exit status must be 0
    runrc [T] RC CMD      the same, the status must be RC
    # comment

Each `run`'s output goes to stderr (and --out DIR/run-N.txt). Every wait
is bounded by T (default --timeout) and by --deadline for the whole run.
Exit status 0 when every case passed, 1 otherwise, 2 bad usage.

    resetting             the guest resets now (e.g. MokManager's Reboot):
                          arms the reset guard below

With --qmp, a guard for QEMU itself: after a reset (the guest's kernel said
"reboot: Restarting system" or, panicking, "Rebooting in N seconds", or a
`resetting` step), when the console then
prints nothing for --reset-grace seconds and the firmware has not printed
its "BdsDxe" boot line, the firmware is stuck before it booted anything
(seen once in CI: OVMF under TCG never came back from a warm reset). The
VM's state is written to stderr (QMP query-status, info registers), and
the machine is powered off and on as a person would (--power-cycle's
command: a new QEMU and swtpm on the same disk, variable store and TPM
state), or without --power-cycle, reset through QMP (which never brought
the stuck firmware back); at most twice in a run, always reported.
Nothing of mshim has run then.
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from mok_console import Console, KEYS  # noqa: E402

PROMPT = "@@MSH@@ "


class Fail(Exception):
    pass


class Qmp:
    """QEMU's machine protocol on a unix socket: one command at a time."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(30)
        self.s.connect(path)
        self.buf = b""
        self._reply()  # the greeting
        self.cmd("qmp_capabilities")

    def _reply(self):
        while True:
            while b"\n" not in self.buf:
                chunk = self.s.recv(65536)
                if not chunk:
                    raise OSError("QMP closed")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def cmd(self, name, **args):
        self.s.sendall(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        return self._reply()


# The kernel's last words before a reset: reboot(2)'s, and a panic's with
# panic=N (it resets N seconds later).
RESET_LINE = re.compile(rb"reboot: Restarting system|Rebooting in \d+ seconds")


class Driver:
    def __init__(self, con, args):
        self.con, self.a = con, args
        self.t0 = time.monotonic()
        self.failon = None
        self.marks = {}
        self.nrun = 0
        self.resets = 0
        self.seen = (0, time.monotonic())  # console length, when it last grew
        self.armed = None  # where in the console a reset happened, until BdsDxe
        self.reset_line = 0  # the console offset after the last kernel reset line seen

    def say(self, msg):
        sys.stderr.write("drive: [%6.1f s] %s\n" % (time.monotonic() - self.t0, msg))

    def left(self, t):
        return min(t, max(0.0, self.a.deadline - (time.monotonic() - self.t0)))

    def expect(self, regex, timeout):
        """Wait for regex after the last match; a failon match first fails."""
        rx = re.compile(regex)
        frx = re.compile(self.failon) if self.failon else None
        deadline = time.monotonic() + self.left(timeout)
        while True:
            t = self.con.text()
            m = rx.search(t, self.con.pos)
            f = frx.search(t, self.con.pos) if frx else None
            if f and (not m or f.start() < m.start()):
                raise Fail("/%s/ appeared on the console: %r" % (self.failon, f.group(0)))
            if m:
                self.con.pos = m.end()
                return m
            if self.con.closed:
                raise Fail("no /%s/: the console closed (the VM stopped)" % regex)
            if time.monotonic() > deadline:
                raise Fail("no /%s/ within %g s" % (regex, timeout))
            self.con.pump(min(0.3, max(0.0, deadline - time.monotonic())))
            self.reset_guard()

    def reset_guard(self):
        """QEMU stuck after a reset: see the module's doc."""
        raw, now = self.con.raw, time.monotonic()
        last = None
        for last in RESET_LINE.finditer(raw, self.reset_line):
            pass
        if last:
            self.reset_line = last.end()
            self.armed = self.reset_line
        if self.armed is not None and raw.find(b"BdsDxe", self.armed) >= 0:
            self.armed = None
        if len(raw) != self.seen[0]:
            self.seen = (len(raw), now)
            return
        if (not self.a.qmp or self.armed is None or self.resets >= 2
                or now - self.seen[1] < self.a.reset_grace):
            return
        self.resets += 1
        self.say("QEMU: nothing on the console %g s after a reset, no firmware boot line; "
                 "the VM's state, then a %s (%d of at most 2)"
                 % (self.a.reset_grace, "power cycle" if self.a.power_cycle else "reset", self.resets))
        try:
            q = Qmp(self.a.qmp)
            sys.stderr.write("  | query-status: %s\n" % json.dumps(q.cmd("query-status").get("return")))
            regs = q.cmd("human-monitor-command", **{"command-line": "info registers -a"})
            sys.stderr.write("".join("  | %s\n" % l for l in str(regs.get("return", regs)).splitlines()))
            if not self.a.power_cycle:
                q.cmd("system_reset")
            q.s.close()
        except (OSError, ValueError) as e:
            self.say("QMP: %s" % e)
        if self.a.power_cycle:
            self.power_cycle()
        self.seen = (len(self.con.raw), time.monotonic())
        self.armed = len(self.con.raw)

    def power_cycle(self):
        """A new QEMU and swtpm on the same disk, variable store and TPM
        state (--power-cycle's command); the console goes on from the new
        one. A QEMU system_reset never brought the stuck firmware back."""
        self.con.s.close()
        try:
            r = subprocess.run(self.a.power_cycle, shell=True, timeout=120)
            if r.returncode != 0:
                raise Fail("the power cycle (%s) failed: status %d" % (self.a.power_cycle, r.returncode))
            self.con.connect(self.a.socket, 30)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise Fail("the power cycle failed: %s" % e)
        self.say("powered on again: the firmware starts from the same disk, variable store and TPM")

    def type(self, text):
        """TEXT as typed at a Linux tty, in one write: byte for byte (no
        escape decoding: a shell command's backslashes stay), the names
        <enter> <down> ... as their keys."""
        for part in re.split(r"(<[a-z]+>)", text):
            self.con.s.sendall(KEYS.get(part, part).encode("latin-1"))

    def shell(self, timeout):
        # The autologin shell's prompt ends in "# ".
        self.expect(r"root@[^\s:]+:[^\n]*# ", timeout)
        # PS1 typed in two quoted halves: the echo of this line is not
        # the prompt it sets.
        half = len(PROMPT) // 2
        self.type("stty -echo -onlcr cols 250; PS1='%s''%s'; dmesg -n 1; export SYSTEMD_PAGER= PAGER=cat<enter>"
                  % (PROMPT[:half], PROMPT[half:]))
        self.expect(re.escape(PROMPT), 30)

    def run(self, timeout, rc, cmd):
        self.nrun += 1
        tag = "@@RC%d=" % self.nrun
        # The status after the output, on its own line; the tag is split in
        # the command so that an echo of it cannot match.
        self.type("%s; r=$?; echo; echo \"@@RC%d\"=$r@@<enter>" % (cmd, self.nrun))
        start = self.con.pos
        m = self.expect(re.escape(tag) + r"(\d+)@@", timeout)
        out = self.con.text()[start:m.start()]
        self.expect(re.escape(PROMPT), 30)
        self.say("ran %r: status %s" % (cmd, m.group(1)))
        sys.stderr.write("".join("  | %s\n" % l for l in out.strip("\n").split("\n")))
        if self.a.out:
            with open(os.path.join(self.a.out, "run-%d.txt" % self.nrun), "w") as f:
                f.write("$ %s\n%s" % (cmd, out))
        if rc is not None and int(m.group(1)) != rc:
            raise Fail("%r exited with %s (expected %d)" % (cmd, m.group(1), rc))

    def step(self, line):
        cmd, _, arg = line.partition(" ")
        timeout = self.a.timeout
        first, _, rest = arg.partition(" ")
        if cmd in ("expect", "run", "runrc", "shell") and re.fullmatch(r"\d+(\.\d+)?", first):
            timeout, arg = float(first), rest
        if cmd == "expect":
            self.expect(arg, timeout)
            self.say("saw /%s/" % arg)
        elif cmd == "failon":
            self.failon = arg or None
        elif cmd == "mark":
            self.marks[arg] = self.con.pos
        elif cmd == "absent":
            name, _, regex = arg.partition(" ")
            t = self.con.text()
            m = re.compile(regex).search(t, self.marks.get(name, 0))
            if m:
                raise Fail("/%s/ appeared since mark %s: %r" % (regex, name, m.group(0)))
        elif cmd in ("send", "type"):
            if cmd == "send":
                self.con.send(arg, 0.15)
            else:
                self.type(arg)
            self.say("sent %r" % (arg if "pass" not in arg.lower() else "..."))
        elif cmd == "resetting":
            self.armed = len(self.con.raw)
        elif cmd == "sleep":
            end = time.monotonic() + float(arg)
            while time.monotonic() < end:
                self.con.pump(0.1)
        elif cmd == "shell":
            self.shell(timeout)
            self.say("at root's shell")
        elif cmd == "run":
            self.run(timeout, 0, arg)
        elif cmd == "runrc":
            rc, _, c = arg.partition(" ")
            self.run(timeout, int(rc), c)
        else:
            raise ValueError("unknown step %r" % cmd)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--socket", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--script", required=True)
    p.add_argument("--out")
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--deadline", type=float, default=1800)
    p.add_argument("--qmp", help="QEMU's QMP socket, for the reset guard")
    p.add_argument("--reset-grace", type=float, default=240)
    p.add_argument("--power-cycle", metavar="CMD",
                   help="a shell command that powers the VM off and on again (QEMU and swtpm restarted "
                        "on the same disk, variable store and TPM state), for the reset guard")
    a = p.parse_args()
    cases, cur = [], None
    for n, line in enumerate(open(a.script).read().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("case "):
            cur = (line[5:], [])
            cases.append(cur)
        elif cur is None:
            sys.stderr.write("drive: line %d: a step before the first case\n" % n)
            return 2
        else:
            cur[1].append((n, line))
    try:
        con = Console(a.socket, a.log, 30)
    except OSError as e:
        print("FAIL: %s: cannot connect to the VM's console: %s" % (cases[0][0] if cases else "drive", e))
        return 1
    d = Driver(con, a)
    for i, (label, steps) in enumerate(cases):
        try:
            for n, line in steps:
                try:
                    d.step(line)
                except Fail as e:
                    raise Fail("line %d (%s): %s" % (n, line, e))
            print("PASS: %s" % label, flush=True)
            d.say("PASS: %s" % label)
        except Fail as e:
            print("FAIL: %s" % label, flush=True)
            d.say("FAILED: %s" % e)
            sys.stderr.write("---- console (last 3000 chars) ----\n%s\n---- end ----\n" % con.text()[-3000:])
            for later, _ in cases[i + 1:]:
                print("FAIL: %s: not reached" % later, flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
