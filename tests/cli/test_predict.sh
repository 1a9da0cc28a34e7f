#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim predict on a boot firmware -> mshim -> Linux built by
# tests/cli/predict_fixture.py (hashlib and oracle.py: log, PCRs and the
# values each change must give), with Debian's real kernel as the entry's
# image. Then bad inputs: each exits 2 with a message naming the input and
# prints nothing on stdout. The boots themselves: tests/integration/test_predict.sh.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
KERNEL=${KERNEL:-build/kernel/vmlinuz}
FIX=tests/cli/predict_fixture.py
T=$(mktemp -d)
cli_init predict "$T"
CLI_AT_EXIT='[ -S "$T/tpm.ctrl" ] && swtpm_ioctl --unix "$T/tpm.ctrl" -s 2>/dev/null'

# expect_rc NAME RC PATTERN CMD...: exit status RC and PATTERN in stderr or
# stdout; for status 2 also nothing on stdout.
expect_rc() {
        local name=$1 want=$2 pat=$3; shift 3
        "$@" >"$T/out" 2>"$T/err"; local rc=$?
        if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$T/err" "$T/out"; } &&
           { [ "$want" != 2 ] || [ ! -s "$T/out" ]; }; then pass "$name"
        else fail "$name (exit $rc, want $want; stderr: $(head -c 300 "$T/err"); stdout: $(head -c 200 "$T/out"))"; fi
}
# same_pcrs NAME EXPECTED_JSON: the prediction's "pcrs" equal the fixture's.
same_pcrs() {
        if python3 -c 'import json, sys
got = json.load(open(sys.argv[1]))["pcrs"]; want = json.loads(sys.argv[2])
sys.exit(0 if got == want else "got %s\nwant %s" % (got, want))' "$T/out" "$2"; then pass "$1"; else fail "$1"; fi
}
# valid: the JSON on stdout follows docs/schema/mshim-predict-1.schema.json.
valid() {
        if python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open("docs/schema/mshim-predict-1.schema.json")))' "$T/out"; then
                pass "$1: valid against docs/schema/mshim-predict-1.schema.json"
        else fail "$1: valid against docs/schema/mshim-predict-1.schema.json"; fi
}
json_field() { python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]], sort_keys=True))' "$T/out" "$1"; }

[ -f "$KERNEL" ] || { fail "missing $KERNEL: run make deps"; exit 1; }
F=$T/boot
python3 "$FIX" make "$F" "$KERNEL" || { fail "fixture"; exit 1; }
base=(--log "$F/log.bin" --pcrs "$F/pcrs.txt")

# ---- predictions ------------------------------------------------------------
expect_rc "unchanged ESP" 0 "" "$MSHIM" predict "${base[@]}" --esp "$F/esp" --json
same_pcrs "unchanged ESP predicts the baseline's replay" "$(python3 "$FIX" expect "$F")"
valid "unchanged ESP"
[ "$(json_field changed)" = "[]" ] && [ "$(json_field unpredictable)" = "{}" ] &&
        [ "$(json_field schema)" = '"mshim-predict/1"' ] && pass "unchanged: nothing changed, schema mshim-predict/1" ||
        fail "unchanged: nothing changed, schema mshim-predict/1 ($(cat "$T/out"))"

expect_rc "new options" 0 "" "$MSHIM" predict "${base[@]}" --options "quiet mshim.x=1" --json
same_pcrs "new options: PCRs 9 and 12 from the UTF-16LE command line" "$(python3 "$FIX" expect "$F" --options "quiet mshim.x=1")"
[ "$(json_field changed)" = "[9, 12]" ] && pass "new options: changed [9, 12]" || fail "new options: changed $(json_field changed)"

printf 'another initrd' > "$T/initrd2"
expect_rc "new initrd" 0 "" "$MSHIM" predict "${base[@]}" --initrd "$T/initrd2" --json
same_pcrs "new initrd: PCR 9 from its hash" "$(python3 "$FIX" expect "$F" --initrd "$T/initrd2")"

