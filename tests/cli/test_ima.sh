#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim verify ima: an IMA measurement list judged against PCR 10 and an
# allowlist (docs/ATTESTATION.md "IMA"). The lists are built by
# tests/cli/ima_fixture.py (hashlib, the kernel's documented layout); PCR
# 10's values are a real TPM's: each entry's digests are extended into a
# swtpm with tpm2_pcrextend, as the kernel extends them, and read back
# with tpm2_pcrread. Nothing expected comes from mshim.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
MSHIM=${MSHIM:-build/test/mshim}
mkdir -p build
t=$(mktemp -d "$PWD/build/imatest.XXXXXX")
cli_init ima "$t"
FIX=tests/cli/ima_fixture.py
cli_need swtpm tpm2_pcrextend tpm2_pcrread python3

# pcr10 BANK: PCR 10 of the swtpm in BANK, hex.
pcr10() { tpm2_pcrread "$1:10" -o "$t/pcr.bin" >/dev/null 2>&1 && xxd -p -c 256 "$t/pcr.bin"; }
# refused1 NAME REGEX CMD...: exit 1 (a refusal) with REGEX on stderr.
refused1() { local n=$1 re=$2; shift 2; expect_rc "$n" 1 "$re" "$@"; }

# ---- a list of 50 files, the TPM's PCR 10 after it ----
python3 "$FIX" make "$t/list.bin" --entries 50 --allow "$t/allow" --expect "$t/want.json" --extends "$t/ext" ||
        { fail "set-up: ima_fixture.py make"; exit 1; }
cli_swtpm "$t/tpm" || { fail "swtpm starts"; exit 1; }
cli_extend "$t/ext"
S256=$(pcr10 sha256) S1=$(pcr10 sha1)
check "the fixture's PCR 10 (hashlib) is the TPM's after the kernel's extends" python3 -c '
import json, sys; w = json.load(open(sys.argv[1])); sys.exit(w["sha256"] != sys.argv[2] or w["sha1"] != sys.argv[3])' \
        "$t/want.json" "$S256" "$S1"

"$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --pcr "sha1:$S1" --ima-allow "$t/allow" >"$t/out" 2>"$t/err"
check "every file allowed, replayed in sha256 and sha1: accepted (exit 0)" test $? = 0
check "... says how many entries PCR 10 covers, and that all were allowed" bash -c \
        "grep -q '^IMA list .*: 51 entries; the first 51 replay to PCR 10 in sha256, sha1' '$t/out' &&
         grep -q 'every entry allowed' '$t/out'"
AGG=$(python3 -c 'import hashlib; print(hashlib.sha256(bytes(320)).hexdigest())')
check "... boot_aggregate shown (over PCRs 0-9 at zero: hashlib)" grep -q "^boot_aggregate: sha256:$AGG\$" "$t/out"
expect_rc "without an allowlist: the replay alone, accepted" 0 "" "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256"

# ---- what PCR 10 refuses: the list edited ----
python3 - "$t/list.bin" "$t/edited.bin" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
i = d.index(b"/usr/bin/f000007")
d[i + len(b"/usr/bin/f00000")] = ord("8")        # f000007 -> f000008: a path edited
open(sys.argv[2], "wb").write(d)
PY
refused1 "an entry's path edited: refused, it does not replay to PCR 10" "does not replay to PCR 10 in sha256" \
        "$MSHIM" verify ima "$t/edited.bin" --pcr "sha256:$S256" --ima-allow "$t/allow"
python3 - "$t/list.bin" "$t/removed.bin" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
out, off, n = b"", 0, 0
while off < len(d):
    nl = struct.unpack_from("<I", d, off + 24)[0]
    dl = struct.unpack_from("<I", d, off + 28 + nl)[0]
    end = off + 32 + nl + dl
    n += 1
    if n != 10:
        out += d[off:end]
    off = end
open(sys.argv[2], "wb").write(out)
PY
refused1 "an entry removed: refused" "does not replay to PCR 10" \
        "$MSHIM" verify ima "$t/removed.bin" --pcr "sha256:$S256"
refused1 "another bank's value wrong (sha1 of another list): refused, naming the bank" "does not replay to PCR 10 in sha1" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --pcr "sha1:$(printf '%040d' 0)"

# ---- what the allowlist refuses ----
grep -v f000023 "$t/allow" >"$t/allow.cut"
refused1 "a file not in the allowlist: refused, the entry and its path named" \
        "IMA entry 24 (/usr/bin/f000023, ima-ng): its file is not in the allowlist" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.cut"
