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
# Cases (12 boots), boot A first, then the others two at a time:
#   nosealed (A)  no sealed key on the ESP: the keyscript says why and asks
#                 for the passphrase; typed, it unlocks the volume (the
#                 marker decrypts); mshim set LoaderDevicePartUUID,
#                 volatile, to the ESP's partition GUID as the disk's GPT
#                 holds it (read back with sfdisk); the PCRs replay.
#   approved      A's PCRs approved (`mshim policy approve --current
#                 --pcrs`), the disk enrolled with `mshim luks enroll` (the
#                 sealed key in the volume's mshim-tpm2 token) and no sealed
#                 file on the ESP: the keyscript finds the token by the
#                 device; UNLOCKED with no passphrase.
# Legitimate changes, approved only from `mshim predict` on A's log and
# PCRs + `mshim policy approve --predicted` (never a new seal): UNLOCKED
# with no passphrase, and every PCR of the boot is the predicted one:
#   upgrade       all of these at once, as an upgrade brings them, in one
#                 boot approved from one prediction (a wrong prediction of
#                 any of them is a PCR that differs: test_predict.sh
#                 predicts each alone): Debian's RT kernel with its own
#                 LUKS initramfs (its options gain efi=runtime: Debian's RT
#                 kernels turn EFI runtime services, and so every EFI
#                 variable, off); that initrd with a second cpio archive
#                 (one more file); mshim.test=1 in place of mshim.test=0
#                 on the command line; a new entry file (mshim-new.conf,
#                 another title) and a loader.conf whose default names it;
#                 another mshimx64.efi (the same loader with another
#                 built-in policy: `mshim boot-policy --set
#                 tpm-required=yes`)
#   literal       no approvals: the key sealed `--literal` to A's PCRs
#                 (--pcrs) and the prediction of A's ESP with
#                 mshim.test=1 (predicted, not booted on its own); that ESP
#   pin           A's state, the key sealed with a PIN (--pin-file): the
#                 keyscript asks for it; a wrong PIN is typed first (mshim
#                 says so, with the tries the TPM still allows, read from
#                 the TPM with tpm2_getcap), then the right one
# Tampered, each with A's approval only: the keyscript falls back naming
# the PCRs that differ from it, which must be exactly those that differ
# between A's and this boot's TPM (and those the change is known to
# touch), and the typed passphrase still unlocks:
#   options       init=/bin/sh added to the entry's options (PCRs 5, 9, 12)
#   initrd        a cpio archive appended to the initrd, adding a file
#                 (PCR 9): the evil maid's way into a compressed
#                 initramfs; the kernel unpacks it after the first, and
#                 the guest shows the file
#   extend        the initramfs extends PCR 12 before the keyscript runs
#                 (PCR 12; its value checked against A's and the digest)
#   revoked       `mshim policy revoke` after the approval: refused as
#                 revoked.
#   unapproved    the RT kernel set up as in "kernel" with no approval for
#                 it (PCRs 4, 5, 9, 12)
#   otherloader   another loader in mshim's place: mshimx64.efi with
#                 another built-in policy (tpm-failure=boot), never
#                 approved (PCR 4)
# The decoy root (docs/SEALING.md "The unseal fence"), with A's approval:
#   decoy         the root partition holds the attacker's LUKS2 volume
#                 with the real root's UUID and the attacker's passphrase
#                 (the GPT is the same: PCR 5 too), the real volume on a
#                 second disk; the crypttab UUID finds the decoy first. The
#                 keyscript unseals (the PCRs are approved), cryptsetup
#                 refuses the key, the keyscript is called again and falls
#                 back, the test types the attacker's passphrase, the decoy
#                 opens and its "init" (a script in its first sectors) runs
#                 `mshim unseal` with the real sealed file: refused, naming
#                 the fence (PCR 15); PCR 15 records the decoy (its volume
#                 key's HMAC, not the real one's).
# PCR 15 (the keyscript's fence and volume events, not in the firmware's
# log: IT_OS_PCRS leaves it out of the replay and prediction checks) is
# checked in A, approved and decoy against the events the guest logged.
# At the end the passphrase's keyslot still opens the volume (host).
set -u
. "$(dirname "$0")/lib.sh"
T=luks
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
PASS=${LUKS_PASSPHRASE:-mshim-luks-test}
it_init "$T"
export IT_OS_PCRS=15
DECOY_PASS=${LUKS_DECOY_PASSPHRASE:-the-attackers-own}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_KERNEL_RT" "$IT_CLI" "$IT_KDIR/modules/KMODS" \
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
# approved's volume: luks.img enrolled with `mshim luks enroll` (a key slot
# and token of its own; the same volume key, so the same PCR 15 events).
# Its key slot area holds two slots: luks.key's (slot 1) makes room.
cp "$IT_DIR/luks.img" "$IT_DIR/luks-token.img" &&
        cryptsetup luksKillSlot --batch-mode "$IT_DIR/luks-token.img" 1 &&
        "$IT_CLI" luks enroll --state-dir "$pol" --unlock-key-file "$IT_DIR/pass" --no-crypttab "$IT_DIR/luks-token.img" \
                >"$IT_DIR/enroll.log" 2>&1