expect_rc "--select 12, text" 0 "PCR 12: " "$MSHIM" predict "${base[@]}" --options "x" --select 12
if grep -q "PCR  4" "$T/out"; then fail "--select 12 shows only PCR 12"; else pass "--select 12 shows only PCR 12"; fi
grep -q "changed" "$T/out" && pass "text marks the changed PCR" || fail "text marks the changed PCR"

# ---- what the rules do not cover: unpredictable, exit 1 ------------------------
G=$T/grub
python3 "$FIX" make "$G" "$KERNEL" --grub || fail "fixture (grub)"
expect_rc "GRUB in the baseline: new options unpredictable" 1 "" "$MSHIM" predict --log "$G/log.bin" --pcrs "$G/pcrs.txt" --options x --json
[ "$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["unpredictable"]))' "$T/out")" = "['12', '9']" ] &&
        grep -q GRUB "$T/out" && pass "GRUB: PCRs 9 and 12 unpredictable, the reason names GRUB" ||
        fail "GRUB: PCRs 9 and 12 unpredictable ($(cat "$T/out"))"
valid "GRUB"
# ---- GRUB as next stage: the fixture's chainload boot -------------------------
R=$T/grubboot
python3 "$FIX" make-grub "$R" "$KERNEL" || fail "fixture (make-grub)"
rb=(--log "$R/log.bin" --pcrs "$R/pcrs.txt")
expect_rc "GRUB: the same grub.cfg predicts the baseline" 0 "" "$MSHIM" predict "${rb[@]}" --grub-cfg "$R/grub.cfg" --json
same_pcrs "GRUB: unchanged PCRs" "$(python3 "$FIX" expect-grub "$R")"
[ "$(json_field changed)" = "[]" ] && pass "GRUB: nothing changed" || fail "GRUB: nothing changed ($(json_field changed))"
sed 's/^linuxefi .*/linuxefi \/vmlinuz console=ttyS0 mshim.grub=2/' "$R/grub.cfg" > "$T/grub2.cfg"
printf 'another initrd\n' > "$T/initrd3"
expect_rc "GRUB: new linux line and initrd" 0 "" "$MSHIM" predict "${rb[@]}" --grub-cfg "$T/grub2.cfg" --initrd "$T/initrd3" --json
same_pcrs "GRUB: PCRs 8 and 9 as the fixture computes them" \
        "$(python3 "$FIX" expect-grub "$R" --options "console=ttyS0 mshim.grub=2" --initrd "$T/initrd3")"
[ "$(json_field changed)" = "[8, 9]" ] && pass "GRUB: changed 8 and 9" || fail "GRUB: changed 8 and 9 ($(json_field changed))"
valid "GRUB prediction"
expect_rc "GRUB: --options with a GRUB baseline is unpredictable" 1 "grub.cfg's" "$MSHIM" predict "${rb[@]}" --options x
S=$T/sb
python3 "$FIX" make "$S" "$KERNEL" --authority || fail "fixture (authority)"
expect_rc "Secure Boot authority and a new kernel: PCR 7 unpredictable" 1 "Secure Boot" \
        "$MSHIM" predict --log "$S/log.bin" --pcrs "$S/pcrs.txt" --kernel "$KERNEL" --select 7
expect_rc "... the same with --select 4: exit 0" 0 "" \
        "$MSHIM" predict --log "$S/log.bin" --pcrs "$S/pcrs.txt" --kernel "$KERNEL" --select 4
expect_rc "a kernel without a readable version: PCR 9 unpredictable" 1 "names no version" \
        "$MSHIM" predict "${base[@]}" --kernel build/mshimx64.efi
cp -r "$F/esp" "$T/efi-esp"
printf 'title an EFI program\nefi /x.efi\n' > "$T/efi-esp/loader/entries/a.conf"
expect_rc "an efi entry: the PCRs a next stage may extend are unpredictable" 1 "EFI program" \
        "$MSHIM" predict "${base[@]}" --esp "$T/efi-esp" --json
