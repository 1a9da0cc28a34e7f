#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench, part 4: the TOTP code at boot (issue 12), TPM commands and TPM
# time, mshim's literal and signed policies next to tpm2-totp's sequence.
#
# Commands at boot: the real loader under QEMU + OVMF + swtpm (the
# integration suite's set-up, tests/integration/lib.sh), with swtpm
# logging every command it reads (--log level=20); the commands between
# the first StartAuthSession and the fence's PCR_Extend are the TOTP
# point's, counted on the TPM's side (scripts/bench/tpmcount.py), never by
# hand. Three boots: one to learn the TOTP point (`mshim predict
# --totp-point`), one per policy from a TPM state enrolled on the host.
# tpm2-totp (not packaged in Debian 12) is given by its published
# sequence: NV_ReadPublic, NV_Read, CreatePrimary, Load, StartAuthSession,
# PolicyPCR, HMAC.
#
# TPM time: on one host swtpm, the median of BENCH_RUNS runs of mshim's
# literal and signed sequences (tests/tpm/tpm2_swtpm: the loader's
# src/tpm2.c bytes, against keys enrolled to the swtpm's current PCRs)
# against the one command of tpm2-totp's that mshim does not send,
# CreatePrimary of a storage key (RSA-2048 and ECC P-256), timed as the TPM's round trips
# only (tpm2_swtpm's tpm_us), not the processes around them.
# Informative: exits non-zero only when a tool fails to run.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
RUNS=${BENCH_RUNS:-5}
# All four banks, as the figures in docs/ were measured.
IT_ALL_BANKS=1
. tests/integration/lib.sh
TPM2_SWTPM=$IT_B/test/tpm2_swtpm
die() { echo "bench-totp: $*" >&2; exit 1; }
it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$TPM2_SWTPM" || die "prerequisites missing (make check-build)"
it_init bench-totp
D=$IT_DIR
CONF='timeout 0
default mshim-test
totp show
totp-timeout 1
'
SEL=4,5,7,12
head -c 20 /dev/urandom > "$D/secret"