sed 's|f000023$|f000099|' "$t/allow" >"$t/allow.moved"
refused1 "its digest allowed at another path only: refused" "IMA entry 24 .*not in the allowlist" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.moved"
{ grep -v f000023 "$t/allow"; grep f000023 "$t/allow" | cut -d' ' -f1; } >"$t/allow.digest"
expect_rc "a rule of a digest alone allows that content at any path" 0 "" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.digest"
{ echo "# paths allowed whatever their content"; grep -v f000023 "$t/allow"; echo /usr/bin/f000023; } >"$t/allow.path"
expect_rc "a rule of a path alone allows any content there; comments skipped" 0 "" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.path"
sed 's/^\([0-9a-f]*\)  /sha256:\1 /' "$t/allow" >"$t/allow.prefixed"
expect_rc "ALG:HEX digests with one space (sha256sum's other forms) are read" 0 "" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.prefixed"

# ---- a violation, and entries after the quote ----
python3 "$FIX" make "$t/viol.bin" --entries 5 --violation 4 --allow "$t/vallow" --extends "$t/vext" || fail "set-up: violation list"
swtpm_ioctl --unix "$t/tpm/srv.ctrl" -i >/dev/null && tpm2_startup -c || fail "swtpm reset"
cli_extend "$t/vext"
V=$(pcr10 sha256)
refused1 "a measurement violation (all ones in PCR 10) with an allowlist: refused, its data bound by no PCR" \
        "IMA entry 4 (/usr/bin/f000003, ima-ng): a measurement violation" \
        "$MSHIM" verify ima "$t/viol.bin" --pcr "sha256:$V" --ima-allow "$t/vallow"
"$MSHIM" verify ima "$t/viol.bin" --pcr "sha256:$V" >"$t/out" 2>&1
check "... without one: accepted, the violation counted" bash -c "[ $? = 0 ] && grep -q '^violations: 1' '$t/out'"
# The first 20 entries only in the TPM: IMA appended the rest after the quote.
swtpm_ioctl --unix "$t/tpm/srv.ctrl" -i >/dev/null && tpm2_startup -c || fail "swtpm reset"
cli_extend <(head -20 "$t/ext")
P20=$(pcr10 sha256)
grep -v f000030 "$t/allow" >"$t/allow.late"
"$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$P20" --ima-allow "$t/allow.late" >"$t/out" 2>"$t/err"
check "entries after the quote are not judged: a file past entry 20 missing from the allowlist, accepted" test $? = 0
check "... and said: 31 entries after the quote" grep -q "^after the quote: 31 entries, not judged" "$t/out"

# ---- the list in the evidence: mshim attest quote --ima ----
# A fresh TPM: the kernel's extends of the list, then attest init (EK, AK)
# and a quote with --ima-log; PCR 10 is quoted, and the list read after the
# quote travels base64 in "ima_log".
swtpm_ioctl --unix "$t/tpm/srv.ctrl" -i >/dev/null && tpm2_startup -c || fail "swtpm reset"
cli_extend "$t/ext"
mkdir -p "$t/att"
"$MSHIM" attest init --out-dir "$t/att" >/dev/null 2>"$t/err" || fail "attest init" "$(cat "$t/err")"
NONCE=0011223344556677
# Only PCR 10 quoted: the firmware log sent (a real one) is not this swtpm's.
"$MSHIM" attest quote --nonce $NONCE --select 10 --log tests/data/mshim-boot/eventlog.bin --ima-log "$t/list.bin" \
        -o "$t/ev.json" 2>"$t/err" || fail "attest quote --ima-log" "$(cat "$t/err")"
check "attest quote --ima-log: the evidence holds the list byte for byte and the TPM's PCR 10 (tpm2_pcrread)" python3 - \
        "$t/ev.json" "$t/list.bin" "$(pcr10 sha256)" <<'PY'
import base64, json, sys
e = json.load(open(sys.argv[1]))
ok = base64.b64decode(e["ima_log"]["data"]) == open(sys.argv[2], "rb").read()
ok = ok and e["ima_log"]["source"] == sys.argv[2] and e["pcrs"]["sha256"]["10"] == sys.argv[3]
sys.exit(0 if ok else 1)
PY
check "... and validates against docs/schema/mshim-evidence-1.schema.json" python3 tests/cli/json_schema.py --validate mshim-evidence-1 "$t/ev.json"