[ "$(python3 -c 'import json,sys; print(sorted(map(int, json.load(open(sys.argv[1]))["unpredictable"])))' "$T/out")" = \
  "[4, 5, 7, 8, 9, 12, 13, 14]" ] && pass "efi entry: PCRs 4, 5, 7, 8, 9, 12, 13, 14 unpredictable" ||
        fail "efi entry: PCRs 4, 5, 7, 8, 9, 12, 13, 14 unpredictable ($(cat "$T/out"))"

# ---- TOTP (issue 20): the initrd bound in PCR 12, the built-in floor ----------
# A baseline with loader.conf "totp show" (the fixture: hashlib and oracle.py
# compute the initrd event and the fence); the loaders: build/mshimx64.efi
# (built-in totp no) and a copy with built-in "totp require".
TB=$T/totpboot
python3 "$FIX" make "$TB" "$KERNEL" --totp || fail "fixture (totp)"
tb=(--log "$TB/log.bin" --pcrs "$TB/pcrs.txt")
EFI=${EFI:-build/mshimx64.efi}
"$MSHIM" boot-policy --set totp=require -o "$T/require.efi" "$EFI" >/dev/null || fail "set-up: boot-policy --set totp=require"
expect_rc "TOTP: unchanged ESP" 0 "" "$MSHIM" predict "${tb[@]}" --esp "$TB/esp" --json
same_pcrs "TOTP: the initrd event and the fence predicted from the ESP's files" "$(python3 "$FIX" expect "$TB" --totp)"
printf 'an evil maid'"'"'s initramfs' > "$T/evil-initrd"
expect_rc "TOTP: another initrd" 0 "" "$MSHIM" predict "${tb[@]}" --initrd "$T/evil-initrd" --json
same_pcrs "TOTP: another initrd changes PCR 12 (its size and SHA-256), not only PCR 9" \
        "$(python3 "$FIX" expect "$TB" --totp --initrd "$T/evil-initrd")"
[ "$(json_field changed)" = "[9, 12]" ] && pass "TOTP: another initrd: changed [9, 12]" ||
        fail "TOTP: another initrd: changed $(json_field changed)"
expect_rc "TOTP: another initrd at the TOTP point" 0 "" "$MSHIM" predict "${tb[@]}" --initrd "$T/evil-initrd" \
        --totp-point --select 12 --json
[ "$(json_field changed)" = "[12]" ] && pass "TOTP: the TOTP point's PCR 12 binds the initrd" ||
        fail "TOTP: the TOTP point's PCR 12 binds the initrd ($(json_field changed))"
printf 'timeout 0\ndefault a\ntotp no\n' > "$T/totp-no.conf"
expect_rc "TOTP: built-in totp require, loader.conf totp no" 0 "" \
        "$MSHIM" predict "${tb[@]}" --loader-conf "$T/totp-no.conf" --loader "$T/require.efi" --json
same_pcrs "TOTP: the floor keeps the initrd event and the fence (loader.conf cannot lower it)" \
        "$(python3 "$FIX" expect "$TB" --totp --conf "$T/totp-no.conf" --loader "$T/require.efi")"
expect_rc "TOTP: built-in totp no, loader.conf totp no" 0 "" \
        "$MSHIM" predict "${tb[@]}" --loader-conf "$T/totp-no.conf" --loader "$EFI" --json
same_pcrs "TOTP: no floor, totp no: PCR 12 is the command line alone" \
        "$(python3 "$FIX" expect "$TB" --conf "$T/totp-no.conf" --loader "$EFI")"
expect_rc "TOTP: loader.conf totp no without the loader: unknown floor, PCR 12 unpredictable" 1 "give both (--loader" \
        "$MSHIM" predict "${tb[@]}" --loader-conf "$T/totp-no.conf" --select 12
