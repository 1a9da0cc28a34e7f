#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# src/tpm2.c's commands on a real TPM (swtpm): build/test/tpm2_swtpm sends the
# bytes the builders write through a tpm2-tss TCTI and reads the answers
# with the parsers (tests/tpm/tpm2_swtpm.c). tpm2-tools sets the TPM up (the
# keys, PCR extends, the NV counter) and is the oracle for Names; Python
# (hmac, hashlib) computes the HMACs and policy digests and RFC 6238's
# published TOTP value anchors the HMAC; openssl signs the approved policy.
#   - the TOTP sequence (StartAuthSession, PolicyPCR, HMAC) gives Python's
#     HMAC-SHA1 of the time step, and after a PCR extend the same sequence
#     is refused: POLICY_FAIL at HMAC (empty pcrDigest) or VALUE at
#     PolicyPCR (the expected pcrDigest), with no session left behind;
#   - the signed path: PolicyNV (epoch counter), PolicyPCR, LoadExternal,
#     VerifySignature, PolicyAuthorize gives the policy Python computes and
#     an HMAC from a key whose policy is PolicyAuthorize; a NULL-hierarchy
#     key's ticket, a bad signature, a revoked epoch are refused.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
B=${B:-build}
BIN=$B/test/tpm2_swtpm
if [ ! -x "$BIN" ]; then fail "tpm2_swtpm: $BIN not built (make $BIN)"; exit 1; fi
tmp=$(mktemp -d "$PWD/$B/tpm2swtpm.XXXXXX")
cli_init "" "$tmp"

cli_swtpm "$tmp" || { fail "swtpm starts"; exit 1; }
TCTI=$TPM2TOOLS_TCTI
setup() { "$@" >"$tmp/setup.log" 2>&1 || { fail "set-up: $*" "$(cat "$tmp/setup.log")"; exit 1; }; }

# ---- set-up with tpm2-tools: SRK, PCRs 7 and 12 not all zero, the HMAC key ----
KEY=0x81000010
SKEY=0x81000011
NV=0x01804D53
MASK=1080            # PCRs 7 and 12
SECRET=12345678901234567890     # RFC 6238 appendix B's SHA-1 secret
printf '%s' "$SECRET" >"$tmp/secret"
setup tpm2_createprimary -C o -g sha256 -G ecc -c "$tmp/srk.ctx"
setup tpm2_evictcontrol -C o -c "$tmp/srk.ctx" 0x81000001
setup tpm2_flushcontext -t
setup tpm2_pcrextend "7:sha256=$(printf '%064x' 7)" "12:sha256=$(printf '%064x' 12)"

# policy.py CMD ...: PolicyPCR/PolicyNV/PolicyAuthorize digests as Part 3
# §23 defines them, the key's Name, HMACs. Independent of src/.
cat >"$tmp/policy.py" <<'PY'
import hashlib, hmac, struct, sys
H = lambda b: hashlib.sha256(b).digest()
def pcr_pol(prev, values):                 # Part 3 §23.7, sha256 bank, PCRs 7 and 12
    sel = struct.pack(">IHB", 1, 0x000B, 3) + bytes([0x80, 0x10, 0x00])
    return H(prev + struct.pack(">I", 0x17F) + sel + H(values))
def nv_pol(prev, operand, nvname):         # Part 3 §23.9, offset 0, TPM_EO_UNSIGNED_LE
    args = H(operand + struct.pack(">HH", 0, 0x0009))
    return H(prev + struct.pack(">I", 0x149) + args + nvname)
def ecc_name(x, y):                        # Part 2 §12.2.4 TPMT_PUBLIC, sign|userWithAuth, ECDSA-SHA256, P-256
    pub = struct.pack(">HHIH", 0x23, 0x0B, 0x00040040, 0) + struct.pack(">HHHHH", 0x10, 0x18, 0x0B, 0x03, 0x10)
    pub += struct.pack(">H", 32) + x + struct.pack(">H", 32) + y
    return b"\x00\x0b" + H(pub)
