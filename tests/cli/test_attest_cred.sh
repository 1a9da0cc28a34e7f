#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Proving the AK: mshim verify challenge (TPM2_MakeCredential in software),
# mshim attest activate (TPM2_ActivateCredential) and mshim verify register,
# on two swtpms (A and B), each provisioned by swtpm_setup with an EK
# certificate from its own local CA (CA A, CA B). Oracles: tpm2-tools both
# ways (tpm2_makecredential's credentials activate with mshim,
# tpm2_activatecredential activates mshim's challenges), tpm2_readpublic
# (the AK's Name), python's hashlib (the secret against the verifier's
# record), openssl (the certificates).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
mkdir -p build
tmp=$(mktemp -d "$PWD/build/credtest.XXXXXX")
cli_init attest-cred "$tmp"
not() { ! "$@"; }
cli_need swtpm swtpm_setup swtpm_ioctl tpm2_makecredential tpm2_activatecredential tpm2_createek tpm2_readpublic \
        tpm2_startauthsession tpm2_policysecret tpm2_flushcontext openssl python3

# expect NAME RC PATTERN CMD...: exit status RC and PATTERN (ERE) on stderr.
expect() {
        local n=$1 want=$2 pat=$3 rc; shift 3
        "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
        if [ "$rc" = "$want" ] && grep -q -E -- "$pat" "$tmp/err"; then pass "$n"
        else fail "$n" "rc=$rc (want $want), stderr: $(head -c 600 "$tmp/err")"; fi
}

# ---- two TPMs, each with an EK certificate from its own local CA -----------------
# tpm X: swtpm_setup with CA X in $tmp/caX, state $tmp/stX, served at $tmp/X.
tpm() {
        local x=$1
        mkdir -p "$tmp/st$x" "$tmp/ca$x" "$tmp/$x"
        cat >"$tmp/localca$x.conf" <<EOF
statedir = $tmp/ca$x
signingkey = $tmp/ca$x/signkey.pem
issuercert = $tmp/ca$x/issuercert.pem
certserial = $tmp/ca$x/certserial
EOF
        cat >"$tmp/setup$x.conf" <<EOF
create_certs_tool = /usr/bin/swtpm_localca
create_certs_tool_config = $tmp/localca$x.conf
create_certs_tool_options = /etc/swtpm-localca.options
EOF
        swtpm_setup --tpm2 --tpmstate "$tmp/st$x" --create-ek-cert --pcr-banks sha256 --config "$tmp/setup$x.conf" \
                --overwrite --logfile "$tmp/setup$x.log" >/dev/null 2>&1 || { fail "swtpm_setup $x" "$(cat "$tmp/setup$x.log")"; return 1; }
        cli_swtpm "$tmp/$x" "$tmp/st$x" || { fail "swtpm $x starts"; return 1; }
        # The verifier's EK CA directory: the local CA's root and issuer.
        mkdir -p "$tmp/trust$x"
        cp "$tmp/ca$x/swtpm-localca-rootca-cert.pem" "$tmp/ca$x/issuercert.pem" "$tmp/trust$x/"
}
tpm A && tpm B || exit 1
TA="swtpm:path=$tmp/A/srv" TB="swtpm:path=$tmp/B/srv"
unset TPM2TOOLS_TCTI TCTI TSS2_TCTI
onA() { TPM2TOOLS_TCTI=$TA "$@"; }
onB() { TPM2TOOLS_TCTI=$TB "$@"; }
# The verifier: no TPM reachable, none is used.
V() { TPM2TOOLS_TCTI="swtpm:path=$tmp/none" "$MSHIM" verify "$@"; }
mkdir -p "$tmp/a" "$tmp/b"
onA "$MSHIM" attest init --out-dir "$tmp/a" >/dev/null 2>"$tmp/err" || fail "attest init on A" "$(cat "$tmp/err")"
onB "$MSHIM" attest init --out-dir "$tmp/b" >/dev/null 2>"$tmp/err" || fail "attest init on B" "$(cat "$tmp/err")"
check "the EK certificates chain to their own CA only (openssl verify: A to CA A, not CA B)" bash -c \
        "openssl x509 -inform DER -in '$tmp/a/ek-rsa.crt' -out '$tmp/a/ek.pem' &&
         openssl verify -CAfile '$tmp/caA/swtpm-localca-rootca-cert.pem' -untrusted '$tmp/caA/issuercert.pem' '$tmp/a/ek.pem' >/dev/null 2>&1 &&
         ! openssl verify -CAfile '$tmp/caB/swtpm-localca-rootca-cert.pem' -untrusted '$tmp/caB/issuercert.pem' '$tmp/a/ek.pem' >/dev/null 2>&1"