cp -r "$TB/esp" "$T/totp-efi-esp"
printf 'title an EFI program\nefi /x.efi\n' > "$T/totp-efi-esp/loader/entries/a.conf"
expect_rc "TOTP: built-in totp require and an efi entry: no boot" 1 "totp require: mshim starts no EFI program" \
        "$MSHIM" predict "${tb[@]}" --esp "$T/totp-efi-esp" --loader "$T/require.efi" --json
grep -q '"refused"' "$T/out" && pass "TOTP: efi entry under totp require: refused in the JSON" ||
        fail "TOTP: efi entry under totp require: refused in the JSON ($(cat "$T/out"))"
# An entry whose options hold initrd= (issue 20, finding 8): unusable.
printf 'title A\nlinux /vmlinuz\noptions quiet initrd=\\evil.img\n' > "$T/initrd-opt.conf"
expect_rc "an entry with initrd= in its options is refused, named" 2 "initrd-opt.conf: its options (line 3) hold initrd=" \
        "$MSHIM" predict "${base[@]}" --entry "$T/initrd-opt.conf"
cp -r "$F/esp" "$T/initrd-opt-esp"
cp "$T/initrd-opt.conf" "$T/initrd-opt-esp/loader/entries/a.conf"
expect_rc "an ESP whose only entry has initrd= in its options: no usable entry" 2 "no usable entry" \
        "$MSHIM" predict "${base[@]}" --esp "$T/initrd-opt-esp"

# ---- predictions say what was asked (issue 22) --------------------------------
# --select: every PCR asked for, one nothing extends (23) at its reset
# value, zero: hashlib's digest size of zero bytes; 4 and 7 the fixture's.
expect_rc "--select 4,7,23 --json" 0 "" "$MSHIM" predict "${base[@]}" --esp "$F/esp" --select 4,7,23 --json
if python3 -c 'import hashlib, json, sys
got = json.load(open(sys.argv[1])); want = json.loads(sys.argv[2])
assert got["point"] == "boot", got["point"]
for bank, vals in want.items():
    w = {k: v for k, v in vals.items() if k in ("4", "7")}
    w["23"] = bytes(hashlib.new(bank).digest_size).hex()
    assert got["pcrs"][bank] == w, (bank, got["pcrs"][bank], w)
assert set(got["pcrs"]) == set(want), got["pcrs"].keys()' "$T/out" "$(python3 "$FIX" expect "$F")"; then
        pass "--select 4,7,23: PCR 23 listed as zeros (hashlib digest sizes), 4 and 7 the fixture's, point boot"
else fail "--select 4,7,23: PCR 23 listed as zeros (hashlib digest sizes), 4 and 7 the fixture's, point boot"; fi
valid "--select 4,7,23"
expect_rc "--select 4,7,23, text" 0 "" "$MSHIM" predict "${base[@]}" --esp "$F/esp" --select 4,7,23
[ "$(grep -c "^  PCR 23: $(printf '%064d' 0)\$" "$T/out")" = 1 ] && [ "$(grep -c "^  PCR 23: $(printf '%040d' 0)\$" "$T/out")" = 1 ] &&
        pass "--select 4,7,23, text: PCR 23 shown as zeros in sha1 and sha256" ||
        fail "--select 4,7,23, text: PCR 23 shown as zeros in sha1 and sha256 ($(cat "$T/out"))"
expect_rc "--select 4,20: PCR 20 (reset value platform-dependent) unpredictable, exit 1" 1 "PCR 20: unpredictable: nothing in the boot extends it" \
        "$MSHIM" predict "${base[@]}" --esp "$F/esp" --select 4,20
# --totp-point without --select: the TOTP policy's PCRs, not exit 1 on 9.
expect_rc "--totp-point, no enrolment: the default TOTP PCRs 4,5,7,12" 0 "" \
        "$MSHIM" predict "${base[@]}" --esp "$F/esp" --totp-point --state-dir "$T/no-state" --json
