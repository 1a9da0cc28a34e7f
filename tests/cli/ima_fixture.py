#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""IMA measurement lists for the tests and the benchmark, built here with
hashlib from the kernel's documented layout (never by mshim):
Documentation/security/IMA-templates.rst and ima_fs.c's
ima_measurements_show: per entry u32 PCR, the SHA-1 template digest (zeros
for a violation), u32 name length, name, u32 data length, data (per field:
u32 length, bytes). ima-ng: d-ng ("ALG:" NUL digest) and n-ng (path, NUL);
ima-sig adds sig. A bank extends the hash of the data (all ones for a
violation).

  ima_fixture.py make OUT.bin [--entries N] [--sig] [--violation K]
                 [--pcrs0-9 FILE] [--ascii OUT.txt] [--allow OUT.allow]
                 [--expect OUT.json] [--extends OUT.txt]
                 [--file-alg ALG] [--contents M]
      a list: boot_aggregate (over FILE's sha256 PCRs 0-9, "i=hex" lines,
      else zeros), then N files /usr/bin/fNNNNNN with SHA-256 contents
      (--file-alg: ALG's, e.g. sha1 or sha512; --contents M: file k holds
      what file k mod M does, so M digests are shared by N paths);
      entry K (1-based) a violation. --ascii: the same list as
      ascii_runtime_measurements prints it (Keylime's input);
      --allow: every file's "HEX  PATH"; --expect: {"sha1": hex,
      "sha256": hex} of PCR 10 after the list; --extends: tpm2_pcrextend
      arguments, one entry a line, in the four banks a kernel extends on
      a TPM with sha1, sha256, sha384 and sha512 active (swtpm's default).
"""
import hashlib
import json
import struct
import sys


def field(b):
    return struct.pack("<I", len(b)) + b


def dng(alg, digest):
    return field(alg.encode() + b":\0" + digest)


def entry(name, data, violation=False):
    t = bytes(20) if violation else hashlib.sha1(data).digest()
    return struct.pack("<I", 10) + t + field(name.encode()) + field(data), t


BANKS = ("sha1", "sha256", "sha384", "sha512")


def extend_digests(data, violation):
    """What the kernel extends into each bank: the hash of the data, all ones for a violation."""
    return {b: b"\xff" * hashlib.new(b).digest_size if violation else hashlib.new(b, data).digest() for b in BANKS}


def boot_aggregate(path):
    pcrs = [bytes(32)] * 10
    if path:
        for line in open(path):
            i, v = line.strip().split("=")
            pcrs[int(i)] = bytes.fromhex(v)
    # ima_calc_boot_aggregate: PCRs 0-7, then 8-9 for a non-SHA-1 bank.
    return hashlib.sha256(b"".join(pcrs)).digest()


def make(argv):
    out = argv[0]
    opts = {"--entries": "3", "--violation": "0"}
    flags = set()
    i = 1
    while i < len(argv):
        if argv[i] == "--sig":
            flags.add("sig")
            i += 1
        else:
            opts[argv[i]] = argv[i + 1]
            i += 2
    n, viol = int(opts["--entries"]), int(opts["--violation"])
    file_alg, contents = opts.get("--file-alg", "sha256"), int(opts.get("--contents", "0"))
    tmpl = "ima-sig" if "sig" in flags else "ima-ng"
    pcr = {"sha1": bytes(20), "sha256": bytes(32)}
    blob, ascii_lines, allow, extends = [], [], [], []

    def add(path, digest, k, alg="sha256"):
        data = dng(alg, digest) + field(path.encode() + b"\0")
        if tmpl == "ima-sig":
            data += field(b"")
        raw, t = entry(tmpl, data, violation=(k == viol))
        blob.append(raw)
        ds = extend_digests(data, k == viol)
        for bank in pcr:
            pcr[bank] = hashlib.new(bank, pcr[bank] + ds[bank]).digest()
        extends.append("10:" + ",".join("%s=%s" % (b, ds[b].hex()) for b in BANKS))
        ascii_lines.append("10 %s %s %s:%s %s%s" % (t.hex(), tmpl, alg, digest.hex(), path,
                                                         " " if tmpl == "ima-sig" else ""))

    add("boot_aggregate", boot_aggregate(opts.get("--pcrs0-9")), 1)
    for k in range(1, n + 1):
        path = "/usr/bin/f%06d" % k
        digest = hashlib.new(file_alg, b"file %d" % (k % contents if contents else k)).digest()
        add(path, digest, k + 1, file_alg)
        allow.append("%s  %s" % (digest.hex(), path))
    open(out, "wb").write(b"".join(blob))
    if "--ascii" in opts:
        open(opts["--ascii"], "w").write("\n".join(ascii_lines) + "\n")
    if "--allow" in opts:
        open(opts["--allow"], "w").write("\n".join(allow) + "\n")
    if "--expect" in opts:
        json.dump({k: v.hex() for k, v in pcr.items()}, open(opts["--expect"], "w"))
    if "--extends" in opts:
        open(opts["--extends"], "w").write("\n".join(extends) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "make":
        sys.exit(__doc__)
    make(sys.argv[2:])
