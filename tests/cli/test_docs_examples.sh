#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The shell examples in docs/ marked "<!-- docs-example: NAME -->" run as
# written (set -e, each in a fresh directory, `mshim` on PATH), and what
# they leave behind is checked with openssl and pesign: the documentation
# stays true.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
OVMF=${MB_OVMF_DIR:-/usr/share/OVMF}
FB=${MB_EFIROOT:-build/debian-efi}/usr/lib/shim/fbx64.efi
t=$(mktemp -d)
cli_init docs "$t"


for f in "$MSHIM" "$OVMF/OVMF_VARS_4M.fd" "$OVMF/OVMF_VARS_4M.ms.fd" "$FB"; do
        [ -e "$f" ] || { fail "missing $f"; exit 1; }
done
mkdir "$t/bin" && ln -s "$(realpath "$MSHIM")" "$t/bin/mshim"

# example DOC NAME: the fenced block after the marker, as a script.
example() {
        awk -v want="<!-- docs-example: $2 -->" '
                $0 == want { found = 1; next }
                found && /^```/ { if (inblock) exit; inblock = 1; next }
                inblock { print }' "docs/$1"
}
# run DOC NAME: run the example in $t/NAME with the stores and images the
# docs assume in the current directory.
run() {
        local d="$t/$2" script
        script=$(example "$1" "$2")
        if [ -z "$script" ]; then fail "$1: no example '$2'"; return 1; fi
        mkdir "$d" && cp "$OVMF/OVMF_VARS_4M.fd" "$OVMF/OVMF_VARS_4M.ms.fd" "$d/" && cp "$FB" "$d/old.efi"
        [ -n "${3:-}" ] && cp "$3" "$d/"
        if (cd "$d" && PATH="$t/bin:$PATH" bash -e -o pipefail -c "$script") >"$d.log" 2>&1; then
                pass "$1: example '$2' runs"
        else
                fail "$1: example '$2' fails: $(tail -5 "$d.log")"; return 1
        fi
}
subject() { openssl x509 -in "$1" -noout -subject -nameopt compat | sed 's/^subject=//'; }

if run SIGNING.md keys; then
        d=$t/keys
        check "SIGNING.md keys: PK, KEK and db hold the new certificates" sh -c "
                '$MSHIM' vars certs '$d/OVMF_VARS.mine.fd' PK | grep -q 'subject: $(subject "$d/PK.pem")' &&
                '$MSHIM' vars certs '$d/OVMF_VARS.mine.fd' KEK | grep -q 'subject: $(subject "$d/KEK.pem")' &&
                '$MSHIM' vars certs '$d/OVMF_VARS.mine.fd' db | grep -q 'subject: $(subject "$d/signing.pem")'"
        check "SIGNING.md keys: each key belongs to its certificate" sh -c "
                for k in PK KEK signing; do
                        [ \"\$(openssl x509 -in '$d/'\$k.pem -noout -pubkey)\" = \"\$(openssl pkey -in '$d/'\$k.key -pubout)\" ] || exit 1
                done"
fi

if run VARS.md vars-keys; then
        d=$t/vars-keys
        check "VARS.md vars-keys: db holds both db keys, PK and KEK one each" sh -c "
                [ \$('$MSHIM' vars certs '$d/vars.fd' db | grep -c '^db \[') = 2 ] &&
                '$MSHIM' vars certs '$d/vars.fd' db | grep -q 'subject: /CN=My second db key' &&
                [ \$('$MSHIM' vars certs '$d/vars.fd' PK | grep -c '^PK \[') = 1 ] &&
                [ \$('$MSHIM' vars certs '$d/vars.fd' KEK | grep -c '^KEK \[') = 1 ]"
        check "VARS.md vars-keys: dbx forbids old.efi (pesign's digest)" sh -c "
                '$MSHIM' vars list '$d/vars.fd' | grep -q \"sha256 \$(pesign -h -i '$d/old.efi' 2>/dev/null | awk '/^hash:/{print \$2}')\""
        check "VARS.md vars-keys: the example shows db's certificates" grep -q 'subject: /CN=My db key' "$d.log"
fi

# MOK.md's section 1 makes mok.pem first.
openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 3650 -subj "/CN=My mshim MOK/" \
        -keyout "$t/mok.key" -out "$t/mok.pem" 2>/dev/null
if run MOK.md mok "$t/mok.pem"; then
        d=$t/mok
        check "MOK.md mok: the request store keeps MokNew and MokAuth" sh -c "
                '$MSHIM' vars get '$d/vars-request.fd' MokNew >/dev/null && '$MSHIM' vars get '$d/vars-request.fd' MokAuth >/dev/null"
        check "MOK.md mok: the enrolled store has the MOK in MokList, no request" sh -c "
                '$MSHIM' vars certs '$d/vars-enrolled.fd' MokList | grep -q 'subject: /CN=My mshim MOK' &&
                ! '$MSHIM' vars get '$d/vars-enrolled.fd' MokNew >/dev/null 2>&1"
        fp=$(openssl x509 -in "$t/mok.pem" -noout -fingerprint -sha1 | sed 's/^.*=//' | tr 'A-F' 'a-f')
        check "MOK.md mok: the example shows the MOK's SHA-1 fingerprint (openssl)" grep -q "SHA1 Fingerprint: $fp" "$d.log"
        check "MOK.md mok: Microsoft's store itself is untouched" cmp -s "$d/OVMF_VARS_4M.ms.fd" "$OVMF/OVMF_VARS_4M.ms.fd"
fi
exit "$CLI_FAILED"
