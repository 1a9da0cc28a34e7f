#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The manual pages, the --help texts and the completion (all three made by
# scripts/mkman.py from man/*.txt): the roff is clean for groff -ww and
# man --warnings; every page the task names exists; `mshim X --help`,
# `mshim help X` and `mshim help "X"` print the same text, whose words all
# appear, in order, in the rendered page; every long option the C sources
# accept is documented; completion offers commands, sub-commands, options.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
GEN=${B:-build}/gen
t=$(mktemp -d)
cli_init man "$t"
cli_need groff man col

pages="mshim.1 mshim-log.1 mshim-pcrs.1 mshim-vars.1 mshim-sign.1 mshim-pe-hash.1 mshim-sbat.1 mshim-loader.conf.5
       mshim-seal.1 mshim-unseal.1 mshim-policy.1 mshim-totp.1 mshim-fence.1 mshim-attest.1 mshim-verify.1 mshim-luks.1"
for p in $pages; do
        f=$GEN/man/$p
        [ -f "$f" ] || { fail "$p exists (make all)"; continue; }
        w=$(groff -man -ww -z -Tutf8 "$f" 2>&1)
        [ -z "$w" ] && pass "$p: groff -ww is silent" || fail "$p: groff -ww is silent" "$w"
        w=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
        [ -z "$w" ] && pass "$p: man --warnings is silent" || fail "$p: man --warnings is silent" "$w"
        check "$p: has NAME, SYNOPSIS or DESCRIPTION, SEE ALSO" bash -c \
                "grep -q '^.SH NAME' '$f' && grep -q -E '^.SH \"(SYNOPSIS|DESCRIPTION)\"' '$f' && grep -q '^.SH \"SEE ALSO\"' '$f'"
done
# Every key of docs/CONFIG.md's tables is a term of mshim-loader.conf(5).
if python3 - docs/CONFIG.md "$GEN/man/mshim-loader.conf.5" <<'PY'
import re, sys
rows = [l.split("|")[1] for l in open(sys.argv[1]) if l.startswith("| `")]
keys = {k for cell in rows for k in re.findall(r"`([a-z-]+)", cell)}
terms = set(re.findall(r"^\.TP\n\\fB([^\\]+(?:\\-[^\\]+)*)\\fR", open(sys.argv[2]).read(), re.M))
terms = {t.replace("\\-", "-") for t in terms}
assert len(keys) >= 12, keys
missing = sorted(keys - terms)
sys.exit("missing: %s" % missing if missing else 0)
PY
then pass "mshim-loader.conf(5) documents every key docs/CONFIG.md does"
else fail "mshim-loader.conf(5) documents every key docs/CONFIG.md does"; fi

