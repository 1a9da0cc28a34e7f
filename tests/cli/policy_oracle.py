#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Independent oracle for tests/unit/test_policy.c: the TPM 2.0 policy
digests (Part 3, §23) written from the specification with hashlib, sharing
nothing with src/policy.c. Prints the expected values as C initialisers;
test_policy.c holds a copy of this output (regenerate with
`python3 tests/cli/policy_oracle.py`). The TPM itself is the second oracle
(tests/cli/test_policy_tpm.sh)."""
import hashlib
import struct

CC_NV, CC_OR, CC_PCR, CC_AUTHORIZE, CC_AUTHVALUE = 0x149, 0x171, 0x17F, 0x16A, 0x16B
SHA256 = 0x000B
ZERO = bytes(32)


def h(*parts):
    return hashlib.sha256(b"".join(parts)).digest()


def pcr_value(i):
    """The test's value of PCR i: 32 bytes of i + 1."""
    return bytes([i + 1]) * 32


def policy_pcr(old, mask, values):
    sel = struct.pack(">IHB", 1, SHA256, 3) + mask.to_bytes(3, "little")
    return h(old, struct.pack(">I", CC_PCR), sel, h(values))


def policy_or(digests):
    return h(ZERO, struct.pack(">I", CC_OR), *digests)


def policy_authorize(key_name, ref):
    return h(h(ZERO, struct.pack(">I", CC_AUTHORIZE), key_name), ref)


def policy_nv(old, nv_name, operand, offset, op):
    args = h(operand, struct.pack(">HH", offset, op))
    return h(old, struct.pack(">I", CC_NV), args, nv_name)


def policy_auth_value(old):
    return h(old, struct.pack(">I", CC_AUTHVALUE))


def leaf(i):
    return h(b"leaf%d" % i)


def tree_root(leaves):
    level = list(leaves)
    while True:
        groups = [level[i:i + 8] for i in range(0, len(level), 8)]
        level = [policy_or(g if len(g) > 1 else g * 2) for g in groups]
        if len(level) == 1:
            return level[0]


def mask_values(mask):
    return b"".join(pcr_value(i) for i in range(24) if mask >> i & 1)


def main():
    key_name = struct.pack(">H", SHA256) + h(b"key")
    nv_name = struct.pack(">H", SHA256) + h(b"nv")
    out = {}
    for mask in (0x000001, 0x000081, 0x001290, 0x801290, 0xFFFFFF):
        out["pcr_%06x" % mask] = policy_pcr(ZERO, mask, mask_values(mask))
    out["pcr_digest_4_7_9_12"] = h(mask_values(0x001290))
    out["or_2"] = policy_or([leaf(0), leaf(1)])
    out["or_8"] = policy_or([leaf(i) for i in range(8)])
    out["authorize_empty"] = policy_authorize(key_name, b"")
    out["authorize_ref"] = policy_authorize(key_name, b"mshim")
    out["ahash_empty"] = h(leaf(0))
    out["ahash_ref"] = h(leaf(0), b"mshim")
    epoch = struct.pack(">Q", 5)
    nv = policy_nv(ZERO, nv_name, epoch, 0, 0x0009)
    out["nv_epoch5"] = nv
    out["nv_then_pcr"] = policy_pcr(nv, 0x001290, mask_values(0x001290))
    out["auth_value"] = policy_auth_value(ZERO)
    out["authorize_then_auth_value"] = policy_auth_value(policy_authorize(key_name, b""))
    # The unseal fence: PolicyPCR(PCR 15 = 32 zero bytes) after
    # PolicyAuthorize, then PolicyAuthValue (a disk key with a PIN).
    fence = policy_pcr(policy_authorize(key_name, b""), 1 << 15, bytes(32))
    out["authorize_then_fence"] = fence
    out["authorize_fence_auth_value"] = policy_auth_value(fence)
    # Names (Part 1, §16) of a made-up TPM2B_PUBLIC (type ECC, nameAlg
    # SHA-256) and TPM2B_NV_PUBLIC (nvIndex, nameAlg SHA-256).
    tpmt = struct.pack(">HHI", 0x0023, SHA256, 0x00040072) + bytes(range(40))
    out["name_object"] = struct.pack(">H", SHA256) + h(tpmt)
    nvpub = struct.pack(">IHIHH", 0x01804D53, SHA256, 0x2006000A, 0, 8)
    out["name_nv"] = struct.pack(">H", SHA256) + h(nvpub)
    for n in (1, 2, 8, 9, 64, 65, 512):
        out["tree_%d" % n] = tree_root([leaf(i) for i in range(n)])
    for k, v in out.items():
        print('        { "%s", "%s" },' % (k, v.hex()))


if __name__ == "__main__":
    main()
