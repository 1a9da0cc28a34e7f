#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Keylime's own measured-boot engine (the unmodified snapshot in
# ../shared/oracles/keylime, its `evaluate`: Keylime's event-log parser,
# tpm2_eventlog, then the policy) with mshim's policy module
# (keylime/mshim_policy.py) and refstates `mshim verify keylime-refstate`
# writes: from a boot's log and from `mshim predict --json`. The boots are
# attest_boot.py's (hashlib): the enrolled one, another kernel, and
# init=/bin/sh; a refstate with a prediction of that command line accepts
# it before it boots. The firmware part (Keylime's example policy's
# fields and tests): a PCR 0 firmware blob, db, Secure Boot off and another
# S-CRTM version each rejected with Keylime's own words. No TPM.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
mkdir -p build
tmp=$(mktemp -d "$PWD/build/keylimetest.XXXXXX")
cli_init keylime "$tmp"
KEYLIME=${MB_KEYLIME:-../shared/oracles/keylime}
[ -d "$KEYLIME" ] || KEYLIME=../../shared/oracles/keylime
if [ ! -x "$KEYLIME/evaluate" ]; then
        # The snapshot lives beside the repository, not in it (not a pass).
        echo "SKIP: keylime: no Keylime snapshot at $KEYLIME (MB_KEYLIME=DIR)"
        exit 0
