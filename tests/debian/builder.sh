#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Run as init (PID 1) by build-image.sh's builder boot, on the plain root
# (/dev/vdb); /dev/vda is the disk being built. Prints BUILDER-RC=0 on
# success, then powers off.
# PID 1 runs the steps in a shell of their own (set -e stops them at the
# first failure), says how they ended, and powers the VM off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
if [ "${1:-}" != steps ]; then
        /bin/sh -eux "$0" steps
        echo "BUILDER-RC=$?"
        sync
        echo o > /proc/sysrq-trigger
        sleep 60
fi
# The initramfs moved /proc, /sys, /dev and /run here.
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mountpoint -q /run || mount -t tmpfs tmpfs /run
mkdir -p /dev/pts; mountpoint -q /dev/pts || mount -t devpts devpts /dev/pts
# udev for /dev/disk/by-* (grub-install and the cryptsetup hook look there).
/lib/systemd/systemd-udevd --daemon
udevadm trigger --action=add; udevadm settle --timeout=60
# LUKS2 with cryptsetup's defaults (argon2id), its memory capped so the
# initramfs of a 2 GiB guest opens it.
cryptsetup luksFormat --batch-mode --type luks2 --pbkdf-memory 262144 --iter-time 1000 \
        --key-file /builder.pass /dev/vda3
cryptsetup open --key-file /builder.pass /dev/vda3 cryptroot
mkfs.ext4 -q -L root /dev/mapper/cryptroot
mkfs.ext4 -q -L boot /dev/vda2
m=/mnt
mount /dev/mapper/cryptroot $m
cp -ax /. $m/
rm -rf $m/builder.sh $m/builder.pass $m/boot/*
mount /dev/vda2 $m/boot
# /boot's files belong on its own partition: copy them there.
cp -a /boot/. $m/boot/
mkdir -p $m/boot/efi
mount /dev/vda1 $m/boot/efi
luks=$(blkid -s UUID -o value /dev/vda3)
bootu=$(blkid -s UUID -o value /dev/vda2)
espu=$(blkid -s UUID -o value /dev/vda1)
echo "cryptroot UUID=$luks none luks,discard" > $m/etc/crypttab
cat > $m/etc/fstab <<FSTAB
/dev/mapper/cryptroot / ext4 errors=remount-ro 0 1
UUID=$bootu /boot ext4 defaults 0 2
UUID=$espu /boot/efi vfat umask=0077 0 1
FSTAB
for d in proc sys dev dev/pts run; do mount --bind /$d $m/$d; done
chroot $m update-initramfs -u -k all
# cryptsetup-initramfs put the root's unlock in the initramfs.
chroot $m sh -c 'lsinitramfs /boot/initrd.img-* | grep -q "cryptroot/crypttab"'
chroot $m grub-install --target=x86_64-efi --efi-directory=/boot/efi --bootloader-id=debian \
        --uefi-secure-boot --no-nvram
chroot $m grub-install --target=x86_64-efi --efi-directory=/boot/efi --bootloader-id=debian \
        --uefi-secure-boot --no-nvram --force-extra-removable
chroot $m update-grub
ls -lR $m/boot/efi
echo "BUILDER-INFO luks_uuid=$luks"
for d in run dev/pts dev sys proc; do umount $m/$d; done
umount $m/boot/efi $m/boot $m
cryptsetup close cryptroot
