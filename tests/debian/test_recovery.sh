#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Issue 23, on the real Debian 12 system, after tests/debian/test_install.sh
# (its disk, firmware variables and TPM, kept in build/debian-sys/after-install):
# a cleared TPM, the way back, and the way out. The TPM is cleared on the
# host first (tpm2_clear with the platform hierarchy on the TPM's state, as
# "Clear TPM" in a firmware's setup does); then one QEMU run:
#  1. the boot through mshim falls back to the passphrase and says the TPM
#     was cleared; docs/RECOVERY.md's commands (`policy init --reset`, the
#     LUKS2 key enrolled again, this boot approved) bring TPM unlock back:
#     the next boot unlocks with no passphrase;
#  2. `mshim uninstall`: the machine boots through shim + GRUB as before,
#     with the passphrase, and nothing of mshim is left on the ESP or in
#     the firmware's boot entries.
# What is expected comes from the machine: the console, findmnt,
# efibootmgr, the ESP's files.
set -u
. "$(dirname "$0")/lib.sh"
T=debian-recovery
deb_init "$T"
d=$IT_DIR/boot
deb_from_installed "$T" "$d" || exit 1
esp=/boot/efi
FAILON='(Kernel panic|Security Violation|Verification failed|BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell")'

cat > "$d/script" <<EOF
case $T: the TPM cleared: the boot through mshim asks for the passphrase and says why
failon $FAILON
expect 900 mshim: booting
expect 900 the TPM was cleared
expect 120 Please unlock disk cryptroot
sleep 1
type $DEB_PASS<enter>
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cat /run/mshim/unlock-cryptroot | grep -i 'fallback.*cleared'

case $T: docs/RECOVERY.md's commands after a cleared TPM (policy init --reset, the LUKS2 key enrolled again, this boot approved): the next boot unlocks with no passphrase prompt
run printf %s '$DEB_PASS' > /root/pass
run 300 mshim policy init --reset
run 300 mshim luks remove /dev/vda3 && mshim luks enroll --unlock-key-file /root/pass /dev/vda3
run 300 mshim policy approve --current
type sync; reboot<enter>
failon (Please unlock disk|$FAILON)
expect 900 mshim: booting
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cat /run/mshim/unlock-cryptroot
failon $FAILON

case $T: mshim uninstall: the machine boots through Debian's shim + GRUB as before, with the passphrase; nothing of mshim is left on the ESP or in the firmware's boot entries
run 300 mshim uninstall
run test ! -e $esp/EFI/mshim
run ! efibootmgr | grep -E '^Boot[0-9A-F]{4}\*? mshim\$'
run efibootmgr | grep -E '^Boot[0-9A-F]{4}\*? debian'
type sync; reboot<enter>
expect 900 Please unlock disk cryptroot
sleep 1
type $DEB_PASS<enter>
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run ! efibootmgr | grep -E '^Boot[0-9A-F]{4}\*? mshim\$'
type sync; poweroff<enter>
EOF

# The TPM cleared on the host: the installed system's TPM state, served to
# tpm2-tools, TPM2_Clear with the platform hierarchy.
# (deb_from_installed put the installed system's TPM state in tpm.in.)
rm -rf "$d/clear" && mkdir -p "$d/clear" && mv "$d/tpm.in" "$d/clear/state" && mkdir "$d/tpm.in" &&
        it_swtpm_host_start "$d/clear" &&
        TPM2TOOLS_TCTI="swtpm:path=$d/clear/srv" tpm2_clear -c p >/dev/null 2>&1
rc=$?
it_swtpm_host_stop "$d/clear"
if [ "$rc" != 0 ] || ! cp -a "$d/clear/state/." "$d/tpm.in/"; then
        it_fail "$T: set-up (tpm2_clear of the guest's TPM on the host)"; exit 1
fi
it_log "$T: booting Debian 12 (the TPM cleared; three boots) ..."
deb_vm_lock
deb_boot "$d" "$d/script" 3000 || IT_FAILED=1
deb_vm_unlock
exit "$IT_FAILED"
