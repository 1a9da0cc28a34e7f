#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Build the LUKS test initramfs (tests/integration/test_luks.sh): the
# reporting initramfs of scripts/mkinitramfs.sh plus what unlocks a LUKS2
# volume the way a Debian system does with mshim's keyscript:
#
#   scripts/mkinitramfs-luks.sh OUT.cpio [KDIR]
#
# Adds: Debian's cryptsetup and util-linux's blkid with their libraries
# (ldd), the host-built mshim CLI (MSHIM_CLI, default build/mshim) with its
# libraries and tpm2-tss's dlopen'ed libtss2-tcti-device.so.0, the
# keyscript hooks/cryptroot-unseal as it is (the file installed on real
# systems, not a copy), the kernel modules scripts/fetch-kernel.sh kept in
# KDIR (default build/kernel; the initramfs only works with that kernel),
# and a test askpass (/lib/cryptsetup/askpass: Debian's is in the
# cryptsetup package, which the test host does not install) that reads the
# console and gives up after MSHIM_ASKPASS_TIMEOUT seconds (default 30), so
# a boot nobody types into still ends.
#
# Before the report, /init (init.pre) prints on the console:
#   MSHIM-LUKS MODULE-FAILED <module>       a module that would not load
#   MSHIM-LUKS PARTUUID <text> ATTRS <hex>  LoaderDevicePartUUID from efivarfs
#                                           (text without its NUL; attributes
#                                           as 4 hex bytes), or PARTUUID NONE
#   MSHIM-LUKS EXTRA-FILE <name> <line>     each /etc/mshim-extra-* an appended
#                                           archive added, its first line
#   MSHIM-LUKS EXTENDED PCR12 <rc hex>      the test's "the OS extends a PCR
#                                           before unseal" (below)
#   MSHIM-LUKS SOURCE <device>              the volume crypttab's UUID names
#   MSHIM-LUKS FALLBACK <reason>            the keyscript asked for the passphrase
#   MSHIM-LUKS PCR15 <event>                each PCR 15 event, /run/mshim/pcr15.log
#   MSHIM-LUKS MARKER <text>                the volume's first sector, decrypted
#   MSHIM-LUKS VOLUME-INIT                  ... or a shell script, run (below)
#   MSHIM-LUKS UNLOCKED                     `cryptsetup open` took the key
#   MSHIM-LUKS FAILED <cryptsetup's message> it did not
# The volume is the one /etc/crypttab names: "root UUID=<MSHIM_LUKS_UUID>"
# with the keyscript; of the devices with that UUID, the first by name (a
# stand-in for udev's /dev/disk/by-uuid link, which names one of them: a
# decoy in the root partition, /dev/vda2, is met before the real volume
# on a second disk, /dev/vdb). It is
# opened as Debian's cryptroot does: the keyscript's output as the key
# (--key-file=-), at most 3 tries, CRYPTTAB_TRIED counting the failed ones.
# Once open, the volume's first 4 sectors are read: a shell script there
# ("#!/bin/sh" first) stands for the volume's init and runs, as root, in
# this boot (test_luks.sh's decoy); anything else is the marker.
# When the ESP (found by LoaderDevicePartUUID) holds mshim-test/extend-pcr12,
# /init first extends PCR 12 (sha256 bank) with a TPM2_PCR_Extend command
# written to /dev/tpmrm0: the OS changing a PCR before the keyscript runs.
# The file is not measured, so that boot's PCRs are otherwise the same.
# When it holds mshim-test/attest-nonce, /init runs `mshim attest quote`
# with that nonce instead of opening a volume (see init.pre below):
#   MSHIM-ATTEST RC <status> / MSHIM-ATTEST-BEGIN / base64 of a tar of
#   evidence.json, tt/ (--tpm2-tools) and err / MSHIM-ATTEST-END
# Reproducible as mkinitramfs.sh is: the same inputs give the same bytes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