def authorize(keyname):                    # Part 3 §23.16, policyRef empty
    return H(H(b"\0" * 32 + struct.pack(">I", 0x16A) + keyname) + b"")
cmd, a = sys.argv[1], sys.argv[2:]
if cmd == "pcrdigest":
    print(H(open(a[0], "rb").read()).hex())
elif cmd == "pcrpolicy":
    open(a[1], "wb").write(pcr_pol(b"\0" * 32, open(a[0], "rb").read()))
elif cmd == "hmac":
    print(hmac.new(open(a[0], "rb").read(), int(a[1], 16).to_bytes(8, "big"), hashlib.sha1).hexdigest())
elif cmd == "totp8":                       # RFC 4226 §5.3 dynamic truncation, 8 digits
    h = bytes.fromhex(a[0]); o = h[19] & 15
    print("%08d" % ((int.from_bytes(h[o:o + 4], "big") & 0x7fffffff) % 10**8))
elif cmd == "xy":                          # SubjectPublicKeyInfo DER of a P-256 key: ... 04 || x || y
    d = open(a[0], "rb").read()[-65:]; assert d[0] == 4
    print(d[1:33].hex(), d[33:].hex())
elif cmd == "rs":                          # ECDSA-Sig-Value DER: SEQUENCE { INTEGER r, INTEGER s }
    d = open(a[0], "rb").read(); i = 2 if d[1] < 0x80 else 3; out = []
    for _ in range(2):
        assert d[i] == 2; n = d[i + 1]; out.append(d[i + 2:i + 2 + n].lstrip(b"\0").hex()); i += 2 + n
    print(*out)
elif cmd == "approved":                    # PolicyNV(epoch) then PolicyPCR
    nvname, epoch, values = bytes.fromhex(a[0]), int(a[1]).to_bytes(8, "big"), open(a[2], "rb").read()
    p = pcr_pol(nv_pol(b"\0" * 32, epoch, nvname), values)
    open(a[3], "wb").write(p); print(p.hex())
elif cmd == "orpolicy":                   # Part 3 §23.6: branches from files, digest to a[0]
    p = H(b"\0" * 32 + struct.pack(">I", 0x171) + b"".join(open(f, "rb").read() for f in a[1:]))
    open(a[0], "wb").write(p)
elif cmd == "keyname":
    print(ecc_name(bytes.fromhex(a[0]), bytes.fromhex(a[1])).hex())
elif cmd == "authpolicy":
    p = authorize(bytes.fromhex(a[0])); open(a[1], "wb").write(p); print(p.hex())
PY
py() { python3 "$tmp/policy.py" "$@"; }

setup tpm2_pcrread -Q sha256:7,12 -o "$tmp/pcrs.bin"
py pcrpolicy "$tmp/pcrs.bin" "$tmp/pcr.pol"
PCRDIGEST=$(py pcrdigest "$tmp/pcrs.bin")
# tpm2-tools cannot Create a KEYEDHASH HMAC key from given bytes; Import can
# (so the key is not fixedTPM here, which TPM2_HMAC does not look at).
# sign only: no userWithAuth, so the policy is the only way to use it.
setup tpm2_import -C 0x81000001 -G hmac:sha1 -i "$tmp/secret" -u "$tmp/k.pub" -r "$tmp/k.priv" -L "$tmp/pcr.pol" -a sign
setup tpm2_load -C 0x81000001 -u "$tmp/k.pub" -r "$tmp/k.priv" -c "$tmp/k.ctx"
setup tpm2_evictcontrol -C o -c "$tmp/k.ctx" $KEY
setup tpm2_flushcontext -t
# A second key whose policy is PolicyOR(this PCR state, another one).
OKEY=0x81000012
python3 -c 'import hashlib, sys; open(sys.argv[1], "wb").write(hashlib.sha256(b"another state").digest())' "$tmp/other.pol"
py orpolicy "$tmp/or.pol" "$tmp/pcr.pol" "$tmp/other.pol"
BRANCHES=$(cat "$tmp/pcr.pol" "$tmp/other.pol" | od -An -v -tx1 | tr -d ' \n')
setup tpm2_import -C 0x81000001 -G hmac:sha1 -i "$tmp/secret" -u "$tmp/o.pub" -r "$tmp/o.priv" -L "$tmp/or.pol" -a sign
setup tpm2_load -C 0x81000001 -u "$tmp/o.pub" -r "$tmp/o.priv" -c "$tmp/o.ctx"
setup tpm2_evictcontrol -C o -c "$tmp/o.ctx" $OKEY
setup tpm2_flushcontext -t

