#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Usage errors, every command: a table of bad invocations, each of which must
# exit 2, print nothing on stdout and exactly one line on stderr of the form
#   mshim: <message>; see 'mshim <COMMAND> --help'
# naming the right command. No TPM is needed: usage is checked first.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
OVMF_VARS=${MB_OVMF_DIR:-/usr/share/OVMF}/OVMF_VARS_4M.fd
t=$(mktemp -d)
cli_init usage "$t"

[ -x "$MSHIM" ] || { fail "no $MSHIM"; exit 1; }
[ -f "$OVMF_VARS" ] || { fail "no $OVMF_VARS (make deps)"; exit 1; }
openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=usage/" -days 1 \
        -keyout "$t/k.pem" -out "$t/c.pem" 2>/dev/null || { fail "openssl req"; exit 1; }
cp "$OVMF_VARS" "$t/vars.fd"
cp "$t/c.pem" "$t/img.efi"       # never read: usage comes first
# A PE image, for the one check that reads the image before the usage check.
for f in "${MB_EFIROOT:-build/debian-efi}/usr/lib/shim/fbx64.efi" build/mshimx64.efi; do
        [ -f "$f" ] && cp "$f" "$t/fb.efi" && break
done
[ -f "$t/fb.efi" ] || { fail "no PE image (make deps, make)"; exit 1; }
V=$t/vars.fd K=$t/k.pem C=$t/c.pem I=$t/img.efi
kek17=(); for _ in $(seq 17); do kek17+=(--kek "$C"); done

# HELP-UNIT | ARGUMENTS (eval'd, so quoting works) | what the message must say (ERE)
table=$(cat <<EOF2
|| no command given
|bogus| unknown command 'bogus'
|--bogus| unknown option '--bogus'
|help bogus| unknown command 'bogus'
|help log bogus| unknown command 'log bogus'
log|log --foo| unknown or ambiguous option '--foo'
log|log --pcrs| option '--pcrs' needs a value
log|log --json=yes| option '--json' takes no value
log|log -x| unknown option '-x'
log|log a b| log takes one FILE
log|log --pcrs a --tpm b| --pcrs and --tpm cannot be used together
log diff|log diff| log diff takes two files
log diff|log diff a| log diff takes two files
log diff|log diff a b c| log diff takes two files
log diff|log diff --foo a b| unknown or ambiguous option '--foo'
pcrs|pcrs --foo| unknown or ambiguous option '--foo'
pcrs|pcrs extra| pcrs takes no arguments
pcrs|pcrs --bank| option '--bank' needs a value
pcrs|pcrs --bank md5| unknown bank 'md5'
pcrs|pcrs --select 0-99| --select wants
vars|vars| vars needs a command
vars|vars bogus $V| unknown vars command 'bogus'
vars|vars list| vars list takes one FILE
vars|vars list $V $V| vars list takes one FILE
vars|vars list --foo $V| unknown or ambiguous option '--foo'
vars|vars list $V --guid| option '--guid' needs a value
vars|vars get $V| vars get takes FILE and NAME
vars|vars delete $V PK| vars delete needs -o OUT
vars|vars enroll $V -o $t/o.fd| vars enroll needs --pk, --kek and --db
vars|vars enroll $V --pk $C --kek $C --db $C --dbx-hash zz -o $t/o.fd| --dbx-hash wants a SHA-256 digest
vars|vars enroll $V --pk $C ${kek17[*]} --db $C -o $t/o.fd| at most 16 --kek options
vars|vars add-mok $V -o $t/o.fd| vars add-mok needs --cert CERT
vars|vars mok-import $V -o $t/o.fd| vars mok-import needs --cert CERT
vars|vars mok-import $V --cert $C -o $t/o.fd| no --password and no password on standard input
vars|vars get $V PK --guid not-a-guid| 'not-a-guid' is not a GUID
vars|vars get $V ''| '' is not a usable variable name
sign|sign| sign needs --key, --cert and one IMAGE
sign|sign --key $K $I| sign needs --key, --cert and one IMAGE
sign|sign --key $K --cert $C| sign needs --key, --cert and one IMAGE
sign|sign --key $K --cert $C $I $I| sign needs --key, --cert and one IMAGE
sign|sign -o| option '-o' needs a value
sign|sign --bogus $I| unknown or ambiguous option '--bogus'
sign|sign --key $K --cert $C --in-place -o $t/other.efi $I| --in-place and --output .* name different files
sign|sign --key $K --cert $C -o $t/fb.efi $t/fb.efi| output .* is the input image; use --in-place
pe-hash|pe-hash| pe-hash needs at least one IMAGE
pe-hash|pe-hash --alg md5 $I| unknown or unsupported --alg 'md5'
pe-hash|pe-hash --alg| option '--alg' needs a value
sbat|sbat| sbat takes one IMAGE
sbat|sbat $I $I| sbat takes one IMAGE
sbat|sbat --policy| option '--policy' needs a value
attest|attest| attest needs a command: init, activate or quote
attest|attest bogus| unknown attest command 'bogus'
attest|attest init extra| attest init takes no arguments
attest|attest init --out-dir| option '--out-dir' needs a value
attest|attest init --foo| unknown or ambiguous option '--foo'
attest|attest quote| attest quote needs --nonce HEX and -o EVIDENCE
attest|attest quote --nonce 0011223344556677| attest quote needs --nonce HEX and -o EVIDENCE
attest|attest quote --nonce 00 -o $t/o.json| --nonce wants 8 to 64 bytes in hex
attest|attest quote --nonce 0011223344556677 --select 0-99 -o $t/o.json| --select wants PCR numbers
attest|attest activate| attest activate takes one CHALLENGE file
attest|attest activate $I $I| attest activate takes one CHALLENGE file
verify|verify| verify takes one EVIDENCE file and --nonce HEX, with --ak AK.pub or a registered machine
verify|verify $I| verify takes one EVIDENCE file and --nonce HEX, with --ak AK.pub or a registered machine
verify|verify --ak $I $I| verify takes one EVIDENCE file and --nonce HEX, with --ak AK.pub or a registered machine
verify|verify --ak $I --nonce zz $I| --nonce wants 8 to 64 bytes in hex
verify|verify --ak $I --nonce 0011223344556677 $I $I| verify takes one EVIDENCE file
verify|verify --bogus $I| unknown or ambiguous option '--bogus'
verify|verify challenge| verify challenge takes --ak AK.pub, --ek-cert CERT or --ek-pub EK.pub, and -o CHALLENGE
verify|verify challenge --ak $I --ek-cert $I -o $t/c| an EK certificate is checked against --ek-ca DIR
verify|verify challenge --ak $I --ek-pub $I --ek-ca $t -o $t/c| an EK certificate is checked against --ek-ca DIR
verify|verify register --ak $I| verify register takes --ak AK.pub and the SECRET file
verify|verify register --ak $I -o $t/c $I| verify register takes --ak AK.pub and the SECRET file
verify|verify register --bogus $I| unknown or ambiguous option '--bogus'
policy|policy remove| policy remove needs --entry-id ID
policy|policy remove --entry-id x --keep $I| policy remove does not take --keep
fence|fence extra| unexpected argument 'extra'
fence|fence --volume root| --volume, --uuid and --volume-key-file go together
fence|fence --volume a:b --uuid 6d736869-6d00-4000-8000-6c756b730003 --volume-key-file k| --volume 'a:b': 1 to 128 printable characters
fence|fence --volume root --uuid 6D736869-6D00-4000-8000-6C756B730003 --volume-key-file k| want a LUKS UUID
seal|seal --select 4,15 -o x| PCR 15 is the unseal fence
EOF2
)