# ---- mshim verify EVIDENCE --ima: the quote's own PCR 10 ----
V() { "$MSHIM" verify --ak "$t/att/ak.pub" --nonce $NONCE "$@"; }
V --ima-allow "$t/allow" --json "$t/ev.json" >"$t/verdict.json" 2>"$t/err"
check "verify EVIDENCE --ima-allow: accepted (exit 0), the ima check naming the 51 entries the quote covers" python3 -c '
import json, sys
v = json.load(open(sys.argv[1])); c = [x for x in v["checks"] if x["check"] == "ima"]
sys.exit(0 if v["accepted"] and c and c[0]["ok"] and c[0]["detail"].startswith("51 of the IMA list") else 1)' "$t/verdict.json"
check "... the verdict validates against mshim-verdict/1" python3 tests/cli/json_schema.py --validate mshim-verdict-1 "$t/verdict.json"
expect_rc "verify EVIDENCE --ima-allow, a file missing from the allowlist: refused, the entry named" 1 \
        "refused: ima: IMA entry 24 (/usr/bin/f000023, ima-ng): its file is not in the allowlist" \
        V --ima-allow "$t/allow.cut" "$t/ev.json"
# The evidence's list edited (one entry removed), the quote untouched.
python3 - "$t/ev.json" "$t/removed.bin" "$t/ev-removed.json" <<'PY'
import base64, json, sys
e = json.load(open(sys.argv[1])); e["ima_log"]["data"] = base64.b64encode(open(sys.argv[2], "rb").read()).decode()
json.dump(e, open(sys.argv[3], "w"))
PY
expect_rc "verify EVIDENCE whose IMA list lost an entry: refused, PCR 10 does not match" 1 \
        "refused: ima: the IMA list does not replay to the quoted PCR 10" V "$t/ev-removed.json"
"$MSHIM" attest quote --nonce $NONCE --select 10 --log tests/data/mshim-boot/eventlog.bin -o "$t/ev-noima.json" 2>/dev/null
refuses "verify --ima on evidence without an IMA list: exit 2, said" "carries no IMA list" V --ima "$t/ev-noima.json"
expect_rc "... without --ima, PCR 10 quoted and no list to account for it: refused by the event-log check" 1 \
        "refused: event-log: sha1 PCR 10: the quoted value is not what the event log replays to" V "$t/ev-noima.json"

# ---- the allowlist's table: other digest lengths, shared contents ----
# Lists and PCR 10 from hashlib alone (--expect): no TPM needed here.
# want FILE: the sha256 PCR 10 the fixture computed.
want() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sha256"])' "$1"; }
# flip1 FILE LINE: the last hex digit of LINE's digest changed.
flip1() { awk -v n="$2" 'NR == n { c = substr($1, length($1)); $1 = substr($1, 1, length($1) - 1) (c == "0" ? "1" : "0") } 1' "$1"; }
for alg in sha1 sha512; do
        python3 "$FIX" make "$t/$alg.bin" --entries 20 --file-alg $alg --allow "$t/$alg.allow" --expect "$t/$alg.json" ||
                fail "set-up: $alg list"
        W=$(want "$t/$alg.json")
        expect_rc "$alg file digests (the digest's length names the algorithm): accepted" 0 "" \
                "$MSHIM" verify ima "$t/$alg.bin" --pcr "sha256:$W" --ima-allow "$t/$alg.allow"
        flip1 "$t/$alg.allow" 7 >"$t/$alg.flip"
        refused1 "$alg: one rule's last digit changed: that file refused" \
                "IMA entry 8 (/usr/bin/f000007, ima-ng): its file is not in the allowlist" \
                "$MSHIM" verify ima "$t/$alg.bin" --pcr "sha256:$W" --ima-allow "$t/$alg.flip"
done
sed "s/^/sha512:/" "$t/sha512.allow" >"$t/sha512.prefixed"
expect_rc "sha512:HEX rules: accepted" 0 "" \
        "$MSHIM" verify ima "$t/sha512.bin" --pcr "sha256:$(want "$t/sha512.json")" --ima-allow "$t/sha512.prefixed"
sed "s/^/sha384:/" "$t/sha512.allow" >"$t/sha512.as384"
refuses "a sha512 digest labelled sha384: exit 2, the line named" "sha512.as384:1: not DIGEST" \
        "$MSHIM" verify ima "$t/sha512.bin" --pcr "sha256:$(want "$t/sha512.json")" --ima-allow "$t/sha512.as384"
sed "s/^/sha1:/" "$t/sha512.allow" >"$t/sha512.as1"
refuses "... labelled sha1: exit 2" "sha512.as1:1: not DIGEST" \
        "$MSHIM" verify ima "$t/sha512.bin" --pcr "sha256:$(want "$t/sha512.json")" --ima-allow "$t/sha512.as1"
# 40 files holding 3 contents: each digest allowed at many paths.
python3 "$FIX" make "$t/shared.bin" --entries 40 --contents 3 --allow "$t/shared.allow" --expect "$t/shared.json" ||
        fail "set-up: shared contents"