run() { out=$("$BIN" "$TCTI" "$@" 2>"$tmp/err"); rc=$?; }
val() { sed -n "s/^$1 //p" <<<"$out"; }
has() { grep -q "$1" <<<"$out"; }
# Nothing of the sequence left in the TPM: no session, no transient object.
left() { tpm2_getcap handles-loaded-session; tpm2_getcap handles-transient; }
check() {       # NAME CONDITION...
        local name=$1; shift
        if [ "$rc" = 0 ] && "$@" && [ -z "$(left 2>&1)" ]; then pass "$name"; else
                fail "$name" "exit $rc" "$out" "$(cat "$tmp/err")" "left in the TPM: $(left 2>&1 | tr '\n' ' ')"; fi
}

# ---- the TOTP sequence -------------------------------------------------------
STEP=0x037c1b5a
WANT=$(py hmac "$tmp/secret" $STEP)
run totp $KEY b $MASK $STEP
check "totp: StartAuthSession, PolicyPCR (empty pcrDigest), HMAC-SHA1 equals Python's HMAC" \
        test "$(val hmac)" = "$WANT" -a "$(val commands)" = 3
run totp $KEY b $MASK $STEP "$PCRDIGEST"
check "totp: PolicyPCR with the expected pcrDigest, same HMAC" test "$(val hmac)" = "$WANT"
run totp $KEY b $MASK 1
check "totp: time step 1 (59 s) gives RFC 6238's SHA-1 TOTP 94287082" \
        test "$(py totp8 "$(val hmac)")" = 94287082

run totp-or $OKEY b $MASK $STEP "$BRANCHES"
check "totp-or: PolicyPCR then PolicyOR of two states, HMAC equals Python's" \
        test "$(val hmac)" = "$WANT" -a "$(val commands)" = 4

run readpublic $KEY
TOOLS_NAME=$(tpm2_readpublic -c $KEY | sed -n 's/^name: //p')
check "ReadPublic: the TPM's Name equals tpm2_readpublic's and the Name computed from the public area" \
        test -n "$TOOLS_NAME" -a "$(val tpm_name)" = "$TOOLS_NAME" -a "$(val computed_name)" = "$TOOLS_NAME"
run readpublic 0x81000099
check "ReadPublic of an absent handle: refused, HANDLE" has '^refused ReadPublic 0x18b HANDLE$'

setup tpm2_pcrextend "12:sha256=$(printf '%064x' 99)"
run totp $KEY b $MASK $STEP
check "totp after a PCR 12 extend: HMAC refused with POLICY_FAIL, session flushed" \
        has '^refused HMAC 0x99d POLICY_FAIL$'
run totp $KEY b $MASK $STEP "$PCRDIGEST"
check "totp after a PCR 12 extend, expected pcrDigest: PolicyPCR refused with VALUE, session flushed" \
        has '^refused PolicyPCR 0x1c4 VALUE$'
run totp-or $OKEY b $MASK $STEP "$BRANCHES"
check "totp-or after a PCR 12 extend: PolicyOR refused with VALUE (no branch matches)" \
        has '^refused PolicyOR 0x1c4 VALUE$'
has '^hmac' && fail "no HMAC after the extend" "$out"

