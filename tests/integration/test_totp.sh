#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The TOTP code at boot (issue 12, docs/CONFIG.md "TOTP"), proven by
# booting OVMF + swtpm + the Debian kernel with the guest's RTC starting at
# a fixed time (-rtc base=...).
#
#   base       loader.conf "totp show", no enrolment: the warning, the
#              kernel starts, the fence is PCR 12's last event; its log is
#              the baseline for the prediction the enrolment uses.
#   (host)     a TPM state provisioned on the host (swtpm_setup), the key
#              enrolled into it with `mshim totp enroll --literal --pcrs`
#              from `mshim predict --totp-point --initrd` of base's log, the
#              enrolled initrd (lib.sh's, with the fence attempt below: PCR
#              12 binds the initrd) and a known secret; every later boot
#              starts from that state (DIR/tpm.in) with that initrd.
#   enrolled   the same ESP and the enrolment file: each code on the
#              console is oathtool's for that secret at the step it names,
#              a step inside the guest clock's span; the kernel starts;
#              PCR 12's initrd event is oracle.py's (size and SHA-256).
#              The fence, in the guest: its /init replays its own event log
#              up to the fence (the enrolled state, checked against the
#              enrolment's) and runs the loader's own commands with it on
#              /dev/tpm0 (tpm2_dev totp-log), as root would:
#              the TPM refuses. The fence, on the host: on a copy of the enrolled TPM state,
#              the guest's own events for PCRs 4, 5, 7 and 12 (its log)
#              logged before the fence give the same code through the
#              loader's very commands (tests/tpm/tpm2_swtpm, src/tpm2.c's
#              bytes); the fence alone makes the TPM refuse; with the
#              rest too (the guest's final PCR values, checked against what
#              the guest read) the TPM refuses the policy: after mshim,
#              nothing gets a code from the literal policy (PCRs only ever
#              extend). The fence is PCR 12's last event and PCR 13's only
#              one (the signed key's lock: root's own approvals of a fenced
#              boot are refused, tests/cli/test_totp.sh "root attack").
#   options    one byte of the command line changed: no code, the warning,
#              the kernel starts; its PCRs equal `mshim predict --options`'s
#              (the fence included).
#   kernel     Debian's RT kernel in the generic one's place (PCR 4): no
#              code, the warning, the kernel starts.
#   signed     the same secret enrolled in signed mode (docs/SEALING.md "The
#              TOTP key": PolicyAuthorize with the policyRef naming PCRs
#              4,5,7,12, then PolicyPCR of PCR 13 all zeros) into a TPM
#              state of its own, its first approval revoked (mshim policy
#              revoke), a new one made (policy approve --totp): the loader's
#              codes are oathtool's, and the fence is in PCRs 12 and 13.
#   signedbad  the revoked approval and a forged one (openssl, another
#              key, over the right policy and policyRef): no code, the
#              console says 1 revoked, 1 not signed, then the warning.
#   evil       issue 20's evil maid: the enrolled ESP (same kernel, same
#              command line) with another initrd (lib.sh's, without the
#              fence attempt): no code, the warning, the kernel starts; PCR
#              12 binds that initrd (oracle.py), which is why.
#   require    loader.conf "totp require" (a changed loader.conf: PCR 5):
#              the warning and the refusal, the kernel never starts.
#   floor      the built-in boot policy "totp require" (mshim boot-policy
#              --set totp=require), loader.conf "totp no", no enrolment:
#              loader.conf cannot lower the floor: the refusal, no kernel.
set -u
. "$(dirname "$0")/lib.sh"
T=totp
it_init "$T"
TPM2_SWTPM=$IT_B/test/tpm2_swtpm
TPM2_DEV=$IT_B/it/tpm2_dev
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_KERNEL_RT" "$IT_CLI" "$TPM2_SWTPM" "$TPM2_DEV" || ! command -v oathtool >/dev/null ||
   ! command -v tpm2_pcrextend >/dev/null; then
        it_fail "$T: prerequisites (make build/mshim $TPM2_SWTPM; oathtool, tpm2-tools: make deps)"; exit 1
fi

