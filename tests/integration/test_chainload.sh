#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Chainloading real loaders through mshim (Secure Boot off):
#  (a) GRUB: no \loader\entries at all, so mshim falls back to grubx64.efi
#      next to itself, as shim does. GRUB (grub-mkstandalone from
#      grub-efi-amd64-bin, tpm module preloaded) boots the test kernel.
#      Checked: the PCRs replay from the log; PCR 4 holds mshim and GRUB
#      exactly once each (GRUB's linuxefi enters the kernel through the
#      EFI handover, not LoadImage); GRUB's PCR 8 events (EV_IPL
#      "grub_cmd: ..." and "kernel_cmdline: ...") and PCR 9 events (the
#      files it read: the kernel and the initrd, digest = sha256 of the
#      file) are there as GRUB 2.06 logs them.
#  (b) systemd-boot through an mshim `efi` entry; systemd-boot reads the
#      same \loader\entries and boots the test kernel from its own entry
#      (see below for how the two loaders pick different entries).
#  (c) an efi entry naming a file that is not a PE image: mshim says so,
#      naming the file, and boots the next entry.
#  (d) no entries and no grubx64.efi: mshim says exactly that and returns
#      to the firmware.
# On every path PCR 5 and PCR 12 are extended by mshim (oracle.py computes
# the digests from the ESP files): (a) the chainload event over the load
# options it passes on, (b) the efi entry's (empty) options before
# systemd-boot's own event, (c) both entries tried in PCR 5, the booted
# one's options in PCR 12.
set -u
. "$(dirname "$0")/lib.sh"
T=chainload
it_init "$T"
SDBOOT=${SDBOOT:-/usr/lib/systemd/boot/efi/systemd-bootx64.efi}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" /usr/lib/grub/x86_64-efi/linuxefi.mod "$SDBOOT"; then
        it_fail "$T: prerequisites (grub-efi-amd64-bin, systemd-boot-efi)"; exit 1
fi
GRUB_OPTIONS="console=ttyS0 quiet panic=-1 mshim.test=grub"

# ---- (a) GRUB through the no-entries fallback ------------------------------
g=$(it_newboot grub) || { it_fail "$T: set-up"; exit 1; }
rm -rf "$g/esp/loader/entries"
printf '# mshim chainload test\ntimeout 0\n' > "$g/esp/loader/loader.conf"
cat > "$g/grub.cfg" <<CFG
set timeout=0
search --no-floppy --file --set=root /vmlinuz
echo "mshim-test: GRUB is loading the kernel"
linuxefi /vmlinuz $GRUB_OPTIONS
initrdefi /initrd.img
boot
CFG
if ! it_mkgrub "$g/grub.cfg" "$g/esp/EFI/BOOT/grubx64.efi" 2> "$g/mkstandalone.err"; then
        it_fail "$T: grub-mkstandalone"; cat "$g/mkstandalone.err" >&2; exit 1
fi

# ---- (b) systemd-boot through an efi entry ---------------------------------
# Both loaders read \loader\entries and loader.conf. The entry that starts
# systemd-boot has one try left ("+1-0", BLS "Boot counting"): mshim sorts
# it first (sort-key a) and, before starting it, renames it to "+0-1" in
# the ESP image; systemd-boot then sorts that "bad" entry after all others
# and picks the linux entry. The rename is what keeps systemd-boot from
# starting itself again. mshim measures the entry by its id, without the
# counter (oracle.py entry_path).
s=$(it_newboot sdboot) || { it_fail "$T: set-up"; exit 1; }
mkdir -p "$s/esp/EFI/systemd"
cp "$SDBOOT" "$s/esp/EFI/systemd/systemd-bootx64.efi"
printf '# mshim chainload test\ntimeout 0\n' > "$s/esp/loader/loader.conf"
mv "$s/esp/loader/entries/mshim-test.conf" "$s/esp/loader/entries/b-linux.conf"
printf 'sort-key b\n' >> "$s/esp/loader/entries/b-linux.conf"
printf 'title systemd-boot\nsort-key a\nefi /EFI/systemd/systemd-bootx64.efi\n' \
        > "$s/esp/loader/entries/a-sdboot+1-0.conf"

# ---- (c) an efi entry that is not a PE image, then a good one ---------------
n=$(it_newboot notpe) || { it_fail "$T: set-up"; exit 1; }
printf 'this is not a PE image\n' > "$n/esp/notpe.efi"
printf 'title not a PE image\nsort-key a\nefi /notpe.efi\n' > "$n/esp/loader/entries/a-notpe.conf"
printf 'sort-key b\n' >> "$n/esp/loader/entries/mshim-test.conf"
printf '# mshim chainload test\ntimeout 0\n' > "$n/esp/loader/loader.conf"

