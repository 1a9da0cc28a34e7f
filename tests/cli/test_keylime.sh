#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Keylime's own measured-boot engine (the unmodified snapshot in
# ../shared/oracles/keylime: its tpm2_eventlog parser and policy
# evaluation) running mshim's policy module (tools/keylime/mshim_keylime.py)
# on a real mshim boot (tests/data/mshim-boot/: OVMF + swtpm + mshim +
# Debian's kernel, captured on this project's QEMU set-up), against
# reference states `mshim verify keylime-refstate` writes. Oracles:
# tpm2_eventlog's replay and the guest TPM's own PCR values (result.json).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
MSHIM=${MSHIM:-build/test/mshim}
mkdir -p build
t=$(mktemp -d "$PWD/build/keylimetest.XXXXXX")
cli_init keylime "$t"
KEYLIME=${MB_KEYLIME:-../shared/oracles/keylime}
[ -d "$KEYLIME" ] || KEYLIME=../../shared/oracles/keylime
MOD=tools/keylime/mshim_keylime.py
D=tests/data/mshim-boot
L=$D/eventlog.bin
KRT=${KERNEL_RT:-build/kernel-rt/vmlinuz}
for tool in tpm2_eventlog /usr/bin/python3; do
        command -v $tool >/dev/null || { fail "missing $tool: run make deps"; exit 1; }
done
[ -x "$KEYLIME/evaluate" ] || { fail "Keylime's snapshot not found at $KEYLIME"; exit 1; }
# evaluate REFSTATE LOG: Keylime's verdict (AOK or its reason) into $t/verdict.
evaluate() { /usr/bin/python3 "$KEYLIME/evaluate" --import "$MOD" mshim "$1" "$2" >"$t/verdict" 2>&1; }
accepts() { local n=$1; shift; if evaluate "$@" && grep -qx AOK "$t/verdict"; then pass "$n"; else fail "$n" "$(cat "$t/verdict")"; fi; }
rejects() {
        local n=$1 re=$2; shift 2
        if ! evaluate "$@" && grep -q -E "$re" "$t/verdict"; then pass "$n"; else fail "$n" "$(cat "$t/verdict")"; fi
}

# ---- the refstate of the boot, against two oracles ----
"$MSHIM" verify keylime-refstate --log "$L" -o "$t/ref.json" 2>"$t/err" || fail "keylime-refstate --log" "$(cat "$t/err")"
tpm2_eventlog "$L" >"$t/log.yaml" 2>/dev/null || fail "tpm2_eventlog reads the boot's log"
check "its PCRs 0-9 and 12-14 are tpm2_eventlog's replay of the log and the guest TPM's own values" python3 - \
        "$t/ref.json" "$t/log.yaml" "$D/result.json" <<'PY'
import json, re, sys
ref = json.load(open(sys.argv[1]))
boot = ref["boots"][0]["pcrs"]["sha256"]
text = open(sys.argv[2]).read().split("pcrs:")[1]
sha256 = text.split("sha256:")[1].split("sha384:")[0]
tools = {int(m.group(1)): m.group(2).lower() for m in re.finditer(r"(\d+)\s*:\s*0x([0-9A-Fa-f]+)", sha256)}
tpm = json.load(open(sys.argv[3]))["pcrs"]["sha256"]
want = list(range(10)) + [12, 13, 14]
ok = ref["mshim_refstate"] == 1 and sorted(int(i) for i in boot) == want
ok = ok and all(boot[str(i)] == tools.get(i, "0" * 64) == tpm[str(i)] for i in want)
sys.exit(0 if ok else 1)
PY
accepts "Keylime's engine with the mshim policy accepts the boot its refstate describes" "$t/ref.json" "$L"

