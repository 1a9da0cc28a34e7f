#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim attest init / quote and mshim verify on a swtpm (started here,
# stopped by the trap) provisioned by swtpm_setup with EK certificates from
# swtpm's own local CA. Oracles: tpm2_createek (the EK templates),
# tpm2_readpublic (the AK), openssl (the EK certificate, the CA chain),
# tpm2_checkquote (the quote files), Keylime's own checkquote
# (../shared/oracles/keylime, the --keylime line), python's hashlib (the
# event log and the PCR values: tests/cli/tcglog_build.py).
#
# The event log and the PCRs agree because the test makes them agree: the
# log is built with tcglog_build.py and each of its events is extended into
# swtpm's PCRs with tpm2_pcrextend (the digests the log carries) before the
# quote, as firmware would have done at boot.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
mkdir -p build
tmp=$(mktemp -d "$PWD/build/attesttest.XXXXXX")
cli_init attest "$tmp"
not() { ! "$@"; }
# tpm2_checkquote prints the PCRs and the signature: only its status counts.
checkquote() { tpm2_checkquote "$@" >/dev/null 2>&1; }
cli_need swtpm swtpm_setup swtpm_ioctl tpm2_pcrextend tpm2_checkquote tpm2_createek tpm2_readpublic openssl python3
KEYLIME=${MB_KEYLIME:-../shared/oracles/keylime}
[ -d "$KEYLIME" ] || KEYLIME=../../shared/oracles/keylime

# expect NAME RC PATTERN CMD...: exit status RC and PATTERN (ERE) on stderr.
expect() {
        local n=$1 want=$2 pat=$3 rc; shift 3
        "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
        if [ "$rc" = "$want" ] && grep -q -E -- "$pat" "$tmp/err"; then pass "$n"
        else fail "$n" "rc=$rc (want $want), stderr: $(head -c 600 "$tmp/err")"; fi
}

# ---- no TPM: a clear error, exit 2 -------------------------------------------
expect "no TPM: attest init exits 2 with a message" 2 "cannot reach a TPM" \
        env TPM2TOOLS_TCTI="swtpm:path=$tmp/none" timeout 60 "$MSHIM" attest init --out-dir "$tmp"

# ---- a TPM with an EK certificate, from swtpm's local CA ---------------------
mkdir -p "$tmp/st" "$tmp/ca"
cat >"$tmp/localca.conf" <<EOF
statedir = $tmp/ca
signingkey = $tmp/ca/signkey.pem
issuercert = $tmp/ca/issuercert.pem
certserial = $tmp/ca/certserial
EOF
cat >"$tmp/setup.conf" <<EOF
create_certs_tool = /usr/bin/swtpm_localca
create_certs_tool_config = $tmp/localca.conf
create_certs_tool_options = /etc/swtpm-localca.options
EOF
swtpm_setup --tpm2 --tpmstate "$tmp/st" --create-ek-cert --create-platform-cert --pcr-banks sha1,sha256 \
        --config "$tmp/setup.conf" --overwrite --logfile "$tmp/setup.log" >/dev/null 2>&1 ||
        { fail "swtpm_setup --create-ek-cert" "$(cat "$tmp/setup.log")"; exit 1; }
cli_swtpm "$tmp" "$tmp/st" || { fail "swtpm starts"; exit 1; }
unset TCTI TSS2_TCTI

