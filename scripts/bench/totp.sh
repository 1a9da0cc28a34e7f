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
# literal sequence (tests/tpm/tpm2_swtpm: the loader's src/tpm2.c bytes,
# against a key enrolled to the swtpm's current PCRs) against the one
# command of tpm2-totp's that mshim does not send, CreatePrimary of a
# storage key (tpm2_createprimary -C o, RSA-2048 as tpm2-tools' default,
# and ECC P-256), each a process of its own.
# Informative: exits non-zero only when a tool fails to run.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
RUNS=${BENCH_RUNS:-5}
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
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
timed() {
        local i t0 t1
        for i in $(seq "$RUNS"); do
                t0=$(date +%s%N); "$@" > /dev/null 2>&1 || die "$1 failed"; t1=$(date +%s%N)
                tpm2_flushcontext --transient-object > /dev/null 2>&1
                echo $(( (t1 - t0) / 100000 ))
        done | median
}
tm=$(timed "$TPM2_SWTPM" "$TCTI" totp 0x81004d54 0xb 0x10b0 1 "$DIGEST" "$LEAF$LEAF")
tr=$(timed tpm2_createprimary -C o -G rsa2048 -c "$D/p.ctx")
te=$(timed tpm2_createprimary -C o -G ecc256 -c "$D/p.ctx")
host_tpm_stop "$H"
echo "TPM time on one swtpm, median of $RUNS runs (one process each, in 0.1 ms):"
printf '  %-52s %6s\n' "mshim's whole literal sequence (3 commands)" "$tm"
printf '  %-52s %6s  (%.1fx mshim'"'"'s sequence)\n' "tpm2-totp's CreatePrimary alone, RSA-2048" "$tr" "$(awk "BEGIN { print $tr / $tm }")"
printf '  %-52s %6s  (%.1fx)\n' "tpm2-totp's CreatePrimary alone, ECC P-256" "$te" "$(awk "BEGIN { print $te / $tm }")"
