#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Recovery (docs/RECOVERY.md), proven by booting: a LUKS2 root that mshim's
# keyscript unlocks (as tests/integration/test_luks.sh: it_luks_provision,
# the sealed key on the ESP, the guest's console driven by mok_console.py
# to type the passphrase). Each case breaks the TPM state on the host with
# tpm2-tools (or the policy key), then:
#   1. a boot from that TPM state: the keyscript falls back to the
#      passphrase, naming the cause and the commands (mshim unseal's first
#      line, "MSHIM-LUKS FALLBACK ..."), and the typed passphrase unlocks;
#   2. on the host, against the TPM state that boot left, the commands
#      docs/RECOVERY.md gives for the case ("mshim policy approve
#      --current" is --current --pcrs with the passphrase boot's own PCRs);
#   3. a boot from the resulting state: UNLOCKED with no passphrase. Its
#      TPM state is where the next case starts.
# Cases: NV counter gone (tpm2_nvundefine), TPM cleared (tpm2_clear), SRK
# replaced (tpm2_evictcontrol + another primary at 0x81000001), firmware
# PCR changed when selected (an approval selecting PCR 0 whose value is the
# old firmware's: the boot's PCR 0 differs), policy key lost (policy.key
# deleted, `policy init --reset --new-key`, only the new key's approvals on
# the ESP). lib.sh's two banks: bank coverage is test_measured_boot.sh's.
# Boots run one after the other (each starts from the previous one's TPM).
set -u
. "$(dirname "$0")/lib.sh"
T=recovery
PASS=${LUKS_PASSPHRASE:-mshim-luks-test}
it_init "$T"
export IT_OS_PCRS=15
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$IT_KDIR/modules/KMODS" /usr/sbin/cryptsetup ||
   ! command -v tpm2_nvundefine >/dev/null; then
        it_fail "$T: prerequisites (cryptsetup-bin, tpm2-tools; make; make deps)"; exit 1
fi
it_luks_provision "$PASS" || exit 1
pol=$IT_LUKS_POLICY
SEALED=$IT_DIR/root.sealed
APPR=$IT_DIR/appr/loader/mshim/approvals

