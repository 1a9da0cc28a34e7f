#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# build/mshimx64.efi as signed-loader reviewers read it: NX_COMPAT, W^X,
# page-aligned sections, no COFF symbol table, start-up relocations only in
# writable data (docs/REPRODUCIBLE.md, scripts/efi-finish.py). Oracles:
# tests/cli/pe_layout.py (its own PE reader, checked against broken copies),
# objdump -p/-h/-t (binutils), sbsign's warnings; and the build step must
# refuse images that would make the NX_COMPAT claim false.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
IMG=${MSHIM_EFI:-build/mshimx64.efi}
SO=${IMG%.efi}.so
T=$(mktemp -d)
cli_init efi-image "$T"


for f in "$IMG" "$SO"; do
        [ -f "$f" ] || { fail "missing $f: run make"; exit 1; }
done
cli_need python3 objdump objcopy sbsign openssl

# ---- our own reader, and proof that it sees each kind of breakage ----------
python3 tests/cli/pe_layout.py "$IMG"
python3 tests/cli/pe_layout.py --self-test "$IMG"

# ---- binutils' reading of the same headers ----------------------------------
objdump -p "$IMG" > "$T/p"
objdump -h "$IMG" > "$T/h"
objdump -t "$IMG" > "$T/t"
dllch=$(awk '$1 == "DllCharacteristics" { print $2 }' "$T/p")
check "objdump: DllCharacteristics $dllch has NX_COMPAT" test $(( 0x${dllch:-0} & 0x100 )) = 256
check "objdump: SectionAlignment 00001000" grep -Eq '^SectionAlignment[[:space:]]+00001000$' "$T/p"
# objdump -h: a name line (index, name, size, VMA, ...) then a flags line;
# CODE without READONLY is a writable, executable section.
awk '/^ *[0-9]+ / { name = $2; vma = $4; next }
     name != "" { print name, vma, ($0 ~ /CODE/ && $0 !~ /READONLY/) ? "WX" : "ok"; name = "" }' \
        "$T/h" > "$T/sections"
check "objdump: sections listed" test -s "$T/sections"
check "objdump: no section is CODE and writable" bash -c "! grep -q ' WX\$' '$T/sections'"
unaligned=
while read -r name vma _; do
        (( 0x$vma % 4096 )) && unaligned="$unaligned $name@$vma"
done < "$T/sections"
check "objdump: every section VMA page-aligned${unaligned:+ (not:$unaligned)}" test -z "$unaligned"
check "objdump: .sbat and .reloc kept" bash -c "grep -q '^\.sbat ' '$T/sections' && grep -q '^\.reloc ' '$T/sections'"
check "objdump: no symbols" grep -qx 'no symbols' "$T/t"
# Constants are mapped read-only (efi/mshim.lds): a .rodata section, not
# writable, holding the loader's strings (its UTF-16 messages among them).
check "objdump: .rodata kept, read-only" bash -c "grep -A1 ' \.rodata ' '$T/h' | grep -q READONLY"
objcopy -O binary --only-section=.rodata "$IMG" "$T/rodata" 2>/dev/null
check ".rodata holds the loader's messages" bash -c "iconv -f UTF-16LE -t UTF-8 '$T/rodata' 2>/dev/null | grep -aq 'another initrd provider is installed'"

# ---- sbsign signs it without a warning --------------------------------------
openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mshim efi-image test/" -days 1 \
        -keyout "$T/k.pem" -out "$T/c.pem" 2>/dev/null || { fail "openssl req"; exit 1; }
sbsign --key "$T/k.pem" --cert "$T/c.pem" --output "$T/signed.efi" "$IMG" > "$T/sbsign" 2>&1
rc=$?
check "sbsign signs it (exit $rc)" test "$rc" = 0
check "sbsign prints no warning ($(grep -i warn "$T/sbsign" | head -1))" bash -c "! grep -qi warn '$T/sbsign'"

# ---- scripts/efi-finish.py refuses what it must not mark NX_COMPAT ----------
# expect_refused NAME IMAGE PATTERN: exit 1, the reason, the file untouched.
expect_refused() {
        local name=$1 img=$2 pat=$3
        cp "$img" "$T/before"
        python3 scripts/efi-finish.py "$img" > "$T/out" 2>&1; local rc=$?
        if [ "$rc" = 1 ] && grep -q -- "$pat" "$T/out" && cmp -s "$img" "$T/before"; then pass "$name"
        else fail "$name (exit $rc; $(head -c 300 "$T/out"))"; fi
}
objcopy -j .text -j .data -j .dynamic -j .rela -j .reloc -j .sbat --target efi-app-x86_64 \
        --subsystem=10 "$SO" "$T/symtab.efi"
expect_refused "efi-finish refuses an image with a symbol table" "$T/symtab.efi" "symbol table"
objcopy --set-section-flags .data=alloc,load,contents,code "$IMG" "$T/wx.efi"
expect_refused "efi-finish refuses a writable, executable .data" "$T/wx.efi" "writable and executable"
objcopy --strip-all --section-alignment 512 -j .text -j .data -j .dynamic -j .rela -j .reloc -j .sbat \
        --target efi-app-x86_64 --subsystem=10 "$SO" "$T/align.efi"
expect_refused "efi-finish refuses 512-byte SectionAlignment" "$T/align.efi" "SectionAlignment"
# The image with its .data made read-only in the section table: gnu-efi's
# _relocate would then write the GOT on a read-only page.
cp "$IMG" "$T/rodata.efi"
python3 - "$T/rodata.efi" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
pe = struct.unpack_from("<I", b, 0x3C)[0]
n, opt = struct.unpack_from("<H", b, pe + 6)[0], struct.unpack_from("<H", b, pe + 20)[0]
for i in range(n):
    h = pe + 24 + opt + 40 * i
    if b[h:h + 8].rstrip(b"\0") == b".data":
        struct.pack_into("<I", b, h + 36, struct.unpack_from("<I", b, h + 36)[0] & ~0x80000000)
open(p, "wb").write(b)
PY
expect_refused "efi-finish refuses a start-up relocation into a read-only section" "$T/rodata.efi" "start-up relocation"

# ---- bulk copies go through the firmware's CopyMem (efi/util.c) -------------
# gnu-efi's CopyMem copies a byte at a time; the initrd LoadFile2 hands out
# (tens of MiB) and file reads must not use it. The initrd's bytes arriving
# intact is test_measured_boot.sh's (the stub measures what it received).
OBJ=${IMG%/*}/efi/efi
for o in initrd file; do
        [ -f "$OBJ/$o.o" ] || { fail "missing $OBJ/$o.o: run make"; continue; }
        check "$o.o does not call gnu-efi's CopyMem" bash -c "! nm '$OBJ/$o.o' | grep -qE ' U (CopyMem|RtCopyMem|memcpy)\$'"
done
check "initrd.o copies with mshim_copy" bash -c "nm '$OBJ/initrd.o' | grep -q ' U mshim_copy\$'"
objdump -d --no-show-raw-insn --disassemble=mshim_copy "$OBJ/util.o" > "$T/copy" 2>&1
# UEFI 2.10, 4.4 EFI_BOOT_SERVICES: after the 24-byte table header, CopyMem
# is the 42nd function pointer: offset 24 + 41 * 8 = 0x160.
check "mshim_copy calls BS->CopyMem (table offset 0x160), no byte loop" \
        bash -c "grep -qE '(call|jmp) +\*0x160\(%r' '$T/copy' && ! grep -qE 'CopyMem|memcpy|movzbl|movb' '$T/copy'"
