#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim verify: what booted, as facts from digest-bound data only, on a
# swtpm (SHA-256 bank) into which an mshim boot's events (attest_boot.py,
# built with hashlib) are extended with tpm2_pcrextend, as firmware would.
# Oracles: python's hashlib (variables, certificate, initrd, the PCR 5
# input), pesign (the images' Authenticode hashes), openssl (the
# certificate's subject), tpm2_pcrevent (the unseal fence).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
mkdir -p build
tmp=$(mktemp -d "$PWD/build/factstest.XXXXXX")
cli_init verify-facts "$tmp"
cli_need swtpm swtpm_setup tpm2_pcrextend tpm2_pcrevent pesign openssl python3
MSHIM_EFI=build/mshimx64.efi KERNEL=build/kernel/vmlinuz
[ -f "$MSHIM_EFI" ] && [ -f "$KERNEL" ] && [ -f build/kernel-rt/vmlinuz ] || { fail "no $MSHIM_EFI or $KERNEL (make all; build/kernel)"; exit 1; }

swtpm_setup --tpm2 --tpmstate "$tmp/st" --pcr-banks sha256 --overwrite --logfile "$tmp/setup.log" >/dev/null 2>&1 ||
        { mkdir -p "$tmp/st" && swtpm_setup --tpm2 --tpmstate "$tmp/st" --pcr-banks sha256 --overwrite \
                --logfile "$tmp/setup.log" >/dev/null 2>&1; } || { fail "swtpm_setup" "$(cat "$tmp/setup.log")"; exit 1; }
cli_swtpm "$tmp" "$tmp/st" || { fail "swtpm starts"; exit 1; }
"$MSHIM" attest init --out-dir "$tmp" >/dev/null 2>"$tmp/err" || { fail "attest init" "$(cat "$tmp/err")"; exit 1; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/db.key" -subj "/CN=mshim test db" \
        -days 30 -outform DER -out "$tmp/db.der" >/dev/null 2>&1 || fail "openssl req"
H_MSHIM=$(pesign -h -d sha256 -i "$MSHIM_EFI" | awk '{print $2}')
H_KERNEL=$(pesign -h -d sha256 -i "$KERNEL" | awk '{print $2}')
H_OTHER=$(pesign -h -d sha256 -i build/kernel-rt/vmlinuz | awk '{print $2}')
PYTHONPATH=tests/cli python3 tests/cli/attest_boot.py "$tmp" "$tmp/db.der" "$H_MSHIM" "$H_KERNEL" "$H_OTHER" ||
        { fail "attest_boot.py"; exit 1; }
# reset: a TPM Reset after an orderly shutdown (an unorderly one counts
# towards the AK's dictionary-attack lockout), then the boot's events
reset() { tpm2_shutdown -c >/dev/null 2>&1 && swtpm_ioctl --unix "$tmp/srv.ctrl" -i >/dev/null &&
                tpm2_startup -c >/dev/null 2>&1 || fail "TPM Reset"; cli_extend "$1"; }
V() { TPM2TOOLS_TCTI="swtpm:path=$tmp/none" "$MSHIM" verify --ak "$tmp/ak.pub" "$@"; }
# quote NAME LOG: evidence NAME.json for nonce $N
quote() { "$MSHIM" attest quote --nonce "$N" --log "$2" -o "$tmp/$1.json" 2>"$tmp/err" || fail "attest quote $1" "$(cat "$tmp/err")"; }
N=$(openssl rand -hex 16)

cli_extend "$tmp/good.extends"
quote good "$tmp/good.bin"
V --nonce "$N" --image "$MSHIM_EFI" --image "$KERNEL" --json "$tmp/good.json" >"$tmp/v.json" 2>"$tmp/err"; rc=$?
check "the boot is accepted, valid mshim-verdict/1 with facts (rc=$rc)" bash -c \
        "[ $rc = 0 ] && python3 tests/cli/json_schema.py --validate mshim-verdict-1 '$tmp/v.json'"
# fact NAME PYTHON: the expression on f (the verdict's facts) and x (expected.json) is true
fact() {
        local n=$1; shift
        check "$n" python3 - "$tmp/v.json" "$tmp/expected.json" "$@" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))["facts"]
