#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim luks enroll / list / remove and mshim unseal --luks-token on real
# LUKS2 image files (cryptsetup on the host) and swtpm. The oracles are
# cryptsetup itself (luksDump --dump-json-metadata read with Python's json,
# open --test-passphrase, luksHeaderBackup/Restore, token export) and
# Python's base64; the images use a fast PBKDF (pbkdf2, 1000 iterations).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
mkdir -p build
tmp=$(mktemp -d "$PWD/build/lukstest.XXXXXX")
cli_init luks "$tmp"
cli_need swtpm swtpm_ioctl tpm2_pcrextend cryptsetup python3
cli_swtpm "$tmp" || { fail "swtpm did not start"; exit 1; }
st=$tmp/state esp=$tmp/esp
printf 'the passphrase' >"$tmp/pass"
printf 'not the passphrase' >"$tmp/wrong"
echo 4711 >"$tmp/pin"
"$MSHIM" policy init --state-dir "$st" >/dev/null 2>&1 &&
        "$MSHIM" policy approve --state-dir "$st" --esp "$esp" --current >/dev/null 2>&1 ||
        { fail "set-up: policy init, approve --current"; exit 1; }

# mkluks NAME: a LUKS2 image tmp/NAME.img, the passphrase in key slot 0.
mkluks() {
        truncate -s 20M "$tmp/$1.img" &&
                cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
                        --key-file "$tmp/pass" "$tmp/$1.img" >/dev/null 2>&1
}
meta() { cryptsetup luksDump --dump-json-metadata "$1"; }
export -f meta
# opens IMG: standard input opens IMG (cryptsetup).
opens() { cryptsetup open --test-passphrase --key-file - "$1" 2>/dev/null; }
export -f opens
# jq-like: python3 EXPR over IMG's metadata as m.
py() { local img=$1; shift; meta "$img" | python3 -c "import base64, json, re, sys; m = json.load(sys.stdin); $1"; }

# ---- enroll, with a recovery key, editing a crypttab ------------------------------
mkluks a || { fail "set-up: luksFormat"; exit 1; }
ua=$(cryptsetup luksUUID "$tmp/a.img")
printf '# the machine'"'"'s volumes\nswap /dev/sdz9 /dev/urandom swap\nroot UUID=%s none luks,discard\n' "$ua" >"$tmp/crypttab"
cp "$tmp/crypttab" "$tmp/crypttab.orig"
out=$("$MSHIM" luks enroll --state-dir "$st" --unlock-key-file "$tmp/pass" --recovery-key --crypttab "$tmp/crypttab" \
        "$tmp/a.img" 2>"$tmp/err"); rc=$?
check "enroll --recovery-key succeeds" test "$rc" = 0
[ "$rc" = 0 ] || cat "$tmp/err" >&2
check "enroll: the mshim-tpm2 token names key slot 1, version 1, the default PCRs, signed policy, no PIN" \
        py "$tmp/a.img" 't = [t for t in m["tokens"].values() if t["type"] == "mshim-tpm2"]
assert len(t) == 1 and t[0]["keyslots"] == ["1"] and t[0]["mshim-version"] == 1, t
assert t[0]["mshim-pcrs"] == [4, 5, 7, 9, 12] and t[0]["mshim-policy"] == "signed" and t[0]["mshim-pin"] is False, t
s = base64.b64decode(t[0]["mshim-sealed"], validate=True).decode()
assert "mode signed" in s and "pcrs 4,5,7,9,12" in s and "fence 15" in s, s'
check "enroll: the new key slots use PBKDF2-SHA512 at 1000 iterations (a random key: as systemd-cryptenroll's TPM slots)" \
        py "$tmp/a.img" 'k = m["keyslots"]
assert sorted(k) == ["0", "1", "2"], sorted(k)
for s in "1", "2":
    assert (k[s]["kdf"]["type"], k[s]["kdf"]["hash"], k[s]["kdf"]["iterations"]) == ("pbkdf2", "sha512", 1000), k[s]'
check "enroll: the mshim-recovery token names key slot 2 and holds no secret (type, keyslots, version only)" \
        py "$tmp/a.img" 't = [t for t in m["tokens"].values() if t["type"] == "mshim-recovery"]