W=$(want "$t/shared.json")
check "set-up: 40 files, 3 digests (python)" test "$(cut -d' ' -f1 "$t/shared.allow" | sort -u | wc -l)" = 3
expect_rc "one digest allowed at many paths: every file accepted" 0 "" \
        "$MSHIM" verify ima "$t/shared.bin" --pcr "sha256:$W" --ima-allow "$t/shared.allow"
grep -v f000031 "$t/shared.allow" >"$t/shared.cut"
refused1 "... one path's rule removed: that file refused, though its digest is allowed at other paths" \
        "IMA entry 32 (/usr/bin/f000031, ima-ng): its file is not in the allowlist" \
        "$MSHIM" verify ima "$t/shared.bin" --pcr "sha256:$W" --ima-allow "$t/shared.cut"
cat "$t/shared.allow" "$t/shared.allow" "$t/shared.allow" >"$t/shared.thrice"
expect_rc "every rule given three times: accepted (kept once)" 0 "" \
        "$MSHIM" verify ima "$t/shared.bin" --pcr "sha256:$W" --ima-allow "$t/shared.thrice"
{ grep -v f000023 "$t/allow"; echo /usr/bin/f00002; echo /usr/bin/f0000233; echo /usr/bin/f00002x; } >"$t/allow.prefix"
refused1 "path rules of a prefix, an extension or another last byte of a path do not allow it" \
        "IMA entry 24 (/usr/bin/f000023, ima-ng): its file is not in the allowlist" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.prefix"
sed 's/$/\r/' "$t/allow" >"$t/allow.crlf"
expect_rc "CRLF line ends: accepted" 0 "" "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.crlf"
{ head -2 "$t/allow"; echo "# a comment"; sed -n 3p "$t/allow" | sed 's/^./g/'; tail -n +4 "$t/allow"; } >"$t/allow.badhex"
cp "$t/allow.badhex" "$t/allow.badhex.orig"
refuses "a digit that is not hex on line 4: exit 2, the line named" "allow.badhex:4: not DIGEST, DIGEST PATH or /PATH: 'g" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.badhex"
{ head -5 "$t/allow"; sed -n 6p "$t/allow" | cut -c2-; } >"$t/allow.short"
refuses "a digest one digit short on line 6: exit 2, the line named" "allow.short:6: not DIGEST" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.short"
{ head -1 "$t/allow"; printf '%s  /usr/bin/a\0b\n' "$(head -1 "$t/allow" | cut -d' ' -f1)"; } >"$t/allow.nul"
refuses "a NUL in a path on line 2: exit 2, the line named" "allow.nul:2: not DIGEST" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/allow.nul"
check "... and the allowlist is left as it was" cmp "$t/allow.badhex" "$t/allow.badhex.orig"

# ---- bad input: exit 2, a clear message ----
head -c 150 "$t/list.bin" >"$t/cut.bin"
refuses "a list cut short: exit 2, the entry named" "cut.bin: IMA entry 2 \\(at byte [0-9]+\\): " \
        "$MSHIM" verify ima "$t/cut.bin" --pcr "sha256:$S256"
python3 - "$t/legacy.bin" <<'PY'
import struct, sys
d = bytes(20) + b"\x11" * 20
open(sys.argv[1], "wb").write(struct.pack("<I", 10) + b"\x22" * 20 + struct.pack("<I", 3) + b"ima" + d)
PY
refuses "the legacy 'ima' template: exit 2, said" "the legacy 'ima' template" \
        "$MSHIM" verify ima "$t/legacy.bin" --pcr "sha256:$S256"
printf 'not a digest /x\n' >"$t/bad.allow"
refuses "a malformed allowlist line: exit 2, the line named" "bad.allow:1: not DIGEST, DIGEST PATH or /PATH" \
        "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$S256" --ima-allow "$t/bad.allow"
refuses "--pcr without a bank" "--pcr wants ALG:HEX" "$MSHIM" verify ima "$t/list.bin" --pcr "$S256"
refuses "--pcr of the wrong length" "not a sha1, sha256" "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:abcd"
refuses "--pcr not hex" "not hex" "$MSHIM" verify ima "$t/list.bin" --pcr "sha256:$(printf 'zz%062d' 0)"
refuses "no --pcr" "at least one --pcr" "$MSHIM" verify ima "$t/list.bin"
refuses "a missing list" "nosuch" "$MSHIM" verify ima "$t/nosuch" --pcr "sha256:$S256"
: >"$t/empty.bin"
expect_rc "an empty list and PCR 10 at zero: accepted, no entries" 0 "" \
        "$MSHIM" verify ima "$t/empty.bin" --pcr "sha256:$(printf '%064d' 0)"
exit "$CLI_FAILED"
