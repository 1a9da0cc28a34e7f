#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Issue 23, on a real Debian 12 system (tests/debian/build-image.sh: Debian's
# kernel, initramfs-tools, cryptsetup-initramfs, shim-signed and
# grub-efi-amd64-signed, a LUKS2 root), Secure Boot on with Microsoft's keys,
# swtpm; one QEMU run whose guest reboots itself:
#  1. OVMF starts Debian's signed shim (the removable path; shim's fallback
#     adds the "debian" boot entry and resets), GRUB, the kernel; cryptsetup
#     asks for the passphrase on the console: the test types it;
#  2. the mshim package built from this tree installs from a local disk
#     (apt, no network); `mshim policy init`; `mshim luks enroll` adds a
#     TPM key slot and token and the keyscript to crypttab; update-initramfs;
#  3. `mshim install --shim --enroll-mok` with a new MOK: EFI/mshim/, a
#     firmware entry "mshim" as BootNext (a trial), mokutil's request;
#  4. the first mshim boot approved before it happens by `mshim install`
#     itself (its kernel hook predicts the boot through the new shim and
#     mshim from this GRUB boot, with the MOK request's key list): no
#     manual step; the trial boot in 6 proves it;
#  5. reboot: shim finds the MOK request, MokManager enrols the key
#     (driven over the serial console as tests/integration/test_mokmanager.sh
#     does) and resets;
#  6. the trial boot through mshim: no passphrase prompt, the root is open;
#     `mshim install --confirm` puts mshim first in BootOrder.
# What is expected comes from the machine: a prompt on the console or
# none, the root mounted from the LUKS2 volume, efibootmgr's view of the
# firmware's variables.
set -u
. "$(dirname "$0")/lib.sh"
T=debian-install
deb_init "$T"
d=$IT_DIR/boot
mkdir -p "$d"
t0=$SECONDS
deb_mshim_deb "$d/debs" || { it_fail "$T: the mshim package builds (dpkg-buildpackage)"; exit 1; }
deb_log "package built ($((SECONDS - t0)) s)"
deb_pkgdisk "$d" "$d"/debs/*.deb || { it_fail "$T: set-up (package disk)"; exit 1; }
pkg=$(basename "$d"/debs/mshim_*.deb)
esp=/boot/efi
SHIM_GUID=605dab50-e046-4300-abb6-3dd810dd8b23
cat > "$d/script" <<EOF
case $T: Debian's shim + GRUB boot the Debian kernel under Secure Boot; cryptsetup asks for the LUKS2 passphrase, which opens the root
failon (Kernel panic|Security Violation|Verification failed|BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell")
expect 900 Please unlock disk cryptroot
sleep 1
type $DEB_PASS<enter>
shell 600
run mokutil --sb-state | grep 'SecureBoot enabled'
run cryptsetup status cryptroot | grep -E 'type: +LUKS2'
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
# The firmware's boot entry for Debian, as the installer's grub-install
# makes it (the image was built with --no-nvram; shim's fallback did not
# add one: the firmware booted the disk's removable path).
run 300 grub-install --target=x86_64-efi --efi-directory=/boot/efi --bootloader-id=debian --uefi-secure-boot
run efibootmgr -v | tee /root/efiboot0.txt; grep -E '^BootOrder: ' /root/efiboot0.txt
run grep -E '^Boot[0-9A-F]{4}\*? debian' /root/efiboot0.txt

case $T: the mshim package installs from the local package disk (apt, no network)
run mkdir -p /mnt/pkgs && mount LABEL=pkgs /mnt/pkgs
run 600 DEBIAN_FRONTEND=noninteractive apt-get install -y /mnt/pkgs/$pkg
run mshim --version

case $T: mshim policy init; mshim luks enroll adds a TPM key slot and token and the keyscript to crypttab; update-initramfs
run 300 mshim policy init
run printf %s '$DEB_PASS' > /root/pass
run 300 mshim luks enroll --unlock-key-file /root/pass /dev/vda3
run mshim luks list /dev/vda3 | grep mshim-tpm2
run grep 'keyscript=/usr/lib/mshim/cryptroot-unseal' /etc/crypttab
run 900 update-initramfs -u
run lsinitramfs /boot/initrd.img-\$(uname -r) | grep cryptroot-unseal

case $T: mshim install --shim --enroll-mok: EFI/mshim/ with Debian's shim, a trial BootNext entry, the MOK request
run 120 openssl req -new -x509 -newkey rsa:2048 -nodes -subj /CN=mshim-debian-test-MOK/ -days 3650 -keyout /root/mok.key -out /root/mok.pem 2>/dev/null
run 600 printf '$DEB_MOKPW\n$DEB_MOKPW\n' | mshim install --shim --key /root/mok.key --cert /root/mok.pem --enroll-mok
run ls -l $esp/EFI/mshim $esp/loader/entries
run efibootmgr -v | tee /root/efiboot.txt
run grep -E '^BootNext: ' /root/efiboot.txt
run test -s /sys/firmware/efi/efivars/MokNew-$SHIM_GUID
run mshim status || true

case $T: mshim install approved the first boot through mshim itself (no manual predict or approve)
run mshim policy list | tee /root/approvals.txt
run test -n "\$(ls $esp/loader/mshim/approvals)"
type sync; reboot<enter>

case $T: the trial boot starts mshim's shim, which finds the MOK request: MokManager enrols the key
failon (Kernel panic|Security Violation|Verification failed|BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell")
expect 600 Shim UEFI key management
expect 30 Press any key to perform MOK management
send <enter>
expect 30 Perform MOK management\s+Continue boot\s+Enroll MOK
sleep 1
$(it_mok_enroll_steps "$DEB_MOKPW")
resetting

# MokManager's reset is a new boot: the firmware used (and deleted) BootNext
# for the boot that ran MokManager, so this one follows BootOrder: Debian's
# shim + GRUB again, and the passphrase.
case $T: after MokManager's reset the firmware follows BootOrder (BootNext was used by MokManager's boot): shim + GRUB, the passphrase; the key is in MokListRT
expect 900 Please unlock disk cryptroot
sleep 1
type $DEB_PASS<enter>
shell 600
run mokutil --list-enrolled | grep 'CN=mshim-debian-test-MOK'
run test ! -e /sys/firmware/efi/efivars/MokNew-$SHIM_GUID
# The trial once more, as the user is told to: mshim install --trial sets
# BootNext to the recorded entry; efibootmgr shows it is the "mshim" one.
run mshim install --trial
run n=\$(efibootmgr | sed -n 's/^Boot\([0-9A-F]\{4\}\)\*\{0,1\} mshim\$/\1/p'); test -n "\$n" && efibootmgr | grep -x "BootNext: \$n"
type sync; reboot<enter>

case $T: the trial boot through mshim (Debian's shim, then mshim signed with the MOK) unlocks the LUKS2 root with no passphrase prompt
failon (Please unlock disk|Kernel panic|Security Violation|Verification failed|BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell")
mark trial
expect 900 mshim: booting
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cryptsetup status cryptroot | grep -E 'type: +LUKS2'
run cat /run/mshim/unlock-cryptroot; efibootmgr -v
failon

case $T: mshim install --confirm puts mshim first in BootOrder, the old shim + GRUB entry stays behind it
run 120 mshim install --confirm
run efibootmgr | tee /root/efiboot2.txt
run n=\$(sed -n 's/^Boot\([0-9A-F]\{4\}\)\*\{0,1\} mshim\$/\1/p' /root/efiboot2.txt); grep -E "^BootOrder: \$n," /root/efiboot2.txt
run grep -E '^Boot[0-9A-F]{4}\*? debian' /root/efiboot2.txt
type sync; poweroff<enter>
EOF
it_log "$T: booting Debian 12 (one QEMU run; the guest reboots itself three times) ..."
deb_vm_lock
deb_boot "$d" "$d/script" 3000 || IT_FAILED=1
deb_vm_unlock
# The installed system, for the tests that start from it (wip_upgrade.sh: the issue's upgrade cases).
prev=$DEB_CACHE/after-install
rm -rf "$prev"
if [ "$IT_FAILED" = 0 ]; then
        mkdir -p "$prev/tpm" && mv "$d/disk.img" "$prev/disk.img" && cp "$d/vars.fd" "$prev/vars.fd" &&
                cp -a "$d/tpm/state/." "$prev/tpm/" && echo "$DEB_IMAGE" > "$prev/image" ||
                { it_fail "$T: keep the installed system for the next tests"; rm -rf "$prev"; }
fi
exit "$IT_FAILED"