# ---- what Keylime's engine refuses ----
python3 - "$L" "$t/edited.bin" "$t/log.yaml" <<'PY'
import re, sys
d = bytearray(open(sys.argv[1], "rb").read())
y = open(sys.argv[3]).read()
# The last PCR 4 EV_EFI_BOOT_SERVICES_APPLICATION (the kernel): its sha256 digest, one byte changed.
evs = y.split("- EventNum:")[1:]
k = [e for e in evs if re.search(r"PCRIndex: 4\b", e) and "EV_EFI_BOOT_SERVICES_APPLICATION" in e][-1]
dg = bytes.fromhex(re.search(r"AlgorithmId: sha256\s*\n\s*Digest: \"([0-9a-f]+)\"", k).group(1))
i = d.index(dg)
d[i] ^= 1
open(sys.argv[2], "wb").write(d)
PY
rejects "a log whose kernel digest was edited: rejected, PCR 4 named" "matches no allowed mshim boot.*PCR 4, the images started" \
        "$t/ref.json" "$t/edited.bin"
echo '{"boots": []}' >"$t/malformed.json"
rejects "a reference state that is not mshim's: rejected as malformed" "malformed" "$t/malformed.json" "$L"

# ---- predictions: an upgrade allowed before it boots ----
python3 -c 'import json, sys
for b, vals in json.load(open(sys.argv[1]))["pcrs"].items():
    for n, v in vals.items(): print("%s:%s=%s" % (b, n, v))' \
        "$D/result.json" >"$t/pcrs.txt"
"$MSHIM" predict --log "$L" --pcrs "$t/pcrs.txt" --kernel "$KRT" --json >"$t/rt.json" 2>"$t/err" ||
        fail "predict the rt kernel's boot" "$(cat "$t/err")"
"$MSHIM" verify keylime-refstate --no-log --state "$t/rt.json" -o "$t/ref-rt.json" 2>"$t/err" ||
        fail "keylime-refstate --no-log --state" "$(cat "$t/err")"
rejects "a refstate of the rt kernel's predicted boot alone rejects this boot, naming PCR 4" \
        "closest \\(.*rt.json\\) differs in PCR 4" "$t/ref-rt.json" "$L"
"$MSHIM" verify keylime-refstate --log "$L" --state "$t/rt.json" -o "$t/ref-both.json" 2>"$t/err" ||
        fail "keylime-refstate --log --state" "$(cat "$t/err")"
accepts "this boot and the prediction: the boot is accepted (one of the allowed boots)" "$t/ref-both.json" "$L"
check "... the refstate lists both boots, the prediction's kernel PCR 4 its own" python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
b = r["boots"]
sys.exit(not (len(b) == 2 and b[1]["pcrs"]["sha256"]["4"] == p["pcrs"]["sha256"]["4"] != b[0]["pcrs"]["sha256"]["4"]))' \
        "$t/ref-both.json" "$t/rt.json"

# ---- keylime-refstate's refusals ----
"$MSHIM" predict --log "$L" --pcrs "$t/pcrs.txt" --totp-point --select 4,5,7,12 --json >"$t/totp.json" 2>/dev/null
refuses "a TOTP-point prediction is not a boot: refused" "a prediction of the TOTP point" \
        "$MSHIM" verify keylime-refstate --no-log --state "$t/totp.json" -o "$t/x.json"
head -c 300 "$L" >"$t/cut.bin"
refuses "a log cut short: exit 2, the event named" "cut.bin: event [0-9]+ \\(at byte [0-9]+\\) does not parse" \
        "$MSHIM" verify keylime-refstate --log "$t/cut.bin" -o "$t/x.json"
refuses "-o naming the log: refused, not overwritten" "" "$MSHIM" verify keylime-refstate --log "$t/cut.bin" -o "$t/cut.bin"
check "... the log untouched" test "$(stat -c %s "$t/cut.bin")" = 300
refuses "--no-log without --state" "needs at least one --state" "$MSHIM" verify keylime-refstate --no-log -o "$t/x.json"
refuses "no -o" "takes -o REFSTATE" "$MSHIM" verify keylime-refstate --log "$L"
exit "$CLI_FAILED"