# ---- attest init ----------------------------------------------------------------
o=$tmp/reg
mkdir -p "$o"
expect "attest init --out-dir into a missing directory: exit 2" 2 "not a directory" "$MSHIM" attest init --out-dir "$tmp/nope"
"$MSHIM" attest init --out-dir "$o" >"$tmp/init1" 2>&1; rc=$?
check "attest init succeeds (rc=$rc)" test "$rc" = 0
check "attest init: creates the AK at 0x81014D41" grep -q "persistent at 0x81014D41, created" "$tmp/init1"
tpm2_createek -G rsa -u "$tmp/ekr.pub" -c "$tmp/ekr.ctx" >/dev/null 2>&1
tpm2_createek -G ecc -u "$tmp/eke.pub" -c "$tmp/eke.ctx" >/dev/null 2>&1
# Without a resource manager the tools' objects stay loaded: flush them.
tpm2_flushcontext -t >/dev/null 2>&1
check "attest init: ek-rsa.pub is tpm2_createek -G rsa's EK (TCG template L-1)" cmp -s "$tmp/ekr.pub" "$o/ek-rsa.pub"
check "attest init: ek-ecc.pub is tpm2_createek -G ecc's EK (TCG template L-2)" cmp -s "$tmp/eke.pub" "$o/ek-ecc.pub"
check "attest init: ek-rsa.crt is the certificate swtpm_setup stored at 0x01C00002 (tpm2_nvread)" bash -c \
        "tpm2_nvread 0x01C00002 -o '$tmp/nvcert' >/dev/null 2>&1 && cmp -s '$tmp/nvcert' '$o/ek-rsa.crt'"
check "attest init: the certificate's key is ek-rsa.pem (openssl)" bash -c \
        "[ \"\$(openssl x509 -inform DER -in '$o/ek-rsa.crt' -noout -pubkey | openssl pkey -pubin -outform DER | sha256sum)\" = \
           \"\$(openssl pkey -pubin -in '$o/ek-rsa.pem' -outform DER | sha256sum)\" ]"
check "attest init: the EK certificate chains to swtpm's local CA (openssl verify)" bash -c \
        "openssl x509 -inform DER -in '$o/ek-rsa.crt' -out '$tmp/ek.crt.pem' &&
         openssl verify -partial_chain -CAfile '$tmp/ca/swtpm-localca-rootca-cert.pem' -untrusted '$tmp/ca/issuercert.pem' \
                '$tmp/ek.crt.pem' >/dev/null 2>&1"
check "attest init: no ECC P-256 certificate (swtpm stores a P-384 one): said, none written" bash -c \
        "grep -q 'no certificate at NV 0x01C0000A' '$tmp/init1' && [ ! -e '$o/ek-ecc.crt' ]"
tpm2_readpublic -c 0x81014D41 -o "$tmp/ak.tpm.pub" -n "$tmp/ak.tpm.name" >"$tmp/ak.yaml" 2>/dev/null
check "attest init: ak.pub and ak.name are the persistent key's (tpm2_readpublic)" bash -c \
        "cmp -s '$tmp/ak.tpm.pub' '$o/ak.pub' && cmp -s '$tmp/ak.tpm.name' '$o/ak.name'"
check "attest init: the AK is a restricted ECDSA-SHA256 P-256 signing key fixed to the TPM (tpm2_readpublic)" bash -c \
        "grep -q 'value: fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign$' '$tmp/ak.yaml' &&
         grep -A1 '^curve-id:' '$tmp/ak.yaml' | grep -q 'NIST p256' && grep -A1 '^scheme:' '$tmp/ak.yaml' | grep -q ecdsa &&
         grep -A1 '^scheme-halg:' '$tmp/ak.yaml' | grep -q sha256"
check "attest init: ak.pem is the AK (openssl: a P-256 key)" bash -c \
        "openssl pkey -pubin -in '$o/ak.pem' -noout -text 2>/dev/null | grep -q 'NIST CURVE: P-256'"
cp "$o/ak.pub" "$tmp/ak1.pub"
"$MSHIM" attest init --out-dir "$o" >"$tmp/init2" 2>&1; rc=$?
check "attest init twice: reuses the AK, says so, same key (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q 'already there, reused' '$tmp/init2' && cmp -s '$tmp/ak1.pub' '$o/ak.pub'"
expect "attest init --rsa with the ECC AK there: exit 2, names the handle" 2 "key at 0x81014D41 is not the RSA attestation key" \
        "$MSHIM" attest init --rsa --out-dir "$tmp"

