#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A sealed LUKS key with Secure Boot on (issue 11, "Proven by booting"):
# the GPT + LUKS2 disk, the LUKS initramfs and the host-provisioned swtpm
# state of test_luks.sh (it_luks_provision), booted by OVMF with Secure
# Boot on (lib.sh IT_OVMF_CODE_SB) and the test's own PK, KEK and db
# (it_sb_setup), mshimx64.efi and the kernel signed by the db key.
#
#   A      no sealed key on the ESP: the keyscript falls back, the typed
#          passphrase unlocks; PCR 7 holds SecureBoot = 1 and the db
#          authority (it_sb_pcr7). Then on the host: A's PCRs approved
#          (`mshim policy approve --current --pcrs`), and from A's log
#          `mshim predict --db-append db.esl` and `--dbx-append dbx.auth`
#          (it_sb_update_files: built from the UEFI spec, not by mshim),
#          each approved with `--predicted`. Nothing is resealed.
# Legitimate, the same updates applied to copies of A's variable store with
# `mshim vars append` (offline: the path a real update takes, SetVariable
# with EFI_VARIABLE_APPEND_WRITE checked against KEK by the firmware,
# cannot be driven from the test, so what is proven is that the firmware
# measures the appended db or dbx and the unchanged authority event as
# predicted), A's and the predicted approvals on the ESP: UNLOCKED with
# no passphrase, and the booted PCRs equal the prediction
# (it_predict_check: only PCR 7 changed):
#   db     a second certificate (other.pem) appended to db
#   dbx    the Authenticode SHA-256 of another image (Debian's RT kernel)
#          appended to dbx: `--dbx-image` for the store, the digest for
#          dbx.auth computed by oracle.py, so the two sides are independent
# On A's log alone, without booting (what no boot can show): a dbx append
# of the kernel's Authenticode SHA-256 and of the db certificate are
# refused, a kernel signed by the same db key keeps PCR 7, one signed by a
# key in no db is refused, and with that key appended to db PCR 7 is
# unpredictable (another db entry would verify it).
# Tampered, A's approval only:
#   sboff  Secure Boot off: the same keys without SecureBootEnable
#          (it_sb_keys's nosb.fd), same disk, same TPM state: the firmware
#          measures SecureBoot = 0 and no authority; the keyscript falls
#          back naming PCR 7, exactly the PCR that differs between A's and
#          this boot's TPM, and the typed passphrase still unlocks.
# Attestation, on the same boots: A, db and sboff quote from the LUKS
# initramfs (the AK made on the host by `mshim attest init`), then unlock.
# `mshim verify --state` with A's and db's approvals (--policy-key): A
# accepted (facts: Secure Boot on, the db authority), db accepted by its
# approved prediction, sboff refused naming PCR 7 (facts: Secure Boot off).
# A first, then db, dbx and sboff two at a time.
set -u
. "$(dirname "$0")/lib.sh"
T=luks-sb
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
PASS=${LUKS_PASSPHRASE:-mshim-luks-test}
it_init "$T"
# PCR 15 is the keyscript's (the unseal fence and the volume it opens,
# docs/MEASUREMENTS.md): not in the firmware's log nor in any prediction.
export IT_OS_PCRS=15
k=$IT_DIR/keys
it_sb_setup "$T" "$k" || exit 1
if ! it_require "$IT_KERNEL_RT" "$IT_KDIR/modules/KMODS" /usr/sbin/cryptsetup ||
   ! command -v sfdisk >/dev/null; then
        it_fail "$T: prerequisites (cryptsetup-bin, fdisk, kmod; make; make deps)"; exit 1
fi
it_sb_sign "$IT_EFI" "$k/mshim-signed.efi" "$k" db && it_sb_sign "$IT_KERNEL" "$k/vmlinuz-signed" "$k" db ||
        { it_fail "$T: set-up (mshim sign)"; exit 1; }
it_luks_provision "$PASS" || exit 1
# Attestation rides on A, db and sboff (no boot of its own): the AK made on
# the host in the TPM state every boot starts from, a nonce on each ESP;
# the LUKS initramfs quotes, then unlocks as before.
it_attest_init "$IT_LUKS_TPM" "$IT_DIR/reg" || { it_fail "$T: set-up (mshim attest init)"; exit 1; }

