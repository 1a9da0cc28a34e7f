#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Boot states for tests/cli/test_seal.sh, computed here with hashlib and
tests/cli/tcglog_build.py, independently of mshim:

  seal_fixture.py boot DIR [EXTRA]   DIR/log.bin (sha256 events in PCRs 4, 5,
                                     7, 9, 12), DIR/extends.txt (tpm2_pcrextend
                                     arguments, one a line), DIR/pcrs.txt (the
                                     replayed values, "sha256:N=hex"); EXTRA:
                                     that many more initrd events in PCR 9
  seal_fixture.py pred OUT PCRS.txt [--unpredictable N] [--refused] [--omit N]
                                     [--point boot|totp|none]
                                     a `mshim predict --json` document
                                     (schema mshim-predict/1) with those values,
                                     "point" "boot" unless --point says (none:
                                     no "point", as an older mshim wrote)
  seal_fixture.py approval-values FILE  an approval's "values" line as
                                     "sha256:N=hex" lines (its "pcrs" order)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tcglog_build as tb  # noqa: E402

EV_EFI_BOOT_SERVICES_APPLICATION, EV_EVENT_TAG = 0x80000003, 0x6


def events(extra):
    ev = [(4, EV_EFI_BOOT_SERVICES_APPLICATION, b"mshimx64.efi image"),
          (4, EV_EFI_BOOT_SERVICES_APPLICATION, b"vmlinuz image"),
          (5, EV_EVENT_TAG, b"loader.conf"),
          (7, tb.EV_SEPARATOR, b"\0\0\0\0"),
          (9, EV_EVENT_TAG, b"initrd.img"),
          (12, tb.EV_IPL, "root=/dev/vda quiet\0".encode("utf-16-le"))]
    ev += [(9, EV_EVENT_TAG, b"initrd update %d" % i) for i in range(extra)]
    return ev


def boot(d, extra):
    ev = events(extra)
    open(os.path.join(d, "log.bin"), "wb").write(tb.build(["sha256"], ev))
    with open(os.path.join(d, "extends.txt"), "w") as f:
        for pcr, _, data in ev:
            f.write("%d:sha256=%s\n" % (pcr, tb.digest("sha256", data).hex()))
    vals = tb.replay(["sha256"], ev)["sha256"]
    with open(os.path.join(d, "pcrs.txt"), "w") as f:
        for pcr in sorted(vals, key=int):
            f.write("sha256:%s=%s\n" % (pcr, vals[pcr]))


def read_pcrs(path):
    out = {}
    for line in open(path):
        bank, rest = line.strip().split(":", 1)
        pcr, val = rest.split("=")
        out.setdefault(bank, {})[pcr] = val
    return out


def pred(out, pcrs, args):
    doc = {"schema": "mshim-predict/1", "mshim_version": "test", "baseline": "log.bin", "point": "boot",
           "pcrs": read_pcrs(pcrs), "changed": [9], "unpredictable": {}}
    while args:
        a = args.pop(0)
        if a == "--unpredictable":
            n = args.pop(0)
            doc["unpredictable"][n] = "a reason"
            doc["pcrs"]["sha256"].pop(n, None)
        elif a == "--omit":
            doc["pcrs"]["sha256"].pop(args.pop(0))
        elif a == "--refused":
            doc["refused"] = "dbx revokes the kernel"
        elif a == "--point":
            v = args.pop(0)
            if v == "none":
                del doc["point"]
            else:
                doc["point"] = v
    json.dump(doc, open(out, "w"), indent=2)


def approval_values(path):
    kv = dict(line.rstrip("\n").split(" ", 1) for line in open(path) if " " in line)
    pcrs = [int(p) for p in kv["pcrs"].split(",")]
    vals = bytes.fromhex(kv["values"])
    for i, p in enumerate(pcrs):
        print("sha256:%d=%s" % (p, vals[32 * i:32 * i + 32].hex()))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "boot":
        boot(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    elif cmd == "pred":
        pred(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif cmd == "approval-values":
        approval_values(sys.argv[2])