if [ "${1:-}" != --stage ]; then
        out=${1:?usage: mkinitramfs-luks.sh OUT.cpio [KDIR]}
        KDIR=${2:-$repo/build/kernel}
        case "$KDIR" in /*) ;; *) KDIR=$PWD/$KDIR ;; esac
        export MSHIM_LUKS_KDIR=$KDIR
        # Compressed as Debian's initramfs-tools compresses by default: the
        # loader and the kernel's EFI stub then read and measure 7 MB, not
        # 16 (about 0.4 s a boot under TCG), and the kernel unpacks it.
        COMPRESS=zstd EXTRA=$here/mkinitramfs-luks.sh exec "$here/mkinitramfs.sh" "$out"
fi
stage=${2:?}
KDIR=${MSHIM_LUKS_KDIR:?}
MSHIM_CLI=${MSHIM_CLI:-$repo/build/mshim}
case "$MSHIM_CLI" in /*) ;; *) MSHIM_CLI=$repo/$MSHIM_CLI ;; esac
version=$(cat "$KDIR/VERSION")
mods=$KDIR/modules/lib/modules/$version
for f in "$MSHIM_CLI" "$mods/modules.dep" /usr/sbin/cryptsetup; do
        [ -e "$f" ] || { echo "mkinitramfs-luks: missing $f (make; make deps)" >&2; exit 1; }
done

# put SRC DEST: SRC at DEST in the tree, and every library ldd lists for
# it at the path ldd gives (symbolic links resolved: one file each).
put() {
        local lib
        mkdir -p "$stage/$(dirname "$2")"
        cp -L "$1" "$stage/$2"
        for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*' | sort -u); do
                [ -e "$stage/$lib" ] && continue
                mkdir -p "$stage/$(dirname "$lib")"
                cp -L "$lib" "$stage/$lib"
        done
}

put "$MSHIM_CLI" /bin/mshim
# Without its debug information (the symbols stay): the same code in a
# quarter of the bytes, and every boot hashes, copies and unpacks each
# byte of the initramfs under TCG (2.5 of 18 MB were DWARF).
strip --strip-debug "$stage/bin/mshim"
put /usr/sbin/cryptsetup /sbin/cryptsetup
put "$(command -v blkid || echo /usr/sbin/blkid)" /sbin/blkid
tcti=$(ls /usr/lib/*/libtss2-tcti-device.so.0 /lib/*/libtss2-tcti-device.so.0 2>/dev/null | head -n1)
[ -n "$tcti" ] || { echo "mkinitramfs-luks: libtss2-tcti-device.so.0 is missing" >&2; exit 1; }
put "$tcti" "$tcti"
put "$repo/hooks/cryptroot-unseal" /lib/mshim/cryptroot-unseal
mkdir -p "$stage/run" "$stage/lib/cryptsetup" "$stage/etc"
printf 'root UUID=%s none luks,keyscript=/lib/mshim/cryptroot-unseal\n' "${MSHIM_LUKS_UUID:?}" > "$stage/etc/crypttab"

# The modules, and the order to load them in: each after what it depends
# on (modules.dep), in KMODS's order otherwise.
mkdir -p "$stage/lib/modules/$version"
cp -a "$mods/." "$stage/lib/modules/$version/"
python3 - "$mods/modules.dep" > "$stage/etc/mshim-modules" <<'PY'
import sys
dep = {}
for line in open(sys.argv[1]):
    mod, _, deps = line.partition(":")
    dep[mod.strip()] = deps.split()
done = []
def visit(m):
    if m in done:
        return
    for d in dep[m]:
        visit(d)
    done.append(m)
for m in sorted(dep):
    visit(m)
print("\n".join(done))
PY

# TPM2_PCR_Extend(PCR 12, password session, sha256 = SHA-256 of a fixed
# text), TPM 2.0 Part 3, 22.4: header (tag TPM_ST_SESSIONS, size 65,
# command code 0x182), handle, authorization area (TPM_RS_PW, empty nonce
# and password, 9 bytes), TPML_DIGEST_VALUES with one sha256 digest.
{
        printf '\200\002\000\000\000\101\000\000\001\202\000\000\000\014'
        printf '\000\000\000\011\100\000\000\011\000\000\000\000\000'
        printf '\000\000\000\001\000\013'
        printf 'mshim test: the OS extends PCR 12' | openssl dgst -sha256 -binary
} > "$stage/etc/pcr12-extend.cmd"
[ "$(stat -c %s "$stage/etc/pcr12-extend.cmd")" = 65 ] || { echo "mkinitramfs-luks: bad PCR_Extend command" >&2; exit 1; }

cat > "$stage/lib/cryptsetup/askpass" <<'ASK'
#!/bin/sh
# Test stand-in for Debian's askpass: the prompt, then one line from the
# console without echo, printed without its newline; nothing after
# MSHIM_ASKPASS_TIMEOUT seconds.
exec </dev/console
printf '%s' "$1" >/dev/console
stty -echo 2>/dev/null
IFS= read -r -t "${MSHIM_ASKPASS_TIMEOUT:-30}" pass || pass=
stty echo 2>/dev/null
printf '\n' >/dev/console
printf '%s' "$pass"
ASK

cat > "$stage/init.pre" <<'PRE'
#!/bin/sh
# LUKS test steps (scripts/mkinitramfs-luks.sh), before the report.
export PATH=/sbin:/bin
# No udev here: libdevmapper makes the /dev/mapper nodes itself.
export DM_DISABLE_UDEV=1
while read -r m; do
        insmod "/lib/modules/$(uname -r)/$m" 2>/dev/null || echo "MSHIM-LUKS MODULE-FAILED $m"
done < /etc/mshim-modules
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null
v=/sys/firmware/efi/efivars/LoaderDevicePartUUID-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
if [ -r "$v" ]; then
        echo "MSHIM-LUKS PARTUUID $(tail -c +5 "$v" | tr -d '\000') ATTRS $(head -c 4 "$v" | od -An -tx1 | tr -d ' \n')"
else
        echo "MSHIM-LUKS PARTUUID NONE"
fi
# A cpio archive appended to this one (test_luks.sh) adds /etc/mshim-extra-*:
# each file's text shows that the kernel unpacked it.
for f in /etc/mshim-extra-*; do
        [ -f "$f" ] && echo "MSHIM-LUKS EXTRA-FILE ${f#/etc/} $(head -n 1 "$f")"
done
# The attestation test (tests/integration/test_attest.sh): when the ESP
# holds mshim-test/attest-nonce (the verifier's nonce, hex), the guest runs
# `mshim attest quote` with it, prints MSHIM-ATTEST RC <status>, then its
# files (evidence.json, tt/ for tpm2_checkquote, err) as a tar archive in
# base64 between MSHIM-ATTEST-BEGIN and MSHIM-ATTEST-END. Then, when the
# disk holds the volume of /etc/crypttab (test_luks_sb.sh: a boot that
# quotes and unlocks), it goes on to open it as any boot does; else
# (test_attest.sh: no volume) straight to the report. The quote extends
# nothing, so the unlock that follows sees the same PCRs.
if [ -r "$v" ]; then
        n=0
        while [ $n -lt 50 ]; do
                esp=$(blkid -l -o device -t "PARTUUID=$(tail -c +5 "$v" | tr -d '\000' | tr A-F a-f)" 2>/dev/null)
                [ -n "$esp" ] && break
                sleep 0.2
                n=$((n + 1))
        done
        mkdir -p /tmp/esp
        if [ -n "$esp" ] && mount -t vfat -o ro "$esp" /tmp/esp 2>/dev/null; then
                # Boot counting (tests/integration/test_bless.sh): when the
                # ESP holds mshim-test/bless-then-power-cut, `mshim bless` on
                # it read-write, MSHIM-BLESS RC <status>, then the power goes
                # at once (poweroff -n -f: no sync, no unmount), as on a machine
                # that loses power right after the bless unit ran.
                if [ -e /tmp/esp/mshim-test/bless-then-power-cut ] && mount -o remount,rw /tmp/esp; then
                        mshim bless --esp /tmp/esp
                        echo "MSHIM-BLESS RC $?"
                        poweroff -n -f
                fi
                if [ -r /tmp/esp/mshim-test/attest-nonce ]; then
                        mkdir -p /tmp/att/tt
                        mshim attest quote --nonce "$(cat /tmp/esp/mshim-test/attest-nonce)" \
                                -o /tmp/att/evidence.json --tpm2-tools /tmp/att/tt >/tmp/att/err 2>&1
                        echo "MSHIM-ATTEST RC $?"
                        echo MSHIM-ATTEST-BEGIN
                        (cd /tmp/att && tar cf - evidence.json tt err) | base64
                        echo MSHIM-ATTEST-END
                        umount /tmp/esp
                        read -r _ uuid _ < /etc/crypttab
                        blkid -o device -t "$uuid" >/dev/null 2>&1 || exit 0
                else
                        umount /tmp/esp
                fi
        fi
fi
# The virtio disk shows up a moment after its driver loads.
read -r _ uuid _ < /etc/crypttab
n=0
while [ $n -lt 50 ]; do
        src=$(blkid -o device -t "$uuid" 2>/dev/null | sort | head -n 1)
        [ -n "$src" ] && break
        sleep 0.2
        n=$((n + 1))
done
if [ -z "$src" ]; then
        echo "MSHIM-LUKS FAILED no volume with $uuid"
        exit 0
fi
echo "MSHIM-LUKS SOURCE $src"
# The test's "the OS extends PCR 12 before unseal", when the ESP asks for it.
if [ -r "$v" ]; then
        esp=$(blkid -l -o device -t "PARTUUID=$(tail -c +5 "$v" | tr -d '\000' | tr A-F a-f)")
        mkdir -p /tmp/esp
        if [ -n "$esp" ] && mount -t vfat -o ro "$esp" /tmp/esp 2>/dev/null; then
                if [ -e /tmp/esp/mshim-test/extend-pcr12 ]; then
                        exec 3<>/dev/tpmrm0
                        cat /etc/pcr12-extend.cmd >&3
                        echo "MSHIM-LUKS EXTENDED PCR12 $(dd bs=4096 count=1 <&3 2>/dev/null | head -c 10 | od -An -tx1 | tr -d ' \n')"
                        exec 3<&-
                fi
                umount /tmp/esp
        fi
fi
# What Debian's cryptroot script hands a keyscript.
export CRYPTTAB_NAME=root CRYPTTAB_SOURCE="$src" CRYPTTAB_KEY=none \
        CRYPTTAB_OPTIONS=luks,keyscript=/lib/mshim/cryptroot-unseal
tried=0
while :; do
        CRYPTTAB_TRIED=$tried /lib/mshim/cryptroot-unseal none |
                cryptsetup open --type luks2 --key-file=- "$src" root 2>/tmp/cryptsetup.err
        st=$?
        tried=$((tried + 1))
        [ "$st" = 0 ] || [ "$tried" -ge 3 ] && break
done
o=$(cat /run/mshim/unlock-root 2>/dev/null)
case "$o" in
"fallback "*) echo "MSHIM-LUKS FALLBACK ${o#fallback }" ;;
esac
cat /run/mshim/pcr15.log 2>/dev/null | while IFS= read -r ev; do echo "MSHIM-LUKS PCR15 $ev"; done
if [ "$st" = 0 ]; then
        if [ "$(head -c 10 /dev/mapper/root)" = "#!/bin/sh" ]; then
                echo "MSHIM-LUKS VOLUME-INIT"
                head -c 2048 /dev/mapper/root | tr -d '\000' > /tmp/volume-init
                sh /tmp/volume-init
        else
                echo "MSHIM-LUKS MARKER $(head -c 512 /dev/mapper/root | tr -d '\000')"
        fi
        echo "MSHIM-LUKS UNLOCKED"
        cryptsetup close root
else
        echo "MSHIM-LUKS FAILED $(head -n 1 /tmp/cryptsetup.err)"
fi
PRE
chmod 0755 "$stage/init.pre" "$stage/lib/cryptsetup/askpass" "$stage/lib/mshim/cryptroot-unseal"