# sb_boot NAME: a LUKS boot dir with the signed mshim and kernel.
sb_boot() {
        local d
        d=$(it_luks_boot "$1" "$k/mshim-signed.efi") && cp "$k/vmlinuz-signed" "$d/esp/vmlinuz" && echo "$d"
}

# ---- A: Secure Boot on, no sealed key yet -----------------------------------------
a=$(sb_boot a) && it_attest_nonce "$a" || { it_fail "$T: set-up A"; exit 1; }
it_console_script "$a/console.script" 'asking for the passphrase' "$PASS"
if it_boot "$a" --disk "$IT_DIR/luks.img"; then
        it_pass "$T: A: boot with Secure Boot on, passphrase typed at the prompt"
        it_luks_has "$a" "A: the typed passphrase unlocks the volume" "MSHIM-LUKS UNLOCKED"
        it_sb_pcr7 "$a/result" "$k/sb.fd" "$k/db.der" \
                "$T: A: PCR 7 = SecureBoot 1, PK, KEK, db, dbx of the store, the db authority" || IT_FAILED=1
else
        it_fail "$T: A: boot with Secure Boot on, passphrase typed at the prompt"; exit 1
fi
it_pcrs_file "$a" > "$a/pcrs.txt"

# ---- the updates, predicted from A and approved; the stores they make ------------
RT_HASH=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import oracle
print(oracle.authenticode(open(sys.argv[2], "rb").read()).hex())' "$IT_REPO/tests/integration" "$IT_KERNEL_RT") &&
        it_sb_update_files "$k" "$RT_HASH" || { it_fail "$T: set-up (update files)"; exit 1; }
b=$(sb_boot db) && x=$(sb_boot dbx) && o=$(sb_boot sboff) && it_attest_nonce "$b" && it_attest_nonce "$o" ||
        { it_fail "$T: set-up"; exit 1; }
"$IT_CLI" vars append "$k/sb.fd" --db "$k/other.pem" --owner "$IT_SB_OWNER" -o "$b/vars.in.fd" > "$IT_DIR/vars.log" 2>&1 &&
        "$IT_CLI" vars append "$k/sb.fd" --dbx-image "$IT_KERNEL_RT" --owner "$IT_SB_OWNER" -o "$x/vars.in.fd" \
                >> "$IT_DIR/vars.log" 2>&1 && cp "$k/nosb.fd" "$o/vars.in.fd"
it_step $? "mshim vars append: db and dbx appended to copies of A's store" "$IT_DIR/vars.log"

it_swtpm_host_start "$IT_LUKS_TPM" || { it_fail "$T: set-up (host TPM)"; exit 1; }
pol=$IT_LUKS_POLICY
cur=$("$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr" --current --pcrs "$a/pcrs.txt" \
        --entry-id mshim-test --label "boot A" 2>"$IT_DIR/approve.err")
it_step $? "approve A's PCRs (--current --pcrs)" "$IT_DIR/approve.err"
for d in "$b" "$x"; do
        c=$(basename "$d")
        case $c in
        db) upd=(--db-append "$k/db.esl") ;;
        dbx) upd=(--dbx-append "$k/dbx.auth") ;;
        esac
        "$IT_CLI" predict --log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" "${upd[@]}" --json \
                > "$d/predict.json" 2> "$d/predict.err"
        it_step $? "$c: mshim predict ${upd[0]} on A's log" "$d/predict.err"
        new=$("$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr-$c" --predicted "$d/predict.json" \
                --entry-id mshim-test --label "$c append" 2>"$d/approve.err")
        it_step $? "$c: approve the prediction (--predicted)" "$d/approve.err"
        [ "$c" = db ] && new_db=$new
        it_luks_sealed_esp "$d" "$cur" "$new" || { it_fail "$T: set-up $c"; exit 1; }
done
it_swtpm_host_stop "$IT_LUKS_TPM"
it_luks_sealed_esp "$o" "$cur" || { it_fail "$T: set-up sboff"; exit 1; }

