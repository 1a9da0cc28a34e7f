#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim predict with GRUB as mshim's next stage (docs/predict.md "GRUB as
# next stage"), proven by booting. A: no \loader\entries, so mshim
# chainloads \EFI\BOOT\grubx64.efi (a grub-mkstandalone GRUB 2.06 with its
# grub.cfg in the memdisk), which boots the test kernel. B: another
# grub.cfg (other echo text and command line, one more set command), so
# another grubx64.efi, Debian's linux-image-*-rt-amd64 kernel in place of
# the generic one, and one byte of the initrd changed. Both boot (two at a
# time); on the host `mshim predict --next-stage --grub-cfg --kernel
# --initrd` predicts B from A's log and PCRs and B's files, and B's PCRs
# 0-15 except 10 in every bank must equal the prediction, the changed set
# being exactly the PCRs A and B differ in (4, 8, 9); B's own files from
# B's log predict B's PCRs unchanged. Then, on A's log
# without booting: a grub.cfg outside the predicted subset (a menuentry, a
# variable) makes PCRs 8 and 9 unpredictable, an initrd count that does not
# match grub.cfg PCR 9 (exit 1), and a non-PE --next-stage is refused (exit 2).
set -u
# Every bank swtpm has: this file checks the measurements bank by bank.
IT_ALL_BANKS=1
. "$(dirname "$0")/lib.sh"
T=predict-grub
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_KERNEL_RT" "$IT_CLI" /usr/lib/grub/x86_64-efi/linuxefi.mod; then
        it_fail "$T: prerequisites (grub-efi-amd64-bin, make deps)"; exit 1
fi

# grub_esp DIR OPTIONS ECHO [EXTRA]: DIR's ESP chainloads a GRUB whose
# grub.cfg boots /vmlinuz with OPTIONS.
grub_esp() {
        local d=$1
        rm -rf "$d/esp/loader/entries"
        printf '# mshim grub predict test\ntimeout 0\n' > "$d/esp/loader/loader.conf"
        cat > "$d/grub.cfg" <<CFG
# predicted by mshim predict --grub-cfg
set timeout=0
${4:-}
search --no-floppy --file --set=root /vmlinuz
echo "$3"
linuxefi /vmlinuz $2
initrdefi /initrd.img
boot
CFG
        it_mkgrub "$d/grub.cfg" "$d/esp/EFI/BOOT/grubx64.efi" 2> "$d/mkstandalone.err" ||
                { cat "$d/mkstandalone.err" >&2; return 1; }
}

OPTS_A="console=ttyS0 quiet panic=-1 mshim.test=grub"
OPTS_B="console=ttyS0 quiet panic=-1 mshim.test=grub-b mshim.predict=1"
a=$(it_newboot a) && grub_esp "$a" "$OPTS_A" "mshim-test: GRUB A" || { it_fail "$T: set-up A"; exit 1; }
b=$(it_newboot b) && grub_esp "$b" "$OPTS_B" "mshim-test: GRUB 'B' is loading" "set mshim_case=b" &&
        cp "$IT_KERNEL_RT" "$b/esp/vmlinuz" &&
        it_oracle flip "$b/esp/initrd.img" "mshim test initramfs" --pos 0 || { it_fail "$T: set-up B"; exit 1; }

IT_JOBS=2 it_boot_all "$a" "$b"
for d in "$a" "$b"; do
        if [ "$(cat "$d/boot.rc" 2>/dev/null)" != 0 ]; then
                it_fail "$T: boot $(basename "$d") through mshim and GRUB"; exit 1
        fi
        it_pass "$T: boot $(basename "$d") through mshim and GRUB"
done
it_grub_events "$b/result/eventlog.bin" "$T: B" "$OPTS_B" "/vmlinuz=$b/esp/vmlinuz" \
        "/initrd.img=$b/esp/initrd.img" || IT_FAILED=1

