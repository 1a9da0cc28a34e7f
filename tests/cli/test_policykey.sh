#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The policy key protected (issue 22): an encrypted policy key and
# --pass-file on every command that signs; signing on another machine
# (policy approve --request, policy sign, policy approve --signature) and a
# machine that holds policy.pub only (policy init --public-only); policy
# list marking revoked approvals. On swtpm (started here, stopped by the
# trap), the boot states of tests/cli/seal_fixture.py (hashlib); openssl
# is the oracle for keys and signatures, hashlib (approval_edit.py,
# policy_oracle.py) for policies, tpm2-tools for the counter. Every
# refusal is shown to change nothing: no file written or removed, the
# counter where it was.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
mkdir -p build
tmp=$(mktemp -d "$PWD/build/polkeytest.XXXXXX")
cli_init policykey "$tmp"
cli_need swtpm swtpm_ioctl tpm2_pcrextend tpm2_nvread openssl python3 setsid
fix() { python3 tests/cli/seal_fixture.py "$@"; }
edit() { python3 tests/cli/approval_edit.py "$@"; }
# No terminal: what a passphrase prompt meets under unattended upgrades.
notty() { setsid -w "$@" </dev/null; }
st=$tmp/state esp=$tmp/esp ap=$tmp/esp/loader/mshim/approvals
mkdir -p "$tmp/b0"
fix boot "$tmp/b0"
cli_swtpm "$tmp" || { fail "swtpm starts"; exit 1; }
cli_extend "$tmp/b0/extends.txt"
counter() { tpm2_nvread 0x01804D53 -C 0x01804D53 2>/dev/null | od -An -tx1 | tr -d ' \n'; }
tree() { find "$@" -printf '%p %s\n' 2>/dev/null | sort | md5sum; }
nvname() { tpm2_nvreadpublic 0x01804D53 2>/dev/null | sed -n 's/^ *name: *//p'; }
# sigok FILE PUB [REF]: FILE's signature is PUB's over SHA-256(policy || REF) (openssl).
sigok() {
        python3 - "$1" "$tmp/v.ahash" "$tmp/v.sig" "${3:-}" <<'PY'
import hashlib, sys
kv = dict(l.rstrip("\n").split(" ", 1) for l in open(sys.argv[1]) if " " in l)
open(sys.argv[2], "wb").write(hashlib.sha256(bytes.fromhex(kv["policy"]) + sys.argv[4].encode()).digest())
open(sys.argv[3], "wb").write(bytes.fromhex(kv["signature"]))
PY
        openssl pkeyutl -verify -pubin -inkey "$2" -in "$tmp/v.ahash" -sigfile "$tmp/v.sig" >/dev/null 2>&1
}

"$MSHIM" policy init --state-dir "$st" >/dev/null 2>"$tmp/err" || { fail "policy init" "$(cat "$tmp/err")"; exit 1; }

# ---- an encrypted policy key, --pass-file ---------------------------------------
echo 'correct horse battery' >"$tmp/pass"; echo 'wrong' >"$tmp/wrongpass"
openssl pkcs8 -topk8 -v2 aes-256-cbc -in "$st/policy.key" -passout file:"$tmp/pass" -out "$tmp/enc.key" 2>/dev/null &&
        cat "$tmp/enc.key" >"$st/policy.key" || fail "openssl encrypts the policy key"
check "the oracle: policy.key is encrypted (openssl asks a passphrase for it)" bash -c \
        "grep -q 'BEGIN ENCRYPTED PRIVATE KEY' '$st/policy.key' && ! openssl pkey -in '$st/policy.key' -passin pass: -noout 2>/dev/null"
a=$(notty "$MSHIM" policy approve --state-dir "$st" --esp "$esp" --current --entry-id pf --pass-file "$tmp/pass" 2>"$tmp/err"); rc=$?
check "approve --pass-file with an encrypted key: the approval written (rc=$rc)" test "$rc" = 0 -a -f "$a"
check "approve --pass-file: the signature is policy.pub's over SHA-256(policy) (openssl), the policy its fields' (hashlib)" \
        bash -c "$(declare -f sigok); tmp='$tmp'; sigok '$a' '$st/policy.pub' && python3 tests/cli/approval_edit.py check '$a' '$(nvname)'"
