#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A TPM in the middle, for tpm2-tss's cmd TCTI: forwards every command it
reads on standard input to swtpm's data socket and its response back, and
before the first N TPM2_Unseal commands extends PCR 14 once, as an OS
extending a PCR at the wrong moment would: the policy session's
PolicyPCR then no longer holds and the TPM answers TPM_RC_PCR_CHANGED
(TPM 2.0 Part 3, TPM2_PolicyPCR: the session keeps pcrUpdateCounter).

    TCTI="cmd:python3 tpm_proxy.py SOCKET N LOG"

LOG: one line per command forwarded, its command code in hex, and
"extend" for each injected extend. Used by tests/cli/test_seal.sh.
"""
import socket, struct, sys

TPM_CC_UNSEAL = 0x15E


def read_exact(f, n):
    b = b""
    while len(b) < n:
        c = f.read(n - len(b))
        if not c:
            sys.exit(0)
        b += c
    return b


def transact(s, cmd):
    s.sendall(cmd)
    hdr = b""
    while len(hdr) < 10:
        hdr += s.recv(10 - len(hdr))
    size = struct.unpack(">I", hdr[2:6])[0]
    rsp = hdr
    while len(rsp) < size:
        rsp += s.recv(size - len(rsp))
    return rsp


def pcr_extend_14():
    # TPM2_PCR_Extend (Part 3): tag SESSIONS, pcrHandle 14, a password
    # authorization (TPM_RS_PW, empty nonce, no attributes, empty auth),
    # TPML_DIGEST_VALUES { 1, sha256, 32 bytes }.
    auth = struct.pack(">IHBH", 0x40000009, 0, 0, 0)
    body = struct.pack(">II", 0x182, 14) + struct.pack(">I", len(auth)) + auth
    body += struct.pack(">IH", 1, 0x000B) + bytes([0x5A]) * 32
    return struct.pack(">HI", 0x8002, 10 + len(body) - 4) + body


def main():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    left = int(sys.argv[2])
    log = open(sys.argv[3], "a")
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        hdr = read_exact(inp, 10)
        size, cc = struct.unpack(">II", hdr[2:10])
        cmd = hdr + read_exact(inp, size - 10)
        if cc == TPM_CC_UNSEAL and left > 0:
            left -= 1
            transact(s, pcr_extend_14())
            log.write("extend\n")
        log.write("%x\n" % cc)
        log.flush()
        out.write(transact(s, cmd))
        out.flush()


if __name__ == "__main__":
    main()
