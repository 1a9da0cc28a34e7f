#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim predict from a boot that did not run mshim: the first boot through
# mshim (docs/predict.md "The first boot"). Baselines: real shim + GRUB logs
# of ../shared/corpus/eventlogs (their PCRs from EXPECTED.json) and shim +
# GRUB boots built by tests/cli/first_boot_fixture.py with Debian's signed
# shim, GRUB and kernel; the expected PCRs from first_boot_fixture.py
# (hashlib, oracle.py), never from mshim. Then what it refuses or cannot
# predict. The boot itself: tests/integration/test_predict_first.sh.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
T=$(mktemp -d)
cli_init predict-first "$T"
KERNEL=${KERNEL:-build/kernel/vmlinuz}
SHIM=build/debian-efi/usr/lib/shim/shimx64.efi.signed
OTHER_SHIM=build/debian-efi/usr/lib/shim/fbx64.efi.signed
GRUB=build/debian-efi/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
LOADER=build/mshimx64.efi
CORPUS=${CORPUS:-../shared/corpus/eventlogs}
[ -d "$CORPUS" ] || CORPUS=/work/shared/corpus/eventlogs
FIX=tests/cli/first_boot_fixture.py
SEL=0,2,3,4,5,6,7,8,9,12,13,14
for f in "$KERNEL" "$SHIM" "$GRUB" "$LOADER"; do
        [ -f "$f" ] || { fail "missing $f: run make deps and make"; exit 1; }
done

python3 tests/cli/predict_fixture.py make "$T/f" "$KERNEL" || { fail "predict_fixture.py make"; exit 1; }
ESP=$T/f/esp

# same NAME WANT_JSON: the prediction's "pcrs" ($T/out) equal WANT.
same() {
        if python3 -c 'import json, sys
got = json.load(open(sys.argv[1]))["pcrs"]; want = json.loads(sys.argv[2])
bad = ["%s:%s" % (b, n) for b in want for n in want[b] if got.get(b, {}).get(n) != want[b][n]]
sys.exit(0 if not bad and set(got) == set(want) else "differ: %s" % bad)' "$T/out" "$2"; then pass "$1"
        else fail "$1"; fi
}
# reason PCR ERE: the JSON's unpredictable[PCR] matches ERE.
reason() {
        python3 -c 'import json, re, sys
u = json.load(open(sys.argv[1]))["unpredictable"]
sys.exit(0 if re.search(sys.argv[3], u.get(sys.argv[2], "")) else "unpredictable: %s" % u)' "$T/out" "$1" "$2"
}
# EXPECTED.json's PCRs of a corpus file, as --pcrs lines.
corpus_pcrs() {
        python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))
e = e.get("files", e)[sys.argv[2]]
for b, v in e["pcrs"].items():
    for n, h in v.items():
        print("%s:%s=%s" % (b, n, h))' "$CORPUS/EXPECTED.json" "$1" >"$T/$1.pcrs"
}

# ---- real shim + GRUB logs (Secure Boot off): mshim started by the firmware --
for n in keylime-binary_bios_measurements.bin tpm2-tools-event-gce-ubuntu-2104-log.bin; do
        corpus_pcrs "$n"
        expect_rc "$n: predicted" 0 "the baseline boot did not run mshim: predicting the first boot" \
                "$MSHIM" predict --log "$CORPUS/$n" --pcrs "$T/$n.pcrs" --esp "$ESP" --loader "$LOADER" \
                --select "$SEL" --json
        "$MSHIM" predict --log "$CORPUS/$n" --pcrs "$T/$n.pcrs" --esp "$ESP" --loader "$LOADER" \
                --select "$SEL" --json >"$T/out" 2>/dev/null
        same "$n: firmware's events kept, shim's and GRUB's replaced by mshim's and the kernel's" \
                "$(python3 "$FIX" expect "$CORPUS/$n" --esp "$ESP" --loader "$LOADER" --select "$SEL")"
        "$MSHIM" predict --log "$CORPUS/$n" --pcrs "$T/$n.pcrs" --esp "$ESP" --loader "$LOADER" \
                --json >"$T/out" 2>/dev/null; rc=$?
        [ "$rc" = 1 ] && reason 1 'boot variables' && pass "$n: PCR 1 unpredictable (the boot entry mshim install adds), exit 1" ||
                fail "$n: PCR 1 unpredictable (exit $rc)"
