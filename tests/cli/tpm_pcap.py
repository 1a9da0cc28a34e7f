#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tpm_pcap.py FILE: the TPM commands in a pcapng file the tpm2-tss pcap
TCTI wrote (TCTI "pcap:<tcti>", TCTI_PCAP_FILE=FILE), one name a line, in
order. The TCTI wraps each command and response in IPv4/TCP: commands go to
port 2321. A command is tag (2 bytes), size (4), commandCode (4, at byte 6),
TPM 2.0 Part 1 §18. Standard library only; the names are Part 2 §6.5.2's."""
import struct
import sys

CC = {
    0x11F: "NV_UndefineSpace", 0x120: "EvictControl", 0x12A: "NV_DefineSpace", 0x131: "CreatePrimary",
    0x134: "NV_Increment", 0x149: "PolicyNV", 0x14E: "NV_Read", 0x153: "Create", 0x157: "Load",
    0x15E: "Unseal", 0x161: "ContextLoad", 0x162: "ContextSave", 0x165: "FlushContext",
    0x167: "LoadExternal", 0x169: "NV_ReadPublic", 0x16A: "PolicyAuthorize", 0x16B: "PolicyAuthValue",
    0x171: "PolicyOR", 0x173: "ReadPublic", 0x176: "StartAuthSession", 0x177: "VerifySignature",
    0x17A: "GetCapability", 0x17E: "PCR_Read", 0x17F: "PolicyPCR", 0x182: "PCR_Extend",
    0x17B: "GetRandom", 0x144: "Startup", 0x189: "PolicyGetDigest",
}


def commands(data):
    off = 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        if blen < 12 or off + blen > len(data):
            sys.exit("truncated pcapng block at %d" % off)
        if btype == 6:                          # Enhanced Packet Block
            cap = struct.unpack_from("<I", data, off + 20)[0]
            pkt = data[off + 28: off + 28 + cap]
            ihl = (pkt[0] & 15) * 4
            tcp = pkt[ihl:]
            dport = struct.unpack_from(">H", tcp, 2)[0]
            payload = tcp[(tcp[12] >> 4) * 4:]
            if dport == 2321 and len(payload) >= 10:
                yield struct.unpack_from(">I", payload, 6)[0]
        off += blen


if __name__ == "__main__":
    for cc in commands(open(sys.argv[1], "rb").read()):
        print(CC.get(cc, "0x%x" % cc))