BASE_TIME=2026-01-01T00:00:00
BASE_UNIX=$(date -u -d "${BASE_TIME}Z" +%s)
# shellcheck disable=SC2034 # read by lib.sh's it_qemu
IT_QEMU_EXTRA=(-rtc "base=$BASE_TIME,clock=host")
SHOW_CONF='# mshim integration test 0
timeout 0
default mshim-test
totp show
totp-timeout 2
'
# The secret (20 bytes) and its base32, as an authenticator app gets it.
head -c 20 /dev/urandom > "$IT_DIR/secret"
B32=$(python3 -c 'import base64,sys; print(base64.b32encode(open(sys.argv[1],"rb").read()).decode())' "$IT_DIR/secret")

# console DIR: the serial log without carriage returns.
console() { tr -d '\r' < "$1/serial.log"; }

# has DIR NAME TEXT / hasnt DIR NAME TEXT: the console holds TEXT or not.
has() {
        if console "$1" | grep -aqF -- "$3"; then it_pass "$T: $2"; else
                it_fail "$T: $2: no '$3' on the console"; console "$1" | grep -a '^mshim:' >&2; fi
}
hasnt() {
        if console "$1" | grep -aqF -- "$3"; then it_fail "$T: $2: '$3' is on the console"; else it_pass "$T: $2"; fi
}

# no_code DIR NAME: no "mshim: TOTP <6 digits> for" line on the console.
no_code() {
        if console "$1" | grep -aqE '^mshim: TOTP [0-9]{6} for'; then it_fail "$T: $2: a code was shown"
        else it_pass "$T: $2: no code"; fi
}

# fence_last DIR NAME: the fence is PCR 12's last event, once, and PCR 13's
# one event, the guest's PCR 13 its digest extended into zeros (oracle.py
# check-fence: the bytes as docs/MEASUREMENTS.md spells them, hashlib).
fence_last() { it_oracle check-fence --result "$1/result" --name "$T: $2" || IT_FAILED=1; }

# ---- base: totp show without an enrolment --------------------------------------------
A=$(it_newboot base) || { it_fail "$T: set-up base"; exit 1; }
printf '%s' "$SHOW_CONF" > "$A/esp/loader/loader.conf"
if it_boot "$A"; then
        it_pass "$T: base: the kernel starts with totp show and no enrolment"
        has "$A" "base: the loader says why there is no code" "mshim: TOTP: no enrolment"
        has "$A" "base: the warning" "mshim: no TOTP code could be made: do not type secrets"
        fence_last "$A" base
        it_check_replay "$A" "$T: base"
else
        it_fail "$T: base: boot"; exit 1
fi

# ---- the enrolment, on the host ------------------------------------------------------
# The enrolled boots' initramfs: lib.sh's, and first thing in its /init the
# loader's own literal sequence (tpm2_dev: src/tpm2.c's bytes) on
# /dev/tpm0, from inside the booted system, with the state root finds by
# replaying the guest's event log up to the fence (no value baked in: PCR
# 12 binds this very initrd).
cat >"$IT_DIR/fence-extra.sh" <<EOF
#!/bin/sh
[ "\$1" = --stage ] || exit 2
cp "$TPM2_DEV" "\$2/bin/tpm2_dev" || exit 1
printf '#!/bin/sh\necho FENCE-ATTEMPT-BEGIN\n/bin/tpm2_dev /dev/tpm0 totp-log /sys/kernel/security/tpm0/binary_bios_measurements 0x81004d54 1\necho FENCE-ATTEMPT-END\n' \
        >"\$2/init.pre" && chmod 0755 "\$2/init.pre" "\$2/bin/tpm2_dev"
EOF
chmod +x "$IT_DIR/fence-extra.sh"
INITRD_ENROLLED=$IT_DIR/initrd-enrolled.img
EXTRA=$IT_DIR/fence-extra.sh "$IT_REPO/scripts/mkinitramfs.sh" "$INITRD_ENROLLED" >/dev/null ||
        { it_fail "$T: set-up (the initramfs with the fence attempt)"; exit 1; }
# The PCRs at the TOTP point of a boot like base with the enrolled initrd
# (PCR 12 with its initrd event, without the fence).
it_pcrs_file "$A" > "$IT_DIR/base.pcrs"
if "$IT_CLI" predict --log "$A/result/eventlog.bin" --pcrs "$IT_DIR/base.pcrs" --totp-point --initrd "$INITRD_ENROLLED" \
        --select 4,5,7,12 --json > "$IT_DIR/point.json" \
        2> "$IT_DIR/predict.err" &&
   python3 - "$IT_DIR/point.json" > "$IT_DIR/point.pcrs" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert not p.get("unpredictable"), p.get("unpredictable")