# refused NAME WANT_RC PATTERN CMD...: exit WANT_RC, PATTERN said, the ESP,
# the state directory and the counter unchanged.
refused() {
        local name=$1 want=$2 pat=$3 out rc c0 t0; shift 3
        c0=$(counter); t0=$(tree "$tmp/esp" "$tmp/espB" "$st" "$tmp/stB")
        out=$("$@" 2>&1 >/dev/null); rc=$?
        if [ "$rc" = "$want" ] && grep -q -- "$pat" <<<"$out" && [ "$(counter)" = "$c0" ] &&
           [ "$(tree "$tmp/esp" "$tmp/espB" "$st" "$tmp/stB")" = "$t0" ]; then
                pass "$name: refused (exit $want), nothing signed or changed"
        else fail "$name: refused (exit $want), nothing signed or changed" "rc=$rc counter $c0 -> $(counter)" "$out"; fi
}
refused "approve with a wrong --pass-file" 2 "wrong passphrase" \
        notty "$MSHIM" policy approve --state-dir "$st" --esp "$esp" --current --entry-id wp --pass-file "$tmp/wrongpass"
refused "approve with an encrypted key, no --pass-file and no terminal" 2 "no terminal to ask it on; give --pass-file FILE" \
        notty "$MSHIM" policy approve --state-dir "$st" --esp "$esp" --current --entry-id nt
refused "approve --pass-file of a missing file" 2 "nowhere" \
        notty "$MSHIM" policy approve --state-dir "$st" --esp "$esp" --current --entry-id nf --pass-file "$tmp/nowhere"
# revoke --keep, prune and remove re-sign: the same key, the same option.
tpm2_pcrreset 16 >/dev/null
k16=$(notty "$MSHIM" policy approve --state-dir "$st" --esp "$esp" --current --select 16 --entry-id e16 --pass-file "$tmp/pass" 2>/dev/null)
refused "revoke --keep with an encrypted key and no --pass-file (no terminal)" 2 "give --pass-file" \
        notty "$MSHIM" policy revoke --state-dir "$st" --esp "$esp" --keep "$k16"
refused "remove with a wrong --pass-file" 2 "wrong passphrase" \
        notty "$MSHIM" policy remove --state-dir "$st" --esp "$esp" --entry-id pf --pass-file "$tmp/wrongpass"
c0=$(counter)
out=$(notty "$MSHIM" policy revoke --state-dir "$st" --esp "$esp" --keep "$k16" --pass-file "$tmp/pass" 2>&1); rc=$?
kept=$(tail -n 1 <<<"$out")
check "revoke --keep --pass-file: the counter moved by one and the kept approval re-signed at it (rc=$rc)" bash -c \
        "[ $rc = 0 ] && [ $((16#$(counter))) = $((16#$c0 + 1)) ] && grep -qx 'epoch $((16#$c0 + 1))' '$kept' &&
         $(declare -f sigok); tmp='$tmp'; sigok '$kept' '$st/policy.pub'"
a=$(notty "$MSHIM" policy approve --state-dir "$st" --esp "$esp" --current --entry-id pf --pass-file "$tmp/pass" 2>/dev/null)
out=$(notty "$MSHIM" policy remove --state-dir "$st" --esp "$esp" --entry-id pf --pass-file "$tmp/pass" 2>&1); rc=$?
check "remove --pass-file: the entry's approval removed, the rest re-signed (rc=$rc)" bash -c \
        "[ $rc = 0 ] && [ ! -e '$a' ] && grep -q '^epoch counter: ' <<<'$out'"
tpm2_pcrextend "16:sha256=$(printf '%064d' 16)" >/dev/null
p16=$(notty "$MSHIM" policy approve --state-dir "$st" --esp "$esp" --current --select 16 --entry-id e16 --pass-file "$tmp/pass" 2>/dev/null)
cp "$p16" "$tmp/p16.copy"
"$MSHIM" pcrs --bank sha256 >"$tmp/now.yaml"
refused "prune with an encrypted key and no --pass-file (no terminal)" 2 "give --pass-file" \
        notty "$MSHIM" policy prune --state-dir "$st" --esp "$esp" --pcrs "$tmp/now.yaml"
out=$(notty "$MSHIM" policy prune --state-dir "$st" --esp "$esp" --pcrs "$tmp/now.yaml" --pass-file "$tmp/pass" 2>&1); rc=$?
check "prune --pass-file: the superseded approval removed, the counter moved (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q 'superseded' <<<'$out' && grep -q '^epoch counter: ' <<<'$out'"
# totp enroll --signed signs its first approval.
head -c 20 /dev/urandom >"$tmp/totp.secret"
refused "totp enroll --signed with an encrypted key and no --pass-file (no terminal): undone" 2 "give --pass-file" \
        notty "$MSHIM" totp enroll --signed --state-dir "$st" --esp "$esp" --pcrs "$tmp/b0/pcrs.txt" \
        --secret-file "$tmp/totp.secret" --uri
