#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# From GRUB to the first boot through mshim (issue 23), proven by booting,
# for both chains:
#   behind shim, Secure Boot with Microsoft's keys, MokList = the test MOK,
#   a GPT disk with the ESP and a LUKS2 root (test_luks.sh's, its key
#   sealed on the host with `mshim seal --signed`):
#     A  firmware -> Debian's signed shim -> Debian's signed GRUB (grub.cfg
#        in /EFI/debian, its prefix) -> Debian's signed kernel: no mshim;
#        the passphrase typed (nothing is approved yet)
#     B  then on the host, from A's log and PCRs as the kernel hook reads
#        them: `mshim install --shim --key MOK` onto B's ESP (a copy of A's
#        less GRUB), which predicts and approves the first boot through
#        mshim; B boots it: firmware -> the same shim -> mshim (install's
#        EFI/mshim/grubx64.efi) -> install's entry: the root unlocks with
#        no passphrase and no approval made by hand
#   started by the firmware, Secure Boot off (a store without keys):
#     C  firmware -> Debian's shim -> Debian's GRUB -> the kernel: no mshim
#     D  firmware -> mshim -> the kernel (shim's events gone too)
# B is also predicted on the host from A's log and PCRs, B's ESP, mshim and
# MokList (`mshim predict --esp --loader --shim --mok`), D from C's (`mshim
# predict --esp --loader`), and compared with the boots: every active
# bank's PCRs 0-14 except 10 and 1 (the boot variables, which the
# prediction leaves unpredictable: here both boots of a pair have the
# same, checked too; PCR 15 is the keyscript's), and the changed set; the
# install's approval holds B's booted PCRs 4, 5, 7, 9, 12. Four boots: A,
# C and D two at a time, then B.
set -u
. "$(dirname "$0")/lib.sh"
T=predict-first
PASS=${LUKS_PASSPHRASE:-mshim-luks-test}
it_init "$T"
# PCR 15 is the keyscript's (the unseal fence and the volume it opens,
# docs/MEASUREMENTS.md): not in the firmware's log nor in any prediction.
export IT_OS_PCRS=15
GRUB_SIGNED=${GRUB_SIGNED:-$IT_EFIROOT/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$IT_SHIM" "$IT_MM" "$GRUB_SIGNED" \
                "$IT_OVMF_CODE_SB" "$IT_OVMF_VARS_MS" \
                "$IT_KDIR/modules/KMODS" /usr/sbin/cryptsetup || ! command -v sfdisk >/dev/null; then
        it_fail "$T: prerequisites (shim-signed, grub-efi-amd64-signed, ovmf, cryptsetup-bin, fdisk; make deps)"; exit 1
fi
# shellcheck disable=SC2034 # read by it_secure_boot_on (lib.sh)
IT_SB_CODE="$IT_OVMF_CODE_SB"

k=$IT_DIR/keys
it_shim_keys "$k" || { it_fail "$T: set-up (keys)"; exit 1; }
"$IT_CLI" vars add-mok "$IT_OVMF_VARS_MS" --cert "$k/mok.pem" -o "$k/vars.fd" &&
        "$IT_CLI" vars get "$k/vars.fd" MokList -o "$k/MokList.bin" >/dev/null ||
        { it_fail "$T: set-up (mshim vars add-mok)"; exit 1; }
it_secure_boot_on "$k/vars.fd" || { it_fail "$T: set-up (Secure Boot)"; exit 1; }
it_luks_provision "$PASS" || exit 1

# A: shim's second stage (grubx64.efi next to it) is Debian's GRUB.
a=$(it_shim_esp a "$k") && b=$(it_shim_esp b "$k") &&
        cp "$GRUB_SIGNED" "$a/esp/EFI/BOOT/grubx64.efi" && rm -rf "$a/esp/loader" &&
        mkdir -p "$a/esp/EFI/debian" &&
        cp "$k/vars.fd" "$a/vars.in.fd" && cp "$k/vars.fd" "$b/vars.in.fd" &&
        cp "$IT_B/it/initrd-luks.img" "$a/esp/initrd.img" ||
        { it_fail "$T: set-up (esp)"; exit 1; }
it_console_script "$a/console.script" 'asking for the passphrase' "$PASS"
# C: shim -> GRUB with Secure Boot off; D: the firmware starts mshim
# (it_newboot's ESP).
c=$(it_shim_esp c "$k") && d=$(it_newboot d) && rm -rf "$c/esp/loader" &&
        cp "$GRUB_SIGNED" "$c/esp/EFI/BOOT/grubx64.efi" && mkdir -p "$c/esp/EFI/debian" &&
        cp "$IT_OVMF_VARS_BLANK" "$c/vars.in.fd" && cp "$IT_OVMF_VARS_BLANK" "$d/vars.in.fd" ||
        { it_fail "$T: set-up (esp C, D)"; exit 1; }
# Debian's GRUB enters the kernel through its EFI stub (linuxefi, the stub
# then hands the kernel the event log) only with Secure Boot on; C names it.
for g in "$a:linux:initrd" "$c:linuxefi:initrdefi"; do
        IFS=: read -r dir lx rd <<<"$g"
        cat > "$dir/esp/EFI/debian/grub.cfg" <<CFG
set timeout=0
search --no-floppy --file --set=root /vmlinuz
$lx /vmlinuz $IT_OPTIONS
$rd /initrd.img
boot
CFG
done

# first_check LABEL A B PREDICT_JSON: B's PCRs 0-15 but 1 and 10, every
# bank, equal the prediction from A; PCR 1 the same in A and B; the changed
# set is what differs between A and B.
first_check() {
        python3 - "$IT_REPO/tests/integration" "$@" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import oracle
label, a, b, pj = sys.argv[2:6]
pred = json.load(open(pj))
ra, rb = oracle.load_result(a + "/result"), oracle.load_result(b + "/result")
bad, diff = [], set()
if pred.get("unpredictable"):
    bad.append("unpredictable: %s" % pred["unpredictable"])
for bank in rb["banks"]:
    for n in oracle.CHECKED_PCRS:
        tpm = oracle.tpm_pcr(rb, bank, n)
        if tpm != oracle.tpm_pcr(ra, bank, n):
            diff.add(n)
        if n == 1:
            continue
        want = pred["pcrs"].get(bank, {}).get(str(n))
        want = bytes.fromhex(want) if want else bytes(len(tpm))
        if want != tpm:
            bad.append("%s PCR %d: predicted %s, booted %s" % (bank, n, want.hex(), tpm.hex()))
if 1 in diff:
    bad.append("PCR 1 differs between the two boots (the same boot variables)")
if sorted(diff) != sorted(pred.get("changed", [])):
    bad.append("changed %s, but the boots differ in %s" % (pred.get("changed"), sorted(diff)))
name = "predict-first: %s: PCRs %s, every bank (%s), equal the prediction; changed %s" % (
    label, ",".join(str(n) for n in oracle.CHECKED_PCRS if n != 1), ",".join(rb["banks"]), sorted(diff))
if bad:
    print("FAIL: " + name)
    for x in bad:
        print("  " + x, file=sys.stderr)
    for n in sorted({int(x.split()[2]) for x in bad if " PCR " in x}):
        for ev in oracle.load_log(b + "/result/eventlog.bin"):
            if ev.pcr == n:
                print("  PCR %d: type 0x%x %r" % (n, ev.type, ev.data[:48]), file=sys.stderr)
    sys.exit(1)
print("PASS: " + name)
PY
}

# A (its LUKS disk) beside C and D, two at a time.
( it_boot "$a" --disk "$IT_DIR/luks.img" > "$a/boot.out" 2>&1; echo $? > "$a/boot.rc" ) &
IT_JOBS=1 it_boot_all "$c" "$d"
wait
cat "$a/boot.out" >&2
if it_boot_ok "$a" && it_boot_ok "$c" && it_boot_ok "$d"; then
        it_pass "$T: boot A (shim -> GRUB -> kernel, LUKS root), C (shim -> GRUB, Secure Boot off), D (mshim -> kernel)"
else
        it_fail "$T: boot A (shim -> GRUB -> kernel, LUKS root), C (shim -> GRUB, Secure Boot off), D (mshim -> kernel)"
        exit 1
fi
it_luks_has "$a" "A: the typed passphrase unlocks the volume (nothing approved yet)" "MSHIM-LUKS UNLOCKED"
it_pcrs_file "$a" > "$a/pcrs.txt"

# ---- B: mshim install on the host, from A's log, as on the machine ---------------
# The machine's files: /boot with the kernel and the LUKS initramfs, its
# command line, machine-id; hook.conf's LOG and PCRS are A's (the machine's
# own log and TPM otherwise), MOK_LIST the MokList B's firmware has (on the
# machine: shim's MokListRT of this boot). The hook as `make install` puts it.
r=$IT_DIR/root V=$(cat "$IT_KDIR/VERSION" 2>/dev/null || echo 0)
mkdir -p "$r/etc/kernel" "$r/etc/mshim" "$r/boot" "$IT_DIR/shimdir" &&
        echo 0123456789abcdef0123456789abcdef > "$r/etc/machine-id" &&
        printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n' > "$r/etc/os-release" &&
        echo "$IT_OPTIONS" > "$r/etc/kernel/cmdline" &&
        cp "$IT_KERNEL" "$r/boot/vmlinuz-$V" && cp "$IT_B/it/initrd-luks.img" "$r/boot/initrd.img-$V" &&
        cp "$IT_SHIM" "$IT_DIR/shimdir/shimx64.efi.signed" && cp "$IT_MM" "$IT_DIR/shimdir/mmx64.efi.signed" &&
        sed -e 's|@SYSCONFDIR@|/etc|g' -e 's|@BINDIR@|/usr/bin|g' -e 's|@LIBDIR@|/usr/lib/mshim|g' \
                "$IT_REPO/hooks/kernel-hook" > "$IT_DIR/kernel-hook" && chmod +x "$IT_DIR/kernel-hook" &&
        printf '%s\n' "LOG=$a/result/eventlog.bin" "PCRS=$a/pcrs.txt" "MOK_LIST=$k/MokList.bin" > "$r/etc/mshim/hook.conf" &&
        rm -rf "$b/esp/loader" "$b/esp/vmlinuz" "$b/esp/initrd.img" "$b/esp/EFI/BOOT/grubx64.efi" ||
        { it_fail "$T: set-up (B's machine)"; exit 1; }
it_swtpm_host_start "$IT_LUKS_TPM" || { it_fail "$T: set-up (host TPM)"; exit 1; }
MSHIM_KERNEL_HOOK=$IT_DIR/kernel-hook "$IT_CLI" install --root "$r" --esp "$b/esp" --state-dir "$IT_LUKS_POLICY" \
        --shim --shim-dir "$IT_DIR/shimdir" --key "$k/mok.key" --cert "$k/mok.pem" --loader "$IT_EFI" \
        --no-boot-entry > "$IT_DIR/install.log" 2>&1
rc=$?
it_swtpm_host_stop "$IT_LUKS_TPM"
ap=$(grep -lx "entry-id 0123456789abcdef0123456789abcdef-$V" "$b/esp/loader/mshim/approvals/"*.approval 2>/dev/null | head -n 1)
[ "$rc" = 0 ] && [ -n "$ap" ] && grep -q "this boot did not run mshim: predicting the first boot through mshim" "$IT_DIR/install.log"
it_step $? "host: mshim install --shim from A's boot approves the first boot through mshim (no approve by hand)" "$IT_DIR/install.log"
# shim starts its second stage from its own directory: the firmware's
# default path stands in for the boot entry install adds (the same images,
# the same digests; only the boot variables of PCR 1 differ, not approved).
cp "$b/esp/EFI/mshim/grubx64.efi" "$b/esp/EFI/BOOT/grubx64.efi" && it_luks_sealed_esp "$b" &&
        cp -a "$IT_LUKS_TPM/state" "$b/tpm.in" || { it_fail "$T: set-up (B's ESP)"; exit 1; }
if it_boot "$b" --disk "$IT_DIR/luks.img" > "$b/boot.out" 2>&1; then echo 0 > "$b/boot.rc"; else echo 1 > "$b/boot.rc"; fi
cat "$b/boot.out" >&2
it_luks_booted "$b" || exit 1
it_luks_unsealed "$b"
# B's booted sha256 PCRs as an approval lists them (tests/cli/seal_fixture.py).
python3 - "$IT_REPO/tests/integration" "$b/result" > "$b/booted.pcrs" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import oracle
rb = oracle.load_result(sys.argv[2])
print("\n".join("sha256:%d=%s" % (n, oracle.tpm_pcr(rb, "sha256", n).hex()) for n in (4, 5, 7, 9, 12)))
PY
if cmp -s <(python3 "$IT_REPO/tests/cli/seal_fixture.py" approval-values "$ap") "$b/booted.pcrs"; then
        it_pass "$T: B: install's approval holds B's booted sha256 PCRs 4, 5, 7, 9, 12"
else
        it_fail "$T: B: install's approval holds B's booted sha256 PCRs 4, 5, 7, 9, 12"
        diff <(python3 "$IT_REPO/tests/cli/seal_fixture.py" approval-values "$ap") "$b/booted.pcrs" >&2
fi
it_check_replay "$a" "$T: A: TPM PCRs equal the event-log replay"
it_check_replay "$c" "$T: C: TPM PCRs equal the event-log replay"
it_pcrs_file "$c" > "$c/pcrs.txt"
if "$IT_CLI" predict --log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" --esp "$b/esp" \
        --loader "$b/esp/EFI/BOOT/grubx64.efi" --shim "$b/esp/EFI/BOOT/BOOTX64.EFI" --mok "$k/MokList.bin" \
        --select 0,2,3,4,5,6,7,8,9,11,12,13,14 --json > "$b/predict.json" 2> "$b/predict.err" &&
   grep -q "did not run mshim: predicting the first boot through mshim (started by the same shim)" "$b/predict.err"; then
        it_pass "$T: predict B from A's log on the host (the note names the first boot)"
else
        it_fail "$T: predict B from A's log on the host"; cat "$b/predict.err" >&2
fi
first_check "B from A (behind shim)" "$a" "$b" "$b/predict.json" || IT_FAILED=1
if "$IT_CLI" predict --log "$c/result/eventlog.bin" --pcrs "$c/pcrs.txt" --esp "$d/esp" \
        --loader "$d/esp/EFI/BOOT/BOOTX64.EFI" --select 0,2,3,4,5,6,7,8,9,11,12,13,14,15 --json \
        > "$d/predict.json" 2> "$d/predict.err" &&
   grep -q "did not run mshim: predicting the first boot through mshim (started by the firmware)" "$d/predict.err"; then
        it_pass "$T: predict D from C's log on the host (the note names the first boot)"
else
        it_fail "$T: predict D from C's log on the host"; cat "$d/predict.err" >&2
fi
first_check "D from C (started by the firmware, Secure Boot off)" "$c" "$d" "$d/predict.json" || IT_FAILED=1
exit "$IT_FAILED"