x = json.load(open(sys.argv[2]))
ev = lambda pcr: [e for e in f["events"] if e["pcr"] == pcr]
ok = eval(sys.argv[3])
if not ok:
    print(json.dumps(f, indent=1), file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}
fact "Secure Boot on (the SecureBoot variable's byte, bound to its digest)" 'f["secure_boot"] is True'
fact "PK, KEK, db, dbx: the SHA-256 of each variable's contents (hashlib)" 'f["keys"] == x["keys"]'
fact "the db authority: owner GUID, SHA-256 of the certificate (hashlib)" \
        'len(f["authorities"]) == 1 and f["authorities"][0]["owner"] == x["authority"]["owner"] and f["authorities"][0]["sha256"] == x["authority"]["sha256"] and f["authorities"][0]["variable"] == "db"'
SUBJ=$(openssl x509 -inform DER -in "$tmp/db.der" -noout -subject -nameopt compat | sed 's/^subject=//')
fact "the db authority's subject is the certificate's (openssl: $SUBJ)" 'f["authorities"][0]["subject"] == sys.argv[4]' "$SUBJ"
fact "PCR 4: the two images by their Authenticode hashes (pesign), named by --image" \
        '[(e["digest"], e["image"], e["bound"]) for e in ev(4) if not e["bound"]] == [(x["pcr4"][0], "build/mshimx64.efi", False), (x["pcr4"][1], "build/kernel/vmlinuz", False)]'
fact "PCR 5: the loader.conf event by its digest only (the file is not in the log), the EFI action's text" \
        '[(e["digest"], e["data"]) for e in ev(5) if e["data"] != "separator"] == [(x["pcr5"][0], None), (x["pcr5"][1], "Exit Boot Services Invocation")]'
fact "PCR 12: the command line, the TOTP initrd event, the TOTP fence" \
        '[e["data"] for e in ev(12)][:1] == ["command line \"%s\"" % x["cmdline"]] and f["totp_fence"] is True and f["initrd"] == x["initrd"]'
fact "PCR 9: the initrd by its digest only ('Linux initrd' is not what the digest covers)" \
        '[(e["digest"], e["data"], e["bound"]) for e in ev(9)] == [(x["pcr9"], None, False)]'
fact "kernel version: not known from digest-bound data (null)" 'f["kernel_version"] is None'
fact "the unseal fence: not reached (PCR 15 zero)" 'f["unseal_fence"] == "not-reached"'
V --nonce "$N" --image "$MSHIM_EFI" "$tmp/good.json" >"$tmp/out" 2>&1
check "text: Secure Boot, the authority, the named image, the command line, the fences" bash -c \
        "grep -q '^  Secure Boot: on' '$tmp/out' && grep -q 'authority (db): $SUBJ' '$tmp/out' &&
         grep -q 'an image (Authenticode), build/mshimx64.efi' '$tmp/out' &&
         grep -q 'an image (Authenticode), not one of the --image files' '$tmp/out' &&
         grep -q 'command line \"root=/dev/vda2 ro quiet\"' '$tmp/out' && grep -q '^  TOTP fence: reached' '$tmp/out'"

# ---- reference states: an approval (mshim policy approve --current, on
# this TPM) and predictions (mshim predict --json from the log, with the
# PCR values hashlib replays) ------------------------------------------------
mkdir -p "$tmp/esp"
"$MSHIM" policy init --state-dir "$tmp/pst" >/dev/null 2>"$tmp/err" || fail "policy init" "$(cat "$tmp/err")"
A=$("$MSHIM" policy approve --state-dir "$tmp/pst" --esp "$tmp/esp" --current --label "good boot" 2>"$tmp/err") ||
        fail "policy approve --current" "$(cat "$tmp/err")"
PK=$tmp/pst/policy.pub
# epoch: the epoch counter's value (tpm2_nvread: 8 bytes, big-endian).
epoch() { tpm2_nvread 0x01804D53 2>/dev/null | python3 -c 'import sys; print(int.from_bytes(sys.stdin.buffer.read(), "big"))'; }
E=$(epoch)
check "set-up: the epoch counter reads (tpm2_nvread: $E)" test -n "$E"
# pcrs_of VARIANT: the replay expected.json has for it, as predict --pcrs reads it
pcrs_of() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["replay"][sys.argv[2]]
print("\n".join("sha256:%s=%s" % (p, v) for p, v in r.items()))' "$tmp/expected.json" "$1" >"$tmp/$1.pcrs"; }
pcrs_of good
predict() { local out=$1; shift; "$MSHIM" predict --log "$tmp/good.bin" --pcrs "$tmp/good.pcrs" --select 4,5,7,9,12 --json "$@" \
                >"$out" 2>"$tmp/err" || fail "predict $*" "$(cat "$tmp/err")"; }