# ---- on A's log alone: what no boot can show ---------------------------------------
# expect NAME RC KEY PATTERN ARGS...: `mshim predict` on A's log with ARGS
# exits RC with PATTERN in the JSON's KEY ("refused", or unpredictable's
# "7"); KEY "": everything predicted.
expect() {
        local name=$1 want=$2 key=$3 pat=$4 rc; shift 4
        "$IT_CLI" predict --log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" --json "$@" \
                > "$IT_DIR/x.json" 2> "$IT_DIR/x.err"; rc=$?
        if [ "$rc" = "$want" ] && python3 - "$IT_DIR/x.json" "$key" "$pat" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
if not sys.argv[2]:     # everything predicted
    sys.exit(1 if j["unpredictable"] or "refused" in j else 0)
v = j.get("refused") if sys.argv[2] == "refused" else j["unpredictable"].get(sys.argv[2])
sys.exit(0 if v and re.search(sys.argv[3], v) else 1)
PY
        then it_pass "$T: $name"
        else it_fail "$T: $name (exit $rc)"; cat "$IT_DIR/x.json" "$IT_DIR/x.err" >&2; fi
}
# Two dbx signature lists built here from the UEFI spec (2.10, 32.4.1:
# EFI_SIGNATURE_LIST), not by mshim: the booted kernel's Authenticode
# SHA-256 (oracle.py's own Authenticode) and the db certificate; and the
# kernel signed by a key in no db.
it_sb_sign "$IT_KERNEL" "$k/vmlinuz-other" "$k" other &&
        python3 - "$IT_REPO/tests/integration" "$k" "$IT_SB_OWNER" <<'PY' || { it_fail "$T: set-up (dbx and key of the checks on A's log)"; exit 1; }
import struct, sys, uuid
sys.path.insert(0, sys.argv[1])
import oracle
k, owner = sys.argv[2], uuid.UUID(sys.argv[3]).bytes_le
def esl(kind, data):    # one list holding one signature of OWNER
    return uuid.UUID(kind).bytes_le + struct.pack("<III", 28 + 16 + len(data), 0, 16 + len(data)) + owner + data
X509, SHA256 = "a5c059a1-94e4-4aa7-87b5-ab155c2bf072", "c1c41626-504c-4092-aca9-41f936934328"
open(k + "/dbx-dbcert.esl", "wb").write(esl(X509, open(k + "/db.der", "rb").read()))
open(k + "/dbx-kernel.esl", "wb").write(esl(SHA256, oracle.authenticode(open(k + "/vmlinuz-signed", "rb").read())))
PY
expect "dbx revoking the kernel's Authenticode SHA-256: no boot (refused)" 1 refused \
        "refuse an image this boot starts" --dbx-append "$k/dbx-kernel.esl"
expect "dbx revoking the db certificate of the authority event: no boot (refused)" 1 refused \
        "db certificate that verified" --dbx-append "$k/dbx-dbcert.esl"
expect "a new kernel signed by the same db key: PCR 7 predicted" 0 "" "" --kernel "$k/vmlinuz-signed"
expect "a new kernel signed by a key in no db: no boot (refused)" 1 refused \
        "refuse the new kernel: no db entry verifies" --kernel "$k/vmlinuz-other"
expect "that kernel with its key appended to db: another db entry verifies it, PCR 7 unpredictable" 1 7 \
        "another db entry" --kernel "$k/vmlinuz-other" --db-append "$k/db.esl"
it_console_script "$o/console.script" 'asking for the passphrase' "$PASS"

IT_BOOT_ARGS=(--disk "$IT_DIR/luks.img")
IT_JOBS=${IT_JOBS:-2} it_boot_all "$b" "$x" "$o"
unset IT_BOOT_ARGS

for d in "$b" "$x"; do
        it_luks_booted "$d" && it_luks_unsealed "$d" &&
                it_predict_check "$T: $(basename "$d")" "$a" "$d" "$d/predict.json" || IT_FAILED=1
done
if it_luks_booted "$o"; then
        it_luks_fallback "$a" "$o" 7
        # What the firmware measured, read from the log (UEFI 2.10, 32.4.1;
        # TCG PC Client FW Profile, 10.4.4): SecureBoot = 0, no authority.
        if python3 - "$IT_REPO/tests/integration" "$o/result/eventlog.bin" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import oracle
p7 = [e for e in oracle.load_log(sys.argv[2]) if e.pcr == 7]
def name_data(e):       # UEFI_VARIABLE_DATA: GUID, name length, data length, name, data
    nl, dl = struct.unpack_from("<QQ", e.data, 16)
    return e.data[32:32 + 2 * nl].decode("utf-16-le"), e.data[32 + 2 * nl:32 + 2 * nl + dl]