it_step $? "approved: mshim luks enroll (the sealed key in the volume's mshim-tpm2 token)" "$IT_DIR/enroll.log"

# approve_predicted DIR ENTRY [predict options]: `mshim predict --esp` of
# DIR's ESP on A's log and PCRs (DIR/predict.json), then `mshim policy
# approve --predicted` of it for entry ENTRY; the approval's path in $new.
approve_predicted() {
        local d=$1 n entry=$2
        n=$(basename "$1")
        shift 2
        "$IT_CLI" predict --log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" --esp "$d/esp" --json "$@" \
                > "$d/predict.json" 2> "$d/predict.err"
        it_step $? "$n: mshim predict --esp on A's log" "$d/predict.err"
        new=$("$IT_CLI" policy approve --state-dir "$pol" --esp "$IT_DIR/appr-$n" --predicted "$d/predict.json" \
                --entry-id "$entry" --label "$n" 2>"$d/approve.err")
        it_step $? "$n: approve the prediction (--predicted)" "$d/approve.err"
}

# rt_esp DIR: DIR's ESP boots Debian's RT kernel with its own LUKS
# initramfs and efi=runtime (its EFI variables on).
rt_esp() {
        it_initrd_luks "$IT_B/kernel-rt" "$IT_B/it/initrd-luks-rt.img" &&
                cp "$IT_KERNEL_RT" "$1/esp/vmlinuz" && cp "$IT_B/it/initrd-luks-rt.img" "$1/esp/initrd.img" &&
                sed -i 's|^options .*|& efi=runtime|' "$1/esp/loader/entries/mshim-test.conf"
}

# ---- legitimate changes, approved from their prediction only ----------------------
# upgrade: the RT kernel and its initramfs, one more cpio archive in it, new
# options, a new entry and loader.conf, a new loader; one prediction.
up=$(it_luks_boot upgrade) && rt_esp "$up" && mkdir -p "$up/extra/etc" &&
        echo "mshim test: one more file" > "$up/extra/etc/mshim-extra-upgrade" &&
        (cd "$up/extra" && echo etc/mshim-extra-upgrade | cpio --quiet -o -H newc -R 0:0) >> "$up/esp/initrd.img" &&
        e=$up/esp/loader/entries &&
        sed -e 's|^title .*|title mshim integration test, new entry|' -e 's|mshim\.test=0|mshim.test=1|' \
                "$e/mshim-test.conf" > "$e/mshim-new.conf" && rm "$e/mshim-test.conf" &&
        printf '# mshim integration test 1\ntimeout 0\ndefault mshim-new\n' > "$up/esp/loader/loader.conf" &&
        rm "$up/esp/EFI/BOOT/BOOTX64.EFI" &&
        "$IT_CLI" boot-policy --set tpm-required=yes -o "$up/esp/EFI/BOOT/BOOTX64.EFI" "$IT_EFI" > "$up/policy.log" 2>&1 &&
        ! cmp -s "$IT_EFI" "$up/esp/EFI/BOOT/BOOTX64.EFI" || { it_fail "$T: set-up upgrade"; exit 1; }
