#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Keylime's own IMA verification, for scripts/bench.sh's IMA comparison.

Usage: ima_keylime.py KEYLIME_DIR ASCII_LIST ALLOWLIST SHA256_PCR10

Runs keylime.ima.ima.process_measurement_list (the unmodified snapshot in
KEYLIME_DIR) on ASCII_LIST (ascii_runtime_measurements' format, what
Keylime's agent sends) with a runtime policy made from ALLOWLIST ("HEX  PATH"
lines, mshim verify --ima-allow's format) and PCR 10's sha256 value: the
same work `mshim verify ima` does. Exit 0 when Keylime accepts, 1 otherwise.
"""
import logging
import sys
import types

sys.path.insert(0, sys.argv[1])
logging.disable(logging.WARNING)
# keylime.signing imports gpg (python3-gpg) for runtime-policy signatures,
# which this comparison does not use: an empty module stands in for it.
sys.modules.setdefault("gpg", types.ModuleType("gpg"))
from keylime.common.algorithms import Hash  # noqa: E402
from keylime.ima import ima  # noqa: E402


def main():
    _, _, listing, allow, pcr = sys.argv
    policy = ima.empty_policy() if hasattr(ima, "empty_policy") else None
    if policy is None:
        import copy
        policy = copy.deepcopy(ima.EMPTY_RUNTIME_POLICY)
    digests = policy["digests"]
    for line in open(allow):
        d, path = line.rstrip("\n").split("  ", 1)
        digests.setdefault(path, []).append(d)
    lines = open(listing).read().split("\n")
    _, failure = ima.process_measurement_list(None, lines, policy, pcrval=pcr, hash_alg=Hash.SHA256,
                                              boot_aggregates={"sha256": [lines[0].split()[3].split(":")[1]]})
    sys.exit(1 if failure else 0)


if __name__ == "__main__":
    main()