[ "$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
print(d["point"], *(sorted(map(int, v)) for v in d["pcrs"].values()))' "$T/out")" = "totp [4, 5, 7, 12] [4, 5, 7, 12]" ] &&
        pass "--totp-point, no enrolment: point totp, PCRs 4,5,7,12 in each bank" ||
        fail "--totp-point, no enrolment: point totp, PCRs 4,5,7,12 in each bank ($(cat "$T/out"))"
valid "--totp-point"
# An enrolment in the state directory (its codec's form, docs/CONFIG.md):
# its PCRs, 4,7.
mkdir -p "$T/state"
python3 -c 'z = "0" * 64
print("mshim-totp 1\nhandle 0x81004d54\nname 000b" + z + "\npolicy " + z + "\nmode literal\nbank sha256\npcrs 4,7\nstate " + z * 2)' \
        >"$T/state/totp"
expect_rc "--totp-point with an enrolment selecting 4,7" 0 "" \
        "$MSHIM" predict "${base[@]}" --esp "$F/esp" --totp-point --state-dir "$T/state" --json
[ "$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
print(*(sorted(map(int, v)) for v in d["pcrs"].values()))' "$T/out")" = "[4, 7] [4, 7]" ] &&
        pass "--totp-point: the state directory's enrolment's PCRs (4,7)" ||
        fail "--totp-point: the state directory's enrolment's PCRs (4,7) ($(cat "$T/out"))"
printf 'mshim-totp 1\npcrs 4\n' >"$T/state/totp"
expect_rc "--totp-point: a malformed enrolment is refused, named" 2 "$T/state/totp" \
        "$MSHIM" predict "${base[@]}" --esp "$F/esp" --totp-point --state-dir "$T/state"
expect_rc "--state-dir without --totp-point" 2 "--state-dir goes with --totp-point" \
        "$MSHIM" predict "${base[@]}" --esp "$F/esp" --state-dir "$T/state"

# ---- Secure Boot updates: db/dbx appends (the fixture's PCR 7 as OVMF logs it) ----
X=$T/sbx
python3 "$FIX" make "$X" "$KERNEL" --secure-boot || fail "fixture (secure boot)"
sbase=(--log "$X/log.bin" --pcrs "$X/pcrs.txt")
# The update files from the UEFI spec layouts (32.4.1, 8.2.2), with hashlib.
python3 - "$X" "$KERNEL" <<'PY' || fail "Secure Boot update files"
import hashlib, struct, sys, uuid
sys.path.insert(0, "tests/integration")
import oracle
x, kernel = sys.argv[1], open(sys.argv[2], "rb").read()
X509, SHA256 = oracle.GUID_X509, uuid.UUID("c1c41626-504c-4092-aca9-41f936934328").bytes_le
PKCS7 = uuid.UUID("4aafd29d-68df-49ee-8aa9-347d375665a7").bytes_le
def esl(t, sig, owner=b"an update owner."):
    return t + struct.pack("<III", 28 + 16 + len(sig), 0, 16 + len(sig)) + owner + sig
def auth2(lists, guid=PKCS7, nanosecond=0):
    p7 = b"\x30 stands for the KEK's PKCS#7 signature"
    ts = struct.pack("<HBBBBBBIhBB", 2026, 1, 2, 3, 4, 5, 0, nanosecond, 0, 0, 0)
    return ts + struct.pack("<IHH", 24 + len(p7), 0x0200, 0x0EF1) + guid + p7 + lists
w = lambda n, d: open("%s/%s" % (x, n), "wb").write(d)
w("db.esl", esl(X509, b"\x30 a second db certificate"))
w("dbx.lists", esl(SHA256, hashlib.sha256(b"no image").digest()))
w("dbx.auth", auth2(esl(SHA256, hashlib.sha256(b"no image").digest())))
w("dbx-kernel.esl", esl(SHA256, oracle.authenticode(kernel, "sha256")))
w("cut.esl", esl(X509, b"\x30 a second db certificate")[:-1])
w("badsize.esl", SHA256 + struct.pack("<III", 28 + 16 + 31, 0, 16 + 31) + bytes(47))
w("badguid.auth", auth2(esl(SHA256, bytes(32)), guid=SHA256))
w("badtime.auth", auth2(esl(SHA256, bytes(32)), nanosecond=1))
w("cutauth.auth", auth2(esl(SHA256, bytes(32)))[:50])
w("empty.esl", b"")
PY
expect_rc "db append" 0 "" "$MSHIM" predict "${sbase[@]}" --db-append "$X/db.esl" --json
same_pcrs "db append: PCR 7's db event with the certificate appended" \
        "$(python3 "$FIX" expect "$X" --secure-boot --db-add "$X/db.esl")"
[ "$(json_field changed)" = "[7]" ] && pass "db append: changed [7]" || fail "db append: changed $(json_field changed)"
valid "db append"
expect_rc "dbx append, an authenticated payload" 0 "" "$MSHIM" predict "${sbase[@]}" --dbx-append "$X/dbx.auth" --json
same_pcrs "dbx append: the header skipped, PCR 7's dbx event with the list" \
        "$(python3 "$FIX" expect "$X" --secure-boot --dbx-add "$X/dbx.lists")"
expect_rc "dbx append of the kernel's Authenticode SHA-256: refused, exit 1" 1 "" \
        "$MSHIM" predict "${sbase[@]}" --dbx-append "$X/dbx-kernel.esl" --json
python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))
sys.exit(0 if "refuse" in j.get("refused", "") and j["unpredictable"].get("4") == j["refused"] and not j["pcrs"]["sha256"].get("7") else 1)' "$T/out" &&
        pass "refused: \"refused\" says why, PCRs 4 and 7 unpredictable with it" || fail "refused: $(cat "$T/out")"