approve_predicted "$up" mshim-new --loader "$up/esp/EFI/BOOT/BOOTX64.EFI"
it_luks_sealed_esp "$up" "$cur" "$new" || { it_fail "$T: set-up upgrade"; exit 1; }

# literal: sealed to A's PCRs and the predicted state of A's ESP with
# mshim.test=1, no approvals; that ESP boots.
lit=$(it_luks_boot literal) && sed -i 's|mshim\.test=0|mshim.test=1|' "$lit/esp/loader/entries/mshim-test.conf" ||
        { it_fail "$T: set-up literal"; exit 1; }
"$IT_CLI" predict --log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" --esp "$lit/esp" --json \
        > "$lit/predict.json" 2> "$lit/predict.err"
it_step $? "literal: mshim predict --esp on A's log" "$lit/predict.err"
"$IT_CLI" seal --literal --state-dir "$pol" --pcrs "$a/pcrs.txt" -o "$IT_DIR/root-literal.sealed" "$lit/predict.json" \
        < "$IT_DIR/luks.key" > "$lit/seal.log" 2>&1
it_step $? "literal: mshim seal --literal --pcrs (A) + the prediction" "$lit/seal.log"
SEALED=$IT_DIR/root-literal.sealed it_luks_sealed_esp "$lit" || { it_fail "$T: set-up literal"; exit 1; }

# pin: the signed seal with a PIN; the TPM's own count of wrong PINs left.
PIN=${LUKS_PIN:-4711-mshim}
pn=$(it_luks_boot pin) && printf '%s\n' "$PIN" > "$IT_DIR/pin.txt" &&
        "$IT_CLI" seal --state-dir "$pol" --pin-file "$IT_DIR/pin.txt" -o "$IT_DIR/root-pin.sealed" \
                < "$IT_DIR/luks.key" > "$pn/seal.log" 2>&1
it_step $? "pin: mshim seal --pin-file" "$pn/seal.log"
SEALED=$IT_DIR/root-pin.sealed it_luks_sealed_esp "$pn" "$cur" || { it_fail "$T: set-up pin"; exit 1; }
tpm2_getcap properties-variable > "$pn/getcap.yaml" 2>&1 || { it_fail "$T: set-up pin (tpm2_getcap)"; cat "$pn/getcap.yaml" >&2; }
pin_left=$(python3 - "$pn/getcap.yaml" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def prop(n):
    return int(re.search(n + r":\s*(?:raw:\s*)?(0x[0-9a-fA-F]+|[0-9]+)", t).group(1), 0)
print(prop("TPM2_PT_MAX_AUTH_FAIL") - prop("TPM2_PT_LOCKOUT_COUNTER") - 1)
PY
)
it_console_script "$pn/console.script" 'Please enter the TPM PIN' "wrong-$PIN" 'mshim: wrong PIN' "$PIN"
it_swtpm_host_stop "$tp"

# ---- tampered: no approval for the change -----------------------------------------
uk=$(it_luks_boot unapproved) && rt_esp "$uk" && it_luks_sealed_esp "$uk" "$cur" || { it_fail "$T: set-up unapproved"; exit 1; }
ol=$(it_luks_boot otherloader) && rm "$ol/esp/EFI/BOOT/BOOTX64.EFI" &&
        "$IT_CLI" boot-policy --set tpm-failure=boot -o "$ol/esp/EFI/BOOT/BOOTX64.EFI" "$IT_EFI" > "$ol/policy.log" 2>&1 &&
        ! cmp -s "$IT_EFI" "$ol/esp/EFI/BOOT/BOOTX64.EFI" && it_luks_sealed_esp "$ol" "$cur" ||
        { it_fail "$T: set-up otherloader"; exit 1; }

ok=$(it_luks_boot approved) && it_luks_sealed_esp "$ok" "$cur" && rm "$ok/esp/loader/mshim/root.sealed" &&
        cp "$IT_DIR/luks-token.img" "$ok/luks.img" || { it_fail "$T: set-up approved"; exit 1; }

# decoy: the attacker's volume in the root partition (same UUID), the real
# one on a second disk; its "init" tries the real sealed key.
dc=$(it_luks_boot decoy) && it_luks_sealed_esp "$dc" "$cur" && cp "$IT_DIR/luks.img" "$dc/extra-disk.img" &&
        cat > "$dc/decoy-init" <<'INIT' && it_mkluks "$dc" "$DECOY_PASS" "$dc/decoy-init" ||