# words FILE: the text as a list of words, without markup, one per line.
words() { tr -s ' \t\n' '\n\n\n' <"$1" | sed '/^$/d'; }
# is_subsequence A B: the lines of A appear in B in the same order.
is_subsequence() {
        python3 -c 'import sys
a, b = (open(f).read().split("\n") for f in sys.argv[1:])
it = iter(b)
missing = [w for w in a if w not in it]     # consumes b up to each match
sys.exit("first missing: %r" % missing[:1] if missing else 0)' "$1" "$2"
}
# unit PAGE: every help text and the page it comes from
for entry in ":mshim.1" "log:mshim-log.1" "log diff:mshim-log.1" "pcrs:mshim-pcrs.1" "vars:mshim-vars.1" \
             "sign:mshim-sign.1" "pe-hash:mshim-pe-hash.1" "sbat:mshim-sbat.1" \
             "seal:mshim-seal.1" "unseal:mshim-unseal.1" "policy:mshim-policy.1" "totp:mshim-totp.1" \
             "attest:mshim-attest.1" "verify:mshim-verify.1" "luks:mshim-luks.1"; do
        unit=${entry%%:*} page=${entry#*:}
        # shellcheck disable=SC2086
        if [ -z "$unit" ]; then "$MSHIM" --help >"$t/a"; ra=$?; "$MSHIM" help >"$t/b"; rb=$?; cp "$t/b" "$t/c"; rc=0
        else "$MSHIM" $unit --help >"$t/a"; ra=$?; "$MSHIM" help $unit >"$t/b"; rb=$?; "$MSHIM" help "$unit" >"$t/c"; rc=$?; fi
        name="mshim${unit:+ $unit}"
        if [ "$ra$rb$rc" = 000 ] && [ -s "$t/a" ] && cmp -s "$t/a" "$t/b" && cmp -s "$t/a" "$t/c"; then
                pass "$name --help = mshim help${unit:+ $unit}"
        else fail "$name --help = mshim help${unit:+ $unit}" "status $ra$rb$rc"; fi
        check "$name --help starts with Usage:" grep -q "^Usage: $name " "$t/a"
        # The help's words, less its headings, in the page rendered without
        # line breaks (so nothing is hyphenated) and without markup.
        grep -v -E '^[A-Z][a-z ]+:$' "$t/a" | sed 's/^Usage: //; s/^  - /  /' >"$t/h"
        words "$t/h" >"$t/hw"
        LC_ALL=C MANWIDTH=4000 man -l "$GEN/man/$page" 2>/dev/null | col -b >"$t/m"
        words "$t/m" >"$t/mw"
        if is_subsequence "$t/hw" "$t/mw" 2>"$t/why"; then pass "$name --help: every word, in order, in $page"
        else fail "$name --help: every word, in order, in $page" "$(cat "$t/why")"; fi
done
check "mshim help for a command without one fails" bash -c "! '$MSHIM' help 'log nope' >/dev/null 2>&1"

# Constants the pages quote (they were format arguments of the old --help
# texts) are the sources' values.
n=$(sed -n 's/^#define MB_SBAT_MAX_LINE \([0-9]*\).*/\1/p' include/mb/sbat.h)
check "sbat: the line limit is MB_SBAT_MAX_LINE ($n)" bash -c "'$MSHIM' sbat --help | tr '\n' ' ' | grep -q 'no line over $n bytes'"
owner=$(sed -n 's/^static const char DEFAULT_OWNER\[\] = "\(.*\)";/\1/p' tools/cmd/vars.c)
check "vars: the default owner is DEFAULT_OWNER ($owner)" bash -c "[ -n '$owner' ] && '$MSHIM' vars --help | grep -q -- '$owner'"
secs=$(sed -n 's/^#define TPM_TIMEOUT_DEFAULT \([0-9]*\).*/\1/p' tools/lib/tpm.c)
check "pcrs, log: MSHIM_TPM_TIMEOUT's default is TPM_TIMEOUT_DEFAULT ($secs)" bash -c \
        "[ -n '$secs' ] && '$MSHIM' pcrs --help | grep -q 'MSHIM_TPM_TIMEOUT .*(default $secs)' && '$MSHIM' log --help | grep -q 'MSHIM_TPM_TIMEOUT .*(default $secs)'"

# Every long option in the C sources' option tables is documented: its
# name appears in a page's OPTIONS list (.TP terms) or synopsis.
opts=$(grep -h -o -E '\{ *"[a-z][a-z0-9-]*", *(no|required|optional)_argument' tools/*.c tools/cmd/*.c tools/lib/*.c | sed -E 's/\{ *"([^"]*)".*/\1/' | sort -u)
[ "$(echo "$opts" | wc -w)" -ge 20 ] && pass "found the option tables ($(echo "$opts" | wc -w) options)" || fail "found the option tables"
# The documented ones, as the pages spell them ("\fB\-\-dbx\-hash\fR"), in
# one grep: a look-up per option, not a grep and two seds each.
declare -A documented=()
while read -r d; do documented[$d]=1; done < <(grep -h -o -E '\\fB\\-\\-[a-z0-9\\-]+\\fR' "$GEN"/man/*.1 | sort -u)
for o in $opts; do
        esc="\\fB\\-\\-${o//-/\\-}\\fR"
        if [ -n "${documented[$esc]:-}" ]; then pass "--$o is documented"
        else fail "--$o is documented in a page's OPTIONS ($esc)"; fi
done

# Completion.
comp() {        # comp WORDS...: what completing the last word offers
        bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _mshim; printf "%s\n" "${COMPREPLY[@]}"' \
                _ "$GEN/mshim.bash" "$@"
}
check "completion: mshim p -> pcrs pe-hash policy predict" test "$(comp mshim p | sort | tr '\n' ' ')" = "pcrs pe-hash policy predict "
check "completion: mshim log d -> diff" test "$(comp mshim log d)" = "diff"
check "completion: mshim log --js -> --json" test "$(comp mshim log --js)" = "--json"
check "completion: mshim log diff --j -> --json" test "$(comp mshim log diff --j)" = "--json"
check "completion: mshim vars e -> enroll export" test "$(comp mshim vars e | sort | tr '\n' ' ')" = "enroll export "
check "completion: mshim vars enroll --d -> --db --dbx --dbx-hash --dbx-image --der" \
        test "$(comp mshim vars enroll --d | sort | tr '\n' ' ')" = "--db --dbx --dbx-hash --dbx-image --der "
check "completion: mshim pcrs --s -> --select" test "$(comp mshim pcrs --s)" = "--select"
check "completion: mshim help log d -> diff" test "$(comp mshim help log d)" = "diff"
check "completion: mshim sign FILE" test "$(comp mshim sign tests/cli/test_ma)" = "tests/cli/test_man.sh"
