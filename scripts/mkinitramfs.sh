#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Build the test initramfs: busybox-static plus an /init that prints what the
# TPM and the kernel saw to the serial console, then powers off.
#
#   scripts/mkinitramfs.sh OUT.cpio
#
# Output on the console (consumed by tests/integration/lib.sh):
#   MSHIM-RESULT-BEGIN
#   BANKS sha1 sha256 ...                (or NO-TPM when tpm0 is absent)
#   PCR <bank> <N> <hex>                 for every bank, N = 0..23
#   CMDLINE <contents of /proc/cmdline>
#   EVENTLOG-BEGIN / base64 lines / EVENTLOG-END   (binary_bios_measurements)
#   MSHIM-RESULT-END
#
# EXTRA=PROGRAM (optional) adds to the tree: it runs as `PROGRAM --stage
# DIR` once the base tree is in DIR (scripts/mkinitramfs-luks.sh). An
# executable DIR/init.pre it leaves there runs first thing in /init, on the
# console, before the report.
#
# COMPRESS=zstd compresses the archive (zstd's default level, one thread:
# the same bytes each time), as Debian's initramfs-tools does by default,
# padded with zeros to a multiple of 4 bytes so that another archive can
# follow it; unset, it is a plain cpio archive.
#
# Reproducible: no root needed (device nodes come from devtmpfs at boot),
# every mtime is 0, files are listed in sorted order, owners are 0:0, so
# the same busybox gives the same bytes (tests predict its hash).
set -eu
out=${1:?usage: mkinitramfs.sh OUT.cpio}
BUSYBOX=${BUSYBOX:-/bin/busybox}
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
case "${COMPRESS:-}" in
'' | zstd) ;;
*) echo "mkinitramfs: COMPRESS=$COMPRESS: only zstd is known" >&2; exit 1 ;;
esac

stage=$(mktemp -d "${TMPDIR:-/tmp}/mshim-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/bin "$stage"/dev "$stage"/proc "$stage"/sys "$stage"/tmp
cp "$BUSYBOX" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
cat > "$stage/init" <<'INIT'
#!/bin/sh
# mshim test initramfs: report PCRs, event log and command line, power off.
export PATH=/bin
/bin/busybox --install -s /bin
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
# Keep kernel messages from interleaving with the report.
echo 1 > /proc/sys/kernel/printk
exec > /dev/console 2>&1 </dev/console
echo
[ -x /init.pre ] && /init.pre
echo MSHIM-RESULT-BEGIN
t=/sys/class/tpm/tpm0
if [ -d "$t" ]; then
        banks=
        for d in "$t"/pcr-*; do
                [ -d "$d" ] && banks="$banks ${d##*/pcr-}"
        done
        echo "BANKS$banks"
        for b in $banks; do
                n=0
                while [ $n -le 23 ]; do
                        # The shell's read, not $(cat ...): no fork and exec
                        # per PCR (96 of them with four banks, each slow
                        # under TCG). An unreadable PCR still prints empty.
                        v=
                        read -r v < "$t/pcr-$b/$n"
                        echo "PCR $b $n $v"
                        n=$((n + 1))
                done
        done
else
        echo NO-TPM
fi
echo "CMDLINE $(cat /proc/cmdline)"
log=/sys/kernel/security/tpm0/binary_bios_measurements
if [ -r "$log" ]; then
        cat "$log" > /tmp/log.bin
        echo "EVENTLOG-SIZE $(wc -c < /tmp/log.bin)"
        echo EVENTLOG-BEGIN
        base64 < /tmp/log.bin
        echo EVENTLOG-END
fi
# Anything written is on disk before the end marker: the test harness
# stops the VM when it sees the marker.
sync
echo MSHIM-RESULT-END
# Let the serial console drain: the kernel's own "reboot: Power down" line
# must not land inside the report on a socket-backed serial port.
sleep 1
poweroff -f
INIT
chmod 0755 "$stage/init" "$stage/bin/busybox"
if [ -n "${EXTRA:-}" ]; then
        "$EXTRA" --stage "$stage"
fi
find "$stage" -exec touch -h -d @0 {} +
(
        cd "$stage"
        find . -mindepth 1 | LC_ALL=C sort |
                cpio --quiet -o -H newc -R 0:0 --reproducible > "$out.tmp"
)
case "${COMPRESS:-}" in
'') ;;
zstd)
        if ! zstd -q -f -3 -T1 -o "$out.zst" "$out.tmp"; then
                echo "mkinitramfs: zstd failed (the zstd package: make deps)" >&2
                rm -f "$out.tmp" "$out.zst"; exit 1
        fi
        # Zero bytes up to a multiple of 4: the kernel finds an archive
        # appended after this one only at a 4-byte boundary (it skips the
        # zeros; init/initramfs.c), as the tests append one.
        if ! truncate -s %4 "$out.zst"; then
                echo "mkinitramfs: cannot pad $out.zst to a multiple of 4 bytes" >&2
                rm -f "$out.tmp" "$out.zst"; exit 1
        fi
        mv "$out.zst" "$out.tmp"
        ;;
esac
mv "$out.tmp" "$out"
