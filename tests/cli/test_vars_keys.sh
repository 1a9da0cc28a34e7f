#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim vars append / certs / export and --dbx-image, what users of
# efi-updatevar, mokutil and sig-list-to-certs expect. Oracles: efitools
# (cert-to-efi-sig-list, hash-to-efi-sig-list, sig-list-to-certs), openssl
# x509, pesign -h, and a Python reading of the store's records.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
OVMF=${MB_OVMF_DIR:-/usr/share/OVMF}
VARS=$OVMF/OVMF_VARS_4M.fd
MS=$OVMF/OVMF_VARS_4M.ms.fd
FB=${MB_EFIROOT:-build/debian-efi}/usr/lib/shim/fbx64.efi
OWNER=4d0b4b1e-b009-4cb7-863a-287100431702     # mshim's default SignatureOwner
ZERO=00000000-0000-0000-0000-000000000000
t=$(mktemp -d)
cli_init "vars keys" "$t"

# runs NAME RC REGEX CMD...: exit status RC and, when REGEX is not empty, a
# "mshim: " message on stderr matching it.
runs() {
        local n=$1 want=$2 re=$3 rc; shift 3
        "$@" >"$t/out" 2>"$t/err"; rc=$?
        if [ "$rc" = "$want" ] && { [ -z "$re" ] || grep -q -E "^mshim: .*$re" "$t/err"; }; then pass "$n"
        else fail "$n (status $rc, want $want): $(head -c 300 "$t/err")"; fi
}
get() { "$MSHIM" vars get "$1" "$2" ${3:+--guid "$3"}; }
# same_vars A B NAME...: the variables hold the same data in both stores.
same_vars() { local a=$1 b=$2 v; shift 2; for v; do cmp -s <(get "$a" "$v") <(get "$b" "$v") || return 1; done; }
# record FILE NAME: "offset attributes timestamp-hex data-offset data-size"
# of the live variable NAME, read from the store's records (EDK2
# AUTHENTICATED_VARIABLE_HEADER, 60 bytes; State 0x3F is VAR_ADDED).
record() {
        python3 - "$1" "$2" <<'EOF'
import struct, sys
b, want = open(sys.argv[1], "rb").read(), sys.argv[2]
hl = struct.unpack_from("<H", b, 48)[0]
end = hl + struct.unpack_from("<I", b, hl + 16)[0]
off = (hl + 28 + 3) & ~3
while off + 60 <= end and struct.unpack_from("<H", b, off)[0] == 0x55AA:
    state, attrs = b[off + 2], struct.unpack_from("<I", b, off + 4)[0]
    ns, ds = struct.unpack_from("<II", b, off + 36)
    name = b[off + 60:off + 60 + ns].decode("utf-16-le").rstrip("\0")
    if state == 0x3F and name == want:
        print(off, attrs, b[off + 16:off + 32].hex(), off + 60 + ns, ds)
    off = (off + 60 + ns + ds + 3) & ~3
EOF
}

if [ ! -x "$MSHIM" ] || [ ! -f "$VARS" ] || [ ! -f "$MS" ] || [ ! -f "$FB" ]; then
        fail "prerequisites ($MSHIM, $VARS, $MS, $FB)"; exit 1
fi
cli_need cert-to-efi-sig-list hash-to-efi-sig-list sig-list-to-certs pesign openssl python3
for n in pk kek db db2; do
        openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=keys-$n/" -days 3650 \
                -keyout "$t/$n.key" -out "$t/$n.pem" 2>/dev/null || { fail "openssl req"; exit 1; }
done
openssl x509 -in "$t/db2.pem" -outform DER -out "$t/db2.der"

# ---- append: db ------------------------------------------------------------------
runs "append --db to Microsoft's store" 0 "" "$MSHIM" vars append "$MS" --db "$t/db.pem" --db "$t/db2.der" -o "$t/a1.fd"
cert-to-efi-sig-list -g "$OWNER" "$t/db.pem" "$t/db.esl" >/dev/null
openssl x509 -inform DER -in "$t/db2.der" -out "$t/db2.pem.again"
cert-to-efi-sig-list -g "$OWNER" "$t/db2.pem.again" "$t/db2.esl" >/dev/null
check "db after append = old db || cert-to-efi-sig-list's lists" \
        cmp -s <(get "$t/a1.fd" db) <(cat <(get "$MS" db) "$t/db.esl" "$t/db2.esl")