# boot NAME STATE [fallback]: a LUKS boot from TPM state STATE with
# $SEALED and the approvals in $APPR on its ESP; with "fallback" the
# passphrase is typed when asked. Sets $d; fails the test when it does not boot.
boot() {
        d=$(it_newboot "$1") && cp "$IT_B/it/initrd-luks.img" "$d/esp/initrd.img" && cp -a "$2" "$d/tpm.in" &&
                mkdir -p "$d/esp/loader/mshim/approvals" && cp "$SEALED" "$d/esp/loader/mshim/root.sealed" &&
                { [ -z "$(ls "$APPR" 2>/dev/null)" ] || cp "$APPR"/*.approval "$d/esp/loader/mshim/approvals/"; } ||
                { it_fail "$T: set-up $1"; exit 1; }
        local c=()
        if [ "${3:-}" = fallback ]; then
                it_console_script "$d/console.script" 'asking for the passphrase' "$PASS"
                c=(--console "$d/console.script")
        fi
        it_boot "$d" --disk "$IT_DIR/luks.img" "${c[@]}" || { it_fail "$T: $1: boot"; exit 1; }
        it_pass "$T: $1: boot"
        it_pcrs_file "$d" > "$d/pcrs.txt"
}

# fell_back DIR WHAT REGEX: the keyscript fell back, its reason (unseal's
# first line) matching REGEX (grep -E), and the passphrase unlocked.
fell_back() {
        local line
        line=$(tr -d '\r' < "$1/serial.log" | grep -a '^MSHIM-LUKS FALLBACK ' | head -n 1)
        if grep -q -E -- "^MSHIM-LUKS FALLBACK $3" <<<"$line"; then
                it_pass "$T: $(basename "$1"): falls back naming $2 and the commands"
        else
                it_fail "$T: $(basename "$1"): falls back naming $2 and the commands: said '$line'"
        fi
        it_luks_has "$1" "$(basename "$1"): the typed passphrase unlocks" "MSHIM-LUKS UNLOCKED"
}

# host DIR: the TPM state boot DIR left, served on the host (a copy,
# $IT_DIR/host/state) for the commands; host_done stops it.
host() {
        rm -rf "$IT_DIR/host" && mkdir -p "$IT_DIR/host" && cp -a "$1/tpm/state" "$IT_DIR/host/state" &&
                it_swtpm_host_start "$IT_DIR/host" || { it_fail "$T: set-up (host TPM from $(basename "$1"))"; exit 1; }
}
host_done() { it_swtpm_host_stop "$IT_DIR/host"; rm -rf "$IT_DIR/next" && cp -a "$IT_DIR/host/state" "$IT_DIR/next"; }
# run NAME CMD...: a host command of the recovery, its output kept.
run() {
        local n=$1; shift
        "$@" >"$IT_DIR/run.log" 2>&1
        it_step $? "$n" "$IT_DIR/run.log"
}

# ---- A: the boot every approval is of (no approval yet: the passphrase) ----
boot A "$IT_LUKS_TPM/state" fallback
a=$d
host "$a"
run "host: approve A (--current --pcrs)" "$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr" --current --pcrs "$a/pcrs.txt"

# ---- NV counter gone ----
tpm2_nvundefine 0x01804D53 -C o >/dev/null 2>&1 || it_fail "$T: tpm2_nvundefine"
host_done
boot nvgone "$IT_DIR/next" fallback
fell_back "$d" "the missing epoch counter" \
        "the TPM has no epoch counter \(NV index 0x01804D53.*'mshim policy init --reset'.*'mshim policy approve --current'"
host "$d"
run "nvgone: mshim policy init --reset" "$IT_CLI" policy init --state-dir "$pol" --esp "$IT_DIR/appr" --reset
run "nvgone: mshim policy approve --current" "$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr" --current --pcrs "$d/pcrs.txt"
host_done
boot nvgone-after "$IT_DIR/next"
it_luks_unsealed "$d"

# ---- TPM cleared ----
host "$d"
tpm2_clear -c p >/dev/null 2>&1 || it_fail "$T: tpm2_clear"
host_done
boot cleared "$IT_DIR/next" fallback
fell_back "$d" "the cleared TPM" \
        "the TPM was cleared \(its owner seed changed: the storage root key at 0x81000001 is gone.*'mshim policy init --reset', then enrol again"
host "$d"
run "cleared: mshim policy init --reset" "$IT_CLI" policy init --state-dir "$pol" --esp "$IT_DIR/appr" --reset
run "cleared: mshim seal (the key again, beside the old file, then in its place)" bash -c \
        '"$1" seal --state-dir "$2" -o "$3.new" < "$4" && mv "$3.new" "$3"' _ "$IT_CLI" "$pol" "$SEALED" "$IT_DIR/luks.key"
run "cleared: mshim policy approve --current" "$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr" --current --pcrs "$d/pcrs.txt"
host_done
boot cleared-after "$IT_DIR/next"
it_luks_unsealed "$d"

# ---- SRK replaced ----
host "$d"
{ tpm2_evictcontrol -C o -c 0x81000001 && tpm2_createprimary -C o -g sha256 -G ecc256 -c "$IT_DIR/o.ctx" &&
        tpm2_evictcontrol -C o -c "$IT_DIR/o.ctx" 0x81000001 && tpm2_flushcontext -t; } >/dev/null 2>&1 ||
        it_fail "$T: another key at 0x81000001 (tpm2-tools)"
host_done
boot srk "$IT_DIR/next" fallback
fell_back "$d" "the replaced SRK" \
        "the storage root key at 0x81000001 was replaced by another key \(the TPM's owner seed is unchanged\).*'tpm2_evictcontrol -C o -c 0x81000001' and 'mshim policy init --reset'"
host "$d"
run "srk: tpm2_evictcontrol -C o -c 0x81000001" tpm2_evictcontrol -C o -c 0x81000001
run "srk: mshim policy init --reset (the same key again)" "$IT_CLI" policy init --state-dir "$pol" --esp "$IT_DIR/appr" --reset
host_done
boot srk-after "$IT_DIR/next"
it_luks_unsealed "$d"

# ---- firmware PCR changed, when selected: the approval is of the old
# firmware (PCR 0 another value), the boot's PCR 0 is the new one ----
host "$d"
rm -f "$APPR"/*.approval
sed "s/^sha256:0=.*/sha256:0=$(printf 'old firmware' | sha256sum | cut -c1-64)/" "$a/pcrs.txt" > "$IT_DIR/oldfw.txt"
run "firmware: approve the old firmware's state (PCRs 0,4,5,7,9,12)" "$IT_CLI" policy approve --state-dir "$pol" \
        --esp "$IT_DIR/appr" --current --pcrs "$IT_DIR/oldfw.txt" --select 0,4,5,7,9,12
host_done
boot firmware "$IT_DIR/next" fallback
fell_back "$d" "PCR 0 and the firmware" \
        "unseal refused: PCR 0 differs from the closest approval \(.*\), the firmware or its configuration changed.*'mshim log --pcrs 0', then approve it: 'mshim policy approve --current'"
host "$d"
run "firmware: mshim policy approve --current (PCR 0 still selected)" "$IT_CLI" policy approve --state-dir "$pol" \
        --esp "$IT_DIR/appr" --current --pcrs "$d/pcrs.txt" --select 0,4,5,7,9,12
host_done
boot firmware-after "$IT_DIR/next"
it_luks_unsealed "$d"

# ---- policy key lost: the old key's approvals still open the old sealed
# file in the states they approve (docs/RECOVERY.md); after the next
# upgrade the ESP has only the new key's (the old ones, of other states,
# removed here) ----
host "$d"
rm -f "$pol/policy.key" "$APPR"/*.approval
run "keylost: mshim policy init --reset --new-key" "$IT_CLI" policy init --state-dir "$pol" --esp "$IT_DIR/appr" --reset --new-key
run "keylost: mshim policy approve --current (the new key)" "$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr" \
        --current --pcrs "$d/pcrs.txt"
host_done
boot keylost "$IT_DIR/next" fallback
fell_back "$d" "approvals of another policy key" \
        "unseal refused: the approvals for this boot state are not signed by this secret's policy key .*'mshim policy init --reset --new-key'.*enrol again"
host "$d"
run "keylost: mshim seal (under the new key, beside the old file, then in its place)" bash -c \
        '"$1" seal --state-dir "$2" -o "$3.new" < "$4" && mv "$3.new" "$3"' _ "$IT_CLI" "$pol" "$SEALED" "$IT_DIR/luks.key"
host_done
boot keylost-after "$IT_DIR/next"
it_luks_unsealed "$d"
exit "$IT_FAILED"