valid "refused"
expect_rc "refused, text: 'No boot:' first" 1 "^No boot: the firmware would refuse" \
        "$MSHIM" predict "${sbase[@]}" --dbx-append "$X/dbx-kernel.esl"
for f in cut.esl:"truncated" badsize.esl:"SignatureSize" badguid.auth:"CertType" badtime.auth:"TimeStamp" \
         cutauth.auth:"dwLength runs past" empty.esl:"empty" log.bin:"size out of bounds"; do
        expect_rc "--db-append ${f%%:*}: refused" 2 "${f%%:*}: not an EFI_SIGNATURE_LIST.*${f#*:}" \
                "$MSHIM" predict "${sbase[@]}" --db-append "$X/${f%%:*}"
done
expect_rc "--dbx-append of an unreadable file" 2 "cannot open $T/none" "$MSHIM" predict "${sbase[@]}" --dbx-append "$T/none"
expect_rc "--db-append twice" 2 "db-append" "$MSHIM" predict "${sbase[@]}" --db-append "$X/db.esl" --db-append "$X/db.esl"

# ---- bad input: exit 2, a message naming it, nothing printed ---------------------
sed 's/^\(sha256:4=\)./\10/; s/^\(sha256:4=0\)0/\11/' "$F/pcrs.txt" > "$T/wrong.txt"
expect_rc "a log that does not replay is refused, naming the PCR" 2 "does not replay.*sha256 PCR 4" \
        "$MSHIM" predict --log "$F/log.bin" --pcrs "$T/wrong.txt" --options x
grep -v '^sha1:9=' "$F/pcrs.txt" > "$T/short.txt"
expect_rc "a PCR without a value is refused" 2 "sha1 PCR 9 (no value given)" \
        "$MSHIM" predict --log "$F/log.bin" --pcrs "$T/short.txt"
