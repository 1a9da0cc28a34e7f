#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""An expect-like driver for a UEFI text UI (MokManager) on QEMU's serial port.

QEMU serves the guest's serial port on a unix socket
(-serial unix:PATH,server=on,wait=on); this connects to it, records every
byte into --log, and runs a script of steps, one a line:

    expect [TIMEOUT] REGEX   wait until REGEX (Python re, on the screen text)
                             appears after the previous match
    send TEXT                send TEXT with escapes decoded: \\r, \\n, \\e,
                             \\xHH; also the names <enter> <down> <up> <esc>
    type TEXT                the same in one write, for a Linux tty (which
                             buffers input; no firmware parses keys there)
    sleep SECONDS
    # comment

The screen text is what a person would read: OVMF's terminal writes ANSI
escape sequences (cursor moves, colours) and code page 437 box drawing;
escape sequences become one space each and other non-printable bytes are
dropped, so "Perform MOK management" matches however the screen was drawn.

After the script, it keeps recording until --until REGEX appears (or the
connection closes), then exits. Every wait is bounded (default 120 s).
Exit status: 0 when every step and --until matched, 1 on a timeout or a
closed connection (the last screen text is printed), 2 on bad usage.
Keys are sent one escape sequence at a time with a short pause, as a
terminal would, because the firmware's terminal driver parses escape
sequences with a timeout.
"""
import argparse
import codecs
import os
import re
import select
import socket
import sys
import time

ESC_RE = re.compile(rb"\x1b(\[[0-9;=?]*[A-Za-z]|[()][A-Za-z0-9]|.)")
KEYS = {"<enter>": "\r", "<down>": "\x1b[B", "<up>": "\x1b[A", "<esc>": "\x1b",
        "<right>": "\x1b[C", "<left>": "\x1b[D"}


def screen_text(raw):
    """bytes as received -> text a person would read (see the docstring)."""
    raw = ESC_RE.sub(b" ", raw)
    out = bytearray()
    for c in raw:
        if c == 0x0A or 0x20 <= c < 0x7F:
            out.append(c)
    return out.decode("ascii")


class Console:
    def __init__(self, path, log, connect_timeout):
        self.connect(path, connect_timeout)
        self.raw = bytearray()
        self.pos = 0           # screen-text offset after the last match
        self.log = open(log, "wb")

    def connect(self, path, timeout):
        """(Re)connect to the console's socket, waiting at most timeout s
        for it: after a power cycle the new QEMU's output goes on after
        the old one's, in the same text."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.closed = False

    def text(self):
        return screen_text(bytes(self.raw))

    def pump(self, wait):
        if self.closed:
            time.sleep(wait)
            return
        r, _, _ = select.select([self.s], [], [], wait)
        if r:
            data = self.s.recv(65536)
            if not data:
                self.closed = True
                return
            self.raw += data
            self.log.write(data)
            self.log.flush()

    def expect(self, regex, timeout):
        rx = re.compile(regex)
        deadline = time.monotonic() + timeout
        while True:
            t = self.text()
            m = rx.search(t, self.pos)
            if m:
                self.pos = m.end()
                return m
            if self.closed or time.monotonic() > deadline:
                return None
            self.pump(min(0.5, max(0.0, deadline - time.monotonic())))

    def send(self, text, pause=0.15):
        for part in re.split(r"(<[a-z]+>)", text):
            if not part:
                continue
            data = KEYS.get(part)
            if data is None:
                data = codecs.decode(part.replace("\\e", "\\x1b"), "unicode_escape")
            # One key at a time: the firmware polls the UART and parses escape
            # sequences itself; a pause between keys keeps them apart.
            keys = [data] if data.startswith("\x1b") else list(data)
            for k in keys:
                self.s.sendall(k.encode("latin-1"))
                if not pause:
                    continue
                end = time.monotonic() + pause
                while time.monotonic() < end:
                    self.pump(0.05)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--socket", required=True)
    p.add_argument("--log", required=True, help="file receiving every byte from the guest")
    p.add_argument("--script", required=True, help="steps file ('-' for standard input)")
    p.add_argument("--timeout", type=float, default=120, help="default timeout per expect (s)")
    p.add_argument("--until", help="after the script, record until this regex appears")
    p.add_argument("--until-timeout", type=float, default=120)
    p.add_argument("--connect-timeout", type=float, default=30)
    p.add_argument("--deadline", type=float, default=280,
                   help="limit for the whole run (s): every wait is cut to what is left")
    a = p.parse_args()
    lines = (sys.stdin if a.script == "-" else open(a.script)).read().splitlines()
    # Keep up with the UART. QEMU's serial port writes the socket one byte
    # per write(), and a Unix stream socket holds only about 280 of those
    # (each byte its own buffer); when this reader is not scheduled for
    # that long, QEMU retries a byte a few times and then drops it
    # (hw/char/serial.c). On a machine whose cores are busy with other
    # boots, MokManager's screens then lost bytes (make check, twice). A
    # higher priority, where allowed, keeps the reader scheduled; where
    # not, nothing changes.
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -5)
    except OSError:
        pass
    try:
        con = Console(a.socket, a.log, a.connect_timeout)
    except OSError as e:
        sys.stderr.write("mok_console: cannot connect to %s: %s\n" % (a.socket, e))
        return 1
    t0 = time.monotonic()

    def say(msg):
        sys.stderr.write("mok_console: [%5.1f s] %s\n" % (time.monotonic() - t0, msg))

    def fail(msg):
        say("FAILED: " + msg)
        tail = con.text()[-3000:]
        sys.stderr.write("---- screen text (last 3000 chars) ----\n%s\n---- end ----\n" % tail)
        return 1

    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cmd, _, arg = line.partition(" ")
        if cmd == "expect":
            timeout = a.timeout
            first, _, rest = arg.partition(" ")
            if re.fullmatch(r"\d+(\.\d+)?", first) and rest:
                timeout, arg = min(float(first), a.timeout), rest
            timeout = min(timeout, max(0.0, a.deadline - (time.monotonic() - t0)))
            if not con.expect(arg, timeout):
                return fail("line %d: no /%s/ within %g s%s" % (n, arg, timeout,
                            " (connection closed)" if con.closed else ""))
            say("saw /%s/" % arg)
        elif cmd in ("send", "type"):
            con.send(arg, 0.15 if cmd == "send" else 0)
            say("sent %r" % arg)
        elif cmd == "sleep":
            end = time.monotonic() + float(arg)
            while time.monotonic() < end:
                con.pump(0.1)
        else:
            sys.stderr.write("mok_console: line %d: unknown step %r\n" % (n, cmd))
            return 2
    if a.until:
        timeout = min(a.until_timeout, max(0.0, a.deadline - (time.monotonic() - t0)))
        if not con.expect(a.until, timeout):
            return fail("no /%s/ within %g s after the script" % (a.until, timeout))
        say("saw /%s/" % a.until)
        # Let the rest of the marker's line arrive too; nothing after it
        # is read (the caller stops the VM).
        end = time.monotonic() + 0.3
        while time.monotonic() < end and not con.closed:
            con.pump(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
