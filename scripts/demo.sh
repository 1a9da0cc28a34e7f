#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make demo: boot a VM (OVMF + swtpm + Debian kernel, QEMU/TCG) through
# mshim and show, for the sha256 bank, every PCR 0-15 that was extended:
# the value the TPM reports, the value replayed from the event log by
# `mshim log --json`, and for PCRs 5 and 12 the value predicted from the
# files on the ESP alone (tests/integration/oracle.py). Exits non-zero on
# any mismatch. DEMO_FULL=1 prints whole digests instead of 16 hex digits.
set -u
cd "$(dirname "$0")/.." || exit 1
# All four banks, as the figures in docs/ were measured.
IT_ALL_BANKS=1
. tests/integration/lib.sh
IT_PROGRESS=(
        'BdsDxe: starting|firmware: starting \EFI\BOOT\BOOTX64.EFI (mshim)'
        'mshim: booting|mshim: measured loader.conf, entry and command line; starting the kernel'
        'MSHIM-RESULT-BEGIN|guest: initramfs is reading the PCRs and the event log'
)
it_init demo
it_require "$IT_EFI" "$IT_CLI" "$IT_KERNEL" || exit 1
echo "mshim demo: Debian kernel $(cat "$IT_KDIR/VERSION"), OVMF, swtpm (banks $IT_BANKS), QEMU without KVM"
it_log "building the initramfs and the ESP image"
d=$(it_newboot demo) || exit 1
it_log "starting swtpm and QEMU (this takes 15-60 s under TCG)"
if ! it_boot "$d"; then
        IT_FAILED=1
        echo "demo: the boot failed" >&2
        exit 1
fi
r=$d/result
if ! "$IT_CLI" log --json "$r/eventlog.bin" > "$d/replay.json"; then
        IT_FAILED=1
        echo "demo: $IT_CLI log --json failed on the guest's event log" >&2
        exit 1
fi
it_oracle predict --log "$r/eventlog.bin" --bank sha256 \
        --loader-conf "$d/esp/loader/loader.conf" \
        --entry "$d/esp/loader/entries/mshim-test.conf" \
        --options "$IT_OPTIONS" > "$d/predicted.txt" || { IT_FAILED=1; exit 1; }

python3 - "$r/result.json" "$d/replay.json" "$d/predicted.txt" "${DEMO_FULL:-0}" <<'PY' || IT_FAILED=1
import json, sys
res = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))["pcrs"].get("sha256", {})
pred = dict(l.split() for l in open(sys.argv[3]) if l.strip())
full = sys.argv[4] == "1"
if "sha256" not in res["banks"]:
    print("demo: the guest reports no sha256 bank"); sys.exit(1)
tpm = res["pcrs"]["sha256"]
zero = "0" * 64
w = 64 if full else 16
def short(v):
    return v if full or v in ("-", "?") else v[:16] + ".."
print()
print("Bank sha256, PCRs 0-15 that were extended (PCR 10 is IMA's, measured by the")
print("running kernel after the firmware log ends: not shown).")
print()
fmt = "%-4s %-*s %-*s %-*s %s"
print(fmt % ("PCR", w + 2, "TPM", w + 2, "log replay", w + 2, "predicted", "result"))
bad = 0
for n in range(16):
    if n == 10:
        continue
    t = tpm[str(n)]
    r = rep.get(str(n), zero)
    if t == zero and str(n) not in rep:
        continue
    p = pred.get(str(n), "-")
    ok = r == t and p in ("-", t)
    bad += not ok
    print(fmt % (n, w + 2, short(t), w + 2, short(r), w + 2, short(p), "OK" if ok else "MISMATCH"))
print()
if bad:
    print("%d PCR(s) MISMATCH" % bad)
    sys.exit(1)
print("All PCRs match: the TPM, the event log replay and the predictions agree.")
PY
exit "$IT_FAILED"
