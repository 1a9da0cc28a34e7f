#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# TPM failures swtpm cannot produce, injected on the real firmware with the
# real (swtpm) TPM: the firmware starts tests/efi/tcg2_fault.c as
# \EFI\BOOT\BOOTX64.EFI; it replaces HashLogExtendEvent in OVMF's
# EFI_TCG2_PROTOCOL by a wrapper (mode read from \fault.txt) and starts
# \EFI\mshim\mshimx64.efi from the same ESP. Four boots, two at a time:
#  (a) full: the wrapper calls the real HashLogExtendEvent, then returns
#      EFI_VOLUME_FULL. mshim warns "TPM event log is full" exactly once,
#      the kernel boots, PCR 12 equals the prediction from the options in
#      every bank and the log holds mshim's EV_IPL event: the extend happened;
#  (b) fail: the wrapper returns EFI_DEVICE_ERROR and extends nothing. mshim
#      says which measurement failed and refuses to start anything: the
#      kernel never runs (fail closed, docs/SECURITY.md);
#  (c) fail-from 3: loader.conf and the entry are measured, the command line
#      is not (a TPM failing mid-boot): mshim refuses, the kernel never runs;
#  (d) fail with an image whose built-in policy says "tpm-failure boot"
#      (mshim boot-policy): one warning and the kernel boots; PCR 12 is all
#      zeros in every bank, the log has no mshim event, and PCR 5 equals
#      the replay of the (firmware-only) PCR 5 events.
set -u
# Every bank swtpm has: this file checks the measurements bank by bank.
IT_ALL_BANKS=1
. "$(dirname "$0")/lib.sh"
T=tcg2-faults
it_init "$T"
IT_FAULT_EFI=${IT_FAULT_EFI:-$IT_B/test/tcg2_fault.efi}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_FAULT_EFI"; then
        it_fail "$T: prerequisites"; exit 1
fi
# The messages efi/measure.c prints (mshim_log prefixes "mshim: ").
FULL_MSG='mshim: warning: TPM event log is full; PCRs are still extended'
REFUSE_CONF_MSG='mshim: the TPM failed to measure \loader\loader.conf into PCR 5 (Device Error); refusing to start anything'
REFUSE_CMDLINE_MSG='mshim: the TPM failed to measure the command line into PCR 12 (Device Error); refusing to start anything'
FAIL_BOOT_MSG='mshim: warning: the TPM failed to measure \loader\loader.conf into PCR 5 (Device Error); the built-in policy says tpm-failure boot: booting without measurements'

# fault_boot NAME MODE [IMAGE]: a boot dir whose ESP starts the fault stage,
# then mshim (IMAGE, default the build's).
fault_boot() {
        local d
        d=$(it_newboot "$1" "$IT_FAULT_EFI") || return 1
        mkdir -p "$d/esp/EFI/mshim"
        cp "${3:-$IT_EFI}" "$d/esp/EFI/mshim/mshimx64.efi"
        printf '%s\n' "$2" > "$d/esp/fault.txt"
        echo "$d"
}
# refusal_boot DIR: boot until mshim refuses (or, wrongly, the report).
refusal_boot() {
        { it_mkesp "$1" && it_log "booting $(basename "$1") ..." &&
          it_qemu "$1" --stop 'refusing to start anything|MSHIM-RESULT-END'; echo $? > "$1/boot.rc"
          it_log "boot $(basename "$1") stopped after $(cat "$1/seconds" 2>/dev/null) s (status $(cat "$1/boot.rc"))"
        } > "$1/boot.out" 2>&1
}
policy_efi=$IT_DIR/mshim-tpm-failure-boot.efi
"$IT_CLI" boot-policy --set tpm-failure=boot -o "$policy_efi" "$IT_EFI" > /dev/null ||
        { it_fail "$T: set-up (mshim boot-policy --set tpm-failure=boot)"; exit 1; }
a=$(fault_boot full full) && b=$(fault_boot fail fail) && c=$(fault_boot midboot "fail-from 3") &&
        d=$(fault_boot failboot fail "$policy_efi") || { it_fail "$T: set-up"; exit 1; }

# Two at a time: the full boots, then the two that stop at the refusal.
( it_boot "$a" > "$a/boot.out" 2>&1; echo $? > "$a/boot.rc" ) &
( it_boot "$d" > "$d/boot.out" 2>&1; echo $? > "$d/boot.rc" ) &
wait
refusal_boot "$b" & refusal_boot "$c" &
wait
cat "$a/boot.out" "$b/boot.out" "$c/boot.out" "$d/boot.out" >&2

# count DIR TEXT: lines of DIR's serial log holding TEXT (fixed string).
count() { tr -d '\r' < "$1/serial.log" | grep -c -F -- "$2"; }

