#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Issue 23, on the real Debian 12 system, after tests/debian/test_install.sh
# (its disk, firmware variables and TPM, kept in build/debian-sys/after-install);
# one QEMU run whose guest reboots itself:
#  1. the boot after `mshim install --confirm`: the firmware's default is
#     now mshim (behind Debian's shim), which unlocks with no passphrase;
#     this tree's package is installed (the system has it when
#     test_install.sh ran from this tree), mshim-bless.service enabled;
#  2. grub-install (as Debian's grub postinst runs it) and `apt-get install
#     --reinstall` of shim-signed (the system's version, from the package
#     disk): the package's trigger puts mshim back first in BootOrder; the
#     next boot is still mshim's, with no passphrase;
#  3. in that boot, before one reboot: the boot menu turned on as a user
#     would (`timeout 5` in loader.conf, the kernel hook run for the
#     running kernel); `update-initramfs -u` (the hooks copy the new
#     initrd, predict its boot behind shim and approve it); `mshim install
#     --update` with a rebuilt mshim (another built-in policy, `editor
#     no`), re-signed with the recorded MOK and approved before the swap;
#     `apt install` of Debian's RT kernel package from the package disk
#     (the hooks write its entry with a boot counter and approve its boot
#     with the new mshim; the RT kernel needs efi=runtime for the
#     keyscript to read the EFI variables: added to /etc/kernel/cmdline
#     first, as a user would);
#  4. the next boot: the menu counts down, the new mshim boots the RT
#     kernel, which unlocks with no passphrase; mshim-bless.service drops
#     its counter;
#  5. the next boot: the menu's number key boots the previous kernel (its
#     new initrd), which unlocks with no passphrase;
#  6. a kernel that panics in its initramfs: the RT kernel's initramfs
#     rebuilt with a script that crashes the kernel (panic=10 on the
#     command line, so it resets): its entry gets a new counter (3 tries);
#     the loader tries it 3 times, then falls back to the previous kernel,
#     which unlocks with no passphrase.
# What is expected comes from the machine: a prompt on the console or
# none, the root mounted from the LUKS2 volume, uname -r, the entry files'
# names on the ESP, efibootmgr's view of the firmware's variables, the
# built-in policy of the mshim on the ESP.
set -u
. "$(dirname "$0")/lib.sh"
T=debian-upgrade
deb_init "$T"
d=$IT_DIR/boot
deb_from_installed "$T" "$d" || exit 1
# Debian's RT kernel for the guest's kernel ABI and shim-signed, downloaded
# once (the host's apt, bookworm's archive).
kver=$(cat "$(dirname "$DEB_IMAGE")/kernel-version")
rtver=${kver%-amd64}-rt-amd64
rtpkg=linux-image-$rtver
debs=$DEB_CACHE/debs
mkdir -p "$debs"
for p in "$rtpkg" shim-signed; do
        ls "$debs/${p}_"*.deb >/dev/null 2>&1 && continue
        (cd "$debs" && apt-get download "$p" >/dev/null 2>&1) ||
                { it_fail "$T: set-up (apt-get download $p)"; exit 1; }
done
# The mshim package built from this tree: the system has it when
# test_install.sh ran from the same tree (make check-debian); else it is
# put in place in the guest first, a set-up step: with update_initramfs=no
# (in initramfs-tools' update-initramfs.conf, for that one apt run), so that the initrd, and with it the approved
# boot, stay as they are (its postinst's `mshim install --update` runs).
t0=$SECONDS
deb_mshim_deb "$d/debs" || { it_fail "$T: the mshim package builds (dpkg-buildpackage)"; exit 1; }
deb_log "package built ($((SECONDS - t0)) s)"
deb_pkgdisk "$d" "$debs/${rtpkg}_"*.deb "$debs/shim-signed_"*.deb "$d"/debs/mshim_*.deb ||
        { it_fail "$T: set-up (package disk)"; exit 1; }