done
# Secure Boot on: an unsigned mshim is not started by the firmware.
n=keylime-binary_bios_measurements-secureboot.bin
corpus_pcrs "$n"
"$MSHIM" predict --log "$CORPUS/$n" --pcrs "$T/$n.pcrs" --esp "$ESP" --loader "$LOADER" --json >"$T/out" 2>/dev/null; rc=$?
[ "$rc" = 1 ] && python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if "no db entry verifies it" in d.get("refused", "") else 1)' "$T/out" &&
        pass "$n: Secure Boot on, unsigned mshim: refused (no db entry verifies it), exit 1" ||
        fail "$n: Secure Boot on, unsigned mshim: refused (exit $rc)"

# ---- keys: a MOK, a db key, a key nobody trusts -------------------------------
K=$T/keys
mkdir -p "$K"
for k in mok db other; do
        openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 3650 -subj "/CN=mshim first boot test $k/" \
                -keyout "$K/$k.key" -out "$K/$k.pem" 2>/dev/null && openssl x509 -in "$K/$k.pem" -outform DER -out "$K/$k.der" ||
                { fail "openssl keys"; exit 1; }
done
python3 -c 'import sys; sys.path.insert(0, "tests/integration"); import oracle
vendor = oracle.shim_vendor_cert(sys.argv[1])[0]
open(sys.argv[2] + "/vendor.der", "wb").write(vendor)
owner = bytes(range(16))
open(sys.argv[2] + "/moklist", "wb").write(oracle.x509_esl(open(sys.argv[2] + "/mok.der", "rb").read(), owner))
open(sys.argv[2] + "/moklist-other", "wb").write(oracle.x509_esl(open(sys.argv[2] + "/other.der", "rb").read(), owner))' \
        "$SHIM" "$K" || { fail "MokList files"; exit 1; }
OWNER=000102030405060708090a0b0c0d0e0f
SHIM_GUID=50ab5d6046e00043abb63dd810dd8b23
FW_OWNER=77fa9abd0359324dbd6028f4e78f784b
"$MSHIM" sign --key "$K/mok.key" --cert "$K/mok.pem" -o "$T/mshim-mok.efi" "$LOADER" >/dev/null 2>&1 &&
        "$MSHIM" sign --key "$K/db.key" --cert "$K/db.pem" -o "$T/mshim-db.efi" "$LOADER" >/dev/null 2>&1 &&
        "$MSHIM" sign --key "$K/other.key" --cert "$K/other.pem" -o "$T/mshim-other.efi" "$LOADER" >/dev/null 2>&1 ||
        { fail "mshim sign"; exit 1; }

# ---- shim + GRUB, Secure Boot on: mshim behind the same shim ------------------
B=$T/shim-sb
python3 "$FIX" make "$B" --chain shim --shim "$SHIM" --grub "$GRUB" --kernel "$KERNEL" --mok-list "$K/moklist" \
        --secure-boot --db "$K/db.der" || { fail "fixture make (shim, Secure Boot)"; exit 1; }
base=(--log "$B/log.bin" --pcrs "$B/pcrs.txt" --esp "$ESP")
"$MSHIM" predict "${base[@]}" --loader "$T/mshim-mok.efi" --shim "$SHIM" --mok "$K/moklist" --select "$SEL" --json \
        >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 0 ] && grep -q "started by the same shim" "$T/err" && pass "shim + GRUB, Secure Boot: predicted, exit 0, note on stderr" ||
        fail "shim + GRUB, Secure Boot: predicted (exit $rc: $(head -c 400 "$T/err"))"
same "shim + GRUB, Secure Boot: shim's events kept; MokListRT authorities: the MOK for mshim, shim's certificate for Debian's kernel" \
        "$(python3 "$FIX" expect "$B/log.bin" --esp "$ESP" --loader "$T/mshim-mok.efi" --chain shim \
           --auth "MokListRT:$OWNER:$K/mok.der" --auth "MokListRT:$SHIM_GUID:$K/vendor.der" --select "$SEL")"
# The MokList of the next boot gains a certificate after the MOK: PCR 14 follows.
cat "$K/moklist" "$K/moklist-other" >"$K/moklist2"
"$MSHIM" predict "${base[@]}" --loader "$T/mshim-mok.efi" --shim "$SHIM" --mok "$K/moklist2" --select "$SEL" --json \
        >"$T/out" 2>/dev/null
