#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim predict behind Debian's signed shim 16, proven by booting (issue 10):
# Secure Boot with Microsoft's keys, firmware -> shim -> mshim (signed with a
# test MOK) -> Debian's signed kernel, as test_shim.sh boots it.
#   A  MokList = the MOK that signs mshim (`mshim vars add-mok`)
#   B  the same ESP; MokList gains a second certificate after it
#      (`mshim vars add-mok` on A's store): shim's PCR 14 MokList event
#      changes, PCR 7 keeps the MOK's authority for mshim
# B is predicted on the host from A's log and PCRs, shim's image and B's
# MokList (`mshim predict --shim --mok --json`) and compared with B's boot:
# every active bank's PCRs 0-15 except 10, and the changed set (PCR 14).
#   C  an upgrade from A: the entry boots the RT kernel (Debian's, another
#      build signed with the same key), and mshim is rebuilt (another
#      built-in policy: `mshim boot-policy --set editor=no`) and signed with
#      the same MOK; A's MokList. Predicted from A's log with C's ESP and
#      loader (`predict --esp --loader --shim --mok`): shim verifies both
#      new images by the baseline's entries (the MOK, its built-in Debian
#      certificate), so PCR 7 stays and every PCR is predicted. C quotes
#      from its initramfs (the LUKS one, built for the RT kernel): the
#      prediction made beforehand is a reference state for mshim verify
#      and, as a Keylime refstate, for Keylime's engine (a fleet's upgrade
#      behind shim allowed before it boots).
# Without booting: a MokList without mshim's MOK is unpredictable (shim would
# refuse mshim), with the reason, exit 1; --mok without --shim is refused.
# C's kernel re-signed with the other MOK alone: with A's MokList shim
# would refuse it (exit 1, named); with B's, another entry verifies it
# (PCR 7 unpredictable, named).
# Three boots, two side by side (IT_JOBS, default 2), each from its own store.
# Attestation behind shim rides on both (no boot of its own): each boots
# the LUKS initramfs from a GPT disk with no volume, from a TPM state in
# which the host made the AK (`mshim attest init`), and quotes with its
# nonce (mshim-test/attest-nonce) before the report. The host verifies:
# A accepted (Secure Boot on, the MOK's MokListRT authority for mshim in
# the facts); B accepted by `verify --state` with its prediction, A refused
# by it (PCR 14, the MokList, named).
set -u
. "$(dirname "$0")/lib.sh"
T=predict-shim
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$IT_SHIM" "$IT_MM" \
                "$IT_OVMF_CODE_SB" "$IT_OVMF_VARS_MS" \
                "$IT_KDIR/modules/KMODS" /usr/sbin/cryptsetup || ! command -v sfdisk >/dev/null; then
        it_fail "$T: prerequisites (shim-signed, ovmf, cryptsetup-bin, fdisk; make deps)"; exit 1
fi
# shellcheck disable=SC2034 # read by it_secure_boot_on (lib.sh)
IT_SB_CODE="$IT_OVMF_CODE_SB"

k=$IT_DIR/keys
it_shim_keys "$k" || { it_fail "$T: set-up (keys)"; exit 1; }
"$IT_CLI" vars add-mok "$IT_OVMF_VARS_MS" --cert "$k/mok.pem" -o "$k/vars-a.fd" &&
        "$IT_CLI" vars add-mok "$k/vars-a.fd" --cert "$k/other.pem" -o "$k/vars-b.fd" &&
        "$IT_CLI" vars get "$k/vars-b.fd" MokList -o "$k/MokList-b.bin" >/dev/null &&
        "$IT_CLI" vars get "$k/vars-a.fd" MokList -o "$k/MokList-a.bin" >/dev/null ||
        { it_fail "$T: set-up (mshim vars add-mok)"; exit 1; }
it_secure_boot_on "$k/vars-a.fd" || { it_fail "$T: set-up (Secure Boot)"; exit 1; }

it_attest_init "$IT_DIR/tpm-host" "$IT_DIR/reg" && it_initrd_luks "$IT_KDIR" "$IT_B/it/initrd-luks.img" &&
        truncate -s $((IT_DISK_LUKS_SECTORS * 512)) "$IT_DIR/none.img" ||
        { it_fail "$T: set-up (mshim attest init, the LUKS initramfs)"; exit 1; }
a=$(it_shim_esp a "$k") && b=$(it_shim_esp b "$k") &&
        cp "$a/esp/EFI/BOOT/grubx64.efi" "$b/esp/EFI/BOOT/grubx64.efi" &&
        cp "$k/vars-a.fd" "$a/vars.in.fd" && cp "$k/vars-b.fd" "$b/vars.in.fd" ||
        { it_fail "$T: set-up (esp)"; exit 1; }
