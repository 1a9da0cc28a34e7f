#!/usr/bin/env bash
# mshim log --tpm against a real TPM (swtpm), set up by tpm2-tools: a log is
# written here from chosen digests, the same digests are extended into the
# TPM with tpm2_pcrextend, and mshim must find every PCR equal; one more
# extend must then be reported as a mismatch of exactly that PCR.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
tmp=$(mktemp -d "$PWD/build/tpmtest.XXXXXX")
cli_init "" "$tmp"

# Without a reachable TPM: a clear error, exit 2... (the TCTI names a dead socket)
out=$(TPM2TOOLS_TCTI="swtpm:path=$tmp/none" "$MSHIM" log --tpm tests/data/eventlogs/tpm2-tools-event.bin 2>&1 >/dev/null); rc=$?
if [ "$rc" = 2 ] && grep -q "cannot reach a TPM" <<<"$out"; then pass "log --tpm without a TPM fails with a message"; else fail "log --tpm without a TPM fails with a message" "rc=$rc $out"; fi

cli_swtpm "$tmp" || { fail "swtpm starts"; exit 1; }

python3 - "$tmp/log.bin" "$tmp/extends.txt" <<'PY'
import hashlib, struct, sys
algs = [(0x0004, 20, "sha1"), (0x000B, 32, "sha256")]
spec = b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 0, 2, len(algs))
spec += b"".join(struct.pack("<HH", a, s) for a, s, _ in algs) + b"\0"
log = struct.pack("<II20sI", 0, 3, b"\0" * 20, len(spec)) + spec
lines = []
for i, (pcr, what) in enumerate([(0, b"crtm"), (4, b"app"), (4, b"kernel"), (7, b"sb"), (12, b"cmdline")]):
    # EV_EFI_PLATFORM_FIRMWARE_BLOB: the digest covers memory, not the data.
    data = struct.pack("<QQ", 0x1000 * (i + 1), len(what))
    log += struct.pack("<III", pcr, 0x80000008, len(algs))
    digests = []
    for a, s, name in algs:
        d = hashlib.new(name, what + bytes([i])).digest()
        log += struct.pack("<H", a) + d
        digests.append(f"{name}=0x{d.hex()}")
    log += struct.pack("<I", len(data)) + data
    lines.append(f"{pcr}:" + ",".join(digests))
open(sys.argv[1], "wb").write(log)
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
cli_extend "$tmp/extends.txt"

out=$("$MSHIM" log --tpm "$tmp/log.bin" 2>&1); rc=$?
if [ "$rc" = 0 ] && ! grep -q "PCR.*MISMATCH" <<<"$out" && grep -q "30 of 30 compared PCRs match" <<<"$out"; then
        pass "log --tpm: replay equals the TPM's PCRs"
else
        fail "log --tpm: replay equals the TPM's PCRs" "rc=$rc" "$out"
fi

tpm2_pcrextend "7:sha256=0x$(printf '%064d' 1)"
out=$("$MSHIM" log --tpm --json "$tmp/log.bin" 2>&1); rc=$?
bad=$(python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(" ".join("%s:%d" % (c["bank"], c["pcr"]) for c in d["comparison"] if not c["match"]))' <<<"$out")
if [ "$rc" = 1 ] && [ "$bad" = "sha256:7" ]; then
        pass "log --tpm: an extra extend is exactly one mismatch"
else
        fail "log --tpm: an extra extend is exactly one mismatch" "rc=$rc bad=$bad"
fi
