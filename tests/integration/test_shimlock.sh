#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SHIM_LOCK under Secure Boot (issue 5): firmware -> mshim -> Debian's
# signed GRUB -> kernel, with the project's own keys (it_sb_keys: PK, KEK
# and db made with OpenSSL, enrolled by `mshim vars enroll --secure-boot`).
# mshim is signed with the test db key, Debian's signed GRUB additionally
# signed with it (`mshim sign` appends), and no entries are configured, so
# mshim chainloads grubx64.efi next to it.
#  (1) kernel signed with the test db key: GRUB verifies it through mshim's
#      SHIM_LOCK Verify and boots it; the PCRs replay from the log; PCR 4
#      holds mshim, GRUB and the kernel exactly once each; GRUB's PCR 8/9
#      events are there; PCR 7 holds the firmware's configuration and the
#      one db authority, nothing else.
#  (2) Debian's kernel as shipped (signed by Debian, not by a db key): GRUB
#      refuses it through Verify ("bad shim signature" on the console) and
#      nothing boots it.
#  (3) SBAT (issue 9, point 7): (1) and (2) boot with an SbatLevel policy
#      (written by `mshim vars sbat-level`, NV+BS) at GRUB's own "grub"
#      generation, read from GRUB's .sbat here (oracle.pe_section), so GRUB
#      passes; a third boot has the policy one generation ahead: mshim
#      refuses GRUB before loading it, names the component and both
#      generations, and GRUB never runs.
# (mshim's own linux entries under Secure Boot: test_secureboot.sh.)
set -u
. "$(dirname "$0")/lib.sh"
T=shimlock
it_init "$T"
GRUB_SIGNED=${GRUB_SIGNED:-$IT_EFIROOT/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$GRUB_SIGNED" "$IT_OVMF_CODE_SB" \
                "$IT_OVMF_VARS_BLANK" ||
   ! command -v sbattach >/dev/null || ! command -v sbverify >/dev/null; then
        it_fail "$T: prerequisites (grub-efi-amd64-signed, ovmf, sbsigntool)"; exit 1
fi
k=$IT_DIR/keys
it_sb_keys "$k" || { it_fail "$T: set-up (keys, mshim vars enroll)"; exit 1; }
# GRUB's "grub" generation, from its .sbat section, without mshim.
gen=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import oracle
for l in oracle.pe_section(sys.argv[2], b".sbat").decode().splitlines():
    f = l.split(",")
    if f[0] == "grub": print(int(f[1]))' "$IT_REPO/tests/integration" "$GRUB_SIGNED")
[ -n "$gen" ] || { it_fail "$T: set-up (GRUB's .sbat has no grub record)"; exit 1; }
printf 'sbat,1,2024010900\ngrub,%d\n' "$gen" > "$k/sbat-ok.txt"
printf 'sbat,1,2024010900\ngrub,%d\n' "$((gen + 1))" > "$k/sbat-revoked.txt"
for p in ok revoked; do
        "$IT_CLI" vars sbat-level "$k/sb.fd" --policy "$k/sbat-$p.txt" -o "$k/sb-$p.fd" >"$k/sbat-$p.log" 2>&1 ||
                { cat "$k/sbat-$p.log" >&2; it_fail "$T: set-up (mshim vars sbat-level)"; exit 1; }
done
it_secure_boot_on "$k/sb-ok.fd" || { it_fail "$T: set-up (Secure Boot)"; exit 1; }
GRUB_OPTIONS="console=ttyS0 quiet panic=-1 mshim.test=shimlock"

it_sb_sign "$IT_EFI" "$k/mshim.efi" "$k" db &&
        it_sb_sign --keep "$GRUB_SIGNED" "$k/grubx64.efi" "$k" db &&
        it_sb_sign "$IT_KERNEL" "$k/vmlinuz-db" "$k" db || { it_fail "$T: set-up (mshim sign)"; exit 1; }
# GRUB keeps Debian's signature and gets the test db key's after it.
if [ "$(sbverify --list "$k/grubx64.efi" 2>/dev/null | grep -c '^signature [0-9]')" = 2 ] &&
   sbverify --cert "$k/db.pem" "$k/grubx64.efi" >/dev/null 2>&1 &&
   ! sbverify --cert "$k/db.pem" "$IT_KERNEL" >/dev/null 2>&1; then
        it_pass "$T: Debian's GRUB carries its own and the test db signature; Debian's kernel is not signed by the db key"
else
        it_fail "$T: Debian's GRUB carries its own and the test db signature; Debian's kernel is not signed by the db key"
fi

# An ESP with signed mshim as BOOTX64.EFI, no entries (so mshim chainloads
# grubx64.efi next to it), the re-signed GRUB, and its grub.cfg where its
# built-in prefix (/EFI/debian) looks for it.
sb_esp() {
        local d
        d=$(it_newboot "$1" "$k/mshim.efi") || return 1
        rm -rf "$d/esp/loader/entries"
        printf '# mshim shimlock test\ntimeout 0\n' > "$d/esp/loader/loader.conf"
        cp "$k/grubx64.efi" "$d/esp/EFI/BOOT/grubx64.efi" || return 1
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
cp "$k/vmlinuz-db" "$good/esp/vmlinuz"
bad=$(sb_esp debian-signed) || { it_fail "$T: set-up"; exit 1; }
cp "$IT_KERNEL" "$bad/esp/vmlinuz"      # Debian's signature only
it_mkesp "$bad" || { it_fail "$T: set-up (esp)"; exit 1; }

# (3) runs alongside: mshim refuses GRUB and returns to the firmware.
revoked=$(sb_esp sbat-revoked) || { it_fail "$T: set-up"; exit 1; }
cp "$k/vmlinuz-db" "$revoked/esp/vmlinuz"
it_mkesp "$revoked" || { it_fail "$T: set-up (esp)"; exit 1; }
it_log "booting sbat-revoked (SbatLevel grub,$((gen + 1))) ..."
( OVMF_VARS=$k/sb-revoked.fd it_qemu "$revoked" --timeout 150 \
        --stop 'returning to the firmware|GRUB is loading|MSHIM-RESULT-BEGIN|EFI stub' ) &
revpid=$!

# (2) runs alongside (1): GRUB stops at its error and waits; stop there.
it_log "booting debian-signed (kernel not signed by a db key) ..."
( it_qemu "$bad" --timeout 150 --stop 'bad shim signature|prohibited by secure boot|MSHIM-RESULT-BEGIN|EFI stub' ) &
badpid=$!

# (1) kernel signed with the test db key.
if it_boot "$good"; then
        it_pass "$T: db-signed kernel: firmware -> mshim -> GRUB -> kernel boots under Secure Boot (own keys)"
        r=$good/result
        it_check_replay "$good" "$T: signed: TPM PCRs equal the event-log replay"
        it_oracle check-pcr4 --result "$r" --name "$T: signed: mshim, GRUB and the kernel once each" \
                "$good/esp/EFI/BOOT/BOOTX64.EFI" "$good/esp/EFI/BOOT/grubx64.efi" "$good/esp/vmlinuz" || IT_FAILED=1
        it_grub_events "$r/eventlog.bin" "$T: signed" "$GRUB_OPTIONS" \
                "/vmlinuz=$good/esp/vmlinuz" "/initrd.img=$good/esp/initrd.img" || IT_FAILED=1
        it_sb_pcr7 "$r" "$k/sb.fd" "$k/db.der" \
                "$T: signed: PCR 7 = the firmware's configuration, separator, one authority = the test db entry; replays" ||
                IT_FAILED=1
else
        it_fail "$T: db-signed kernel: firmware -> mshim -> GRUB -> kernel boots under Secure Boot (own keys)"
fi

wait "$badpid"
it_log "boot debian-signed stopped after $(cat "$bad/seconds") s"
log=$(tr -d '\r' < "$bad/serial.log")
if grep -q -E 'bad shim signature' <<<"$log" && grep -q 'SHIM_LOCK Verify' <<<"$log" &&
                ! grep -q -E 'MSHIM-RESULT-BEGIN|EFI stub' <<<"$log"; then
        it_pass "$T: kernel not signed by a db key: GRUB refuses it through mshim's Verify, nothing boots it"
        grep -m2 -E 'SHIM_LOCK Verify|bad shim signature' <<<"$log" | sed 's/^/  console: /' >&2
else
        it_fail "$T: kernel not signed by a db key: GRUB refuses it through mshim's Verify, nothing boots it"
        it_show_serial "$bad"
fi
wait "$revpid"
it_log "boot sbat-revoked stopped after $(cat "$revoked/seconds") s"
log=$(tr -d '\r' < "$revoked/serial.log")
want="grubx64.efi: revoked by SBAT (SbatLevel): component grub is generation $gen, the policy requires $((gen + 1)) or later"
if grep -q -F "$want" <<<"$log" && ! grep -q -E 'GRUB is loading|MSHIM-RESULT-BEGIN|EFI stub' <<<"$log"; then
        it_pass "$T: SbatLevel grub,$((gen + 1)): mshim refuses GRUB (grub,$gen), names component and generations; GRUB never runs"
        grep -m1 -F 'revoked by SBAT' <<<"$log" | sed 's/^/  console: /' >&2
else
        it_fail "$T: SbatLevel grub,$((gen + 1)): mshim refuses GRUB (grub,$gen), names component and generations; GRUB never runs"
        it_show_serial "$revoked"
fi
if grep -q 'SHIM_LOCK self-test: the firmware refused an unsigned image' "$good/serial.log"; then
        it_pass "$T: SbatLevel grub,$gen: GRUB passes SBAT (boot (1) above); mshim's self-test passed"
else
        it_fail "$T: SbatLevel grub,$gen: GRUB passes SBAT (boot (1) above); mshim's self-test passed"
fi
exit "$IT_FAILED"