same "shim + GRUB, Secure Boot, a longer MokList: PCR 14's MokList event from shim's certificate and the new MokList" \
        "$(python3 "$FIX" expect "$B/log.bin" --esp "$ESP" --loader "$T/mshim-mok.efi" --chain shim \
           --mok-list "$K/moklist2" --vendor "$SHIM" \
           --auth "MokListRT:$OWNER:$K/mok.der" --auth "MokListRT:$SHIM_GUID:$K/vendor.der" --select "$SEL")"
# mshim signed by a key the MokList does not hold: shim refuses it.
"$MSHIM" predict "${base[@]}" --loader "$T/mshim-other.efi" --shim "$SHIM" --mok "$K/moklist" --json >"$T/out" 2>/dev/null; rc=$?
[ "$rc" = 1 ] && grep -q '"refused":"shim would refuse mshim' "$T/out" &&
        pass "shim + GRUB, Secure Boot, mshim signed by a key in no MokList: refused, exit 1" ||
        fail "shim + GRUB, Secure Boot, mshim signed by a key in no MokList: refused (exit $rc)"
# Without --mok, which MokList entry verifies mshim is not known.
"$MSHIM" predict "${base[@]}" --loader "$T/mshim-mok.efi" --shim "$SHIM" --select 4,7 --json >"$T/out" 2>/dev/null; rc=$?
[ "$rc" = 1 ] && reason 7 'give the MokList' && pass "shim + GRUB, Secure Boot, no --mok: PCR 7 unpredictable, exit 1" ||
        fail "shim + GRUB, Secure Boot, no --mok: PCR 7 unpredictable (exit $rc)"
# Another shim than the baseline's: PCRs 7 and 14 unpredictable.
"$MSHIM" predict "${base[@]}" --loader "$T/mshim-mok.efi" --shim "$OTHER_SHIM" --mok "$K/moklist" --select 7,14 --json \
        >"$T/out" 2>/dev/null; rc=$?
[ "$rc" = 1 ] && reason 7 'a new shim' && reason 14 'a new shim' &&
        pass "shim + GRUB, another shim: PCRs 7 and 14 unpredictable, exit 1" || fail "shim + GRUB, another shim (exit $rc)"
# The MokList lists mshim's SHA-256: that entry would be shim's authority.
python3 -c 'import sys, hashlib, struct; sys.path.insert(0, "tests/integration"); import oracle, uuid
d = oracle.authenticode(open(sys.argv[1], "rb").read())
sha = uuid.UUID("c1c41626-504c-4092-aca9-41f936934328").bytes_le
open(sys.argv[2], "wb").write(sha + struct.pack("<III", 28 + 48, 0, 48) + bytes(16) + d + open(sys.argv[3], "rb").read())' \
        "$T/mshim-mok.efi" "$K/moklist-hash" "$K/moklist"
"$MSHIM" predict "${base[@]}" --loader "$T/mshim-mok.efi" --shim "$SHIM" --mok "$K/moklist-hash" --select 7 --json \
        >"$T/out" 2>/dev/null; rc=$?
[ "$rc" = 1 ] && reason 7 'SHA-256 of mshim' && pass "shim + GRUB, MokList holds mshim's SHA-256: PCR 7 unpredictable" ||
        fail "shim + GRUB, MokList holds mshim's SHA-256: PCR 7 unpredictable (exit $rc)"

# ---- GRUB started by the firmware, Secure Boot on: mshim signed for db --------
G=$T/grub-sb
python3 "$FIX" make "$G" --chain grub --shim "$SHIM" --grub "$GRUB" --kernel "$KERNEL" --secure-boot \
        --db "$K/db.der" --db "$K/vendor.der" || { fail "fixture make (GRUB, Secure Boot)"; exit 1; }
"$MSHIM" predict --log "$G/log.bin" --pcrs "$G/pcrs.txt" --esp "$ESP" --loader "$T/mshim-db.efi" --select "$SEL" --json \
        >"$T/out" 2>"$T/err"; rc=$?
[ "$rc" = 0 ] && grep -q "started by the firmware" "$T/err" && pass "GRUB, Secure Boot: predicted, exit 0" ||
        fail "GRUB, Secure Boot: predicted (exit $rc: $(head -c 400 "$T/err"))"
