#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# One measured boot through mshim (OVMF + swtpm on TIS, banks sha1/256/384/512,
# Debian's generic kernel):
#  - every active bank's PCRs 0-9 and 11-15 equal the replay of the guest's
#    event log by `mshim log --json`, by tpm2_eventlog and by the Python oracle;
#  - PCR 5 and PCR 12 equal predictions computed from the ESP files alone;
#  - PCR 4: one EV_EFI_BOOT_SERVICES_APPLICATION per started image (mshim,
#    then the kernel), with their Authenticode digests;
#  - PCR 9: exactly one Linux initrd event carrying sha256(initrd);
#  - the kernel got the entry's options as its command line.
set -u
# Every bank swtpm has: this file checks the measurements bank by bank.
IT_ALL_BANKS=1
# A discrete TPM's interface (TIS); the other files boot with CRB (lib.sh).
IT_TPM_DEVICE=tpm-tis
. "$(dirname "$0")/lib.sh"
# Debian's generic kernel (linux-image-amd64), which the other files leave
# for its cloud flavour (lib.sh IT_KDIR): the kernel a laptop boots.
IT_KDIR=$IT_B/kernel IT_KERNEL=$IT_B/kernel/vmlinuz
T=measured-boot
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL"; then
        it_fail "$T: prerequisites"; exit 1
fi
d=$(it_newboot base) || { it_fail "$T: set-up"; exit 1; }
if ! it_boot "$d"; then
        it_fail "$T: boot through mshim reaches the initramfs"
        exit 1
fi
it_pass "$T: boot through mshim reaches the initramfs"
r=$d/result

# 1. replay: mshim log --json, tpm2_eventlog, the Python oracle.
it_check_replay "$d" "$T: TPM PCRs equal the event-log replay"

# 2. predictions from the ESP files.
it_oracle check-pcr5 --result "$r" --name "$T" \
        --loader-conf "$d/esp/loader/loader.conf" \
        --entry "$d/esp/loader/entries/mshim-test.conf" || IT_FAILED=1
it_oracle check-pcr12 --result "$r" --name "$T" --options "$IT_OPTIONS" || IT_FAILED=1

# 3. PCR 4 and PCR 9 events.
it_oracle check-pcr4 --result "$r" --name "$T" "$d/esp/EFI/BOOT/BOOTX64.EFI" "$d/esp/vmlinuz" || IT_FAILED=1
it_oracle check-pcr9 --result "$r" --name "$T" --initrd "$d/esp/initrd.img" || IT_FAILED=1

# The kernel's command line (the stub may prepend nothing; allow initrd=).
cmdline=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cmdline"])' "$r/result.json")
case " $cmdline " in
*" $IT_OPTIONS "*) it_pass "$T: kernel command line holds the entry's options" ;;
*) it_fail "$T: kernel command line holds the entry's options"
   echo "  /proc/cmdline: '$cmdline', options: '$IT_OPTIONS'" >&2 ;;
esac
exit "$IT_FAILED"