# ---- a boot: the log, and the same events extended into the PCRs ------------------
PYTHONPATH=tests/cli python3 - "$tmp" <<'EOF' || fail "building the event log"
import sys, tcglog_build as tb
d = sys.argv[1]
banks = ["sha1", "sha256"]
ev = tb.sample_events()
open(d + "/log.bin", "wb").write(tb.build(banks, ev))
# One event edited (PCR 8's digest) and one removed (PCR 12's).
edited = [e if e[0] != 8 else e + ({"sha1": bytes(20), "sha256": bytes(32)},) for e in ev]
open(d + "/log-edited.bin", "wb").write(tb.build(banks, edited))
open(d + "/log-removed.bin", "wb").write(tb.build(banks, [e for e in ev if e[0] != 12]))
with open(d + "/extends.txt", "w") as f:
    for e in ev:
        f.write("%d:%s\n" % (e[0], ",".join("%s=%s" % (b, tb.digest(b, e[2]).hex()) for b in banks)))
EOF
cli_extend "$tmp/extends.txt"

# ---- attest quote ---------------------------------------------------------------
N=$(openssl rand -hex 32)
mkdir -p "$tmp/q"
expect "attest quote with a 4-byte nonce: usage error" 2 "--nonce wants 8 to 64 bytes" \
        "$MSHIM" attest quote --nonce 01020304 --log "$tmp/log.bin" -o "$tmp/x.json"
cp "$tmp/log.bin" "$tmp/log.keep"
expect "attest quote -o the event log: refused, the log untouched" 2 "log" \
        "$MSHIM" attest quote --nonce "$N" --log "$tmp/log.bin" -o "$tmp/log.bin"
check "attest quote -o the event log: the log untouched" cmp -s "$tmp/log.bin" "$tmp/log.keep"
"$MSHIM" attest quote --nonce "$N" --log "$tmp/log.bin" -o "$tmp/ev.json" --tpm2-tools "$tmp/q" \
        --keylime "$tmp/keylime.txt" 2>"$tmp/err"; rc=$?
check "attest quote succeeds (rc=$rc)" test "$rc" = 0
check "attest quote: the evidence is valid mshim-evidence/1 (python3-jsonschema)" \
        python3 tests/cli/json_schema.py --validate mshim-evidence-1 "$tmp/ev.json"
