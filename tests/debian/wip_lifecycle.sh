#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Issue 23, on the real Debian 12 system, after tests/debian/test_install.sh
# (its disk, firmware variables and TPM, kept in build/debian-sys/after-install):
# the rest of a machine's life with mshim, in two QEMU runs.
#  Run 1:
#   1. the boot after `mshim install --confirm`: the firmware's default is
#      mshim (behind Debian's shim), which unlocks with no passphrase;
#   2. `apt-get install --reinstall` of this tree's mshim package from the
#      local package disk (as an upgrade does: the system then runs this
#      tree's hooks): its initramfs trigger rebuilds the initrd, and the
#      hooks copy it to the ESP, predict the next boot (behind shim: PCR 7
#      kept, the kernel and mshim being the same images) and approve it;
#   3. the next boot runs the new initrd and unlocks with no passphrase.
#  Between the runs the TPM is cleared (tpm2_clear on the host, as "Clear
#  TPM" in a firmware's setup does).
#  Run 2:
#   4. the boot through mshim falls back to the passphrase and says the TPM
#      was cleared; docs/RECOVERY.md's commands bring TPM unlock back: the
#      next boot unlocks with no passphrase;
#   5. `mshim uninstall`: the machine boots through shim + GRUB as before,
#      with the passphrase, and nothing of mshim is left on the ESP or in
#      the firmware's boot entries.
# What is expected comes from the machine: the console, findmnt,
# efibootmgr, the ESP's files.
set -u
. "$(dirname "$0")/lib.sh"
T=debian-lifecycle
deb_init "$T"
prev=$DEB_CACHE/after-install
if [ ! -s "$prev/disk.img" ] || [ "$(cat "$prev/image" 2>/dev/null)" != "$DEB_IMAGE" ]; then
        it_fail "$T: needs tests/debian/test_install.sh's system (run it first: make check-debian)"; exit 1
fi
d=$IT_DIR/boot
mkdir -p "$d/tpm.in"
cp --sparse=always "$prev/disk.img" "$d/disk.img" && cp "$prev/vars.fd" "$d/vars.fd" &&
        cp -a "$prev/tpm/." "$d/tpm.in/" || { it_fail "$T: set-up (copy the installed system)"; exit 1; }
t0=$SECONDS
deb_mshim_deb "$d/debs" || { it_fail "$T: the mshim package builds (dpkg-buildpackage)"; exit 1; }
deb_log "package built ($((SECONDS - t0)) s)"
deb_pkgdisk "$d" "$d"/debs/*.deb || { it_fail "$T: set-up (package disk)"; exit 1; }
pkg=$(basename "$d"/debs/mshim_*.deb)
esp=/boot/efi
FAILON='(Kernel panic|Security Violation|Verification failed|BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell")'

cat > "$d/script1" <<EOF
case $T: after mshim install --confirm the firmware's default boot is mshim (behind Debian's shim), which unlocks the LUKS2 root with no passphrase prompt
failon (Please unlock disk|$FAILON)
expect 900 mshim: booting
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cat /run/mshim/unlock-cryptroot

case $T: apt-get install --reinstall of this tree's package: its initramfs trigger rebuilds the initrd; the hooks copy it, predict the next boot behind shim and approve it
run mkdir -p /mnt/pkgs && mount LABEL=pkgs /mnt/pkgs
run mshim policy list > /root/approvals-before.txt; cat /root/approvals-before.txt
run sha256sum $esp/*/*/initrd-* | tee /root/initrd-before.sum
run 1200 DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall /mnt/pkgs/$pkg > /root/apt.log 2>&1; r=\$?; tail -n 30 /root/apt.log; test \$r = 0
run grep -q 'update-initramfs: Generating' /root/apt.log
run ! grep -q 'approved nothing\|cannot predict\|unpredictable' /root/apt.log
run mshim policy list | tee /root/approvals-after.txt; ! cmp -s /root/approvals-before.txt /root/approvals-after.txt
run sha256sum $esp/*/*/initrd-* | tee /root/initrd-after.sum; ! cmp -s /root/initrd-before.sum /root/initrd-after.sum
type sync; reboot<enter>

case $T: the next boot runs the new initrd through mshim and unlocks the LUKS2 root with no passphrase prompt
expect 900 mshim: booting
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cat /run/mshim/unlock-cryptroot
type sync; poweroff<enter>
EOF

cat > "$d/script2" <<EOF
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

it_log "$T: booting Debian 12, run 1 (the update; one reboot) ..."
deb_vm_lock
deb_boot "$d" "$d/script1" 2400 || IT_FAILED=1
deb_vm_unlock
if [ "$IT_FAILED" = 0 ]; then
        # The TPM cleared on the host: its state after run 1, served to
        # tpm2-tools, TPM2_Clear with the platform hierarchy (as a
        # firmware's "Clear TPM" does).
        rm -rf "$d/tpm.in" "$d/clear" && mkdir -p "$d/clear" && cp -a "$d/tpm/state" "$d/clear/state" &&
                it_swtpm_host_start "$d/clear" &&
                TPM2TOOLS_TCTI="swtpm:path=$d/clear/srv" tpm2_clear -c p >/dev/null 2>&1
        rc=$?
        it_swtpm_host_stop "$d/clear"
        if [ "$rc" = 0 ] && cp -a "$d/clear/state" "$d/tpm.in"; then
                it_log "$T: booting Debian 12, run 2 (the TPM cleared; three boots) ..."
                deb_vm_lock
                deb_boot "$d" "$d/script2" 3000 || IT_FAILED=1
                deb_vm_unlock
        else
                it_fail "$T: set-up (tpm2_clear of the guest's TPM on the host)"
        fi
fi
exit "$IT_FAILED"