for n in (4, 5, 7, 12):
    print("sha256:%d=%s" % (n, p["pcrs"]["sha256"][str(n)]))
PY
then
        it_pass "$T: mshim predict --totp-point predicts PCRs 4, 5, 7, 12 at the TOTP point"
else
        it_fail "$T: mshim predict --totp-point"; cat "$IT_DIR/predict.err" "$IT_DIR/point.json" >&2; exit 1
fi
TPMIN=$IT_DIR/tpm.in
mkdir -p "$TPMIN"
swtpm_setup --tpm2 --tpmstate "$TPMIN" --pcr-banks "$IT_BANKS" --overwrite --logfile "$IT_DIR/setup.log" >/dev/null 2>&1 ||
        { it_fail "$T: swtpm_setup"; cat "$IT_DIR/setup.log" >&2; exit 1; }

# host_tpm_start DIR: swtpm on state DIR for the host's tools (TCTI printed).
host_tpm_start() {
        swtpm socket --tpm2 --tpmstate dir="$1" --server type=unixio,path="$1/srv" \
                --ctrl type=unixio,path="$1/srv.ctrl" --flags not-need-init,startup-clear --daemon || return 1
        local i=0
        while [ ! -S "$1/srv" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        echo "swtpm:path=$1/srv"
}
host_tpm_stop() { swtpm_ioctl --unix "$1/srv.ctrl" -s 2>/dev/null; rm -f "$1/srv" "$1/srv.ctrl"; }

mkdir -p "$IT_DIR/enrol-esp" "$IT_DIR/state"
TCTI=$(host_tpm_start "$TPMIN") || { it_fail "$T: swtpm for the enrolment"; exit 1; }
if TPM2TOOLS_TCTI=$TCTI "$IT_CLI" totp enroll --literal --pcrs "$IT_DIR/point.pcrs" --select 4,5,7,12 \
        --secret-file "$IT_DIR/secret" --esp "$IT_DIR/enrol-esp" --state-dir "$IT_DIR/state" --uri \
        > "$IT_DIR/enroll.out" 2>&1; then
        it_pass "$T: mshim totp enroll --literal into the provisioned TPM state"
else
        it_fail "$T: mshim totp enroll"; cat "$IT_DIR/enroll.out" >&2
fi
host_tpm_stop "$TPMIN"
ENROL=$IT_DIR/enrol-esp/loader/mshim/totp
[ -s "$ENROL" ] || { it_fail "$T: no enrolment file"; exit 1; }
# The enrolled state is the prediction (one state: the --pcrs values).
STATE_DIGEST=$(python3 -c '
import hashlib, sys
v = dict(l.strip().split("=") for l in open(sys.argv[1]))
print(hashlib.sha256(b"".join(bytes.fromhex(v["sha256:%d" % n]) for n in (4, 5, 7, 12))).hexdigest())' "$IT_DIR/point.pcrs")
# Its PolicyPCR digest (TPM 2.0 Part 3, TPM2_PolicyPCR: H(0^32 || CC 0x17F ||
# TPML_PCR_SELECTION {1, sha256, 3, PCRs 4,5,7,12} || pcrDigest)), twice: the
# PolicyOR of one state with itself that the enrolment's policy ends with.
LEAF=$(python3 -c '
import hashlib, sys
sel = (1).to_bytes(4, "big") + (0x000b).to_bytes(2, "big") + bytes([3, 0xb0, 0x10, 0x00])
print(hashlib.sha256(bytes(32) + (0x17F).to_bytes(4, "big") + sel + bytes.fromhex(sys.argv[1])).hexdigest())' "$STATE_DIGEST")

# enrolled_boot NAME CONF OPTIONS: a boot from the enrolled TPM state with
# the enrolment file and the enrolled initrd.
enrolled_boot() {
        local d
        d=$(it_newboot "$1") || return 1
        printf '%s' "$2" > "$d/esp/loader/loader.conf"
        sed -i "s/^options .*/options $3/" "$d/esp/loader/entries/mshim-test.conf"
        cp "$INITRD_ENROLLED" "$d/esp/initrd.img" &&
        mkdir -p "$d/esp/loader/mshim" && cp "$ENROL" "$d/esp/loader/mshim/totp" && cp -a "$TPMIN" "$d/tpm.in" &&
                rm -f "$d/tpm.in/srv" "$d/tpm.in/srv.ctrl" && echo "$d"
}
OPTS2=${IT_OPTIONS/mshim.test=0/mshim.test=1}
B=$(enrolled_boot enrolled "$SHOW_CONF" "$IT_OPTIONS") || { it_fail "$T: set-up enrolled"; exit 1; }
C=$(enrolled_boot options "$SHOW_CONF" "$OPTS2") || { it_fail "$T: set-up options"; exit 1; }
# The evil maid's swap: lib.sh's initrd in the enrolled one's place.
E=$(enrolled_boot evil "$SHOW_CONF" "$IT_OPTIONS") && cp "$IT_INITRD" "$E/esp/initrd.img" &&
        ! cmp -s "$E/esp/initrd.img" "$INITRD_ENROLLED" || { it_fail "$T: set-up evil"; exit 1; }
# The built-in floor: "totp require" in the image, "totp no" in loader.conf,
# no enrolment file.
"$IT_CLI" boot-policy --set totp=require -o "$IT_DIR/mshim-totp-require.efi" "$IT_EFI" >/dev/null &&
        FL=$(it_newboot floor "$IT_DIR/mshim-totp-require.efi") &&
        printf '%s' "${SHOW_CONF/totp show/totp no}" > "$FL/esp/loader/loader.conf" ||
        { it_fail "$T: set-up floor"; exit 1; }
D=$(enrolled_boot require "${SHOW_CONF/totp show/totp require}" "$IT_OPTIONS") || { it_fail "$T: set-up require"; exit 1; }
K=$(enrolled_boot kernel "$SHOW_CONF" "$IT_OPTIONS") && cp "$IT_KERNEL_RT" "$K/esp/vmlinuz" ||
        { it_fail "$T: set-up kernel"; exit 1; }

# ---- the signed mode, on the host -------------------------------------------------------
# Its own TPM state: the policy key (mshim policy init), the key enrolled
# in signed mode (its first approval, "enrolment", at epoch 0), revoked
# (epoch 1), then approved again at epoch 1 (--current --pcrs: the TOTP
# point). A forged approval: that epoch-1 approval with its signature
# remade by openssl with another key, over SHA-256(policy || "mshim-totp").
TPMS=$IT_DIR/tpm.signed
mkdir -p "$TPMS" "$IT_DIR/signed-esp" "$IT_DIR/signed-state"
swtpm_setup --tpm2 --tpmstate "$TPMS" --pcr-banks "$IT_BANKS" --overwrite --logfile "$IT_DIR/setup.log" >/dev/null 2>&1 ||
        { it_fail "$T: swtpm_setup (signed)"; exit 1; }
TCTI=$(host_tpm_start "$TPMS") || { it_fail "$T: swtpm for the signed enrolment"; exit 1; }
SA=$IT_DIR/signed-esp/loader/mshim/totp-approvals
if (export TPM2TOOLS_TCTI=$TCTI
    "$IT_CLI" policy init --state-dir "$IT_DIR/signed-state" &&
    "$IT_CLI" totp enroll --signed --pcrs "$IT_DIR/point.pcrs" --select 4,5,7,12 --secret-file "$IT_DIR/secret" \
            --esp "$IT_DIR/signed-esp" --state-dir "$IT_DIR/signed-state" --uri &&
    "$IT_CLI" policy revoke --state-dir "$IT_DIR/signed-state" --esp "$IT_DIR/signed-esp" &&
    "$IT_CLI" policy approve --totp --current --pcrs "$IT_DIR/point.pcrs" --label current \
            --state-dir "$IT_DIR/signed-state" --esp "$IT_DIR/signed-esp") >"$IT_DIR/signed.out" 2>&1 &&
   [ "$(ls "$SA"/*.approval | wc -l)" = 2 ]; then
        it_pass "$T: signed: policy init, totp enroll --signed, policy revoke, policy approve --totp"
else
        it_fail "$T: signed: enrolment on the host"; cat "$IT_DIR/signed.out" >&2
fi
host_tpm_stop "$TPMS"
REVOKED=$(grep -lx "label enrolment" "$SA"/*.approval)
CURRENT=$(grep -lx "label current" "$SA"/*.approval)
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$IT_DIR/evil.key" 2>/dev/null
python3 - "$CURRENT" "$IT_DIR/evil.key" "$IT_DIR/forged.approval" <<'PY'
import hashlib, subprocess, sys
lines = open(sys.argv[1]).read().splitlines()
kv = dict(l.split(" ", 1) for l in lines if " " in l)
# policyRef: "mshim-totp" || TPML_PCR_SELECTION {1, sha256, 3, PCRs 4,5,7,12}
ref = b"mshim-totp" + bytes.fromhex("00000001000b03b01000")
ahash = hashlib.sha256(bytes.fromhex(kv["policy"]) + ref).digest()
sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", sys.argv[2]], input=ahash,
                     capture_output=True, check=True).stdout
out = [("signature " + sig.hex()) if l.startswith("signature ") else l for l in lines]
open(sys.argv[3], "w").write("\n".join(out) + "\n")
PY
# signed_boot NAME APPROVAL...: a boot from the signed TPM state with the
# signed enrolment and these approvals.
signed_boot() {
        local d n=$1; shift
        d=$(it_newboot "$n") || return 1
        printf '%s' "$SHOW_CONF" > "$d/esp/loader/loader.conf"
        cp "$INITRD_ENROLLED" "$d/esp/initrd.img" &&
        mkdir -p "$d/esp/loader/mshim/totp-approvals" && cp "$IT_DIR/signed-esp/loader/mshim/totp" "$d/esp/loader/mshim/" &&
                cp "$@" "$d/esp/loader/mshim/totp-approvals/" && cp -a "$TPMS" "$d/tpm.in" &&
                rm -f "$d/tpm.in/srv" "$d/tpm.in/srv.ctrl" && echo "$d"
}
S=$(signed_boot signed "$REVOKED" "$CURRENT") || { it_fail "$T: set-up signed"; exit 1; }
X=$(signed_boot signedbad "$REVOKED" "$IT_DIR/forged.approval") || { it_fail "$T: set-up signedbad"; exit 1; }

IT_JOBS=${IT_JOBS:-2} it_boot_all "$B" "$C" "$K" "$S" "$X" "$E"
# require, floor: the loader returns to the firmware, which would go on to
# its other boot options: stop at the refusal, and see that no kernel ran.
for d in "$D" "$FL"; do
        ( it_mkesp "$d" && it_qemu "$d" --stop 'totp require: refusing to boot|Linux version' --timeout 240
          echo $? > "$d/stop.rc" ) &
done
wait
D_RC=$(cat "$D/stop.rc" 2>/dev/null || echo 1)
FL_RC=$(cat "$FL/stop.rc" 2>/dev/null || echo 1)

# ---- enrolled ------------------------------------------------------------------------
if [ "$(cat "$B/boot.rc")" = 0 ]; then
        it_pass "$T: enrolled: the kernel starts"
        it_totp_codes "$B" "$B32" "$BASE_UNIX" "$T: enrolled"
        hasnt "$B" "enrolled: no warning" "do not type secrets"
        fence_last "$B" enrolled
        it_oracle check-totp-initrd --result "$B/result" --name "$T: enrolled" --initrd "$B/esp/initrd.img" ||
                IT_FAILED=1
        it_check_replay "$B" "$T: enrolled"
        # The fence from inside the guest: its /init, root, replayed its
        # log up to the fence (the enrolled state: the enrolment's digest)
        # and ran the loader's sequence with it: the TPM refused PolicyPCR
        # (PCR 12 holds the fence), no HMAC came back.
        attempt=$(console "$B" | sed -n '/^FENCE-ATTEMPT-BEGIN$/,/^FENCE-ATTEMPT-END$/p')
        if echo "$attempt" | grep -qx "state $STATE_DIGEST"; then
                it_pass "$T: fence: root in the guest finds the enrolled state in its event log"
        else
                it_fail "$T: fence: the guest's replay is not the enrolled state $STATE_DIGEST: $attempt"
        fi
        if echo "$attempt" | grep -q '^FENCE-ATTEMPT-END$' && echo "$attempt" | grep -q '^refused PolicyPCR .* VALUE' &&
           ! echo "$attempt" | grep -q '^hmac '; then
                it_pass "$T: fence: in the booted guest, root's attempt with the enrolled key and policy is refused"
        else
                it_fail "$T: fence: the guest's own attempt: $attempt"
        fi
        # The fence, on the host: the guest's events replayed onto the
        # enrolled TPM state, up to the fence (the TOTP point), then the
        # fence and the rest (the guest's final PCRs).
        python3 - "$IT_REPO/tests/integration" "$B/result" > "$IT_DIR/replay.txt" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import oracle
fence = b"\x08\x68\x73\x6d\x11\x00\x00\x00mshim TOTP fence\x00"
# The TOTP point is right before the fence: what the log holds before it
# ("event"), the fence itself, and what follows (ExitBootServices in PCR 5).
after = False
for e in oracle.load_log(sys.argv[2] + "/eventlog.bin"):
    kind = "fence" if e.data == fence else "after" if after else "event"
    after = after or e.data == fence
    if e.pcr in (4, 5, 7, 12) and e.type != oracle.EV_NO_ACTION:
        print("%s %d %s" % (kind, e.pcr, e.digests["sha256"].hex()))
r = oracle.load_result(sys.argv[2])
print("guest %s" % "".join(oracle.tpm_pcr(r, "sha256", n).hex() for n in (4, 5, 7, 12)))
PY
        H=$IT_DIR/host-tpm
        rm -rf "$H" && cp -a "$TPMIN" "$H" && rm -f "$H/srv" "$H/srv.ctrl"
        TCTI=$(host_tpm_start "$H") || it_fail "$T: swtpm for the fence check"
        export TPM2TOOLS_TCTI=$TCTI
        while read -r kind pcr dig; do
                [ "$kind" = event ] && tpm2_pcrextend "$pcr:sha256=$dig"
        done < "$IT_DIR/replay.txt"
        step=$(( $(date +%s) / 30 ))
        # host_code: the loader's sequence on the host TPM now.
        host_code() { "$TPM2_SWTPM" "$TCTI" totp 0x81004d54 0xb 0x10b0 "$(printf %x "$step")" "$STATE_DIGEST" "$LEAF$LEAF" 2>&1; }
        # refused NAME OUTPUT: the TPM refused PolicyPCR, no HMAC came back.
        refused() {
                if echo "$2" | grep -q '^refused PolicyPCR .* VALUE' && ! echo "$2" | grep -q '^hmac '; then
                        it_pass "$T: fence: $1"
                else
                        it_fail "$T: fence: $1: $2"
                fi
        }
        out=$(host_code)
        mac=$(echo "$out" | sed -n 's/^hmac //p')
        code=$(python3 -c '
import sys
h = bytes.fromhex(sys.argv[1]); o = h[-1] & 15
print("%06d" % ((int.from_bytes(h[o:o + 4], "big") & 0x7fffffff) % 1000000))' "${mac:-00}" 2>/dev/null)
        want=$(oathtool --totp -b "$B32" --now "@$((step * 30))")
        if [ -n "$mac" ] && [ "$code" = "$want" ]; then
                it_pass "$T: fence: the guest's PCRs before the fence still give the code (host, the loader's commands)"
        else
                it_fail "$T: fence: before the fence the host gets no code ($out; want $want)"
        fi
        # The fence alone (no ExitBootServices events yet) closes the door.
        while read -r kind pcr dig; do
                [ "$kind" = fence ] && tpm2_pcrextend "$pcr:sha256=$dig"
        done < "$IT_DIR/replay.txt"
        refused "the fence alone makes the TPM refuse the policy" "$(host_code)"
        while read -r kind pcr dig; do
                [ "$kind" = after ] && tpm2_pcrextend "$pcr:sha256=$dig"
        done < "$IT_DIR/replay.txt"
        host=$(tpm2_pcrread sha256:4,5,7,12 -o "$IT_DIR/pcrs.bin" >/dev/null 2>&1 && od -An -tx1 -v "$IT_DIR/pcrs.bin" | tr -d ' \n')
        if [ "$host" = "$(sed -n 's/^guest //p' "$IT_DIR/replay.txt")" ]; then
                it_pass "$T: fence: the host's PCRs 4, 5, 7, 12 are the guest's final ones"
        else
                it_fail "$T: fence: host PCRs $host are not the guest's"
        fi
        refused "with the guest's final PCRs the TPM refuses the policy: no code after mshim" "$(host_code)"
        host_tpm_stop "$H"
        unset TPM2TOOLS_TCTI
else
        it_fail "$T: enrolled: boot"
fi

# ---- options ---------------------------------------------------------------------------
if [ "$(cat "$C/boot.rc")" = 0 ]; then
        it_pass "$T: options: the kernel starts (totp show)"
        has "$C" "options: the warning" "mshim: this boot is not the enrolled one: do not type secrets"
        hasnt "$C" "options: no code" "mshim: TOTP 0"
        if console "$C" | grep -aqE '^mshim: TOTP [0-9]{6} for'; then it_fail "$T: options: a code was shown"; fi
        fence_last "$C" options
        if "$IT_CLI" predict --log "$A/result/eventlog.bin" --pcrs "$IT_DIR/base.pcrs" --options "$OPTS2" \
                --entry "$C/esp/loader/entries/mshim-test.conf" --initrd "$C/esp/initrd.img" --json > "$IT_DIR/options.json"; then
                it_predict_check "$T: options: predicted from base (initrd event and fence included)" "$A" "$C" "$IT_DIR/options.json" ||
                        IT_FAILED=1
        else
                it_fail "$T: options: mshim predict"
        fi
else
        it_fail "$T: options: boot"
fi

# ---- kernel ----------------------------------------------------------------------------
if [ "$(cat "$K/boot.rc")" = 0 ]; then
        it_pass "$T: kernel: the RT kernel starts (totp show)"
        has "$K" "kernel: the warning" "mshim: this boot is not the enrolled one: do not type secrets"
        no_code "$K" kernel
        fence_last "$K" kernel
else
        it_fail "$T: kernel: boot"
fi

# ---- signed ----------------------------------------------------------------------------
if [ "$(cat "$S/boot.rc")" = 0 ]; then
        it_totp_codes "$S" "$B32" "$BASE_UNIX" "$T: signed: a revoked approval and a current one"
        hasnt "$S" "signed: no warning" "do not type secrets"
        fence_last "$S" signed
else
        it_fail "$T: signed: boot"
fi
if [ "$(cat "$X/boot.rc")" = 0 ]; then
        has "$X" "signedbad: a revoked and a forged approval: each refused, said why" \
                "mshim: TOTP: none of the 2 approvals holds for this boot: 0 for other PCR values, 1 revoked, 1 not signed by the policy key"
        has "$X" "signedbad: the warning" "mshim: this boot is not the enrolled one: do not type secrets"
        no_code "$X" signedbad
        fence_last "$X" signedbad
else
        it_fail "$T: signedbad: boot"
fi

# ---- evil ------------------------------------------------------------------------------
if [ "$(cat "$E/boot.rc")" = 0 ]; then
        it_pass "$T: evil: the kernel starts with the swapped initrd (totp show)"
        has "$E" "evil: the loader binds the initrd before the code" "mshim: TOTP: the code vouches for the initrd too"
        has "$E" "evil: another initrd, same kernel and command line: the warning" \
                "mshim: this boot is not the enrolled one: do not type secrets"
        no_code "$E" "evil: another initrd, same kernel and command line"
        fence_last "$E" evil
        # Why: PCR 12 holds the swapped initrd's event (oracle.py, from the
        # ESP's file), not the enrolled one's.
        it_oracle check-totp-initrd --result "$E/result" --name "$T: evil" --initrd "$E/esp/initrd.img" || IT_FAILED=1
else
        it_fail "$T: evil: boot"
fi

# ---- require ---------------------------------------------------------------------------
if [ "$D_RC" = 0 ] || [ "$D_RC" = 125 ]; then
        has "$D" "require: the warning" "mshim: this boot is not the enrolled one: do not type secrets"
        has "$D" "require: the refusal" "mshim: totp require: refusing to boot"
        hasnt "$D" "require: the kernel never starts" "Linux version"
else
        it_fail "$T: require: boot status $D_RC"; it_show_serial "$D"
fi

# ---- floor -----------------------------------------------------------------------------
if [ "$FL_RC" = 0 ] || [ "$FL_RC" = 125 ]; then
        has "$FL" "floor: built-in totp require, loader.conf totp no: TOTP still runs" "mshim: TOTP: no enrolment"
        has "$FL" "floor: the refusal" "mshim: totp require: refusing to boot"
        hasnt "$FL" "floor: loader.conf cannot lower it: the kernel never starts" "Linux version"
else
        it_fail "$T: floor: boot status $FL_RC"; it_show_serial "$FL"
fi
exit "$IT_FAILED"
