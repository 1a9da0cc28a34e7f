#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make deps: make sure every Debian 12 package the build and the tests need is
# installed, then fetch the test kernel (scripts/fetch-kernel.sh). Silent and
# fast when everything is already there.
set -eu
cd "$(dirname "$0")/.."

PKGS="gnu-efi ovmf swtpm swtpm-tools qemu-system-x86 tpm2-tools libtss2-dev
libssl-dev sbsigntool efitools mtools dosfstools busybox-static cpio zstd gcc make
clang cppcheck python3 python3-jsonschema pesign grub-efi-amd64-bin systemd-boot-efi groff-base man-db
strace libtss2-tcti-pcap0 openssl libqrencode-dev oathtool cryptsetup-bin fdisk kmod
python3-cryptography python3-yaml python3-packaging ${EXTRA_PKGS:-}"
# EXTRA_PKGS: make check-system's own (debhelper and lintian build and check
# the Debian package, tests/system/test_package.sh).
# strace: tests/cli/test_safety.sh checks fsync/rename order. libtss2-tcti-pcap0:
# tests/cli/test_seal.sh counts unseal's TPM commands from its capture; openssl
# (the command) checks the approvals' signatures there. libqrencode-dev: mshim
# totp's QR code; oathtool: the TOTP oracle of tests/cli/test_totp.sh and
# tests/integration/test_totp.sh. python3-jsonschema: tests/cli/test_json_schema.sh validates every --json
# output. groff-base and man-db: tests/cli/test_man.sh checks the manual pages
# (made from man/*.txt by scripts/mkman.py, in python3) with groff -ww and
# man --warnings. cryptsetup-bin, fdisk (sfdisk), python3-cryptography:
# tests/integration/test_luks.sh's GPT disk with a LUKS2 volume made on the
# host (and its marker sector, AES-XTS); the guest runs the same cryptsetup.
# kmod: depmod for the test kernel's modules (scripts/fetch-kernel.sh).
# python3-yaml, python3-packaging: Keylime's engine (../shared/oracles/keylime/evaluate)
# in tests/cli/test_keylime.sh.
# Debian's signed shim, MokManager and GRUB are not installed (installing
# shim-signed on an EFI host re-runs grub-install on its ESP): the tests
# use copies unpacked by scripts/fetch-efi.sh.

# Modes (make's targets choose):
#   (none)      the packages, then the downloads
#   --build     plain make: only what compiling the loader and the CLI
#               needs, and no download
#   --packages  every package, no download
#   --fetch     the downloads alone (make check runs them beside its build:
#               the build needs none of them, and on a fresh clone the
#               downloads are mostly waiting on the network)
mode=${1:-}
case $mode in
''|--build|--packages|--fetch) ;;
*) echo "usage: scripts/deps.sh [--build | --packages | --fetch]" >&2; exit 2 ;;
esac
BUILD_PKGS="gnu-efi libssl-dev libtss2-dev libqrencode-dev gcc make python3"
[ "$mode" = --build ] && PKGS=$BUILD_PKGS

# check_packages: install what is missing (as root), else name it and fail.
check_packages() {
        local installed missing='' p
        # One dpkg-query for all (one per package took a second of every make
        # check); a package dpkg does not know is not listed, so missing too.
        # shellcheck disable=SC2086
        installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null | awk '$NF == "installed" { printf "%s ", $1 }') "
        for p in $PKGS; do
                case "$installed" in
                *" $p "*) ;;
                *) missing="$missing $p" ;;
                esac
        done

        if [ -n "$missing" ]; then
                if [ "$(id -u)" = 0 ]; then
                        echo "deps: installing:$missing"
                        export DEBIAN_FRONTEND=noninteractive
                        apt-get update -q
                        # shellcheck disable=SC2086
                        apt-get install -y -q --no-install-recommends $missing
                else
                        echo "deps: missing Debian packages:$missing" >&2
                        echo "deps: run:  sudo apt-get install$missing" >&2
                        exit 1
                fi
        fi
}
[ "$mode" = --fetch ] || check_packages

case $mode in --build|--packages) exit 0 ;; esac
# The downloads run side by side (about 25 s one after the other on a fresh
# clone, most of it unpacking the kernels' packages): each into its own
# log, printed in order when all are done; any failure fails make deps.
# fetch-kernel.sh runs apt-get update itself when apt does not know the
# kernel; run it once here instead, so that three do not race for apt's lock.
if [ "$(id -u)" = 0 ] && { [ ! -s "${KDIR:-build/kernel}/vmlinuz" ] || [ ! -s "${KCLOUDDIR:-build/kernel-cloud}/vmlinuz" ] ||
                           [ ! -s "${KRTDIR:-build/kernel-rt}/vmlinuz" ]; } &&
   [ -z "$(apt-cache policy linux-image-amd64 2>/dev/null | sed -n 's/^ *Candidate: *//p' | grep -v none)" ]; then
        apt-get update -q >/dev/null
fi
logs=$(mktemp -d "${TMPDIR:-/tmp}/mshim-deps.XXXXXX")
trap 'rm -rf "$logs"' EXIT
pids=()
scripts/fetch-efi.sh > "$logs/1" 2>&1 & pids+=($!)
scripts/fetch-kernel.sh > "$logs/2" 2>&1 & pids+=($!)
# Debian's kernel for VMs, which most integration boots start
# (tests/integration/lib.sh IT_KDIR: LZ4 rather than XZ, a third of a boot
# less under TCG).
KDIR=${KCLOUDDIR:-build/kernel-cloud} KMETA=linux-image-cloud-amd64 scripts/fetch-kernel.sh > "$logs/3" 2>&1 & pids+=($!)
# The second real kernel (tests/integration/test_predict.sh: a kernel update).
KDIR=${KRTDIR:-build/kernel-rt} KMETA=linux-image-rt-amd64 scripts/fetch-kernel.sh > "$logs/4" 2>&1 & pids+=($!)
rc=0
for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || rc=1
        cat "$logs/$((i + 1))"
done
exit "$rc"