# ---- the signed path -----------------------------------------------------------
setup openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/policy.key"
setup openssl pkey -in "$tmp/policy.key" -pubout -outform DER -out "$tmp/policy.der"
read -r X Y < <(py xy "$tmp/policy.der")
KEYNAME=$(py keyname "$X" "$Y")
# The epoch counter as docs/SEALING.md describes it, at 1; approvals of epoch 1.
setup tpm2_nvdefine $NV -C o -s 8 -a "nt=counter|ownerwrite|ownerread|authread|no_da"
setup tpm2_nvincrement -C o $NV
NVNAME=$(tpm2_nvreadpublic $NV | sed -n 's/^ *name: //p')
setup tpm2_pcrread -Q sha256:7,12 -o "$tmp/pcrs.bin"
APPROVED=$(py approved "$NVNAME" 1 "$tmp/pcrs.bin" "$tmp/approved.bin")
AUTHPOL=$(py authpolicy "$KEYNAME" "$tmp/auth.pol")
setup openssl dgst -sha256 -sign "$tmp/policy.key" -out "$tmp/sig.der" "$tmp/approved.bin"
read -r R S < <(py rs "$tmp/sig.der")
setup tpm2_import -C 0x81000001 -G hmac:sha1 -i "$tmp/secret" -u "$tmp/s.pub" -r "$tmp/s.priv" -L "$tmp/auth.pol" -a sign
setup tpm2_load -C 0x81000001 -u "$tmp/s.pub" -r "$tmp/s.priv" -c "$tmp/s.ctx"
setup tpm2_evictcontrol -C o -c "$tmp/s.ctx" $SKEY
setup tpm2_flushcontext -t

run signed $SKEY o $NV 1 b $MASK "$X" "$Y" "$R" "$S" "$APPROVED" $STEP
check "signed: PolicyNV + PolicyPCR digest equals Python's approved policy" test "$(val approved)" = "$APPROVED"
check "signed: LoadExternal's Name (the TPM's) equals mb_tpm2_ecc_name and Python's" \
        test "$(val tpm_name)" = "$KEYNAME" -a "$(val ecc_name)" = "$KEYNAME"
check "signed: VerifySignature's ticket (owner hierarchy), PolicyAuthorize gives Python's policy" \
        test "$(val ticket | cut -d' ' -f1)" = 0x40000001 -a "$(val ticket | cut -d' ' -f2)" -gt 0 -a "$(val policy)" = "$AUTHPOL"
check "signed: HMAC with the PolicyAuthorize key equals Python's HMAC" test "$(val hmac)" = "$WANT"

run signed $SKEY n $NV 1 b $MASK "$X" "$Y" "$R" "$S" "$APPROVED" $STEP
null_ticket_refused() { has '^ticket 0x40000007 0$' && has '^refused PolicyAuthorize 0x[0-9a-f]* VALUE$'; }
check "signed: a NULL-hierarchy key gets a NULL ticket, which PolicyAuthorize refuses (VALUE)" null_ticket_refused

BAD_S=$(python3 -c "import sys; s=bytearray.fromhex(sys.argv[1]); s[-1]^=1; print(s.hex())" "$S")
run signed $SKEY o $NV 1 b $MASK "$X" "$Y" "$R" "$BAD_S" "$APPROVED" $STEP
check "signed: a bad signature is refused by VerifySignature (SIGNATURE), key and session flushed" \
        has '^refused VerifySignature 0x[0-9a-f]* SIGNATURE$'

setup tpm2_pcrextend "7:sha256=$(printf '%064x' 77)"
run signed $SKEY o $NV 1 b $MASK "$X" "$Y" "$R" "$S" "$APPROVED" $STEP
check "signed: after a PCR 7 extend the approval no longer matches: PolicyAuthorize refused" \
        has "^refused PolicyAuthorize 0x1c4 VALUE$"

setup tpm2_nvincrement -C o $NV
run signed $SKEY o $NV 1 b $MASK "$X" "$Y" "$R" "$S" "$APPROVED" $STEP
check "signed: after the epoch counter passes the approval's epoch, PolicyNV is refused (POLICY)" \
        has '^refused PolicyNV 0x126 POLICY$'
