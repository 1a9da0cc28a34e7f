#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim boot-policy: the built-in boot policy of build/mshimx64.efi (the
# .mpolicy section, docs/CONFIG.md). Oracle: objcopy and Python read the
# section bytes and compare the rest of the file; sbsign/sbverify check a
# changed image still signs and a signed one is refused.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
EFI=${EFI:-build/mshimx64.efi}
T=$(mktemp -d)
cli_init boot-policy "$T"

expect_rc() {
        local name=$1 want=$2 pat=$3; shift 3
        "$@" >"$T/out" 2>"$T/err"; local rc=$?
        if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$T/err" "$T/out"; }; then pass "$name"
        else fail "$name (exit $rc, want $want; stderr: $(head -c 300 "$T/err"))"; fi
}
[ -f "$EFI" ] || { fail "missing $EFI: run make"; exit 1; }

# section FILE: the .mpolicy bytes, as objcopy extracts them.
section() { objcopy -O binary --only-section=.mpolicy "$1" "$T/sec" && cat "$T/sec"; }

section "$EFI" > "$T/default.sec"
if [ "$(wc -c < "$T/default.sec")" = 512 ] &&
   [ "$(tr -d '\000' < "$T/default.sec")" = "$(cat efi/boot-policy.conf)" ]; then
        pass "the built image carries efi/boot-policy.conf, NUL-padded to 512 bytes"
else
        fail "the built image carries efi/boot-policy.conf, NUL-padded to 512 bytes"
fi
expect_rc "show the default policy" 0 "" "$MSHIM" boot-policy "$EFI"
if diff -q "$T/out" efi/boot-policy.conf >/dev/null; then pass "show prints the canonical text"
else fail "show prints the canonical text ($(cat "$T/out"))"; fi

expect_rc "--set tpm-required=yes" 0 "" "$MSHIM" boot-policy --set tpm-required=yes -o "$T/req.efi" "$EFI"
python3 - "$EFI" "$T/req.efi" <<'PY' && pass "--set changes the section's bytes and the PE CheckSum (recomputed) and nothing else" || fail "--set changes the section's bytes and nothing else"
import struct, sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
pe = struct.unpack_from("<I", a, 0x3c)[0]
nsec, optsz = struct.unpack_from("<HxxxxxxxxxxxxH", a, pe + 6)
for i in range(nsec):
    o = pe + 24 + optsz + 40 * i
    if a[o:o + 8].rstrip(b"\0") == b".mpolicy":
        raw = struct.unpack_from("<I", a, o + 20)[0]
        break
else:
    sys.exit(1)
want = b"tpm-required yes\ntpm-failure refuse\ntotp no\n".ljust(512, b"\0")
ck = pe + 24 + 64                               # optional header CheckSum
def checksum(d):                                # PE Format, "CheckSum"
    d = d[:ck] + b"\0\0\0\0" + d[ck + 4:]
    d += b"\0" * (len(d) & 1)
    s = 0
    for (w,) in struct.iter_unpack("<H", d):
        s += w
        s = (s & 0xffff) + (s >> 16)
    return (s & 0xffff) + len(a)
same = a[:ck] == b[:ck] and a[ck + 4:raw] == b[ck + 4:raw] and a[raw + 512:] == b[raw + 512:]
sys.exit(0 if len(a) == len(b) and b[raw:raw + 512] == want and same and
         struct.unpack_from("<I", b, ck)[0] == checksum(b) else 1)
PY
expect_rc "the changed image shows the new policy" 0 "" "$MSHIM" boot-policy "$T/req.efi"
grep -qx 'tpm-required yes' "$T/out" && pass "shown: tpm-required yes" || fail "shown: tpm-required yes"

expect_rc "--set both keys" 0 "" "$MSHIM" boot-policy --set tpm-failure=boot --set tpm-required=no -o "$T/both.efi" "$T/req.efi"
[ "$(section "$T/both.efi" | tr -d '\000')" = "$(printf 'tpm-required no\ntpm-failure boot\ntotp no')" ] &&
        pass "both keys written" || fail "both keys written"