check "... no TOTP key left at 0x81004D54 (tpm2_readpublic)" bash -c "! tpm2_readpublic -c 0x81004D54 >/dev/null 2>&1"
out=$(notty "$MSHIM" totp enroll --signed --state-dir "$st" --esp "$esp" --pcrs "$tmp/b0/pcrs.txt" \
        --secret-file "$tmp/totp.secret" --uri --pass-file "$tmp/pass" 2>&1); rc=$?
t1=$(ls "$esp"/loader/mshim/totp-approvals/*.approval 2>/dev/null | head -n 1)
check "totp enroll --signed --pass-file: the first TOTP approval, signed over policy || mshim-totp || selection (rc=$rc)" bash -c \
        "[ $rc = 0 ] && [ -f '$t1' ] && python3 - '$t1' '$tmp/v.ahash' '$tmp/v.sig' <<'PY' && openssl pkeyutl -verify -pubin -inkey '$st/policy.pub' -in '$tmp/v.ahash' -sigfile '$tmp/v.sig' >/dev/null 2>&1
import hashlib, struct, sys
kv = dict(l.rstrip('\n').split(' ', 1) for l in open(sys.argv[1]) if ' ' in l)
mask = sum(1 << int(p) for p in kv['pcrs'].split(','))
sel = struct.pack('>IHB', 1, 0x000B, 3) + mask.to_bytes(3, 'little')
open(sys.argv[2], 'wb').write(hashlib.sha256(bytes.fromhex(kv['policy']) + b'mshim-totp' + sel).digest())
open(sys.argv[3], 'wb').write(bytes.fromhex(kv['signature']))
PY"
"$MSHIM" totp remove --state-dir "$st" --esp "$esp" >/dev/null 2>&1

# ---- policy list: the status of each approval ---------------------------------------
# A copy of p16 from before the prune (revoked by its move), what the
# prune re-signed (live), and one of those with another key's signature
# (openssl: invalid).
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/evil.key" 2>/dev/null
live=$(ls "$ap"/*.approval | head -n 1)
edit forge "$live" "$ap/0-forged.approval" "$tmp/evil.key"
cp "$tmp/p16.copy" "$ap/0-old.approval"
"$MSHIM" policy list --state-dir "$st" --esp "$esp" --json >"$tmp/list.json" 2>"$tmp/err"; rc=$?
c=$((16#$(counter)))
check "policy list --json: each approval's status from the counter (tpm2_nvread: $c) and openssl's verdict on its signature (rc=$rc)" \
        python3 - "$tmp/list.json" "$c" "$st/policy.pub" <<'PY'
import hashlib, json, subprocess, sys
d = json.load(open(sys.argv[1]))
c = int(sys.argv[2])
ok = d["counter"] == c and len(d["approvals"]) >= 3
for a in d["approvals"]:
    kv = dict(l.rstrip("\n").split(" ", 1) for l in open(a["file"]) if " " in l)
    open("/dev/shm/mshim-polkey.ahash", "wb").write(hashlib.sha256(bytes.fromhex(kv["policy"])).digest())
    open("/dev/shm/mshim-polkey.sig", "wb").write(bytes.fromhex(kv["signature"]))
    good = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", sys.argv[3], "-in",
                           "/dev/shm/mshim-polkey.ahash", "-sigfile", "/dev/shm/mshim-polkey.sig"],
                          capture_output=True).returncode == 0
    want = "revoked" if a["epoch"] < c else "future" if a["epoch"] > c else "live" if good else "invalid"
    ok = ok and a["status"] == want and (want == "live") == ("why" not in a)
    if want == "revoked":
        ok = ok and ("epoch %d, the counter is %d" % (a["epoch"], c)) in a["why"]
sys.exit(0 if ok else 1)
PY
rm -f /dev/shm/mshim-polkey.ahash /dev/shm/mshim-polkey.sig
check "policy list --json: a revoked, a live and an invalid approval among them" bash -c \
        "grep -q '\"status\":\"revoked\"' '$tmp/list.json' && grep -q '\"status\":\"live\"' '$tmp/list.json' &&
         grep -q '\"status\":\"invalid\"' '$tmp/list.json'"
"$MSHIM" policy list --state-dir "$st" --esp "$esp" >"$tmp/list.txt" 2>&1
check "policy list (text): 'revoked: epoch N, the counter is C' under a revoked approval, 'invalid:' under the forged one" bash -c \
        "grep -q '^  revoked: epoch [0-9]*, the counter is $c' '$tmp/list.txt' &&
         grep -A2 '^0-forged.approval' '$tmp/list.txt' | grep -q '^  invalid: its signature is not the policy key'"
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
        check "policy list --json with statuses is valid mshim-approvals/1 (python3-jsonschema)" /usr/bin/python3 -c '
import json, sys, jsonschema
s = json.load(open("docs/schema/mshim-approvals-1.schema.json"))
s["properties"]["mshim_version"] = {"type": "string"}
jsonschema.Draft202012Validator(s).validate(json.load(open(sys.argv[1])))' "$tmp/list.json"
fi
out=$(TPM2TOOLS_TCTI="swtpm:path=$tmp/none" "$MSHIM" policy list --esp "$esp" 2>&1); rc=$?
check "policy list without a TPM: listed, status unknown, a warning says revoked ones are not marked (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q '^  unknown: the epoch counter could not be read' <<<'$out' &&
         grep -q 'warning: the epoch counter cannot be read' <<<'$out'"
rm -f "$ap/0-forged.approval" "$ap/0-old.approval"

# ---- signing on another machine ------------------------------------------------------
# The key made offline with openssl (encrypted); machine B holds its
# public part only. B shares this TPM (its SRK and counter).
stB=$tmp/stB espB=$tmp/espB apB=$tmp/espB/loader/mshim/approvals off=$tmp/offline
mkdir -p "$off" "$espB"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -aes-256-cbc -pass file:"$tmp/pass" \
        -out "$off/policy.key" 2>/dev/null
openssl pkey -in "$off/policy.key" -passin file:"$tmp/pass" -pubout -out "$off/policy.pub" 2>/dev/null
out=$("$MSHIM" policy init --state-dir "$stB" --public-only "$off/policy.pub" 2>&1); rc=$?
check "policy init --public-only: policy.pub is the given key, no policy.key (rc=$rc)" bash -c \
        "[ $rc = 0 ] && cmp -s '$off/policy.pub' '$stB/policy.pub' && [ ! -e '$stB/policy.key' ] &&
         grep -q 'policy key: none here' <<<'$out'"
refused "policy init --public-only of a private key" 2 "not a PEM public key" \
        "$MSHIM" policy init --state-dir "$tmp/stC" --public-only "$off/policy.key"
refused "policy init --public-only of an RSA key" 2 "not an ECDSA P-256 key" bash -c \
        "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 2>/dev/null | openssl pkey -pubout >'$tmp/rsa.pub' 2>/dev/null;
         '$MSHIM' policy init --state-dir '$tmp/stC' --public-only '$tmp/rsa.pub'"
rm -f "$tmp/rsa.pub"
refused "approve on a machine that holds policy.pub only" 2 "holds the policy key's public part only" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --current
# A secret sealed on B: its policy names the offline key.
printf 'offline-signed secret' | "$MSHIM" seal --state-dir "$stB" -o "$tmp/b.sealed" 2>"$tmp/err" ||
        fail "seal on the public-only machine" "$(cat "$tmp/err")"
req=$tmp/req1
out=$("$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --current --entry-id off1 --label "offline one" \
        --request "$req" 2>&1); rc=$?
pending=$(ls "$stB"/requests/*.request 2>/dev/null)
check "approve --request: the request written, B keeps the same bytes in STATE/requests/, nothing on the ESP (rc=$rc)" bash -c \
        "[ $rc = 0 ] && [ -f '$req' ] && cmp -s '$req' '$pending' && [ ! -e '$apB' ]"
check "the request: its policy is its fields' (hashlib), its ahash SHA-256(policy), its key-name the offline key's Name" \
        python3 - "$req" "$(nvname)" "$off/policy.pub" <<'PY'
import hashlib, subprocess, sys
sys.path.insert(0, "tests/cli")
lines = open(sys.argv[1]).read().splitlines()
kv = dict(l.split(" ", 1) for l in lines[1:])
import approval_edit
der = subprocess.run(["openssl", "pkey", "-pubin", "-in", sys.argv[3], "-outform", "DER"], capture_output=True).stdout
x, y = der[-64:-32], der[-32:]
# TPMT_PUBLIC of mshim's LoadExternal: ECC, SHA-256, sign|userWithAuth, empty policy, no symmetric, ECDSA-SHA256, P-256, no KDF.
tpmt = bytes.fromhex("0023000b00040040" "0000" "0010" "0018000b" "0003" "0010") + b"\x00\x20" + x + b"\x00\x20" + y
name = b"\x00\x0b" + hashlib.sha256(tpmt).digest()
ok = (lines[0] == "mshim-approval-request 1" and kv["kind"] == "disk" and kv["nv-name"] == sys.argv[2]
      and approval_edit.approved(kv, bytes.fromhex(sys.argv[2])).hex() == kv["policy"]
      and kv["ahash"] == hashlib.sha256(bytes.fromhex(kv["policy"])).hexdigest() and kv["key-name"] == name.hex()
      and "signature" not in kv)
sys.exit(0 if ok else 1)
PY
out=$(notty "$MSHIM" policy sign --key "$off/policy.key" --pass-file "$tmp/pass" "$req" -o "$tmp/sig1" 2>&1); rc=$?
check "policy sign (offline, no TPM): SIG is a DER ECDSA signature of the offline key over the request's ahash (openssl; rc=$rc)" bash -c \
        "[ $rc = 0 ] && python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex([l.split()[1] for l in open(sys.argv[1]) if l.startswith(\"ahash \")][0]))' '$req' >'$tmp/ahash1' &&
         TPM2TOOLS_TCTI=none openssl pkeyutl -verify -pubin -inkey '$off/policy.pub' -in '$tmp/ahash1' -sigfile '$tmp/sig1' >/dev/null 2>&1"
check "policy sign shows what it signs: the kind, epoch, PCRs and each value" bash -c \
        "grep -q '^signing a disk approval: epoch [0-9]*, PCRs 4,5,7,9,12' <<<'$out' && grep -q '^  PCR  9: [0-9a-f]\{64\}$' <<<'$out'"
# The refusals at the signer.
refused "policy sign with another key than the request names" 2 "names another policy key" \
        "$MSHIM" policy sign --key "$tmp/evil.key" "$req" -o "$tmp/sigX"
edit values "$req" "$tmp/req-values"
refused "policy sign of a request whose values were edited (its policy no longer theirs)" 2 "its policy is not the digest" \
        notty "$MSHIM" policy sign --key "$off/policy.key" --pass-file "$tmp/pass" "$tmp/req-values" -o "$tmp/sigX"
sed 's/^ahash \(..\)/ahash 00/' "$req" >"$tmp/req-ahash"
refused "policy sign of a request whose ahash is not its policy's" 2 "its ahash is not" \
        notty "$MSHIM" policy sign --key "$off/policy.key" --pass-file "$tmp/pass" "$tmp/req-ahash" -o "$tmp/sigX"
refused "policy sign over an existing -o file" 2 "exists; not overwriting" \
        notty "$MSHIM" policy sign --key "$off/policy.key" --pass-file "$tmp/pass" "$req" -o "$tmp/sig1"
# The refusals at the install: the signature of another key, over other
# bytes, for another epoch, of a request changed on the way or not made here.
python3 - "$tmp/ahash1" "$tmp/evil.key" "$tmp/sig-evil" <<'PY'
import subprocess, sys
sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", sys.argv[2], "-in", sys.argv[1]], capture_output=True, check=True).stdout
open(sys.argv[3], "wb").write(sig)
PY
refused "install of a signature by another key (openssl) over the request's ahash" 1 "signature is not the policy key's" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig-evil" "$req"
fix pred "$tmp/other.json" "$tmp/b0/pcrs.txt"
sed -i 's/"4": "\(..\)/"4": "ff/' "$tmp/other.json"
"$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --predicted "$tmp/other.json" --entry-id off2 --request "$tmp/req2" >/dev/null 2>&1
notty "$MSHIM" policy sign --key "$off/policy.key" --pass-file "$tmp/pass" "$tmp/req2" -o "$tmp/sig2" >/dev/null 2>&1
refused "install of the offline key's signature over another request's bytes" 1 "signature is not the policy key's" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig2" "$req"
python3 - "$req" "$tmp/req-resigned" <<'PY'
import hashlib, sys
sys.path.insert(0, "tests/cli")
import approval_edit
lines = open(sys.argv[1]).read().splitlines()
kv = dict(l.split(" ", 1) for l in lines[1:])
kv["values"] = approval_edit.other_values(kv)
kv["policy"] = approval_edit.approved(kv, bytes.fromhex(kv["nv-name"])).hex()
kv["ahash"] = hashlib.sha256(bytes.fromhex(kv["policy"])).hexdigest()
open(sys.argv[2], "w").write("\n".join([lines[0]] + [l.split(" ", 1)[0] + " " + kv[l.split(" ", 1)[0]] for l in lines[1:]]) + "\n")
PY
notty "$MSHIM" policy sign --key "$off/policy.key" --pass-file "$tmp/pass" "$tmp/req-resigned" -o "$tmp/sig-resigned" >/dev/null 2>&1
check "the oracle: the request changed on the way (other values, its policy and ahash recomputed by hashlib) was signed by the fooled signer" \
        test -s "$tmp/sig-resigned"
refused "install of a request changed on the way, signed by the real key (its name is another: no such request open)" 1 "not a request this machine has open" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig-resigned" "$tmp/req-resigned"
sed 's/^label .*/label not what was asked/' "$req" >"$tmp/req-label"
refused "install of the request with its (unsigned) label changed" 1 "differs from the request this machine wrote" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig1" "$tmp/req-label"
"$MSHIM" policy approve --state-dir "$st" --esp "$tmp/espA" --current --request "$tmp/reqA" >/dev/null 2>&1
refused "install on B of a request machine A made" 1 "not a request this machine has open" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig1" "$tmp/reqA"
head -c 80 /dev/urandom >"$tmp/sig-junk"
refused "install of a signature file that is not DER ECDSA" 2 "not a DER ECDSA P-256 signature" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig-junk" "$req"
refused "approve --signature with --current (everything comes from the request)" 2 "takes everything else from the request" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig1" --current "$req"
# The install, then the secret sealed on B opens with it.
out=$("$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig1" "$req" 2>&1); rc=$?
inst=$(tail -n 1 <<<"$out")
check "approve --signature: installed (rc=$rc), verifies with the offline key (openssl), B's copy of the request gone" bash -c \
        "[ $rc = 0 ] && [ -f '$inst' ] && $(declare -f sigok); tmp='$tmp'; sigok '$inst' '$off/policy.pub' && [ ! -e '$pending' ]"
"$MSHIM" unseal --esp "$espB" "$tmp/b.sealed" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "the secret sealed on the public-only machine unseals with the approval signed offline (rc=$rc)" \
        bash -c "[ $rc = 0 ] && [ \"\$(cat '$tmp/out')\" = 'offline-signed secret' ]"
refused "the same signature installed again (B's request is closed)" 1 "not a request this machine has open" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig1" "$req"
# Signed with plain openssl (no mshim on the offline machine), from the ahash line.
"$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --predicted "$tmp/other.json" --entry-id off3 --request "$tmp/req3" >/dev/null 2>&1
python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex([l.split()[1] for l in open(sys.argv[1]) if l.startswith("ahash ")][0]))' "$tmp/req3" >"$tmp/ahash3"
openssl pkeyutl -sign -inkey "$off/policy.key" -passin file:"$tmp/pass" -in "$tmp/ahash3" -out "$tmp/sig3" 2>/dev/null
out=$("$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig3" "$tmp/req3" 2>&1); rc=$?
check "a request signed with openssl pkeyutl -sign over its ahash installs (rc=$rc)" bash -c "[ $rc = 0 ] && [ -f '$(tail -n 1 <<<"$out")' ]"
# Another epoch: the counter moves between the request and the install.
"$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --current --entry-id off4 --request "$tmp/req4" >/dev/null 2>&1
notty "$MSHIM" policy sign --key "$off/policy.key" --pass-file "$tmp/pass" "$tmp/req4" -o "$tmp/sig4" >/dev/null 2>&1
"$MSHIM" policy revoke --state-dir "$stB" --esp "$tmp/espR" >/dev/null 2>&1
refused "install after the counter moved (a revoke between request and install)" 1 "revoked since it was written" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --signature "$tmp/sig4" "$tmp/req4"
refused "approve --request over an existing file" 2 "exists; not overwriting" \
        "$MSHIM" policy approve --state-dir "$stB" --esp "$espB" --current --request "$tmp/req4"