for d in "$a" "$b"; do
        cp "$IT_B/it/initrd-luks.img" "$d/esp/initrd.img" && cp -a "$IT_DIR/tpm-host/state" "$d/tpm.in" &&
                it_attest_nonce "$d" || { it_fail "$T: set-up (attestation)"; exit 1; }
done
# C: the RT kernel with the LUKS initramfs built for it (it quotes too;
# efi=runtime: Debian's RT kernel leaves EFI runtime services off, and the
# initramfs reads LoaderDevicePartUUID to find the ESP).
c=$(it_newboot c) && cp "$IT_SHIM" "$c/esp/EFI/BOOT/BOOTX64.EFI" && cp "$IT_MM" "$c/esp/EFI/BOOT/mmx64.efi" &&
        it_initrd_luks "$IT_B/kernel-rt" "$IT_B/it/initrd-luks-rt.img" && cp "$IT_B/it/initrd-luks-rt.img" "$c/esp/initrd.img" &&
        it_attest_nonce "$c" &&
        "$IT_CLI" boot-policy --set editor=no -o "$IT_DIR/mshim-c.efi" "$IT_EFI" >/dev/null &&
        "$IT_CLI" sign --key "$k/mok.key" --cert "$k/mok.pem" -o "$c/esp/EFI/BOOT/grubx64.efi" "$IT_DIR/mshim-c.efi" \
                >"$c/sign.log" 2>&1 &&
        cp "$IT_B/kernel-rt/vmlinuz" "$c/esp/vmlinuz" &&
        sed -i -e "s|^version .*|version $(cat "$IT_B/kernel-rt/VERSION")|" -e 's|^options .*|& efi=runtime|' \
                "$c/esp/loader/entries/mshim-test.conf" &&
        cp "$k/vars-a.fd" "$c/vars.in.fd" && cp -a "$IT_DIR/tpm-host/state" "$c/tpm.in" ||
        { it_fail "$T: set-up (C)"; exit 1; }

# B's MokList, independently of mshim: the MOK's EFI_SIGNATURE_LIST, then
# the other certificate's, each owned by shim's GUID (as add-mok writes).
python3 - "$IT_REPO/tests/integration" "$k" <<'PY' || { it_fail "$T: set-up (B's MokList)"; exit 1; }
import subprocess, sys
sys.path.insert(0, sys.argv[1])
import oracle
k = sys.argv[2]
der = lambda n: subprocess.run(["openssl", "x509", "-in", "%s/%s.pem" % (k, n), "-outform", "DER"],
                               capture_output=True, check=True).stdout
want = oracle.x509_esl(der("mok"), oracle.GUID_SHIM) + oracle.x509_esl(der("other"), oracle.GUID_SHIM)
sys.exit(0 if open(k + "/MokList-b.bin", "rb").read() == want else 1)
PY

# shellcheck disable=SC2034 # read by it_boot (lib.sh)
IT_BOOT_ARGS=(--disk "$IT_DIR/none.img")
if IT_JOBS=${IT_JOBS:-2} it_boot_all "$a" "$b" "$c"; then
        it_pass "$T: boot A, B and C (shim -> mshim -> kernel)"
else
        it_fail "$T: boot A, B and C (shim -> mshim -> kernel)"; exit 1
fi
it_pcrs_file "$a" > "$a/pcrs.txt"
base=(--log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" --shim "$b/esp/EFI/BOOT/BOOTX64.EFI")
# predict_from_a NAME OUT OPTION...: `mshim predict` of A's boot with
# OPTIONs to OUT.json (OUT.err), PASS or FAIL NAME.
predict_from_a() {
        local name=$1 out=$2; shift 2
        if "$IT_CLI" predict "${base[@]}" "$@" --json > "$out.json" 2> "$out.err"; then it_pass "$T: $name"
        else it_fail "$T: $name"; cat "$out.err" >&2; fi
}
predict_from_a "predict B (a MokList with a second certificate) on the host" "$b/predict" --mok "$k/MokList-b.bin"
it_predict_check "$T: new MokList" "$a" "$b" "$b/predict.json" || IT_FAILED=1
if python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])).get("changed") != [14])' "$b/predict.json"; then
        it_pass "$T: a new MokList changes PCR 14 only"
else
        it_fail "$T: a new MokList changes PCR 14 only"; cat "$b/predict.json" >&2
fi

# C: the upgrade behind shim, predicted from A.
predict_from_a "predict C (the RT kernel, mshim rebuilt and signed with the same MOK) on the host" "$c/predict" \
        --mok "$k/MokList-a.bin" --esp "$c/esp" --loader "$c/esp/EFI/BOOT/grubx64.efi"
