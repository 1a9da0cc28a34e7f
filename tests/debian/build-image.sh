#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# build-image.sh OUT: a Debian 12 (bookworm) system on a LUKS2 root, built
# from Debian's own packages, as OUT/disk.img (a GPT disk: ESP, /boot, the
# LUKS2 root) for tests/debian/*.sh. Slow (debootstrap from the network,
# one boot under QEMU), so tests/debian/lib.sh keeps the result under
# build/debian-sys/KEY, KEY a hash of this file: it is built again only
# when this script (its package list included) changes.
#
# 1. On the host: debootstrap --variant=minbase with the packages below,
#    then the settings a test needs (root logs in on the serial console
#    without a password; GRUB and the kernel talk on ttyS0).
# 2. On the host, no device-mapper needed: the root as a plain ext4 image
#    (mke2fs -d), /boot's ext4 image, the ESP (mkfs.vfat), the GPT disk.
# 3. One "builder" boot of the guest's own Debian kernel (-kernel, no
#    firmware) with the plain root as its root and init=the builder script:
#    inside it, where device-mapper exists, luksFormat the disk's third
#    partition (LUKS2, argon2id, the passphrase DEB_PASS), copy the root in,
#    write /etc/crypttab and /etc/fstab, update-initramfs (cryptsetup-
#    initramfs finds the encrypted root itself, as on an installed system),
#    grub-install (Debian's signed shim + GRUB in EFI/debian, and the same
#    in EFI/BOOT with shim's fallback, which adds the firmware's boot entry
#    "debian" on the first boot, as an installer would) and update-grub.
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
MIRROR=${DEB_MIRROR:-http://deb.debian.org/debian}
DEB_PASS=${DEB_PASS:-debian-test-passphrase}
# What a Debian 12 laptop with a LUKS2 root and Secure Boot runs (issue
# 23), and the libraries the mshim package depends on (debian/control's
# shlibs: OpenSSL 3, tpm2-tss, libqrencode), so dpkg -i needs no network.
PKGS=systemd-sysv,udev,kmod,procps,login,passwd,util-linux,mount,e2fsprogs,dosfstools,
PKGS+=linux-image-amd64,initramfs-tools,zstd,busybox,cryptsetup,cryptsetup-initramfs,
PKGS+=shim-signed,grub-efi-amd64,grub-efi-amd64-signed,efibootmgr,mokutil,
PKGS+=libssl3,libtss2-esys-3.0.2-0,libtss2-mu0,libtss2-rc0,libtss2-tctildr0,libtss2-tcti-device0,
PKGS+=libtss2-sys1,libqrencode4,tpm2-tools,sbsigntool,openssl
mkdir -p "$out"
w=$out/work
rm -rf "$w"; mkdir -p "$w"
log() { echo "[$(date +%H:%M:%S)] build-image: $*" >&2; }
t0=$SECONDS

# ---- 1. debootstrap ----------------------------------------------------------
r=$w/root
if [ -n "${DEB_ROOT_FROM:-}" ]; then
        # Working on the later steps: a copy of an earlier run's debootstrap.
        cp -a "$DEB_ROOT_FROM" "$r"
else
        log "debootstrap bookworm from $MIRROR ..."
        debootstrap --variant=minbase --include="$PKGS" bookworm "$r" "$MIRROR" >"$w/debootstrap.log" 2>&1 ||
                { tail -n 30 "$w/debootstrap.log" >&2; exit 1; }
        log "debootstrap: $((SECONDS - t0)) s"
fi

# The settings a test needs, none of which changes how the system boots:
# root logs in on ttyS0 with no password (the test types commands there),
# GRUB does not wait, the kernel and the cryptsetup prompt use ttyS0.
echo debian-mshim > "$r/etc/hostname"
chroot "$r" passwd -d root >/dev/null
mkdir -p "$r/etc/systemd/system/serial-getty@ttyS0.service.d"
cat > "$r/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'UNIT'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --noclear --keep-baud 115200,57600,38400,9600 %I $TERM
UNIT
# apt's daily timers would start work in a test boot.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer; do
        ln -sf /dev/null "$r/etc/systemd/system/$u"
done
sed -i -e 's/^GRUB_TIMEOUT=.*/GRUB_TIMEOUT=0/' \
        -e 's/^GRUB_CMDLINE_LINUX_DEFAULT=.*/GRUB_CMDLINE_LINUX_DEFAULT="quiet console=ttyS0 no_timer_check"/' \
        "$r/etc/default/grub"
# The initramfs holds the modules this machine boots with and those the
# hooks add (cryptsetup's, mshim's), not all of them (initramfs-tools'
# MODULES=list): built in seconds instead of many minutes under TCG
# (here and each time a test runs update-initramfs), smaller to load.
echo MODULES=list > "$r/etc/initramfs-tools/conf.d/modules-list"
printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic dm_mod dm_crypt xts aesni_intel \
        sha256_generic >> "$r/etc/initramfs-tools/modules"
# The builder script (step 3), run as init by the guest's kernel.
install -m 0755 "$here/builder.sh" "$r/builder.sh"
printf '%s' "$DEB_PASS" > "$r/builder.pass"
mkdir -p "$r/boot/efi"
# ---- 2. the images -----------------------------------------------------------
kver=$(basename "$(ls "$r"/boot/vmlinuz-* | head -n 1)"); kver=${kver#vmlinuz-}
cp "$r/boot/vmlinuz-$kver" "$w/vmlinuz"; cp "$r/boot/initrd.img-$kver" "$w/initrd.img"
echo "$kver" > "$out/kernel-version"
# The plain root (the builder's root and the source of the LUKS2 root's copy).
mke2fs -q -t ext4 -L builder -d "$r" "$w/plain.img" 3G
# The disk: p1 ESP 512 MiB, p2 /boot 512 MiB (ext4, filled by the builder),
# p3 the LUKS2 root, 4 GiB. Sparse; the tests boot qcow2 overlays of it.
esp_s=2048 esp_n=$((512 * 2048)); boot_s=$((esp_s + esp_n)) boot_n=$((512 * 2048))
root_s=$((boot_s + boot_n)) root_n=$((4096 * 2048))
truncate -s $(((root_s + root_n + 2048) * 512)) "$w/disk.img"
printf '%s\n' "label: gpt" \
        "start=$esp_s, size=$esp_n, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=\"EFI system partition\"" \
        "start=$boot_s, size=$boot_n, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=\"boot\"" \
        "start=$root_s, size=$root_n, type=CA7D7CCB-63ED-4C53-861C-1742536059CC, name=\"root\"" |
        sfdisk --quiet --no-reread --no-tell-kernel "$w/disk.img"
rm -f "$w/esp.img"; mkfs.vfat -C -F 32 -n ESP "$w/esp.img" $((esp_n / 2)) >/dev/null
dd if="$w/esp.img" of="$w/disk.img" bs=512 seek="$esp_s" conv=notrunc,sparse status=none
rm -f "$w/esp.img"
log "images: $((SECONDS - t0)) s"

# ---- 3. the builder boot -----------------------------------------------------
log "builder boot (kernel $kver): LUKS2 root, initramfs, grub-install ..."
t1=$SECONDS
# One VM at a time machine-wide, as the boot tests (tests/integration).
flock /tmp/mshim-vm.lock timeout 1500 qemu-system-x86_64 -machine q35,accel=tcg -m 2048 -smp 2 -display none -monitor none \
        -nic none -no-reboot -serial "file:$w/builder.log" \
        -kernel "$w/vmlinuz" -initrd "$w/initrd.img" \
        -append "console=ttyS0 root=/dev/vdb rw init=/builder.sh no_timer_check panic=-1" \
        -drive "if=virtio,format=raw,file=$w/disk.img" \
        -drive "if=virtio,format=raw,file=$w/plain.img" </dev/null >"$w/qemu.log" 2>&1 || true
log "builder boot: $((SECONDS - t1)) s"
if ! grep -q '^BUILDER-RC=0' "$w/builder.log"; then
        echo "build-image: the builder boot did not finish; its console:" >&2
        tail -n 40 "$w/builder.log" >&2
        exit 1
fi
mv "$w/disk.img" "$out/disk.img"
sed -n 's/^BUILDER-INFO //p' "$w/builder.log" | tr -d '\r' > "$out/info"
rm -rf "$w"
log "done in $((SECONDS - t0)) s: $out/disk.img"
