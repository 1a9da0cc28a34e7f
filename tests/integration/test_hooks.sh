#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel hook, proven by booting: boot A (lib.sh's default ESP, the
# generic kernel); on the host, a copy of A's ESP without loader.conf's
# `default` line gets Debian's RT kernel through the installed layout's
# /etc/kernel/postinst.d/zz-mshim (hooks/, with a hook.conf pointing at
# the copy, A's event log and PCRs as the baseline, and a policy key on a
# host swtpm); boot B from that ESP. B must boot the hook's entry, and
# B's sha256 PCRs 4, 5, 7, 9 and 12 must be exactly the values of the
# approval the hook wrote (read from the file by seal_fixture.py); the
# hook's approval of the current boot must hold A's.
# The TOTP code across the upgrade (issue 12): before the hook runs, a
# TOTP key is enrolled (signed mode, `mshim totp enroll`) into the policy
# key's TPM, and B's loader.conf says `totp show`; the hook approves B's
# TOTP point too. B boots from that TPM state with its clock at a fixed
# time: the code on its console is oathtool's, with no re-enrolment, and
# B's PCR 12 (in the approval checked above) holds the fence.
set -u
. "$(dirname "$0")/lib.sh"
T=hooks
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_KERNEL_RT" "$IT_CLI"; then
        it_fail "$T: prerequisites"; exit 1
fi
if ! command -v oathtool >/dev/null; then it_fail "$T: prerequisites (oathtool: make deps)"; exit 1; fi

a=$(it_newboot a) || { it_fail "$T: set-up"; exit 1; }
if it_boot "$a"; then it_pass "$T: boot A"; else it_fail "$T: boot A"; exit 1; fi
it_pcrs_file "$a" >"$a/pcrs.txt"

# ---- B: A's ESP, the admin's loader.conf without `default`, then the hook -------
b=$IT_DIR/b
mkdir -p "$b/boot" "$b/state" "$b/etc"
cp -r "$a/esp" "$b/esp"
printf '# mshim integration test: the hook picks the default\ntimeout 0\ntotp show\ntotp-timeout 2\n' \
        >"$b/esp/loader/loader.conf"
V=$(cat "$IT_B/kernel-rt/VERSION")
cp "$IT_KERNEL_RT" "$b/boot/vmlinuz-$V"
touch -d '2024-01-01' "$b/boot/vmlinuz-$V"
cp "$IT_INITRD" "$b/boot/initrd.img-$V"
cat >"$b/etc/hook.conf" <<EOF
ESP=$b/esp
BOOT_DIR=$b/boot
STATE_DIR=$b/state
MSHIM=$IT_CLI
ENTRY_TOKEN=mshimtest
TITLE=mshim integration test (hook)
OPTIONS=$IT_OPTIONS mshim.entry=hook
LOG=$a/result/eventlog.bin
PCRS=$a/pcrs.txt
EOF
# The policy key's TPM: a host swtpm of its own (it_cleanup stops it by its pid file).
pt=$IT_DIR/policy/tpm
mkdir -p "$pt"
swtpm_setup --tpm2 --tpmstate "$pt" --pcr-banks "$IT_BANKS" --overwrite --logfile "$IT_DIR/setup.log" >/dev/null 2>&1 ||
        { it_fail "$T: swtpm_setup"; cat "$IT_DIR/setup.log" >&2; exit 1; }
swtpm socket --tpm2 --tpmstate dir="$pt" --server type=unixio,path="$pt/srv" --ctrl type=unixio,path="$pt/srv.ctrl" \
        --flags not-need-init,startup-clear --daemon --pid file="$pt/pid" || { it_fail "$T: swtpm"; exit 1; }
export TPM2TOOLS_TCTI="swtpm:path=$pt/srv"
unset TCTI TSS2_TCTI
"$IT_CLI" policy init --state-dir "$b/state" >/dev/null || { it_fail "$T: mshim policy init"; exit 1; }
head -c 20 /dev/urandom >"$IT_DIR/secret"
B32=$(python3 -c 'import base64,sys; print(base64.b32encode(open(sys.argv[1],"rb").read()).decode())' "$IT_DIR/secret")
if "$IT_CLI" totp enroll --pcrs "$a/pcrs.txt" --select 4,5,7,12 --secret-file "$IT_DIR/secret" --esp "$b/esp" \
        --state-dir "$b/state" --uri >"$IT_DIR/enroll.out" 2>&1; then
        it_pass "$T: mshim totp enroll (signed) into the policy key's TPM"
