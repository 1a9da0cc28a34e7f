#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SHIM_LOCK under Secure Boot (issue 5): firmware -> mshim -> Debian's
# signed GRUB -> kernel, with OVMF's snakeoil key store (db = the snakeoil
# certificate) and everything re-signed with the snakeoil key.
#  (1) kernel signed with the db key: GRUB verifies it through mshim's
#      SHIM_LOCK Verify and boots it; the PCRs replay from the log; PCR 4
#      holds mshim, GRUB and the kernel exactly once each; GRUB's PCR 8/9
#      events are there.
#  (2) kernel with no signature: GRUB refuses it through Verify ("bad shim
#      signature" on the console) and nothing boots it.
#  (3) mshim's own linux entry with an unsigned kernel: the firmware refuses
#      it, mshim names the file and the reason, and boots the next entry.
set -u
. "$(dirname "$0")/lib.sh"
T=shimlock
it_init "$T"
GRUB_SIGNED=${GRUB_SIGNED:-/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$GRUB_SIGNED" /usr/share/OVMF/OVMF_CODE_4M.secboot.fd \
                /usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd /usr/share/ovmf/PkKek-1-snakeoil.key; then
        it_fail "$T: prerequisites (grub-efi-amd64-signed, ovmf, sbsigntool)"; exit 1
fi
it_secure_boot_on || { it_fail "$T: set-up (qemu wrapper)"; exit 1; }
GRUB_OPTIONS="console=ttyS0 quiet panic=-1 mshim.test=shimlock"

# An ESP with signed mshim as BOOTX64.EFI, no entries (so mshim chainloads
# grubx64.efi next to it), Debian's GRUB re-signed, and its grub.cfg where
# its built-in prefix (/EFI/debian) looks for it.
sb_esp() {
        local d
        d=$(it_newboot "$1") || return 1
        rm -rf "$d/esp/loader/entries"
        printf '# mshim shimlock test\ntimeout 0\n' > "$d/esp/loader/loader.conf"
        it_snakeoil_sign "$IT_EFI" "$d/esp/EFI/BOOT/BOOTX64.EFI" &&
                it_snakeoil_sign "$GRUB_SIGNED" "$d/esp/EFI/BOOT/grubx64.efi" || return 1
        mkdir -p "$d/esp/EFI/debian"
        cat > "$d/esp/EFI/debian/grub.cfg" <<CFG
set timeout=0
search --no-floppy --file --set=root /vmlinuz
echo "mshim-test: GRUB is loading the kernel"
linux /vmlinuz $GRUB_OPTIONS
initrd /initrd.img
boot
CFG
        echo "$d"
}

good=$(sb_esp signed) || { it_fail "$T: set-up"; exit 1; }
it_snakeoil_sign "$IT_KERNEL" "$good/esp/vmlinuz" || { it_fail "$T: signing the kernel"; exit 1; }
bad=$(sb_esp unsigned) || { it_fail "$T: set-up"; exit 1; }
IT_SIGN_NONE=1 it_snakeoil_sign "$IT_KERNEL" "$bad/esp/vmlinuz" || { it_fail "$T: unsigning the kernel"; exit 1; }

# (1) signed kernel.
if it_boot "$good"; then
        it_pass "$T: signed kernel: firmware -> mshim -> GRUB -> kernel boots under Secure Boot"
        r=$good/result
        args=(--result "$r" --name "$T: signed: TPM PCRs equal the event-log replay")
        "$IT_CLI" log --json "$r/eventlog.bin" > "$good/mshim-log.json" 2>/dev/null &&
                args+=(--mshim-json "$good/mshim-log.json")
        it_oracle check-replay "${args[@]}" || IT_FAILED=1
        it_oracle check-pcr4 --result "$r" --name "$T: signed: mshim, GRUB and the kernel once each" \
                "$good/esp/EFI/BOOT/BOOTX64.EFI" "$good/esp/EFI/BOOT/grubx64.efi" "$good/esp/vmlinuz" || IT_FAILED=1
        it_grub_events "$r/eventlog.bin" "$T: signed" "$GRUB_OPTIONS" \
                "/vmlinuz=$good/esp/vmlinuz" "/initrd.img=$good/esp/initrd.img" || IT_FAILED=1
else
        it_fail "$T: signed kernel: firmware -> mshim -> GRUB -> kernel boots under Secure Boot"
fi

# (3) mshim's own LoadImage under Secure Boot: a linux entry whose kernel
# has no signature is refused by the firmware; mshim names the file and
# the reason and boots the next entry (a signed kernel).
own=$(it_newboot own) || { it_fail "$T: set-up"; exit 1; }
it_snakeoil_sign "$IT_EFI" "$own/esp/EFI/BOOT/BOOTX64.EFI" &&
        it_snakeoil_sign "$IT_KERNEL" "$own/esp/vmlinuz" &&
        IT_SIGN_NONE=1 it_snakeoil_sign "$IT_KERNEL" "$own/esp/vmlinuz-unsigned" || { it_fail "$T: signing"; exit 1; }
printf 'sort-key b\n' >> "$own/esp/loader/entries/mshim-test.conf"
printf 'title unsigned kernel\nsort-key a\nlinux /vmlinuz-unsigned\ninitrd /initrd.img\noptions %s\n' "$IT_OPTIONS" \
        > "$own/esp/loader/entries/a-unsigned.conf"
printf '# mshim shimlock test\ntimeout 0\n' > "$own/esp/loader/loader.conf"
if it_boot "$own" && tr -d '\r' < "$own/serial.log" |
                grep -q -E 'mshim: \\vmlinuz-unsigned: refused by Secure Boot \((Access Denied|Security Violation)\): not signed by a key in db, or revoked in dbx'; then
        it_pass "$T: own entry: an unsigned kernel is refused with a message naming it, the next entry boots"
        tr -d '\r' < "$own/serial.log" | grep -m1 'vmlinuz-unsigned:' | sed 's/^/  console: /' >&2
else
        it_fail "$T: own entry: an unsigned kernel is refused with a message naming it, the next entry boots"
        it_show_serial "$own"
fi

# (2) unsigned kernel: GRUB stops at its error and waits; stop there.
it_mkesp "$bad" || { it_fail "$T: set-up (esp)"; exit 1; }
it_log "booting unsigned (kernel without a signature) ..."
it_qemu "$bad" --timeout 150 --stop 'bad shim signature|prohibited by secure boot|MSHIM-RESULT-BEGIN'
it_log "boot unsigned stopped after $(cat "$bad/seconds") s"
log=$(tr -d '\r' < "$bad/serial.log")
if grep -q -E 'bad shim signature' <<<"$log" && grep -q 'SHIM_LOCK Verify' <<<"$log" &&
                ! grep -q 'MSHIM-RESULT-BEGIN' <<<"$log"; then
        it_pass "$T: unsigned kernel: GRUB refuses it through mshim's Verify, nothing boots it"
        grep -m2 -E 'SHIM_LOCK Verify|bad shim signature' <<<"$log" | sed 's/^/  console: /' >&2
else
        it_fail "$T: unsigned kernel: GRUB refuses it through mshim's Verify, nothing boots it"
        it_show_serial "$bad"
fi
exit $IT_FAILED