check "PK, KEK and dbx untouched" same_vars "$MS" "$t/a1.fd" PK KEK dbx
check "same live variables as before (names)" test \
        "$("$MSHIM" vars list "$MS" | grep -c '^[0-9a-f]\{8\}-')" = "$("$MSHIM" vars list "$t/a1.fd" | grep -c '^[0-9a-f]\{8\}-')"
read -r _ attrs _ < <(record "$t/a1.fd" db)
check "db keeps its attributes (NV,BS,RT,AT = 0x27)" test "$attrs" = 39
runs "append an entry already there" 0 "db: 1 new entry is already there" \
        "$MSHIM" vars append "$t/a1.fd" --db "$t/db.pem" -o "$t/a2.fd"
check "... leaves the store byte for byte as it was" cmp -s "$t/a1.fd" "$t/a2.fd"
runs "append the same certificate twice in one command" 0 "db: 1 new entry is already there" \
        "$MSHIM" vars append "$VARS" --db "$t/db.pem" --db "$t/db.pem" -o "$t/a3.fd"
check "... adds it once" cmp -s <(get "$t/a3.fd" db) "$t/db.esl"
# The same certificate with another owner is another EFI_SIGNATURE_DATA
# (EDK2 compares owner and data): firmware appends it, so does mshim.
runs "append with another --owner" 0 "" "$MSHIM" vars append "$t/a1.fd" --db "$t/db.pem" --owner "$ZERO" -o "$t/a4.fd"
cert-to-efi-sig-list -g "$ZERO" "$t/db.pem" "$t/db0.esl" >/dev/null
check "... is appended" cmp -s <(get "$t/a4.fd" db) <(cat <(get "$t/a1.fd" db) "$t/db0.esl")

# TimeStamp: the later of the variable's and the update's (UEFI 2.10 8.2.1).
SOURCE_DATE_EPOCH=2000000000 "$MSHIM" vars enroll "$VARS" --pk "$t/pk.pem" --kek "$t/kek.pem" --db "$t/db.pem" -o "$t/ts.fd"
SOURCE_DATE_EPOCH=1000000000 "$MSHIM" vars append "$t/ts.fd" --db "$t/db2.pem" -o "$t/ts-old.fd"
SOURCE_DATE_EPOCH=2100000000 "$MSHIM" vars append "$t/ts.fd" --db "$t/db2.pem" -o "$t/ts-new.fd"
efi_time() { python3 -c 'import datetime, struct, sys
d = datetime.datetime.fromtimestamp(int(sys.argv[1]), datetime.timezone.utc)
print((struct.pack("<HBBBBBB", d.year, d.month, d.day, d.hour, d.minute, d.second, 0) + bytes(8)).hex())' "$1"; }
read -r _ _ ts_old _ < <(record "$t/ts-old.fd" db)
read -r _ _ ts_new _ < <(record "$t/ts-new.fd" db)
check "append with an older clock keeps the variable's TimeStamp" test "$ts_old" = "$(efi_time 2000000000)"
check "append with a newer clock takes the new TimeStamp" test "$ts_new" = "$(efi_time 2100000000)"

# ---- append: dbx -----------------------------------------------------------------
want_hash=$(pesign -h -i "$FB" 2>/dev/null | awk '/^hash:/{print $2}')
runs "append --dbx-image creates dbx in an empty store" 0 "" \
        "$MSHIM" vars append "$VARS" --dbx-image "$FB" --owner shim -o "$t/x1.fd"
hash-to-efi-sig-list "$FB" "$t/fb.esl" >/dev/null 2>&1       # owner: shim's GUID
check "dbx = hash-to-efi-sig-list's list" cmp -s <(get "$t/x1.fd" dbx) "$t/fb.esl"
check "dbx holds pesign's Authenticode digest" sh -c "'$MSHIM' vars list '$t/x1.fd' | grep -q 'sha256 $want_hash'"
read -r _ attrs _ < <(record "$t/x1.fd" dbx)
check "a new dbx gets NV,BS,RT,AT (0x27)" test "$attrs" = 39
runs "append --dbx-hash to Microsoft's dbx" 0 "" "$MSHIM" vars append "$MS" --dbx-hash "$want_hash" -o "$t/x2.fd"
check "dbx after append = old dbx || one SHA-256 list" python3 - <(get "$MS" dbx) <(get "$t/x2.fd" dbx) "$want_hash" "$OWNER" <<'EOF'
import struct, sys, uuid
old, new, h, owner = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), bytes.fromhex(sys.argv[3]), sys.argv[4]
sha256 = uuid.UUID("c1c41626-504c-4092-aca9-41f936934328").bytes_le
assert new == old + sha256 + struct.pack("<III", 28 + 48, 0, 48) + uuid.UUID(owner).bytes_le + h
EOF
runs "append a dbx hash already there" 0 "dbx: 1 new entry is already there" \
        "$MSHIM" vars append "$t/x2.fd" --dbx-hash "$want_hash" -o "$t/x3.fd"