#!/bin/sh
# test_luks.sh's decoy: the attacker's init, root in a boot whose PCRs are
# approved, after the initramfs opened this volume.
echo "MSHIM-DECOY INIT"
mkdir -p /tmp/desp
mount -t vfat -o ro "$(blkid -l -o device -t TYPE=vfat)" /tmp/desp
mshim unseal --esp /tmp/desp /tmp/desp/loader/mshim/root.sealed >/tmp/dk 2>/tmp/de
echo "MSHIM-DECOY UNSEAL rc=$? bytes=$(wc -c </tmp/dk)"
cat /tmp/de
INIT
        { it_fail "$T: set-up decoy"; exit 1; }
it_console_script "$dc/console.script" 'asking for the passphrase' "$DECOY_PASS"

o=$(it_luks_boot options) && it_luks_sealed_esp "$o" "$cur" &&
        sed -i 's|^options .*|& init=/bin/sh|' "$o/esp/loader/entries/mshim-test.conf" ||
        { it_fail "$T: set-up options"; exit 1; }
i=$(it_luks_boot initrd) && it_luks_sealed_esp "$i" "$cur" && mkdir -p "$i/evil/etc" &&
        echo "an evil maid's file" > "$i/evil/etc/mshim-extra-evil" &&
        (cd "$i/evil" && echo etc/mshim-extra-evil | cpio --quiet -o -H newc -R 0:0) >> "$i/esp/initrd.img" ||
        { it_fail "$T: set-up initrd"; exit 1; }
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
for d in "$o" "$i" "$x" "$r" "$uk" "$ol"; do
        it_console_script "$d/console.script" 'asking for the passphrase' "$PASS"
done

IT_BOOT_ARGS=(--disk "$IT_DIR/luks.img")
IT_JOBS=${IT_JOBS:-2} it_boot_all "$ok" "$dc" "$up" "$o" "$i" "$x" "$r" "$lit" "$pn" "$uk" "$ol"
unset IT_BOOT_ARGS

# pcr15 DIR VK: DIR's console logged exactly the fence and then the
# volume event of root with IT_LUKS_UUID and the volume key VK (Python's
# hmac), and DIR's PCR 15 in every bank is their replay (TPM2_PCR_Event:
# PCR = H(PCR || H(event)), hashlib).
pcr15() {
        if python3 - "$IT_REPO/tests/integration" "$1/result" "$1/serial.log" "$2" "$IT_LUKS_UUID" <<'PY'
import hashlib, hmac, sys
sys.path.insert(0, sys.argv[1])
import oracle
res = oracle.load_result(sys.argv[2])
log = [l.rstrip("\r\n")[len("MSHIM-LUKS PCR15 "):] for l in open(sys.argv[3], errors="replace")
       if l.startswith("MSHIM-LUKS PCR15 ")]
m = b"mshim-volume:root:" + sys.argv[5].encode()
want = ["mshim-unseal-fence", (m + b":").decode() + hmac.new(open(sys.argv[4], "rb").read(), m, hashlib.sha256).hexdigest()]
if log != want:
    sys.exit("events %r, want %r" % (log, want))
for b in res["banks"]:
    v = bytes(hashlib.new(b).digest_size)
    for ev in log:
        v = hashlib.new(b, v + hashlib.new(b, ev.encode()).digest()).digest()
    if oracle.tpm_pcr(res, b, 15) != v:
        sys.exit("%s PCR 15: tpm %s, replay %s" % (b, oracle.tpm_pcr(res, b, 15).hex(), v.hex()))
PY
        then it_pass "$T: $(basename "$1"): PCR 15 is the fence, then the volume opened (its UUID, its volume key's HMAC)"
        else it_fail "$T: $(basename "$1"): PCR 15 is the fence, then the volume opened (its UUID, its volume key's HMAC)"; fi
}
pcr15 "$a" "$IT_DIR/luks.vk"
if it_luks_booted "$ok"; then
        it_luks_unsealed "$ok" && pcr15 "$ok" "$IT_DIR/luks.vk"
        if [ ! -e "$ok/esp/loader/mshim/root.sealed" ] && "$IT_CLI" luks list "$ok/luks.img" 2>/dev/null | grep -q '^keyslot [0-9]*: mshim-tpm2 (token 0)'; then
                it_pass "$T: approved: unsealed from the volume's token, with no sealed file on the ESP"
        else
                it_fail "$T: approved: unsealed from the volume's token, with no sealed file on the ESP"
        fi