it_boot_all "$g" "$s" "$n"
it_boot_replays "$T" "$g" "$s" "$n"

# (a) PCR 4: mshim and GRUB, once each, nothing else.
if it_boot_ok "$g"; then
        it_oracle check-pcr4 --result "$g/result" --name "$T: grub" \
                "$g/esp/EFI/BOOT/BOOTX64.EFI" "$g/esp/EFI/BOOT/grubx64.efi" || IT_FAILED=1
        it_oracle check-pcr5 --result "$g/result" --name "$T: grub" \
                --loader-conf "$g/esp/loader/loader.conf" || IT_FAILED=1
        it_oracle check-pcr12 --result "$g/result" --name "$T: grub" --chainload || IT_FAILED=1
        it_grub_events "$g/result/eventlog.bin" "$T: grub" "$GRUB_OPTIONS" \
                "/vmlinuz=$g/esp/vmlinuz" "/initrd.img=$g/esp/initrd.img" || IT_FAILED=1
        case " $(it_oracle_cmdline "$g/result") " in
        *" $GRUB_OPTIONS "*) it_pass "$T: grub: the kernel got GRUB's command line" ;;
        *) it_fail "$T: grub: the kernel got GRUB's command line" ;;
        esac
fi
# (b) PCR 4: mshim, systemd-boot, the kernel (systemd-boot uses LoadImage).
if it_boot_ok "$s"; then
        it_oracle check-pcr4 --result "$s/result" --name "$T: sdboot" \
                "$s/esp/EFI/BOOT/BOOTX64.EFI" "$s/esp/EFI/systemd/systemd-bootx64.efi" "$s/esp/vmlinuz" || IT_FAILED=1
        it_oracle check-pcr5 --result "$s/result" --name "$T: sdboot" --loader-conf "$s/esp/loader/loader.conf" \
                --entry "$s/esp/loader/entries/a-sdboot+1-0.conf" || IT_FAILED=1
        it_oracle check-pcr12 --result "$s/result" --name "$T: sdboot" --options "" --then-others || IT_FAILED=1
        case " $(it_oracle_cmdline "$s/result") " in
        *" $IT_OPTIONS "*) it_pass "$T: sdboot: the kernel got the linux entry's options" ;;
        *) it_fail "$T: sdboot: the kernel got the linux entry's options" ;;
        esac
fi
# (c) the message names the file and says why; the next entry booted.
if it_boot_ok "$n" &&
                tr -d '\r' < "$n/serial.log" | grep -q 'mshim: \\notpe.efi: not a PE/COFF image'; then
        it_pass "$T: notpe: 'not a PE image' is reported and the next entry boots"
        tr -d '\r' < "$n/serial.log" | grep -m1 'notpe.efi:' | sed 's/^/  console: /' >&2
        it_oracle check-pcr5 --result "$n/result" --name "$T: notpe" --loader-conf "$n/esp/loader/loader.conf" \
                --entry "$n/esp/loader/entries/a-notpe.conf" --entry "$n/esp/loader/entries/mshim-test.conf" || IT_FAILED=1
        it_oracle check-pcr12 --result "$n/result" --name "$T: notpe" --options "$IT_OPTIONS" || IT_FAILED=1
else
        it_fail "$T: notpe: 'not a PE image' is reported and the next entry boots"
        it_show_serial "$n"
fi

# ---- (d) no entries and no grubx64.efi: a clear message, back to firmware --
m=$(it_newboot missing) || { it_fail "$T: set-up"; exit 1; }
rm -rf "$m/esp/loader/entries"
it_mkesp "$m" || { it_fail "$T: set-up (esp)"; exit 1; }
it_log "booting missing (no entries, no grubx64.efi) ..."
it_qemu "$m" --timeout 120 --stop 'returning to the firmware|MSHIM-RESULT-BEGIN'
want='mshim: no boot entries and \EFI\BOOT\grubx64.efi not found; returning to the firmware'
if tr -d '\r' < "$m/serial.log" | grep -q -F "$want"; then
        it_pass "$T: missing: no entries and no grubx64.efi gives a clear message"
else
        it_fail "$T: missing: no entries and no grubx64.efi gives a clear message"
        it_show_serial "$m"
fi
exit $IT_FAILED