head -c 100 "$F/log.bin" > "$T/cut.bin"
expect_rc "a truncated log" 2 "cut.bin: malformed event log" "$MSHIM" predict --log "$T/cut.bin" --pcrs "$F/pcrs.txt"
expect_rc "a kernel that is not a PE" 2 "pcrs.txt: not a PE image" "$MSHIM" predict "${base[@]}" --kernel "$F/pcrs.txt"
expect_rc "a loader that is not a PE" 2 "log.bin: not a PE image" "$MSHIM" predict "${base[@]}" --loader "$F/log.bin"
expect_rc "an unreadable initrd" 2 "cannot open $T/none" "$MSHIM" predict "${base[@]}" --initrd "$T/none"
mkdir -p "$T/empty"
expect_rc "an ESP without entries" 2 "loader/entries" "$MSHIM" predict "${base[@]}" --esp "$T/empty"
expect_rc "--entry-id that is not there" 2 "no entry nope" "$MSHIM" predict "${base[@]}" --esp "$F/esp" --entry-id nope
cp "$F/esp/loader/entries/a.conf" "$F/esp/loader/entries/b.conf"
expect_rc "--entry-id that mshim would not boot first" 2 "mshim would boot a.conf, not b" \
        "$MSHIM" predict "${base[@]}" --esp "$F/esp" --entry-id b

# ---- --list-entries: the boot plan, nothing predicted ---------------------------
# The order by hand from the Boot Loader Specification and systemd-boot's
# rules: the default (OneShot, else Default, else loader.conf's), then the
# others in BLS order after it (without sort-key or version: by name,
# descending, newest first: c b a), wrapping round; a broken entry unusable.
# No --log, --pcrs or TPM: none is read.
L=$T/list-esp
mkdir -p "$L/loader/entries"
for e in a b c; do printf 'title %s\nlinux /vmlinuz\n' "$e" >"$L/loader/entries/$e.conf"; done
printf 'no such key\n' >"$L/loader/entries/bad.conf"
printf 'default b\n' >"$L/loader/loader.conf"
lists() {
        local name=$1 want=$2; shift 2
        expect_rc "--list-entries, $name: exit 0" 0 "" "$MSHIM" predict --list-entries --esp "$L" "$@"
        check "--list-entries, $name: $(tr '\n' ' ' <<<"$want")" test "$(cat "$T/out")" = "$want"
}
lists "loader.conf's default b" $'boot b.conf\nboot a.conf\nboot c.conf\nunusable bad.conf' --default '' --oneshot ''
lists "--default c.conf" $'boot c.conf\nboot b.conf\nboot a.conf\nunusable bad.conf' --default c.conf --oneshot ''
lists "--oneshot a beats --default c" $'boot a.conf\nboot c.conf\nboot b.conf\nunusable bad.conf' --default c --oneshot a
rm "$L/loader/entries/"[abc].conf
lists "no usable entry" $'unusable bad.conf\nchainload' --default '' --oneshot ''
expect_rc "--list-entries without --esp" 2 "--list-entries needs --esp" "$MSHIM" predict --list-entries
expect_rc "--list-entries with --log" 2 "goes with --esp, --loader-conf" \
        "$MSHIM" predict --list-entries --esp "$L" --log "$F/log.bin"
rm "$F/esp/loader/entries/b.conf"
rm "$F/esp/vmlinuz"
expect_rc "an ESP without the entry's kernel" 2 "esp/vmlinuz" "$MSHIM" predict "${base[@]}" --esp "$F/esp"
cp "$KERNEL" "$F/esp/vmlinuz"
expect_rc "options that are not UTF-8" 2 "not valid UTF-8" "$MSHIM" predict "${base[@]}" --options $'\xff'
expect_rc "--select out of range" 2 "--select 24" "$MSHIM" predict "${base[@]}" --select 24
printf 'linux /vmlinuz quiet\nboot\n' > "$T/grub.cfg"
expect_rc "a next stage that is not a PE" 2 "pcrs.txt: not a PE image (a GRUB EFI image)" \
        "$MSHIM" predict "${base[@]}" --next-stage "$F/pcrs.txt"
