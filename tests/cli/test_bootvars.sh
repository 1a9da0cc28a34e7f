#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim set-default / set-oneshot: the Boot Loader Interface's
# LoaderEntryDefault and LoaderEntryOneShot (systemd's BOOT_LOADER_INTERFACE:
# vendor GUID 4a67b082-0a4c-41cf-b6c7-440b29bb8c4f, the id as UTF-16LE with
# its NUL, non-volatile with boot and runtime access). Written into an
# efivarfs-like directory ($MSHIM_EFIVARS; the expected bytes built here by
# Python from the spec) and into an OVMF store (--vars). Then `mshim predict
# --esp` follows them: OneShot before Default before loader.conf's default,
# the expected PCRs from predict_fixture.py expect-entry (hashlib).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
KERNEL=${KERNEL:-build/kernel/vmlinuz}
OVMF_VARS=${MB_OVMF_DIR:-/usr/share/OVMF}/OVMF_VARS_4M.fd
FIX=tests/cli/predict_fixture.py
GUID=4a67b082-0a4c-41cf-b6c7-440b29bb8c4f
T=$(mktemp -d)
cli_init bootvars "$T"
# expect_exit NAME RC PAT CMD...: lib.sh's expect_rc, but PAT may be on
# standard output too (bless reports there), and exit 2 prints nothing on it.
expect_exit() {
        local name=$1 want=$2 pat=$3 rc; shift 3
        "$@" >"$T/out" 2>"$T/err"; rc=$?
        if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$T/err" "$T/out"; } &&
           { [ "$want" != 2 ] || [ ! -s "$T/out" ]; }; then pass "$name"
        else fail "$name (exit $rc, want $want; stderr: $(head -c 300 "$T/err"); stdout: $(head -c 200 "$T/out"))"; fi
}
# The efivarfs file of an id: u32le attributes 7, the id in UTF-16LE, NUL.
want_bytes() { python3 -c 'import sys; sys.stdout.buffer.write((7).to_bytes(4, "little") + (sys.argv[1] + "\0").encode("utf-16-le"))' "$1"; }
same_file() { cmp -s "$1" <(want_bytes "$2"); }

export MSHIM_EFIVARS=$T/efivars
mkdir -p "$MSHIM_EFIVARS"
V=$MSHIM_EFIVARS

# ---- efivarfs --------------------------------------------------------------
expect_exit "set-default writes LoaderEntryDefault" 0 "" "$MSHIM" set-default debian-6.1.conf
same_file "$V/LoaderEntryDefault-$GUID" debian-6.1.conf && pass "LoaderEntryDefault: attributes NV|BS|RT, UTF-16LE id, NUL" ||
        fail "LoaderEntryDefault bytes: $(od -An -tx1 "$V/LoaderEntryDefault-$GUID" 2>&1 | head -2)"
expect_exit "set-default again, a shorter id, replaces the value" 0 "" "$MSHIM" set-default b
same_file "$V/LoaderEntryDefault-$GUID" b && pass "the shorter value, nothing of the old left" || fail "set-default replace"
expect_exit "set-oneshot writes LoaderEntryOneShot" 0 "" "$MSHIM" set-oneshot ünï
same_file "$V/LoaderEntryOneShot-$GUID" ünï && pass "LoaderEntryOneShot: non-ASCII as UTF-16LE" || fail "LoaderEntryOneShot bytes"
expect_exit "set-oneshot '' deletes it" 0 "" "$MSHIM" set-oneshot ''
[ ! -e "$V/LoaderEntryOneShot-$GUID" ] && pass "LoaderEntryOneShot gone" || fail "LoaderEntryOneShot still there"
expect_exit "deleting what is not there is fine" 0 "" "$MSHIM" set-oneshot ''
# ---- bad usage: exit 2, one line, nothing changed -----------------------------
cp "$V/LoaderEntryDefault-$GUID" "$T/before"
expect_exit "no ID" 2 "no entry ID given; see 'mshim set-default --help'" "$MSHIM" set-default
expect_exit "two IDs" 2 "unexpected argument 'c'" "$MSHIM" set-default b c
expect_exit "a path is not an id" 2 "'/a.conf' is not an entry id" "$MSHIM" set-default /a.conf
expect_exit "--vars twice" 2 "vars" "$MSHIM" set-oneshot --vars "$T/x" --vars "$T/y" b
expect_exit "an unreadable store" 2 "$T/none" "$MSHIM" set-oneshot --vars "$T/none" b
cmp -s "$T/before" "$V/LoaderEntryDefault-$GUID" && pass "bad usage changed nothing" || fail "bad usage changed the variable"
MSHIM_EFIVARS=$T/no/such/dir expect_exit "efivarfs not there" 2 "cannot write it" "$MSHIM" set-default b

