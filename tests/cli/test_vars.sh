#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim vars: every subcommand on Debian's OVMF stores, checked against
# OpenSSL and against the files themselves; bad input must exit 2 with a
# "mshim: " message and write nothing.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
OVMF=${MB_OVMF_DIR:-/usr/share/OVMF}
VARS=$OVMF/OVMF_VARS_4M.fd
MS=$OVMF/OVMF_VARS_4M.ms.fd
t=$(mktemp -d)
cli_init vars "$t"

# check NAME CMD...: pass when CMD succeeds.
# same_size_valid FILE: the size of OVMF_VARS_4M.fd and parseable again.
same_size_valid() { [ "$(stat -c %s "$1")" = "$(stat -c %s "$VARS")" ] && "$MSHIM" vars list "$1" >/dev/null; }

if [ ! -x "$MSHIM" ] || [ ! -f "$VARS" ] || [ ! -f "$MS" ]; then
        fail "prerequisites ($MSHIM, $VARS, $MS)"; exit 1
fi
for n in pk kek db db2 mok; do
        openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=test-$n/" -days 3650 \
                -keyout "$t/$n.key" -out "$t/$n.pem" 2>/dev/null || { fail "openssl req"; exit 1; }
done
openssl x509 -in "$t/db2.pem" -outform DER -out "$t/db2.der"

# ---- list ------------------------------------------------------------------
"$MSHIM" vars list "$MS" > "$t/ms.txt"
check "list exits 0" test $? = 0
check "list shows the Microsoft db certificates" \
        grep -q "CN=Microsoft Windows Production PCA 2011" "$t/ms.txt"
check "list counts db entries" grep -q "(2 signature lists, 2 entries)" "$t/ms.txt"
check "list names GUIDs and attributes" \
        grep -q -E "^d719b2cb-3d3a-4596-a3bc-dad00e67656f security +db +NV,BS,RT,AT +3143 bytes" "$t/ms.txt"
"$MSHIM" vars list --json "$MS" > "$t/ms.json"
check "list --json" python3 - "$t/ms.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
v = {x["name"]: x for x in j["variables"]}
assert j["schema"] == "mshim-vars/1"
assert v["PK"]["signatures"] == 1 and v["KEK"]["signatures"] == 2 and v["db"]["signatures"] == 2
assert v["dbx"]["signature_lists"][0]["type"] == "sha256"
assert v["db"]["guid_name"] == "security" and v["db"]["attributes_value"] == 0x27
assert any("UEFI CA 2011" in e["subject"] for l in v["db"]["signature_lists"] for e in l["entries"])
EOF
# Free bytes of the empty store, from its headers: the variable store ends
# at HeaderLength + Size, its first record would start 4-aligned after the
# 28-byte store header.
free=$(python3 -c 'import struct, sys; b = open(sys.argv[1], "rb").read(); hl = struct.unpack_from("<H", b, 48)[0]; print(hl + struct.unpack_from("<I", b, hl + 16)[0] - ((hl + 28 + 3) & ~3))' "$VARS")
check "list of an empty store says so" test "$("$MSHIM" vars list "$VARS")" = "(no variables, $free bytes free)"

# ---- get -------------------------------------------------------------------
"$MSHIM" vars get "$MS" PK -o "$t/pk.bin"
# The PK list holds one certificate after the 28-byte list header and the
# 16-byte owner; OpenSSL must read it as the Debian PK.
tail -c +45 "$t/pk.bin" > "$t/pk.der"
check "get PK returns the raw list (OpenSSL reads its certificate)" \
        sh -c "openssl x509 -inform DER -in '$t/pk.der' -noout -subject | grep -q 'Debian UEFI Secure Boot'"
check "get to stdout equals get -o" cmp -s "$t/pk.bin" <("$MSHIM" vars get "$MS" PK --guid global)
refuses "get with the wrong --guid" "no variable PK under security" "$MSHIM" vars get "$MS" PK --guid security
refuses "get of a missing variable" "no variable named Nope" "$MSHIM" vars get "$MS" Nope
refuses "get with a bad --guid" "is not a GUID" "$MSHIM" vars get "$MS" PK --guid 1234