check "... changes nothing" cmp -s "$t/x2.fd" "$t/x3.fd"

# ---- append: KEK and a dbx certificate -----------------------------------------------
runs "append --kek and --dbx CERT" 0 "" "$MSHIM" vars append "$MS" --kek "$t/kek.pem" --dbx "$t/db2.der" -o "$t/k1.fd"
cert-to-efi-sig-list -g "$OWNER" "$t/kek.pem" "$t/kek.esl" >/dev/null
check "KEK after append = old KEK || cert-to-efi-sig-list's list" \
        cmp -s <(get "$t/k1.fd" KEK) <(cat <(get "$MS" KEK) "$t/kek.esl")
check "dbx after append = old dbx || the certificate's list" \
        cmp -s <(get "$t/k1.fd" dbx) <(cat <(get "$MS" dbx) "$t/db2.esl")
check "PK and db untouched by a KEK append" same_vars "$MS" "$t/k1.fd" PK db

# ---- append: refusals --------------------------------------------------------------
runs "append with nothing to add" 2 "needs --db, --dbx" "$MSHIM" vars append "$MS" -o "$t/bad.fd"
runs "append --pk" 2 "only adds to db, dbx and KEK" "$MSHIM" vars append "$MS" --pk "$t/pk.pem" -o "$t/bad.fd"
runs "append without -o" 2 "needs -o OUT" "$MSHIM" vars append "$MS" --db "$t/db.pem"
runs "append --dbx-image of a non-PE file" 2 "db.pem: not a valid PE/COFF image" \
        "$MSHIM" vars append "$MS" --dbx-image "$t/db.pem" -o "$t/bad.fd"
# A db whose first list claims more bytes than it has: refused, not extended.
cp "$MS" "$t/corrupt.fd"
read -r _ _ _ data_off _ < <(record "$t/corrupt.fd" db)
printf '\xff\x7f' | dd of="$t/corrupt.fd" bs=1 seek=$((data_off + 16)) conv=notrunc 2>/dev/null
runs "append to a malformed db" 2 "db holds malformed signature lists" \
        "$MSHIM" vars append "$t/corrupt.fd" --db "$t/db.pem" -o "$t/bad.fd"
check "refused appends wrote nothing" test ! -e "$t/bad.fd"

# ---- certs ---------------------------------------------------------------------------
# The certificates of db and KEK, by efitools and openssl.
for v in PK KEK db; do
        get "$MS" "$v" > "$t/$v.esl"
        (cd "$t" && sig-list-to-certs "$v.esl" "ref-$v" >/dev/null 2>&1)
done
oracle_certs() {
        local v=$1 i=0
        while [ -f "$t/ref-$v-$i.der" ]; do
                echo "$v [$i]"
                openssl x509 -inform DER -in "$t/ref-$v-$i.der" -noout -fingerprint -sha1 |
                        sed 's/^.*=//' | tr 'A-F' 'a-f' | sed 's/^/  SHA1 Fingerprint: /'
                openssl x509 -inform DER -in "$t/ref-$v-$i.der" -noout -subject -nameopt compat | sed 's/^subject=/  subject: /'
                openssl x509 -inform DER -in "$t/ref-$v-$i.der" -noout -issuer -nameopt compat | sed 's/^issuer=/  issuer:  /'
                i=$((i + 1))
        done
}
for v in PK KEK db; do
        check "certs $v: fingerprints, subjects, issuers = openssl on sig-list-to-certs' files" \
                test "$("$MSHIM" vars certs "$MS" "$v" | grep -v '^  owner:')" = "$(oracle_certs "$v")"