onA tpm2_readpublic -c 0x81014D41 -n "$tmp/akA.name" >/dev/null 2>&1
NAME_A=$(od -An -tx1 -v "$tmp/akA.name" | tr -d ' \n')
D=$tmp/verifier

# sha256 FILE: hex
sha256() { python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }
# pending_hash DIR NAME: the secret's hash the verifier keeps
pending_hash() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["secret_sha256"])' "$1/pending/$2.json"; }

# ---- RSA EK, by its certificate: challenge, activate, register ------------------------
V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-cert "$tmp/a/ek-rsa.crt" --ek-ca "$tmp/trustA" -o "$tmp/ch1" \
        >"$tmp/out" 2>"$tmp/err"; rc=$?
check "challenge for A's AK under A's certified RSA EK (rc=$rc, no TPM)" test "$rc" = 0
check "challenge: the record is named by the AK's Name (tpm2_readpublic), mode 0600, no secret in it" bash -c \
        "[ -f '$D/pending/$NAME_A.json' ] && [ \"\$(stat -c %a '$D/pending/$NAME_A.json')\" = 600 ] &&
         ! grep -q '\"secret\"' '$D/pending/$NAME_A.json'"
check "challenge: the record is valid mshim-machine/1 (python3-jsonschema)" \
        python3 tests/cli/json_schema.py --validate mshim-machine-1 "$D/pending/$NAME_A.json"
check "challenge: the file is tpm2-tools' credential layout (magic 0xBADCC0DE, version 1, 32-byte HMAC, 256-byte RSA seed)" \
        python3 - "$tmp/ch1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
magic, ver, idn = struct.unpack(">IIH", b[:10])
hn, = struct.unpack(">H", b[10:12])
sn, = struct.unpack(">H", b[10 + idn:12 + idn])
sys.exit(0 if (magic, ver, hn, idn, sn, len(b)) == (0xBADCC0DE, 1, 32, 2 + 32 + 2 + 32, 256, 12 + idn + sn) else 1)
EOF
onA "$MSHIM" attest activate "$tmp/ch1" -o "$tmp/s1" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "attest activate on A recovers the secret: its SHA-256 is the verifier's (rc=$rc)" bash -c \
        "[ $rc = 0 ] && [ '$(sha256 "$tmp/s1" 2>/dev/null)' = '$(pending_hash "$D" "$NAME_A")' ]"
check "attest activate: the secret file is 0600" bash -c "[ \"\$(stat -c %a '$tmp/s1')\" = 600 ]"
V register --dir "$D" --ak "$tmp/a/ak.pub" "$tmp/s1" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "register A with the recovered secret (rc=$rc): recorded, the challenge gone" bash -c \
        "[ $rc = 0 ] && [ -f '$D/machines/$NAME_A.json' ] && [ ! -e '$D/pending/$NAME_A.json' ] &&
         grep -q 'certified by' '$tmp/out'"
check "register: the record is valid mshim-machine/1, registered, with the EK certificate" bash -c \
        "python3 tests/cli/json_schema.py --validate mshim-machine-1 '$D/machines/$NAME_A.json' &&
         python3 - '$D/machines/$NAME_A.json' '$tmp/a/ek-rsa.crt' <<'EOF'
import base64, json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d['status'] == 'registered' and 'secret_sha256' not in d and d['ek_type'] == 'rsa' and
         base64.b64decode(d['ek_certificate']) == open(sys.argv[2], 'rb').read() else 1)
