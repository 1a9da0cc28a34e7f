#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Last build step of an EFI image made by objcopy (Makefile: EFI_OBJCOPY).

    efi-finish.py IMAGE     (rewritten in place)

objcopy cannot set the PE DllCharacteristics, so this step:

- sets IMAGE_DLLCHARACTERISTICS_NX_COMPAT, after checking that the image
  deserves it: no section both writable and executable, SectionAlignment and
  every section's VirtualAddress a multiple of 4 KiB, so firmware can map
  code read-only + executable and data writable + non-executable page by
  page (the "UEFI CA memory mitigation requirements" shim-review applies);
- sets TimeDateStamp to 0: objcopy from Debian's binutils writes 0, other
  builds of binutils write the build time; an EFI image has no use for it
  and a fixed value keeps builds reproducible (docs/REPRODUCIBLE.md);
- recomputes the optional header's CheckSum over the result.

It refuses (exit 1, image left as it was) an image with a COFF symbol table
(objcopy --strip-all removes it; sbsign warns about one), a layout that
would make the NX_COMPAT claim false, or a start-up relocation (gnu-efi's
_relocate applies the ELF .rela entries itself, before efi_main) whose
target is not in a writable section: it would fault on a read-only page
(.rodata, .text) once the firmware maps pages by section. Layout: PE/COFF specification
(Microsoft, "PE Format"), sections "COFF File Header", "Optional Header
Windows-Specific Fields", "Section Table".
"""
import struct
import sys

PAGE = 4096
NX_COMPAT = 0x0100
SCN_MEM_EXECUTE = 0x20000000
SCN_MEM_WRITE = 0x80000000
ELF64_RELA = 24          # r_offset, r_info, r_addend (System V ABI, x86-64)
PE32PLUS = 0x20B


def die(path, msg):
    sys.exit(f"efi-finish: {path}: {msg}")


def u16(b, off):
    return struct.unpack_from("<H", b, off)[0]


def u32(b, off):
    return struct.unpack_from("<I", b, off)[0]


def pe_checksum(img, cksum_off):
    """The PE CheckSum: 16-bit one's-complement-style sum of the file with
    the CheckSum field taken as zero, carries folded, plus the file size."""
    data = bytes(img[:cksum_off]) + b"\0\0\0\0" + bytes(img[cksum_off + 4:])
    if len(data) % 2:
        data += b"\0"
    s = 0
    for (w,) in struct.iter_unpack("<H", data):
        s += w
        s = (s & 0xFFFF) + (s >> 16)
    return (s + len(img)) & 0xFFFFFFFF


def sections(img, sect, nsect):
    """(name, VirtualAddress, VirtualSize, PointerToRawData, SizeOfRawData,
    Characteristics) of each section header."""
    for i in range(nsect):
        h = sect + 40 * i
        name = bytes(img[h:h + 8]).rstrip(b"\0").decode("ascii", "replace")
        vsize, va, rawsize, raw = struct.unpack_from("<IIII", img, h + 8)
        yield name, va, vsize, raw, rawsize, u32(img, h + 36)


def check_relocations(path, img, sect, nsect):
    """Every .rela entry's r_offset (an RVA: ImageBase is 0) must fall in a
    writable section."""
    secs = list(sections(img, sect, nsect))
    writable = [(va, va + vs) for _, va, vs, _, _, fl in secs if fl & SCN_MEM_WRITE]
    for name, _, vsize, raw, rawsize, _ in secs:
        if name != ".rela" and not name.startswith(".rela."):
            continue
        n = min(vsize, rawsize)
        if raw + n > len(img):
            die(path, f"section {name} past the end of the file")
        for off in range(raw, raw + n - n % ELF64_RELA, ELF64_RELA):
            target = struct.unpack_from("<Q", img, off)[0]
            if not any(lo <= target and target + 8 <= hi for lo, hi in writable):
                die(path, f"a start-up relocation writes {target:#x}, outside every writable section")


def finish(path):
    with open(path, "rb") as f:
        img = bytearray(f.read())
    if len(img) < 0x40 or img[:2] != b"MZ":
        die(path, "not a PE image (no MZ header)")
    pe = u32(img, 0x3C)
    coff = pe + 4
    if len(img) < coff + 20 or img[pe:coff] != b"PE\0\0":
        die(path, "not a PE image (no PE signature)")
    nsect, _, symptr, nsyms, opt_size = struct.unpack_from("<HIIIH", img, coff + 2)
    opt = coff + 20
    if opt_size < 72 or len(img) < opt + opt_size or u16(img, opt) != PE32PLUS:
        die(path, "not a PE32+ image")
    if symptr or nsyms:
        die(path, f"has a COFF symbol table ({nsyms} symbols): objcopy --strip-all")
    if u32(img, opt + 32) != PAGE:
        die(path, f"SectionAlignment is {u32(img, opt + 32):#x}, not {PAGE:#x}")
    sect = opt + opt_size
    if len(img) < sect + 40 * nsect:
        die(path, "section table past the end of the file")
    for i in range(nsect):
        h = sect + 40 * i
        name = bytes(img[h:h + 8]).rstrip(b"\0").decode("ascii", "replace")
        va, flags = u32(img, h + 12), u32(img, h + 36)
        if va % PAGE:
            die(path, f"section {name} at {va:#x} is not page-aligned")
        if flags & SCN_MEM_WRITE and flags & SCN_MEM_EXECUTE:
            die(path, f"section {name} is writable and executable")
    check_relocations(path, img, sect, nsect)
    struct.pack_into("<I", img, coff + 4, 0)            # TimeDateStamp
    dllch = opt + 70
    struct.pack_into("<H", img, dllch, u16(img, dllch) | NX_COMPAT)
    struct.pack_into("<I", img, opt + 64, pe_checksum(img, opt + 64))
    with open(path, "wb") as f:
        f.write(img)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: efi-finish.py IMAGE")
    finish(sys.argv[1])