expect_rc "an unreadable next stage" 2 "cannot open $T/none" "$MSHIM" predict "${base[@]}" --next-stage "$T/none"
expect_rc "an unreadable grub.cfg" 2 "cannot open $T/none" "$MSHIM" predict "${base[@]}" --grub-cfg "$T/none"
expect_rc "--grub-cfg twice" 2 "--grub-cfg" "$MSHIM" predict "${base[@]}" --grub-cfg "$T/grub.cfg" --grub-cfg "$T/grub.cfg"
for o in "--esp $F/esp" "--options x" "--loader-conf $T/grub.cfg" "--entry $T/grub.cfg"; do
        # shellcheck disable=SC2086
        expect_rc "--grub-cfg with ${o%% *}" 2 "predict GRUB's boot" "$MSHIM" predict "${base[@]}" --grub-cfg "$T/grub.cfg" $o
done
expect_rc "--grub-cfg for a boot that did not chainload GRUB: PCRs 8 and 9 unpredictable" 1 "did not chainload GRUB" \
        "$MSHIM" predict "${base[@]}" --grub-cfg "$T/grub.cfg" --json
[ "$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["unpredictable"]))' "$T/out")" = "['8', '9']" ] &&
        pass "... exactly PCRs 8 and 9" || fail "... exactly PCRs 8 and 9 ($(cat "$T/out"))"
valid "GRUB cfg, not chainloaded"
# Behind shim: bad input is named; a boot without shim is unpredictable.
printf 'not a signature list' > "$T/mok.bin"
expect_rc "--mok without --shim" 2 "--mok needs --shim" "$MSHIM" predict "${base[@]}" --mok "$T/mok.bin"
expect_rc "a shim that is not a PE" 2 "pcrs.txt: not a PE image (shimx64.efi)" \
        "$MSHIM" predict "${base[@]}" --shim "$F/pcrs.txt"
expect_rc "a MokList that is not EFI_SIGNATURE_LISTs" 2 "mok.bin: not a MokList" \
        "$MSHIM" predict "${base[@]}" --shim build/mshimx64.efi --mok "$T/mok.bin"
expect_rc "an unreadable MokList" 2 "cannot open $T/none" \
        "$MSHIM" predict "${base[@]}" --shim build/mshimx64.efi --mok "$T/none"
: > "$T/empty.bin"
expect_rc "--shim and --mok after a boot without shim: unpredictable" 1 "did not run shim" \
        "$MSHIM" predict "${base[@]}" --shim build/mshimx64.efi --mok "$T/empty.bin" --json
expect_rc "--pcrs with --tpm" 2 "cannot be used together" "$MSHIM" predict "${base[@]}" --tpm

# ---- against a TPM (swtpm): the default when one is there -----------------------
if swtpm socket --tpm2 --tpmstate dir="$T" --server type=unixio,path="$T/tpm" \
        --ctrl type=unixio,path="$T/tpm.ctrl" --flags not-need-init,startup-clear --daemon; then
        export TPM2TOOLS_TCTI="swtpm:path=$T/tpm"
        while read -r x; do tpm2_pcrextend "$x" || fail "tpm2_pcrextend $x"; done < "$F/extends.txt"
        expect_rc "the TPM holds the baseline: predicted without --tpm or --pcrs" 0 "" \
                "$MSHIM" predict --log "$F/log.bin" --options "quiet mshim.x=1" --json
        same_pcrs "... with the values the fixture computes" "$(python3 "$FIX" expect "$F" --options "quiet mshim.x=1")"
        tpm2_pcrextend "9:sha256=0x$(printf '%064d' 1)"
        expect_rc "one extend more in the TPM: the log is refused, naming sha256 PCR 9 only" 2 \
                "to the TPM's PCRs: sha256 PCR 9; refusing" "$MSHIM" predict --log "$F/log.bin" --tpm
else
        fail "swtpm starts"
fi