# ---- (a) log full ----
# mshim's own calls the wrapper answered "log full" (loader.conf, the entry,
# the command line): several, yet one warning.
full_calls=$(tr -d '\r' < "$a/serial.log" | grep -c -E 'tcg2_fault: call [0-9]+ \(PCR (5|12)\).*returning Volume Full')
name="$T: full: one 'TPM event log is full' warning for $full_calls 'log full' answers to mshim, the kernel boots"
if [ "$(cat "$a/boot.rc")" = 0 ] && [ "$(count "$a" "$FULL_MSG")" = 1 ] && [ "$full_calls" -ge 3 ] &&
                [ "$(count "$a" 'TPM event log is full')" = 1 ] && [ "$(count "$a" 'failed to measure')" = 0 ]; then
        it_pass "$name"
else
        it_fail "$name"
        echo "  want exactly one '$FULL_MSG' and a report; got $(count "$a" 'TPM event log is full') warnings, boot status $(cat "$a/boot.rc")" >&2
        it_show_serial "$a"
fi
if [ -s "$a/result/result.json" ]; then
        # Independent prediction (oracle.py, hashlib): PCR 12 = extend(0,
        # H(UTF-16LE(options) + NUL)) in every bank, and the log holds that
        # one EV_IPL event: the wrapper passed the call to the firmware.
        it_oracle check-pcr12 --result "$a/result" --name "$T: full" --options "$IT_OPTIONS" || IT_FAILED=1
        it_oracle check-replay --result "$a/result" --name "$T: full: TPM PCRs equal the event-log replay" || IT_FAILED=1
else
        it_fail "$T: full: PCR 12 (no report from the guest)"
fi

# ---- (b) TPM fails from the first call; (c) from the command line ----
for x in "$b|$REFUSE_CONF_MSG|fail" "$c|$REFUSE_CMDLINE_MSG|fail-from 3 (mid-boot)"; do
        dir=${x%%|*}; rest=${x#*|}; msg=${rest%%|*}; what=${rest#*|}
        name="$T: $what: mshim names the failed measurement, refuses, and the kernel never runs"
        if [ "$(count "$dir" "$msg")" = 1 ] && [ "$(count "$dir" 'MSHIM-RESULT-BEGIN')" = 0 ] &&
                        [ "$(count "$dir" 'Linux version')" = 0 ] && [ "$(count "$dir" 'booting without')" = 0 ]; then
                it_pass "$name"
                echo "  console: $msg" >&2
        else
                it_fail "$name"
                echo "  want '$msg' and no kernel; boot status $(cat "$dir/boot.rc")" >&2
                it_show_serial "$dir"
        fi
done

# ---- (d) TPM fails, built-in policy "tpm-failure boot" ----
name="$T: fail, tpm-failure boot: one 'TPM failed to measure' warning, the kernel boots"
if [ "$(cat "$d/boot.rc")" = 0 ] && [ "$(count "$d" "$FAIL_BOOT_MSG")" = 1 ] &&
                [ "$(count "$d" 'failed to measure')" = 1 ] && [ "$(count "$d" 'refusing')" = 0 ]; then
        it_pass "$name"
else
        it_fail "$name"
        echo "  want exactly one '$FAIL_BOOT_MSG' and a report; got $(count "$d" 'failed to measure') warnings, boot status $(cat "$d/boot.rc")" >&2
        it_show_serial "$d"
fi
if [ -s "$d/result/result.json" ]; then
        python3 - "$IT_REPO/tests/integration" "$d/result" "$T: fail, tpm-failure boot: PCR 12 all zeros in every bank, PCR 5 and the log hold no mshim event" <<'PY' || IT_FAILED=1
import os, sys
sys.path.insert(0, sys.argv[1])
import oracle
res, name = oracle.load_result(sys.argv[2]), sys.argv[3]
events = oracle.load_log(os.path.join(sys.argv[2], "eventlog.bin"))
bad = []
if not res["tpm"] or not res["banks"]:
    bad.append("the guest saw no TPM or no PCR banks")
for b in res["banks"]:
    if oracle.tpm_pcr(res, b, 12) != oracle.zeros(b):
        bad.append("%s PCR 12 is %s, want all zeros" % (b, oracle.tpm_pcr(res, b, 12).hex()))
mine = [(e.pcr, hex(e.type)) for e in events
        if e.pcr == 12 or oracle.is_mshim_tag(e)]
if mine:
    bad.append("mshim events in the log: %s" % mine)
# PCR 5 = the firmware's logged events alone: nothing was extended unlogged.
rep = oracle.replay([e for e in events if e.pcr == 5], res["banks"])
for b in res["banks"]:
    want = rep.get(b, {}).get(5, oracle.zeros(b))
    if oracle.tpm_pcr(res, b, 5) != want:
        bad.append("%s PCR 5 is %s, replay of the firmware's PCR 5 events %s"
                   % (b, oracle.tpm_pcr(res, b, 5).hex(), want.hex()))
oracle.report(not bad, name, "\n".join(bad))
sys.exit(1 if bad else 0)
PY
else
        it_fail "$T: fail, tpm-failure boot: PCR 12 and PCR 5 (no report from the guest)"
fi
exit "$IT_FAILED"
