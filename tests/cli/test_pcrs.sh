#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim pcrs against a real TPM (swtpm). Oracles: tpm2_pcrread's output
# (byte for byte: mshim prints its layout), tpm2_getcap for the active banks,
# and PCR values computed here with Python's hashlib from the digests
# tpm2_pcrextend extended. Without a TPM, or with one that never answers:
# a message, exit 2, no hang.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
tmp=$(mktemp -d "$PWD/build/pcrstest.XXXXXX")
cli_init pcrs "$tmp"
# run CMD...: stdout in $tmp/out, stderr in $tmp/err, status in $rc
run() { "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
# refuses NAME REGEX CMD...: exit 2, nothing on stdout, one "mshim: " line matching REGEX
# (stricter than lib.sh's, which it replaces here)
refuses() {
        local n=$1 re=$2; shift 2
        run "$@"
        if [ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -E "^mshim: .*$re" "$tmp/err"; then
                pass "$n"
        else
                fail "$n" "rc=$rc" "$(cat "$tmp/err")"
        fi
}
srv_pid=
CLI_AT_EXIT='[ -S "$tmp/srv.ctrl" ] && swtpm_ioctl --unix "$tmp/srv.ctrl" -s 2>/dev/null; [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null'
cli_need swtpm swtpm_ioctl tpm2_pcrread tpm2_pcrextend tpm2_getcap tpm2_pcrallocate tpm2_startup

# ---- no TPM ------------------------------------------------------------------
export TPM2TOOLS_TCTI="swtpm:path=$tmp/none"
refuses "no TPM: a clear message, exit 2" "cannot reach a TPM" "$MSHIM" pcrs

# A TPM that accepts the connection and never answers: the watchdog ends it.
# (tpm2-tss's swtpm TCTI talks to PATH and to PATH.ctrl.)
python3 - "$tmp/mute" <<'PY' &
import socket, sys, threading
def serve(path):
    s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(4)
    conns = []
    while True:
        conns.append(s.accept()[0])     # keep it open, say nothing
threading.Thread(target=serve, args=(sys.argv[1] + ".ctrl",), daemon=True).start()
serve(sys.argv[1])
PY
srv_pid=$!
for _ in $(seq 50); do [ -S "$tmp/mute" ] && [ -S "$tmp/mute.ctrl" ] && break; sleep 0.1; done
start=$(date +%s)
TPM2TOOLS_TCTI="swtpm:path=$tmp/mute" MSHIM_TPM_TIMEOUT=2 refuses "a TPM that never answers: exit 2 after MSHIM_TPM_TIMEOUT" \
        "did not answer within 2 s" timeout 60 "$MSHIM" pcrs
took=$(( $(date +%s) - start ))
if [ "$took" -lt 30 ]; then pass "a TPM that never answers: no hang (${took}s)"; else fail "a TPM that never answers: took ${took}s"; fi
kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; srv_pid=

# ---- usage errors (no TPM needed: they come first) ----------------------------
refuses "unknown bank" "unknown bank 'md5'.*see 'mshim pcrs --help'" "$MSHIM" pcrs --bank md5
refuses "empty bank name" "--bank wants.*see 'mshim pcrs --help'" "$MSHIM" pcrs --bank sha1,
refuses "bank named twice" "bank sha1 named twice" "$MSHIM" pcrs --bank sha1,sha1
refuses "--bank twice" "--bank given twice" "$MSHIM" pcrs --bank sha1 --bank sha256
refuses "--select 24" "--select wants.*'24'" "$MSHIM" pcrs --select 24
refuses "--select backwards range" "--select wants.*'7-3'" "$MSHIM" pcrs --select 7-3
refuses "--select junk" "--select wants.*'1,,2'" "$MSHIM" pcrs --select 1,,2
refuses "--select huge" "--select wants" "$MSHIM" pcrs --select 99999999999999999999
refuses "--select twice" "--select given twice" "$MSHIM" pcrs --select 1 --select 2
refuses "an argument" "pcrs takes no arguments" "$MSHIM" pcrs sha256

# ---- a TPM ---------------------------------------------------------------------
start_tpm() {
        swtpm socket --tpm2 --tpmstate dir="$tmp" --server type=unixio,path="$tmp/srv" \
                --ctrl type=unixio,path="$tmp/srv.ctrl" --flags not-need-init,startup-clear --daemon
}
start_tpm || { fail "swtpm starts"; exit 1; }
export TPM2TOOLS_TCTI="swtpm:path=$tmp/srv"

# Extend chosen digests; compute the expected PCRs here from the reset values.
python3 - "$tmp/extends.txt" "$tmp/expect.json" <<'PY'
import hashlib, json, sys
banks = {"sha1": 20, "sha256": 32, "sha384": 48, "sha512": 64}
# swtpm resets PCRs 17-22 to all ones (dynamic PCRs, TPM 2.0 Part 1, 17.5), the rest to zeros.
pcrs = {b: {i: (b"\xff" if 17 <= i <= 22 else b"\0") * n for i in range(24)} for b, n in banks.items()}
lines = []
for k, pcr in enumerate([0, 7, 7, 14, 16, 23]):
    spec = []
    for b in banks:
        d = hashlib.new(b, b"mshim pcrs %d" % k).digest()
        pcrs[b][pcr] = hashlib.new(b, pcrs[b][pcr] + d).digest()
        spec.append("%s=0x%s" % (b, d.hex()))
    lines.append("%d:%s" % (pcr, ",".join(spec)))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
json.dump({b: {str(i): v.hex() for i, v in p.items()} for b, p in pcrs.items()}, open(sys.argv[2], "w"))
PY
cli_extend "$tmp/extends.txt"

# same_as_pcrread NAME "MSHIM ARGS" "TPM2_PCRREAD ARGS": the same lines, except
# that tpm2_pcrread also prints a heading for an inactive bank and mshim does not.
same_as_pcrread() {
        local out want
        # shellcheck disable=SC2086
        want=$(tpm2_pcrread $3 | awk '/^  [a-z0-9_]+:$/ { h = $0; next } { if (h) print h; h = ""; print }')
        # shellcheck disable=SC2086
        out=$("$MSHIM" pcrs $2 2>&1) && [ -n "$want" ] && [ "$out" = "$want" ] && pass "$1" || fail "$1" "$out"
}
same_as_pcrread "every active bank, as tpm2_pcrread prints them" "" ""
same_as_pcrread "--bank sha256" "--bank sha256" "sha256"
same_as_pcrread "--bank sha512,sha1 --select 0,7,14-16,23" "--bank sha512,sha1 --select 0,7,14-16,23" \
        "sha512:0,7,14,15,16,23+sha1:0,7,14,15,16,23"

run "$MSHIM" pcrs --json
if [ "$rc" = 0 ] && python3 - "$tmp/out" "$tmp/expect.json" "$VERSION" <<'PY'
import json, sys
got, want, version = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert set(got) == {"schema", "mshim_version", "pcrs"}, got.keys()
assert got["schema"] == "mshim-pcrs/1" and got["mshim_version"] == version
assert got["pcrs"] == want, "values differ from hashlib's"
PY
then pass "--json: every bank's 24 PCRs equal hashlib's replay of the extends, schema and version"
else fail "--json: every bank's 24 PCRs equal hashlib's replay of the extends" "rc=$rc" "$(cat "$tmp/err")"; fi
if python3 tests/cli/json_schema.py --validate mshim-pcrs-1 "$tmp/out"; then
        pass "--json validates against docs/schema/mshim-pcrs-1.schema.json (python3-jsonschema)"
else fail "--json validates against docs/schema/mshim-pcrs-1.schema.json"; fi

run "$MSHIM" pcrs --json --bank sha256 --select 7
want7=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"]["7"])' "$tmp/expect.json")
if [ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "{\"schema\":\"mshim-pcrs/1\",\"mshim_version\":\"$VERSION\",\"pcrs\":{\"sha256\":{\"7\":\"$want7\"}}}" ]; then
        pass "--json --bank sha256 --select 7: exactly that PCR"
else fail "--json --bank sha256 --select 7" "$(cat "$tmp/out" "$tmp/err")"; fi

# What mshim pcrs prints, mshim log --pcrs reads back (tpm2_pcrread YAML).
"$MSHIM" pcrs >"$tmp/now.yaml"
run "$MSHIM" log --pcrs "$tmp/now.yaml" tests/data/eventlogs/tpm2-tools-event.bin
if [ "$rc" = 1 ] && grep -q "compared PCRs match" "$tmp/out"; then pass "mshim log --pcrs reads mshim pcrs output"
else fail "mshim log --pcrs reads mshim pcrs output" "rc=$rc" "$(cat "$tmp/err")"; fi

# ---- a bank that is not active ---------------------------------------------------
# Deallocate sha1; the allocation takes effect at the next TPM reset.
tpm2_pcrallocate sha1:none+sha256:all+sha384:all+sha512:all >/dev/null &&
        swtpm_ioctl --unix "$tmp/srv.ctrl" -i && tpm2_startup -c || fail "reallocating the PCR banks"
active=$(tpm2_getcap pcrs | sed -n 's/^  - \([a-z0-9_]*\): \[ [0-9].*/\1/p' | tr '\n' ' ')
if [ "$active" = "sha256 sha384 sha512 " ]; then pass "tpm2_getcap: sha1 deallocated"; else fail "tpm2_getcap: sha1 deallocated" "$active"; fi
refuses "--bank sha1 on a TPM without an active sha1 bank" "the TPM has no active sha1 bank" "$MSHIM" pcrs --bank sha1
same_as_pcrread "without --bank: the active banks only" "" ""