EOF"
expect "register again with the same secret: refused, no pending challenge" 1 "refused: no pending challenge" \
        V register --dir "$D" --ak "$tmp/a/ak.pub" "$tmp/s1"

# ---- ECC EK, by its public area -------------------------------------------------------
V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-pub "$tmp/a/ek-ecc.pub" -o "$tmp/ch2" >/dev/null 2>"$tmp/err"; rc=$?
check "challenge under A's ECC P-256 EK (rc=$rc)" test "$rc" = 0
check "challenge: an ECC seed is the ephemeral point, a TPMS_ECC_POINT of two 32-byte coordinates" python3 - "$tmp/ch2" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
idn, = struct.unpack(">H", b[8:10])
s = b[12 + idn:]
sys.exit(0 if struct.unpack(">H", b[10 + idn:12 + idn])[0] == 68 and s[:2] == b"\0\x20" and s[34:36] == b"\0\x20" else 1)
EOF
onA "$MSHIM" attest activate "$tmp/ch2" >"$tmp/s2.hex" 2>"$tmp/err"; rc=$?
python3 -c 'import sys; open(sys.argv[2], "wb").write(bytes.fromhex(open(sys.argv[1]).read().strip()))' "$tmp/s2.hex" "$tmp/s2" 2>/dev/null
check "attest activate (ECC) prints the secret in hex (rc=$rc)" bash -c \
        "[ $rc = 0 ] && [ '$(sha256 "$tmp/s2" 2>/dev/null)' = '$(pending_hash "$D" "$NAME_A")' ]"
V register --dir "$D" --ak "$tmp/a/ak.pub" "$tmp/s2" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "register A by its ECC EK (rc=$rc)" bash -c "[ $rc = 0 ] && grep -q 'ECC EK given as a public key' '$tmp/out'"

# ---- tpm2-tools as the oracle, both ways -----------------------------------------------
# tact CHALLENGE OUT KIND: tpm2_activatecredential on A with the EK's policy session.
tact() {
        onA tpm2_createek -G "$3" -c "$tmp/ek.ctx" >/dev/null 2>&1 &&
        onA tpm2_startauthsession --policy-session -S "$tmp/sess.ctx" >/dev/null 2>&1 &&
        onA tpm2_policysecret -S "$tmp/sess.ctx" -c e >/dev/null 2>&1 &&
        onA tpm2_activatecredential -c 0x81014D41 -C "$tmp/ek.ctx" -i "$1" -o "$2" -P "session:$tmp/sess.ctx" >/dev/null 2>&1
        local rc=$?
        onA tpm2_flushcontext -t >/dev/null 2>&1
        onA tpm2_flushcontext -s >/dev/null 2>&1
        return $rc
}
for kind in rsa ecc; do
        V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-pub "$tmp/a/ek-$kind.pub" -o "$tmp/ch-$kind" >/dev/null 2>&1
        tact "$tmp/ch-$kind" "$tmp/t-$kind" $kind; rc=$?
        check "tpm2_activatecredential activates mshim's $kind challenge: the verifier's secret (rc=$rc)" bash -c \
                "[ $rc = 0 ] && [ '$(sha256 "$tmp/t-$kind" 2>/dev/null)' = '$(pending_hash "$D" "$NAME_A")' ]"
        check "register accepts the secret tpm2_activatecredential recovered ($kind)" bash -c \
                "TPM2TOOLS_TCTI=none '$MSHIM' verify register --dir '$D' --ak '$tmp/a/ak.pub' '$tmp/t-$kind' >/dev/null"
        head -c 32 /dev/urandom >"$tmp/sec-$kind"
        TPM2TOOLS_TCTI=none tpm2_makecredential -T none -u "$tmp/a/ek-$kind.pub" -s "$tmp/sec-$kind" -n "$NAME_A" \
                -o "$tmp/mc-$kind" >/dev/null 2>"$tmp/err" || fail "tpm2_makecredential -T none ($kind)" "$(cat "$tmp/err")"
        check "mshim attest activate recovers tpm2_makecredential's $kind secret" bash -c \
                "TPM2TOOLS_TCTI='$TA' '$MSHIM' attest activate '$tmp/mc-$kind' -o '$tmp/r-$kind' >/dev/null 2>&1 &&
                 cmp -s '$tmp/r-$kind' '$tmp/sec-$kind'"