# ---- an OVMF store (--vars) ----------------------------------------------------
if [ -f "$OVMF_VARS" ]; then
        cp "$OVMF_VARS" "$T/vars.fd"
        expect_exit "set-oneshot --vars" 0 "" "$MSHIM" set-oneshot --vars "$T/vars.fd" b.conf
        "$MSHIM" vars get "$T/vars.fd" LoaderEntryOneShot --guid "$GUID" -o "$T/got" 2>"$T/err"
        cmp -s "$T/got" <(want_bytes b.conf | tail -c +5) && pass "the store holds LoaderEntryOneShot = b.conf" ||
                fail "store value: $(cat "$T/err") $(od -An -tx1 "$T/got" 2>&1 | head -2)"
        "$MSHIM" vars list "$T/vars.fd" --json > "$T/list.json"
        python3 -c 'import json, sys
v = [v for v in json.load(open(sys.argv[1]))["variables"] if v["name"] == "LoaderEntryOneShot"]
sys.exit(0 if len(v) == 1 and v[0]["guid"] == sys.argv[2] else 1)' "$T/list.json" "$GUID" &&
                pass "one live LoaderEntryOneShot, in the loader GUID" || fail "store list: $(head -c 400 "$T/list.json")"
        expect_exit "set-oneshot --vars '' deletes it" 0 "" "$MSHIM" set-oneshot --vars "$T/vars.fd" ''
        "$MSHIM" vars get "$T/vars.fd" LoaderEntryOneShot --guid "$GUID" -o "$T/got2" >/dev/null 2>&1 &&
                fail "still in the store" || pass "gone from the store"
else
        fail "no $OVMF_VARS (make deps)"
fi