# ---- recovery (docs/RECOVERY.md): each case made by tpm2-tools, then the
# documented commands bring unseal back -------------------------------------------------
# A fresh state directory R on this TPM: a key, a sealed secret, an approval.
tpm2_pcrreset 16 >/dev/null
R=$tmp/rstate resp=$tmp/resp
printf 'recovery secret' >"$tmp/rsecret"
"$MSHIM" policy init --state-dir "$R" >/dev/null 2>&1    # the counter and SRK exist: recorded, a key made
"$MSHIM" seal --state-dir "$R" -o "$tmp/r0.sealed" <"$tmp/rsecret" 2>/dev/null
"$MSHIM" policy approve --state-dir "$R" --esp "$resp" --current --entry-id r0 >/dev/null 2>&1
unseals() { "$MSHIM" unseal --esp "$resp" "$1" 2>"$tmp/uerr" | cmp -s - "$tmp/rsecret"; }
# names_cause NAME FILE REGEX: unseal of FILE fails, its first line that
# is not a warning (what the keyscript shows at boot) names the cause and
# the commands.
names_cause() {
        local rc
        "$MSHIM" unseal --esp "$resp" "$2" >/dev/null 2>"$tmp/uerr"; rc=$?
        if [ "$rc" != 0 ] && grep '^mshim: ' "$tmp/uerr" | grep -v '^mshim: warning: ' | head -n 1 |
           grep -q -E "^mshim: .*$3"; then pass "$1"
        else fail "$1 (status $rc)" "$(cat "$tmp/uerr")"; fi
}
check "recovery: before anything, the secret unseals" unseals "$tmp/r0.sealed"
out=$("$MSHIM" policy init --state-dir "$R" --reset 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
check "init --reset with nothing lost: exit 0, changes nothing, says so (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q 'storage root key: the recorded one' '$tmp/o' && grep -q 'epoch counter: unchanged' '$tmp/o' &&
         grep -q 'nothing: nothing was lost' '$tmp/o'"

# NV counter gone (tpm2_nvundefine): the SRK and the sealed file stay good.
cp "$resp"/loader/mshim/approvals/*.approval "$tmp/r0.approval"
c_old=$((16#$(counter)))
tpm2_nvundefine 0x01804D53 -C o >/dev/null 2>&1 || fail "tpm2_nvundefine"
names_cause "counter gone: unseal names it and the commands" "$tmp/r0.sealed" \
        "no epoch counter \(NV index 0x01804D53.*'mshim policy init --reset'.*'mshim policy approve --current'.*NV counter gone"
out=$("$MSHIM" policy approve --state-dir "$R" --esp "$resp" --current 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
check "counter gone: policy approve names it and 'mshim policy init --reset' (rc=$rc)" bash -c \
        "[ $rc = 2 ] && grep -q 'no epoch counter.*mshim policy init --reset' '$tmp/o'"
out=$("$MSHIM" policy init --state-dir "$R" --esp "$resp" --reset 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
c_new=$((16#$(counter)))
check "counter gone: init --reset makes it again above every epoch the key signed ($c_old -> $c_new, tpm2_nvread; rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q 'epoch counter: made again = $c_new' '$tmp/o' && [ $c_new -gt \$(sed -n 's/^epoch //p' '$tmp/r0.approval') ] &&
         grep -q 'storage root key: the recorded one' '$tmp/o'"
names_cause "counter gone: the old approval now refused as revoked (its copy put back), naming approve --current" \
        "$tmp/r0.sealed" "only by revoked approvals.*'mshim policy approve --current'"
"$MSHIM" policy approve --state-dir "$R" --esp "$resp" --current --entry-id r1 >/dev/null 2>&1
check "counter gone: after 'policy approve --current' the same sealed file unseals again" unseals "$tmp/r0.sealed"

# TPM cleared (tpm2_clear): SRK, counter and every sealed object gone.
cp "$R/srk.public" "$tmp/srk.before"; cp "$R/policy.key" "$tmp/rkey.before"
tpm2_clear -c p >/dev/null 2>&1 || fail "tpm2_clear"
out=$("$MSHIM" unseal --esp "$resp" "$tmp/r0.sealed" 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
check "TPM cleared: unseal names it (the seed makes another SRK: tpm2_clear), and the commands (exit 2)" bash -c \
        "[ $rc = 2 ] && head -n 1 '$tmp/o' | grep -q \"the TPM was cleared (its owner seed changed: the storage root key at 0x81000001 is gone.*'mshim policy init --reset', then enrol again\""
out=$("$MSHIM" policy init --state-dir "$R" 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
check "TPM cleared: policy init points to --reset, changes nothing" bash -c \
        "[ $rc = 2 ] && grep -q 'policy init --reset' '$tmp/o' && cmp -s '$R/policy.key' '$tmp/rkey.before'"
out=$("$MSHIM" seal --state-dir "$R" -o "$tmp/x.sealed" <"$tmp/rsecret" 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
check "TPM cleared: seal refuses, naming 'mshim policy init --reset'" bash -c \
        "[ $rc = 2 ] && grep -q 'policy init --reset' '$tmp/o' && [ ! -e '$tmp/x.sealed' ]"
out=$("$MSHIM" policy init --state-dir "$R" --esp "$resp" --reset 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
aside=$(ls "$R"/srk.public.replaced-* 2>/dev/null)
tpm2_readpublic -c 0x81000001 -o "$tmp/srk.now" >/dev/null 2>&1
check "TPM cleared: init --reset makes another SRK and records it (tpm2_readpublic -o), the old record kept aside (rc=$rc)" bash -c \
        "[ $rc = 0 ] && cmp -s '$tmp/srk.now' '$R/srk.public' && cmp -s '$aside' '$tmp/srk.before' &&
         grep -q 'ANOTHER key' '$tmp/o' && grep -q 'seal every secret again' '$tmp/o'"
check "TPM cleared: the counter made again (tpm2_nvreadpublic), the policy key kept byte for byte" bash -c \
        "tpm2_nvreadpublic 0x01804D53 >/dev/null 2>&1 && cmp -s '$R/policy.key' '$tmp/rkey.before' && grep -q 'policy key: kept' '$tmp/o'"
names_cause "TPM cleared, SRK made again: a file sealed before names the cleared TPM" "$tmp/r0.sealed" \
        "the TPM was cleared \(its owner seed changed: the storage root key at 0x81000001 is another key"
"$MSHIM" seal --state-dir "$R" -o "$tmp/r1.sealed" <"$tmp/rsecret" 2>/dev/null
"$MSHIM" policy approve --state-dir "$R" --esp "$resp" --current --entry-id r2 >/dev/null 2>&1
check "TPM cleared: after the documented commands (seal, approve --current) the secret unseals" unseals "$tmp/r1.sealed"

# SRK replaced: another key at 0x81000001 (tpm2-tools), not mshim's to remove.
tpm2_evictcontrol -C o -c 0x81000001 >/dev/null
tpm2_createprimary -C o -g sha256 -G ecc256 -c "$tmp/o.ctx" >/dev/null
tpm2_evictcontrol -C o -c "$tmp/o.ctx" 0x81000001 >/dev/null
tpm2_flushcontext -t >/dev/null
names_cause "SRK replaced: unseal names it (same owner seed) and the commands" "$tmp/r1.sealed" \
        "was replaced by another key \(the TPM's owner seed is unchanged\).*'tpm2_evictcontrol -C o -c 0x81000001' and 'mshim policy init --reset'"
refused "init --reset with another key at 0x81000001" 2 "not replacing it: if that key is yours, evict it" \
        "$MSHIM" policy init --state-dir "$R" --esp "$resp" --reset
tpm2_evictcontrol -C o -c 0x81000001 >/dev/null
names_cause "SRK evicted: unseal names it and 'mshim policy init --reset'" "$tmp/r1.sealed" \
        "was evicted \(the TPM's owner seed is unchanged\): .*'mshim policy init --reset'"
out=$("$MSHIM" policy init --state-dir "$R" --esp "$resp" --reset 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
check "SRK replaced, then evicted: init --reset makes the recorded SRK again, the same key (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q 'made again: the same key' '$tmp/o'"
check "SRK replaced: the file sealed before unseals again" unseals "$tmp/r1.sealed"

# The policy key lost: a new one, the old pair kept aside.
rm -f "$R/policy.key"
out=$("$MSHIM" policy approve --state-dir "$R" --esp "$resp" --current 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
check "key lost: policy approve refuses (rc=$rc)" test "$rc" = 2
cp "$R/policy.pub" "$tmp/rpub.before"
out=$("$MSHIM" policy init --state-dir "$R" --esp "$resp" --reset --new-key 2>&1); rc=$?; printf "%s\n" "$out" >"$tmp/o"
check "key lost: init --reset --new-key makes a new pair, the old public key kept aside, says to seal again (rc=$rc)" bash -c \
        "[ $rc = 0 ] && cmp -s \"\$(ls '$R'/policy.pub.replaced-*)\" '$tmp/rpub.before' && ! cmp -s '$R/policy.pub' '$tmp/rpub.before' &&
         openssl pkey -in '$R/policy.key' -noout 2>/dev/null && grep -q 'policy key: NEW' '$tmp/o' && grep -q 'seal every secret again' '$tmp/o'"
"$MSHIM" seal --state-dir "$R" -o "$tmp/r2.sealed" <"$tmp/rsecret" 2>/dev/null
"$MSHIM" policy approve --state-dir "$R" --esp "$resp" --current --entry-id r3 >/dev/null 2>&1
check "key lost: after seal and approve --current with the new key the secret unseals" unseals "$tmp/r2.sealed"
rm -f "$resp"/loader/mshim/approvals/r2-*
names_cause "key lost: the file sealed for the old key, the new key's approvals alone: refused, naming another policy key and enrolling again" \
        "$tmp/r1.sealed" "not signed by this secret's policy key .*'mshim policy init --reset --new-key'.*'mshim luks remove DEVICE; mshim luks enroll DEVICE'"
# A firmware update outside the policy: PCR 0, selected, differs from
# every approval.
rm -f "$resp"/loader/mshim/approvals/*.approval
"$MSHIM" policy approve --state-dir "$R" --esp "$resp" --current --select 0,4,7 --entry-id r4 >/dev/null 2>&1
check "firmware: the approval selecting PCR 0 unseals first" unseals "$tmp/r2.sealed"
tpm2_pcrextend "0:sha256=$(printf '%064x' 5)" >/dev/null
names_cause "firmware PCR changed: unseal names PCR 0, the firmware, and 'mshim policy approve --current'" "$tmp/r2.sealed" \
        "PCR 0 differs from the closest approval \(.*\), the firmware or its configuration changed.*'mshim log --pcrs 0', then approve it: 'mshim policy approve --current'"
refused "init --reset --new-key of a machine never set up" 2 "nothing to reset" \
        "$MSHIM" policy init --state-dir "$tmp/never" --reset --new-key

exit "$CLI_FAILED"