check "attest quote: every active bank quoted (sha1, sha256), PCRs 0-9,11-15" python3 - "$tmp/ev.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
want = [str(i) for i in list(range(10)) + list(range(11, 16))]
sys.exit(0 if sorted(d["pcrs"]) == ["sha1", "sha256"] and all(sorted(d["pcrs"][b], key=int) == want for b in d["pcrs"]) else 1)
EOF
check "attest quote: the quoted PCR values are the log's replay (hashlib)" python3 - "$tmp/ev.json" <<'EOF'
import json, sys
sys.path.insert(0, "tests/cli")
import tcglog_build as tb
d = json.load(open(sys.argv[1]))
want = tb.replay(["sha1", "sha256"], tb.sample_events())
ok = all(d["pcrs"][b].get(p) == v for b in want for p, v in want[b].items())
ok &= all(v == "00" * (len(v) // 2) for b in d["pcrs"] for p, v in d["pcrs"][b].items() if p not in want[b])
sys.exit(0 if ok else 1)
EOF
check "tpm2_checkquote accepts the --tpm2-tools files (independent oracle)" \
        checkquote -u "$o/ak.pem" -m "$tmp/q/message" -s "$tmp/q/signature" -f "$tmp/q/pcrs" -q "$N" -g sha256
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-1] ^= 1; open(sys.argv[2], "wb").write(b)' \
        "$tmp/q/message" "$tmp/q/message.bad"
check "tpm2_checkquote refuses an edited message (the oracle discriminates)" \
        not checkquote -u "$o/ak.pem" -m "$tmp/q/message.bad" -s "$tmp/q/signature" -f "$tmp/q/pcrs" -q "$N" -g sha256
if /usr/bin/python3 -c 'import cryptography' 2>/dev/null && [ -d "$KEYLIME/keylime" ]; then
        # Keylime's verifier-side checkquote (keylime/tpm/tpm_util.py), on
        # the three fields its agent format carries.
        kl() {
                (cd "$KEYLIME" && /usr/bin/python3 - "$@" <<'EOF'
import base64, sys
sys.path.insert(0, ".")
from keylime.tpm import tpm_util
line = open(sys.argv[1]).read().strip()
assert line[0] == "r", line[:1]
quote, sig, pcrs = (base64.b64decode(t) for t in line[1:].split(":"))
pcrs_dict = tpm_util.checkquote(open(sys.argv[2], "rb").read(), bytes.fromhex(sys.argv[3]), sig, quote, pcrs, "sha256")
assert len(pcrs_dict) == 15, pcrs_dict
EOF
                ) >/dev/null 2>&1
        }
        check "Keylime's checkquote accepts the --keylime quote (independent oracle)" kl "$tmp/keylime.txt" "$o/ak.pem" "$N"
        check "Keylime's checkquote refuses it for another nonce" not kl "$tmp/keylime.txt" "$o/ak.pem" "00$N"
elif [ ! -d "$KEYLIME/keylime" ]; then
        # The snapshot lives beside the repository, not in it: a clone
        # without it cannot run this oracle (not a pass).
        echo "SKIP: attest: Keylime's checkquote: no Keylime snapshot at $KEYLIME (MB_KEYLIME=DIR)"
else
        fail "Keylime's checkquote: no python3-cryptography (make deps)"
fi

# ---- verify: accepted ---------------------------------------------------------------
V() { TPM2TOOLS_TCTI="swtpm:path=$tmp/none" "$MSHIM" verify "$@"; }   # no TPM reachable: none is used
V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "verify accepts the quote (rc=$rc), with no TPM" bash -c "[ $rc = 0 ] && tail -1 '$tmp/out' | grep -qx accepted"
V --ak "$o/ak.pub" --nonce "$N" --json "$tmp/ev.json" >"$tmp/verdict.json" 2>"$tmp/err"; rc=$?
check "verify --json: valid mshim-verdict/1, accepted (rc=$rc)" bash -c \
        "[ $rc = 0 ] && python3 tests/cli/json_schema.py --validate mshim-verdict-1 '$tmp/verdict.json' &&
         python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d[\"accepted\"] and len(d[\"checks\"]) == 6 and all(c[\"ok\"] for c in d[\"checks\"]) else 1)' '$tmp/verdict.json'"

# ---- verify: refused, each by its own check (exit 1) -----------------------------------
# evmod OUT PYTHON: the evidence with d (the document) edited by PYTHON.
evmod() {
        python3 - "$tmp/ev.json" "$1" "$tmp" "$2" <<'EOF'
import base64, json, sys
d = json.load(open(sys.argv[1]))
t = sys.argv[3]
b64 = lambda b: base64.b64encode(b).decode()
unb64 = base64.b64decode
exec(sys.argv[4])
json.dump(d, open(sys.argv[2], "w"))
EOF
}
expect "verify refuses another nonce: exit 1, 'nonce'" 1 "refused: nonce: the quote was made for the nonce '$N'" \
        V --ak "$o/ak.pub" --nonce "$(openssl rand -hex 32)" "$tmp/ev.json"
evmod "$tmp/ev-byte.json" 'm = bytearray(unb64(d["quote"]["message"])); m[-1] ^= 1; d["quote"]["message"] = b64(m)'
expect "verify refuses a quote with one byte edited: exit 1, 'signature'" 1 "refused: signature: the quote's signature does not verify" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-byte.json"
tpm2_createprimary -C o -G ecc256:ecdsa-sha256:null -a 'fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign' \
        -c "$tmp/other.ctx" >/dev/null 2>&1 && tpm2_readpublic -c "$tmp/other.ctx" -o "$tmp/other.pub" >/dev/null 2>&1
tpm2_flushcontext -t >/dev/null 2>&1
expect "verify refuses the quote under another AK: exit 1, 'signature'" 1 "refused: signature: the quote's signature does not verify with the AK" \
        V --ak "$tmp/other.pub" --nonce "$N" "$tmp/ev.json"
evmod "$tmp/ev-pcr.json" 'd["pcrs"]["sha256"]["7"] = "11" * 32'
expect "verify refuses an edited PCR value beside the quote: exit 1, 'pcr-digest'" 1 "refused: pcr-digest" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-pcr.json"
evmod "$tmp/ev-edited.json" 'd["event_log"]["data"] = b64(open(t + "/log-edited.bin", "rb").read())'
expect "verify refuses an event log with one event edited: exit 1, names sha1 PCR 8" 1 "refused: event-log: sha1 PCR 8: the quoted value is not what the event log replays to" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-edited.json"
V --ak "$o/ak.pub" --nonce "$N" --json "$tmp/ev-edited.json" >"$tmp/verdict2.json" 2>/dev/null; rc=$?
check "verify --json of the edited log: refused, PCR 8 of both banks listed with both values, valid schema (rc=$rc)" bash -c \
        "[ $rc = 1 ] && python3 tests/cli/json_schema.py --validate mshim-verdict-1 '$tmp/verdict2.json' &&
         python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); u=d[\"unaccounted_pcrs\"]; sys.exit(0 if not d[\"accepted\"] and [(x[\"bank\"], x[\"pcr\"]) for x in u] == [(\"sha1\", 8), (\"sha256\", 8)] and all(x[\"replayed\"] for x in u) else 1)' '$tmp/verdict2.json'"
evmod "$tmp/ev-removed.json" 'd["event_log"]["data"] = b64(open(t + "/log-removed.bin", "rb").read())'
expect "verify refuses an event log with one event removed: exit 1, names PCR 12" 1 "refused: event-log: sha1 PCR 12" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-removed.json"
evmod "$tmp/ev-hmac.json" 'd["quote"]["signature"] = b64(bytes.fromhex("0005000b0020") + bytes(32))'
expect "verify refuses a signature of an algorithm it does not verify (HMAC): exit 2" 2 "not a TPMT_SIGNATURE mshim verifies" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-hmac.json"
evmod "$tmp/ev-rsasig.json" 'd["quote"]["signature"] = b64(bytes.fromhex("0014000b0100") + bytes(256))'
expect "verify refuses an RSASSA signature for an ECC AK: exit 1, 'signature'" 1 "refused: signature: an RSASSA signature" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-rsasig.json"

# A PCR extended after the log was taken: the next quote shows it.
tpm2_pcrextend "14:sha256=$(openssl rand -hex 32)" >/dev/null
N2=$(openssl rand -hex 16)
"$MSHIM" attest quote --nonce "$N2" --log "$tmp/log.bin" -o "$tmp/ev-ext.json" 2>"$tmp/err" || fail "attest quote after the extend" "$(cat "$tmp/err")"
expect "verify refuses a PCR extended outside the log: exit 1, names sha256 PCR 14" 1 "refused: event-log: sha256 PCR 14: the quoted value is not what the event log replays to" \
        V --ak "$o/ak.pub" --nonce "$N2" "$tmp/ev-ext.json"
check "the same evidence verifies if PCR 14 is not quoted (the refusal was PCR 14's alone)" bash -c \
        "'$MSHIM' attest quote --nonce '$N2' --select 0-9,11-13,15 --log '$tmp/log.bin' -o '$tmp/ev-no14.json' 2>/dev/null &&
         TPM2TOOLS_TCTI='swtpm:path=$tmp/none' '$MSHIM' verify --ak '$o/ak.pub' --nonce '$N2' '$tmp/ev-no14.json' >/dev/null 2>&1"

# ---- verify: bad input (exit 2) ------------------------------------------------------
head -c 300 "$tmp/ev.json" >"$tmp/ev-trunc.json"
expect "verify refuses truncated evidence: exit 2" 2 "ev-trunc.json: not mshim-evidence/1 evidence: at byte" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-trunc.json"
sed 's|"mshim-evidence/1"|"mshim-evidence/2"|' "$tmp/ev.json" >"$tmp/ev-v2.json"
expect "verify refuses another schema version: exit 2" 2 "schema 'mshim-evidence/2' is not mshim-evidence/1" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-v2.json"
truncate -s 65M "$tmp/huge.json"
expect "verify refuses a 65 MiB input: exit 2, at once" 2 "more than 64 MiB" \
        timeout 20 env TPM2TOOLS_TCTI="swtpm:path=$tmp/none" "$MSHIM" verify --ak "$o/ak.pub" --nonce "$N" "$tmp/huge.json"
rm -f "$tmp/huge.json"
python3 -c 'import sys; open(sys.argv[1], "w").write("[" + "0," * 5000000 + "0]")' "$tmp/many.json"
expect "verify refuses 5 million values in 10 MB: exit 2, bounded" 2 "too many values" \
        timeout 20 env TPM2TOOLS_TCTI="swtpm:path=$tmp/none" "$MSHIM" verify --ak "$o/ak.pub" --nonce "$N" "$tmp/many.json"
evmod "$tmp/ev-nob64.json" 'd["quote"]["message"] = "not base64!"'
expect "verify refuses a message that is not base64: exit 2" 2 "\"message\" is not base64" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-nob64.json"
evmod "$tmp/ev-badlog.json" 'd["event_log"]["data"] = b64(b"\x01\x02\x03")'
expect "verify refuses an event log that does not parse: exit 2" 2 "the event log is not a TCG event log" \
        V --ak "$o/ak.pub" --nonce "$N" "$tmp/ev-badlog.json"
expect "verify refuses an AK file that is not a TPM2B_PUBLIC: exit 2" 2 "not an RSA or ECC key's TPM2B_PUBLIC" \
        V --ak "$o/ak.pem" --nonce "$N" "$tmp/ev.json"
expect "verify refuses an EK (a decryption key) as the AK: exit 2" 2 "not a restricted signing key" \
        V --ak "$o/ek-ecc.pub" --nonce "$N" "$tmp/ev.json"
expect "verify with a bad nonce: usage error" 2 "--nonce wants 8 to 64 bytes" \
        V --ak "$o/ak.pub" --nonce xyz "$tmp/ev.json"

# ---- an RSA AK -------------------------------------------------------------------
tpm2_evictcontrol -C o -c 0x81014D41 >/dev/null 2>&1
expect "attest quote without an AK: exit 2, says to run attest init" 2 "no attestation key at 0x81014D41: run 'mshim attest init' first" \
        "$MSHIM" attest quote --nonce "$N" --log "$tmp/log.bin" -o "$tmp/x.json"
mkdir -p "$tmp/rsa" "$tmp/qr"
"$MSHIM" attest init --rsa --out-dir "$tmp/rsa" >"$tmp/init3" 2>&1; rc=$?
check "attest init --rsa: an RSA AK (rc=$rc, tpm2_readpublic: rsassa, 2048 bits)" bash -c \
        "[ $rc = 0 ] && tpm2_readpublic -c 0x81014D41 2>/dev/null | grep -q 'bits: 2048' &&
         tpm2_readpublic -c 0x81014D41 2>/dev/null | grep -A2 '^scheme:' | grep -q rsassa"
N3=$(openssl rand -hex 20)
"$MSHIM" attest quote --nonce "$N3" --select 0-9,11-13,15 --log "$tmp/log.bin" -o "$tmp/ev-rsa.json" --tpm2-tools "$tmp/qr" 2>"$tmp/err"
check "tpm2_checkquote accepts the RSA AK's quote" \
        checkquote -u "$tmp/rsa/ak.pem" -m "$tmp/qr/message" -s "$tmp/qr/signature" -f "$tmp/qr/pcrs" -q "$N3" -g sha256
V --ak "$tmp/rsa/ak.pub" --nonce "$N3" "$tmp/ev-rsa.json" >"$tmp/out" 2>&1; rc=$?
check "verify accepts the RSA AK's quote (rc=$rc, RSASSA-SHA256)" bash -c \
        "[ $rc = 0 ] && grep -q '^ok      signature: RSASSA-SHA256' '$tmp/out' && tail -1 '$tmp/out' | grep -qx accepted"
expect "verify refuses the RSA AK's quote with the ECC AK: exit 1" 1 "refused: signature" \
        V --ak "$o/ak.pub" --nonce "$N3" "$tmp/ev-rsa.json"
# Something else the AK signed (TPM2_GetTime: a TPMS_ATTEST of type
# TPM_ST_ATTEST_TIME, by tpm2-tools), offered as a quote.
tpm2_gettime -c 0x81014D41 -q "$N" -o "$tmp/time.sig" --attestation "$tmp/time.att" >/dev/null 2>&1 || fail "tpm2_gettime"
evmod "$tmp/ev-time.json" 'd["quote"]["message"] = b64(open(t + "/time.att", "rb").read()); d["quote"]["signature"] = b64(open(t + "/time.sig", "rb").read())'
expect "verify refuses a signed TPMS_ATTEST that is not a quote: exit 1, 'type'" 1 "refused: type: 0x8019 is not TPM_ST_ATTEST_QUOTE" \
        V --ak "$tmp/rsa/ak.pub" --nonce "$N" "$tmp/ev-time.json"

# ---- --previous: the clock and the counts against the machine's previous evidence -------
# The oracle for the counts is the TPM itself: tpm2_readclock before and
# after each restart and reset.
counts() { tpm2_readclock 2>/dev/null | awk '/reset_count/ {r=$2} /restart_count/ {s=$2} END {print r + 0, s + 0}'; }
quote() { "$MSHIM" attest quote --nonce "$1" --select 0-9,11-13,15 --log "$tmp/log.bin" -o "$2" 2>"$tmp/err" ||
                fail "attest quote -o $2" "$(cat "$tmp/err")"; }
VR() { V --ak "$tmp/rsa/ak.pub" "$@"; }
P1=$(openssl rand -hex 16) P2=$(openssl rand -hex 16) P3=$(openssl rand -hex 16) P4=$(openssl rand -hex 16)
quote "$P1" "$tmp/p1.json"
sleep 0.1
quote "$P2" "$tmp/p2.json"
read -r R0 S0 <<<"$(counts)"
VR --nonce "$P2" --previous "$tmp/p1.json" --json "$tmp/p2.json" >"$tmp/vp.json" 2>"$tmp/err"; rc=$?
check "verify --previous: a later quote of the same boot is accepted, 'same-boot' (rc=$rc, valid mshim-verdict/1)" bash -c \
        "[ $rc = 0 ] && python3 tests/cli/json_schema.py --validate mshim-verdict-1 '$tmp/vp.json' &&
         python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d[\"previous\"]; sys.exit(0 if d[\"accepted\"] and p[\"since\"] == \"same-boot\" and p[\"reset_count\"] == d[\"clock\"][\"reset_count\"] == $R0 and p[\"clock\"] < d[\"clock\"][\"clock\"] else 1)' '$tmp/vp.json'"
expect "verify --previous: the older quote offered after the newer one: refused, exit 1, 'previous: ... clock ... not after'" 1 \
        "refused: previous: the TPM's clock [0-9]+ ms is not after the previous evidence's [0-9]+ ms in the same boot" \
        VR --nonce "$P1" --previous "$tmp/p2.json" "$tmp/p1.json"
expect "verify --previous: the same quote twice (replayed): refused, exit 1" 1 "refused: previous: the TPM's clock" \
        VR --nonce "$P2" --previous "$tmp/p2.json" "$tmp/p2.json"
expect "verify --previous: previous evidence of another AK: exit 2" 2 "the previous evidence is not a quote signed by the AK" \
        VR --nonce "$P2" --previous "$tmp/ev.json" "$tmp/p2.json"
expect "verify --previous: truncated previous evidence: exit 2" 2 "ev-trunc.json: not mshim-evidence/1 evidence" \
        VR --nonce "$P2" --previous "$tmp/ev-trunc.json" "$tmp/p2.json"
sed 's|"mshim-evidence/1"|"mshim-evidence/2"|' "$tmp/p1.json" >"$tmp/p1-v2.json"
expect "verify --previous: previous evidence of another schema version: exit 2" 2 "schema 'mshim-evidence/2' is not mshim-evidence/1" \
        VR --nonce "$P2" --previous "$tmp/p1-v2.json" "$tmp/p2.json"
# A TPM Resume (Shutdown(STATE), _TPM_Init, Startup(STATE)): PCRs kept, restartCount + 1.
tpm2_shutdown >/dev/null 2>&1 && swtpm_ioctl --unix "$tmp/srv.ctrl" -i >/dev/null && tpm2_startup >/dev/null 2>&1 ||
        fail "a TPM Resume on swtpm"
read -r R1 S1 <<<"$(counts)"
check "tpm2_readclock: the resume kept resetCount and raised restartCount ($R0/$S0 -> $R1/$S1)" \
        test "$R1" = "$R0" -a "$S1" = $((S0 + 1))
quote "$P3" "$tmp/p3.json"
expect_ok() { local n=$1 pat=$2 rc; shift 2; "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
        if [ $rc = 0 ] && grep -q -E -- "$pat" "$tmp/out"; then pass "$n"; else fail "$n" "rc=$rc $(cat "$tmp/out" "$tmp/err")"; fi; }
expect_ok "verify --previous across a resume: accepted, says the boot resumed (restartCount $S0 -> $S1)" \
        "^ok      previous: the same boot, resumed or restarted since the previous evidence \\(restartCount $S0 -> $S1\\)" \
        VR --nonce "$P3" --previous "$tmp/p2.json" "$tmp/p3.json"
expect "verify --previous: the quote from before the resume after the one after it: refused, exit 1, 'restartCount'" 1 \
        "refused: previous: restartCount $S0 is below the previous evidence's $S1 in the same boot" \
        VR --nonce "$P2" --previous "$tmp/p3.json" "$tmp/p2.json"
# A TPM Reset (a reboot: _TPM_Init, Startup(CLEAR)): resetCount + 1, PCRs
# zero; the boot's events are extended again.
swtpm_ioctl --unix "$tmp/srv.ctrl" -i >/dev/null && tpm2_startup -c >/dev/null 2>&1 || fail "a TPM Reset on swtpm"
cli_extend "$tmp/extends.txt"
read -r R2 S2 <<<"$(counts)"
check "tpm2_readclock: the reset raised resetCount ($R1 -> $R2)" test "$R2" = $((R1 + 1))
quote "$P4" "$tmp/p4.json"
expect_ok "verify --previous across a reboot: accepted, says the machine rebooted (resetCount $R1 -> $R2)" \
        "^ok      previous: the machine rebooted since the previous evidence \\(resetCount $R1 -> $R2\\)" \
        VR --nonce "$P4" --previous "$tmp/p3.json" "$tmp/p4.json"
expect "verify --previous: a quote from the earlier boot after one of this boot: refused, exit 1, 'resetCount'" 1 \
        "refused: previous: resetCount $R1 is below the previous evidence's $R2: an older quote" \
        VR --nonce "$P3" --previous "$tmp/p4.json" "$tmp/p3.json"

exit $CLI_FAILED
