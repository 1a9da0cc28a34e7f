#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Issue 23, on the real Debian 12 system, after tests/debian/test_install.sh
# (its disk, firmware variables and TPM, kept in build/debian-sys/after-install):
#  1. the boot after `mshim install --confirm`: the firmware's default is
#     now mshim (behind Debian's shim), which unlocks with no passphrase;
#  2. `apt install` of Debian's RT kernel package from the local package
#     disk: the kernel hooks write its entry, predict and approve its boot
#     (the RT kernel needs efi=runtime for the keyscript to read the EFI
#     variables: added to /etc/kernel/cmdline first, as a user would);
#  3. the next boot runs the RT kernel and unlocks with no passphrase.
set -u
. "$(dirname "$0")/lib.sh"
T=debian-kernel-rt
deb_init "$T"
prev=$DEB_CACHE/after-install
if [ ! -s "$prev/disk.img" ] || [ "$(cat "$prev/image" 2>/dev/null)" != "$DEB_IMAGE" ]; then
        it_fail "$T: needs tests/debian/test_install.sh's system (run it first: make check-debian)"; exit 1
fi
d=$IT_DIR/boot
mkdir -p "$d/tpm.in"
cp --sparse=always "$prev/disk.img" "$d/disk.img" && cp "$prev/vars.fd" "$d/vars.fd" &&
        cp -a "$prev/tpm/." "$d/tpm.in/" || { it_fail "$T: set-up (copy the installed system)"; exit 1; }
# Debian's RT kernel for the guest's kernel ABI, downloaded once.
kver=$(cat "$(dirname "$DEB_IMAGE")/kernel-version")
rtpkg=linux-image-${kver%-amd64}-rt-amd64
debs=$DEB_CACHE/debs
mkdir -p "$debs"
if ! ls "$debs/${rtpkg}_"*.deb >/dev/null 2>&1; then
        (cd "$debs" && apt-get download "$rtpkg" >/dev/null 2>&1) ||
                { it_fail "$T: set-up (apt-get download $rtpkg)"; exit 1; }
fi
deb_pkgdisk "$d" "$debs/${rtpkg}_"*.deb || { it_fail "$T: set-up (package disk)"; exit 1; }
deb=$(basename "$debs/${rtpkg}_"*.deb)
cat > "$d/script" <<EOF
case $T: after mshim install --confirm the firmware's default boot is mshim (behind Debian's shim), which unlocks the LUKS2 root with no passphrase prompt
failon (Please unlock disk|Kernel panic|Security Violation|Verification failed|EFI Internal Shell)
expect 900 mshim: booting
shell 900
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run uname -r | grep -vx '.*-rt-amd64'

case $T: apt install of the RT kernel package from the local package disk: the hooks write its entry, predict and approve its boot
run mkdir -p /mnt/pkgs && mount LABEL=pkgs /mnt/pkgs
run grep -q efi=runtime /etc/kernel/cmdline || sed -i '1 s/\$/ efi=runtime/' /etc/kernel/cmdline; cat /etc/kernel/cmdline
run mshim policy list > /root/approvals-before.txt; cat /root/approvals-before.txt
run 1500 DEBIAN_FRONTEND=noninteractive apt-get install -y /mnt/pkgs/$deb > /root/apt-rt.log 2>&1; r=\$?; tail -n 30 /root/apt-rt.log; test \$r = 0
run ls -l /boot/efi/loader/entries; mshim predict --list-entries --esp /boot/efi
run mshim policy list | tee /root/approvals-after.txt; ! cmp -s /root/approvals-before.txt /root/approvals-after.txt
run grep -l '$kver' /boot/efi/loader/entries/*.conf | grep rt || grep -l 'rt-amd64' /boot/efi/loader/entries/*.conf
type sync; reboot<enter>

case $T: the next boot runs the RT kernel through mshim and unlocks with no passphrase prompt
expect 900 mshim: booting
shell 900
run uname -r | grep -x '.*-rt-amd64'
run findmnt -n -o SOURCE / | grep -x /dev/mapper/cryptroot
run cat /run/mshim/unlock-cryptroot
type sync; poweroff<enter>
EOF
it_log "$T: booting Debian 12 (one QEMU run; one reboot) ..."
deb_vm_lock
deb_boot "$d" "$d/script" 2400 || IT_FAILED=1
deb_vm_unlock
exit "$IT_FAILED"
