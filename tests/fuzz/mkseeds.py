#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Write small hand-made seed inputs for the fuzz targets (docs/FUZZING.md).

  tests/fuzz/mkseeds.py pe DIR            minimal PE32+/PE32 images
  tests/fuzz/mkseeds.py varstore IN.fd DIR  a shrunken copy of an OVMF
                                          variable store (same records, a
                                          smaller FV with a little free space)

Written for this project from the PE Format and PI/EDK2 layouts that
include/mb/pe.h and include/mb/varstore.h describe.
"""
import struct
import sys

SBAT = (b"sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"
        b"mshim,1,mshim,mshim,0.1.0,https://mshim.invalid\n")


def align(v, a):
    return (v + a - 1) // a * a


def pe(sections, pe32=False, cert=None, ndirs=16, extra=b""):
    """sections: list of (name, data). File alignment 0x200, section 0x1000."""
    falign, salign = 0x200, 0x1000
    opt_fixed = 96 if pe32 else 112
    opt_size = opt_fixed + 8 * ndirs
    lfanew = 0x40
    sect_off = lfanew + 4 + 20 + opt_size
    hdr_size = align(sect_off + 40 * len(sections), falign)
    raw, table, foff, rva = b"", b"", hdr_size, salign
    for name, data in sections:
        rsz = align(len(data), falign)
        table += struct.pack("<8sIIIIIIHHI", name, len(data), rva, rsz, foff, 0, 0, 0, 0, 0x40000040)
        raw += data.ljust(rsz, b"\0")
        foff += rsz
        rva += align(len(data), salign)
    body = raw + extra
    cert_blob = b""
    if cert is not None:
        # WIN_CERTIFICATE: dwLength, wRevision 0x0200, wCertificateType 2.
        ent = struct.pack("<IHH", 8 + len(cert), 0x0200, 0x0002) + cert
        cert_blob = ent.ljust(align(len(ent), 8), b"\0")
    dirs = [(0, 0)] * ndirs
    if cert is not None and ndirs > 4:
        dirs[4] = (hdr_size + len(body), len(cert_blob))
    if pe32:
        opt = struct.pack("<HBBIIIIIIIIIHHHHHHIIIIHHIIIIII", 0x10b, 14, 0, 0, 0, 0, 0x1000, 0x1000, 0,
                          0, salign, falign, 0, 0, 0, 0, 0, 0, 0, rva, hdr_size, 0, 10, 0,
                          0x100000, 0x1000, 0x100000, 0x1000, 0, ndirs)
    else:
        opt = struct.pack("<HBBIIIIIQIIHHHHHHIIIIHHQQQQII", 0x20b, 14, 0, 0, 0, 0, 0x1000, 0x1000,
                          0, salign, falign, 0, 0, 0, 0, 0, 0, 0, rva, hdr_size, 0, 10, 0,
                          0x100000, 0x1000, 0x100000, 0x1000, 0, ndirs)
    assert len(opt) == opt_fixed, len(opt)
    opt += b"".join(struct.pack("<II", a, s) for a, s in dirs)
    coff = struct.pack("<HHIIIHH", 0x014c if pe32 else 0x8664, len(sections), 0, 0, 0, opt_size, 0x0206)
    dos = bytearray(lfanew)
    dos[0:2] = b"MZ"
    dos[0x3c:0x40] = struct.pack("<I", lfanew)
    hdr = (bytes(dos) + b"PE\0\0" + coff + opt + table).ljust(hdr_size, b"\0")
    return hdr + body + cert_blob


def write_pe(d):
    text = bytes([0x48, 0x31, 0xc0, 0xc3]) * 16
    seeds = {
        "min-pe32plus-sbat.efi": pe([(b".text", text), (b".sbat", SBAT)]),
        "min-pe32plus-signed.efi": pe([(b".text", text), (b".sbat", SBAT)],
                                      cert=b"\x30\x82\x00\x04\x06\x02\x2a\x03" + b"\xa5" * 24),
        "min-pe32-nodirs.efi": pe([(b".text", text)], pe32=True, ndirs=4),
        "min-pe32plus-extra.efi": pe([(b".data", b"\1" * 100), (b".text", text), (b".sbatlevel",
                                      struct.pack("<III", 0, 8, 26) + b"sbat,1,2021030218\n\0"
                                      + b"sbat,1,2023012900\nshim,2\n\0")],
                                     extra=b"trailing data after the sections"),
    }
    for name, data in seeds.items():
        with open(f"{d}/{name}", "wb") as f:
            f.write(data)


def fv_checksum(hdr):
    s = sum(struct.unpack(f"<{len(hdr) // 2}H", hdr)) & 0xffff
    return (0x10000 - s) & 0xffff


def write_varstore(src, d, free=2048):
    img = bytearray(open(src, "rb").read())
    hl = struct.unpack_from("<H", img, 48)[0]
    off = align(hl + 28, 4)
    while struct.unpack_from("<H", img, off)[0] == 0x55AA:
        ns, ds = struct.unpack_from("<II", img, off + 36)
        off = align(off + 60 + ns + ds, 4)
    store = align(off - hl + free, 4)
    fv_len = align(hl + store, 0x1000)
    store = fv_len - hl
    out = bytearray(img[:hl + store])
    # the erased free space after the records
    out[off:] = b"\xff" * (len(out) - off)
    struct.pack_into("<Q", out, 32, fv_len)
    struct.pack_into("<II", out, 56, fv_len // 0x1000, 0x1000)
    struct.pack_into("<II", out, 64, 0, 0)
    struct.pack_into("<I", out, hl + 16, store)
    struct.pack_into("<H", out, 50, 0)
    struct.pack_into("<H", out, 50, fv_checksum(bytes(out[:hl])))
    name = src.rsplit("/", 1)[-1].replace(".fd", "") + "-shrunk.fd"
    with open(f"{d}/{name}", "wb") as f:
        f.write(out)


if __name__ == "__main__":
    if sys.argv[1] == "pe":
        write_pe(sys.argv[2])
    elif sys.argv[1] == "varstore":
        write_varstore(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