# host_tpm DIR: a provisioned swtpm state served to the host (TCTI printed).
host_tpm() {
        mkdir -p "$1"
        [ -f "$1/tpm2-00.permall" ] || swtpm_setup --tpm2 --tpmstate "$1" --pcr-banks "$IT_BANKS" --overwrite \
                --logfile "$1/setup.log" > /dev/null 2>&1 || return 1
        swtpm socket --tpm2 --tpmstate dir="$1" --server type=unixio,path="$1/srv" --ctrl type=unixio,path="$1/srv.ctrl" \
                --flags not-need-init,startup-clear --daemon --pid file="$1/pid" || return 1
        local i=0
        while [ ! -S "$1/srv" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        echo "swtpm:path=$1/srv"
}
host_tpm_stop() {
        swtpm_ioctl --unix "$1/srv.ctrl" -s 2> /dev/null
        local i=0
        while [ -f "$1/pid" ] && kill -0 "$(cat "$1/pid")" 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        rm -f "$1/srv" "$1/srv.ctrl" "$1/pid"
}

# ---- the TOTP point of this set-up ----------------------------------------------
a=$(it_newboot base) || die "set-up"
printf '%s' "$CONF" > "$a/esp/loader/loader.conf"
it_boot "$a" > "$D/base.out" 2>&1 || { cat "$D/base.out" >&2; die "the base boot failed"; }
it_pcrs_file "$a" > "$D/base.pcrs"
"$IT_CLI" predict --log "$a/result/eventlog.bin" --pcrs "$D/base.pcrs" --totp-point --select "$SEL" --json \
        > "$D/point.json" || die "mshim predict --totp-point failed"
python3 - "$D/point.json" > "$D/point.pcrs" << 'PY' || die "no TOTP point"
import json, sys
p = json.load(open(sys.argv[1]))
for n in (4, 5, 7, 12):
    print("sha256:%d=%s" % (n, p["pcrs"]["sha256"][str(n)]))
PY

# enrol MODE: a TPM state of its own with the key enrolled (MODE literal
# or signed), then a boot from it that shows the code; prints the boot dir.
enrol() {
        local t=$D/tpm.$1 esp=$D/esp.$1 tcti d
        mkdir -p "$esp" "$D/state.$1"
        tcti=$(host_tpm "$t") || return 1
        (
                export TPM2TOOLS_TCTI=$tcti
                [ "$1" = literal ] || "$IT_CLI" policy init --state-dir "$D/state.$1" > /dev/null || exit 1
                "$IT_CLI" totp enroll "--$1" --pcrs "$D/point.pcrs" --select "$SEL" --secret-file "$D/secret" \
                        --esp "$esp" --state-dir "$D/state.$1" --uri > /dev/null
        ) 2> "$D/enrol.$1.err"
        local rc=$?
        host_tpm_stop "$t"
        [ "$rc" = 0 ] || { cat "$D/enrol.$1.err" >&2; return 1; }
        d=$(it_newboot "$1") || return 1
        printf '%s' "$CONF" > "$d/esp/loader/loader.conf"
        cp -r "$esp/loader/mshim" "$d/esp/loader/" && cp -a "$t" "$d/tpm.in" && echo "$d"
}
L=$(enrol literal) || die "literal enrolment failed"
S=$(enrol signed) || die "signed enrolment failed"
IT_SWTPM_LOG_LEVEL=20
for d in "$L" "$S"; do
        it_boot "$d" > "$d.out" 2>&1 || { cat "$d.out" >&2; die "boot $d failed"; }
        tr -d '\r' < "$d/serial.log" | grep -aqE '^mshim: TOTP [0-9]{6} for' ||
                { tr -d '\r' < "$d/serial.log" | grep -a '^mshim:' >&2; die "no code at boot ($d)"; }
done

# window LOG: the commands from the first StartAuthSession to the fence.
window() {
        python3 - "$1" << 'PY'
import sys
sys.path.insert(0, "scripts/bench")
import tpmcount
text = open(sys.argv[1], "rb").read().decode("latin-1")
cc = [tpmcount.NAMES.get(c, "0x%x" % c) for c in tpmcount.commands(text)]
start = cc.index("StartAuthSession")
end = next(i for i in range(start, len(cc)) if cc[i] in ("PCR_Extend", "PCR_Event"))
w = cc[start:end]
print(len(w), ",".join(w))
PY
}
echo "TOTP code at boot: TPM commands counted by swtpm (PCRs $SEL, one 30-second step)"
read -r nl wl < <(window "$L/tpm/swtpm.log")
read -r ns ws < <(window "$S/tpm/swtpm.log")
printf '  %-34s %2d  %s\n' "mshim, literal policy" "$nl" "$wl"
printf '  %-34s %2d  %s\n' "mshim, signed policy (1 approval)" "$ns" "$ws"
printf '  %-34s %2d  %s\n' "tpm2-totp (its published sequence)" 7 \
        "NV_ReadPublic,NV_Read,CreatePrimary,Load,StartAuthSession,PolicyPCR,HMAC"
echo "  ratio: literal 7/$nl = $(awk "BEGIN { printf \"%.2f\", 7 / $nl }")x fewer, signed $ns vs 7; no CreatePrimary, no Load in either"

# ---- TPM time on one host swtpm ---------------------------------------------------
H=$D/tpm.host
TCTI=$(host_tpm "$H") || die "host swtpm failed"
export TPM2TOOLS_TCTI=$TCTI
tpm2_pcrread "sha256:$SEL" -o "$D/host.bin" > /dev/null 2>&1 || die "tpm2_pcrread failed"
python3 - "$D/host.bin" > "$D/host.pcrs" << 'PY'
import sys
b = open(sys.argv[1], "rb").read()
for i, n in enumerate((4, 5, 7, 12)):
    print("sha256:%d=%s" % (n, b[32 * i:32 * i + 32].hex()))
PY
mkdir -p "$D/esp.host"
"$IT_CLI" totp enroll --literal --pcrs "$D/host.pcrs" --select "$SEL" --secret-file "$D/secret" --esp "$D/esp.host" \
        --state-dir "$D/state.host" --uri > /dev/null 2> "$D/enrol.host.err" || { cat "$D/enrol.host.err" >&2; die "host enrolment failed"; }
read -r DIGEST LEAF < <(python3 - "$D/host.bin" << 'PY'
import hashlib, sys
digest = hashlib.sha256(open(sys.argv[1], "rb").read()).digest()
sel = (1).to_bytes(4, "big") + (0x000b).to_bytes(2, "big") + bytes([3, 0xb0, 0x10, 0x00])
leaf = hashlib.sha256(bytes(32) + (0x17F).to_bytes(4, "big") + sel + digest).hexdigest()
print(digest.hex(), leaf)
PY
)
"$TPM2_SWTPM" "$TCTI" totp 0x81004d54 0xb 0x10b0 1 "$DIGEST" "$LEAF$LEAF" | grep -q '^hmac ' ||
        die "the loader's sequence gives no HMAC on the host swtpm"
# CreatePrimary of a storage key as tpm2-totp makes at each boot, built
# here from TPM 2.0 Part 3 §24.1 (owner hierarchy, empty password session;
# restricted decrypt, AES-128-CFB, SHA-256; RSA-2048 or ECC P-256).
primary() {
        python3 - "$1" << 'PY'
import struct, sys
attrs = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 10) | (1 << 16) | (1 << 17)
sym = struct.pack(">HHH", 0x0006, 128, 0x0043)
if sys.argv[1] == "rsa":
    pub = struct.pack(">HHIH", 0x0001, 0x000B, attrs, 0) + sym + struct.pack(">HHIH", 0x0010, 2048, 0, 0)
else:
    pub = struct.pack(">HHIH", 0x0023, 0x000B, attrs, 0) + sym + struct.pack(">HHHHH", 0x0010, 0x0003, 0x0010, 0, 0)
auth = struct.pack(">IHBH", 0x40000009, 0, 0, 0)
params = struct.pack(">HHH", 4, 0, 0) + struct.pack(">H", len(pub)) + pub + struct.pack(">HI", 0, 0)
body = struct.pack(">I", 0x40000001) + struct.pack(">I", len(auth)) + auth + params
print((struct.pack(">HII", 0x8002, 10 + len(body), 0x131) + body).hex())
PY
}
RSA=$(primary rsa) ECC=$(primary ecc)
"$TPM2_SWTPM" "$TCTI" raw "$RSA" | grep -qx 'rc 0x0' || die "CreatePrimary (RSA) was refused"
"$TPM2_SWTPM" "$TCTI" raw "$ECC" | grep -qx 'rc 0x0' || die "CreatePrimary (ECC) was refused"
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# tpm_time ARGS...: the median TPM round-trip time (microseconds) of
# tpm2_swtpm ARGS, BENCH_RUNS runs.
tpm_time() {
        local i
        for i in $(seq "$RUNS"); do
                "$TPM2_SWTPM" "$TCTI" "$@" | sed -n 's/^tpm_us //p'
        done | median
}
tm=$(tpm_time totp 0x81004d54 0xb 0x10b0 1 "$DIGEST" "$LEAF$LEAF")
tr=$(tpm_time raw "$RSA")
te=$(tpm_time raw "$ECC")
host_tpm_stop "$H"

