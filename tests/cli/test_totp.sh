#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim totp enroll/remove/recover against a real TPM (swtpm). The oracles
# are independent of mshim: tpm2-tools computes the HMAC with the enrolled
# key through its own policy session (tpm2_startauthsession, tpm2_policypcr,
# tpm2_hmac) and its own trial-session policy digests, Python truncates the
# HMAC (RFC 4226 §5.3) and decodes the URI, oathtool computes the TOTP code
# from the base32 secret (RFC 6238).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
t=$(mktemp -d "$PWD/build/totptest.XXXXXX")
cli_init totp "$t"
H=0x81004d54
cli_need swtpm tpm2_hmac oathtool python3 openssl

# The ESPs' loader.conf turns the code on (enroll refuses otherwise: below).
mkdir -p "$t/esp/loader" "$t/esp2/loader" && printf 'totp show\n' >"$t/esp/loader/loader.conf" &&
        cp "$t/esp/loader/loader.conf" "$t/esp2/loader/"
# A known secret, and its base32 (RFC 4648) from Python.
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(0x30, 0x44)))' >"$t/secret"
B32=$(python3 -c 'import base64,sys; print(base64.b32encode(open(sys.argv[1],"rb").read()).decode())' "$t/secret")
echo "correct horse battery" >"$t/pw"
echo "wrong horse" >"$t/badpw"
ESP=$t/esp/loader/mshim/totp

# ---- no TPM, bad inputs: exit 2, a message, nothing written ----
export TPM2TOOLS_TCTI="swtpm:path=$t/none"
refuses "no TPM: a clear error" "cannot reach a TPM" "$MSHIM" totp enroll --state-dir "$t/state" --literal --this-boot --secret-file "$t/secret" --esp "$t/esp"
check "no TPM: no ESP file" test ! -e "$ESP"
head -c 19 "$t/secret" >"$t/short"; cat "$t/secret" "$t/secret" >"$t/long"
refuses "--secret-file of 19 bytes" "19 bytes; a TOTP secret is 20" "$MSHIM" totp enroll --state-dir "$t/state" --literal --secret-file "$t/short" --esp "$t/esp"
refuses "--secret-file of 40 bytes" "40 bytes; a TOTP secret is 20" "$MSHIM" totp enroll --state-dir "$t/state" --literal --secret-file "$t/long" --esp "$t/esp"
refuses "--secret-file missing" "cannot open" "$MSHIM" totp enroll --state-dir "$t/state" --literal --secret-file "$t/nope" --esp "$t/esp"
refuses "--signed with --literal" "exclude each other" "$MSHIM" totp enroll --state-dir "$t/state" --signed --literal --esp "$t/esp"
refuses "PRED.json without --literal" "go with --literal" "$MSHIM" totp enroll --state-dir "$t/state" --esp "$t/esp" "$t/pred.json"
refuses "policy approve --totp --current without --pcrs: past the fence" "past the TOTP fence.*--totp-point" \
        "$MSHIM" policy approve --totp --current --esp "$t/esp"
refuses "policy prune --totp reads no PCRs" "revoked approvals only" "$MSHIM" policy prune --totp --pcrs "$t/x" --esp "$t/esp"
refuses "policy approve --totp: no enrolment" "state/totp: no TOTP enrolment \(mshim totp enroll first\)" \
        "$MSHIM" policy approve --totp --predicted "$t/x" --esp "$t/esp" --state-dir "$t/state"
mkdir -p "$t/bad-esp/loader/mshim" "$t/bad-state" && printf 'mshim-totp 1\nhandle 0x81004d54\n' > "$t/bad-esp/loader/mshim/totp"
cp "$t/bad-esp/loader/mshim/totp" "$t/bad-state/totp"
refuses "policy approve --totp: an ESP enrolment without its trusted copy (an older mshim's): re-enrol" \
        "nostate/totp: no trusted copy of the TOTP enrolment .*bad-esp/loader/mshim/totp .*re-enrol" \
        "$MSHIM" policy approve --totp --predicted "$t/x" --esp "$t/bad-esp" --state-dir "$t/nostate"
refuses "policy approve --totp: a damaged trusted enrolment file, named" "bad-state/totp: .*damaged" \
        "$MSHIM" policy approve --totp --predicted "$t/x" --esp "$t/bad-esp" --state-dir "$t/bad-state"
refuses "totp remove: a damaged enrolment file, named, left for the admin" "bad-esp/loader/mshim/totp: remove the file by hand" \
        "$MSHIM" totp remove --state-dir "$t/nostate" --esp "$t/bad-esp"
[ -f "$t/bad-esp/loader/mshim/totp" ] && pass "totp remove: the damaged file is still there" ||
        fail "totp remove: the damaged file is still there"
refuses "--password-file without --recovery-file" "goes with --recovery-file" "$MSHIM" totp enroll --state-dir "$t/state" --literal --password-file "$t/pw"
refuses "--select 24" "--select wants PCR numbers" "$MSHIM" totp enroll --state-dir "$t/state" --literal --select 4,24 --esp "$t/esp"
refuses "a 65-byte label" "label must be 1 to 64 bytes" "$MSHIM" totp enroll --state-dir "$t/state" --literal --secret-file "$t/secret" \
        --label "$(printf 'x%.0s' {1..65})" --esp "$t/esp"
refuses "no ESP directory" "not a directory" "$MSHIM" totp enroll --state-dir "$t/state" --literal --secret-file "$t/secret" --esp "$t/noesp"
refuses "unknown totp command" "unknown totp command 'show'" "$MSHIM" totp show
refuses "recover: no file" "takes one FILE" "$MSHIM" totp recover
refuses "remove does not take --label" "totp remove does not take --label" "$MSHIM" totp remove --state-dir "$t/state" --label x
refuses "recover does not take --esp" "totp recover does not take --esp" "$MSHIM" totp recover --esp x f
refuses "enroll does not take --time" "totp enroll does not take --time" "$MSHIM" totp enroll --state-dir "$t/state" --time 5
refuses "recover --time: seconds" "--time wants seconds" "$MSHIM" totp recover --time yesterday f

# ---- a TPM ----
cli_swtpm "$t" || { fail "swtpm starts"; exit 1; }
# A boot through mshim, as an event log and the same extends into the TPM
# (as tests/cli/test_tpm.sh): Secure Boot (7), mshim (4), loader.conf (5),
# the kernel (4), the command line (12, EV_IPL), the initrd the code vouches
# for (12, tag 0x6d736809: docs/MEASUREMENTS.md; the TOTP point); then what
# comes after the code is shown: Exit Boot Services (5) and a fence (12).
python3 - "$t/log.bin" "$t/pre.txt" "$t/post.txt" "$t/short.bin" <<'PY'
import hashlib, struct, sys
algs = [(0x0004, 20, "sha1"), (0x000B, 32, "sha256")]
spec = b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 0, 2, len(algs))
spec += b"".join(struct.pack("<HH", a, s) for a, s, _ in algs) + b"\0"
log = struct.pack("<II20sI", 0, 3, b"\0" * 20, len(spec)) + spec
events = [(7, 0x80000001, b"SecureBoot"), (4, 0x80000003, b"mshim"), (5, 6, b"loader.conf"),
          (4, 0x80000003, b"kernel"), (12, 0x0D, "root=/dev/vda\0".encode("utf-16-le")),
          (12, 6, struct.pack("<IIQ", 0x6d736809, 40, 3) + hashlib.sha256(b"abc").digest()),
          (5, 0x80000007, b"Exit Boot Services Invocation"), (12, 6, b"fence")]
out = [[], []]
short = None
for i, (pcr, typ, data) in enumerate(events):
    if i == 6:
        short = log
    log += struct.pack("<III", pcr, typ, len(algs))
    spec = []
    for a, s, name in algs:
        d = hashlib.new(name, data).digest()
        log += struct.pack("<H", a) + d
        spec.append(f"{name}=0x{d.hex()}")
    log += struct.pack("<I", len(data)) + data
    out[i >= 6].append(f"{pcr}:" + ",".join(spec))
open(sys.argv[1], "wb").write(log)
open(sys.argv[4], "wb").write(short)
for f, lines in zip(sys.argv[2:4], out):
    open(f, "w").write("\n".join(lines) + "\n")
PY
# reboot: PCRs back to their reset values (persistent objects stay).
reboot_tpm() { swtpm_ioctl --unix "$t/srv.ctrl" -i >/dev/null && tpm2_startup -c || fail "swtpm reset"; }
cli_extend "$t/pre.txt"; cli_extend "$t/post.txt"

refuses "--log cut short: not the TPM's" "does not replay to the TPM's sha256 PCR 5" "$MSHIM" totp enroll --state-dir "$t/state" --literal --this-boot \
        --secret-file "$t/secret" --log "$t/short.bin" --esp "$t/esp"