done

# ---- refusals ------------------------------------------------------------------------
# A challenge for B's EK (and A's AK) does not activate on A; nor on B, whose AK it is not.
for kind in rsa ecc; do
        V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-pub "$tmp/b/ek-$kind.pub" -o "$tmp/chB-$kind" >/dev/null 2>&1 ||
                fail "challenge under B's $kind EK"
        expect "a challenge for another TPM's $kind EK does not activate on A: exit 1" 1 \
                "refused: the TPM does not activate this challenge" onA "$MSHIM" attest activate "$tmp/chB-$kind"
        expect "... nor on B, the EK's TPM, which does not hold A's AK ($kind): exit 1" 1 \
                "refused: the TPM does not activate this challenge" onB "$MSHIM" attest activate "$tmp/chB-$kind"
done
expect "register with a guessed secret: refused, exit 1" 1 "is not the secret of the challenge" \
        V register --dir "$D" --ak "$tmp/a/ak.pub" "$tmp/sec-rsa"
check "a wrong secret spends the challenge (no second guess)" test ! -e "$D/pending/$NAME_A.json"
# B's AK offered as A's: the challenge binds EK A to B's AK Name, which A's
# TPM does not hold, so nobody recovers the secret; B's AK is not registered.
onB tpm2_readpublic -c 0x81014D41 -n "$tmp/akB.name" >/dev/null 2>&1
NAME_B=$(od -An -tx1 -v "$tmp/akB.name" | tr -d ' \n')
V challenge --dir "$D" --ak "$tmp/b/ak.pub" --ek-cert "$tmp/a/ek-rsa.crt" --ek-ca "$tmp/trustA" -o "$tmp/chAB" >/dev/null 2>&1 ||
        fail "challenge for B's AK under A's EK"
expect "an AK of another TPM does not activate against A's EK (on A): exit 1" 1 "refused: the TPM does not activate" \
        onA "$MSHIM" attest activate "$tmp/chAB"
expect "... nor on B: exit 1" 1 "refused: the TPM does not activate" onB "$MSHIM" attest activate "$tmp/chAB"
expect "... and B's AK is not registered with A's secret: exit 1" 1 "is not the secret of the challenge for the AK $NAME_B" \
        V register --dir "$D" --ak "$tmp/b/ak.pub" "$tmp/s1"
check "... nor recorded" test ! -e "$D/machines/$NAME_B.json"
expect "register of an AK with no challenge: exit 1" 1 "refused: no pending challenge for the AK $NAME_B" \
        V register --dir "$D" --ak "$tmp/b/ak.pub" "$tmp/s1"
# A software key with an AK's attributes, its public area loaded into A's
# TPM (TPM2_LoadExternal): the challenge for its Name does not activate, as
# a public-only object has no authorization (TPM_RC_AUTH_UNAVAILABLE), so a
# key the TPM does not hold cannot be registered.
openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/soft.key" 2>/dev/null
openssl ec -in "$tmp/soft.key" -pubout -out "$tmp/soft.pem" 2>/dev/null
onA tpm2_loadexternal -C e -G ecc:ecdsa-sha256:null -u "$tmp/soft.pem" -c "$tmp/soft.ctx" \
        -a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign' >/dev/null 2>&1 &&
        onA tpm2_readpublic -c "$tmp/soft.ctx" -o "$tmp/soft.pub" >/dev/null 2>&1 || fail "tpm2_loadexternal of a software key"
onA tpm2_flushcontext -t >/dev/null 2>&1
V challenge --dir "$D" --ak "$tmp/soft.pub" --ek-pub "$tmp/a/ek-rsa.pub" -o "$tmp/chsoft" >/dev/null 2>&1 ||
        fail "challenge for the software key"