fi
if it_luks_booted "$dc"; then
        it_luks_has "$dc" "decoy: the initramfs meets the decoy (first with the root's UUID)" "MSHIM-LUKS SOURCE /dev/vda2"
        it_luks_has "$dc" "decoy: the keyscript unsealed the real key, which the decoy refused; called again, it fell back" \
                "MSHIM-LUKS FALLBACK the unsealed key was not accepted before"
        it_luks_has "$dc" "decoy: the attacker's passphrase opens the decoy" "MSHIM-LUKS UNLOCKED"
        it_luks_has "$dc" "decoy: its init runs" "MSHIM-DECOY INIT"
        it_luks_has "$dc" "decoy: its mshim unseal of the real sealed key is refused (exit 1, no key)" \
                "MSHIM-DECOY UNSEAL rc=1 bytes=0"
        if tr -d '\r' < "$dc/serial.log" | grep -q "^mshim: unseal refused: PCR 15, the unseal fence, is no longer zero"; then
                it_pass "$T: decoy: the refusal names PCR 15, the unseal fence"
        else
                it_fail "$T: decoy: the refusal names PCR 15, the unseal fence"
                tr -d '\r' < "$dc/serial.log" | grep -a 'MSHIM-\|^mshim:' >&2
        fi
        pcr15 "$dc" "$dc/luks.vk"
fi
it_luks_booted "$up" && it_luks_unsealed "$up" && it_predict_check "$T: upgrade" "$a" "$up" "$up/predict.json"
it_boot_ok "$up" && it_luks_has "$up" "upgrade: the appended archive's file is in the initramfs" \
        "MSHIM-LUKS EXTRA-FILE mshim-extra-upgrade mshim test: one more file"
it_luks_booted "$o" && it_luks_fallback "$a" "$o" 5,9,12 && it_luks_has "$o" "options: init=/bin/sh is on the command line" \
        "CMDLINE $IT_OPTIONS init=/bin/sh"
it_luks_booted "$i" && it_luks_fallback "$a" "$i" 9
it_boot_ok "$i" && it_luks_has "$i" "initrd: the evil maid's file is in the initramfs (the kernel unpacked the appended archive)" \
        "MSHIM-LUKS EXTRA-FILE mshim-extra-evil an evil maid's file"
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
it_luks_booted "$lit" && it_luks_unsealed "$lit"
if it_luks_booted "$pn"; then
        if [ "$(tr -d '\r' < "$pn/serial.log" | grep -c '^Please enter the TPM PIN for disk root: ')" = 2 ]; then
                it_pass "$T: pin: the keyscript asks for the PIN, and again after the wrong one"
        else
                it_fail "$T: pin: the keyscript asks for the PIN, and again after the wrong one"
        fi
        [ "$pin_left" = 1 ] && s= || s=s
        it_luks_has "$pn" "pin: the wrong PIN is reported, with the $pin_left tries the TPM still allows" \
                "mshim: wrong PIN (the TPM counts it: $pin_left more wrong PIN$s before dictionary-attack lockout)"
        it_luks_unsealed "$pn"
fi
it_luks_booted "$uk" && it_luks_fallback "$a" "$uk" 4,5,9,12
it_luks_booted "$ol" && it_luks_fallback "$a" "$ol" 4
if it_luks_booted "$r"; then
        it_luks_has "$r" "revoked: falls back, saying the approval is revoked" \
                "MSHIM-LUKS FALLBACK unseal refused: the boot state is approved only by revoked approvals (older than the epoch counter: 'mshim policy revoke' ended them): after this passphrase boot run 'mshim policy approve --current' (docs/RECOVERY.md \"NV counter gone\": 'mshim policy init --reset' ends them too)"
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
