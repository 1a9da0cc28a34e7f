#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""An attacker's edits of an approval file (docs/SEALING.md "Approval"),
for tests/cli/test_seal.sh: what `mshim policy revoke --keep`, prune and
remove must refuse to re-sign. approvedPolicy is recomputed with the
spec's formulas (tests/cli/policy_oracle.py, hashlib), never by mshim.

  approval_edit.py check IN NV_NAME_HEX      exit 0 if IN's policy is its fields' digest
  approval_edit.py values IN OUT             another PCR value; policy and signature kept
  approval_edit.py repolicy IN OUT NV_NAME   another value, the policy recomputed to match; old signature
  approval_edit.py forge IN OUT KEY [REF]    fields kept; signature by KEY (openssl) over SHA-256(policy || REF)
"""
import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policy_oracle import ZERO, policy_nv, policy_pcr  # noqa: E402

TPM_EO_UNSIGNED_LE = 0x0009     # TPM 2.0 Part 2, TPM_EO


def read(path):
    lines = open(path).read().splitlines()
    return lines, dict(line.split(" ", 1) for line in lines[1:])


def write(path, lines, changes):
    out = [line.split(" ", 1)[0] in changes and line.split(" ", 1)[0] + " " + changes[line.split(" ", 1)[0]] or line
           for line in lines]
    open(path, "w").write("\n".join(out) + "\n")


def approved(kv, nv_name):
    mask = sum(1 << int(p) for p in kv["pcrs"].split(","))
    d = policy_nv(ZERO, nv_name, int(kv["epoch"]).to_bytes(8, "big"), 0, TPM_EO_UNSIGNED_LE)
    return policy_pcr(d, mask, bytes.fromhex(kv["values"]))


def other_values(kv):
    v = bytearray(bytes.fromhex(kv["values"]))
    v[0] ^= 0xff
    return v.hex()


def main(mode, src, *rest):
    lines, kv = read(src)
    if mode == "check":
        sys.exit(0 if approved(kv, bytes.fromhex(rest[0])).hex() == kv["policy"] else 1)
    out = rest[0]
    if mode == "values":
        write(out, lines, {"values": other_values(kv)})
    elif mode == "repolicy":
        kv["values"] = other_values(kv)
        write(out, lines, {"values": kv["values"], "policy": approved(kv, bytes.fromhex(rest[1])).hex()})
    elif mode == "forge":
        ref = rest[2].encode() if len(rest) > 2 else b""
        ahash = hashlib.sha256(bytes.fromhex(kv["policy"]) + ref).digest()
        sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", rest[1]], input=ahash,
                             capture_output=True, check=True).stdout
        write(out, lines, {"signature": sig.hex()})
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main(*sys.argv[1:])