assert t == [{"type": "mshim-recovery", "keyslots": ["2"], "mshim-version": 1}], t'
rk=$(grep -E '^([cbdefghijklnrtuv]{8}-){7}[cbdefghijklnrtuv]{8}$' <<<"$out")
check "enroll: the recovery key is printed once: 8 groups of 8 modhex characters (256 bits)" \
        test "$(grep -c -E '^([cbdefghijklnrtuv]{8}-){7}[cbdefghijklnrtuv]{8}$' <<<"$out")" = 1
check "the recovery key opens the volume (cryptsetup open --test-passphrase)" bash -c "printf %s '$rk' | cryptsetup open --test-passphrase --key-slot 2 --key-file - '$tmp/a.img'"
check "the passphrase still opens the volume (key slot 0)" bash -c "cryptsetup open --test-passphrase --key-slot 0 --key-file '$tmp/pass' '$tmp/a.img'"
check "enroll: crypttab: only the volume's line changed, keyscript= added to its options" \
        python3 - "$tmp/crypttab.orig" "$tmp/crypttab" "$ua" <<'PY'
import sys
a, b = open(sys.argv[1]).read().split("\n"), open(sys.argv[2]).read().split("\n")
want = [l + ",keyscript=/usr/local/lib/mshim/cryptroot-unseal" if sys.argv[3] in l else l for l in a]
sys.exit(0 if b == want else "%r" % b)
PY
check "enroll: crypttab: the file before the edit is kept as crypttab.mshim-bak" cmp -s "$tmp/crypttab.orig" "$tmp/crypttab.mshim-bak"

# ---- the token's key opens the volume -------------------------------------------
"$MSHIM" unseal --esp "$esp" --luks-token "$tmp/a.img" >"$tmp/a.key" 2>"$tmp/err"; rc=$?
check "unseal --luks-token: the sealed key of the token (32 bytes)" test "$rc" = 0 -a "$(stat -c %s "$tmp/a.key")" = 32
check "unseal --luks-token: the key opens the volume in the token's key slot" \
        bash -c "cryptsetup open --test-passphrase --key-slot 1 --key-file '$tmp/a.key' '$tmp/a.img'"
out=$("$MSHIM" luks list "$tmp/a.img" 2>&1); rc=$?
check "list: the passphrase, the TPM slot (policy, PCRs, fence, pin) and the recovery slot" bash -c '[ "$1" = 0 ] &&
        grep -qx "keyslot 0: passphrase or key file" <<<"$2" &&
        grep -qE "^keyslot 1: mshim-tpm2 \(token 0\): signed policy, policy key 000b[0-9a-f]{64}, PCRs 4,5,7,9,12, fence 15, pin no$" <<<"$2" &&
        grep -qx "keyslot 2: mshim-recovery (token 1)" <<<"$2"' _ "$rc" "$out"
# The policy key in the list is the state directory's (its Name: 000b || SHA-256 of its TPMT_PUBLIC).
# ---- refusals: nothing changes --------------------------------------------------
meta "$tmp/a.img" >"$tmp/a.meta"
"$MSHIM" luks enroll --state-dir "$st" --unlock-key-file "$tmp/pass" --no-crypttab "$tmp/a.img" >/dev/null 2>"$tmp/err"; rc=$?
check "enroll twice: refused (exit 2, 'enrolled already'), the header unchanged" bash -c \
        "[ $rc = 2 ] && grep -q 'enrolled already' '$tmp/err' && meta '$tmp/a.img' | cmp -s - '$tmp/a.meta'"
mkluks w
meta "$tmp/w.img" >"$tmp/w.meta"
"$MSHIM" luks enroll --state-dir "$st" --unlock-key-file "$tmp/wrong" --no-crypttab "$tmp/w.img" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "wrong passphrase: refused (exit 1, 'opens no key slot; nothing added'), the header unchanged" bash -c \
        "[ $rc = 1 ] && grep -q 'the passphrase opens no key slot; nothing added' '$tmp/err' && meta '$tmp/w.img' | cmp -s - '$tmp/w.meta'"