fi
cli_need tpm2_eventlog pesign openssl
/usr/bin/python3 -c 'import yaml, packaging' 2>/dev/null || { fail "Keylime's evaluate needs python3-yaml, python3-packaging"; exit 1; }
MOD=$PWD/keylime/mshim_policy.py
# kl REFSTATE LOG: Keylime's verdict (AOK, or its reason) in $tmp/kl, its status returned
kl() { "$KEYLIME/evaluate" --import "$MOD" mshim "$1" "$2" >"$tmp/kl" 2>&1; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/db.key" -subj "/CN=mshim test db" \
        -days 30 -outform DER -out "$tmp/db.der" >/dev/null 2>&1 || fail "openssl req"
h() { pesign -h -d sha256 -i "$1" | awk '{print $2}'; }
PYTHONPATH=tests/cli python3 tests/cli/attest_boot.py "$tmp" "$tmp/db.der" "$(h build/mshimx64.efi)" "$(h build/kernel/vmlinuz)" \
        "$(h build/kernel-rt/vmlinuz)" || { fail "attest_boot.py"; exit 1; }
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["replay"]["good"]
print("\n".join("sha256:%s=%s" % (p, v) for p, v in r.items()))' "$tmp/expected.json" >"$tmp/good.pcrs"
"$MSHIM" predict --log "$tmp/good.bin" --pcrs "$tmp/good.pcrs" --json --options "root=/dev/vda2 ro quiet init=/bin/sh" \
        >"$tmp/pred-initsh.json" 2>"$tmp/err" || fail "predict --options" "$(cat "$tmp/err")"

"$MSHIM" verify keylime-refstate --log "$tmp/good.bin" -o "$tmp/ref.json" >/dev/null 2>"$tmp/err"; rc=$?
check "keylime-refstate from this boot's log (rc=$rc)" test "$rc" = 0
check "... valid mshim-keylime-refstate/1 (python3-jsonschema)" \
        python3 tests/cli/json_schema.py --validate mshim-keylime-refstate-1 "$tmp/ref.json"
check "... its PCRs 4, 5, 7, 9, 12 are hashlib's replay of the log" python3 - "$tmp/ref.json" "$tmp/expected.json" <<'EOF2'
import json, sys
r, x = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["replay"]["good"]
b = r["boots"]
sys.exit(0 if r["schema"] == "mshim-keylime-refstate/1" and len(b) == 1 and
         b[0]["pcrs"] == {p: x[p] for p in ("4", "5", "7", "9", "12")} else 1)
EOF2
check "... its firmware part (has_secureboot, scrtm_and_bios, pk, kek, db, dbx, mokdig, mokxdig) is the log's (keylime_fw.py)" \
        python3 tests/cli/keylime_fw.py "$tmp/good.bin" "$tmp/ref.json"
kl "$tmp/ref.json" "$tmp/good.bin"; rc=$?
check "Keylime's engine, policy mshim: the enrolled boot is accepted (AOK)" bash -c "[ $rc = 0 ] && grep -qx AOK '$tmp/kl'"
kl "$tmp/ref.json" "$tmp/other.bin"; rc=$?
check "Keylime's engine: another kernel is rejected, PCR 4 named (rc=$rc)" bash -c \
        "[ $rc = 1 ] && grep -q 'mshim: no allowed boot: PCR 4 differs from the closest' '$tmp/kl'"
kl "$tmp/ref.json" "$tmp/initsh.bin"; rc=$?
check "Keylime's engine: init=/bin/sh is rejected, PCR 12 named (rc=$rc)" bash -c \
        "[ $rc = 1 ] && grep -q 'PCR 12 differs' '$tmp/kl'"
"$MSHIM" verify keylime-refstate --log "$tmp/good.bin" --state "$tmp/pred-initsh.json" -o "$tmp/ref2.json" >/dev/null 2>"$tmp/err" ||
        fail "keylime-refstate --state" "$(cat "$tmp/err")"
kl "$tmp/ref2.json" "$tmp/initsh.bin"; rc=$?
check "Keylime's engine: the command line predicted beforehand (predict --options) is accepted (rc=$rc)" \
        bash -c "[ $rc = 0 ] && grep -qx AOK '$tmp/kl'"
kl "$tmp/ref2.json" "$tmp/good.bin"; rc=$?
check "... and the enrolled boot still is" test "$rc" = 0
kl "$tmp/ref2.json" "$tmp/other.bin"; rc=$?
check "... another kernel still is not" test "$rc" = 1
# One digest byte of the log's last event (PCR 5, "Exit Boot Services
# Invocation": its record's last 40 bytes are the digest's last 7, the
# size and the 29 bytes of text) flipped: PCR 5 no longer replays.
python3 - "$tmp/good.bin" "$tmp/edited.bin" <<'EOF2'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
assert b.endswith(b"Exit Boot Services Invocation")
b[len(b) - 40] ^= 1
open(sys.argv[2], "wb").write(b)
EOF2
kl "$tmp/ref.json" "$tmp/edited.bin"; rc=$?
check "Keylime's engine: a log with one digest of PCR 5 edited is rejected, PCR 5 named (rc=$rc)" bash -c \
        "[ $rc = 1 ] && grep -q 'PCR 5 differs' '$tmp/kl'"
# The firmware part, with Keylime's example policy's tests and words.
kl "$tmp/ref.json" "$tmp/fwblob.bin"; rc=$?
check "Keylime's engine: PCR 0's second firmware blob with another digest is rejected, Keylime's words name it (rc=$rc)" \
        bash -c "[ $rc = 1 ] && grep -q 'platform_firmware_blobs \[1\] has no digest approved by' '$tmp/kl'"
kl "$tmp/ref.json" "$tmp/dbother.bin"; rc=$?
check "Keylime's engine: another db (its event's data and digest) is rejected, the db event named (rc=$rc)" \
        bash -c "[ $rc = 1 ] && grep -q \"'UnicodeName': 'db', 'VariableData'.* Event VariableData .*SignatureData is not\" '$tmp/kl'"
kl "$tmp/ref.json" "$tmp/sboff.bin"; rc=$?
check "Keylime's engine: Secure Boot off (SecureBoot 00, its digest) is rejected: 'Enabled is not 'Yes'' (rc=$rc)" \
        bash -c "[ $rc = 1 ] && grep -q \"'UnicodeName': 'SecureBoot'.* Event VariableData Enabled is not 'Yes'\" '$tmp/kl'"
python3 - "$tmp/ref.json" "$tmp/ref-scrtm.json" <<'EOF2'
import hashlib, json, sys
d = json.load(open(sys.argv[1]))
d["scrtm_and_bios"][0]["scrtm"] = {"sha256": "0x" + hashlib.sha256("another S-CRTM\0".encode("utf-16-le")).hexdigest()}
json.dump(d, open(sys.argv[2], "w"))
EOF2
kl "$tmp/ref-scrtm.json" "$tmp/good.bin"; rc=$?
check "Keylime's engine: a refstate that lists another S-CRTM version rejects the boot: 's_crtms [0] has no digest approved' (rc=$rc)" \
        bash -c "[ $rc = 1 ] && grep -q 's_crtms \[0\] has no digest approved by' '$tmp/kl'"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["dbx"]; json.dump(d, open(sys.argv[2],"w"))' \
        "$tmp/ref.json" "$tmp/ref-nodbx.json"
kl "$tmp/ref-nodbx.json" "$tmp/good.bin"; rc=$?
check "Keylime's engine: a refstate without dbx is malformed (Keylime's example's words) (rc=$rc)" bash -c \
        "[ $rc != 0 ] && grep -q 'refstate lacks dbx' '$tmp/kl'"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["schema"]="mshim-keylime-refstate/2"; json.dump(d, open(sys.argv[2],"w"))' \
        "$tmp/ref.json" "$tmp/ref-v2.json"
kl "$tmp/ref-v2.json" "$tmp/good.bin"; rc=$?
check "Keylime's engine: a refstate of another schema version is rejected (rc=$rc)" bash -c \
        "[ $rc != 0 ] && grep -q 'refstate is not mshim-keylime-refstate/1' '$tmp/kl'"
# Keylime's own generator and example policy on the same boot: the
# stock policy cannot judge an mshim boot (README of the snapshot).
(cd "$KEYLIME" && PYTHONPATH=. /usr/bin/python3 scripts/create_mb_refstate "$tmp/good.bin" "$tmp/stock.json") >/dev/null 2>&1
"$KEYLIME/evaluate" example "$tmp/stock.json" "$tmp/good.bin" >"$tmp/kl" 2>&1; rc=$?
check "for comparison: Keylime's example policy does not accept the mshim boot (rc=$rc)" test "$rc" != 0

expect_rc "keylime-refstate without -o: exit 2" 2 "-o REFSTATE" "$MSHIM" verify keylime-refstate --log "$tmp/good.bin"
expect_rc "keylime-refstate with a log that does not parse: exit 2" 2 "mshim: " \
        "$MSHIM" verify keylime-refstate --log "$tmp/db.der" -o "$tmp/x.json"
expect_rc "keylime-refstate of a log whose SecureBoot event's data its digest does not cover: exit 2" 2 \
        "its data is not what its digest covers" "$MSHIM" verify keylime-refstate --log "$tmp/disclosed.bin" -o "$tmp/x.json"
check "... nothing written" test ! -e "$tmp/x.json"
"$MSHIM" verify keylime-refstate --log "$tmp/good.bin" --no-log --state "$tmp/pred-initsh.json" -o "$tmp/ref3.json" \
        >/dev/null 2>"$tmp/err" || fail "keylime-refstate --log --no-log --state" "$(cat "$tmp/err")"
check "--no-log --state: the prediction alone, the firmware part still the log's" python3 - "$tmp/ref3.json" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if len(r["boots"]) == 1 and r["boots"][0]["label"] != "this boot" else 1)
EOF2
check "... (keylime_fw.py)" python3 tests/cli/keylime_fw.py "$tmp/good.bin" "$tmp/ref3.json"
kl "$tmp/ref3.json" "$tmp/initsh.bin"; rc=$?
check "... Keylime's engine accepts the predicted boot with it (rc=$rc)" test "$rc" = 0
kl "$tmp/ref3.json" "$tmp/good.bin"; rc=$?
check "... and not this boot, which it leaves out (rc=$rc)" test "$rc" = 1
cp "$tmp/pred-initsh.json" "$tmp/pred.keep"
expect_rc "keylime-refstate -o the prediction: exit 2" 2 "refusing to overwrite" \
        "$MSHIM" verify keylime-refstate --log "$tmp/good.bin" --state "$tmp/pred-initsh.json" -o "$tmp/pred-initsh.json"