else
        it_fail "$T: mshim totp enroll (signed)"; cat "$IT_DIR/enroll.out" >&2; exit 1
fi
inst=$IT_DIR/inst
make -s -C "$IT_REPO" B="$IT_B" install DESTDIR="$inst" PREFIX=/usr >/dev/null || { it_fail "$T: make install"; exit 1; }
if MSHIM_HOOK_CONF=$b/etc/hook.conf MSHIM_KERNEL_HOOK=$inst/usr/lib/mshim/kernel-hook \
   "$inst/etc/kernel/postinst.d/zz-mshim" "$V" "$b/boot/vmlinuz-$V" 2>"$b/hook.err"; then
        it_pass "$T: the installed zz-mshim wrote the entry and approved its boot"
else
        it_fail "$T: the installed zz-mshim wrote the entry and approved its boot"; cat "$b/hook.err" >&2; exit 1
fi
swtpm_ioctl --unix "$pt/srv.ctrl" -s 2>/dev/null
# B boots from the TPM the hook and the enrolment used.
i=0; while [ -e "$pt/pid" ] && kill -0 "$(cat "$pt/pid")" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
cp -a "$pt" "$b/tpm.in" && rm -f "$b/tpm.in/srv" "$b/tpm.in/srv.ctrl" "$b/tpm.in/pid"
totp_approval=$(grep -o "$b/esp/loader/mshim/totp-approvals/[^ ]*\.approval" "$b/hook.err" | tail -n 1)
if [ -f "$totp_approval" ] && grep -qx "pcrs 4,5,7,12" "$totp_approval"; then
        it_pass "$T: the hook approved B's TOTP point (the enrolment's PCRs 4, 5, 7, 12)"
else
        it_fail "$T: the hook approved B's TOTP point"; cat "$b/hook.err" >&2
fi
approval=$(grep -o "$b/esp/loader/mshim/approvals/[^ ]*\.approval" "$b/hook.err" | tail -n 1)
current=$(grep -lx "label current boot" "$b"/esp/loader/mshim/approvals/*.approval)
[ -f "$approval" ] && [ -f "$current" ] || { it_fail "$T: the approvals ($(cat "$b/hook.err"))"; exit 1; }

BASE_TIME=2026-01-01T00:00:00
# shellcheck disable=SC2034 # read by lib.sh's it_qemu
IT_QEMU_EXTRA=(-rtc "base=$BASE_TIME,clock=host")
if it_boot "$b"; then it_pass "$T: boot B"; else it_fail "$T: boot B"; exit 1; fi
it_totp_codes "$b" "$B32" "$(date -u -d "${BASE_TIME}Z" +%s)" "$T: B, after the upgrade, no re-enrolment"
if tr -d '\r' <"$b/serial.log" | grep -aq "do not type secrets"; then
        it_fail "$T: B: no warning"; tr -d '\r' <"$b/serial.log" | grep -a '^mshim:' >&2
else
        it_pass "$T: B: no warning"
fi

# B booted the hook's entry: its command line is the one hook.conf gave.
if it_oracle_cmdline "$b/result" | grep -q "mshim.entry=hook"; then it_pass "$T: B booted the hook's entry"
else it_fail "$T: B booted the hook's entry ($(it_oracle_cmdline "$b/result"))"; fi
# approval-values FILE vs a boot's sha256 PCRs, in the approval's order.
same_state() {
        local want got=""
        want=$(python3 "$IT_REPO/tests/cli/seal_fixture.py" approval-values "$1")
        for n in 4 5 7 9 12; do got+="sha256:$n=$(it_pcr "$2" sha256 "$n")"$'\n'; done
        [ "$want" = "${got%$'\n'}" ] || { printf 'approval:\n%s\nTPM:\n%s\n' "$want" "$got" >&2; return 1; }
}
if same_state "$approval" "$b"; then it_pass "$T: B's PCRs 4, 5, 7, 9, 12 are the approval's"
else it_fail "$T: B's PCRs 4, 5, 7, 9, 12 are the approval's"; fi
if same_state "$current" "$a"; then it_pass "$T: the current boot's approval holds A's PCRs"
else it_fail "$T: the current boot's approval holds A's PCRs"; fi
exit "$IT_FAILED"