onA tpm2_createek -G rsa -c "$tmp/ek.ctx" >/dev/null 2>&1; onA tpm2_flushcontext -t >/dev/null 2>&1
onA tpm2_startauthsession --policy-session -S "$tmp/sess.ctx" >/dev/null 2>&1
onA tpm2_policysecret -S "$tmp/sess.ctx" -c e >/dev/null 2>&1
onA tpm2_activatecredential -c "$tmp/soft.ctx" -C "$tmp/ek.ctx" -i "$tmp/chsoft" -o "$tmp/soft.sec" -P "session:$tmp/sess.ctx" \
        >/dev/null 2>"$tmp/err"; rc=$?
onA tpm2_flushcontext -t >/dev/null 2>&1; onA tpm2_flushcontext -s >/dev/null 2>&1
check "a software key loaded with TPM2_LoadExternal does not activate against A's EK (TPM_RC_AUTH_UNAVAILABLE)" bash -c \
        "[ $rc != 0 ] && grep -q 0x12F '$tmp/err' && [ ! -s '$tmp/soft.sec' ]"
expect "an EK certificate from another CA (B's, against CA A): refused, exit 1" 1 \
        "refused: .*ek-rsa.crt: the EK certificate does not chain to a CA of" \
        V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-cert "$tmp/b/ek-rsa.crt" --ek-ca "$tmp/trustA" -o "$tmp/x"
expect "a certificate whose key is not the EK's (A's certificate, B's EK): refused, exit 1" 1 \
        "refused: .*the certificate's key is not the EK of" \
        V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-cert "$tmp/a/ek-rsa.crt" --ek-pub "$tmp/b/ek-rsa.pub" \
        --ek-ca "$tmp/trustA" -o "$tmp/x"