# The TOTP floor (issue 20, finding 7): each of the three words, written
# as the section's text (objcopy), the other keys kept.
for m in require show no; do
        expect_rc "--set totp=$m" 0 "" "$MSHIM" boot-policy --set totp=$m -o "$T/totp-$m.efi" "$T/both.efi"
        [ "$(section "$T/totp-$m.efi" | tr -d '\000')" = "$(printf 'tpm-required no\ntpm-failure boot\ntotp %s' $m)" ] &&
                pass "totp $m written, the other keys kept" || fail "totp $m written, the other keys kept"
done
expect_rc "the TOTP floor is shown" 0 "" "$MSHIM" boot-policy "$T/totp-require.efi"
grep -qx 'totp require' "$T/out" && pass "shown: totp require" || fail "shown: totp require"
expect_rc "totp takes only no|show|require" 2 "invalid value" "$MSHIM" boot-policy --set totp=yes -o "$T/x.efi" "$EFI"
expect_rc "totp set twice" 2 "given twice" "$MSHIM" boot-policy --set totp=show --set totp=no -o "$T/x.efi" "$EFI"

# Bad input: clear message, exit 2, nothing written or overwritten.
cp "$T/req.efi" "$T/keep.efi"
expect_rc "OUT that exists is never overwritten" 2 "never overwritten" \
        "$MSHIM" boot-policy --set tpm-required=no -o "$T/keep.efi" "$EFI"
cmp -s "$T/keep.efi" "$T/req.efi" && pass "existing OUT unchanged" || fail "existing OUT unchanged"
expect_rc "the input as OUT is refused" 2 "never overwritten" \
        "$MSHIM" boot-policy --set tpm-required=no -o "$T/req.efi" "$T/req.efi"
expect_rc "invalid value" 2 "invalid value" "$MSHIM" boot-policy --set tpm-required=maybe -o "$T/x.efi" "$EFI"
expect_rc "loader.conf synonyms are not accepted" 2 "invalid value" "$MSHIM" boot-policy --set tpm-required=true -o "$T/x.efi" "$EFI"
expect_rc "unknown key" 2 "expected tpm-required" "$MSHIM" boot-policy --set tpm-requird=yes -o "$T/x.efi" "$EFI"
expect_rc "a key set twice" 2 "given twice" "$MSHIM" boot-policy --set tpm-required=yes --set tpm-required=no -o "$T/x.efi" "$EFI"
expect_rc "--set without -o" 2 "see 'mshim boot-policy --help'" "$MSHIM" boot-policy --set tpm-required=yes "$EFI"
[ ! -e "$T/x.efi" ] && pass "nothing written on bad input" || fail "nothing written on bad input"
printf 'not a PE\n' > "$T/notpe"
expect_rc "not a PE image" 2 "not a PE image" "$MSHIM" boot-policy "$T/notpe"
expect_rc "a PE without the section" 2 "no 512-byte .mpolicy section" "$MSHIM" boot-policy build/kernel/vmlinuz
expect_rc "missing file" 2 "" "$MSHIM" boot-policy "$T/missing.efi"
# An invalid policy in the image (the loader refuses to boot with it).
python3 - "$T/req.efi" "$T/bad.efi" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
i = d.find(b"tpm-required yes\ntpm-failure refuse\n")
d[i:i + 16] = b"tpm-required yez"
open(sys.argv[2], "wb").write(d)
PY
expect_rc "an invalid built-in policy is reported" 2 "invalid boot policy" "$MSHIM" boot-policy "$T/bad.efi"

# Signing covers the policy: set before signing; a signed image is refused.
openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mshim policy test/" -days 1 \
        -keyout "$T/k.pem" -out "$T/c.pem" 2>/dev/null
if sbsign --key "$T/k.pem" --cert "$T/c.pem" --output "$T/signed.efi" "$T/both.efi" 2>/dev/null &&
   sbverify --cert "$T/c.pem" "$T/signed.efi" >/dev/null 2>&1; then
        pass "an image with a changed policy signs and verifies"
else
        fail "an image with a changed policy signs and verifies"
fi
expect_rc "a signed image is refused by --set" 2 "is signed; set the boot policy before signing" \
        "$MSHIM" boot-policy --set tpm-required=yes -o "$T/y.efi" "$T/signed.efi"
expect_rc "--help" 0 "" "$MSHIM" boot-policy --help
grep -q 'tpm-failure refuse|boot' "$T/out" && tr '\n' ' ' < "$T/out" | grep -q 'totp no|show|require' &&
        pass "--help documents the keys" || fail "--help documents the keys"