same "GRUB, Secure Boot: the firmware's db authorities: the db key for mshim, then the one for Debian's kernel" \
        "$(python3 "$FIX" expect "$G/log.bin" --esp "$ESP" --loader "$T/mshim-db.efi" \
           --auth "db:$FW_OWNER:$K/db.der" --auth "db:$FW_OWNER:$K/vendor.der" --select "$SEL")"
"$MSHIM" predict --log "$G/log.bin" --pcrs "$G/pcrs.txt" --esp "$ESP" --loader "$T/mshim-mok.efi" --json \
        >"$T/out" 2>/dev/null; rc=$?
[ "$rc" = 1 ] && grep -q '"refused":"the firmware would refuse the new loader' "$T/out" &&
        pass "GRUB, Secure Boot, mshim signed by a key not in db: refused, exit 1" ||
        fail "GRUB, Secure Boot, mshim signed by a key not in db: refused (exit $rc)"

# ---- shim + GRUB, Secure Boot off: mshim behind shim, no --mok needed ---------
S=$T/shim
python3 "$FIX" make "$S" --chain shim --shim "$SHIM" --grub "$GRUB" --kernel "$KERNEL" || { fail "fixture make (shim)"; exit 1; }
"$MSHIM" predict --log "$S/log.bin" --pcrs "$S/pcrs.txt" --esp "$ESP" --loader "$LOADER" --shim "$SHIM" --select "$SEL" \
        --json >"$T/out" 2>/dev/null
same "shim + GRUB, Secure Boot off, behind shim: shim's PCR 14 and SbatLevel kept" \
        "$(python3 "$FIX" expect "$S/log.bin" --esp "$ESP" --loader "$LOADER" --chain shim --select "$SEL")"
"$MSHIM" predict --log "$S/log.bin" --pcrs "$S/pcrs.txt" --esp "$ESP" --loader "$LOADER" --select "$SEL" \
        --json >"$T/out" 2>/dev/null
same "shim + GRUB, Secure Boot off, started by the firmware: shim's events gone too" \
        "$(python3 "$FIX" expect "$S/log.bin" --esp "$ESP" --loader "$LOADER" --select "$SEL")"

# ---- fail closed ----------------------------------------------------------------
# A baseline that does not replay to the PCRs given.
sed 's/^sha256:4=.*/sha256:4=00000000000000000000000000000000000000000000000000000000000000aa/' "$S/pcrs.txt" >"$T/bad.pcrs"
expect_rc "a shim + GRUB log that does not replay: refused, exit 2" 2 "does not replay" \
        "$MSHIM" predict --log "$S/log.bin" --pcrs "$T/bad.pcrs" --esp "$ESP" --loader "$LOADER"
expect_rc "no --esp: exit 2, says what to give" 2 "give --loader .* and --esp" \
        "$MSHIM" predict --log "$S/log.bin" --pcrs "$S/pcrs.txt" --loader "$LOADER" --kernel "$KERNEL"
expect_rc "no --loader: exit 2" 2 "give --loader" \
        "$MSHIM" predict --log "$S/log.bin" --pcrs "$S/pcrs.txt" --esp "$ESP"
expect_rc "--next-stage with a first boot: exit 2" 2 "next-stage" \
        "$MSHIM" predict --log "$S/log.bin" --pcrs "$S/pcrs.txt" --esp "$ESP" --loader "$LOADER" --next-stage "$GRUB"
# The firmware logged something after the first application (it returned):
# PCR 4 of the next boot is not known.
R=$T/ret
python3 "$FIX" make "$R" --chain grub --shim "$SHIM" --grub "$GRUB" --kernel "$KERNEL" --return-event || { fail "fixture make (return)"; exit 1; }
"$MSHIM" predict --log "$R/log.bin" --pcrs "$R/pcrs.txt" --esp "$ESP" --loader "$LOADER" --select 4,5 --json \
        >"$T/out" 2>/dev/null; rc=$?
[ "$rc" = 1 ] && reason 4 'not an image' && ! reason 5 . 2>/dev/null &&
        pass "an event after the first application in PCR 4: PCR 4 unpredictable, PCR 5 predicted" ||
        fail "an event after the first application in PCR 4 (exit $rc: $(cat "$T/out"))"
exit $CLI_FAILED
