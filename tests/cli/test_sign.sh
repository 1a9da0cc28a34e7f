#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim sign / pe-hash / sbat. Oracles: sbverify (sbsigntool) for the
# signatures, pesign -h for the Authenticode digests, objcopy for the .sbat
# bytes. Images: Debian's shim and GRUB (unpacked by scripts/fetch-efi.sh),
# the test kernel and build/mshimx64.efi when present.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
# Debian's images, unpacked by scripts/fetch-efi.sh (never installed).
EFIROOT=${MB_EFIROOT:-build/debian-efi}
SHIM=$EFIROOT/usr/lib/shim/shimx64.efi.signed
GRUB=$EFIROOT/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
FB=$EFIROOT/usr/lib/shim/fbx64.efi
T=$(mktemp -d)
cli_init sign "$T"


for f in "$SHIM" "$GRUB" "$FB"; do
        [ -f "$f" ] || { fail "missing $f: run make deps (scripts/fetch-efi.sh)"; exit 1; }
done
cli_need sbsign sbverify openssl objcopy

# Throwaway keys: two unrelated certificates.
for n in 1 2; do
        openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mshim test $n/" -days 1 \
                -keyout "$T/k$n.pem" -out "$T/c$n.pem" 2>/dev/null || { fail "openssl req"; exit 1; }
done

# ---- sign ------------------------------------------------------------------
imgs=("$FB")
[ -f build/mshimx64.efi ] && imgs+=(build/mshimx64.efi)
[ -f build/kernel/vmlinuz ] && imgs+=(build/kernel/vmlinuz)
for src in "${imgs[@]}"; do
        b=$(basename "$src")
        cp "$src" "$T/$b"
        expect_rc "sign $b" 0 "" "$MSHIM" sign --key "$T/k1.pem" --cert "$T/c1.pem" -o "$T/$b.signed" "$T/$b"
        check "sbverify accepts $b with its cert" sbverify --cert "$T/c1.pem" "$T/$b.signed" >/dev/null 2>&1
        check "sbverify rejects $b with another cert" bash -c "! sbverify --cert '$T/c2.pem' '$T/$b.signed' >/dev/null 2>&1"
        # The certificate table is not hashed, but sbsign first zero-pads the
        # image to a multiple of 8 bytes (the table is 8-byte aligned) and
        # that padding is: the signed digest is the padded image's.
        size=$(stat -c %s "$T/$b")
        cp "$T/$b" "$T/$b.padded"
        truncate -s $(( (size + 7) / 8 * 8 )) "$T/$b.padded"
        check "pe-hash of $b signed = of $b zero-padded to 8 bytes" \
                test "$("$MSHIM" pe-hash "$T/$b.padded" | cut -d' ' -f1)" = "$("$MSHIM" pe-hash "$T/$b.signed" | cut -d' ' -f1)"
done
cp "$FB" "$T/fb.efi"
expect_rc "default output IMAGE.signed" 0 "" "$MSHIM" sign --key "$T/k1.pem" --cert "$T/c1.pem" "$T/fb.efi"
check "IMAGE.signed verifies" sbverify --cert "$T/c1.pem" "$T/fb.efi.signed" >/dev/null 2>&1
expect_rc "--in-place" 0 "" "$MSHIM" sign --key "$T/k2.pem" --cert "$T/c2.pem" --in-place "$T/fb.efi"
check "--in-place result verifies" sbverify --cert "$T/c2.pem" "$T/fb.efi" >/dev/null 2>&1

# ---- sign: bad input ---------------------------------------------------------
cp "$FB" "$T/in.efi"
printf 'not a PE file\n' > "$T/text.efi"
expect_rc "not a PE" 2 "not a valid PE/COFF image" "$MSHIM" sign --key "$T/k1.pem" --cert "$T/c1.pem" "$T/text.efi"
expect_rc "missing key" 2 "cannot open .*none.pem" "$MSHIM" sign --key "$T/none.pem" --cert "$T/c1.pem" "$T/in.efi"
expect_rc "key/cert mismatch" 2 "does not belong to" "$MSHIM" sign --key "$T/k1.pem" --cert "$T/c2.pem" "$T/in.efi"
expect_rc "cert given as key" 2 "c1.pem: not a PEM or DER private key" "$MSHIM" sign --key "$T/c1.pem" --cert "$T/c1.pem" "$T/in.efi"
expect_rc "key given as cert" 2 "k1.pem: not a PEM or DER X.509 certificate" "$MSHIM" sign --key "$T/k1.pem" --cert "$T/k1.pem" "$T/in.efi"
expect_rc "unreadable image" 2 "cannot open" "$MSHIM" sign --key "$T/k1.pem" --cert "$T/c1.pem" "$T/none.efi"
expect_rc "output is input" 2 "use --in-place" "$MSHIM" sign --key "$T/k1.pem" --cert "$T/c1.pem" -o "$T/./in.efi" "$T/in.efi"
expect_rc "missing --cert" 2 "needs --key, --cert" "$MSHIM" sign --key "$T/k1.pem" "$T/in.efi"
check "failed signing leaves no output" test ! -e "$T/in.efi.signed" -a ! -e "$T/text.efi.signed"
check "failed signing leaves no temporary file" bash -c "! ls '$T' | grep -q mshim-"
check "input untouched" cmp -s "$FB" "$T/in.efi"

