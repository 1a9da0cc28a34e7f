#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# drive.py's reset guard, on the Debian tests' own machine (OVMF's Secure
# Boot code, SMM, TCG, swtpm) with a blank disk: no Debian image needed.
# OVMF under TCG has at times stayed silent after the guest's warm reset
# (docs/TESTING.md), and QEMU's system_reset did not bring it back; the
# guard then powers the machine off and on (tests/debian/lib.sh
# deb_power_cycle: a new QEMU and swtpm on the same disk, variable store
# and TPM state) and the script goes on. Here the first power-on is a
# machine that never runs (QEMU's -S): after the script's `resetting` step
# its console stays silent; the guard (40 s of grace here) must power-cycle
# it, and the firmware's boot line must then come from the new QEMU. The
# grace must outlast the firmware's own silent start-up (6 to 7 s to its
# boot line beside another VM; 5 s of grace once cycled a healthy machine
# a second time).
# What is expected comes from the console (the firmware's BdsDxe line),
# drive.py's log, and the processes left (none); and which kernel lines
# arm the guard, from the kernel's own wording.
set -u
. "$(dirname "$0")/lib.sh"
T=debian-drive
deb_init "$T" noimage
d=$IT_DIR/boot
mkdir -p "$d" && truncate -s 64M "$d/disk.img" || { it_fail "$T: set-up (a blank disk)"; exit 1; }

cat > "$d/script" <<EOF2
case $T: a machine silent after a reset is powered off and on by drive.py's reset guard; the firmware then boots and the script goes on
resetting
expect 600 BdsDxe
EOF2

deb_vm_lock
DEB_QEMU_FIRST=-S DEB_RESET_GRACE=40 deb_boot "$d" "$d/script" 900 2> "$d/drive.err" || IT_FAILED=1
deb_vm_unlock

if grep -q "then a power cycle (1 of at most 2)" "$d/drive.err" && grep -q "powered on again" "$d/drive.err" &&
   ! grep -q "power cycle (2 of" "$d/drive.err"; then
        it_pass "$T: drive.py says what it did: the VM's state, one power cycle"
else
        it_fail "$T: drive.py says what it did: the VM's state, one power cycle"; cat "$d/drive.err" >&2
fi
# The stuck machine's registers were written before the power cycle.
if grep -q '^  | [ER]IP=' "$d/drive.err" && grep -q '^  | query-status: .*"status": "prelaunch\|^  | query-status: .*"running": false' "$d/drive.err"; then
        it_pass "$T: the stuck VM's state (QMP query-status, registers) is in the log"
else
        it_fail "$T: the stuck VM's state (QMP query-status, registers) is in the log"; cat "$d/drive.err" >&2
fi
# Nothing left running: the second QEMU stopped at the script's end, and
# its swtpm; the first one's too.
if [ ! -e "$d/qemu.pid" ] && [ ! -e "$d/tpm/pid" ] &&
   ! pgrep -f -- "$d/serial.sock" >/dev/null && ! pgrep -f -- "$d/tpm/sock" >/dev/null; then
        it_pass "$T: no QEMU or swtpm of this machine is left running"
else
        it_fail "$T: no QEMU or swtpm of this machine is left running"; pgrep -a -f -- "$d/" >&2
fi
# The power cycle's TPM is the machine's: it_swtpm_start's "keep" serves
# DIR/tpm/state as it is (a file put there stays), where a plain start
# begins again from DIR/tpm.in (the file is gone).
k=$IT_DIR/keep
if mkdir -p "$k/tpm.in" && it_swtpm_start "$k" && touch "$k/tpm/state/marker" && it_swtpm_stop "$k" &&
   it_swtpm_start "$k" keep && [ -e "$k/tpm/state/marker" ] && it_swtpm_stop "$k" &&
   it_swtpm_start "$k" && [ ! -e "$k/tpm/state/marker" ] && it_swtpm_stop "$k"; then
        it_pass "$T: a power cycle's swtpm keeps the TPM's state (it_swtpm_start keep); a fresh start does not"
else
        it_fail "$T: a power cycle's swtpm keeps the TPM's state (it_swtpm_start keep); a fresh start does not"
        it_swtpm_stop "$k"
fi
# What arms the guard: the kernel's reboot line, and a panic's with
# panic=N (test_upgrade.sh's crashing kernel resets that way); a boot's
# other lines do not.
if python3 -B - "$DEB_HERE" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from drive import RESET_LINE
arm = [b"[   55.0] reboot: Restarting system", b"[    3.1] Rebooting in 10 seconds.."]
calm = [b"reboot: Power down", b"systemd-shutdown[1]: Rebooting.", b"Please unlock disk cryptroot"]
sys.exit(0 if all(RESET_LINE.search(l) for l in arm) and not any(RESET_LINE.search(l) for l in calm) else 1)
PY
then
        it_pass "$T: the guard arms at the kernel's reboot line and at a panic's 'Rebooting in N seconds', not at a power-off"
else
        it_fail "$T: the guard arms at the kernel's reboot line and at a panic's 'Rebooting in N seconds', not at a power-off"
fi
exit "$IT_FAILED"
