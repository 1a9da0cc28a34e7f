#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""What signed-loader reviewers check in an EFI image's headers, read here
from the bytes with nothing of mshim's (not src/pe.c, not
scripts/efi-finish.py). Layout: Microsoft's "PE Format" specification; the
ELF dynamic relocations: System V ABI, AMD64 supplement (R_X86_64_RELATIVE).

    pe_layout.py IMAGE              one PASS:/FAIL: line per property
    pe_layout.py --self-test IMAGE  each property's check must fail on a copy
                                    of IMAGE broken in just that property

Exit status 1 when any line is FAIL.
"""
import struct
import sys

PAGE = 0x1000
NX_COMPAT = 0x0100
SCN_EXEC, SCN_WRITE = 0x20000000, 0x80000000
DIR_BASERELOC = 5
DT_NULL, DT_RELA, DT_RELASZ, DT_RELAENT = 0, 7, 8, 9
R_X86_64_RELATIVE = 8


class Pe:
    def __init__(self, b):
        self.b = b
        if b[:2] != b"MZ":
            raise ValueError("no MZ header")
        self.pe = struct.unpack_from("<I", b, 0x3C)[0]
        if b[self.pe:self.pe + 4] != b"PE\0\0":
            raise ValueError("no PE signature")
        c = self.pe + 4
        (self.machine, self.nsect, self.timestamp, self.symptr, self.nsyms,
         self.optsize, self.characteristics) = struct.unpack_from("<HHIIIHH", b, c)
        self.opt = c + 20
        if struct.unpack_from("<H", b, self.opt)[0] != 0x20B:
            raise ValueError("not PE32+")
        o = self.opt
        self.entry = struct.unpack_from("<I", b, o + 16)[0]
        self.sect_align, self.file_align = struct.unpack_from("<II", b, o + 32)
        self.size_of_image = struct.unpack_from("<I", b, o + 56)[0]
        self.cksum_off = o + 64
        self.checksum = struct.unpack_from("<I", b, o + 64)[0]
        self.dllch = struct.unpack_from("<H", b, o + 70)[0]
        ndirs = struct.unpack_from("<I", b, o + 108)[0]
        self.dirs = [struct.unpack_from("<II", b, o + 112 + 8 * i) for i in range(ndirs)]
        self.sections = []
        for i in range(self.nsect):
            h = o + self.optsize + 40 * i
            name, vsize, va, rawsize, rawptr = struct.unpack_from("<8sIIII", b, h)
            flags = struct.unpack_from("<I", b, h + 36)[0]
            self.sections.append((name.rstrip(b"\0").decode(), va, vsize, rawsize, rawptr, flags))

    def section_at(self, rva, n=1):
        for s in self.sections:
            if s[1] <= rva and rva + n <= s[1] + max(s[2], s[3]):
                return s
        return None

    def read(self, rva, n):
        s = self.section_at(rva, n)
        if s is None:
            raise ValueError(f"RVA {rva:#x}+{n} is in no section")
        off = rva - s[1]
        data = self.b[s[4] + off:s[4] + min(off + n, s[3])]
        return data + b"\0" * (n - len(data))   # past the raw data: zero-filled

    def dynamic(self):
        """DT_* of the .dynamic table gnu-efi's _relocate walks at start-up."""
        s = next((s for s in self.sections if s[0] == ".dynamic"), None)
        if s is None:
            raise ValueError("no .dynamic section")
        d = {}
        for off in range(0, s[2] - 15, 16):
            tag, val = struct.unpack("<qQ", self.read(s[1] + off, 16))
            if tag == DT_NULL:
                break
            d[tag] = val
        return d


def checksum(b, off):
    """PE CheckSum (the algorithm of Windows' CheckSumMappedFile): 16-bit
    words summed with end-around carry, the field itself as 0, + file size."""
    data = b[:off] + bytes(4) + b[off + 4:] + bytes(len(b) % 2)
    total = 0
    for i in range(0, len(data), 2):
        total += data[i] | data[i + 1] << 8
        total = (total & 0xFFFF) + (total >> 16)
    return (total + len(b)) & 0xFFFFFFFF