check "... the prediction untouched" cmp -s "$tmp/pred-initsh.json" "$tmp/pred.keep"
expect_rc "keylime-refstate with an approval and no --policy-key: exit 2" 2 "give --policy-key" \
        "$MSHIM" verify keylime-refstate --log "$tmp/good.bin" --state "$tmp/db.der" -o "$tmp/x.json"


# ---- a real boot through mshim (tests/data/mshim-boot: OVMF, swtpm, mshim,
# Debian's kernel, captured on this project's QEMU set-up) ----
RB=tests/data/mshim-boot
"$MSHIM" verify keylime-refstate --log "$RB/eventlog.bin" -o "$tmp/real.json" >/dev/null 2>"$tmp/err" ||
        fail "keylime-refstate of the real boot's log" "$(cat "$tmp/err")"
check "the real boot's refstate holds the guest TPM's own PCRs 4, 5, 7, 9, 12 (its result.json)" python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["boots"][0]["pcrs"]; t = json.load(open(sys.argv[2]))["pcrs"]["sha256"]
sys.exit(0 if b and all(b[p] == t[p] for p in b) and sorted(b) == ["12", "4", "5", "7", "9"] else 1)' \
        "$tmp/real.json" "$RB/result.json"
check "the real boot's refstate: its firmware part is the log's (keylime_fw.py: OVMF's S-CRTM, two firmware blobs, Secure Boot off)" \
        python3 tests/cli/keylime_fw.py "$RB/eventlog.bin" "$tmp/real.json"
kl "$tmp/real.json" "$RB/eventlog.bin"; rc=$?
check "Keylime's engine (its parser on a real OVMF + mshim log) accepts the real boot (rc=$rc)" \
        bash -c "[ $rc = 0 ] && grep -qx AOK '$tmp/kl'"
# The real log with one byte of its second firmware blob's SHA-256 digest
# (PCR 0, found by keylime_fw.py's parse of the log) flipped.
PYTHONPATH=tests/cli python3 - "$RB/eventlog.bin" "$tmp/real-blob.bin" <<'EOF2'
import sys, keylime_fw
b = bytearray(open(sys.argv[1], "rb").read())
blobs = [dg[0xB] for pcr, t, dg, _ in keylime_fw.events(bytes(b)) if pcr == 0 and t == 0x80000008]
i = b.find(blobs[1])
assert len(blobs) == 2 and i > 0 and b.find(blobs[1], i + 1) < 0
b[i + 31] ^= 1
open(sys.argv[2], "wb").write(b)
EOF2
kl "$tmp/real.json" "$tmp/real-blob.bin"; rc=$?
check "Keylime's engine: the real log with its second firmware blob's digest edited is rejected, Keylime's words name it (rc=$rc)" \
        bash -c "[ $rc = 1 ] && grep -q 'platform_firmware_blobs \[1\] has no digest approved by' '$tmp/kl'"
exit "$CLI_FAILED"
