#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Follow a boot's serial log and write each line with the host's seconds
since this script started (QEMU's start, within a few milliseconds), so a
developer sees where a boot's time goes: the firmware up to BdsDxe, mshim,
the kernel's decompression up to the stub's initrd line, the kernel, the
initramfs. Used by tests/integration/lib.sh it_qemu when IT_STAMP=1.

    stamp.py SERIAL_LOG OUT PID    (ends when process PID has exited)
"""
import os
import sys
import time


def main():
    log, out, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    t0 = time.monotonic()
    pos, buf = 0, b""
    with open(out, "w") as o:
        while True:
            alive = os.path.exists("/proc/%d" % pid)
            try:
                with open(log, "rb") as f:
                    f.seek(pos)
                    data = f.read()
            except OSError:
                data = b""
            pos += len(data)
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                text = line.decode("latin-1").rstrip("\r")
                o.write("%8.2f %s\n" % (time.monotonic() - t0, text))
            o.flush()
            if not alive:
                return 0
            time.sleep(0.02)


if __name__ == "__main__":
    sys.exit(main())