sb = [name_data(e)[1] for e in p7 if e.type == oracle.EV_EFI_VARIABLE_DRIVER_CONFIG and name_data(e)[0] == "SecureBoot"]
auth = [e for e in p7 if e.type == oracle.EV_EFI_VARIABLE_AUTHORITY]
sys.exit(0 if sb == [b"\x00"] and not auth else 1)
PY
        then it_pass "$T: sboff: the firmware measured SecureBoot = 0 and no authority (PCR 7)"
        else it_fail "$T: sboff: the firmware measured SecureBoot = 0 and no authority (PCR 7)"; fi
fi

# ---- attestation: the quotes A, db and sboff made from their initramfs -------------
# Reference states: A's approval (`policy approve --current`, signed with
# the policy key) and db's (the approved prediction), verified by `mshim
# verify --state --policy-key` as unseal verifies them.
AK=$IT_DIR/reg/ak.pub
# --epoch: the machine's epoch counter as its owner records it; policy init
# made it at 1 on this fresh TPM and nothing here revokes.
st=(--state "$cur" --state "$new_db" --policy-key "$pol/policy.pub" --epoch 1)
if it_attest_got "$a" "A"; then
        it_attest_verify "A: Secure Boot on (db-signed mshim): mshim verify --state (A's approval) accepts the guest's evidence" \
                0 "PCRs [0-9,]+ are those of the approval $cur" "$IT_DIR/v-a.json" --ak "$AK" --nonce "$(cat "$a/nonce")" \
                "${st[@]}" "$a/att/evidence.json"
        # The db authority: the SHA-256 of the db certificate's DER (openssl's file, hashlib).
        it_attest_facts "A: the verdict's facts: Secure Boot on, the db authority is the test's db certificate" \
                "$IT_DIR/v-a.json" "f['secure_boot'] is True and [(x['variable'], x['sha256']) for x in f['authorities']] == [('db', __import__('hashlib').sha256(open('$k/db.der', 'rb').read()).hexdigest())]"
fi
if it_boot_ok "$b" && it_attest_got "$b" "db"; then
        it_attest_verify "db: a predicted db update: mshim verify --state (its approved prediction) accepts the evidence" \
                0 "PCRs [0-9,]+ are those of the approval $new_db" "$IT_DIR/v-db.json" --ak "$AK" --nonce "$(cat "$b/nonce")" \
                "${st[@]}" "$b/att/evidence.json"
fi
if it_boot_ok "$o" && it_attest_got "$o" "sboff"; then
        it_attest_verify "sboff: Secure Boot off: refused by verify --state (the approvals made with it on), PCR 7 named" 1 \
                "refused: state: no reference state matches: PCR 7 differs from the closest, the approval" "$IT_DIR/v-o.json" \
                --ak "$AK" --nonce "$(cat "$o/nonce")" "${st[@]}" "$o/att/evidence.json"
        it_attest_facts "sboff: the verdict's facts: Secure Boot off, no authority" "$IT_DIR/v-o.json" \
                "f['secure_boot'] is False and f['authorities'] == []"
fi
# Keylime's own engine with the mshim policy, on the dbx boot (Secure Boot
# on, mshim db-signed, a dbx with one entry: Keylime's example policy, whose
# firmware checks the mshim policy runs first, refuses an empty dbx such
# as A's, "VariableData is not a list"): the refstate of its log accepts
# its log and rejects sboff's (Secure Boot off: the example's check).
if it_boot_ok "$x" && "$IT_CLI" verify keylime-refstate --log "$x/result/eventlog.bin" -o "$IT_DIR/ref-x.json" 2> "$IT_DIR/ref.err"; then
        it_keylime_accepts "dbx: Secure Boot on (db-signed mshim): Keylime's engine with the mshim policy accepts its log (the refstate of its log)" \
                "$IT_DIR/ref-x.json" "$x/result/eventlog.bin"
        it_boot_ok "$o" && it_keylime_rejects "sboff: Secure Boot off: Keylime's engine rejects its log with the dbx boot's refstate" \
                "Enabled is not" "$IT_DIR/ref-x.json" "$o/result/eventlog.bin"
else
        it_fail "$T: mshim verify keylime-refstate --log of the dbx boot's log (Secure Boot on)"; cat "$IT_DIR/ref.err" >&2
fi
exit "$IT_FAILED"