def properties(b):
    """[(name, ok, detail)] for image bytes b."""
    p = Pe(b)
    out = []

    def prop(name, ok, detail=""):
        out.append((name, bool(ok), detail))

    prop("DllCharacteristics has NX_COMPAT (0x0100)", p.dllch & NX_COMPAT, f"{p.dllch:#06x}")
    wx = [s[0] for s in p.sections if s[5] & SCN_WRITE and s[5] & SCN_EXEC]
    prop("no section is writable and executable", not wx, f"W+X: {wx}")
    prop("SectionAlignment is 4 KiB", p.sect_align == PAGE, f"{p.sect_align:#x}")
    bad = [f"{s[0]}@{s[1]:#x}" for s in p.sections if s[1] % PAGE]
    prop("every section's VirtualAddress is page-aligned", not bad, str(bad))
    prop("no COFF symbol table (PointerToSymbolTable 0, NumberOfSymbols 0)",
         p.symptr == 0 and p.nsyms == 0, f"{p.symptr:#x}, {p.nsyms}")
    prop("TimeDateStamp is 0 (no build clock in the image)", p.timestamp == 0, f"{p.timestamp:#x}")
    prop("CheckSum is right", p.checksum == checksum(b, p.cksum_off),
         f"{p.checksum:#x}, computed {checksum(b, p.cksum_off):#x}")
    s = p.section_at(p.entry)
    prop("the entry point is in an executable section", s and s[5] & SCN_EXEC, str(s))
    names = [s[0] for s in p.sections]
    prop(".sbat section present", ".sbat" in names, str(names))
    rva, size = p.dirs[DIR_BASERELOC] if len(p.dirs) > DIR_BASERELOC else (0, 0)
    s = p.section_at(rva, max(size, 1)) if size else None
    prop("base relocation directory inside .reloc", s and s[0] == ".reloc", f"{rva:#x}+{size:#x} in {s}")
    # gnu-efi's _relocate (crt0) writes every R_X86_64_RELATIVE target before
    # efi_main: with NX enforced, each must be in a writable section that is
    # not executable, or the loader faults before it prints anything.
    try:
        d = p.dynamic()
        ent = d.get(DT_RELAENT, 24)
        relocs = [struct.unpack_from("<QQq", p.read(d[DT_RELA], d[DT_RELASZ]), i)
                  for i in range(0, d[DT_RELASZ], ent)]
        bad = []
        for off, info, _ in relocs:
            t = p.section_at(off, 8)
            if info & 0xFFFFFFFF != R_X86_64_RELATIVE or not t or not t[5] & SCN_WRITE or t[5] & SCN_EXEC:
                bad.append(f"{off:#x} type {info & 0xFFFFFFFF} in {t and t[0]}")
        prop("every start-up relocation targets writable, non-executable data",
             relocs and not bad, f"{len(relocs)} relocations; bad: {bad[:5]}")
    except (ValueError, KeyError, struct.error) as e:
        prop("every start-up relocation targets writable, non-executable data", False, str(e))
    return out


def report(props, prefix):
    fails = 0
    for name, ok, detail in props:
        print(f"{'PASS' if ok else 'FAIL'}: {prefix}{name}" + ("" if ok else f" ({detail})"))
        fails += not ok
    return fails


def mutations(b):
    """(label, property, broken copy): each breaks one property of a good image."""
    p = Pe(b)

    def patch(off, fmt, val):
        m = bytearray(b)
        struct.pack_into(fmt, m, off, val)
        return bytes(m)

    def sect_flags(name, add=0, clear=0):
        i = [s[0] for s in p.sections].index(name)
        h = p.opt + p.optsize + 40 * i + 36
        return patch(h, "<I", (p.sections[i][5] | add) & ~clear)

    va0 = p.opt + p.optsize + 12     # first section's VirtualAddress
    text = next(s for s in p.sections if s[5] & SCN_EXEC)[0]
    return [
        ("NX_COMPAT cleared", "DllCharacteristics has NX_COMPAT", patch(p.opt + 70, "<H", p.dllch & ~NX_COMPAT)),
        (".data executable", "no section is writable and executable", sect_flags(".data", add=SCN_EXEC)),
        (f"{text} writable", "no section is writable and executable", sect_flags(text, add=SCN_WRITE)),
        ("SectionAlignment 512", "SectionAlignment is 4 KiB", patch(p.opt + 32, "<I", 0x200)),
        ("a section at +512", "every section's VirtualAddress", patch(va0, "<I", p.sections[0][1] + 0x200)),
        ("PointerToSymbolTable set", "no COFF symbol table", patch(p.pe + 12, "<I", len(b))),
        ("NumberOfSymbols set", "no COFF symbol table", patch(p.pe + 16, "<I", 3)),
        ("a build time stamped", "TimeDateStamp is 0", patch(p.pe + 8, "<I", 1700000000)),
        ("CheckSum off by one bit", "CheckSum is right", patch(p.cksum_off, "<I", p.checksum ^ 1)),
        (".data read-only", "every start-up relocation", sect_flags(".data", clear=SCN_WRITE)),
    ]


def self_test(b):
    fails = 0
    for label, what, m in mutations(b):
        hit = [ok for name, ok, _ in properties(m) if name.startswith(what)]
        ok = hit and not any(hit)
        print(f"{'PASS' if ok else 'FAIL'}: efi-image: the check catches a broken image ({label})")
        fails += not ok
    return fails


def main():
    args = sys.argv[1:]
    test = args[:1] == ["--self-test"]
    if test:
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    with open(args[0], "rb") as f:
        b = f.read()
    n = self_test(b) if test else report(properties(b), f"efi-image: {args[0]}: ")
    sys.exit(1 if n else 0)


if __name__ == "__main__":
    main()