done
"$MSHIM" vars certs "$MS" > "$t/certs.txt"
check "certs without NAME: every signature database's (1 PK, 2 KEK, 2 db)" \
        test "$(grep -c '^\(PK\|KEK\|db\) \[' "$t/certs.txt")" = 5
check "certs: owners (Microsoft's on db and the Microsoft KEK)" \
        test "$(grep -c '^  owner:   77fa9abd-0359-4d32-bd60-28f4e78f784b' "$t/certs.txt")" = 3
runs "certs of one variable" 0 "" "$MSHIM" vars certs "$MS" KEK
check "certs KEK lists exactly KEK's two" test "$(grep -c '^KEK \[' "$t/out")" = 2 -a "$(grep -c '^\(db\|PK\) \[' "$t/out")" = 0
runs "certs of dbx (hashes only)" 0 "" "$MSHIM" vars certs "$MS" dbx
check "... says there are none" grep -qx '(no certificates)' "$t/out"
runs "certs of an empty store" 0 "" "$MSHIM" vars certs "$VARS"
check "... says there are none" grep -qx '(no certificates in any signature database)' "$t/out"
runs "certs of a missing variable" 2 "no variable named Nope" "$MSHIM" vars certs "$MS" Nope
runs "certs of a variable that is not a signature list" 2 "SecureBootEnable does not hold well-formed" \
        "$MSHIM" vars certs "$MS" SecureBootEnable --guid secureboot-enable
runs "certs of a malformed db" 2 "db does not hold well-formed signature lists" "$MSHIM" vars certs "$t/corrupt.fd" db

# ---- export ---------------------------------------------------------------------------
runs "export db --prefix --der" 0 "" "$MSHIM" vars export "$MS" db --prefix "$t/ex" --der
check "DER files = sig-list-to-certs' files, byte for byte" sh -c "
        cmp -s '$t/ex-0.der' '$t/ref-db-0.der' && cmp -s '$t/ex-1.der' '$t/ref-db-1.der' && [ ! -e '$t/ex-2.der' ]"
check "export names the files it wrote" test "$(cat "$t/out")" = "$(printf '%s\n' "$t/ex-0.der" "$t/ex-1.der")"
runs "export KEK --prefix (PEM)" 0 "" "$MSHIM" vars export "$MS" KEK --prefix "$t/kx"
check "PEM files hold the same certificates (openssl)" sh -c "
        openssl x509 -in '$t/kx-0.pem' -outform DER | cmp -s - '$t/ref-KEK-0.der' &&
        openssl x509 -in '$t/kx-1.pem' -outform DER | cmp -s - '$t/ref-KEK-1.der'"
"$MSHIM" vars export "$MS" db > "$t/db-bundle.pem"
check "export to standard output: a PEM bundle openssl reads" sh -c "
        [ \$(grep -c 'BEGIN CERTIFICATE' '$t/db-bundle.pem') = 2 ] &&
        openssl x509 -in '$t/db-bundle.pem' -outform DER | cmp -s - '$t/ref-db-0.der'"
runs "export of dbx (no certificates)" 2 "dbx holds no X.509 certificate" "$MSHIM" vars export "$MS" dbx --prefix "$t/none"
runs "export --der without --prefix" 2 "give --prefix" "$MSHIM" vars export "$MS" db --der
runs "export --prefix twice" 2 "--prefix given twice" "$MSHIM" vars export "$MS" db --prefix a --prefix b
runs "export of a malformed db" 2 "db does not hold well-formed signature lists" "$MSHIM" vars export "$t/corrupt.fd" db --prefix "$t/none"
check "refused exports wrote nothing" test -z "$(ls "$t" | grep '^none')"

check "vars --help documents append, certs and export" sh -c "
        out=\$('$MSHIM' vars --help) && for c in append certs export; do
                echo \"\$out\" | grep -q \"mshim vars \$c\" || exit 1; done"
exit "$CLI_FAILED"
