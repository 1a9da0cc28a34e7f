# SPDX-License-Identifier: BSD-2-Clause
# What the CLI tests (tests/cli/test_*.sh) share. A script starts with
#   cd "$(dirname "$0")/../.." || exit 1
#   . tests/cli/lib.sh
#   tmp=$(mktemp -d ...)          # its own scratch directory, any name
#   cli_init NAME "$tmp"          # NAME: the prefix of its PASS/FAIL lines
# and then has:
#   pass NAME                     "PASS: <prefix>NAME"
#   fail NAME [DETAIL...]         "FAIL: <prefix>NAME", each DETAIL on stderr;
#                                 CLI_FAILED=1, and the script's exit status
#                                 is not 0 (even when it ends with exit 0 or
#                                 the FAIL came from a subshell)
#   check NAME CMD...             pass NAME when CMD succeeds, else fail NAME
#   refuses NAME ERE CMD...       CMD (stdin /dev/null) exits 2 with ERE in a
#                                 "mshim: " line on stderr
#   expect_rc NAME RC PAT CMD...  CMD exits RC with PAT (grep) on stderr
#   cli_need TOOL...              each TOOL on PATH, or fail naming it and
#                                 exit 1
#   cli_extend FILE               extend the TPM's PCRs (TPM2TOOLS_TCTI) with
#                                 FILE's specs, "PCR:alg=hex[,alg=hex...]" one
#                                 a line, in order; fail names FILE otherwise
#   cli_swtpm DIR [STATE]         a swtpm on state STATE (default DIR; made
#                                 when absent), served at DIR/srv (control
#                                 DIR/srv.ctrl), TPM2TOOLS_TCTI pointing at
#                                 it; stopped at exit or by cli_swtpm_stop DIR
#   cli_approval_values FILE      an approval's "values" line as
#                                 "sha256:N=hex" lines in its "pcrs" order
# At exit the swtpms stop, CLI_AT_EXIT (a command, when set) runs, the
# scratch directory goes, and a script that printed a FAIL line exits 1
# rather than 0. MSHIM is the sanitized CLI unless set (make check-quick
# sets it to the -O2 build users run: tests/run-all.sh, MB_SANITIZE).
#
# MB_LEAKS=0 (make check-quick sets it, for MB_SANITIZE=1 runs): the
# sanitized programs run without LeakSanitizer; AddressSanitizer and UBSan
# stay. Its check at each exit scans the runtime's own 5 MB of zeroed
# globals, about 22 ms a run here (check-quick: 398 s of CPU with it, 338 s
# without); make check keeps it. A setting of the caller's own in
# ASAN_OPTIONS comes after, so it wins.
MSHIM=${MSHIM:-build/test/mshim}
if [ "${MB_LEAKS:-1}" = 0 ]; then
        export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
CLI_FAILED=0
CLI_PREFIX=
CLI_TMP=
CLI_SWTPMS=
CLI_AT_EXIT=
CLI_FAILMARK=
# The interpreter itself rather than a version manager's shim.
. "$(dirname "${BASH_SOURCE[0]}")/../python3.sh"

# cli_init NAME [TMPDIR]: PASS/FAIL lines start "NAME: " (none when NAME is
# empty); TMPDIR is removed at exit and holds refuses'/expect_rc's output.
cli_init() {
        CLI_PREFIX=${1:+$1: }
        CLI_TMP=${2:-}
        # fail() marks this file too: a fail in a subshell (a pipeline's
        # loop, $(...)) cannot set the script's CLI_FAILED.
        CLI_FAILMARK=$(mktemp "${TMPDIR:-/tmp}/cli-failed.XXXXXX") || exit 1
        trap cli_cleanup EXIT
}

