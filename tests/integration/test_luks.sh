#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A LUKS2 volume that mshim's keyscript unlocks (docs/SEALING.md), proven by
# booting: the disk is a GPT disk (it_mkdisk: partition 1 the ESP,
# partition 2 a LUKS2 volume made on the host by Debian's cryptsetup, its
# first data sector a marker encrypted on the host), the initramfs
# scripts/mkinitramfs-luks.sh (Debian's cryptsetup, the host-built mshim,
# the keyscript hooks/cryptroot-unseal as installed), the guest's serial
# console driven by mok_console.py to type the passphrase when asked.
#
# Set-up on the host, against the swtpm state every boot starts from (a
# copy: it_swtpm_host_start, tpm.in): `mshim policy init`, a random key
# added to a second keyslot (cryptsetup luksAddKey; the passphrase's
# keyslot stays), `mshim seal` (signed) to ESP/loader/mshim/root.sealed.
#
# Cases, boot A first, then the others two at a time:
#   nosealed (A)  no sealed key on the ESP: the keyscript says why and asks
#                 for the passphrase; typed, it unlocks the volume (the
#                 marker decrypts); mshim set LoaderDevicePartUUID,
#                 volatile, to the ESP's partition GUID as the disk's GPT
#                 holds it (read back with sfdisk); the PCRs replay.
#   approved      A's PCRs approved (`mshim policy approve --current
#                 --pcrs`), the sealed key: UNLOCKED with no passphrase.
#   kernel        Debian's RT kernel and its own LUKS initramfs, approved
#                 from `mshim predict --esp` on A's log: UNLOCKED. Its
#                 options gain efi=runtime: Debian's RT kernels turn EFI
#                 runtime services (and so every EFI variable) off.
# Tampered, each with A's approval only: the keyscript falls back naming
# the PCRs that differ from it, which must be exactly those that differ
# between A's and this boot's TPM (and those the change is known to
# touch), and the typed passphrase still unlocks:
#   options       init=/bin/sh added to the entry's options (PCRs 5, 9, 12)
#   initrd        one byte of the initrd (PCR 9)
#   extend        the initramfs extends PCR 12 before the keyscript runs
#                 (PCR 12; its value checked against A's and the digest)
#   revoked       `mshim policy revoke` after the approval: refused as
#                 revoked.
# At the end the passphrase's keyslot still opens the volume (host).
set -u
. "$(dirname "$0")/lib.sh"
T=luks
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
PASS=${LUKS_PASSPHRASE:-mshim-luks-test}
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_KERNEL_RT" "$IT_CLI" "$IT_B/kernel/modules/KMODS" \
                "$IT_B/kernel-rt/modules/KMODS" /usr/sbin/cryptsetup ||
   ! command -v sfdisk >/dev/null; then
        it_fail "$T: prerequisites (cryptsetup-bin, fdisk, kmod; make; make deps)"; exit 1
fi
# ---- the host provisions the TPM, adds a key to the volume, seals it --------------
it_luks_provision "$PASS" || exit 1
tp=$IT_LUKS_TPM
pol=$IT_LUKS_POLICY

# ---- nosealed --------------------------------------------------------------------
d=$(it_luks_boot nosealed) || { it_fail "$T: set-up nosealed"; exit 1; }
it_console_script "$d/console.script" 'asking for the passphrase' "$PASS"
if it_boot "$d" --disk "$IT_DIR/luks.img" --console "$d/console.script"; then
        it_pass "$T: nosealed: boot, passphrase typed at the prompt"
        it_luks_has "$d" "nosealed: the keyscript falls back and says why" \
                "MSHIM-LUKS FALLBACK no sealed key for root on the ESP (loader/mshim/root.sealed)"
        it_luks_has "$d" "nosealed: the typed passphrase unlocks the volume" "MSHIM-LUKS UNLOCKED"
        it_luks_has "$d" "nosealed: the volume decrypts to the marker written on the host" "MSHIM-LUKS MARKER $IT_LUKS_MARKER"
        # The GPT as sfdisk reads it from the disk, not the constant it was given.
        want=$(sfdisk --part-uuid "$d/disk.img" 1)
        it_luks_has "$d" "nosealed: LoaderDevicePartUUID is the ESP's partition GUID ($want), upper case, volatile BS|RT" \
                "MSHIM-LUKS PARTUUID $want ATTRS 06000000"
        it_check_replay "$d" "$T: nosealed"
else
        it_fail "$T: nosealed: boot, passphrase typed at the prompt"; exit 1
fi
a=$d
it_pcrs_file "$a" > "$a/pcrs.txt"

# ---- approvals: A's state; the RT kernel's, predicted --------------------------
it_swtpm_host_start "$tp" || { it_fail "$T: set-up (host TPM)"; exit 1; }
cur=$("$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr" --current --pcrs "$a/pcrs.txt" \
        --entry-id mshim-test --label "boot A" 2>"$IT_DIR/approve.err")
it_step $? "approve A's PCRs (--current --pcrs)" "$IT_DIR/approve.err"

k=$(it_luks_boot kernel) || { it_fail "$T: set-up kernel"; exit 1; }
it_initrd_luks "$IT_B/kernel-rt" "$IT_B/it/initrd-luks-rt.img" &&
        cp "$IT_KERNEL_RT" "$k/esp/vmlinuz" && cp "$IT_B/it/initrd-luks-rt.img" "$k/esp/initrd.img" &&
        sed -i 's|^options .*|& efi=runtime|' "$k/esp/loader/entries/mshim-test.conf" ||
        { it_fail "$T: set-up kernel (RT kernel and its initramfs)"; exit 1; }