refuses "--log without the command line event" "no EV_IPL event in PCR 12" "$MSHIM" totp enroll --state-dir "$t/state" --literal --this-boot \
        --secret-file "$t/secret" --log tests/data/eventlogs/tpm2-tools-event.bin --esp "$t/esp"
refuses "--log of another kind of file" "not a TCG event log" "$MSHIM" totp enroll --state-dir "$t/state" --literal --this-boot \
        --secret-file "$t/secret" --log "$t/secret" --esp "$t/esp"
refuses "--pcrs and --log" "excludes --log and --this-boot" "$MSHIM" totp enroll --state-dir "$t/state" --literal --pcrs "$t/x" --log "$t/log.bin"
check "refusals touch neither the TPM nor the ESP" bash -c "! tpm2_readpublic -c $H >/dev/null 2>&1 && [ ! -e '$ESP' ]"
"$MSHIM" totp enroll --state-dir "$t/state" --literal --this-boot --log "$t/log.bin" --secret-file "$t/secret" --label "test host:alice" --esp "$t/esp" --uri \
        --recovery-file "$t/rec" --password-file "$t/pw" >"$t/uri" 2>"$t/err"; rc=$?
if [ "$rc" = 0 ] && [ "$(wc -l <"$t/uri")" = 1 ]; then pass "enroll --literal --uri: one line"
else fail "enroll --literal --uri: one line (status $rc)" "$(cat "$t/err")"; fi

# The URI, decoded by Python: the otpauth:// key URI tpm2-totp also writes.
check "the URI: otpauth://totp/LABEL, the file's secret, SHA1, 6 digits, 30 s, issuer mshim" python3 - "$t/uri" "$t/secret" <<'PY'
import base64, sys, urllib.parse
u = urllib.parse.urlsplit(open(sys.argv[1]).read().strip())
q = dict(urllib.parse.parse_qsl(u.query, strict_parsing=True))
assert (u.scheme, u.netloc) == ("otpauth", "totp"), u
assert urllib.parse.unquote(u.path) == "/test host:alice", u.path
assert base64.b32decode(q["secret"]) == open(sys.argv[2], "rb").read()
assert q == {"secret": q["secret"], "issuer": "mshim", "algorithm": "SHA1", "digits": "6", "period": "30"}, q
PY

# The key, as tpm2-tools reads it: KEYEDHASH HMAC-SHA1, policy only.
tpm2_readpublic -c $H -o "$t/pub.bin" >"$t/pub.yaml" 2>"$t/err" || fail "tpm2_readpublic $H" "$(cat "$t/err")"
check "the key: keyedhash, hmac sha1" python3 - "$t/pub.yaml" <<'PY'
import re, sys
y = re.sub(r"\s+", " ", open(sys.argv[1]).read())
assert "type: value: keyedhash" in y and "algorithm: value: hmac" in y and "hash-alg: value: sha1" in y, y
PY
check "the key: attributes fixedtpm|fixedparent|adminwithpolicy|noda|sign, no userwithauth" \
        grep -q -E "^ *value: fixedtpm\|fixedparent\|adminwithpolicy\|noda\|sign$" "$t/pub.yaml"
check "the key's Name is the ESP file's" bash -c \
        "grep -q \"^name \$(sed -n 's/^name: //p' '$t/pub.yaml')\$\" '$ESP'"
# This TPM is past the TOTP point (Exit Boot Services, the fence): no code.
python3 -c 'import sys; sys.stdout.buffer.write(bytes(8))' >"$t/msg"
check "after the TOTP point the key refuses (PCR 5 and 12 moved on)" bash -c \
        "tpm2_startauthsession --policy-session -S '$t/s0.ctx' >/dev/null && tpm2_policypcr -S '$t/s0.ctx' -l sha256:4,5,7,12 >/dev/null &&
         ! tpm2_hmac -c $H -g sha1 -p 'session:$t/s0.ctx' '$t/msg' >/dev/null 2>&1"
# (PolicyOR alone would need this state's leaf: none of the key's.)
tpm2_flushcontext -s
# Boot again up to the TOTP point: the state the code is made in.
reboot_tpm; cli_extend "$t/pre.txt"
# The policy: tpm2-tools' own PolicyPCR digest of the TPM's PCRs there.
tpm2_startauthsession -S "$t/trial.ctx" && tpm2_policypcr -S "$t/trial.ctx" -l sha256:4,5,7,12 -L "$t/leaf0.bin" >/dev/null &&
        tpm2_flushcontext "$t/trial.ctx" || fail "tpm2 trial PolicyPCR"
# One state: the OR tree's group of one, PolicyOR(leaf, leaf) (src/policy.c).
tpm2_startauthsession -S "$t/trial.ctx" &&
        tpm2_policyor -S "$t/trial.ctx" -l "sha256:$t/leaf0.bin,$t/leaf0.bin" -L "$t/or0.bin" >/dev/null &&
        tpm2_flushcontext "$t/trial.ctx" || fail "tpm2 trial PolicyOR"
LEAF0=$(xxd -p -c 64 "$t/or0.bin")
check "authPolicy = tpm2_policypcr's digest, in the key and in the ESP file" bash -c \
        "grep -q '^ *authorization policy: $LEAF0\$' '$t/pub.yaml' && grep -q '^policy $LEAF0\$' '$ESP'"
check "ESP file: strict lines" python3 - "$ESP" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[0] == "mshim-totp 1" and lines[1] == "handle 0x81004d54", lines[:2]
assert [l.split(" ")[0] for l in lines[2:-1]] == ["name", "policy", "mode", "bank", "pcrs", "state"], lines
assert lines[4:7] == ["mode literal", "bank sha256", "pcrs 4,5,7,12"] and lines[-1] == ""
PY
check "literal: no TOTP approval written" test ! -e "$t/esp/loader/mshim/totp-approvals"
check "enroll: the trusted copy in the state directory, the ESP file's bytes" cmp -s "$ESP" "$t/state/totp"
# A literal enrolment (both copies), for policy approve --totp's refusal below.
mkdir -p "$t/esplit/loader/mshim" "$t/litstate" && cp "$ESP" "$t/esplit/loader/mshim/totp" && cp "$ESP" "$t/litstate/totp"