pkg=$(basename "$d"/debs/mshim_*.deb)
rtdeb=$(basename "$debs/${rtpkg}_"*.deb)
shimdeb=$(basename "$debs/shim-signed_"*.deb)
shimv=$(dpkg-deb -f "$debs/$shimdeb" Version)
esp=/boot/efi
ent=$esp/loader/entries
# A line of the menu (efi/menu.c): "  N) TITLE (ENTRY-ID)".
kre=${kver//./\\.}
rtre=${rtver//./\\.}
cat > "$d/script" <<EOF
case $T: after mshim install --confirm the firmware's default boot is mshim (behind Debian's shim), which unlocks the LUKS2 root with no passphrase prompt
failon (Please unlock disk|Kernel panic|Security Violation|Verification failed|BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell")
expect 900 mshim: booting
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run uname -r | grep -x '$kre'
run efibootmgr | tee /root/efiboot-1.txt; n=\$(sed -n 's/^Boot\([0-9A-F]\{4\}\)\*\{0,1\} mshim\$/\1/p' /root/efiboot-1.txt); grep -E "^BootCurrent: \$n\$" /root/efiboot-1.txt

case $T: the mshim package of this tree (upgraded from the package disk when the system has another build): mshim-bless.service is enabled
run mkdir -p /mnt/pkgs && mount LABEL=pkgs /mnt/pkgs
run 1200 dpkg-deb -e /mnt/pkgs/$pkg /tmp/mshim-ctl && if cmp -s /tmp/mshim-ctl/md5sums /var/lib/dpkg/info/mshim.md5sums; then echo same build; else c=/etc/initramfs-tools/update-initramfs.conf; cp \$c /root/uic; sed -i 's/^update_initramfs=.*/update_initramfs=no/' \$c; DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall /mnt/pkgs/$pkg > /root/apt-mshim.log 2>&1; r=\$?; cp /root/uic \$c; tail -n 30 /root/apt-mshim.log; test \$r = 0; fi
run cmp /tmp/mshim-ctl/md5sums /var/lib/dpkg/info/mshim.md5sums && systemctl is-enabled mshim-bless.service
# The unit as it runs at a boot (this one came before the package enabled
# it): the booted entry loses its boot counter.
run 120 systemctl start mshim-bless.service; systemctl status --no-pager mshim-bless.service
run ls -l $ent; cat $esp/loader/loader.conf

case $T: grub-install (as Debian's grub postinst runs it) and a reinstall of shim-signed leave the firmware's default boot on mshim (the package's trigger puts it back in front)
failon (Please unlock disk|Kernel panic|Security Violation|Verification failed|BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell")
run dpkg-query -W -f '\${Version}\n' shim-signed | grep -x -F '$shimv'
run efibootmgr | tee /root/efiboot-2.txt
run 300 grub-install --target=x86_64-efi --efi-directory=/boot/efi --bootloader-id=debian --uefi-secure-boot
# (grub-install alone puts the debian entry first; the trigger of the
# package's files below puts mshim back: debian/mshim.triggers.)
run efibootmgr
run 900 DEBIAN_FRONTEND=noninteractive apt-get install -y --reinstall /mnt/pkgs/$shimdeb > /root/apt-shim.log 2>&1; r=\$?; tail -n 30 /root/apt-shim.log; test \$r = 0
run efibootmgr | tee /root/efiboot-3.txt; n=\$(sed -n 's/^Boot\([0-9A-F]\{4\}\)\*\{0,1\} mshim\$/\1/p' /root/efiboot-3.txt); grep -E "^BootOrder: \$n," /root/efiboot-3.txt
type sync; reboot<enter>
expect 900 mshim: booting
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run efibootmgr | tee /root/efiboot-4.txt; n=\$(sed -n 's/^Boot\([0-9A-F]\{4\}\)\*\{0,1\} mshim\$/\1/p' /root/efiboot-4.txt); grep -E "^BootCurrent: \$n\$" /root/efiboot-4.txt

case $T: the boot menu turned on (timeout 5 in loader.conf), the next boot approved by the kernel hook run for the running kernel
run mkdir -p /mnt/pkgs && mount LABEL=pkgs /mnt/pkgs
run mshim policy list > /root/approvals-0.txt; cat /root/approvals-0.txt
run echo 'timeout 5' >> $esp/loader/loader.conf; cat $esp/loader/loader.conf
run 600 /etc/kernel/postinst.d/zz-mshim \$(uname -r)
run mshim policy list | tee /root/approvals-1.txt; ! cmp -s /root/approvals-0.txt /root/approvals-1.txt

case $T: update-initramfs -u: the hooks copy the new initrd, predict its boot behind shim (the same kernel and mshim: PCR 7 kept) and approve it
run 900 update-initramfs -u -k $kver > /root/ui.log 2>&1; r=\$?; tail -n 20 /root/ui.log; test \$r = 0
run ! grep -q 'approved nothing\|cannot predict\|unpredictable' /root/ui.log
run mshim policy list | tee /root/approvals-2.txt; ! cmp -s /root/approvals-1.txt /root/approvals-2.txt

case $T: mshim install --update with a rebuilt mshim (built-in policy editor no), re-signed with the recorded MOK: the next boot with it predicted behind shim (PCR 7 kept: the same MOK) and approved before the swap
run mshim boot-policy --set editor=no -o /root/mshim-rebuilt.efi /usr/lib/mshim/mshimx64.efi
run 600 mshim install --update --loader /root/mshim-rebuilt.efi > /root/update.log 2>&1; r=\$?; cat /root/update.log; test \$r = 0
run ! grep -q 'approved nothing\|cannot predict\|unpredictable\|not approved' /root/update.log
run mshim boot-policy $esp/EFI/mshim/grubx64.efi | grep -x 'editor no'
run mshim policy list | tee /root/approvals-3.txt; ! cmp -s /root/approvals-2.txt /root/approvals-3.txt

case $T: apt install of the RT kernel package from the local package disk: the hooks write its entry with a boot counter, predict and approve its boot
run grep -q efi=runtime /etc/kernel/cmdline || sed -i '1 s/\$/ efi=runtime/' /etc/kernel/cmdline; cat /etc/kernel/cmdline
run 1500 DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /mnt/pkgs/$rtdeb > /root/apt-rt.log 2>&1; r=\$?; tail -n 30 /root/apt-rt.log; test \$r = 0
run ls -l $ent; mshim predict --list-entries --esp $esp
run ls $ent | grep -E -- '-$rtre\+3-0\.conf\$'
run ! grep -q 'approved nothing\|cannot predict\|unpredictable' /root/apt-rt.log
run mshim policy list | tee /root/approvals-4.txt; ! cmp -s /root/approvals-3.txt /root/approvals-4.txt
type sync; reboot<enter>

case $T: the next boot: the menu counts down, the new mshim boots the RT kernel, which unlocks with no passphrase prompt; mshim-bless.service drops its counter
expect 900 booting the default in
expect 120 mshim: booting
shell 900
run uname -r | grep -x '$rtre'
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cat /run/mshim/unlock-cryptroot
run 300 for i in \$(seq 100); do ls $ent | grep -q -E -- '-$rtre\.conf\$' && break; sleep 3; done; ls -l $ent; systemctl status --no-pager mshim-bless.service; ls $ent | grep -E -- '-$rtre\.conf\$'
type sync; reboot<enter>

case $T: the next boot: the menu's number key boots the previous kernel (its new initrd), which unlocks with no passphrase prompt
expect 900 [ >] 1\) [^\n]*-$rtre(\.conf)?\)
expect 30 [ >] 2\) [^\n]*-$kre(\.conf)?\)
expect 30 booting the default in
send 2
expect 120 mshim: booting
shell 900
run uname -r | grep -x '$kre'
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cat /run/mshim/unlock-cryptroot

case $T: the RT kernel's initramfs rebuilt with a script that crashes the kernel (panic=10): the hooks give its entry a new counter of 3 tries
run mkdir -p /mnt/pkgs && mount LABEL=pkgs /mnt/pkgs
run sed -i '1 s/\$/ panic=10/' /etc/kernel/cmdline; cat /etc/kernel/cmdline
run printf '%s\n' '#!/bin/sh' '[ "\$1" = prereqs ] && exit 0' 'echo mshim-test: crashing the kernel in its initramfs' 'echo c > /proc/sysrq-trigger' > /etc/initramfs-tools/scripts/init-top/zz-mshim-test-panic; chmod 755 /etc/initramfs-tools/scripts/init-top/zz-mshim-test-panic
run 900 update-initramfs -u -k $rtver
run rm /etc/initramfs-tools/scripts/init-top/zz-mshim-test-panic; lsinitramfs /boot/initrd.img-$rtver | grep zz-mshim-test-panic
run ls -l $ent; ls $ent | grep -E -- '-$rtre\+3-0\.conf\$'
type sync; reboot<enter>

case $T: the panicking kernel is tried 3 times (its counter), then the loader falls back to the previous kernel, which unlocks with no passphrase prompt
failon (Please unlock disk|Security Violation|Verification failed|BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell")
expect 900 mshim-test: crashing the kernel
expect 120 Kernel panic
expect 900 mshim-test: crashing the kernel
expect 120 Kernel panic
expect 900 mshim-test: crashing the kernel
expect 120 Kernel panic
mark fallback
expect 900 mshim: booting
shell 900
absent fallback mshim-test: crashing the kernel
run uname -r | grep -x '$kre'
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cat /run/mshim/unlock-cryptroot
run ls -l $ent; ls $ent | grep -E -- '-$rtre\+0-3\.conf\$'

type sync; poweroff<enter>
EOF
it_log "$T: booting Debian 12 (one QEMU run; the guest reboots itself 7 times) ..."
deb_vm_lock
deb_boot "$d" "$d/script" 5400 || IT_FAILED=1
deb_vm_unlock
exit "$IT_FAILED"