it_pcrs_file "$a" > "$a/pcrs.txt"
base=(--log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt")
if "$IT_CLI" predict "${base[@]}" --next-stage "$b/esp/EFI/BOOT/grubx64.efi" --grub-cfg "$b/grub.cfg" \
                --kernel "$b/esp/vmlinuz" --initrd "$b/esp/initrd.img" --json > "$b/predict.json" 2> "$b/predict.err"
then
        it_pass "$T: predict B on the host"
        it_predict_check "$T: B" "$a" "$b" "$b/predict.json" || IT_FAILED=1
else
        it_fail "$T: predict B on the host"; cat "$b/predict.err" >&2
fi

# B as the baseline, nothing changed (its files given again): B's own PCRs.
# Its logged echo holds quotes ('B'), read back as the measured text.
it_pcrs_file "$b" > "$b/pcrs.txt"
if "$IT_CLI" predict --log "$b/result/eventlog.bin" --pcrs "$b/pcrs.txt" --grub-cfg "$b/grub.cfg" \
                --next-stage "$b/esp/EFI/BOOT/grubx64.efi" --kernel "$b/esp/vmlinuz" --json > "$b/self.json" 2>&1 &&
                python3 -c '
import json, sys
p = json.load(open(sys.argv[1])); t = open(sys.argv[2]).read().split()
want = {}
for x in t:
    k, v = x.split("=")
    b, n = k.split(":")
    want.setdefault(b, {})[n] = v
sys.exit(0 if not p["changed"] and not p["unpredictable"] and all(
    p["pcrs"][b].get(n, "0" * len(v)) == v for b in want for n, v in want[b].items() if int(n) < 16 and n != "10") else 1)' \
                "$b/self.json" "$b/pcrs.txt"; then
        it_pass "$T: B's own files from B's log predict B's PCRs, nothing changed"
else
        it_fail "$T: B's own files from B's log predict B's PCRs, nothing changed"; cat "$b/self.json" >&2
fi

# unpredictable CASE PCRS CFG-TEXT [ARGS...]: exactly PCRS (e.g. "8 9")
# unpredictable, exit 1, the other PCRs still printed.
unpredictable() {
        local c=$1 want=$2 cfg=$IT_DIR/$1.cfg rc; shift 2
        printf '%s\n' "$1" > "$cfg"; shift
        "$IT_CLI" predict "${base[@]}" --grub-cfg "$cfg" "$@" --json > "$IT_DIR/$c.json" 2> "$IT_DIR/$c.err"
        rc=$?
        if [ "$rc" = 1 ] && python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
sys.exit(0 if set(p["unpredictable"]) == set(sys.argv[2].split()) and "0" in p["pcrs"]["sha256"] else 1)' \
                        "$IT_DIR/$c.json" "$want"; then
                it_pass "$T: $c: PCR $want unpredictable ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["unpredictable"]["9"])' "$IT_DIR/$c.json"))"
        else
                it_fail "$T: $c: PCR $want unpredictable (exit $rc)"; cat "$IT_DIR/$c.json" "$IT_DIR/$c.err" >&2
        fi
}
unpredictable menu "8 9" "$(printf 'set timeout=0\nmenuentry "Debian" {\n  linux /vmlinuz ro\n}\n')"
unpredictable variable "8 9" "$(sed 's|^linuxefi /vmlinuz|linuxefi $prefix/vmlinuz|' "$a/grub.cfg")"
unpredictable initrds 9 "$(cat "$a/grub.cfg")" --initrd "$a/esp/initrd.img" --initrd "$a/esp/initrd.img"

"$IT_CLI" predict "${base[@]}" --next-stage "$a/grub.cfg" > "$IT_DIR/notpe.out" 2> "$IT_DIR/notpe.err"
rc=$?
if [ "$rc" = 2 ] && [ ! -s "$IT_DIR/notpe.out" ] && grep -q "grub.cfg: not a PE image" "$IT_DIR/notpe.err"; then
        it_pass "$T: a --next-stage that is not a PE image is refused (exit 2, nothing printed)"
else
        it_fail "$T: a --next-stage that is not a PE image is refused (exit $rc)"; cat "$IT_DIR/notpe.err" >&2
fi
exit "$IT_FAILED"