n=0
while IFS='|' read -r unit args want; do
        [ -n "$args$want" ] || continue
        n=$((n + 1))
        name="mshim $args"
        eval "set -- $args"
        "$MSHIM" "$@" >"$t/out" 2>"$t/err" </dev/null; rc=$?
        see="; see 'mshim${unit:+ $unit} --help'"
        line=$(head -n 1 "$t/err")
        if [ "$rc" = 2 ] && [ ! -s "$t/out" ] && [ "$(wc -l <"$t/err")" = 1 ] &&
           [[ $line == "mshim: "* ]] && [[ $line == *"$see" ]] && grep -q -E -- "^mshim: .*${want# }" "$t/err"; then
                pass "${name:0:100}"
        else
                fail "${name:0:100}" "rc=$rc, want 2 and: mshim: ...${want}...$see" "stderr: $(head -c 400 "$t/err")" "stdout: $(head -c 200 "$t/out")"
        fi
done <<<"$table"
[ "$n" -gt 40 ] && pass "the table has $n rows" || fail "the table has only $n rows"

# Nothing a usage error rejected was written.
if [ ! -e "$t/o.fd" ] && [ ! -e "$t/other.efi" ] && cmp -s "$OVMF_VARS" "$V" && [ "$(ls "$t" | tr "\n" " ")" = "c.pem err fb.efi img.efi k.pem out vars.fd " ]; then pass "usage errors write nothing"
else fail "usage errors write nothing"; fi

# Errors that are not usage errors also start with "mshim:" (not with a
# command's name as getopt's own messages would) and are one line.
for args in "log $t/none.bin" "vars list $t/none.fd" "pe-hash $t/none.efi" "sbat $t/none.efi" "log diff $t/none $t/none"; do
        # shellcheck disable=SC2086
        "$MSHIM" $args >/dev/null 2>"$t/err"; rc=$?
        if [ "$rc" = 2 ] && [ "$(grep -c -v '^mshim: ' "$t/err")" = 0 ] && [ -s "$t/err" ]; then pass "mshim $args: mshim: messages"
        else fail "mshim $args: mshim: messages" "rc=$rc $(cat "$t/err")"; fi
done

# Every command the dispatcher knows (tools/mshim.c) is listed by
# `mshim --help` and in mshim(1)'s SEE ALSO: a user finds each from there.
"$MSHIM" --help > "$t/help" 2>&1
for c in $(sed -n 's/^ *{ *"\([a-z-]*\)", *cmd_[a-z_]* *},.*/\1/p' tools/mshim.c); do
        check "mshim --help lists '$c'" grep -qE "^  $c( |\$)" "$t/help"
        check "mshim(1) SEE ALSO names mshim-$c(1)" grep -q "mshim-$c(1)" man/mshim.1.txt
done