check "no challenge file written by a refusal" test ! -e "$tmp/x"
# Tampered challenges: one byte of the HMAC, of the encrypted identity, of the seed.
V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-pub "$tmp/a/ek-rsa.pub" -o "$tmp/ch3" >/dev/null 2>&1
for spot in "12:the integrity HMAC" "50:the encrypted identity" "100:the encrypted seed"; do
        off=${spot%%:*} what=${spot#*:}
        python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[int(sys.argv[2])] ^= 1; open(sys.argv[3], "wb").write(b)' \
                "$tmp/ch3" "$off" "$tmp/ch3-$off"
        expect "a challenge with one byte of $what flipped does not activate: exit 1" 1 \
                "refused: the TPM does not activate this challenge" onA "$MSHIM" attest activate "$tmp/ch3-$off"
done
check "the untampered challenge activates (the refusals were the edits')" bash -c \
        "TPM2TOOLS_TCTI='$TA' '$MSHIM' attest activate '$tmp/ch3' -o '$tmp/s3' >/dev/null 2>&1"
# AKs without an AK's attributes (objectAttributes at bytes 6-9 of the TPM2B_PUBLIC).
attrs() {
        python3 -c 'import struct, sys
b = bytearray(open(sys.argv[1], "rb").read()); a, = struct.unpack(">I", b[6:10])
a = (a & ~int(sys.argv[3], 16)) | int(sys.argv[4], 16); b[6:10] = struct.pack(">I", a); open(sys.argv[2], "wb").write(b)' "$@"
}
for spec in "restricted:10000:0" "fixedTPM:2:0" "fixedParent:10:0" "sensitiveDataOrigin:20:0" "decrypt:0:20000"; do
        IFS=: read -r what clr set <<<"$spec"
        attrs "$tmp/a/ak.pub" "$tmp/ak-$what.pub" "$clr" "$set"
        expect "challenge refuses an AK ${set:+with }$what $([ "$set" = 0 ] && echo cleared || echo set): exit 1" 1 \
                "refused: .*not an attestation key" \
                V challenge --dir "$D" --ak "$tmp/ak-$what.pub" --ek-pub "$tmp/a/ek-rsa.pub" -o "$tmp/x"
done

# ---- verify EVIDENCE with the registered machine's AK (no --ak) -------------------------
# Both TPMs' PCRs are untouched (all zero), so an event log of the header
# alone (tcglog_build.py) is the whole boot's.
PYTHONPATH=tests/cli python3 -c 'import sys, tcglog_build as tb; open(sys.argv[1], "wb").write(tb.build(["sha256"], []))' \
        "$tmp/empty.log"
N=$(openssl rand -hex 32)
onA "$MSHIM" attest quote --nonce "$N" --select 0-7 --log "$tmp/empty.log" -o "$tmp/evA.json" 2>"$tmp/err" ||
        fail "attest quote on A" "$(cat "$tmp/err")"
onB "$MSHIM" attest quote --nonce "$N" --select 0-7 --log "$tmp/empty.log" -o "$tmp/evB.json" 2>"$tmp/err" ||
        fail "attest quote on B" "$(cat "$tmp/err")"
V --dir "$D" --nonce "$N" "$tmp/evA.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "verify without --ak finds A's registered AK by the evidence's Name, accepted (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q '^ok      machine: the registered machine $NAME_A (ECC EK given as a public key)' '$tmp/out' &&
         grep -q '^ok      signature: ECDSA-SHA256 by the AK $NAME_A' '$tmp/out' && tail -1 '$tmp/out' | grep -qx accepted"
check "verify --machine NAME (tpm2_readpublic's Name) accepts A's quote" bash -c \
        "TPM2TOOLS_TCTI=none '$MSHIM' verify --dir '$D' --machine '$NAME_A' --nonce '$N' '$tmp/evA.json' >/dev/null 2>&1"
expect "verify: B's quote, B never registered: refused, exit 1, 'machine: ... not registered'" 1 \
        "refused: machine: the AK $NAME_B is not registered in .*\\(register it: 'mshim verify challenge'" \
        V --dir "$D" --nonce "$N" "$tmp/evB.json"
V --dir "$D" --nonce "$N" --json "$tmp/evB.json" >"$tmp/vB.json" 2>/dev/null; rc=$?
check "verify --json of the unregistered machine: valid mshim-verdict/1, refused by 'machine' alone (rc=$rc)" bash -c \
        "[ $rc = 1 ] && python3 tests/cli/json_schema.py --validate mshim-verdict-1 '$tmp/vB.json' &&
         python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if not d[\"accepted\"] and [(c[\"check\"], c[\"ok\"]) for c in d[\"checks\"]] == [(\"machine\", False)] and d[\"ak_name\"] == sys.argv[2] else 1)' '$tmp/vB.json' '$NAME_B'"
# B's quote claiming to be A's: A's registered AK does not verify it.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["ak"]["name"] = sys.argv[3]; json.dump(d, open(sys.argv[2], "w"))' \
        "$tmp/evB.json" "$tmp/evB-asA.json" "$NAME_A"
expect "verify: another TPM's quote naming A's AK: refused, exit 1, 'signature'" 1 \
        "refused: signature: the quote's signature does not verify with the AK $NAME_A" \
        V --dir "$D" --nonce "$N" "$tmp/evB-asA.json"
V challenge --dir "$D" --ak "$tmp/b/ak.pub" --ek-pub "$tmp/b/ek-rsa.pub" -o "$tmp/chB" >/dev/null 2>&1 || fail "challenge for B"
expect "verify: a machine whose challenge is pending, not answered: refused, exit 1" 1 \
        "refused: machine: the AK $NAME_B is not registered in .*its challenge is pending" \
        V --dir "$D" --nonce "$N" "$tmp/evB.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["ak"]["name"] = "../../../etc/passwd"; json.dump(d, open(sys.argv[2], "w"))' \
        "$tmp/evA.json" "$tmp/evA-path.json"
expect "verify: an evidence AK Name that is a path: exit 2, never opened" 2 "is not an AK's Name" \
        V --dir "$D" --nonce "$N" "$tmp/evA-path.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["ak"]; json.dump(d, open(sys.argv[2], "w"))' \
        "$tmp/evA.json" "$tmp/evA-noak.json"
expect "verify: evidence naming no AK, no --machine: exit 2" 2 "the evidence names no AK: give --machine NAME" \
        V --dir "$D" --nonce "$N" "$tmp/evA-noak.json"
check "... with --machine it is accepted" bash -c \
        "TPM2TOOLS_TCTI=none '$MSHIM' verify --dir '$D' --machine '$NAME_A' --nonce '$N' '$tmp/evA-noak.json' >/dev/null 2>&1"
expect "verify: --ak with --machine: usage error, exit 2" 2 "give one or the other" \
        V --ak "$tmp/a/ak.pub" --machine "$NAME_A" --nonce "$N" "$tmp/evA.json"
cp "$D/machines/$NAME_A.json" "$tmp/recA.keep"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["ak_public"] = json.load(open(sys.argv[2]))["ak_public"]; json.dump(d, open(sys.argv[1], "w"))' \
        "$D/machines/$NAME_A.json" "$D/pending/$NAME_B.json"
expect "verify: a machine record whose AK is not its Name's: exit 2" 2 "its AK is not the AK $NAME_A its name says" \
        V --dir "$D" --nonce "$N" "$tmp/evA.json"
cp "$tmp/recA.keep" "$D/machines/$NAME_A.json"

# ---- bad input: exit 2 -----------------------------------------------------------------
head -c 40 "$tmp/ch3" >"$tmp/ch-trunc"
expect "attest activate: a truncated challenge: exit 2" 2 "not a challenge .*truncated" onA "$MSHIM" attest activate "$tmp/ch-trunc"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[0] ^= 1; open(sys.argv[2], "wb").write(b)' "$tmp/ch3" "$tmp/ch-magic"
expect "attest activate: another magic: exit 2" 2 "not a challenge" onA "$MSHIM" attest activate "$tmp/ch-magic"
cp "$tmp/ch3" "$tmp/ch3.keep"
expect "attest activate -o the challenge itself: exit 2, untouched" 2 "refusing to overwrite" \
        onA "$MSHIM" attest activate "$tmp/ch3" -o "$tmp/ch3"
check "... the challenge untouched" cmp -s "$tmp/ch3" "$tmp/ch3.keep"
expect "attest activate without a TPM: exit 2" 2 "cannot reach a TPM" \
        env TPM2TOOLS_TCTI="swtpm:path=$tmp/none" timeout 60 "$MSHIM" attest activate "$tmp/ch3"
expect "challenge: an EK certificate without --ek-ca: usage error" 2 "give both or neither" \
        V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-cert "$tmp/a/ek-rsa.crt" -o "$tmp/x"
expect "challenge: the AK as the EK (a signing key): exit 2" 2 "not an endorsement key" \
        V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-pub "$tmp/a/ak.pub" -o "$tmp/x"
expect "challenge: a PEM as the AK: exit 2" 2 "not an RSA or ECC key's TPM2B_PUBLIC" \
        V challenge --dir "$D" --ak "$tmp/a/ak.pem" --ek-pub "$tmp/a/ek-rsa.pub" -o "$tmp/x"
expect "challenge: a certificate that is not one: exit 2" 2 "not an X.509 certificate" \
        V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-cert "$tmp/a/ak.pub" --ek-ca "$tmp/trustA" -o "$tmp/x"
mkdir -p "$tmp/nocerts" && cp "$tmp/a/ak.pem" "$tmp/caA/signkey.pem" "$tmp/nocerts/"
expect "challenge: an EK CA directory with keys but no certificate: exit 2" 2 "no CA certificate" \
        V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-cert "$tmp/a/ek-rsa.crt" --ek-ca "$tmp/nocerts" -o "$tmp/x"
cp "$tmp/a/ak.pub" "$tmp/akA.keep"
expect "challenge -o the AK: exit 2" 2 "" V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-pub "$tmp/a/ek-rsa.pub" -o "$tmp/a/ak.pub"
check "... the AK untouched" cmp -s "$tmp/a/ak.pub" "$tmp/akA.keep"
V challenge --dir "$D" --ak "$tmp/a/ak.pub" --ek-pub "$tmp/a/ek-rsa.pub" -o "$tmp/ch4" >/dev/null 2>&1
echo '{"schema": "mshim-machine/1"' >"$D/pending/$NAME_A.json"
expect "register: a damaged pending record: exit 2" 2 "not a mshim-machine/1 record" \
        V register --dir "$D" --ak "$tmp/a/ak.pub" "$tmp/s1"

exit $CLI_FAILED