predict "$tmp/pred-good.json"
predict "$tmp/pred-initsh.json" --options "root=/dev/vda2 ro quiet init=/bin/sh"
V --nonce "$N" --state "$A" --policy-key "$PK" --epoch "$E" "$tmp/good.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "--state the approval (verified with policy.pub): accepted, names it (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q '^ok      state: PCRs 4,5,7,9,12 are those of the approval $A (good boot)' '$tmp/out'"
V --nonce "$N" --state "$tmp/pred-initsh.json" --state "$tmp/pred-good.json" --json "$tmp/good.json" >"$tmp/vs.json" 2>"$tmp/err"; rc=$?
check "--state two predictions: accepted by the one it is, valid mshim-verdict/1 (rc=$rc)" bash -c \
        "[ $rc = 0 ] && python3 tests/cli/json_schema.py --validate mshim-verdict-1 '$tmp/vs.json' &&
         python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))[\"state\"]; sys.exit(0 if s[\"matched\"] == sys.argv[2] and s[\"closest\"] is None else 1)' '$tmp/vs.json' '$tmp/pred-good.json'"
python3 - "$A" "$tmp/forged.approval" <<'EOF2'
import sys
lines = open(sys.argv[1]).read().split("\n")
for i, l in enumerate(lines):
    if l.startswith("signature "):
        h = l.split(" ", 1)[1]
        lines[i] = "signature " + h[:20] + ("0" if h[20] != "0" else "1") + h[21:]
open(sys.argv[2], "w").write("\n".join(lines))
EOF2
expect_rc "--state a forged approval of these very PCRs (one signature digit changed): refused, exit 1, 'does not verify'" 1 \
        "refused: state: the only state these PCRs are, the approval $tmp/forged.approval, does not verify" \
        V --nonce "$N" --state "$tmp/forged.approval" --policy-key "$PK" --epoch "$E" "$tmp/good.json"
"$MSHIM" policy init --state-dir "$tmp/pst2" >/dev/null 2>&1
expect_rc "--state the approval with another policy key: refused, exit 1" 1 "refused: state: .* does not verify: its signature is not the policy key's" \
        V --nonce "$N" --state "$A" --policy-key "$tmp/pst2/policy.pub" --epoch "$E" "$tmp/good.json"
expect_rc "--state an approval without --policy-key: exit 2" 2 "give --policy-key" V --nonce "$N" --state "$A" "$tmp/good.json"
expect_rc "--policy-key without --state: exit 2" 2 "give them" V --nonce "$N" --policy-key "$PK" "$tmp/good.json"
expect_rc "--epoch without --state: exit 2" 2 "--epoch checks the approvals given with --state: give them" \
        V --nonce "$N" --epoch "$E" "$tmp/good.json"
expect_rc "--state an approval without --epoch: exit 2, says a revoked one would pass" 2 \
        "an approval counts only at the machine's current epoch: give --epoch N" \
        V --nonce "$N" --state "$A" --policy-key "$PK" "$tmp/good.json"
for bad in x -1 1x "" 18446744073709551616; do
        expect_rc "--epoch '$bad': exit 2" 2 "--epoch wants the machine's epoch counter" \
                V --nonce "$N" --state "$A" --policy-key "$PK" --epoch "$bad" "$tmp/good.json"
done
"$MSHIM" predict --log "$tmp/good.bin" --pcrs "$tmp/good.pcrs" --kernel build/kernel-rt/vmlinuz --json >"$tmp/pred-refused.json" 2>/dev/null
expect_rc "--state a prediction of a boot the firmware refuses: exit 2" 2 "predicts a boot mshim refuses" \
        V --nonce "$N" --state "$tmp/pred-refused.json" "$tmp/good.json"
head -c 100 "$tmp/pred-good.json" >"$tmp/pred-trunc.json"
expect_rc "--state a truncated prediction: exit 2" 2 "pred-trunc.json" V --nonce "$N" --state "$tmp/pred-trunc.json" "$tmp/good.json"
sed 's|"mshim-predict/1"|"mshim-predict/2"|' "$tmp/pred-good.json" >"$tmp/pred-v2.json"
expect_rc "--state a prediction of another schema version: exit 2" 2 "pred-v2.json" \
        V --nonce "$N" --state "$tmp/pred-v2.json" "$tmp/good.json"
head -c 60 "$A" >"$tmp/trunc.approval"
expect_rc "--state a truncated approval: exit 2" 2 "trunc.approval" \
        V --nonce "$N" --state "$tmp/trunc.approval" --policy-key "$PK" --epoch "$E" "$tmp/good.json"

# The unseal fence: PCR 15 extended by the initramfs (TPM2_PCR_Event of
# its bytes, tpm2_pcrevent), not in the firmware's log.
printf 'mshim-unseal-fence' >"$tmp/fence.txt"
tpm2_pcrevent 15 "$tmp/fence.txt" >/dev/null || fail "tpm2_pcrevent 15"
quote fenced "$tmp/good.bin"
V --nonce "$N" --json "$tmp/fenced.json" >"$tmp/v.json" 2>"$tmp/err"; rc=$?
check "PCR 15 holding the unseal fence alone is accepted (rc=$rc)" test "$rc" = 0
fact "the unseal fence: reached" 'f["unseal_fence"] == "reached"'
tpm2_pcrevent 15 "$tmp/db.der" >/dev/null
quote fenced2 "$tmp/good.bin"
V --nonce "$N" "$tmp/fenced2.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "PCR 15 holding more than the fence (not in the evidence): refused, exit 1, names PCR 15 (rc=$rc)" bash -c \
        "[ $rc = 1 ] && grep -q 'refused: event-log: sha256 PCR 15' '$tmp/err'"

# go-attestation's event-log disclosure: the same digests, other data.
reset "$tmp/disclosed.extends"
quote disclosed "$tmp/disclosed.bin"
V --nonce "$N" --json "$tmp/disclosed.json" >"$tmp/v.json" 2>"$tmp/err"; rc=$?
check "a log whose events' data was edited, digests kept, still replays: accepted (rc=$rc)" test "$rc" = 0
fact "... but Secure Boot is unknown, not 'off' (the edited SecureBoot data is not its digest's)" \
        'f["secure_boot"] is None'
fact "... and no command line is reported (init=/bin/sh is not its digest's)" \
        'all(e["data"] is None for e in ev(12)[:1]) and not any("init=/bin/sh" in (e["data"] or "") for e in f["events"])'
V --nonce "$N" "$tmp/disclosed.json" >"$tmp/out" 2>&1
check "... text: Secure Boot unknown, no init=/bin/sh" bash -c \
        "grep -q '^  Secure Boot: unknown' '$tmp/out' && ! grep -q 'init=/bin/sh' '$tmp/out'"

# ---- another kernel, init=/bin/sh: refused against the approved states -------
reset "$tmp/other.extends"
quote other "$tmp/other.bin"
V --nonce "$N" --state "$A" --policy-key "$PK" --epoch "$E" --state "$tmp/pred-good.json" "$tmp/other.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "another kernel: refused, exit 1, 'state: ... PCR 4 differs from the closest' (rc=$rc)" bash -c \
        "[ $rc = 1 ] && grep -q 'refused: state: no reference state matches: PCR 4 differs from the closest' '$tmp/err'"
check "... the text names PCR 4's events: the other kernel's Authenticode hash (pesign)" grep -q "$H_OTHER" "$tmp/out"
V --nonce "$N" --state "$A" --policy-key "$PK" --epoch "$E" --json "$tmp/other.json" >"$tmp/vs.json" 2>/dev/null
check "... --json: PCR 4 with the approved and the quoted value (hashlib replays)" python3 - "$tmp/vs.json" "$tmp/expected.json" "$A" <<'EOF2'
import json, sys
v, x = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = v["state"]
sys.exit(0 if not v["accepted"] and s["matched"] is None and s["closest"] == sys.argv[3] and
         s["differing"] == [{"pcr": 4, "expected": x["replay"]["good"]["4"], "quoted": x["replay"]["other"]["4"]}] else 1)
EOF2
reset "$tmp/initsh.extends"
quote initsh "$tmp/initsh.bin"
expect_rc "init=/bin/sh: refused, exit 1, PCR 12 differs from the approval" 1 \
        "refused: state: no reference state matches: PCR 12 differs from the closest, the approval" \
        V --nonce "$N" --state "$A" --policy-key "$PK" --epoch "$E" "$tmp/initsh.json"
V --nonce "$N" --state "$A" --policy-key "$PK" --epoch "$E" --state "$tmp/pred-initsh.json" "$tmp/initsh.json" >"$tmp/out" 2>&1; rc=$?
check "the same command line, predicted beforehand (predict --options): accepted by the prediction (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q '^ok      state: PCRs 4,5,7,9,12 are those of the prediction $tmp/pred-initsh.json' '$tmp/out'"

# ---- revocation: mshim policy revoke moves the epoch counter; the
# verifier given the new value (--epoch) refuses the older approval, as
# unseal's PolicyNV does ------------------------------------------------------
expect_rc "an approval of an epoch the counter has not reached (--epoch below it): accepted, as PolicyNV (counter <= epoch) passes" \
        0 "" V --nonce "$N" --state "$A" --policy-key "$PK" --epoch $((E - 1)) "$tmp/good.json"
"$MSHIM" policy revoke --state-dir "$tmp/pst" --esp "$tmp/esp" >/dev/null 2>"$tmp/err" || fail "policy revoke" "$(cat "$tmp/err")"
E2=$(epoch)
check "set-up: policy revoke moved the epoch counter (tpm2_nvread: $E -> $E2)" test "$E2" -gt "$E"
"$MSHIM" policy list --state-dir "$tmp/pst" --esp "$tmp/esp" >"$tmp/status.txt" 2>&1
check "... and mshim policy list calls the approval revoked" grep -q "revoked" "$tmp/status.txt"
expect_rc "after revoke: the old approval at the new epoch refused, exit 1, 'is revoked', both epochs named" 1 \
        "refused: state: the only state these PCRs are, the approval $A, is revoked: approved at epoch $E, and the machine's epoch counter is at $E2" \
        V --nonce "$N" --state "$A" --policy-key "$PK" --epoch "$E2" "$tmp/good.json"
V --nonce "$N" --state "$A" --policy-key "$PK" --epoch "$E2" --state "$tmp/pred-good.json" "$tmp/good.json" >"$tmp/out" 2>&1; rc=$?
check "... the same boot still accepted by a prediction beside it (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q 'are those of the prediction $tmp/pred-good.json' '$tmp/out'"
expect_rc "keylime-refstate --state the revoked approval --epoch NEW: refused, exit 1, nothing written" 1 \
        "refused: $A: the approval is revoked: approved at epoch $E" \
        "$MSHIM" verify keylime-refstate --no-log --state "$A" --policy-key "$PK" --epoch "$E2" -o "$tmp/ks.json"
check "... no refstate written" test ! -e "$tmp/ks.json"
expect_rc "keylime-refstate --state an approval without --epoch: exit 2" 2 "give --epoch N" \
        "$MSHIM" verify keylime-refstate --no-log --state "$A" --policy-key "$PK" -o "$tmp/ks.json"
reset "$tmp/good.extends"     # the TPM's PCRs the good boot's again, for approve --current
A2=$("$MSHIM" policy approve --state-dir "$tmp/pst" --esp "$tmp/esp" --current --label "after revoke" 2>"$tmp/err") ||
        fail "policy approve --current after revoke" "$(cat "$tmp/err")"
V --nonce "$N" --state "$A" --state "$A2" --policy-key "$PK" --epoch "$E2" "$tmp/good.json" >"$tmp/out" 2>&1; rc=$?
check "a new approval of the same boot at the new epoch: accepted, by it (rc=$rc)" bash -c \
        "[ $rc = 0 ] && grep -q 'are those of the approval $A2 (after revoke)' '$tmp/out'"

expect_rc "--image that does not exist: exit 2" 2 "mshim: " V --nonce "$N" --image "$tmp/nope.efi" "$tmp/good.json"

exit $CLI_FAILED