it_predict_check "$T: upgrade behind shim" "$a" "$c" "$c/predict.json" || IT_FAILED=1
if python3 -c 'import json,sys; c = json.load(open(sys.argv[1])).get("changed", []); sys.exit(not (4 in c and 7 not in c))' "$c/predict.json"; then
        it_pass "$T: the upgrade changes PCR 4 and keeps PCR 7 (shim's authority events: the same MOK, the same Debian certificate)"
else
        it_fail "$T: the upgrade changes PCR 4 and keeps PCR 7"; cat "$c/predict.json" >&2
fi
# A's own ESP and loader predicted from A (no boot: A's PCRs are the
# answer): the same images behind shim, verified by the same entries.
if "$IT_CLI" predict "${base[@]}" --mok "$k/MokList-a.bin" --esp "$a/esp" --loader "$a/esp/EFI/BOOT/grubx64.efi" \
        --json > "$a/same.json" 2> "$a/same.err" && python3 - "$IT_REPO/tests/integration" "$a" "$a/same.json" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import oracle
r, pred = oracle.load_result(sys.argv[2] + "/result"), json.load(open(sys.argv[3]))
bad = ["unpredictable: %s" % pred["unpredictable"]] if pred.get("unpredictable") else []
bad += ["changed %s" % pred["changed"]] if pred.get("changed") else []
for b in r["banks"]:
    for n in oracle.CHECKED_PCRS:
        want = pred["pcrs"].get(b, {}).get(str(n))
        if (bytes.fromhex(want) if want else bytes(len(oracle.tpm_pcr(r, b, n)))) != oracle.tpm_pcr(r, b, n):
            bad.append("%s PCR %d: predicted %s, booted %s" % (b, n, want, oracle.tpm_pcr(r, b, n).hex()))
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
then
        it_pass "$T: A's own ESP and mshim predicted from A: every PCR is A's, PCR 7 included (nothing changed)"
else
        it_fail "$T: A's own ESP and mshim predicted from A: every PCR is A's, PCR 7 included (nothing changed)"; cat "$a/same.err" >&2
fi
# C's kernel signed with the other MOK alone (no Debian signature).
n=$IT_DIR/other-kernel
mkdir -p "$n" && cp -a "$c/esp" "$n/esp" &&
        it_shim_resign "$IT_B/kernel-rt/vmlinuz" "$n/esp/vmlinuz" "$k/other.key" "$k/other.pem" ||
        { it_fail "$T: set-up (a kernel signed with the other MOK)"; exit 1; }
"$IT_CLI" predict "${base[@]}" --mok "$k/MokList-a.bin" --esp "$n/esp" --loader "$n/esp/EFI/BOOT/grubx64.efi" \
        --json > "$n/refused.json" 2> "$n/refused.err"
rc=$?
if [ "$rc" = 1 ] && grep -q "shim would refuse the kernel" "$n/refused.json"; then
        it_pass "$T: a kernel no entry of A's MokList (nor shim's certificate) verifies: shim would refuse it, exit 1"
else
        it_fail "$T: a kernel no entry of A's MokList (nor shim's certificate) verifies: shim would refuse it, exit 1 (status $rc)"
        cat "$n/refused.json" "$n/refused.err" >&2
fi
"$IT_CLI" predict "${base[@]}" --mok "$k/MokList-b.bin" --esp "$n/esp" --loader "$n/esp/EFI/BOOT/grubx64.efi" \
        --json > "$n/other.json" 2> "$n/other.err"
rc=$?
if [ "$rc" = 1 ] && python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))["unpredictable"]
sys.exit(not ("7" in u and "another entry" in u["7"]))' "$n/other.json"; then
        it_pass "$T: the same kernel with B's MokList (the other MOK verifies it): PCR 7 unpredictable, named, exit 1"
else
        it_fail "$T: the same kernel with B's MokList (the other MOK verifies it): PCR 7 unpredictable, named, exit 1 (status $rc)"
        cat "$n/other.json" "$n/other.err" >&2
fi

# mshim's MOK gone from MokList: shim would refuse mshim.
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); n = int.from_bytes(d[16:20], "little"); open(sys.argv[2], "wb").write(d[n:])' \
        "$k/MokList-b.bin" "$k/MokList-other.bin"
"$IT_CLI" predict "${base[@]}" --mok "$k/MokList-other.bin" --json > "$b/gone.json" 2> "$b/gone.err"
rc=$?
if [ "$rc" = 1 ] && python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))["unpredictable"]
sys.exit(not (set(u) >= {"4", "5", "7", "9", "12", "14"} and "would refuse mshim" in u["7"]))' "$b/gone.json"; then
        it_pass "$T: a MokList without mshim's MOK: unpredictable (shim would refuse mshim), exit 1"
