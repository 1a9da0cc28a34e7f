#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Count the TPM commands swtpm received, from its log (--log level=20).

    tpmcount.py LOG [OFFSET]

swtpm at level 20 writes every command it reads as "SWTPM_IO_Read: length
N" followed by the bytes in hex; the command code is bytes 6..9 of the
command (TPM 2.0 Part 1, §18: tag, size, commandCode). OFFSET: start
reading at this byte of LOG (its size before the run being counted).
Prints "COUNT NAME,NAME,..." on one line; CreatePrimary is flagged by name.
"""
import sys

# TPM 2.0 Part 2, §6.5.2 (the codes the peers and mshim send).
NAMES = {
    0x120: "EvictControl", 0x122: "NV_UndefineSpace", 0x12A: "NV_DefineSpace",
    0x131: "CreatePrimary", 0x134: "NV_Increment", 0x137: "NV_Write",
    0x144: "Startup", 0x145: "Shutdown", 0x149: "PolicyNV", 0x14E: "NV_Read",
    0x151: "PolicySecret", 0x153: "Create", 0x155: "HMAC", 0x156: "Import",
    0x157: "Load", 0x15E: "Unseal", 0x160: "PolicySigned", 0x161: "ContextLoad",
    0x162: "ContextSave", 0x165: "FlushContext", 0x167: "LoadExternal",
    0x169: "NV_ReadPublic", 0x16A: "PolicyAuthorize", 0x16B: "PolicyAuthValue",
    0x16C: "PolicyCommandCode", 0x171: "PolicyOR", 0x173: "ReadPublic",
    0x176: "StartAuthSession", 0x177: "VerifySignature", 0x17A: "GetCapability",
    0x17B: "GetRandom", 0x17C: "GetTestResult", 0x17E: "PCR_Read", 0x17F: "PolicyPCR",
    0x180: "PolicyRestart", 0x182: "PCR_Extend", 0x186: "HashSequenceStart",
    0x189: "PolicyGetDigest", 0x18A: "TestParms", 0x18C: "PolicyPassword",
    0x191: "CreateLoaded",
}


def commands(text):
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line.startswith("SWTPM_IO_Read:"):
            continue
        data = []
        while i < len(lines) and not lines[i].strip().startswith(("SWTPM_", "Ctrl", "Data")):
            data += lines[i].split()
            i += 1
        if len(data) >= 10:
            yield int("".join(data[6:10]), 16)


def main():
    with open(sys.argv[1], "rb") as f:
        f.seek(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
        text = f.read().decode("latin-1")
    cc = [NAMES.get(c, "0x%x" % c) for c in commands(text)]
    print(len(cc), ",".join(cc))


if __name__ == "__main__":
    main()