# ---- pe-hash ---------------------------------------------------------------
if command -v pesign >/dev/null; then
        for f in "$SHIM" "$GRUB" "$FB" build/kernel/vmlinuz build/mshimx64.efi; do
                [ -f "$f" ] || continue
                for alg in sha256 sha1; do
                        want=$(pesign -h -d "$alg" -i "$f" 2>/dev/null | awk '/^hash:/{print $2}')
                        got=$("$MSHIM" pe-hash --alg "$alg" "$f" | cut -d' ' -f1)
                        check "pe-hash $alg $(basename "$f") = pesign" test -n "$want" -a "$want" = "$got"
                done
        done
else
        fail "pesign not installed: run make deps"
fi
check "pe-hash prints HEX  FILE per image" \
        test "$("$MSHIM" pe-hash "$SHIM" "$GRUB" | awk 'length($1) == 64 {n++} END {print n}')" = 2
expect_rc "pe-hash on a text file" 2 "not a valid PE/COFF image" "$MSHIM" pe-hash "$T/text.efi"
expect_rc "pe-hash --alg md5" 2 "unsupported --alg" "$MSHIM" pe-hash --alg md5 "$SHIM"
expect_rc "pe-hash without IMAGE" 2 "at least one IMAGE" "$MSHIM" pe-hash

# ---- sbat ------------------------------------------------------------------
"$MSHIM" sbat "$SHIM" > "$T/shim.sbat.txt"; rc=$?
objcopy -O binary --only-section=.sbat "$SHIM" "$T/shim.sbat"
check "sbat on shim exits 0" test "$rc" = 0
check "sbat on shim = objcopy's section" cmp -s "$T/shim.sbat.txt" <(tr -d '\0' < "$T/shim.sbat")
check "sbat on shim names shim.debian" grep -q '^shim\.debian,1,Debian,shim,' "$T/shim.sbat.txt"
printf 'sbat,1,2024010900\nshim,4\ngrub,3\n' > "$T/pol-ok"
printf 'sbat,1,2030010100\nshim,5\n' > "$T/pol-revoke"
printf 'shim,5\n' > "$T/pol-bad"
expect_rc "sbat --policy not revoked" 0 "" "$MSHIM" sbat --policy "$T/pol-ok" "$SHIM"
expect_rc "sbat --policy revoked" 1 "revoked: shim generation 4 is below the policy's 5" \
        "$MSHIM" sbat --policy "$T/pol-revoke" "$SHIM"
expect_rc "sbat --policy malformed" 2 "malformed SbatLevel policy" "$MSHIM" sbat --policy "$T/pol-bad" "$SHIM"
# sbat_offsets FILE: file offsets of the .sbat section header and data.
sbat_offsets() {
        python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
pe = struct.unpack_from("<I", b, 0x3c)[0]
n, opt = struct.unpack_from("<H", b, pe + 6)[0], struct.unpack_from("<H", b, pe + 20)[0]
for i in range(n):
    h = pe + 24 + opt + 40 * i
    if b[h:h + 8].rstrip(b"\0") == b".sbat":
        print(h, struct.unpack_from("<I", b, h + 20)[0])
EOF
}
poke() { printf '%s' "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }
read -r hdr data < <(sbat_offsets "$GRUB")
cp "$GRUB" "$T/grub-nosbat.efi"
poke "$T/grub-nosbat.efi" $((hdr + 4)) X      # rename the section ".sbaX"
expect_rc "sbat on an image without .sbat" 2 "no .sbat section" "$MSHIM" sbat "$T/grub-nosbat.efi"
# Corrupt the format version of GRUB's .sbat in a copy ("sbat,1" -> "sbat,x").
cp "$GRUB" "$T/grub-bad.efi"
poke "$T/grub-bad.efi" $((data + 5)) x
expect_rc "sbat on a corrupted .sbat" 2 "malformed .sbat section, line 1" "$MSHIM" sbat "$T/grub-bad.efi"
check "corrupted .sbat prints nothing" test ! -s "$T/out"
expect_rc "sbat on a text file" 2 "not a valid PE/COFF image" "$MSHIM" sbat "$T/text.efi"
if [ -f build/kernel/vmlinuz ]; then
        expect_rc "sbat on Debian 12's kernel (none)" 2 "no .sbat section" "$MSHIM" sbat build/kernel/vmlinuz
fi
expect_rc "help sign" 0 "" "$MSHIM" help sign
check "sign --help documents --in-place" bash -c "'$MSHIM' sign --help | grep -q -- --in-place"
