#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Write a large crypto-agile TCG event log for scripts/bench.sh.

Usage: mklog.py SOURCE.bin N OUT.bin

Keeps SOURCE's first record (the TCG_PCR_EVENT carrying "Spec ID Event03")
and then repeats SOURCE's other records, in order, cyclically, until OUT has
N records including the header. Deterministic: same input, same output.
"""
import struct
import sys


def records(log):
    """Split a crypto-agile log into (header, [record bytes, ...])."""
    # TCG_PCR_EVENT: pcr u32, type u32, sha1[20], size u32, data.
    if len(log) < 32:
        sys.exit("mklog: source too short")
    hsize = struct.unpack_from("<I", log, 28)[0]
    hdr = log[: 32 + hsize]
    spec = log[32 : 32 + hsize]
    if not spec.startswith(b"Spec ID Event03\0"):
        sys.exit("mklog: source is not a crypto-agile log")
    n_algs = struct.unpack_from("<I", spec, 24)[0]
    sizes = {}
    for i in range(n_algs):
        alg, size = struct.unpack_from("<HH", spec, 28 + 4 * i)
        sizes[alg] = size
    out, off = [], len(hdr)
    while off < len(log):
        start = off
        _pcr, _type, count = struct.unpack_from("<III", log, off)
        off += 12
        for _ in range(count):
            alg = struct.unpack_from("<H", log, off)[0]
            off += 2 + sizes[alg]
        size = struct.unpack_from("<I", log, off)[0]
        off += 4 + size
        if off > len(log):
            sys.exit("mklog: source truncated at offset %d" % start)
        out.append(log[start:off])
    if not out:
        sys.exit("mklog: source has no records after the header")
    return hdr, out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, n, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(src, "rb") as f:
        hdr, recs = records(f.read())
    with open(dst, "wb") as f:
        f.write(hdr)
        for i in range(n - 1):
            f.write(recs[i % len(recs)])


if __name__ == "__main__":
    main()