# The EXIT trap: its exit sets the script's status, 1 when any FAIL was
# printed (tests/run-all.sh counts the lines; a caller may go by the status).
cli_cleanup() {
        local rc=$? d
        for d in $CLI_SWTPMS; do cli_swtpm_stop "$d"; done
        [ -n "$CLI_AT_EXIT" ] && eval "$CLI_AT_EXIT"
        [ -n "$CLI_TMP" ] && rm -rf "$CLI_TMP"
        if [ -n "$CLI_FAILMARK" ]; then
                [ -s "$CLI_FAILMARK" ] && CLI_FAILED=1
                rm -f "$CLI_FAILMARK"
        fi
        [ "$rc" = 0 ] && [ "$CLI_FAILED" != 0 ] && rc=1
        exit "$rc"
}

pass() { echo "PASS: $CLI_PREFIX$1"; }
fail() {
        echo "FAIL: $CLI_PREFIX$1"
        CLI_FAILED=1
        [ -z "$CLI_FAILMARK" ] || echo 1 >>"$CLI_FAILMARK"
        shift
        [ $# -gt 0 ] && printf '  %s\n' "$@" >&2
        return 0
}
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }

refuses() {
        local n=$1 re=$2 rc; shift 2
        "$@" >"$CLI_TMP/out" 2>"$CLI_TMP/err" </dev/null; rc=$?
        if [ "$rc" = 2 ] && grep -q -E "^mshim: .*$re" "$CLI_TMP/err"; then pass "$n"
        else fail "$n (status $rc)" "$(cat "$CLI_TMP/err")"; fi
}

expect_rc() {
        local name=$1 want=$2 pat=$3 rc; shift 3
        "$@" >"$CLI_TMP/out" 2>"$CLI_TMP/err"; rc=$?
        if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$CLI_TMP/err"; }; then pass "$name"
        else fail "$name (exit $rc, want $want; stderr: $(head -c 300 "$CLI_TMP/err"))"; fi
}

cli_need() {
        local t
        for t in "$@"; do
                command -v "$t" >/dev/null || { fail "missing tool $t: run make deps"; exit 1; }
        done
}

# Many specs to one tpm2_pcrextend (it extends its arguments in order): one
# TCTI start-up for a whole boot's events rather than one each.
cli_extend() {
        xargs -r -n 64 tpm2_pcrextend <"$1" >/dev/null || fail "tpm2_pcrextend $1"
}

cli_swtpm() {
        local d=$1 st=${2:-$1} i=0
        mkdir -p "$d" "$st"
        rm -f "$d/srv" "$d/srv.ctrl"
        swtpm socket --tpm2 --tpmstate dir="$st" --server type=unixio,path="$d/srv" \
                --ctrl type=unixio,path="$d/srv.ctrl" --flags not-need-init,startup-clear --daemon || return 1
        CLI_SWTPMS="$CLI_SWTPMS $d"
        # --daemon returns once the sockets are bound; wait anyway, briefly.
        while [ ! -S "$d/srv" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
        export TPM2TOOLS_TCTI="swtpm:path=$d/srv"
        unset TCTI TSS2_TCTI
}

cli_swtpm_stop() {
        [ -S "$1/srv.ctrl" ] && swtpm_ioctl --unix "$1/srv.ctrl" -s 2>/dev/null
        return 0
}

# cli_approval_values FILE: an approval's "values" (hex, 32 bytes a PCR) as
# "sha256:N=hex" lines in the order of its "pcrs" line (a key given twice:
# its last line). The shell's own reading: test_hooks.sh reads dozens, and a
# Python start-up for each was about a tenth of its time.
cli_approval_values() {
        local k v pcrs= vals= p i=0
        while read -r k v || [ -n "$k" ]; do
                case $k in
                pcrs) pcrs=$v ;;
                values) vals=${v,,} ;;
                esac
        done <"$1" || return 1
        [ -n "$pcrs" ] && [ -n "$vals" ] || return 1
        for p in ${pcrs//,/ }; do
                printf 'sha256:%d=%s\n' "$p" "${vals:i*64:64}"
                i=$((i + 1))
        done
}