truncate -s 20M "$tmp/plain.img"
"$MSHIM" luks enroll --state-dir "$st" --unlock-key-file "$tmp/pass" --no-crypttab "$tmp/plain.img" >/dev/null 2>"$tmp/err"; rc=$?
check "not LUKS: refused (exit 2, 'is not a LUKS2 volume')" bash -c "[ $rc = 2 ] && grep -q 'plain.img is not a LUKS2 volume' '$tmp/err'"
truncate -s 20M "$tmp/l1.img"
cryptsetup luksFormat --batch-mode --type luks1 --pbkdf-force-iterations 1000 --key-file "$tmp/pass" "$tmp/l1.img" >/dev/null 2>&1
"$MSHIM" luks enroll --state-dir "$st" --unlock-key-file "$tmp/pass" --no-crypttab "$tmp/l1.img" >/dev/null 2>"$tmp/err"; rc=$?
check "LUKS1: refused (exit 2, 'is not a LUKS2 volume'), no key slot added" bash -c \
        "[ $rc = 2 ] && grep -q 'l1.img is not a LUKS2 volume' '$tmp/err' && [ \$(cryptsetup luksDump '$tmp/l1.img' | grep -c ': ENABLED') = 1 ]"
# The header is read with one cryptsetup run (luksDump) when it works (the
# keyscript reads it twice an unlock); isLuks only when the dump failed, to
# name why. A wrapper on PATH logs each run, then runs the real one.
mkdir -p "$tmp/bin"
real_cs=$(command -v cryptsetup)
printf '#!/bin/sh\necho "$*" >> "%s"\nexec "%s" "$@"\n' "$tmp/cs.log" "$real_cs" >"$tmp/bin/cryptsetup"
chmod +x "$tmp/bin/cryptsetup"
: >"$tmp/cs.log"
PATH=$tmp/bin:$PATH "$MSHIM" luks list "$tmp/w.img" >/dev/null 2>"$tmp/err"; rc=$?
check "luks list: one cryptsetup run (luksDump --dump-json-metadata), exit 0" bash -c \
        "[ $rc = 0 ] && [ \"\$(cat '$tmp/cs.log')\" = 'luksDump --dump-json-metadata $tmp/w.img' ]"
env PATH=/nonexistent "$MSHIM" luks list "$tmp/w.img" >/dev/null 2>"$tmp/err"; rc=$?
check "luks list without cryptsetup on PATH: exit 2, says it cannot run cryptsetup" bash -c \
        "[ $rc = 2 ] && grep -q 'cannot run cryptsetup: is it installed' '$tmp/err'"
# A cryptsetup that knows the volume is LUKS2 but cannot dump it (as before
# 2.5): its own message is shown, then mshim's.
printf '#!/bin/sh\ncase "$1" in isLuks) exit 0 ;; esac\necho "unknown option --dump-json-metadata" >&2\nexit 1\n' \
        >"$tmp/bin/cryptsetup"
PATH=$tmp/bin:$PATH "$MSHIM" luks list "$tmp/w.img" >/dev/null 2>"$tmp/err"; rc=$?
check "luks list, a LUKS2 volume cryptsetup cannot dump: exit 2, cryptsetup's message and 'luksDump --dump-json-metadata failed'" bash -c \
        "[ $rc = 2 ] && grep -q 'unknown option --dump-json-metadata' '$tmp/err' &&
         grep -q 'w.img: cryptsetup luksDump --dump-json-metadata failed (cryptsetup 2.5 or later needed)' '$tmp/err'"
# A dump killed by a signal: said so, without the version hint.
printf '#!/bin/sh\ncase "$1" in isLuks) exit 0 ;; esac\nkill -KILL $$\n' >"$tmp/bin/cryptsetup"
PATH=$tmp/bin:$PATH "$MSHIM" luks list "$tmp/w.img" >/dev/null 2>"$tmp/err"; rc=$?
check "luks list, a dump killed by a signal: exit 2, 'failed', no version hint" bash -c \
        "[ $rc = 2 ] && grep -q 'w.img: cryptsetup luksDump --dump-json-metadata failed\$' '$tmp/err'"