# ---- predict --esp follows them -------------------------------------------------
[ -f "$KERNEL" ] || { fail "missing $KERNEL: run make deps"; exit 1; }
F=$T/boot
python3 "$FIX" make "$F" "$KERNEL" || { fail "fixture"; exit 1; }
base=(--log "$F/log.bin" --pcrs "$F/pcrs.txt" --esp "$F/esp" --json)
E=$F/esp/loader/entries
printf 'title B\nlinux /vmlinuz\ninitrd /initrd.img\noptions quiet b=1\n' > "$E/b.conf"
rm -f "$V"/*
# expect NAME ENTRY OPTIONS: PCRs 5 and 12 of ENTRY booting (hashlib).
expect() {
        python3 "$FIX" expect-entry --entry-name "$1" --entry "$E/$1" --kernel "$F/esp/vmlinuz" \
                --initrd "$F/esp/initrd.img" --options "$2" --loader-conf "$F/esp/loader/loader.conf" --select 5,12
}
same_5_12() {
        if python3 -c 'import json, sys
got = json.load(open(sys.argv[1]))["pcrs"]; want = json.loads(sys.argv[2])
g = {b: {p: v for p, v in got[b].items() if p in ("5", "12")} for b in want}
sys.exit(0 if g == want else "got %s\nwant %s" % (g, want))' "$T/out" "$2"; then pass "$1"; else fail "$1"; fi
}
A=$(expect a.conf "quiet splash") B=$(expect b.conf "quiet b=1")
expect_exit "no variables: loader.conf's default a" 0 "" "$MSHIM" predict "${base[@]}"
same_5_12 "no variables: a.conf's PCRs 5 and 12" "$A"
expect_exit "--oneshot b" 0 "" "$MSHIM" predict "${base[@]}" --oneshot b
same_5_12 "--oneshot b: b.conf's PCRs 5 and 12, not a.conf's" "$B"
[ "$B" != "$A" ] && pass "another entry: other PCRs 5 and 12 (a secret sealed to a stays shut)" || fail "same PCRs"
expect_exit "--default b.conf beats loader.conf's default" 0 "" "$MSHIM" predict "${base[@]}" --default b.conf
same_5_12 "--default b.conf: b.conf's PCRs" "$B"
expect_exit "--oneshot a beats --default b" 0 "" "$MSHIM" predict "${base[@]}" --default b --oneshot a
same_5_12 "--oneshot a --default b: a.conf's PCRs" "$A"
expect_exit "a OneShot naming nothing: the Default" 0 "" "$MSHIM" predict "${base[@]}" --default b --oneshot zz
same_5_12 "--oneshot zz --default b: b.conf's PCRs" "$B"
"$MSHIM" set-oneshot b
expect_exit "--esp reads LoaderEntryOneShot from efivarfs" 0 "" "$MSHIM" predict "${base[@]}"
same_5_12 "efivarfs OneShot b: b.conf's PCRs" "$B"
expect_exit "--entry-id a with OneShot b: refused, naming both" 2 "mshim would boot b.conf, not a" \
        "$MSHIM" predict "${base[@]}" --entry-id a
expect_exit "--oneshot without --esp" 2 "need --esp" "$MSHIM" predict --log "$F/log.bin" --pcrs "$F/pcrs.txt" --oneshot b

# ---- boot counting: the counter is not measured ---------------------------------
rm -f "$E/b.conf" "$V"/*
mv "$E/a.conf" "$E/a+3-0.conf"
expect_exit "an entry with a boot counter" 0 "" "$MSHIM" predict "${base[@]}"
same_5_12 "a+3-0.conf predicts a.conf's PCRs 5 and 12 (the path measured has no counter)" "$A"
mv "$E/a+3-0.conf" "$E/a+0-3.conf"
printf 'title B\nlinux /vmlinuz\ninitrd /initrd.img\noptions quiet b=1\n' > "$E/b.conf"
# Sorted last, but loader.conf's "default a" names it exactly: still first
# (systemd-boot's rule); --default b moves on to b.
expect_exit "no tries left, named by the default" 0 "" "$MSHIM" predict "${base[@]}"
same_5_12 "a+0-3.conf named by loader.conf's default: a.conf's PCRs" "$A"
expect_exit "no tries left, LoaderEntryDefault b" 0 "" "$MSHIM" predict "${base[@]}" --default b
same_5_12 "--default b: b.conf's PCRs" "$B"
rm "$E/b.conf"; mv "$E/a+0-3.conf" "$E/a.conf"

# ---- mshim bless -----------------------------------------------------------------
S=$T/esp2; mkdir -p "$S/loader/entries"
printf 'title D\nlinux /vmlinuz\n' > "$S/loader/entries/deb+1-1.conf"
cp "$S/loader/entries/deb+1-1.conf" "$T/deb.bytes"
expect_exit "bless without LoaderEntrySelected: nothing to do" 0 "not set" "$MSHIM" bless --esp "$S"
[ -e "$S/loader/entries/deb+1-1.conf" ] && pass "nothing renamed" || fail "renamed without LoaderEntrySelected"
python3 -c 'import sys; open(sys.argv[1], "wb").write((6).to_bytes(4, "little") + "deb.conf\0".encode("utf-16-le"))' \
        "$V/LoaderEntrySelected-$GUID"
expect_exit "bless renames NAME+LEFT-DONE.conf to NAME.conf" 0 "deb+1-1.conf -> deb.conf" "$MSHIM" bless --esp "$S"
[ ! -e "$S/loader/entries/deb+1-1.conf" ] && cmp -s "$T/deb.bytes" "$S/loader/entries/deb.conf" &&
        pass "deb.conf holds the entry's bytes, the counted name is gone" || fail "after bless: $(ls "$S/loader/entries")"
expect_exit "bless again: already good" 0 "already good" "$MSHIM" bless --esp "$S"
cp "$T/deb.bytes" "$S/loader/entries/deb+2.conf"
expect_exit "a counted and a plain file: refused, exit 1" 1 "not renaming" "$MSHIM" bless --esp "$S"
[ -e "$S/loader/entries/deb+2.conf" ] && [ -e "$S/loader/entries/deb.conf" ] && pass "refused: both left as they were" ||
        fail "refused bless changed files"
rm "$S/loader/entries/deb.conf" "$S/loader/entries/deb+2.conf"
expect_exit "LoaderEntrySelected naming no file" 2 "no entry deb.conf" "$MSHIM" bless --esp "$S"
expect_exit "bless: an argument" 2 "unexpected argument 'x'; see 'mshim bless --help'" "$MSHIM" bless x
expect_exit "bless: no ESP dir" 2 "cannot list" "$MSHIM" bless --esp "$T/nothing"
grep -q '^ExecStart=@LIBDIR@/kernel-hook bless$' hooks/mshim-bless.service && grep -q '^After=.*boot-complete.target' hooks/mshim-bless.service &&
        grep -q 'hooks/mshim-bless.service:$(SYSTEMDUNITDIR)/mshim-bless.service' Makefile &&
        pass "mshim-bless.service: after boot-complete.target, installed by make install" || fail "mshim-bless.service"

exit "$CLI_FAILED"