else
        it_fail "$T: a MokList without mshim's MOK: unpredictable (shim would refuse mshim), exit 1 (status $rc)"
        cat "$b/gone.json" "$b/gone.err" >&2
fi

# ---- attestation behind shim: the quotes A and B made from their initramfs ----------
AK=$IT_DIR/reg/ak.pub
if it_attest_got "$a" "A"; then
        it_attest_verify "A: behind Debian's signed shim, Secure Boot on: mshim verify accepts the guest's evidence" 0 "" \
                "$IT_DIR/v-a.json" --ak "$AK" --nonce "$(cat "$a/nonce")" "$a/att/evidence.json"
        # The MOK's authority: the SHA-256 of its DER (openssl's file, hashlib).
        it_attest_facts "A: the verdict's facts: Secure Boot on, shim's MokListRT authority is the MOK that signed mshim" \
                "$IT_DIR/v-a.json" "f['secure_boot'] is True and ('MokListRT', __import__('hashlib').sha256(open('$k/mok.der', 'rb').read()).hexdigest()) in [(x['variable'], x['sha256']) for x in f['authorities']]"
        it_attest_verify "A: refused by verify --state with B's prediction alone (another MokList): PCR 14 named" 1 \
                "refused: state: no reference state matches: PCR 14 differs from the closest, the prediction" "$IT_DIR/v-a2.json" \
                --ak "$AK" --nonce "$(cat "$a/nonce")" --state "$b/predict.json" "$a/att/evidence.json"
fi
if it_attest_got "$b" "B"; then
        it_attest_verify "B: a predicted MokList change behind shim: mshim verify --state (its prediction) accepts the evidence" 0 \
                "PCRs [0-9,]+ are those of the prediction $b/predict.json" "$IT_DIR/v-b.json" --ak "$AK" \
                --nonce "$(cat "$b/nonce")" --state "$b/predict.json" "$b/att/evidence.json"
fi
if it_attest_got "$c" "C"; then
        it_attest_verify "C: an upgrade behind shim (the RT kernel, a rebuilt mshim) predicted from A beforehand: mshim verify --state (its prediction) accepts the evidence" 0 \
                "PCRs [0-9,]+ are those of the prediction $c/predict.json" "$IT_DIR/v-c.json" --ak "$AK" \
                --nonce "$(cat "$c/nonce")" --state "$c/predict.json" "$c/att/evidence.json"
        it_attest_verify "C: refused by verify --state with A's own prediction (the same boot again): PCR 4 named" 1 \
                "no reference state matches: PCRs? 4[,0-9]* differs? from the closest" "$IT_DIR/v-c2.json" --ak "$AK" --nonce "$(cat "$c/nonce")" --state "$a/same.json" \
                "$c/att/evidence.json"
fi
# Keylime's own engine with the mshim policy on the boot behind shim: the
# refstate of A's log (its firmware part: Secure Boot, PK/KEK/db/dbx,
# shim's MokList digests) accepts A's log; B's (another MokList) is
# rejected with it.
if "$IT_CLI" verify keylime-refstate --log "$a/result/eventlog.bin" -o "$IT_DIR/ref-a.json" 2> "$IT_DIR/ref.err"; then
        it_keylime_accepts "A: behind Debian's signed shim: Keylime's engine with the mshim policy accepts A's log (the refstate of A's log)" \
                "$IT_DIR/ref-a.json" "$a/result/eventlog.bin"
        it_keylime_rejects "B: another MokList: Keylime's engine rejects B's log with A's refstate" "." \
                "$IT_DIR/ref-a.json" "$b/result/eventlog.bin"
else
        it_fail "$T: mshim verify keylime-refstate --log of A's log (behind shim)"; cat "$IT_DIR/ref.err" >&2
fi
# A fleet's upgrade behind shim allowed before it boots: the refstate of
# A's log and C's prediction (--no-log: the prediction alone).
if "$IT_CLI" verify keylime-refstate --log "$a/result/eventlog.bin" --no-log --state "$c/predict.json" \
        -o "$IT_DIR/ref-c.json" 2> "$IT_DIR/ref-c.err"; then
        it_keylime_accepts "C: Keylime's engine with the mshim policy accepts the upgrade's log (the refstate of C's prediction, made before it booted)" \
                "$IT_DIR/ref-c.json" "$c/result/eventlog.bin"
        it_keylime_rejects "A: Keylime's engine rejects A's log with the refstate of C's prediction alone" "." \
                "$IT_DIR/ref-c.json" "$a/result/eventlog.bin"
else
        it_fail "$T: mshim verify keylime-refstate --no-log --state C's prediction"; cat "$IT_DIR/ref-c.err" >&2
fi
exit "$IT_FAILED"