# step_msg TIME: RFC 6238's T = TIME / 30 as 8 bytes big-endian, into $t/msg.
step_msg() { printf '%016x' $(($1 / 30)) | xxd -r -p >"$t/msg"; }
# hmac_code TIME: the code through the TPM, with tpm2-tools' policy session
# (PolicyPCR, PolicyOR(leaf, leaf)), truncated here; empty when refused.
hmac_code() {
        step_msg "$1"
        rm -f "$t/mac"
        tpm2_startauthsession --policy-session -S "$t/s.ctx" >/dev/null &&
                tpm2_policypcr -S "$t/s.ctx" -l sha256:4,5,7,12 >/dev/null &&
                tpm2_policyor -S "$t/s.ctx" -l "sha256:$t/leaf0.bin,$t/leaf0.bin" >/dev/null 2>&1 &&
                tpm2_hmac -c $H -g sha1 -p "session:$t/s.ctx" -o "$t/mac" "$t/msg" 2>"$t/hmac.err"
        tpm2_flushcontext "$t/s.ctx" 2>/dev/null
        [ -s "$t/mac" ] || return 0
        # RFC 4226 §5.3: offset = low nibble of the last byte; 31 bits there.
        local h o
        h=$(xxd -p -c 64 "$t/mac"); o=$((16#${h:39:1}))
        printf '%06d\n' $(((16#${h:$((2 * o)):8} & 0x7fffffff) % 1000000))
}
for T in 59 1111111109 2000000000 1764800000; do
        want=$(oathtool --totp -b "$B32" -N "@$T")
        got=$(hmac_code $T)
        if [ -n "$got" ] && [ "$got" = "$want" ]; then pass "TPM2_HMAC with the key at $T = oathtool --totp ($want)"
        else fail "TPM2_HMAC with the key at $T = oathtool --totp" "TPM: '$got' oathtool: '$want' $(cat "$t/hmac.err")"; fi
done
now=$(date +%s); got=$(hmac_code "$now"); want=$(oathtool --totp -b "$B32" -N "@$now")
check "TPM2_HMAC now = oathtool --totp --now" test -n "$got" -a "$got" = "$want"
# Without the policy: no password/HMAC session opens it (no userWithAuth).
check "the key refuses a password session" bash -c "! tpm2_hmac -c $H -g sha1 -o '$t/mac2' '$t/msg' 2>/dev/null"

# ---- never twice ----
refuses "enroll twice: refused (ESP file)" "never overwrites an enrolment" \
        "$MSHIM" totp enroll --state-dir "$t/state" --literal --secret-file "$t/secret" --esp "$t/esp" --uri
refuses "enroll twice: refused (the trusted copy)" "state/totp: a TOTP enrolment exists" \
        "$MSHIM" totp enroll --state-dir "$t/state" --literal --secret-file "$t/secret" --esp "$t/esp2" --uri
refuses "enroll twice: refused (key at the handle)" "already has an object at 0x81004d54" \
        "$MSHIM" totp enroll --state-dir "$t/state2" --literal --this-boot --secret-file "$t/secret" --esp "$t/esp2" --uri
check "a refused enrolment writes nothing" test ! -e "$t/esp2/loader/mshim/totp"

# ---- the recovery file ----
check "recovery file: 0600" test "$(stat -c %a "$t/rec")" = 600
for T in 59 1234567890; do
        got=$("$MSHIM" totp recover --password-file "$t/pw" --time $T "$t/rec" 2>"$t/err")
        want=$(oathtool --totp -b "$B32" -N "@$T")
        check "recover --time $T = oathtool ($want)" test "$got" = "$want"
done
refuses "recover: wrong password" "wrong password" "$MSHIM" totp recover --password-file "$t/badpw" "$t/rec"
"$MSHIM" totp recover --password-file "$t/pw" --secret-out "$t/secret.out" "$t/rec" 2>"$t/err"
check "recover --secret-out: the secret, 0600" bash -c "cmp -s '$t/secret' '$t/secret.out' && [ \$(stat -c %a '$t/secret.out') = 600 ]"
refuses "recover --secret-out: never over a file" "exists" "$MSHIM" totp recover --password-file "$t/pw" --secret-out "$t/secret.out" "$t/rec"
sed 's/^label test host:alice$/label test host:mallory/' "$t/rec" >"$t/rec.label"
refuses "recover: a changed label fails authentication" "wrong password \(or the file was changed\)" \
        "$MSHIM" totp recover --password-file "$t/pw" "$t/rec.label"
sed 's/^scrypt-log2-n 17$/scrypt-log2-n 10/' "$t/rec" >"$t/rec.weak"
refuses "recover: a weakened scrypt cost is refused" "scrypt cost 2\^10" "$MSHIM" totp recover --password-file "$t/pw" "$t/rec.weak"
{ cat "$t/rec"; echo "extra line"; } >"$t/rec.extra"
refuses "recover: an extra line is refused" "not a mshim TOTP recovery file" "$MSHIM" totp recover --password-file "$t/pw" "$t/rec.extra"
# Its scrypt and AES-256-GCM, checked with Python's hashlib and OpenSSL (via the
# cryptography-free route: hashlib.scrypt for the key, openssl enc cannot do GCM).
check "recovery file: scrypt(N=2^17, r=8, p=1) key, AES-256-GCM over the secret with the header as AAD" python3 - "$t/rec" "$t/pw" "$t/secret" <<'PY'
import hashlib, sys, ctypes, ctypes.util
text = open(sys.argv[1], "rb").read()
f = dict(l.split(b" ", 1) for l in text.split(b"\n")[1:-1])
pw = open(sys.argv[2], "rb").read().split(b"\n")[0]
assert f[b"kdf"] == b"scrypt" and f[b"scrypt-log2-n"] == b"17" and f[b"cipher"] == b"aes-256-gcm"
key = hashlib.scrypt(pw, salt=bytes.fromhex(f[b"salt"].decode()), n=2**17, r=8, p=1, maxmem=2**28, dklen=32)
aad = text[:text.index(b"\nsecret ") + 1]
# AES-256-GCM decryption through libcrypto's EVP interface (ctypes).
c = ctypes.CDLL(ctypes.util.find_library("crypto"))
c.EVP_CIPHER_CTX_new.restype = ctypes.c_void_p
c.EVP_aes_256_gcm.restype = ctypes.c_void_p
ctx = ctypes.c_void_p(c.EVP_CIPHER_CTX_new())
n = ctypes.c_int(0)
ct, tag, iv = (bytes.fromhex(f[k].decode()) for k in (b"secret", b"tag", b"nonce"))
out = ctypes.create_string_buffer(64)
assert c.EVP_DecryptInit_ex(ctx, ctypes.c_void_p(c.EVP_aes_256_gcm()), None, key, iv) == 1
assert c.EVP_DecryptUpdate(ctx, None, ctypes.byref(n), aad, len(aad)) == 1
assert c.EVP_DecryptUpdate(ctx, out, ctypes.byref(n), ct, len(ct)) == 1
assert c.EVP_CIPHER_CTX_ctrl(ctx, 0x11, 16, tag) == 1          # EVP_CTRL_GCM_SET_TAG
assert c.EVP_DecryptFinal_ex(ctx, ctypes.byref(out, n.value), ctypes.byref(n)) == 1
assert out.raw[:20] == open(sys.argv[3], "rb").read()
PY

# ---- a changed boot: the TPM refuses ----
cli_extend "$t/post.txt"
check "after the fence (PCR 12) the TPM refuses the HMAC" test -z "$(hmac_code 59)"
reboot_tpm; cli_extend "$t/pre.txt"; tpm2_pcrextend "4:sha256=$(printf '%064x' 99)"
check "another kernel (PCR 4): the TPM refuses the HMAC" test -z "$(hmac_code 59)"

# ---- remove ----
"$MSHIM" totp remove --state-dir "$t/state" --esp "$t/esp" >"$t/out" 2>"$t/err"; rc=$?
check "remove: exit 0" test "$rc" = 0
check "remove: the key is gone" bash -c "! tpm2_readpublic -c $H >/dev/null 2>&1"
check "remove: the ESP file is gone" test ! -e "$ESP"
check "remove: the trusted copy is gone" test ! -e "$t/state/totp"
refuses "remove again: nothing is enrolled" "nothing is enrolled" "$MSHIM" totp remove --state-dir "$t/state" --esp "$t/esp"
# Another object at the handle is never evicted.
tpm2_createprimary -C o -G ecc -c "$t/prim.ctx" >/dev/null && tpm2_evictcontrol -C o -c "$t/prim.ctx" $H >/dev/null
tpm2_flushcontext -t     # no resource manager: free the transient slots
refuses "remove: refuses an object that is not a TOTP key" "not a mshim TOTP key" "$MSHIM" totp remove --state-dir "$t/state" --esp "$t/esp"
check "...and leaves it" tpm2_readpublic -c $H >/dev/null
tpm2_evictcontrol -C o -c $H >/dev/null

# ---- literal with a predicted state: PolicyOR of two PolicyPCR leaves ----
# The predicted state is the TPM's after one more extend of PCR 7.
tpm2_pcrread sha256:4,5,7,12 -o "$t/now.bin" >"$t/now.yaml"
python3 - "$t/now.bin" "$t/pred.json" "$t/predvals.bin" <<'PY'
import hashlib, json, sys
now = open(sys.argv[1], "rb").read()
vals = [now[i * 32:(i + 1) * 32] for i in range(4)]
vals[2] = hashlib.sha256(vals[2] + bytes.fromhex("%064x" % 77)).digest()
pcrs = {str(p): v.hex() for p, v in zip((4, 5, 7, 12), vals)}
json.dump({"schema": "mshim-predict/1", "point": "totp", "pcrs": {"sha256": pcrs}, "unpredictable": {}},
          open(sys.argv[2], "w"))
open(sys.argv[3], "wb").write(b"".join(vals))
PY
# The same values as an end-of-boot prediction, and as one that does not
# say its point (an older mshim's): refused, no key made, nothing written.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["point"] = "boot"; json.dump(d, open(sys.argv[2], "w"))
del d["point"]; json.dump(d, open(sys.argv[3], "w"))' "$t/pred.json" "$t/boot.json" "$t/nopoint.json"
for f in boot nopoint; do
        refuses "enroll --literal refuses a PRED.json that is not of the TOTP point ($f)" \
                "$f.json: (a prediction of the end of the boot|this prediction does not say which point).*--totp-point" \
                "$MSHIM" totp enroll --state-dir "$t/state" --literal --pcrs "$t/now.yaml" --secret-file "$t/secret" \
                --esp "$t/esp" --uri "$t/$f.json"
        check "... nothing enrolled: no key at $H, no enrolment file ($f)" \
                bash -c "! tpm2_readpublic -c $H >/dev/null 2>&1 && [ ! -e '$ESP' ] && [ ! -e '$t/state/totp' ]"
done
"$MSHIM" totp enroll --state-dir "$t/state" --literal --pcrs "$t/now.yaml" --secret-file "$t/secret" --esp "$t/esp" --uri "$t/pred.json" \
        >/dev/null 2>"$t/err" || fail "enroll --literal --pcrs PRED.json" "$(cat "$t/err")"
tpm2_startauthsession -S "$t/trial.ctx" && tpm2_policypcr -S "$t/trial.ctx" -l sha256:4,5,7,12 -L "$t/leaf0.bin" >/dev/null &&
        tpm2_flushcontext "$t/trial.ctx"
tpm2_startauthsession -S "$t/trial.ctx" &&
        tpm2_policypcr -S "$t/trial.ctx" -l sha256:4,5,7,12 -f "$t/predvals.bin" -L "$t/leaf1.bin" >/dev/null &&
        tpm2_flushcontext "$t/trial.ctx"
tpm2_startauthsession -S "$t/trial.ctx" &&
        tpm2_policyor -S "$t/trial.ctx" -l "sha256:$t/leaf0.bin,$t/leaf1.bin" -L "$t/or.bin" >/dev/null &&
        tpm2_flushcontext "$t/trial.ctx"
check "two states: authPolicy = tpm2_policyor of both leaves" grep -q "^policy $(xxd -p -c 64 "$t/or.bin")\$" "$ESP"
check "two states: two 'state' lines" test "$(grep -c '^state ' "$ESP")" = 2
# hmac_or TIME: PolicyPCR, PolicyOR, HMAC (the loader's literal sequence).
hmac_or() {
        step_msg "$1"
        rm -f "$t/mac"
        tpm2_startauthsession --policy-session -S "$t/s.ctx" >/dev/null && tpm2_policypcr -S "$t/s.ctx" -l sha256:4,5,7,12 >/dev/null &&
                tpm2_policyor -S "$t/s.ctx" -l "sha256:$t/leaf0.bin,$t/leaf1.bin" >/dev/null 2>&1 &&
                tpm2_hmac -c $H -g sha1 -p "session:$t/s.ctx" -o "$t/mac" "$t/msg" 2>/dev/null
        tpm2_flushcontext "$t/s.ctx" 2>/dev/null
        [ -s "$t/mac" ] && xxd -p "$t/mac"
}
want=$(python3 -c 'import hmac,hashlib,struct,sys; print(hmac.new(open(sys.argv[1],"rb").read(), struct.pack(">Q", 1), hashlib.sha1).hexdigest())' "$t/secret")
check "two states: the current one gives the HMAC" test "$(hmac_or 59)" = "$want"
tpm2_pcrextend "7:sha256=$(printf '%064x' 77)"
check "two states: the predicted one gives the HMAC" test "$(hmac_or 59)" = "$want"
tpm2_pcrextend "7:sha256=$(printf '%064x' 77)"
check "two states: a third one does not" test -z "$(hmac_or 59)"
"$MSHIM" totp remove --state-dir "$t/state" --esp "$t/esp" >/dev/null 2>&1 || fail "remove after the literal PRED.json enrolment"

# ---- signed: PolicyAuthorize by the policy key, policyRef "mshim-totp" ----
refuses "policy approve --totp: a literal enrolment" "the TOTP enrolment is literal: re-enrol with --signed to use approvals" \
        "$MSHIM" policy approve --totp --predicted "$t/pred.json" --esp "$t/esplit" --state-dir "$t/litstate"
"$MSHIM" policy init --state-dir "$t/state" >/dev/null 2>"$t/err" || fail "mshim policy init" "$(cat "$t/err")"
tpm2_flushcontext -t
refuses "--signed without a policy key" "policy init" "$MSHIM" totp enroll --signed --this-boot --state-dir "$t/nostate" --esp "$t/esp"
check "a refused signed enrolment writes no approval" test ! -e "$t/esp/loader/mshim/totp-approvals"
# This boot, whole (its log replays to the TPM): the first approval is of
# the log cut at the TOTP point.
reboot_tpm; cli_extend "$t/pre.txt"; cli_extend "$t/post.txt"
TA=$t/esp/loader/mshim/totp-approvals
# The first approval cannot be written (a file where its directory goes):
# the enrolment is undone.
: >"$TA"
refuses "signed: the first approval cannot be written: refused" "totp-approvals/enrolment-.*Not a directory" \
        "$MSHIM" totp enroll --signed --this-boot --state-dir "$t/state" --secret-file "$t/secret" --esp "$t/esp" --log "$t/log.bin" --uri
check "signed: ... and undone: no key, no ESP file" bash -c "! tpm2_readpublic -c $H >/dev/null 2>&1 && [ ! -e '$ESP' ]"
rm -f "$TA"
"$MSHIM" totp enroll --signed --this-boot --state-dir "$t/state" --secret-file "$t/secret" --esp "$t/esp" --log "$t/log.bin" --uri \
        >"$t/uri" 2>"$t/err" || fail "enroll --signed" "$(cat "$t/err")"
A=$(sed -n 's/^approval of this boot.s TOTP point: //p' "$t/err")
check "signed: the first TOTP approval, its path said, in totp-approvals" bash -c \
        "[ -f '$A' ] && [ '${A%/*}' = '$TA' ] && [ \$(ls '$TA' | wc -l) = 1 ] && grep -qx 'label enrolment' '$A'"
check "signed --uri: stdout is the URI alone" test "$(wc -l <"$t/uri")" = 1
check "signed: the approval's PCRs are the enrolment's" test "$(sed -n 's/^pcrs //p' "$A")" = "$(sed -n 's/^pcrs //p' "$ESP")"
# tpm2-tools' PolicyAuthorize digest for the same key (loaded as mshim
# loads it: ECDSA-SHA256 signing key, userWithAuth, in the owner hierarchy
# so that VerifySignature gives a ticket), with the policyRef.
tpm2_loadexternal -C o -G ecc:ecdsa-sha256:null -a "sign|userwithauth" -u "$t/state/policy.pub" -n "$t/key.name" \
        -c "$t/key.ctx" >/dev/null 2>"$t/err" || fail "tpm2_loadexternal" "$(cat "$t/err")"
# policyRef: "mshim-totp" then the TPML_PCR_SELECTION of the enrolment's
# PCRs (TPM 2.0 Part 2 §10.9.7: count 1, TPM_ALG_SHA256, sizeofSelect 3,
# the bitmap): ref_for MASK-BYTES FILE. The old policyRef was "mshim-totp" alone.
ref_for() { python3 -c 'import struct,sys; open(sys.argv[2],"wb").write(b"mshim-totp" + struct.pack(">IHB", 1, 0xb, 3) + bytes.fromhex(sys.argv[1]))' "$1" "$2"; }
ref_for b01000 "$t/ref"; ref_for 800000 "$t/ref7"; printf 'mshim-totp' >"$t/oldref"; : >"$t/empty"
head -c 32 /dev/zero >"$t/zero32"
# authPolicy: PolicyAuthorize(policy key, ref), then PolicyPCR(sha256 PCR 13 = 32 zero bytes).
tpm2_startauthsession -S "$t/trial.ctx" &&
        tpm2_policyauthorize -S "$t/trial.ctx" -q "$t/ref" -n "$t/key.name" >/dev/null 2>"$t/err" &&
        tpm2_policypcr -S "$t/trial.ctx" -l sha256:13 -f "$t/zero32" -L "$t/auth.bin" >/dev/null 2>>"$t/err" &&
        tpm2_flushcontext "$t/trial.ctx" || fail "tpm2_policyauthorize, tpm2_policypcr (trial)" "$(cat "$t/err")"
AUTH=$(xxd -p -c 64 "$t/auth.bin")
check "signed: authPolicy = tpm2-tools' PolicyAuthorize(policyRef mshim-totp || selection 4,5,7,12) then PolicyPCR(13 = 0), in the key and the ESP file" bash -c \
        "tpm2_readpublic -c $H | grep -q '^ *authorization policy: $AUTH\$' && grep -q '^policy $AUTH\$' '$ESP'"
check "signed: the trusted copy in the state directory, the ESP file's bytes" cmp -s "$ESP" "$t/state/totp"
# An enrolment made by an older mshim: authPolicy PolicyAuthorize(policy
# key, "mshim-totp") alone (tpm2-tools' digest), both copies alike: refused.
tpm2_startauthsession -S "$t/trial.ctx" &&
        tpm2_policyauthorize -S "$t/trial.ctx" -q "$t/oldref" -n "$t/key.name" -L "$t/oldauth.bin" >/dev/null 2>"$t/err" &&
        tpm2_flushcontext "$t/trial.ctx" || fail "tpm2_policyauthorize (trial, old policyRef)" "$(cat "$t/err")"
mkdir -p "$t/oldesp/loader/mshim" "$t/oldstate" && cp "$t/state/policy.key" "$t/state/policy.pub" "$t/oldstate/" &&
        sed "s/^policy .*/policy $(xxd -p -c 64 "$t/oldauth.bin")/" "$ESP" >"$t/oldstate/totp" &&
        cp "$t/oldstate/totp" "$t/oldesp/loader/mshim/totp"
refuses "policy approve --totp: an enrolment whose key policy is the old one (no selection, no PCR 13): re-enrol" \
        "oldstate/totp: the TOTP key's policy does not bind its PCR selection and the fence in PCR 13 .*re-enrol" \
        "$MSHIM" policy approve --totp --state-dir "$t/oldstate" --esp "$t/oldesp" --current --pcrs "$t/x"
check "... nothing written" test ! -e "$t/oldesp/loader/mshim/totp-approvals"
check "signed: the ESP file has the policy key, the counter and no states" bash -c \
        "grep -q '^mode signed\$' '$ESP' && grep -q '^policy-key ' '$ESP' && grep -q '^nv-index 0x01804d53\$' '$ESP' &&
         grep -q \"^nv-name \$(tpm2_nvreadpublic 0x01804d53 | sed -n 's/^ *name: //p')\$\" '$ESP' && ! grep -q '^state ' '$ESP'"
# The signature, checked by openssl alone: ECDSA over SHA-256(approvedPolicy
# || "mshim-totp"), and not over SHA-256(approvedPolicy) (a disk approval's).
# sig_over A REF: the approval A's signature verifies over policy || REF.
sig_over() {
        sed -n 's/^policy //p' "$1" | xxd -r -p >"$t/sv.pol"; cat "$2" >>"$t/sv.pol"
        sed -n 's/^signature //p' "$1" | xxd -r -p >"$t/sv.sig"
        openssl dgst -sha256 -verify "$t/state/policy.pub" -signature "$t/sv.sig" "$t/sv.pol" >/dev/null 2>&1
}
check "signed: the TOTP approval's signature is over SHA-256(policy || \"mshim-totp\" || selection) (openssl)" sig_over "$A" "$t/ref"
if sig_over "$A" "$t/empty"; then fail "signed: the TOTP approval does not verify over SHA-256(policy) alone"
else pass "signed: the TOTP approval does not verify over SHA-256(policy) alone"; fi
# use_approval A REF: A's policy, signature, epoch and aHash for hmac_signed.
use_approval() {
        sed -n 's/^policy //p' "$1" | xxd -r -p >"$t/approved.bin"
        sed -n 's/^signature //p' "$1" | xxd -r -p >"$t/sig.der"
        printf '%016x' "$(sed -n 's/^epoch //p' "$1")" | xxd -r -p >"$t/epoch.bin"
        cat "$t/approved.bin" "$2" | openssl dgst -sha256 -binary >"$t/ahash.bin"
        cp "$2" "$t/use.ref"
}
# hmac_signed TIME: the code through the signed policy, tpm2-tools' own
# sequence: PolicyNV (epoch), PolicyPCR (of USE_PCRS), VerifySignature of
# aHash = SHA-256(approvedPolicy || policyRef), PolicyAuthorize with the
# policyRef, PolicyPCR of PCR 13 (the TPM's value: the key's policy wants
# zeros); empty when refused.
USE_PCRS=sha256:4,5,7,12
hmac_signed() {
        step_msg "$1"; rm -f "$t/mac"
        # (loaded each time: a TPM reset drops transient objects; no
        # resource manager: free the transient slots first)
        tpm2_flushcontext -t 2>/dev/null
        tpm2_loadexternal -C o -G ecc:ecdsa-sha256:null -a "sign|userwithauth" -u "$t/state/policy.pub" \
                -c "$t/key.ctx" >/dev/null 2>&1 &&
                tpm2_verifysignature -c "$t/key.ctx" -d "$t/ahash.bin" -s "$t/sig.der" -f ecdsa -t "$t/ticket.bin" >/dev/null 2>&1 &&
                tpm2_startauthsession --policy-session -S "$t/s.ctx" >/dev/null &&
                tpm2_policynv -S "$t/s.ctx" -C 0x01804d53 -i "$t/epoch.bin" 0x01804d53 ule >/dev/null 2>&1 &&
                tpm2_policypcr -S "$t/s.ctx" -l "$USE_PCRS" >/dev/null &&
                tpm2_policyauthorize -S "$t/s.ctx" -i "$t/approved.bin" -q "$t/use.ref" -n "$t/key.name" -t "$t/ticket.bin" \
                        >/dev/null 2>&1 &&
                tpm2_policypcr -S "$t/s.ctx" -l sha256:13 >/dev/null &&
                tpm2_hmac -c $H -g sha1 -p "session:$t/s.ctx" -o "$t/mac" "$t/msg" 2>/dev/null
        tpm2_flushcontext "$t/s.ctx" 2>/dev/null
        tpm2_flushcontext "$t/key.ctx" 2>/dev/null
        [ -s "$t/mac" ] || return 0
        local h o
        h=$(xxd -p -c 64 "$t/mac"); o=$((16#${h:39:1}))
        printf '%06d\n' $(((16#${h:$((2 * o)):8} & 0x7fffffff) % 1000000))
}
want=$(oathtool --totp -b "$B32" -N @1111111109)
use_approval "$A" "$t/ref"
check "signed: past the fence the enrolment approval gives no code" test -z "$(hmac_signed 1111111109)"
# The next boot, up to the TOTP point: the state the enrolment approved.
reboot_tpm; cli_extend "$t/pre.txt"
check "signed: at the TOTP point the enrolment approval gives the code (= oathtool)" \
        test "$(hmac_signed 1111111109)" = "$want"
# A disk approval of the same state (no --totp: empty policyRef) never
# opens the TOTP key, with either policyRef.
"$MSHIM" policy approve --state-dir "$t/state" --esp "$t/esp" --select 4,5,7,12 --current >"$t/disk.path" 2>"$t/err" ||
        fail "mshim policy approve --current (disk)" "$(cat "$t/err")"
D=$(cat "$t/disk.path")
check "a disk approval goes to loader/mshim/approvals" test "${D%/*}" = "$t/esp/loader/mshim/approvals"
use_approval "$D" "$t/empty"
check "signed: a disk approval of this very state gives no code (empty policyRef)" test -z "$(hmac_signed 1111111109)"
cp "$t/ref" "$t/use.ref"
check "signed: ... nor with the TOTP policyRef" test -z "$(hmac_signed 1111111109)"

# ---- policy approve --totp ----
refuses "policy approve --totp: --select other than the enrolment's" "--select 4,5,7: the TOTP enrolment's PCRs are 4,5,7,12" \
        "$MSHIM" policy approve --totp --select 4,5,7 --state-dir "$t/state" --esp "$t/esp" --predicted "$t/pred.json"
# The TOTP point's values as a prediction (mshim predict --totp-point's
# schema) of a boot with PCR 7 extended once more, and as a PCR file.
tpm2_pcrread sha256:4,5,7,12 -o "$t/now.bin" >"$t/tp.yaml"
python3 - "$t/now.bin" "$t/pred.json" <<'PY'
import hashlib, json, sys
now = open(sys.argv[1], "rb").read()
vals = [now[i * 32:(i + 1) * 32] for i in range(4)]
vals[2] = hashlib.sha256(vals[2] + bytes.fromhex("%064x" % 77)).digest()
json.dump({"schema": "mshim-predict/1", "point": "totp",
           "pcrs": {"sha256": {str(p): v.hex() for p, v in zip((4, 5, 7, 12), vals)}},
           "unpredictable": {}}, open(sys.argv[2], "w"))
PY
# approve --totp takes TOTP-point predictions only, with every PCR of the
# enrolment: each refused with nothing signed.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["point"] = "boot"; json.dump(d, open(sys.argv[2], "w"))
d["point"] = "totp"; del d["pcrs"]["sha256"]["12"]; json.dump(d, open(sys.argv[3], "w"))
del d["point"]; d["pcrs"]["sha256"]["12"] = "00" * 32; json.dump(d, open(sys.argv[4], "w"))' \
        "$t/pred.json" "$t/pboot.json" "$t/p12.json" "$t/pnone.json"
ls "$TA" >"$t/ta.before"
while IFS='|' read -r f what re; do
        refuses "policy approve --totp refuses $f.json ($what)" "$re" \
                "$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$t/esp" --predicted "$t/$f.json"
        ls "$TA" >"$t/ta.after"
        check "... nothing signed ($f)" cmp -s "$t/ta.before" "$t/ta.after"
done <<'EOF2'
pboot|an end-of-boot prediction|a prediction of the end of the boot .* this needs one of the TOTP point
p12|PCR 12 of the enrolment not listed|no sha256 value for PCR 12: the prediction does not hold
pnone|no "point": an older mshim's|does not say which point.*re-run mshim predict --totp-point --json
EOF2
"$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$t/esp" --predicted "$t/pred.json" --entry-id next \
        >"$t/p.path" 2>"$t/err" || fail "policy approve --totp --predicted" "$(cat "$t/err")"
P=$(cat "$t/p.path")
check "approve --totp --predicted: into totp-approvals" test "${P%/*}" = "$TA"
check "approve --totp --predicted: signed over policy || mshim-totp || selection (openssl)" sig_over "$P" "$t/ref"
"$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$t/esp" --current --pcrs "$t/tp.yaml" --label same \
        >"$t/c.path" 2>"$t/err" || fail "policy approve --totp --current --pcrs" "$(cat "$t/err")"
C=$(cat "$t/c.path")
check "approve --totp --current --pcrs FILE: the TOTP point of this boot, as the enrolment approved it" \
        test -n "$(sed -n 's/^policy //p' "$C")" -a "$(sed -n 's/^policy //p' "$C")" = "$(sed -n 's/^policy //p' "$A")"
use_approval "$P" "$t/ref"
check "approve --totp --predicted: no code before the predicted boot" test -z "$(hmac_signed 1111111109)"
tpm2_pcrextend "7:sha256=$(printf '%064x' 77)"
check "approve --totp --predicted: the predicted boot gives the code" test "$(hmac_signed 1111111109)" = "$want"

# ---- attack: the ESP's enrolment file edited to "pcrs 7" (issue 20, finding 3) ----
# An evil maid writes the ESP; the next policy approve --totp (or the
# kernel hook, which runs it) must not sign a PCR-7-only state.
cp "$ESP" "$t/esp.orig"
sed -i 's/^pcrs .*/pcrs 7/' "$ESP"
ls "$TA" >"$t/ta.before"
python3 - "$t/pred.json" "$t/pred7.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["pcrs"]["sha256"] = {"7": p["pcrs"]["sha256"]["7"]}
json.dump(p, open(sys.argv[2], "w"))
PY
refuses "attack: ESP enrolment edited to pcrs 7: approve --totp refused, naming both files" \
        "esp/loader/mshim/totp differs from the trusted TOTP enrolment .*/state/totp" \
        "$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$t/esp" --predicted "$t/pred7.json" --select 7
refuses "attack: ... also without --select (the hook passes the ESP's pcrs)" \
        "esp/loader/mshim/totp differs from the trusted TOTP enrolment" \
        "$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$t/esp" --predicted "$t/pred7.json"
check "attack: nothing signed, nothing written" bash -c "ls '$TA' | cmp -s - '$t/ta.before'"
rm -f "$ESP"
refuses "attack: the ESP enrolment removed: approve --totp refused, naming both files" \
        "esp/loader/mshim/totp is missing; the trusted TOTP enrolment is .*/state/totp" \
        "$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$t/esp" --predicted "$t/pred.json"
cp "$t/esp.orig" "$ESP"
# Even an approval of PCR 7 alone signed with the real policy key (as a
# fooled signer would) gives no code: the key's policyRef names 4,5,7,12.
# Built here from the Part 3 formulas (Python) and signed by openssl:
# approvedPolicy = PolicyNV(counter <= epoch) then PolicyPCR(selection, values).
EPOCH=$(tpm2_nvread 0x01804d53 -C 0x01804d53 -s 8 | xxd -p)
NVNAME=$(tpm2_nvreadpublic 0x01804d53 | sed -n 's/^ *name: //p')
# py_approval SELECTION-BYTES PCRLIST OUT: the approvedPolicy of the TPM's PCRs now.
py_approval() {
        tpm2_pcrread "sha256:$2" -o "$t/pa.vals" >/dev/null
        python3 - "$NVNAME" "$EPOCH" "$1" "$t/pa.vals" "$3" <<'PY'
import hashlib, struct, sys
H = lambda b: hashlib.sha256(b).digest()
nvname, epoch, sel, vals = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3]), open(sys.argv[4], "rb").read()
p = H(bytes(32) + struct.pack(">I", 0x149) + H(epoch + struct.pack(">HH", 0, 9)) + nvname)
p = H(p + struct.pack(">I", 0x17F) + struct.pack(">IHB", 1, 0xb, 3) + sel + H(vals))
open(sys.argv[5], "wb").write(p)
PY
}
# py_use APPROVED REF: signed by openssl with the real policy key, for hmac_signed.
py_use() {
        cp "$1" "$t/approved.bin"; cp "$2" "$t/use.ref"; printf '%s' "$EPOCH" | xxd -r -p >"$t/epoch.bin"
        cat "$1" "$2" | openssl dgst -sha256 -binary >"$t/ahash.bin"
        cat "$1" "$2" | openssl dgst -sha256 -sign "$t/state/policy.key" -out "$t/sig.der"
}
py_approval b01000 4,5,7,12 "$t/a4.bin"; py_use "$t/a4.bin" "$t/ref"
check "control: an approval of 4,5,7,12 built by Python, signed by openssl over the new policyRef, gives the code" \
        test "$(hmac_signed 1111111109)" = "$want"
py_approval 800000 7 "$t/a7.bin"
USE_PCRS=sha256:7
py_use "$t/a7.bin" "$t/ref7"
check "attack: an approval of PCR 7 alone, signed with the policy key over \"mshim-totp\" || selection 7: no code" \
        test -z "$(hmac_signed 1111111109)"
py_use "$t/a7.bin" "$t/oldref"
check "attack: ... over the old policyRef \"mshim-totp\": no code" test -z "$(hmac_signed 1111111109)"
# (Signed over the enrolled selection's policyRef it would give a code: the
# binding holds because mshim's signer takes the policyRef from the very
# selection it puts into approvedPolicy, docs/SEALING.md "The TOTP key".)
USE_PCRS=sha256:4,5,7,12

# ---- policy list / prune / revoke --totp ----
"$MSHIM" policy list --totp --esp "$t/esp" --json >"$t/list.json" 2>"$t/err" || fail "policy list --totp --json" "$(cat "$t/err")"
check "list --totp --json: the three TOTP approvals, none of the disk's" python3 - "$t/list.json" "$A" "$P" "$C" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "mshim-approvals/1", j
assert sorted(a["file"] for a in j["approvals"]) == sorted(sys.argv[2:5]), j
assert all(sorted(a["pcrs"]) == ["12", "4", "5", "7"] for a in j["approvals"]), j
PY
check "list (no --totp): the disk approval only" bash -c \
        "'$MSHIM' policy list --esp '$t/esp' | grep -q '^${D##*/}\$' && ! '$MSHIM' policy list --esp '$t/esp' | grep -q enrolment"
"$MSHIM" policy revoke --state-dir "$t/state" --esp "$t/esp" --keep "$P" >"$t/rev" 2>"$t/err" ||
        fail "policy revoke --keep a TOTP approval" "$(cat "$t/err")"
K=$(ls "$TA"/next-e*.approval 2>/dev/null | grep -vxF "$P")
check "revoke --keep TOTP: re-signed at the new epoch into totp-approvals, the old file gone" bash -c \
        "[ -f '$K' ] && [ ! -e '$P' ] && grep -qx 'epoch 2' '$K'"
check "revoke --keep TOTP: the re-signed approval is over policy || mshim-totp || selection" sig_over "$K" "$t/ref"
use_approval "$K" "$t/ref"
check "revoke --keep TOTP: it gives the code" test "$(hmac_signed 1111111109)" = "$want"
"$MSHIM" policy prune --totp --state-dir "$t/state" --esp "$t/esp" >"$t/prune" 2>"$t/err" ||
        fail "policy prune --totp" "$(cat "$t/err")"
check "prune --totp: the revoked approvals removed, the re-signed one kept" bash -c \
        "[ ! -e '$A' ] && [ ! -e '$C' ] && [ -f '$K' ] && grep -q '^removed $A (revoked)\$' '$t/prune'"
check "prune --totp: the disk approvals untouched" test -f "$D"

# ---- attack: root on the running system approves the post-fence PCRs (issue 20, finding 4) ----
# Root holds the policy key. The loader's fence (docs/MEASUREMENTS.md "The
# TOTP fence"): EV_EVENT_TAG, 25 bytes, the digest their SHA-256, into PCR
# 12 and PCR 13.
FENCE=$(python3 -c 'import hashlib,struct; print(hashlib.sha256(struct.pack("<II", 0x6d736808, 17) + b"mshim TOTP fence\0").hexdigest())')
reboot_tpm; cli_extend "$t/pre.txt"
tpm2_pcrextend "12:sha256=$FENCE" "13:sha256=$FENCE"
tpm2_pcrread sha256:4,5,7,12 >"$t/post.yaml"
"$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$t/esp" --current --pcrs "$t/post.yaml" --label root \
        >"$t/root.path" 2>"$t/err" || fail "root: policy approve --totp --current --pcrs (post-fence)" "$(cat "$t/err")"
use_approval "$(cat "$t/root.path")" "$t/ref"
check "root attack: the post-fence PCRs approved with the policy key: the TPM refuses (PCR 13 holds the fence)" \
        test -z "$(hmac_signed 1111111109)"
# loader_seq A: the loader's own nine commands (build/test/tpm2_swtpm signed
# with a policyRef: src/tpm2.c's bytes, PolicyPCR of PCR 13 after
# PolicyAuthorize) with approval A, at step 1; its output.
TPM2_SWTPM=${TPM2_SWTPM:-build/test/tpm2_swtpm}
loader_seq() {
        local xy er
        xy=$(openssl pkey -pubin -in "$t/state/policy.pub" -outform DER | tail -c 64 | xxd -p -c 64)
        er=$(python3 - "$1" <<'PY'
import sys
kv = dict(l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines() if " " in l)
d, i, out = bytes.fromhex(kv["signature"]), 2, []
for _ in range(2):
    n = d[i + 1]; out.append(d[i + 2:i + 2 + n].lstrip(b"\0").rjust(32, b"\0").hex()); i += 2 + n
print(kv["epoch"], kv["policy"], *out)
PY
)
        set -- $er
        tpm2_flushcontext -t 2>/dev/null
        "$TPM2_SWTPM" "$TPM2TOOLS_TCTI" signed $H o 0x01804d53 "$1" 0xb 0x10b0 "${xy:0:64}" "${xy:64:64}" "$3" "$4" "$2" 1 \
                "$(xxd -p -c 64 "$t/ref")" 2>&1
}
out=$(loader_seq "$(cat "$t/root.path")")
check "root attack, the loader's own commands: PolicyPCR of PCR 13 refused (VALUE), no HMAC" \
        bash -c "grep -q '^refused PolicyPCR 0x1c4 VALUE\$' <<<'$out' && ! grep -q '^hmac ' <<<'$out'"
# Control: the same without the fence in PCR 13 (what the loader did
# before): the TPM computes the code, so PCR 13 is what stops root.
reboot_tpm; cli_extend "$t/pre.txt"
tpm2_pcrextend "12:sha256=$FENCE"
tpm2_pcrread sha256:4,5,7,12 >"$t/post12.yaml"
"$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$t/esp" --current --pcrs "$t/post12.yaml" --label root12 \
        >"$t/root12.path" 2>"$t/err" || fail "root: policy approve --totp --current --pcrs (fence in 12 only)" "$(cat "$t/err")"
use_approval "$(cat "$t/root12.path")" "$t/ref"
check "root attack, control: without the PCR 13 fence the same approval gives a code (= oathtool)" \
        test "$(hmac_signed 1111111109)" = "$want"
want1=$(python3 -c 'import hmac,hashlib,struct,sys; print(hmac.new(open(sys.argv[1],"rb").read(), struct.pack(">Q", 1), hashlib.sha1).hexdigest())' "$t/secret")
out=$(loader_seq "$(cat "$t/root12.path")")
check "root attack, control, the loader's own commands: nine, and the HMAC is Python's" \
        bash -c "grep -qx 'hmac $want1' <<<'$out' && grep -qx 'commands 9' <<<'$out'"

tpm2_flushcontext -t
# totp remove: an ESP copy that differs from the trusted one is refused.
sed 's/^pcrs .*/pcrs 7/' "$t/esp.orig" >"$ESP"
refuses "remove: an ESP enrolment that differs from the trusted copy is refused, naming both" \
        "esp/loader/mshim/totp differs from the trusted TOTP enrolment .*/state/totp" \
        "$MSHIM" totp remove --state-dir "$t/state" --esp "$t/esp"
check "remove refused: the key and both files are still there" bash -c \
        "tpm2_readpublic -c $H >/dev/null 2>&1 && [ -f '$ESP' ] && [ -f '$t/state/totp' ]"
cp "$t/esp.orig" "$ESP"
"$MSHIM" totp remove --state-dir "$t/state" --esp "$t/esp" >"$t/out" 2>&1 || fail "remove after the signed enrolment" "$(cat "$t/out")"
check "remove: the TOTP approvals go with the key" bash -c "[ -z \"\$(ls -A '$TA')\" ] && grep -q '^removed $K\$' '$t/out'"

# ---- enroll in the right order (issue 22): loader.conf first, then the next boot's TOTP point ----
# A second TPM holding the boot tests/cli/predict_fixture.py builds (hashlib
# and oracle.py: firmware -> mshim -> Debian's kernel, loader.conf without
# a totp line): the boot before TOTP is on. The first approval must be of
# the boot after the change, whose PCR 5 measures the new loader.conf and
# whose PCR 12 holds the TOTP initrd event: the fixture computes it.
KERNEL=${KERNEL:-build/kernel/vmlinuz}
FIX=tests/cli/predict_fixture.py
N=$t/next
python3 "$FIX" make "$N" "$KERNEL" >/dev/null || fail "set-up: predict_fixture.py make"
mv "$t/state" "$t/state.first"
cli_swtpm "$t/tpm2" || { fail "second swtpm starts"; exit 1; }
cli_extend "$N/extends.txt"
"$MSHIM" policy init --state-dir "$t/state" >/dev/null 2>"$t/err" || fail "policy init (second TPM)" "$(cat "$t/err")"
tpm2_flushcontext -t
NCONF=$N/esp/loader/loader.conf
cp "$NCONF" "$t/conf.orig"
# refused1 NAME REGEX CMD...: exit 1 (a refusal), the message, nothing enrolled.
refused1() {
        local n=$1 re=$2 rc; shift 2
        "$@" >"$t/out" 2>"$t/err" </dev/null; rc=$?
        if [ "$rc" = 1 ] && grep -q -E "^mshim: .*$re" "$t/err" && ! tpm2_readpublic -c $H >/dev/null 2>&1 &&
           [ ! -e "$N/esp/loader/mshim/totp" ] && [ ! -e "$t/state/totp" ]; then pass "$n"
        else fail "$n (status $rc)" "$(cat "$t/err")"; fi
}
refused1 "enroll: loader.conf has no totp line: refused (exit 1), the line to add named, nothing enrolled" \
        "esp/loader/loader.conf has no 'totp' line: the loader would show no code .*Add the line 'totp show' to it, or enroll with --configure" \
        "$MSHIM" totp enroll --state-dir "$t/state" --esp "$N/esp" --log "$N/log.bin" --secret-file "$t/secret" --uri
check "... loader.conf untouched" cmp -s "$NCONF" "$t/conf.orig"
cp -r "$N/esp" "$t/noesp2" && printf 'totp no\n' >>"$t/noesp2/loader/loader.conf"
L=$(grep -c '' "$t/noesp2/loader/loader.conf")
refused1 "enroll --configure: a 'totp no' line the person wrote is not overridden: refused, the line named" \
        "noesp2/loader/loader.conf:$L turns the code off.*Change that line to 'totp show'" \
        "$MSHIM" totp enroll --configure --state-dir "$t/state" --esp "$t/noesp2" --log "$N/log.bin" --secret-file "$t/secret" --uri
# ---- the evil maid and the first approval (issue 20, finding 1's class) ----
# The ESP is the attacker's: with the owner's files in place they add an
# entry, make it the default (loader.conf or LoaderEntryDefault: the ESP
# and the variables are theirs), and wait for the owner, who booted entry
# a (the TPM holds that boot), to enroll. The first approval would be of
# the attacker's boot, so a code would vouch for it: each variant must be
# refused, the file named, nothing enrolled, the ESP untouched.
K2=${KERNEL_RT:-build/kernel-rt/vmlinuz}
# evil_esp NAME LINUX INITRD OPTIONS: a copy of the owner's ESP whose default
# is entries/evil.conf, booting LINUX and INITRD (ESP paths) with OPTIONS.
evil_esp() {
        local d=$t/$1
        rm -rf "$d" && cp -r "$N/esp" "$d" || return 1
        printf 'title A\nlinux %s\ninitrd %s\noptions %s\n' "$2" "$3" "$4" >"$d/loader/entries/evil.conf"
        sed -i 's/^default a$/default evil/' "$d/loader/loader.conf"
}
# refused_evil NAME ESP REGEX: enroll --configure from ESP refused (exit 1)
# with REGEX, nothing enrolled, that ESP's loader.conf unchanged.
refused_evil() {
        cp "$2/loader/loader.conf" "$t/evil.conf.orig"
        refused1 "$1" "$3" "$MSHIM" totp enroll --configure --state-dir "$t/state" --esp "$2" --log "$N/log.bin" \
                --secret-file "$t/secret" --uri
        check "... no enrolment on that ESP, its loader.conf untouched" bash -c \
                "[ ! -e '$2/loader/mshim/totp' ] && cmp -s '$2/loader/loader.conf' '$t/evil.conf.orig'"
}
evil_esp evil1 /vmlinuz /evil-initrd.img "quiet splash" && printf 'an initrd of the maid\n' >"$t/evil1/evil-initrd.img"
refused_evil "evil maid: an entry with the real kernel and her initrd made the default: refused, the initrd named" \
        "$t/evil1" "PCR 9: the next boot's initrd \\($t/evil1//?evil-initrd.img\\) or command line \\(entry $t/evil1/loader/entries/evil.conf\\) is not this boot's"
check "... and why: it would run what this boot did not" grep -q "not approving the next boot, which would run what this boot did not" "$t/err"
evil_esp evil2 /vmlinuz /initrd.img "quiet splash init=/bin/sh"
refused_evil "evil maid: the real kernel and initrd with init=/bin/sh: refused, the entry named" \
        "$t/evil2" "PCR 9: the next boot's initrd .* or command line \\(entry $t/evil2/loader/entries/evil.conf\\) is not this boot's"
check "... PCR 12 named too (the command line mshim measures)" grep -q "PCR 12: the next boot's command line (entry $t/evil2/loader/entries/evil.conf)" "$t/err"
evil_esp evil3 /vmlinuz-evil /initrd.img "quiet splash" && cp "$K2" "$t/evil3/vmlinuz-evil"
refused_evil "evil maid: another kernel (Debian's rt kernel) with the real initrd: refused, the kernel named" \
        "$t/evil3" "PCR 4: the next boot's kernel, $t/evil3//?vmlinuz-evil \\(entry $t/evil3/loader/entries/evil.conf\\), is not the one this boot started"
# The owner's own files under other names are this boot: accepted (on a
# copy; the key is removed again so the enrolment below starts afresh).
evil_esp same /vmlinuz /initrd.img "quiet splash"
rm "$t/same/loader/entries/a.conf"
if "$MSHIM" totp enroll --configure --state-dir "$t/state" --esp "$t/same" --log "$N/log.bin" --secret-file "$t/secret" \
        --uri >"$t/out" 2>"$t/err"; then
        pass "the owner's kernel, initrd and command line in an entry of another name: this boot's, approved"
else fail "the owner's files in an entry of another name" "$(cat "$t/err")"; fi
"$MSHIM" totp remove --state-dir "$t/state" --esp "$t/same" >/dev/null 2>&1 || fail "remove (the renamed entry's enrolment)"
"$MSHIM" totp enroll --configure --state-dir "$t/state" --esp "$N/esp" --log "$N/log.bin" --secret-file "$t/secret" --uri \
        >"$t/uri" 2>"$t/err" || fail "enroll --signed --configure" "$(cat "$t/err")"
# The file as it must be: its own bytes, then the one line (Python).
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(d + (b"" if d.endswith(b"\n") or not d else b"\n") + b"totp show\n")' \
        "$t/conf.orig" "$t/conf.want"
check "enroll --configure: loader.conf is its old lines and 'totp show', nothing else" cmp -s "$NCONF" "$t/conf.want"
check "enroll --configure: says what it added and the disk approval to make" bash -c \
        "grep -q \"^added the line 'totp show' to $NCONF\" '$t/err' && grep -q 'mshim policy approve --predicted next.json' '$t/err'"
A2=$(sed -n 's/^approval of the next boot.s TOTP point (predicted from [^)]*): //p' "$t/err")
check "enroll: the first approval is said to be of the next boot's TOTP point" test -f "$A2"
# The fixture's next boot (hashlib, oracle.py): loader.conf with the line
# (PCR 5), the TOTP initrd event (PCR 12), cut at the TOTP point.
python3 "$FIX" expect "$N" --totp --totp-point --conf "$t/conf.want" --extends "$t/next.ext" >"$t/next.json" ||
        fail "predict_fixture.py expect --totp-point"
WANT=$(python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["sha256"]; print("".join(p[str(i)] for i in (4, 5, 7, 12)))' "$t/next.json")
check "enroll: the first approval's values are the next boot's at the TOTP point (PCR 5 with 'totp show', PCR 12 with the initrd event)" \
        test "$(sed -n 's/^values //p' "$A2")" = "$WANT"
NOW=$(tpm2_pcrread sha256:4,5,7,12 -o /dev/stdout 2>/dev/null | xxd -p -c 256)
check "... and not this boot's (PCR 5 without the line)" test -n "$NOW" -a "$NOW" != "$WANT"
# The next boot, as the TPM sees it up to the TOTP point: the approval
# gives the code (tpm2-tools' own policy sequence, oathtool's code).
tpm2_loadexternal -C o -G ecc:ecdsa-sha256:null -a "sign|userwithauth" -u "$t/state/policy.pub" -n "$t/key.name" \
        -c "$t/key.ctx" >/dev/null 2>&1 && tpm2_flushcontext "$t/key.ctx"
reboot_tpm2() { swtpm_ioctl --unix "$t/tpm2/srv.ctrl" -i >/dev/null && tpm2_startup -c || fail "swtpm reset"; }
reboot_tpm2; cli_extend "$t/next.ext"
use_approval "$A2" "$t/ref"
want=$(oathtool --totp -b "$B32" -N @1111111109)
check "the first boot after enrolment: the first approval gives the code (= oathtool)" test "$(hmac_signed 1111111109)" = "$want"

# ---- policy approve --totp offline: --request, policy sign, --signature ----
# The prediction: the next boot with PCR 7 extended once more (Python), as
# `mshim predict --totp-point --json` writes it.
X7=$(printf '%064x' 78)
python3 - "$t/next.json" "$X7" "$t/pred2.json" "$t/want2" <<'PY'
import hashlib, json, sys
p = json.load(open(sys.argv[1]))["sha256"]
p = {k: p[k] for k in ("4", "5", "7", "12")}
p["7"] = hashlib.sha256(bytes.fromhex(p["7"] + sys.argv[2])).hexdigest()
json.dump({"schema": "mshim-predict/1", "point": "totp", "pcrs": {"sha256": p}, "unpredictable": {}}, open(sys.argv[3], "w"))
open(sys.argv[4], "w").write("".join(p[k] for k in ("4", "5", "7", "12")) + "\n")
PY
"$MSHIM" policy approve --totp --state-dir "$t/state" --esp "$N/esp" --predicted "$t/pred2.json" --request "$t/totp.req" \
        >"$t/out" 2>"$t/err" </dev/null || fail "policy approve --totp --request" "$(cat "$t/err")"
check "approve --totp --request: nothing signed, nothing installed yet" test "$(ls "$N/esp/loader/mshim/totp-approvals" | wc -l)" = 1
"$MSHIM" policy sign --key "$t/state/policy.key" "$t/totp.req" -o "$t/totp.sig" >/dev/null 2>"$t/err" ||
        fail "policy sign (a TOTP request)" "$(cat "$t/err")"
"$MSHIM" policy approve --state-dir "$t/state" --esp "$N/esp" --signature "$t/totp.sig" "$t/totp.req" >"$t/out" 2>"$t/err" ||
        fail "policy approve --signature (a TOTP request)" "$(cat "$t/err")"
R2=; for f in "$N/esp/loader/mshim/totp-approvals"/*.approval; do [ "$f" = "$A2" ] || R2=$R2${R2:+ }$f; done
check "approve --signature: the TOTP request installed into totp-approvals, of the predicted values" bash -c \
        "[ \$(echo '$R2' | wc -l) = 1 ] && [ -f '$R2' ] && [ \"\$(sed -n 's/^values //p' '$R2')\" = '$(cat "$t/want2")' ]"
check "approve --signature: the signature is over SHA-256(policy || \"mshim-totp\" || selection) (openssl)" sig_over "$R2" "$t/ref"
reboot_tpm2; cli_extend "$t/next.ext"; tpm2_pcrextend "7:sha256=$X7"
use_approval "$R2" "$t/ref"
check "the offline-signed TOTP approval gives the code in its boot (= oathtool)" test "$(hmac_signed 1111111109)" = "$want"
"$MSHIM" policy sign --key "$t/state/policy.key" "$t/totp.req" -o "$t/totp2.sig" >/dev/null 2>&1
expect_rc "approve --signature: the same request twice is refused (installed already)" 1 "installed already" \
        "$MSHIM" policy approve --state-dir "$t/state" --esp "$N/esp" --signature "$t/totp2.sig" "$t/totp.req"
tpm2_flushcontext -t
"$MSHIM" totp remove --state-dir "$t/state" --esp "$N/esp" >/dev/null 2>&1 || fail "remove (second TPM)"
check "remove: loader.conf keeps 'totp show' (the person's file now)" cmp -s "$NCONF" "$t/conf.want"
true