# ---- enroll ----------------------------------------------------------------
cp "$VARS" "$t/in.fd"
"$MSHIM" vars enroll "$t/in.fd" --pk "$t/pk.pem" --kek "$t/kek.pem" --db "$t/db.pem" --db "$t/db2.der" \
        --dbx-hash "$(printf '%064d' 0)" --owner shim --secure-boot -o "$t/en.fd"
check "enroll exits 0" test $? = 0
check "enroll leaves its input alone" cmp -s "$t/in.fd" "$VARS"
check "enroll output: same size, parses" same_size_valid "$t/en.fd"
"$MSHIM" vars list --json "$t/en.fd" > "$t/en.json"
check "enroll wrote PK, KEK, db (2), dbx, SecureBootEnable, CustomMode" python3 - "$t/en.json" <<'EOF'
import json, sys
v = {x["name"]: x for x in json.load(open(sys.argv[1]))["variables"]}
assert v["PK"]["signatures"] == 1 and v["KEK"]["signatures"] == 1 and v["db"]["signatures"] == 2
assert v["dbx"]["signatures"] == 1
for n in "PK", "KEK", "db", "dbx":
    assert v[n]["attributes_value"] == 0x27, n
    for l in v[n]["signature_lists"]:
        for e in l["entries"]:
            assert e["owner"] == "605dab50-e046-4300-abb6-3dd810dd8b23"
assert v["PK"]["signature_lists"][0]["entries"][0]["subject"] == "/CN=test-pk"
assert v["SecureBootEnable"]["attributes_value"] == 3 and v["CustomMode"]["size"] == 1
EOF
# The db built independently: one EFI_SIGNATURE_LIST per certificate.
"$MSHIM" vars get "$t/en.fd" db -o "$t/db.bin"
openssl x509 -in "$t/db.pem" -outform DER -out "$t/db.der"
check "enroll: get db returns exactly the lists built from the certificates" \
        python3 - "$t/db.bin" "$t/db.der" "$t/db2.der" <<'EOF'
import struct, sys, uuid
x509 = uuid.UUID("a5c059a1-94e4-4aa7-87b5-ab155c2bf072").bytes_le
owner = uuid.UUID("605dab50-e046-4300-abb6-3dd810dd8b23").bytes_le
want = b""
for f in sys.argv[2:]:
    der = open(f, "rb").read()
    want += x509 + struct.pack("<III", 28 + 16 + len(der), 0, 16 + len(der)) + owner + der