printf 'other UUID=00000000-0000-0000-0000-000000000000 none luks\n' >"$tmp/ct-none"
"$MSHIM" luks enroll --state-dir "$st" --unlock-key-file "$tmp/pass" --crypttab "$tmp/ct-none" "$tmp/w.img" >/dev/null 2>"$tmp/err"; rc=$?
check "no crypttab line for the volume: refused before anything (exit 2), header and crypttab unchanged" bash -c \
        "[ $rc = 2 ] && grep -q 'no line names' '$tmp/err' && meta '$tmp/w.img' | cmp -s - '$tmp/w.meta' &&
         [ \"\$(cat '$tmp/ct-none')\" = 'other UUID=00000000-0000-0000-0000-000000000000 none luks' ] && [ ! -e '$tmp/ct-none.mshim-bak' ]"
printf 'w %s none luks,keyscript=decrypt_derived\n' "$tmp/w.img" >"$tmp/ct-other"
"$MSHIM" luks enroll --state-dir "$st" --unlock-key-file "$tmp/pass" --crypttab "$tmp/ct-other" "$tmp/w.img" >/dev/null 2>"$tmp/err"; rc=$?
check "a crypttab line (by path) with another keyscript: refused (exit 2), header unchanged" bash -c \
        "[ $rc = 2 ] && grep -q 'has keyscript=decrypt_derived; not replacing it' '$tmp/err' && meta '$tmp/w.img' | cmp -s - '$tmp/w.meta'"
"$MSHIM" unseal --esp "$esp" --luks-token "$tmp/w.img" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "unseal --luks-token of a volume without a token: exit 1, no key" bash -c \
        "[ $rc = 1 ] && [ ! -s '$tmp/out' ] && grep -q 'has no mshim-tpm2 token' '$tmp/err'"

# ---- the token survives a header backup and restore ---------------------------------
cryptsetup luksHeaderBackup --header-backup-file "$tmp/a.hdr" "$tmp/a.img" &&
        "$MSHIM" luks remove --all "$tmp/a.img" >/dev/null 2>&1 &&
        ! py "$tmp/a.img" 'sys.exit(0 if m["tokens"] else 1)' &&
        cryptsetup luksHeaderRestore --batch-mode --header-backup-file "$tmp/a.hdr" "$tmp/a.img" >/dev/null 2>&1
check "header backup, remove --all (no token left), header restore" test $? = 0
check "after the restore, the token unseals the same key again, and it opens the volume" bash -c \
        "'$MSHIM' unseal --esp '$esp' --luks-token '$tmp/a.img' 2>/dev/null | cmp -s - '$tmp/a.key' && opens '$tmp/a.img' <'$tmp/a.key'"

# ---- two volumes at once; a header with another program's token ----------------------
mkluks b && head -c 32 /dev/urandom >"$tmp/sd.key" &&
        cryptsetup luksAddKey --batch-mode --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --key-file "$tmp/pass" \
                "$tmp/b.img" "$tmp/sd.key" >/dev/null 2>&1 &&
        printf '%s' '{"type":"systemd-tpm2","keyslots":["1"],"tpm2-blob":"AAAA","tpm2-pcrs":[7],"tpm2-pcr-bank":"sha256","tpm2-primary-alg":"ecc","tpm2-policy-hash":"00","tpm2-pin":false}' |
        cryptsetup token import --json-file - --token-id 0 "$tmp/b.img" &&
        cryptsetup token export --token-id 0 "$tmp/b.img" >"$tmp/sd.before" || fail "set-up: volume b with a systemd-tpm2 token"
"$MSHIM" luks enroll --state-dir "$st" --pin-file "$tmp/pin" --unlock-key-file "$tmp/pass" --no-crypttab "$tmp/b.img" \
        >"$tmp/out" 2>"$tmp/err"; rc=$?
check "a second volume with another program's token: enroll --pin-file succeeds in key slot 2, token 1" bash -c \
        "[ $rc = 0 ] && grep -q 'key slot 2 opens with the TPM (token 1, mshim-tpm2' '$tmp/out'"
check "--no-crypttab prints the keyscript option and a line with the volume's UUID" \
        grep -q "UUID=$(cryptsetup luksUUID "$tmp/b.img") none luks,keyscript=/usr/local/lib/mshim/cryptroot-unseal" "$tmp/out"
check "the other program's token is left as it was (token export)" bash -c \
        "cryptsetup token export --token-id 0 '$tmp/b.img' | cmp -s - '$tmp/sd.before'"
out=$("$MSHIM" luks list "$tmp/b.img" 2>&1)
check "list: the other program's token is 'not mshim's'; the PIN says 'pin yes'" bash -c \
        'grep -qx "keyslot 1: systemd-tpm2 (token 0): not mshim'"'"'s" <<<"$1" && grep -q "^keyslot 2: mshim-tpm2 (token 1): .*, pin yes$" <<<"$1"' _ "$out"
"$MSHIM" unseal --esp "$esp" --luks-token "$tmp/b.img" --pin-file "$tmp/pin" >"$tmp/b.key" 2>"$tmp/err"
check "two volumes: each token unseals its own key (b's with its PIN), which opens only its own volume" bash -c \
        "opens '$tmp/b.img' <'$tmp/b.key' && ! cmp -s '$tmp/a.key' '$tmp/b.key' && ! opens '$tmp/b.img' <'$tmp/a.key' &&
         '$MSHIM' unseal --esp '$esp' --luks-token '$tmp/a.img' 2>/dev/null | opens '$tmp/a.img'"

# ---- remove -------------------------------------------------------------------
"$MSHIM" luks remove --slot 1 "$tmp/b.img" >/dev/null 2>"$tmp/err"; rc=$?
check "remove --slot of another program's slot: refused (exit 2), its token and slot kept" bash -c \
        "[ $rc = 2 ] && grep -q 'no key slot of mshim' '$tmp/err' && cryptsetup token export --token-id 0 '$tmp/b.img' | cmp -s - '$tmp/sd.before' &&
         opens '$tmp/b.img' <'$tmp/sd.key'"
"$MSHIM" luks remove --all "$tmp/b.img" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "remove --all: mshim's slot and token gone, the other program's token and slot and the passphrase kept" bash -c \
        "[ $rc = 0 ] && ! opens '$tmp/b.img' <'$tmp/b.key' && opens '$tmp/b.img' <'$tmp/sd.key' && opens '$tmp/b.img' <'$tmp/pass' &&
         cryptsetup token export --token-id 0 '$tmp/b.img' | cmp -s - '$tmp/sd.before' && ! cryptsetup token export --token-id 1 '$tmp/b.img' >/dev/null 2>&1"
"$MSHIM" luks remove --wipe-slot recovery "$tmp/a.img" >/dev/null 2>&1; rc=$?
check "remove --wipe-slot recovery: the recovery key no longer opens; the TPM key and passphrase do" bash -c \
        "[ $rc = 0 ] && ! printf %s '$rk' | opens '$tmp/a.img' && opens '$tmp/a.img' <'$tmp/a.key' && opens '$tmp/a.img' <'$tmp/pass'"
# The passphrase's slot killed: only the TPM's is left.
cryptsetup luksKillSlot --batch-mode "$tmp/a.img" 0 >/dev/null 2>&1
meta "$tmp/a.img" >"$tmp/a.meta"
"$MSHIM" luks remove "$tmp/a.img" >/dev/null 2>"$tmp/err"; rc=$?
check "remove of the last slot that opens without the TPM: refused (exit 2), the header unchanged" bash -c \
        "[ $rc = 2 ] && grep -q 'refusing: no passphrase or recovery key slot would be left' '$tmp/err' &&
         meta '$tmp/a.img' | cmp -s - '$tmp/a.meta' && opens '$tmp/a.img' <'$tmp/a.key'"

# ---- the token is on disk, for anyone to read or write (docs/SECURITY.md) -----------
# Edited: its sealed key replaced by bytes that are not one.
cp "$tmp/a.img" "$tmp/t.img"
python3 - "$tmp/t.tok" <<'PY' && cryptsetup token remove --token-id 0 "$tmp/t.img" &&
import json, sys
t = {"type": "mshim-tpm2", "keyslots": ["1"], "mshim-version": 1, "mshim-sealed": "bm90IGEgc2VhbGVkIGtleQ=="}
open(sys.argv[1], "w").write(json.dumps(t))
PY
        cryptsetup token import --json-file "$tmp/t.tok" --token-id 0 "$tmp/t.img" || fail "set-up: an edited token"
"$MSHIM" unseal --esp "$esp" --luks-token "$tmp/t.img" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "an edited token: unseal refuses it (exit 2, names the token), no key" bash -c \
        "[ $rc = 2 ] && [ ! -s '$tmp/out' ] && grep -q 't.img, token 0' '$tmp/err'"
# Read: the token's sealed key opens only in an approved boot state.
tpm2_pcrextend 9:sha256=$(printf '%064d' 9) >/dev/null 2>&1 || fail "set-up: tpm2_pcrextend"
"$MSHIM" unseal --esp "$esp" --luks-token "$tmp/a.img" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "the token read by anyone: its key does not unseal once PCR 9 moves off the approved state (exit 1, names PCR 9), no key" bash -c \
        "[ $rc = 1 ] && [ ! -s '$tmp/out' ] && grep -q '^mshim: unseal refused: PCR 9 differs' '$tmp/err'"

# ---- usage ------------------------------------------------------------------------
for args in "luks" "luks bogus" "luks enroll" "luks enroll --tpm2-pcrs 15 x" "luks enroll --pin --pin-file p x" \
            "luks enroll --no-crypttab --crypttab c x" "luks remove --wipe-slot fido2 x" "luks list a b"; do
        # shellcheck disable=SC2086
        "$MSHIM" $args >"$tmp/out" 2>"$tmp/err"; rc=$?
        check "usage: mshim $args: exit 2, one line naming 'mshim luks --help'" bash -c \
                "[ $rc = 2 ] && [ ! -s '$tmp/out' ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q \"see 'mshim luks --help'\" '$tmp/err'"
done

# ---- the keyscript fails closed when PCR 15 cannot record the volume ----
# In a private mount namespace (unshare -m): /run/mshim a read-only tmpfs,
# so its mktemp for the volume key fails; the console a file (no askpass
# on the host: the keyscript reads the passphrase from /dev/console). No
# UEFI here: the keyscript falls back to the passphrase, then must refuse
# to hand it over (exit 1, a message, nothing on stdout). Control: the
# same with a writable /run/mshim hands it over (exit 0).
if command -v unshare >/dev/null && [ "$(id -u)" = 0 ] && [ -e /dev/console ]; then
        made=; [ -d /run/mshim ] || { mkdir -p /run/mshim && made=1; }
        : >"$tmp/console"
        ks() {  # ks ro|rw: the keyscript in its namespace; stdout, stderr, status in $tmp/ks.*
                unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" /dev/console &&
                        mount -t tmpfs -o "$2" tmpfs /run/mshim && CRYPTTAB_NAME=x sh hooks/cryptroot-unseal' \
                        _ "$tmp/console" "$1" >"$tmp/ks.out" 2>"$tmp/ks.err"
                echo $? >"$tmp/ks.rc"
        }
        ks ro
        check "keyscript: no file in /run/mshim for the volume key: refuses to hand over the passphrase (exit 1, nothing out, said)" bash -c \
                "[ \$(cat '$tmp/ks.rc') = 1 ] && [ ! -s '$tmp/ks.out' ] &&
                 grep -q '^mshim: cannot create a file in /run/mshim to record the volume in PCR 15: refusing to hand over the key\$' '$tmp/ks.err'"
        ks rw
        check "keyscript: control, /run/mshim writable: the fallback hands the passphrase over (exit 0)" bash -c \
                "[ \$(cat '$tmp/ks.rc') = 0 ] && ! grep -q 'refusing to hand over' '$tmp/ks.err'"
        [ -n "$made" ] && rmdir /run/mshim
else
        echo "SKIP: keyscript fail-closed check (needs root and unshare)"
fi
exit "$CLI_FAILED"
