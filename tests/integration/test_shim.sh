#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Secure Boot with Microsoft's keys: firmware -> Debian's signed shim 16 ->
# mshim (signed with a test MOK) -> Debian's signed kernel (issue 4).
# OVMF (lib.sh IT_OVMF_CODE_SB, Secure Boot on) with a copy of Debian's
# OVMF_VARS.ms.fd into whose MokList `mshim vars add-mok` put a fresh test
# certificate.
#  (1) shim -> mshim -> kernel boots to the initramfs report; the PCRs
#      replay from the log; shim's own events are there (PCR 14 MokList,
#      MokListX, MokSBState; PCR 7 the authorities shim used: the MOK for
#      mshim, its vendor certificate for the kernel); PCR 4 holds shim,
#      mshim and the kernel exactly once each (mshim adds none).
#  (2a) mshim signed by a key that is not enrolled: shim refuses to start
#      it ("Verification failed"), nothing boots.
#  (2b) mshim MOK-signed, the kernel re-signed by an unknown key only: the
#      kernel's LoadImage goes through shim's verification and is refused;
#      mshim names the file; nothing boots.
#  (3) shim -> mshim -> an `efi /EFI/debian/grubx64.efi` entry: Debian's
#      signed GRUB, unmodified (Debian's key: shim's vendor certificate)
#      -> Debian's signed kernel, unmodified. mshim finds shim's SHIM_LOCK
#      and installs neither its own nor its LoadImage hook (console line);
#      GRUB verifies the kernel through shim's Verify and boots it; the
#      PCRs replay; PCR 4 holds shim, mshim and GRUB once each and the
#      kernel twice, both shim's Verify events (GRUB 2.06 calls it twice;
#      empty device path), none from mshim; GRUB's PCR 8/9 events.
set -u
. "$(dirname "$0")/lib.sh"
T=shim
it_init "$T"
SHIM=${SHIM:-$IT_EFIROOT/usr/lib/shim/shimx64.efi.signed}
MM_SIGNED=${MM_SIGNED:-$IT_EFIROOT/usr/lib/shim/mmx64.efi.signed}
GRUB_SIGNED=${GRUB_SIGNED:-$IT_EFIROOT/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$SHIM" "$MM_SIGNED" "$GRUB_SIGNED" \
                "$IT_OVMF_CODE_SB" "$IT_OVMF_VARS_MS" ||
   ! command -v sbsign >/dev/null || ! command -v sbattach >/dev/null; then
        it_fail "$T: prerequisites (shim-signed, grub-efi-amd64-signed, ovmf, sbsigntool, make; make deps)"; exit 1
fi
if ! "$IT_CLI" vars --help >/dev/null 2>&1; then
        it_fail "$T: prerequisites: $IT_CLI has no 'vars' command"; exit 1
fi
# shellcheck disable=SC2034 # read by it_secure_boot_on (lib.sh)
IT_SB_CODE="$IT_OVMF_CODE_SB"

k=$IT_DIR/keys
it_shim_keys "$k" || { it_fail "$T: set-up (keys)"; exit 1; }
"$IT_CLI" vars add-mok "$IT_OVMF_VARS_MS" --cert "$k/mok.pem" -o "$k/vars-mok.fd" ||
        { it_fail "$T: set-up (mshim vars add-mok)"; exit 1; }
# Microsoft's keys plus the test MOK: the store it_qemu copies for each boot.
it_secure_boot_on "$k/vars-mok.fd" || { it_fail "$T: set-up (Secure Boot)"; exit 1; }

good=$(it_shim_esp good "$k") || { it_fail "$T: set-up (esp)"; exit 1; }

# (1) the good chain.
if it_boot "$good"; then
        it_pass "$T: shim -> mshim (MOK-signed) -> Debian's signed kernel reaches the initramfs"
        r=$good/result
        it_check_replay "$good" "$T: TPM PCRs equal the event-log replay"
        "$IT_CLI" vars get "$k/vars-mok.fd" MokList -o "$k/MokList.bin" &&
        it_shim_events "$r/eventlog.bin" "$T" "$k/MokList.bin" "$k/mok.der" \
                "$good/esp/EFI/BOOT/BOOTX64.EFI" "$good/esp/EFI/BOOT/grubx64.efi" "$good/esp/vmlinuz" || IT_FAILED=1
else
        it_fail "$T: shim -> mshim (MOK-signed) -> Debian's signed kernel reaches the initramfs"
fi

# (2a) mshim signed by a key shim does not know.
a=$(it_shim_esp unknown-mshim "$k") || { it_fail "$T: set-up (esp)"; exit 1; }
rm -f "$a/esp/EFI/BOOT/grubx64.efi"
if ! "$IT_CLI" sign --key "$k/other.key" --cert "$k/other.pem" -o "$a/esp/EFI/BOOT/grubx64.efi" "$IT_EFI" >"$a/sign.log" 2>&1; then
        it_fail "$T: set-up (sign)"; cat "$a/sign.log" >&2; exit 1
fi
it_mkesp "$a" || { it_fail "$T: set-up (esp image)"; exit 1; }
it_log "booting unknown-mshim (mshim signed by a key not in MokList) ..."
it_qemu "$a" --timeout 150 --stop 'MSHIM-RESULT-BEGIN|Verification failed|start_image\(\) returned|Failed to load image'
rc=$?
it_log "boot unknown-mshim stopped after $(cat "$a/seconds") s (status $rc)"
log=$(tr -d '\r' < "$a/serial.log" | tr -c '\n -~' ' ')
if grep -q -E 'Verification failed: .*(Security Violation|Access Denied)' <<<"$log" &&
   ! grep -q -E 'mshim[: ]|MSHIM-RESULT-BEGIN|EFI stub' <<<"$log"; then
        it_pass "$T: mshim signed by a key not enrolled: shim refuses to start it"
        grep -o -m1 -E 'Verification failed: [^ ].*Violation' <<<"$log" | sed 's/^/  console: /' >&2
else
        it_fail "$T: mshim signed by a key not enrolled: shim refuses to start it"
        it_show_serial "$a"
fi

# (2b) the kernel re-signed by an unknown key only.
b=$(it_shim_esp unknown-kernel "$k") || { it_fail "$T: set-up (esp)"; exit 1; }
it_shim_resign "$IT_KERNEL" "$b/esp/vmlinuz" "$k/other.key" "$k/other.pem" || { it_fail "$T: set-up (kernel)"; exit 1; }
it_mkesp "$b" || { it_fail "$T: set-up (esp image)"; exit 1; }
it_log "booting unknown-kernel (kernel signed by an unknown key) ..."
it_qemu "$b" --timeout 150 --stop 'MSHIM-RESULT-BEGIN|EFI stub|start_image\(\) returned'
rc=$?
it_log "boot unknown-kernel stopped after $(cat "$b/seconds") s (status $rc)"
log=$(tr -d '\r' < "$b/serial.log" | tr -c '\n -~' ' ')
if grep -q -E 'mshim: \\vmlinuz: refused by Secure Boot \((Access Denied|Security Violation|Security Policy Violation)\)' <<<"$log" &&
   ! grep -q -E 'MSHIM-RESULT-BEGIN|EFI stub' <<<"$log"; then
        it_pass "$T: kernel signed by an unknown key: shim's verification refuses mshim's LoadImage, mshim names the file"
        grep -m4 -E 'refused by Secure Boot|Verification failed|no entry|start_image' <<<"$log" | sed 's/^/  console: /' >&2
else
        it_fail "$T: kernel signed by an unknown key: shim's verification refuses mshim's LoadImage, mshim names the file"
        it_show_serial "$b"
fi
# (3) Debian's signed GRUB as an mshim `efi` entry, behind shim: shim's
# SHIM_LOCK stays in charge. GRUB's built-in prefix is /EFI/debian
# (`strings` shows it), so its grub.cfg goes there, next to it.
GRUB_OPTIONS="console=ttyS0 quiet panic=-1 mshim.test=shim-grub"
g=$(it_shim_esp grub "$k") || { it_fail "$T: set-up (esp)"; exit 1; }
mkdir -p "$g/esp/EFI/debian" && cp "$GRUB_SIGNED" "$g/esp/EFI/debian/grubx64.efi" ||
        { it_fail "$T: set-up (GRUB)"; exit 1; }
printf 'title Debian GRUB behind shim and mshim\nefi /EFI/debian/grubx64.efi\n' \
        > "$g/esp/loader/entries/mshim-test.conf"
cat > "$g/esp/EFI/debian/grub.cfg" <<CFG
set timeout=0
search --no-floppy --file --set=root /vmlinuz
echo "mshim-test: GRUB is loading the kernel"
linux /vmlinuz $GRUB_OPTIONS
initrd /initrd.img
boot
CFG
if it_boot "$g" --timeout 200 --stop 'bad shim signature|prohibited by secure boot|you need to load the kernel first|Verification failed'; then
        it_pass "$T: shim -> mshim -> Debian's signed GRUB -> Debian's signed kernel reaches the initramfs"
        log=$(tr -d '\r' < "$g/serial.log" | tr -c '\n -~' ' ')
        if [ "$(grep -c -F "mshim: SHIM_LOCK already provided (by shim); not installing mshim's" <<<"$log")" = 1 ] &&
           ! grep -q 'SHIM_LOCK Verify' <<<"$log" &&
           grep -q 'mshim-test: GRUB is loading the kernel' <<<"$log" &&
           cmp -s "$GRUB_SIGNED" "$g/esp/EFI/debian/grubx64.efi" && cmp -s "$IT_KERNEL" "$g/esp/vmlinuz"; then
                it_pass "$T: behind shim mshim installs no SHIM_LOCK of its own (console), GRUB and the kernel unmodified"
                grep -m1 -F 'SHIM_LOCK already provided' <<<"$log" | sed 's/^/  console: /' >&2
        else
                it_fail "$T: behind shim mshim installs no SHIM_LOCK of its own (console), GRUB and the kernel unmodified"
                it_show_serial "$g"
        fi
        r=$g/result
        it_check_replay "$g" "$T: GRUB: TPM PCRs equal the event-log replay"
        it_shim_grub_events "$r/eventlog.bin" "$T: GRUB" "$g/esp/EFI/BOOT/BOOTX64.EFI" \
                "$g/esp/EFI/BOOT/grubx64.efi" "$g/esp/EFI/debian/grubx64.efi" "$g/esp/vmlinuz" "$k/mok.der" ||
                IT_FAILED=1
        it_grub_events "$r/eventlog.bin" "$T: GRUB" "$GRUB_OPTIONS" \
                "/vmlinuz=$g/esp/vmlinuz" "/initrd.img=$g/esp/initrd.img" || IT_FAILED=1
else
        it_fail "$T: shim -> mshim -> Debian's signed GRUB -> Debian's signed kernel reaches the initramfs"
fi
exit "$IT_FAILED"