assert open(sys.argv[1], "rb").read() == want
EOF
[ "$("$MSHIM" vars get "$t/en.fd" SecureBootEnable | od -An -tx1 | tr -d ' ')" = 01 ]
check "enroll --secure-boot sets SecureBootEnable 1" test $? = 0
"$MSHIM" vars enroll "$t/en.fd" --pk "$t/pk.pem" --kek "$t/kek.pem" --db "$t/db.pem" -o "$t/en2.fd"
check "re-enroll replaces (one live PK) and clears SecureBootEnable" sh -c "
        [ \$('$MSHIM' vars list '$t/en2.fd' | grep -c ' PK ') = 1 ] &&
        [ \"\$('$MSHIM' vars get '$t/en2.fd' SecureBootEnable | od -An -tx1 | tr -d ' ')\" = 00 ]"
cp "$VARS" "$t/inplace.fd"
"$MSHIM" vars enroll "$t/inplace.fd" --pk "$t/pk.pem" --kek "$t/kek.pem" --db "$t/db.pem" -o "$t/inplace.fd"
check "enroll -o FILE edits FILE in place" sh -c "'$MSHIM' vars list '$t/inplace.fd' | grep -q test-db"
check "no temporary files left behind" test -z "$(find "$t" -name '*.fd.*')"

refuses "enroll without -o" "needs -o OUT" "$MSHIM" vars enroll "$VARS" --pk "$t/pk.pem" --kek "$t/kek.pem" --db "$t/db.pem"
refuses "enroll without --pk" "needs --pk" "$MSHIM" vars enroll "$VARS" --kek "$t/kek.pem" --db "$t/db.pem" -o "$t/x.fd"
refuses "enroll with a missing certificate" "cannot open .*missing.pem" \
        "$MSHIM" vars enroll "$VARS" --pk "$t/missing.pem" --kek "$t/kek.pem" --db "$t/db.pem" -o "$t/x.fd"
printf -- '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n' > "$t/bad.pem"
refuses "enroll with a bad PEM" "bad.pem: not a PEM or DER X.509 certificate" \
        "$MSHIM" vars enroll "$VARS" --pk "$t/bad.pem" --kek "$t/kek.pem" --db "$t/db.pem" -o "$t/x.fd"
refuses "enroll with a bad --dbx-hash" "64 hex digits" \
        "$MSHIM" vars enroll "$VARS" --pk "$t/pk.pem" --kek "$t/kek.pem" --db "$t/db.pem" --dbx-hash abc -o "$t/x.fd"
check "failed commands wrote nothing" test ! -e "$t/x.fd"

# ---- add-mok ---------------------------------------------------------------
"$MSHIM" vars add-mok "$VARS" --cert "$t/mok.pem" -o "$t/mok1.fd" &&
        "$MSHIM" vars add-mok "$t/mok1.fd" --cert "$t/db.pem" -o "$t/mok2.fd"
check "add-mok twice exits 0" test $? = 0
"$MSHIM" vars list --json "$t/mok2.fd" > "$t/mok.json"
check "add-mok appends to MokList (NV,BS, shim owner)" python3 - "$t/mok.json" <<'EOF'
import json, sys
v = {x["name"]: x for x in json.load(open(sys.argv[1]))["variables"]}
m = v["MokList"]
assert m["guid"] == "605dab50-e046-4300-abb6-3dd810dd8b23" and m["attributes"] == "NV,BS"
subjects = [e["subject"] for l in m["signature_lists"] for e in l["entries"]]
assert subjects == ["/CN=test-mok", "/CN=test-db"], subjects
assert m["signature_lists"][0]["entries"][0]["owner"] == "605dab50-e046-4300-abb6-3dd810dd8b23"
EOF
refuses "add-mok of a certificate already in MokList" "already in MokList" \
        "$MSHIM" vars add-mok "$t/mok2.fd" --cert "$t/mok.pem" -o "$t/x.fd"
refuses "add-mok without --cert" "needs --cert" "$MSHIM" vars add-mok "$VARS" -o "$t/x.fd"

# ---- mok-import ------------------------------------------------------------
"$MSHIM" vars mok-import "$VARS" --cert "$t/mok.pem" --password 'pass word' -o "$t/imp.fd"
check "mok-import exits 0" test $? = 0
"$MSHIM" vars get "$t/imp.fd" MokNew -o "$t/moknew.bin"
"$MSHIM" vars get "$t/imp.fd" MokAuth -o "$t/mokauth.bin"
check "MokAuth = SHA-256(MokNew || UCS-2 password)" python3 - "$t/moknew.bin" "$t/mokauth.bin" <<'EOF'
import hashlib, sys
new, auth = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert auth == hashlib.sha256(new + "pass word".encode("utf-16-le")).digest()
EOF
check "MokNew holds the certificate (OpenSSL)" sh -c "
        tail -c +45 '$t/moknew.bin' | openssl x509 -inform DER -noout -subject | grep -q test-mok"
echo 'from stdin' | "$MSHIM" vars mok-import "$VARS" --cert "$t/mok.pem" -o "$t/imp2.fd"
check "mok-import reads the password from stdin" python3 - "$t/moknew.bin" <("$MSHIM" vars get "$t/imp2.fd" MokAuth) <<'EOF'
import hashlib, sys
new, auth = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert auth == hashlib.sha256(new + "from stdin".encode("utf-16-le")).digest()
EOF
refuses "mok-import with a non-ASCII password" "printable ASCII" \
        "$MSHIM" vars mok-import "$VARS" --cert "$t/mok.pem" --password 'café' -o "$t/x.fd"

# ---- sbat-level ------------------------------------------------------------
printf 'sbat,1,2030010100\ngrub,6\n' > "$t/pol.txt"
"$MSHIM" vars sbat-level "$VARS" --policy "$t/pol.txt" -o "$t/sbat.fd"
check "sbat-level exits 0" test $? = 0
# The record itself, read from the file without mshim (EDK2's
# AUTHENTICATED_VARIABLE_HEADER: 60 bytes, Attributes at 4, VendorGuid at
# 44, then the UTF-16 name and the data): shim's GUID, NV+BS, the text as is.
check "sbat-level: SbatLevel record = shim GUID, NV+BS, the policy bytes" python3 - "$t/sbat.fd" "$t/pol.txt" <<'PY'
import struct, sys, uuid
d, pol = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
name = "SbatLevel\0".encode("utf-16-le")
i = d.rfind(name + pol)
hdr = d[i - 60:i]
ok = (i > 60 and hdr[:2] == b"\xaa\x55" and hdr[2] == 0x3f and struct.unpack_from("<I", hdr, 4)[0] == 3 and
      struct.unpack_from("<II", hdr, 36) == (len(name), len(pol)) and
      hdr[44:60] == uuid.UUID("605dab50-e046-4300-abb6-3dd810dd8b23").bytes_le)
sys.exit(0 if ok else 1)
PY
check "sbat-level: same size, still a valid store" same_size_valid "$t/sbat.fd"
printf 'grub,6\n' > "$t/badpol.txt"
refuses "sbat-level: a policy without sbat,1" "not an SbatLevel policy" \
        "$MSHIM" vars sbat-level "$VARS" --policy "$t/badpol.txt" -o "$t/x.fd"
printf 'sbat,1\ngrub\n' > "$t/badpol.txt"
refuses "sbat-level: a record without generation" "line 2: not an SbatLevel policy" \
        "$MSHIM" vars sbat-level "$VARS" --policy "$t/badpol.txt" -o "$t/x.fd"
refuses "sbat-level without --policy" "needs --policy" "$MSHIM" vars sbat-level "$VARS" -o "$t/x.fd"

# ---- delete ----------------------------------------------------------------
"$MSHIM" vars delete "$MS" dbx -o "$t/del.fd"
check "delete exits 0" test $? = 0
check "delete: dbx gone, db kept, same size" sh -c "
        ! '$MSHIM' vars list '$t/del.fd' | grep -q ' dbx ' && '$MSHIM' vars list '$t/del.fd' | grep -q ' db ' &&
        [ \$(stat -c %s '$t/del.fd') = \$(stat -c %s '$MS') ]"
check "delete changes only the State byte" sh -c "[ \$(cmp -l '$MS' '$t/del.fd' | wc -l) = 1 ]"
refuses "delete of a missing variable" "no variable named dbx" "$MSHIM" vars delete "$t/del.fd" dbx -o "$t/x.fd"
refuses "delete without -o" "needs -o OUT" "$MSHIM" vars delete "$MS" dbx

# ---- bad input ---------------------------------------------------------------
refuses "missing file" "cannot open .*nonexistent" "$MSHIM" vars list "$t/nonexistent"
refuses "not a varstore" "not an OVMF variable store" "$MSHIM" vars list "$OVMF/OVMF_CODE_4M.fd"
head -c 1000 "$VARS" > "$t/trunc.fd"
refuses "truncated store" "truncated" "$MSHIM" vars list "$t/trunc.fd"
cp "$VARS" "$t/sig.fd"; printf 'X' | dd of="$t/sig.fd" bs=1 seek=40 conv=notrunc 2>/dev/null
refuses "bad FV signature" "not an OVMF variable store" \
        "$MSHIM" vars enroll "$t/sig.fd" --pk "$t/pk.pem" --kek "$t/kek.pem" --db "$t/db.pem" -o "$t/x.fd"
cp "$MS" "$t/rec.fd"; printf '\x7f' | dd of="$t/rec.fd" bs=1 seek=$((0x64 + 38)) conv=notrunc 2>/dev/null
refuses "record NameSize past the store" "corrupt" "$MSHIM" vars list "$t/rec.fd"
cp "$VARS" "$t/fmt.fd"; printf '\x00' | dd of="$t/fmt.fd" bs=1 seek=$((0x48 + 20)) conv=notrunc 2>/dev/null
refuses "unknown store format" "unsupported variable store format" "$MSHIM" vars list "$t/fmt.fd"
check "nothing written on bad input" test ! -e "$t/x.fd"
refuses "unknown subcommand" "unknown vars command 'frob'" "$MSHIM" vars frob "$VARS"
refuses "list with two files" "takes one FILE" "$MSHIM" vars list "$VARS" "$VARS"
check "--help documents every subcommand" sh -c "
        out=\$('$MSHIM' vars --help) && for c in list get delete enroll add-mok mok-import sbat-level; do
                echo \"\$out\" | grep -q \"mshim vars \$c\" || exit 1; done"
check "mshim --help mentions vars" sh -c "'$MSHIM' --help | grep -q '^  vars '"
exit "$CLI_FAILED"