# The signed sequence on a second host swtpm, enrolled in signed mode at
# the same (fresh) PCRs: its first approval, the policy key's point, the
# signature's r and s, through tpm2_swtpm's signed sequence with the
# policyRef "mshim-totp" || the selection's TPML_PCR_SELECTION, and the
# PCR 13 lock (the loader's nine commands).
H2=$D/tpm.host2
TCTI=$(host_tpm "$H2") || die "host swtpm failed"
export TPM2TOOLS_TCTI=$TCTI
mkdir -p "$D/esp.host2"
{ "$IT_CLI" policy init --state-dir "$D/state.host2" &&
  "$IT_CLI" totp enroll --signed --pcrs "$D/host.pcrs" --select "$SEL" --secret-file "$D/secret" --esp "$D/esp.host2" \
        --state-dir "$D/state.host2" --uri; } > /dev/null 2> "$D/enrol.host2.err" ||
        { cat "$D/enrol.host2.err" >&2; die "host signed enrolment failed"; }
XY=$(openssl pkey -pubin -in "$D/state.host2/policy.pub" -outform DER | tail -c 64 | od -An -tx1 -v | tr -d ' \n')
read -r EPOCH APPROVED R S < <(python3 - "$D"/esp.host2/loader/mshim/totp-approvals/*.approval << 'PY'
import sys
kv = dict(l.split(" ", 1) for l in open(sys.argv[1]).read().splitlines() if " " in l)
der = bytes.fromhex(kv["signature"])
def integer(b, i):
    assert b[i] == 2
    n = b[i + 1]
    return b[i + 2:i + 2 + n].lstrip(b"\0").rjust(32, b"\0"), i + 2 + n
r, i = integer(der, 2)
s, _ = integer(der, i)
print(kv["epoch"], kv["policy"], r.hex(), s.hex())
PY
)
REF=$(printf mshim-totp | od -An -tx1 -v | tr -d ' \n')00000001000b03b01000   # PCRs 4,5,7,12 ($SEL)
SIGNED=(signed 0x81004d54 o 0x01804d53 "$EPOCH" 0xb 0x10b0 "${XY:0:64}" "${XY:64:64}" "$R" "$S" "$APPROVED" 1 "$REF")
"$TPM2_SWTPM" "$TCTI" "${SIGNED[@]}" | grep -q '^hmac ' || die "the signed sequence gives no HMAC on the host swtpm"
ts=$(tpm_time "${SIGNED[@]}")
host_tpm_stop "$H2"
echo "TPM time on one swtpm (its round trips only), median of $RUNS runs, in microseconds:"
printf '  %-50s %8s\n' "mshim's literal sequence at boot ($nl commands)" "$tm"
printf '  %-50s %8s\n' "mshim's signed sequence at boot ($ns commands)" "$ts"
printf '  %-50s %8s  (%.1fx mshim'"'"'s whole literal sequence)\n' "tpm2-totp's CreatePrimary alone, RSA-2048" "$tr" \
        "$(awk "BEGIN { print $tr / $tm }")"
printf '  %-50s %8s  (%.1fx)\n' "tpm2-totp's CreatePrimary alone, ECC P-256" "$te" "$(awk "BEGIN { print $te / $tm }")"