"$IT_CLI" predict --log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" --esp "$k/esp" --json \
        > "$k/predict.json" 2> "$k/predict.err"
it_step $? "kernel: mshim predict --esp on A's log" "$k/predict.err"
new=$("$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr-rt" --predicted "$k/predict.json" \
        --entry-id mshim-test --label "RT kernel" 2>"$k/approve.err")
it_step $? "kernel: approve the prediction (--predicted)" "$k/approve.err"
it_swtpm_host_stop "$tp"
it_luks_sealed_esp "$k" "$cur" "$new" || { it_fail "$T: set-up kernel"; exit 1; }

ok=$(it_luks_boot approved) && it_luks_sealed_esp "$ok" "$cur" || { it_fail "$T: set-up approved"; exit 1; }

o=$(it_luks_boot options) && it_luks_sealed_esp "$o" "$cur" &&
        sed -i 's|^options .*|& init=/bin/sh|' "$o/esp/loader/entries/mshim-test.conf" ||
        { it_fail "$T: set-up options"; exit 1; }
i=$(it_luks_boot initrd) && it_luks_sealed_esp "$i" "$cur" &&
        it_oracle flip "$i/esp/initrd.img" "mshim test initramfs" --pos 0 || { it_fail "$T: set-up initrd"; exit 1; }
x=$(it_luks_boot extend) && it_luks_sealed_esp "$x" "$cur" && mkdir -p "$x/esp/mshim-test" &&
        : > "$x/esp/mshim-test/extend-pcr12" || { it_fail "$T: set-up extend"; exit 1; }
# revoked: the counter moved past the approval's epoch, in this boot's TPM.
r=$(it_luks_boot revoked) && it_luks_sealed_esp "$r" "$cur" || { it_fail "$T: set-up revoked"; exit 1; }
rm -rf "$IT_DIR/tpm-rev" && mkdir -p "$IT_DIR/tpm-rev" && cp -a "$tp/state" "$IT_DIR/tpm-rev/state" &&
        it_swtpm_host_start "$IT_DIR/tpm-rev" &&
        "$IT_CLI" policy revoke --state-dir "$pol" --esp "$IT_DIR/appr-revoked" > "$r/revoke.log" 2>&1
it_step $? "revoked: mshim policy revoke" "$r/revoke.log"
it_swtpm_host_stop "$IT_DIR/tpm-rev"
rm -rf "$r/tpm.in" && cp -a "$IT_DIR/tpm-rev/state" "$r/tpm.in"
for d in "$o" "$i" "$x" "$r"; do
        it_console_script "$d/console.script" 'asking for the passphrase' "$PASS"
done

IT_BOOT_ARGS=(--disk "$IT_DIR/luks.img")
IT_JOBS=${IT_JOBS:-2} it_boot_all "$ok" "$k" "$o" "$i" "$x" "$r"
unset IT_BOOT_ARGS

it_luks_booted "$ok" && it_luks_unsealed "$ok"
it_luks_booted "$k" && it_luks_unsealed "$k" && it_predict_check "$T: kernel" "$a" "$k" "$k/predict.json"
it_luks_booted "$o" && it_luks_fallback "$a" "$o" 5,9,12 && it_luks_has "$o" "options: init=/bin/sh is on the command line" \
        "CMDLINE $IT_OPTIONS init=/bin/sh"
it_luks_booted "$i" && it_luks_fallback "$a" "$i" 9
if it_luks_booted "$x"; then
        it_luks_fallback "$a" "$x" 12
        it_luks_has "$x" "extend: the initramfs's TPM2_PCR_Extend succeeded" "MSHIM-LUKS EXTENDED PCR12 80020000001300000000"
        # PCR 12 = A's extended once more with SHA-256 of the text.
        if python3 - "$IT_REPO/tests/integration" "$a/result" "$x/result" <<'PY'
import hashlib, sys
sys.path.insert(0, sys.argv[1])
import oracle
ra, rx = oracle.load_result(sys.argv[2]), oracle.load_result(sys.argv[3])
d = hashlib.sha256(b"mshim test: the OS extends PCR 12").digest()
sys.exit(0 if oracle.tpm_pcr(rx, "sha256", 12) == hashlib.sha256(oracle.tpm_pcr(ra, "sha256", 12) + d).digest() else 1)
PY
        then it_pass "$T: extend: PCR 12 is A's extended with the test digest"
        else it_fail "$T: extend: PCR 12 is A's extended with the test digest"; fi
fi
if it_luks_booted "$r"; then
        it_luks_has "$r" "revoked: falls back, saying the approval is revoked" \
                "MSHIM-LUKS FALLBACK unseal refused: the boot state is approved only by revoked approvals (older than the epoch counter: 'mshim policy revoke' ended them)"
        it_luks_has "$r" "revoked: the typed passphrase still unlocks" "MSHIM-LUKS UNLOCKED"
fi

# The passphrase's keyslot is still there and still opens the volume.
if cryptsetup open --test-passphrase --key-file "$IT_DIR/pass" "$IT_DIR/luks.img" 2>/dev/null &&
   cryptsetup open --test-passphrase --key-file "$IT_DIR/luks.key" "$IT_DIR/luks.img" 2>/dev/null; then
        it_pass "$T: host: the passphrase and the sealed key both still open the volume"
else
        it_fail "$T: host: the passphrase and the sealed key both still open the volume"
fi
exit "$IT_FAILED"
