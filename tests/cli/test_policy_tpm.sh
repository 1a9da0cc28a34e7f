#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The policy digests of src/policy.c against a real TPM's (swtpm): every
# TPM2_Policy* command mshim computes runs in trial and real policy sessions
# and Esys_PolicyGetDigest must give the same digest
# ($B/test/policy_trial, tests/tpm/policy_trial.c, built by `make check`).
# tpm2-tools is a second, independent client for the PolicyPCR case.
set -u
cd "$(dirname "$0")/../.." || exit 1
# Leak checks even in make check-quick (MB_LEAKS=0): a few runs, cheap.
MB_LEAKS=1 . tests/cli/lib.sh
B=${B:-build}
BIN=$B/test/policy_trial
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The refusals this test provokes on purpose would fill stderr with ESAPI warnings.
export TSS2_LOG=${TSS2_LOG:-all+none}

if [ ! -x "$BIN" ]; then
        fail "policy-tpm: $BIN not built (make $BIN)"; exit 1
fi
mkdir -p "$B"
tmp=$(mktemp -d "$PWD/$B/policytpm.XXXXXX")
cli_init "" "$tmp"

cli_swtpm "$tmp" || { fail "policy-tpm: swtpm starts"; exit 1; }
tcti="swtpm:path=$tmp/srv"

# timeout: a TPM that stops answering must not hang the suite.
timeout 300 "$BIN" "$tcti"
rc=$?
[ $rc = 0 ] || echo "  policy_trial exited with status $rc" >&2

# tpm2-tools as a second client: its trial PolicyPCR over the same PCRs
# (after policy_trial extended them) must equal the C program's view,
# recomputed here from tpm2_pcrread's values with Python's hashlib.
if command -v tpm2_startauthsession >/dev/null; then
        export TPM2TOOLS_TCTI=$tcti
        if tpm2_startauthsession -S "$tmp/s.ctx" >/dev/null 2>&1 &&
           tpm2_policypcr -S "$tmp/s.ctx" -l sha256:4,7,9,12 -L "$tmp/tools.policy" >/dev/null 2>&1 &&
           tpm2_flushcontext "$tmp/s.ctx" >/dev/null 2>&1 &&
           tpm2_pcrread -o "$tmp/pcrs.bin" sha256:4,7,9,12 >/dev/null 2>&1; then
                want=$(python3 - "$tmp/pcrs.bin" <<'PY'
import hashlib, struct, sys
values = open(sys.argv[1], "rb").read()
sel = struct.pack(">IHB", 1, 0x000B, 3) + (1 << 4 | 1 << 7 | 1 << 9 | 1 << 12).to_bytes(3, "little")
print(hashlib.sha256(bytes(32) + struct.pack(">I", 0x17F) + sel + hashlib.sha256(values).digest()).hexdigest())
PY
)
                got=$(od -An -v -tx1 "$tmp/tools.policy" | tr -d ' \n')
                if [ -n "$want" ] && [ "$want" = "$got" ]; then
                        pass "policy-tpm tpm2_policypcr agrees with the spec's formula (hashlib)"
                else
                        fail "policy-tpm tpm2_policypcr agrees with the spec's formula (hashlib)" "tpm2-tools $got" "hashlib   $want"
                fi
        else
                fail "policy-tpm tpm2_policypcr trial session runs"
        fi
fi
exit $rc
