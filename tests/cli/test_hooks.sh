#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim's kernel hooks (hooks/, docs/UPGRADES.md) in a sandbox: a fake ESP,
# /boot, state directory and hook.conf under a temporary directory (no real
# /boot or /etc is touched), Debian's kernels from build/kernel and
# build/kernel-rt, and the baseline boot of tests/cli/predict_fixture.py.
# What each prediction must hold comes from predict_fixture.py expect-entry
# (hashlib), the entry's bytes and the copies' names are written out here.
# Both orders of /etc/kernel/postinst.d vs initramfs-tools'
# post-update.d, a new initrd, a kernel that is not the default, failures
# (a corrupt kernel, a refused approval) leaving nothing behind, removal,
# kernel-install, bad settings.
#
# The approvals are the real `mshim policy approve`'s, against a swtpm
# started here (docs SEAL-CLI: swtpm socket, TCTI swtpm:path=...) whose PCRs
# are extended with the baseline boot's events; at the end a secret sealed
# before all this unseals on the boot the hook approved and not on a
# tampered one (the TPM extended with each boot's events, hashlib's).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
ROOT=$PWD
MSHIM_REAL=${MSHIM:-build/test/mshim}
K1=${KERNEL:-build/kernel/vmlinuz}
K2=${KERNEL_RT:-build/kernel-rt/vmlinuz}
FIX=tests/cli/predict_fixture.py
T=$(mktemp -d)
cli_init hooks "$T"
CLI_AT_EXIT='[ -S "$T/tpm/srv.ctrl" ] && swtpm_ioctl --unix "$T/tpm/srv.ctrl" -s 2>/dev/null'
for f in "$K1" "$K2" "$MSHIM_REAL" build/mshimx64.efi; do
        [ -f "$f" ] || { fail "missing $f (make deps; make check-build)"; exit 1; }
done
cli_need swtpm swtpm_ioctl tpm2_pcrextend python3
MSHIM_REAL=$(realpath "$MSHIM_REAL")

# ---- the sandbox ------------------------------------------------------------------
F=$T/fixture
python3 "$FIX" make "$F" "$K1" >/dev/null || { fail "fixture"; exit 1; }
R=$T/root ESP=$T/root/boot/efi BOOT=$T/root/boot STATE=$T/root/var/lib/mshim
mkdir -p "$ESP" "$STATE" "$R/etc/kernel" "$T/bin" "$T/approved"
echo "root=/dev/vda2 ro quiet" >"$R/etc/kernel/cmdline"
OPTS="root=/dev/vda2 ro quiet" FIRST_OPTS="root=/dev/vda2 ro quiet"
TOKEN=0123456789abcdef0123456789abcdef
TITLE="Debian GNU/Linux 12 (bookworm)"
CONF=$R/etc/mshim/hook.conf
write_conf() {
        mkdir -p "${CONF%/*}"
        cat >"$CONF" <<EOF
# the test's settings
ESP=$ESP
BOOT_DIR=$BOOT
STATE_DIR=$STATE
MSHIM=$MSHIM_REAL
ENTRY_TOKEN=$TOKEN
TITLE="$TITLE"
CMDLINE_FILE=$R/etc/kernel/cmdline
LOG=$F/log.bin
EOF
        printf '%s\n' "$@" >>"$CONF"
}
write_conf
export MSHIM_HOOK_CONF=$CONF MSHIM_KERNEL_HOOK=$ROOT/hooks/kernel-hook
# The hook's temporary directories, where the test sees them removed.
export TMPDIR=$T/tmp; mkdir -p "$TMPDIR"
unset DEB_MAINT_PARAMS KERNEL_INSTALL_LAYOUT

# A TPM whose PCRs hold the baseline boot (its events extended); restarted
# (PCRs reset, keys and counter kept) for the boots at the end.
tpm_start() {
        mkdir -p "$T/tpm"
        swtpm socket --tpm2 --tpmstate dir="$T/tpm" --server type=unixio,path="$T/tpm/srv" \
                --ctrl type=unixio,path="$T/tpm/srv.ctrl" --flags not-need-init,startup-clear --daemon ||
                { fail "swtpm starts"; exit 1; }
        cli_extend "$1"
}
tpm_stop() {
        swtpm_ioctl --unix "$T/tpm/srv.ctrl" -s 2>/dev/null
        for _ in $(seq 50); do [ -S "$T/tpm/srv" ] || break; sleep 0.1; done
        rm -f "$T/tpm/srv" "$T/tpm/srv.ctrl"
}
export TPM2TOOLS_TCTI="swtpm:path=$T/tpm/srv"
unset TCTI TSS2_TCTI
tpm_start "$F/extends.txt"
"$MSHIM_REAL" policy init --state-dir "$STATE" >/dev/null 2>"$T/err" || { fail "mshim policy init: $(cat "$T/err")"; exit 1; }
printf 'the disk key' | "$MSHIM_REAL" seal --state-dir "$STATE" -o "$T/disk.sealed" 2>"$T/err" ||
        { fail "mshim seal: $(cat "$T/err")"; exit 1; }

V1=6.1.0-57-amd64 V2=6.1.0-57-rt-amd64 V3=6.1.0-58-rt-amd64 V0=5.10.0-30-amd64 VBAD=6.1.0-99-amd64
printf 'initrd of %s\n' "$V1" >"$T/initrd1"; printf 'initrd of %s\n' "$V2" >"$T/initrd2"
printf 'initrd of %s, new\n' "$V2" >"$T/initrd2b"; printf 'initrd of %s\n' "$V3" >"$T/initrd3"

# install_kernel V IMAGE: what the kernel package unpacks (dpkg keeps the
# package's mtime: older than any initrd written now).
install_kernel() { cp "$2" "$BOOT/vmlinuz-$1"; touch -d '2024-01-01' "$BOOT/vmlinuz-$1"; }
# write_initrd V FILE: what update-initramfs writes.
write_initrd() { cp "$2" "$BOOT/initrd.img-$1"; }

hook() { "$ROOT/hooks/$1" "${@:2}"; }
APPROVALS=$ESP/loader/mshim/approvals
approvals() { ls -A "$APPROVALS" 2>/dev/null | sort; }
n_approvals() { approvals | wc -l; }
# run NAME WANT_RC PATTERN HOOK ARGS...: exit status and a line on stderr;
# the approvals before it kept for new_approvals.
run() {
        local name=$1 want=$2 pat=$3; shift 3
        approvals >"$T/approvals.before"
        hook "$@" >"$T/out" 2>"$T/err"; local rc=$?
        if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$T/err"; }; then pass "$name"
        else fail "$name (exit $rc, want $want; stderr: $(head -c 600 "$T/err"))"; fi
}
# The first 16 hex digits of a file's SHA-256 (coreutils': no Python start-up
# for each of the many names checked).
short() { sha256sum <"$1" | cut -c1-16; }
# The entry the hook must write for V with kernel K and initrd I, as bytes.
entry_text() {
        printf '%s\n' "# written by mshim's kernel hook; the approval of the next boot covers these bytes" \
                "title $TITLE" "version $1" "linux /$TOKEN/$1/linux-$(short "$2")" \
                "initrd /$TOKEN/$1/initrd-$(short "$3")" "options ${4:-$OPTS}"
}
# entry_of V: V's entry file(s): TOKEN-V.conf, or with a boot counter
# TOKEN-V+LEFT-DONE.conf (the hook writes new entries with TRIES=3 tries).
entry_of() {
        local p
        for p in "$ESP/loader/entries/$TOKEN-$1.conf" "$ESP/loader/entries/$TOKEN-$1+"*.conf; do
                [ -f "$p" ] && echo "$p"
        done
}
# check_installed V K I: the entry's bytes, the copies, nothing else.
check_installed() {
        local v=$1 k=$2 i=$3 e
        e=$(entry_of "$1")
        check "$v: the entry's bytes" cmp -s <(entry_text "$v" "$k" "$i") "$e"
        check "$v: the kernel's copy" cmp -s "$k" "$ESP/$TOKEN/$v/linux-$(short "$k")"
        check "$v: the initrd's copy" cmp -s "$i" "$ESP/$TOKEN/$v/initrd-$(short "$i")"
        check "$v: no other file by them" test "$(ls -A "$ESP/$TOKEN/$v" | sort)" = \
                "$(printf '%s\n' "initrd-$(short "$i")" "linux-$(short "$k")")"
}
# The approvals the last run wrote, but the current boot's.
new_approvals() {
        approvals | comm -13 "$T/approvals.before" - | while read -r f; do
                grep -qx "label current boot" "$APPROVALS/$f" || echo "$APPROVALS/$f"
        done
}
# sha256 values of PCRs 4,5,7,9,12 (an approval's order) from expect-entry's JSON
# or a pcrs.txt.
sha256_lines() { python3 -c 'import json, sys
v = json.loads(sys.argv[1])["sha256"]
print("\n".join("sha256:%d=%s" % (p, v[str(p)]) for p in (4, 5, 7, 9, 12)))' "$1"; }
# expect_boot V K I [OPTIONS [EXTENDS [FLAG]]]: the PCRs of V's entry booting
# K and I; FLAG --approval-lines: as sha256 lines in an approval's order.
expect_boot() {
        python3 "$FIX" expect-entry --entry-name "$TOKEN-$1.conf" --entry <(entry_text "$1" "$2" "$3" "${4:-$OPTS}") \
                --kernel "$2" --initrd "$3" --options "${4:-$OPTS}" ${5:+--extends "$5"} ${6:+"$6"}
}
# check_approved NAME V K I [ENTRY_ID [existing]]: the approval the hook's
# last line names is of V's entry booting K and I (hashlib's PCRs), with
# ENTRY_ID (default V's entry); written by that run and the only one it
# wrote (the current boot's aside), or with "existing" one written before
# (the same state approved already: none written).
check_approved() {
        local name=$1 v=$2 k=$3 i=$4 id=${5-$TOKEN-$2} a n
        a=$(grep -o "$APPROVALS/[^ ]*\.approval" "$T/err" | tail -n 1)
        n=$(new_approvals)
        if [ "${6:-new}" = new ]; then
                check "$name: one approval written, the one named" test "$n" = "$a" -a -n "$a"
        elif [ "$6" = resigned ]; then
                check "$name: approved already, re-signed at the epoch the removal moved to ($(epoch))" \
                        test -f "$a" -a "$(sed -n 's/^epoch //p' "$a" 2>/dev/null)" = "$(epoch)"
        else
                check "$name: approved already: none written, an existing one named" test -z "$n" -a -f "$a"
        fi
        [ -f "$a" ] || return
        check "$name: approved the PCRs of $v's boot (hashlib)" \
                cmp -s <(cli_approval_values "$a") <(expect_boot "$v" "$k" "$i" "" "" --approval-lines)
        check "$name: approval's entry id ${id:-(none)}" test "$(sed -n 's/^entry-id //p' "$a")" = "$id"
        LAST_APPROVAL=$a
}
# The epoch counter's value (tpm2-tools).
epoch() { echo $((16#$(tpm2_nvread 0x01804D53 -C 0x01804D53 2>/dev/null | od -An -tx1 | tr -d ' \n'))); }
current_approvals() { grep -lx "label current boot" "$APPROVALS"/* 2>/dev/null; }
# approvals_state: every approval (disk and TOTP) with its hash: a run that
# approves nothing leaves it as it was.
approvals_state() { (cd "$ESP/loader/mshim" 2>/dev/null && find . -name '*.approval' -print0 | sort -z | xargs -0r sha256sum); }
# never_approved ENTRY KERNEL INITRD OPTIONS: no disk approval holds the
# sha256 PCRs 4,5,7,9,12 (hashlib's, predict_fixture.py) of the boot of the
# entry file ENTRY (named V2's) with those bytes as its kernel and initrd.
never_approved() {
        local a want
        want=$(python3 "$FIX" expect-entry --entry-name "$TOKEN-$V2.conf" --entry "$1" \
                --kernel "$2" --initrd "$3" --options "$4" --approval-lines) || return 1
        [ -n "$want" ] || return 1
        for a in "$APPROVALS"/*.approval; do
                [ "$(cli_approval_values "$a")" != "$want" ] || return 1
        done
}
# esp_state: every file on the ESP with its hash, approvals aside.
esp_state() { (cd "$ESP" && find . -path ./loader/mshim -prune -o -type f -print0 | sort -z | xargs -0 sha256sum); }

# ---- a first kernel, initramfs-tools' hook first (run-parts order) ---------------
install_kernel "$V1" "$K1"
run "$V1: post-update.d before any entry: nothing to do" 0 "nothing to do" mshim.post-update "$V1" "$BOOT/initrd.img-$V1"
write_initrd "$V1" "$T/initrd1"
run "$V1: post-update.d, no entry, no kernel waiting: nothing to do" 0 "nothing to do" mshim.post-update "$V1" "$BOOT/initrd.img-$V1"
check "$V1: nothing written yet" test -z "$(ls -A "$ESP")"
run "$V1: postinst.d after the initrd: entry and approval" 0 "entry written" zz-mshim.postinst "$V1" "$BOOT/vmlinuz-$V1"
check_installed "$V1" "$K1" "$T/initrd1"
check_approved "$V1" "$V1" "$K1" "$T/initrd1"
# The shell's reading of approvals (tests/cli/lib.sh), which every check
# below relies on, is seal_fixture.py's (Python's bytes.fromhex).
cli_approval_values "$LAST_APPROVAL" >"$T/values.sh"
python3 tests/cli/seal_fixture.py approval-values "$LAST_APPROVAL" >"$T/values.py"
check "$V1: the approval's values read as seal_fixture.py reads them (five lines)" \
        bash -c '[ "$(wc -l < "$1")" = 5 ] && cmp -s "$1" "$2"' - "$T/values.sh" "$T/values.py"
check "$V1: label 'kernel $V1'" grep -qx "label kernel $V1" "$LAST_APPROVAL"
check "$V1: a new entry has a boot counter, 3 tries (BLS boot counting; TRIES's default)" \
        test "$(entry_of "$V1")" = "$ESP/loader/entries/$TOKEN-$V1+3-0.conf"
check "$V1: the current boot approved too (no approval matched it)" test "$(current_approvals | wc -l)" = 1
check "$V1: ... with the TPM's PCRs (the baseline's replay)" cmp -s <(cli_approval_values "$(current_approvals)") \
        <(grep -E '^sha256:(4|5|7|9|12)=' "$F/pcrs.txt")
check "$V1: no temporary file left" test -z "$(find "$ESP" -name '*mshim-tmp*')"
n=$(n_approvals)
run "$V1: postinst.d again: the entry unchanged" 0 "entry unchanged" zz-mshim.postinst "$V1"
check_approved "$V1 again: its boot approved already" "$V1" "$K1" "$T/initrd1" "$TOKEN-$V1" existing

# ---- a second kernel, zz-mshim before the initrd exists -------------------------------
install_kernel "$V2" "$K2"
before=$(esp_state)
run "$V2: postinst.d before the initrd: deferred" 0 "not written yet" zz-mshim.postinst "$V2" "$BOOT/vmlinuz-$V2"
check "$V2: deferred: the ESP unchanged" test "$(esp_state)" = "$before"
check "$V2: deferred: no approval" test "$(n_approvals)" = "$n"
write_initrd "$V2" "$T/initrd2"
run "$V2: post-update.d writes the entry once the initrd is there" 0 "entry written" mshim.post-update "$V2" "$BOOT/initrd.img-$V2"
check_installed "$V2" "$K2" "$T/initrd2"
check_approved "$V2" "$V2" "$K2" "$T/initrd2"
check "$V2: the current boot already approved: not again" test "$(current_approvals | wc -l)" = 1
check "$V2: $V1's entry untouched" cmp -s <(entry_text "$V1" "$K1" "$T/initrd1") "$(entry_of "$V1")"
n=$(n_approvals)
run "$V2: postinst.d after it: the entry unchanged" 0 "entry unchanged" zz-mshim.postinst "$V2"
check "$V2: no second approval" test "$(n_approvals)" = "$n"

# ---- update-initramfs -u: a new initrd for an installed kernel -------------------------
# The entry was tried once (the loader renamed it, +2-1): the changed entry
# replaces that file, with 3 tries again.
mv "$(entry_of "$V2")" "$ESP/loader/entries/$TOKEN-$V2+2-1.conf"
write_initrd "$V2" "$T/initrd2b"
run "$V2: a new initrd: a new approval" 0 "entry written" mshim.post-update "$V2" "$BOOT/initrd.img-$V2"
check_installed "$V2" "$K2" "$T/initrd2b"
check_approved "$V2 new initrd" "$V2" "$K2" "$T/initrd2b"
check "$V2 new initrd: one entry file, +3-0: the counted +2-1 replaced" \
        test "$(entry_of "$V2")" = "$ESP/loader/entries/$TOKEN-$V2+3-0.conf"
# Blessed (mshim bless drops the counter): a re-run leaves it so.
mv "$(entry_of "$V2")" "$ESP/loader/entries/$TOKEN-$V2.conf"
run "$V2 blessed, postinst.d again: the entry unchanged" 0 "entry unchanged" zz-mshim.postinst "$V2"
check "$V2 blessed: its file keeps its name (no counter given back)" \
        test "$(entry_of "$V2")" = "$ESP/loader/entries/$TOKEN-$V2.conf"

# ---- a kernel that is not the default (an older version) ---------------------------
install_kernel "$V0" "$K1"; write_initrd "$V0" "$T/initrd1"
run "$V0 (older): installed, not the default" 0 "will not be the default" zz-mshim.postinst "$V0"
check_installed "$V0" "$K1" "$T/initrd1"
check_approved "$V0 (older): the default boot ($V2)" "$V2" "$K2" "$T/initrd2b" "$TOKEN-$V2" existing

# ---- failures leave nothing behind (STRICT=yes: refused, exit 1) ---------------------
write_conf "STRICT=yes"
before=$(esp_state); n=$(n_approvals)
head -c 4096 /dev/urandom >"$T/bad-kernel"; install_kernel "$VBAD" "$T/bad-kernel"; write_initrd "$VBAD" "$T/initrd1"
run "corrupt kernel: refused, with mshim predict's message" 1 "^mshim: .*vmlinuz\|^mshim: .*linux-" zz-mshim.postinst "$VBAD"
check "corrupt kernel: the hook says it removed what it wrote" grep -q "removed what this run had written" "$T/err"
check "corrupt kernel: the ESP as before (no entry, no copy, no temporary file)" test "$(esp_state)" = "$before"
check "corrupt kernel: no directory left for it" test ! -e "$ESP/$TOKEN/$VBAD"
check "corrupt kernel: no approval" test "$(n_approvals)" = "$n"
# A PE image with no Linux setup header: what its stub measures (PCR 9) is
# unknown.
install_kernel "$VBAD" build/mshimx64.efi
run "a kernel whose PCR 9 is unpredictable: refused, naming the PCR and why" 1 "PCR  *9: unpredictable: the kernel's setup header" zz-mshim.postinst "$VBAD"
check "unpredictable: the ESP as before" test "$(esp_state)" = "$before"
check "unpredictable: no approval" test "$(n_approvals)" = "$n"
install_kernel "$V3" "$K2"; write_initrd "$V3" "$T/initrd3"
mv "$STATE/policy.key" "$STATE/policy.key.off"
run "approval refused (no policy key): the hook fails, naming it" 1 "policy approve" zz-mshim.postinst "$V3"
mv "$STATE/policy.key.off" "$STATE/policy.key"
check "approval refused: the ESP as before" test "$(esp_state)" = "$before"
check "approval refused: no default entry for $V3" test -z "$(entry_of "$V3")"
sed 's/^sha256:4=./sha256:4=f/; s/^sha256:4=ff/sha256:4=00/' "$F/pcrs.txt" >"$T/wrong-pcrs.txt"
check "the wrong PCRs differ" bash -c "! cmp -s '$F/pcrs.txt' '$T/wrong-pcrs.txt'"
write_conf "PCRS=$T/wrong-pcrs.txt" "STRICT=yes"
run "a baseline that does not replay: refused, naming the PCR" 1 "sha256 PCR 4" zz-mshim.postinst "$V3"
write_conf
check "a baseline that does not replay: the ESP as before" test "$(esp_state)" = "$before"
check "a baseline that does not replay: no approval" test "$(n_approvals)" = "$n"

# ---- the same failures without STRICT: apt goes on -------------------------------
# The entry is written (the kernel boots, asking for the passphrase), the
# hook says why it approved nothing and what to run, exits 0, and no
# approval is removed or replaced.
astate=$(approvals_state)
install_kernel "$VBAD" build/mshimx64.efi; write_initrd "$VBAD" "$T/initrd1"
run "prediction fails (PCR 9 unpredictable), no STRICT: exit 0, naming the PCR" 0 "PCR  *9: unpredictable" \
        zz-mshim.postinst "$VBAD"
check "prediction fails: says it approved nothing and what to run" \
        grep -q "approved nothing: .*run: .*zz-mshim $VBAD" "$T/err"
check_installed "$VBAD" build/mshimx64.efi "$T/initrd1"
check "prediction fails: the approvals untouched" test "$(approvals_state)" = "$astate"
rm -f $(entry_of "$VBAD"); rm -rf "$ESP/$TOKEN/$VBAD" "$BOOT/vmlinuz-$VBAD" "$BOOT/initrd.img-$VBAD"
check "the unpredictable kernel cleared away: the ESP as before" test "$(esp_state)" = "$before"
# A failed prediction for a kernel whose entry is there already: it stays,
# nothing is approved, nothing removed.
write_conf "PCRS=$T/wrong-pcrs.txt"
run "prediction fails for an installed kernel ($V2), no STRICT: exit 0, naming the PCR" 0 "sha256 PCR 4" \
        zz-mshim.postinst "$V2"
write_conf
check "... its entry unchanged, said" grep -q "entry unchanged; approved nothing" "$T/err"
check "... the approvals untouched" test "$(approvals_state)" = "$astate"
check "... the ESP as before" test "$(esp_state)" = "$before"

# ---- removal, with a signed TOTP enrolment on the ESP ---------------------------------
# The hook approves the next boot's TOTP point as well (--totp, the
# enrolment's PCRs, signed over policy || "mshim-totp" || the PCR
# selection), never twice, and drops it with its entry.
TOTP_DIR=$ESP/loader/mshim/totp-approvals
"$MSHIM_REAL" totp enroll --signed --state-dir "$STATE" --esp "$ESP" --pcrs "$F/pcrs.txt" --select 4,5,7,12 --uri \
        >/dev/null 2>"$T/err" || fail "mshim totp enroll --signed: $(cat "$T/err")"
totp_of() { grep -lx "entry-id $TOKEN-$1" "$TOTP_DIR"/*.approval 2>/dev/null; }
# The policyRef: "mshim-totp" || TPML_PCR_SELECTION {1, sha256, 3, PCRs 4,5,7,12}.
{ printf 'mshim-totp'; printf '00000001000b03b01000' | xxd -r -p; } >"$T/ref"
# sig_over A: A's signature verifies (openssl) over its policy || the policyRef.
sig_over() {
        { sed -n 's/^policy //p' "$1" | xxd -r -p; cat "$T/ref"; } >"$T/sv.pol"
        sed -n 's/^signature //p' "$1" | xxd -r -p >"$T/sv.sig"
        openssl dgst -sha256 -verify "$STATE/policy.pub" -signature "$T/sv.sig" "$T/sv.pol" >/dev/null 2>&1
}
run "$V3: installed now" 0 "entry written" zz-mshim.postinst "$V3"
check_approved "$V3" "$V3" "$K2" "$T/initrd3"
TA3=$(totp_of "$V3")
check "$V3: one TOTP approval of its boot, named by the hook" bash -c \
        "[ \$(echo '$TA3' | grep -c .) = 1 ] && grep -q 'TOTP point approved: $TA3\$' '$T/err'"
check "$V3: the TOTP approval's PCRs are the enrolment's" \
        test -n "$TA3" -a "$(sed -n 's/^pcrs //p' "$TA3" 2>/dev/null)" = "$(sed -n 's/^pcrs //p' "$ESP/loader/mshim/totp")"
check "$V3: the TOTP approval is signed over policy || mshim-totp (openssl)" sig_over "$TA3"
check "$V3: the TOTP point is not the whole boot: its values differ from the disk approval's" bash -c \
        "[ \"\$(sed -n 's/^values //p' '$TA3')\" != \"\$(sed -n 's/^values //p' '$LAST_APPROVAL')\" ]"
n_totp=$(ls "$TOTP_DIR" | wc -l)
run "$V3: postinst.d again: entry unchanged" 0 "TOTP point approved already" zz-mshim.postinst "$V3"
check "$V3 again: no second TOTP approval" test "$(ls "$TOTP_DIR" | wc -l)" = "$n_totp"
# An evil maid edits the ESP's enrolment to PCR 7 alone: the hook's
# policy approve --totp checks it against the state directory's copy.
cp "$ESP/loader/mshim/totp" "$T/totp.orig"
sed -i 's/^pcrs .*/pcrs 7/' "$ESP/loader/mshim/totp"
run "attack: the ESP's TOTP enrolment edited to pcrs 7: approves nothing for it, naming both files" 0 \
        "loader/mshim/totp differs from the trusted TOTP enrolment $STATE/totp" zz-mshim.postinst "$V3"
check "attack: no TOTP approval written" test "$(ls "$TOTP_DIR" | wc -l)" = "$n_totp"
cp "$T/totp.orig" "$ESP/loader/mshim/totp"

# ---- ESP content the hook did not write is never approved ---------------------------
# The copies' names carry their content's hash, but a name proves nothing:
# someone who had the disk writes another kernel (a genuine, older one, which
# predicts fine), another initrd, or other options under the names the hook
# reuses or the entry it would approve next. The hook approves nothing, names
# the file, exits 0 (1 with STRICT=yes), and the approvals stay as they were.
KC2=$ESP/$TOKEN/$V2/linux-$(short "$K2") IC2=$ESP/$TOKEN/$V2/initrd-$(short "$T/initrd2b")
E2=$(entry_of "$V2") E3=$(entry_of "$V3")
cp "$KC2" "$T/kc2.good"; cp "$IC2" "$T/ic2.good"; cp "$E2" "$T/e2.good"
printf 'an evil initramfs\n' >"$T/initrd-evil"
astate=$(approvals_state)
# update-initramfs -u for V2: a new initrd, the kernel copy reused.
cp "$K1" "$KC2"
printf 'initrd of %s, newer\n' "$V2" >"$T/initrd2c"; write_initrd "$V2" "$T/initrd2c"
run "tampered kernel copy the hook would reuse (new initrd for $V2): nothing approved, exit 0, the copy named" 0 \
        "$KC2: not $BOOT/vmlinuz-$V2" mshim.post-update "$V2" "$BOOT/initrd.img-$V2"
check "tampered kernel copy: says what to do (remove it, run the hook)" grep -q "remove it and run .*zz-mshim $V2" "$T/err"
check "tampered kernel copy: the approvals untouched" test "$(approvals_state)" = "$astate"
check "tampered kernel copy: that boot in no approval (hashlib)" \
        never_approved <(entry_text "$V2" "$K2" "$T/initrd2c") "$K1" "$T/initrd2c" "$OPTS"
check "tampered kernel copy: $V2's entry not rewritten" cmp -s "$T/e2.good" "$E2"
check "tampered kernel copy: the new initrd's copy taken back" test ! -e "$ESP/$TOKEN/$V2/initrd-$(short "$T/initrd2c")"
check "tampered kernel copy: the tampered file left as evidence" cmp -s "$K1" "$KC2"
write_conf "STRICT=yes"
run "tampered kernel copy, STRICT=yes: refused, exit 1" 1 "$KC2: not" mshim.post-update "$V2" "$BOOT/initrd.img-$V2"
write_conf
write_initrd "$V2" "$T/initrd2b"; cp "$T/kc2.good" "$KC2"
# postinst.d run again for V2: the initrd copy reused.
cp "$T/initrd-evil" "$IC2"
run "tampered initrd copy the hook would reuse: nothing approved, exit 0, the copy named" 0 \
        "$IC2: not $BOOT/initrd.img-$V2" zz-mshim.postinst "$V2"
check "tampered initrd copy: the approvals untouched" test "$(approvals_state)" = "$astate"
check "tampered initrd copy: that boot in no approval (hashlib)" never_approved "$E2" "$K2" "$T/initrd-evil" "$OPTS"
# An older kernel installed: the default ($V3) stays the next boot, and it
# is checked before it is predicted.
cp "$T/ic2.good" "$IC2"
IC3=$ESP/$TOKEN/$V3/initrd-$(short "$T/initrd3"); cp "$IC3" "$T/ic3.good"; cp "$T/initrd-evil" "$IC3"
run "a kernel that is not the default installed while the default's initrd copy was changed: nothing approved," \
        0 "$IC3: not $BOOT/initrd.img-$V3" zz-mshim.postinst "$V0"
check "... $V0's own entry still written (approved nothing, said)" grep -q "$TOKEN-$V0: entry unchanged; approved nothing" "$T/err"
check "... the approvals untouched" test "$(approvals_state)" = "$astate"
cp "$T/ic3.good" "$IC3"
# The default ($V3) removed: the next entry ($V2) would be approved.
sed 's|^options .*|& init=/bin/sh|' "$T/e2.good" >"$E2"
run "removing the default when the next entry's options were changed on the ESP: nothing approved, exit 0, the entry named" 0 \
        "$E2: not the entry this hook writes" zz-mshim.postrm "$V3"
check "changed options: the line named" grep -q "init=/bin/sh" "$T/err"
check "changed options: $V3's entry kept" test -f "$E3"
check "changed options: the approvals untouched" test "$(approvals_state)" = "$astate"
check "changed options: that boot in no approval (hashlib)" never_approved "$E2" "$K2" "$T/initrd2b" "$OPTS init=/bin/sh"
write_conf "STRICT=yes"
run "changed options, STRICT=yes: refused, exit 1" 1 "$E2: not the entry" zz-mshim.postrm "$V3"
write_conf
cp "$T/e2.good" "$E2"; cp "$K1" "$KC2"
run "removing the default when the next entry's kernel copy was changed: nothing approved, exit 0, the copy named" 0 \
        "$KC2: not $BOOT/vmlinuz-$V2" zz-mshim.postrm "$V3"
check "changed kernel copy: $V3's entry kept" test -f "$E3"
check "changed kernel copy: the approvals untouched" test "$(approvals_state)" = "$astate"
check "changed kernel copy: that boot in no approval (hashlib)" never_approved "$E2" "$K1" "$T/initrd2b" "$OPTS"
cp "$T/kc2.good" "$KC2"; cp "$T/initrd-evil" "$IC2"
run "removing the default when the next entry's initrd copy was changed: nothing approved, exit 0, the copy named" 0 \
        "$IC2: not $BOOT/initrd.img-$V2" zz-mshim.postrm "$V3"
check "changed initrd copy: the approvals untouched" test "$(approvals_state)" = "$astate"
check "changed initrd copy: that boot in no approval (hashlib)" never_approved "$E2" "$K2" "$T/initrd-evil" "$OPTS"
cp "$T/ic2.good" "$IC2"

rm -f "$BOOT/vmlinuz-$V3" "$BOOT/initrd.img-$V3"
n=$(n_approvals)
# An evil maid's copies of the removed kernel's approvals, put back at the
# end (the proof below): removal ends them for good.
mkdir -p "$T/v3copies"; cp $(grep -lx "entry-id $TOKEN-$V3" "$APPROVALS"/*.approval) "$T/v3copies/"
e0=$(epoch)
run "$V3 (the default) removed: the next default's boot approved first" 0 "entry removed" zz-mshim.postrm "$V3" "$BOOT/vmlinuz-$V3"
check "$V3 removed: its approvals were of the current epoch, so the epoch moved ($e0 -> $(epoch)), said by the hook" \
        bash -c "[ $(epoch) = $((e0 + 1)) ] && grep -q 'epoch counter: $((e0 + 1))' '$T/err'"
check "$V3 removed: every disk and TOTP approval left is of the new epoch or revoked before (none of epoch $e0)" \
        bash -c "! grep -lx 'epoch $e0' '$APPROVALS'/*.approval '$TOTP_DIR'/*.approval"
check "$V3 removed: the re-signed TOTP approvals are signed over policy || mshim-totp (openssl)" \
        bash -c "$(declare -f sig_over); T='$T' STATE='$STATE'; for a in \$(grep -lx 'epoch $((e0 + 1))' '$TOTP_DIR'/*.approval); do sig_over \$a || exit 1; done; [ -n \"\$a\" ]"
check_approved "$V3 removed: the boot after it ($V2)" "$V2" "$K2" "$T/initrd2b" "$TOKEN-$V2" resigned
check "$V3 removed: its entry (counted, +3-0) is gone" test -z "$(entry_of "$V3")"
check "$V3 removed: its copies are gone" test ! -e "$ESP/$TOKEN/$V3"
check "$V3 removed: no approval names its entry" bash -c "! grep -rqx 'entry-id $TOKEN-$V3' '$ESP/loader/mshim/approvals'"
check "$V3 removed: $V2's approvals stay" grep -rqx "entry-id $TOKEN-$V2" "$ESP/loader/mshim/approvals"
check "$V3 removed: its TOTP approval is gone" test -z "$(totp_of "$V3")"
check "$V3 removed: the TOTP point of the boot after it approved, named by the hook" bash -c \
        "a=\$(grep -lx 'label TOTP: default boot after removing kernel $V3' '$TOTP_DIR'/*.approval) &&
         grep -q \"TOTP point approved\\( already\\)\\?: \$a\\\$\" '$T/err'"
"$MSHIM_REAL" totp remove --state-dir "$STATE" --esp "$ESP" >/dev/null 2>"$T/err" || fail "mshim totp remove: $(cat "$T/err")"
# A literal enrolment cannot be approved: said once, not a failure (the
# hook reads its mode line only).
printf 'mshim-totp 1\nmode literal\npcrs 4,5,7,12\n' >"$ESP/loader/mshim/totp"
run "a literal TOTP enrolment: a warning, exit 0" 0 "TOTP code will not be shown after this upgrade unless" \
        zz-mshim.postinst "$V2"
check "a literal TOTP enrolment: said once" test "$(grep -c "TOTP code will not be shown" "$T/err")" = 1
check "a literal TOTP enrolment: no TOTP approval" test -z "$(ls -A "$TOTP_DIR")"
# A signed enrolment whose TOTP point cannot be approved (a file mshim
# policy approve --totp refuses): the run fails as a disk approval's would.
printf 'mshim-totp 1\nmode signed\npcrs 4,5,7,12\n' >"$ESP/loader/mshim/totp"
write_conf "STRICT=yes"
run "a TOTP approval refused (STRICT=yes): the hook fails, naming it" 1 "mshim policy approve --totp failed" zz-mshim.postinst "$V2"
write_conf
check "a TOTP approval refused: none written" test -z "$(ls -A "$TOTP_DIR")"
rm -f "$ESP/loader/mshim/totp"
n=$(n_approvals)
run "$V0 (not the default) removed" 0 "entry removed" zz-mshim.postrm "$V0"
check "$V0 removed: no approval needed" test "$(n_approvals)" = "$n"
check "$V0 removed: entry and copies gone" test -z "$(entry_of "$V0")" -a ! -e "$ESP/$TOKEN/$V0"
run "removing an unknown version: nothing to remove, status 0" 0 "" zz-mshim.postrm 9.9.9-1-amd64

# ---- Debian's maintainer-script arguments --------------------------------------------
before=$(esp_state)
DEB_MAINT_PARAMS="'upgrade' '6.1.0-57'" run "postrm on upgrade: nothing" 0 "" zz-mshim.postrm "$V2"
DEB_MAINT_PARAMS="'abort-install'" run "postinst on abort-install: nothing" 0 "" zz-mshim.postinst "$V3"
check "maintainer-script arguments: the ESP unchanged" test "$(esp_state)" = "$before"

# ---- kernel-install ----------------------------------------------------------------
printf 'a staged initrd\n' >"$T/initrd-ki"
KERNEL_INSTALL_LAYOUT=bls KERNEL_INSTALL_CONF_ROOT=$R/etc/kernel \
        run "kernel-install, layout bls with 90-loaderentry active: nothing done, said, exit 0" 0 "90-loaderentry" \
        90-mshim.install add "$V3" "$T/entry-dir" "$K2" "$T/initrd-ki"
check "kernel-install refused: the ESP unchanged" test "$(esp_state)" = "$before"
mkdir -p "$R/etc/kernel/install.d"; ln -s /dev/null "$R/etc/kernel/install.d/90-loaderentry.install"
KERNEL_INSTALL_LAYOUT=bls KERNEL_INSTALL_CONF_ROOT=$R/etc/kernel \
        run "kernel-install add (90-loaderentry masked)" 0 "entry written" \
        90-mshim.install add "$V3" "$T/entry-dir" "$K2" "$T/initrd-ki"
check_installed "$V3" "$K2" "$T/initrd-ki"
check_approved "kernel-install add" "$V3" "$K2" "$T/initrd-ki"
# Every approval revoked: the boot after the removal needs a new one.
"$MSHIM_REAL" policy revoke --state-dir "$STATE" --esp "$ESP" >/dev/null 2>"$T/err" || fail "mshim policy revoke: $(cat "$T/err")"
run "kernel-install remove (the default, after a revoke)" 0 "entry removed" 90-mshim.install remove "$V3" "$T/entry-dir"
check_approved "kernel-install remove: the boot after it ($V2), approved at the new epoch" "$V2" "$K2" "$T/initrd2b" ""
check "... its epoch is the counter's after the revoke ($(epoch))" grep -qx "epoch $(epoch)" "$LAST_APPROVAL"
run "after the revoke, a re-run for $V2: entry unchanged, its boot approved at the new epoch" 0 "entry unchanged" \
        zz-mshim.postinst "$V2"
check_approved "re-run after the revoke (the approval the removal wrote)" "$V2" "$K2" "$T/initrd2b" "" existing
check "kernel-install remove: entry and copies gone" test -z "$(entry_of "$V3")" -a ! -e "$ESP/$TOKEN/$V3"
run "kernel-install: two initrds: nothing done, said, exit 0" 0 "more than one initrd" 90-mshim.install add "$V3" "$T/e" "$K2" "$T/initrd-ki" "$T/initrd-ki"

# ---- settings --------------------------------------------------------------------
before=$(esp_state)
write_conf "FOO=bar"
run "hook.conf: an unknown key is refused" 1 "unknown setting FOO" zz-mshim.postinst "$V2"
write_conf "ESP /boot/efi"
run "hook.conf: a line that is not KEY=VALUE is refused" 1 "not KEY=VALUE" zz-mshim.postinst "$V2"
write_conf "ENTRY_TOKEN=../x"
run "hook.conf: an ENTRY_TOKEN with a slash is refused" 1 "ENTRY_TOKEN" zz-mshim.postinst "$V2"
# Before setup (no policy key): the entry is written on a fresh ESP,
# nothing approved, exit 0; STRICT=yes refuses as before.
mkdir -p "$T/esp2"
write_conf "STATE_DIR=$T/nowhere" "ESP=$T/esp2" "STRICT=yes"
run "no policy key (mshim policy init not run), STRICT=yes: refused" 1 "mshim policy init" zz-mshim.postinst "$V2"
check "no policy key, STRICT=yes: nothing written" test -z "$(ls -A "$T/esp2")"
write_conf "STATE_DIR=$T/nowhere" "ESP=$T/esp2"
run "no policy key (before setup): exit 0, naming mshim policy init" 0 "mshim policy init" zz-mshim.postinst "$V2"
check "before setup: says it approved nothing and what to run" grep -q "approved nothing: .*run: .*zz-mshim $V2" "$T/err"
check "before setup: the entry written" cmp -s <(entry_text "$V2" "$K2" "$T/initrd2b") "$T/esp2/loader/entries/$TOKEN-$V2+3-0.conf"
check "before setup: no approval" test ! -e "$T/esp2/loader/mshim"
write_conf "STATE_DIR=$T/nowhere" "ESP=$T/esp2-unmounted"
run "the ESP not mounted: exit 0, nothing written, said" 0 "is the ESP mounted" zz-mshim.postinst "$V2"
write_conf
MSHIM_HOOK_CONF=$T/absent.conf run "no hook.conf: refused" 1 "absent.conf" zz-mshim.postinst "$V2"
run "a version with a slash is refused" 1 "not a kernel version" zz-mshim.postinst "../x"
mv "$R/etc/kernel/cmdline" "$R/etc/kernel/cmdline.off"
install_kernel "$V3" "$K2"; write_initrd "$V3" "$T/initrd3"
astate=$(approvals_state)
write_conf "STRICT=yes"
run "no OPTIONS, no /etc/kernel/cmdline, STRICT=yes: refused" 1 "no kernel command line" zz-mshim.postinst "$V3"
write_conf
# The running kernel's entry on the ESP is the attacker's: its options are
# never taken for the command line (the hook once fell back to them).
RUNNING_ENTRY=$ESP/loader/entries/$TOKEN-$(uname -r).conf
printf 'title x\nversion %s\nlinux /x\noptions root=/dev/vda2 init=/bin/sh\n' "$(uname -r)" >"$RUNNING_ENTRY"
run "no OPTIONS, no /etc/kernel/cmdline: no entry written, said, exit 0" 0 "no kernel command line" zz-mshim.postinst "$V3"
rm -f "$RUNNING_ENTRY"
check "no command line: says what to run" grep -q "run: .*zz-mshim $V3" "$T/err"
check "no command line: not taken from the running kernel's entry on the ESP (no entry for $V3)" \
        test -z "$(entry_of "$V3")"
check "no command line: the approvals untouched" test "$(approvals_state)" = "$astate"
mv "$R/etc/kernel/cmdline.off" "$R/etc/kernel/cmdline"
check "settings refused: the ESP unchanged" test "$(esp_state)" = "$before"
write_conf "TRIES=x"
run "hook.conf: TRIES not a number: refused" 1 "TRIES 'x'" zz-mshim.postinst "$V2"
write_conf "REVOKE_AFTER_BLESS=maybe"
run "hook.conf: REVOKE_AFTER_BLESS neither yes nor no: refused" 1 "REVOKE_AFTER_BLESS 'maybe'" zz-mshim.postinst "$V2"
write_conf "OPTIONS=root=/dev/vda3 mshim.test=1" "TRIES=0"
OPTS="root=/dev/vda3 mshim.test=1"
run "OPTIONS in hook.conf override /etc/kernel/cmdline" 0 "entry written" zz-mshim.postinst "$V3"
check_installed "$V3" "$K2" "$T/initrd3"
check_approved "OPTIONS" "$V3" "$K2" "$T/initrd3"
check "TRIES=0: the entry has no boot counter" test "$(entry_of "$V3")" = "$ESP/loader/entries/$TOKEN-$V3.conf"

# ---- an encrypted policy key: PASS_FILE, or nothing approved and apt goes on ----------
# The key encrypted with openssl; the hook runs with no terminal (setsid),
# as under unattended upgrades, where a passphrase cannot be asked.
cp "$STATE/policy.key" "$T/plain.key"
echo 'the hook passphrase' >"$T/hook.pass"
openssl pkcs8 -topk8 -v2 aes-256-cbc -in "$T/plain.key" -passout file:"$T/hook.pass" -out "$T/enc.key" 2>/dev/null &&
        cat "$T/enc.key" >"$STATE/policy.key" || fail "openssl encrypts the policy key"
hook() { setsid -w "$ROOT/hooks/$1" "${@:2}" </dev/null; }
astate=$(approvals_state)
write_conf "OPTIONS=$OPTS" "STRICT=yes"
run "encrypted policy key, no PASS_FILE, no terminal, STRICT=yes: refused (exit 1), naming --pass-file" 1 \
        "give --pass-file" mshim.post-update "$V3" "$BOOT/initrd.img-$V3"
write_conf "OPTIONS=$OPTS"
run "encrypted policy key, no PASS_FILE, no terminal: exit 0, approved nothing, says why" 0 "give --pass-file" \
        mshim.post-update "$V3" "$BOOT/initrd.img-$V3"
check "... says it approved nothing and what to run" grep -q "approved nothing" "$T/err"
check "... the approvals untouched" test "$(approvals_state)" = "$astate"
write_conf "OPTIONS=$OPTS" "PASS_FILE=$T/hook.pass"
run "encrypted policy key with PASS_FILE in hook.conf: the next boot approved, exit 0" 0 "entry unchanged; the next boot" \
        mshim.post-update "$V3" "$BOOT/initrd.img-$V3"
check "... with PASS_FILE nothing says 'approved nothing'" bash -c "! grep -q 'approved nothing' '$T/err'"
hook() { "$ROOT/hooks/$1" "${@:2}"; }
cat "$T/plain.key" >"$STATE/policy.key"
write_conf "OPTIONS=$OPTS"

# ---- killed mid-run (power cut, SIGKILL) just before the approval: no
# rollback runs; what is left must be files no loader reads ---------------------
V4=6.1.0-59-rt-amd64
cat >"$T/bin/mshim-dies" <<EOF
#!/bin/sh
# Kills the hook's process group (setsid below) when it asks to approve the next boot.
case "\$*" in *--predicted*) kill -9 0 ;; esac
exec "$MSHIM_REAL" "\$@"
EOF
chmod +x "$T/bin/mshim-dies"
install_kernel "$V4" "$K2"; printf 'initrd of %s\n' "$V4" >"$T/initrd4"; write_initrd "$V4" "$T/initrd4"
ls "$ESP"/loader/entries/*.conf >"$T/entries.before"
"$MSHIM_REAL" predict --log "$F/log.bin" --esp "$ESP" --json >"$T/predict.before" 2>&1
write_conf "OPTIONS=$OPTS" "MSHIM=$T/bin/mshim-dies"
setsid --fork --wait "$ROOT/hooks/zz-mshim.postinst" "$V4" >/dev/null 2>&1
rm -rf "$TMPDIR"/mshim-hook.*          # its temporary directory: tmpfs or the tmp cleaner's
write_conf "OPTIONS=$OPTS"
check "killed: the hook got as far as the copies" test -d "$ESP/$TOKEN/$V4"
check "killed: no new entry" cmp -s "$T/entries.before" <(ls "$ESP"/loader/entries/*.conf)
check "killed: no *.conf entry names its copies" bash -c "! grep -rl '$TOKEN/$V4' '$ESP/loader/entries' --include='*.conf'"
"$MSHIM_REAL" predict --log "$F/log.bin" --esp "$ESP" --json >"$T/predict.after" 2>&1
check "killed: mshim predict of the ESP is as before" cmp -s "$T/predict.before" "$T/predict.after"
run "killed: the next run completes" 0 "entry written" zz-mshim.postinst "$V4"
check_installed "$V4" "$K2" "$T/initrd4"
check "killed: the next run removed the left-overs" test -z "$(find "$ESP" -name '*.mshim-tmp')"
e0=$(epoch)
run "$V4 removed again" 0 "entry removed" zz-mshim.postrm "$V4"
check "$V4 removed: the epoch moved ($e0 -> $(epoch)); the approvals that stay were re-signed (the proof below unseals with one)" \
        test "$(epoch)" = $((e0 + 1))

# ---- the proof: the secret sealed at the start opens on the approved boot ----------
sealed_boot() {     # NAME WANT_RC PATTERN OPTIONS: restart the TPM, boot V3 so, unseal
        tpm_stop
        expect_boot "$V3" "$K2" "$T/initrd3" "$4" "$T/boot-extends.txt" >/dev/null
        tpm_start "$T/boot-extends.txt"
        "$MSHIM_REAL" unseal --esp "$ESP" "$T/disk.sealed" >"$T/out" 2>"$T/err"; local rc=$?
        if [ "$rc" = "$2" ] && grep -q -- "$3" "$T/err" "$T/out"; then pass "$1"
        else fail "$1 (exit $rc, want $2; $(head -c 400 "$T/err"))"; fi
}
sealed_boot "the boot the hook approved ($V3) unseals the secret sealed before" 0 "^the disk key$" "$OPTS"
sealed_boot "the same boot with init=/bin/sh does not unseal (exit 1, PCRs named)" 1 "unseal refused" "$OPTS init=/bin/sh"
# The approvals of $V3's first install, removed with it, put back on the ESP,
# and that boot again (its entry's bytes, kernel, initrd and options).
cp "$T"/v3copies/*.approval "$APPROVALS/"
sealed_boot "$V3's removed approvals put back on the ESP: its boot does not unseal (exit 1, revoked)" 1 \
        "unseal refused:.*revoked" "$FIRST_OPTS"

# ---- bless, and REVOKE_AFTER_BLESS: the old kernel no longer unseals --------------
# The loader tried V3's entry (renamed to +2-1) and set LoaderEntrySelected
# (fake efivarfs); mshim-bless.service runs `kernel-hook bless`.
export MSHIM_EFIVARS=$T/efivars
mkdir -p "$MSHIM_EFIVARS"
python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\x06\0\0\0" + (sys.argv[2] + "\0").encode("utf-16-le"))' \
        "$MSHIM_EFIVARS/LoaderEntrySelected-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f" "$TOKEN-$V3.conf"
boot_state() {      # V K I OPTIONS: the TPM restarted in that boot's state (hashlib's events)
        tpm_stop
        expect_boot "$1" "$2" "$3" "$4" "$T/boot-extends.txt" >/dev/null
        tpm_start "$T/boot-extends.txt"
}
unseal_as() {       # NAME WANT_RC PATTERN: unseal in the TPM's state now
        "$MSHIM_REAL" unseal --esp "$ESP" "$T/disk.sealed" >"$T/out" 2>"$T/err"; local rc=$?
        if [ "$rc" = "$2" ] && grep -q -- "$3" "$T/err" "$T/out"; then pass "$1"
        else fail "$1 (exit $rc, want $2; $(head -c 400 "$T/err"))"; fi
}
boot_state "$V2" "$K2" "$T/initrd2b" "$FIRST_OPTS"
unseal_as "before the bless: the old kernel's boot ($V2) unseals (kept approved, the way back)" 0 "^the disk key$"
boot_state "$V3" "$K2" "$T/initrd3" "$OPTS"
mv "$(entry_of "$V3")" "$ESP/loader/entries/$TOKEN-$V3+2-1.conf"
write_conf "OPTIONS=$OPTS"
e0=$(epoch)
run "bless (REVOKE_AFTER_BLESS unset: no): the counter dropped" 0 "" kernel-hook bless
check "bless: $V3's entry is $TOKEN-$V3.conf now" test "$(entry_of "$V3")" = "$ESP/loader/entries/$TOKEN-$V3.conf"
check "bless without REVOKE_AFTER_BLESS: the epoch unchanged ($e0)" test "$(epoch)" = "$e0"
# A changed entry of V3 tried again (a counter again), now with the revoke.
mv "$(entry_of "$V3")" "$ESP/loader/entries/$TOKEN-$V3+2-1.conf"
write_conf "OPTIONS=$OPTS" "REVOKE_AFTER_BLESS=yes"
# An evil maid's copies of the old kernel's approvals, put back afterwards.
mkdir -p "$T/v2copies"; cp $(grep -lx "entry-id $TOKEN-$V2" "$APPROVALS"/*.approval) "$T/v2copies/"
run "bless with REVOKE_AFTER_BLESS=yes: blessed, the other boots revoked" 0 "" kernel-hook bless
check "bless --revoke: the entry blessed" test "$(entry_of "$V3")" = "$ESP/loader/entries/$TOKEN-$V3.conf"
check "bless --revoke: the epoch moved ($e0 -> $(epoch)), said" \
        bash -c "[ $(epoch) = $((e0 + 1)) ] && grep -q 'epoch counter: $((e0 + 1))' '$T/out'"
expect_boot "$V3" "$K2" "$T/initrd3" "$OPTS" "" --approval-lines >"$T/v3.want"
# all_of_epoch E WANT: at least one approval of epoch E, each with WANT's values.
all_of_epoch() {
        local n=0 a
        for a in $(grep -lx "epoch $1" "$APPROVALS"/*.approval); do
                n=$((n + 1))
                cmp -s <(cli_approval_values "$a") "$2" || return 1
        done
        [ $n -ge 1 ]
}
check "bless --revoke: the approvals of the new epoch are all of $V3's boot (hashlib)" all_of_epoch "$(epoch)" "$T/v3.want"
unseal_as "after bless --revoke: the new kernel's boot ($V3) unseals" 0 "^the disk key$"
boot_state "$V2" "$K2" "$T/initrd2b" "$FIRST_OPTS"
unseal_as "after bless --revoke: the old kernel's boot ($V2) does not unseal (exit 1)" 1 "unseal refused"
cp "$T"/v2copies/*.approval "$APPROVALS/"
unseal_as "after bless --revoke: ... nor with its old approvals put back on the ESP (exit 1, revoked)" 1 "unseal refused:.*revoked"
e1=$(epoch)
run "bless again (no counter left): nothing renamed, nothing revoked" 0 "" kernel-hook bless
check "bless again: the epoch unchanged" test "$(epoch)" = "$e1"

# ---- the first boot through mshim, from a shim + GRUB boot (issue 23) -------------
# This boot did not run mshim: Debian's shim -> Debian's GRUB -> the kernel,
# Secure Boot on (tests/cli/first_boot_fixture.py's log, hashlib's). mshim is
# on a new ESP as `mshim install --shim` leaves it (written out here: shim,
# mshim signed with a MOK, the state directory's install.record with their
# SHA-256 from sha256sum); the MokList comes from the fake efivarfs'
# MokListRT (shim's built-in certificate, then MokList). The hook predicts
# the first boot through mshim and approves it; the expected PCRs are
# first_boot_fixture.py's (hashlib, oracle.py's Authenticode and MokList).
SHIM=build/debian-efi/usr/lib/shim/shimx64.efi.signed
GRUB=build/debian-efi/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
FB=$T/first ESP=$T/first/esp FV=$T/first/efivars V6=6.1.0-60-amd64
mkdir -p "$ESP/EFI/mshim" "$FV"
openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 1 -subj "/CN=mshim hook first boot MOK/" \
        -keyout "$FB/mok.key" -out "$FB/mok.pem" 2>/dev/null && openssl x509 -in "$FB/mok.pem" -outform DER -out "$FB/mok.der" &&
        "$MSHIM_REAL" sign --key "$FB/mok.key" --cert "$FB/mok.pem" -o "$ESP/EFI/mshim/grubx64.efi" build/mshimx64.efi \
        >/dev/null 2>&1 && cp "$SHIM" "$ESP/EFI/mshim/shimx64.efi" || fail "first boot: set-up (MOK, signed mshim)"
# db: a certificate that verifies none of the images (the firmware's authority
# for shim is logged from it; the fixture does not check that signature).
openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 1 -subj "/CN=mshim hook first boot db/" \
        -keyout "$FB/db.key" -outform DER -out "$FB/db.der" 2>/dev/null || fail "first boot: set-up (db)"
cp "$ESP/EFI/mshim/grubx64.efi" "$FB/mshim-mok.efi"
# MokList: the MOK (owner shim's GUID, as mokutil writes it); MokListRT as
# shim mirrors it (its vendor certificate first), with efivarfs' attributes.
python3 tests/cli/first_boot_fixture.py mok-files "$FB" "$SHIM" "$FB/mok.der" || fail "first boot: MokList files"
MOKRT=$FV/MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23 MOKNEW=$FV/MokNew-605dab50-e046-4300-abb6-3dd810dd8b23
cp "$FB/MokListRT" "$MOKRT"
python3 tests/cli/first_boot_fixture.py make "$FB/a" --chain shim --shim "$SHIM" --grub "$GRUB" --kernel "$K1" \
        --mok-list "$FB/moklist" --secure-boot --db "$FB/db.der" || fail "first boot: first_boot_fixture.py make"
python3 tests/cli/first_boot_fixture.py make "$FB/b" --chain shim --shim "$SHIM" --grub "$GRUB" --kernel "$K1" \
        --secure-boot --db "$FB/db.der" || fail "first boot: first_boot_fixture.py make (empty MokList)"
sha() { sha256sum <"$1" | cut -d' ' -f1; }
printf '%s\n' "mshim-install 1" "esp $ESP" "layout shim" "loader $ROOT/build/mshimx64.efi" "mshim EFI/mshim/grubx64.efi" \
        "dir EFI" "dir EFI/mshim" "file $(sha "$FB/mshim-mok.efi") EFI/mshim/grubx64.efi" \
        "file $(sha "$SHIM") EFI/mshim/shimx64.efi" >"$STATE/install.record"
first_conf() {
        write_conf "OPTIONS=$OPTS" "ESP=$ESP" "LOG=$FB/$1/log.bin" "PCRS=$FB/$1/pcrs.txt" "EFIVARS=$FV" "${@:2}"
}
APPROVALS=$ESP/loader/mshim/approvals
install_kernel "$V6" "$K1"; printf 'initrd of %s\n' "$V6" >"$T/initrd6"; write_initrd "$V6" "$T/initrd6"
# first_expect LOG INITRD: sha256 lines of PCRs 4,5,7,9,12 of the first boot
# through mshim of V6's entry with INITRD: shim verifies mshim by the MOK
# (owner shim's GUID) and Debian's kernel by its built-in certificate.
SHIM_OWNER=50ab5d6046e00043abb63dd810dd8b23
first_expect() {
        sha256_lines "{\"sha256\": $(python3 tests/cli/first_boot_fixture.py expect "$1" --loader "$FB/mshim-mok.efi" \
                --chain shim --entry-name "$TOKEN-$V6.conf" --entry <(entry_text "$V6" "$K1" "$2") \
                --kernel "$K1" --initrd "$2" --options "$OPTS" --loader-conf "$ESP/loader/loader.conf" \
                --auth "MokListRT:$SHIM_OWNER:$FB/mok.der" --auth "MokListRT:$SHIM_OWNER:$FB/vendor.der" \
                --select 4,5,7,9,12 | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["sha256"]))')}"
}
mkdir -p "$ESP/loader" && echo "# written by mshim install" >"$ESP/loader/loader.conf"
grub_pcrs() { grep -E '^sha256:(4|5|7|9|12)=' "$FB/$1/pcrs.txt" | sort -t: -k2 -n; }
in_no_approval() {    # FILE of sha256 lines: no approval on the ESP holds them
        local a
        for a in "$APPROVALS"/*.approval; do
                [ -f "$a" ] || continue
                cmp -s <(cli_approval_values "$a") "$1" && return 1
        done
        return 0
}
first_conf a
run "first boot (shim + GRUB baseline, MOK enrolled): the hook approves the first boot through mshim" 0 \
        "the next boot (kernel $V6) approved: " zz-mshim.postinst "$V6"
a=$(grep -o "$APPROVALS/[^ ]*\.approval" "$T/err" | tail -n 1)
check "first boot: its entry written" cmp -s <(entry_text "$V6" "$K1" "$T/initrd6") "$(entry_of "$V6")"
first_expect "$FB/a/log.bin" "$T/initrd6" >"$T/first.want"
check "first boot: one approval written" test "$(ls "$APPROVALS" 2>/dev/null | wc -l)" = 1
check "first boot: the approval holds the PCRs of shim -> mshim (verified by the MOK) -> $V6 (hashlib, oracle.py)" \
        cmp -s <(cli_approval_values "$a") "$T/first.want"
check "first boot: the approval names $V6's entry" test "$(sed -n 's/^entry-id //p' "$a")" = "$TOKEN-$V6"
grub_pcrs a >"$T/grub.pcrs"
check "first boot: this boot (shim + GRUB: its command line in PCR 8, not approved) is in no approval, said so" \
        bash -c "grep -q 'this boot did not run mshim: not approving it' '$T/err' && ! grep -lqx 'label current boot' '$APPROVALS'/*" 
check "first boot: the GRUB boot's PCRs (its pcrs.txt) are in no approval" in_no_approval "$T/grub.pcrs"
before=$(approvals_state)
run "first boot, run again: approved already, none written" 0 "approved already" zz-mshim.postinst "$V6"
check "first boot, run again: the approvals unchanged" test "$(approvals_state)" = "$before"

# mshim on the ESP swapped (an evil maid's image, or any file install did not
# write): not predicted, not approved; apt goes on unless STRICT=yes.
cp "$ESP/EFI/mshim/grubx64.efi" "$FB/good.efi"
"$MSHIM_REAL" sign --key "$FB/mok.key" --cert "$FB/mok.pem" -o "$ESP/EFI/mshim/grubx64.efi" "$SHIM" >/dev/null 2>&1
printf 'initrd of %s, new\n' "$V6" >"$T/initrd6b"; write_initrd "$V6" "$T/initrd6b"
run "first boot, mshim swapped on the ESP: nothing approved, the file named, exit 0" 0 \
        "grubx64.efi: not the file mshim install wrote" mshim.post-update "$V6" "$BOOT/initrd.img-$V6"
check "... the approvals unchanged" test "$(approvals_state)" = "$before"
first_conf a STRICT=yes
run "first boot, mshim swapped, STRICT=yes: refused (exit 1)" 1 "not the file mshim install wrote" \
        mshim.post-update "$V6" "$BOOT/initrd.img-$V6"
check "... the approvals unchanged" test "$(approvals_state)" = "$before"
cp "$FB/good.efi" "$ESP/EFI/mshim/grubx64.efi"
cp build/debian-efi/usr/lib/shim/fbx64.efi.signed "$ESP/EFI/mshim/shimx64.efi"
run "first boot, shim swapped on the ESP, STRICT=yes: refused (exit 1), the file named" 1 \
        "shimx64.efi: not the file mshim install wrote" mshim.post-update "$V6" "$BOOT/initrd.img-$V6"
check "... the approvals unchanged" test "$(approvals_state)" = "$before"
cp "$SHIM" "$ESP/EFI/mshim/shimx64.efi"

# The MOK not enrolled yet: shim would refuse mshim; waiting in MokNew
# (mokutil --import), the first boot is predicted with it enrolled.
cp "$FB/MokListRT-empty" "$MOKRT"
first_conf b
run "first boot, the MOK in no MokList: nothing approved (shim would refuse mshim), exit 0" 0 \
        "shim would refuse mshim" mshim.post-update "$V6" "$BOOT/initrd.img-$V6"
check "... the approvals unchanged" test "$(approvals_state)" = "$before"
cp "$FB/MokNew" "$MOKNEW"
run "first boot, the MOK waiting in MokNew: the boot after MokManager enrols it approved" 0 \
        "MokNew" mshim.post-update "$V6" "$BOOT/initrd.img-$V6"
a=$(grep -o "$APPROVALS/[^ ]*\.approval" "$T/err" | tail -n 1)
first_expect "$FB/b/log.bin" "$T/initrd6b" >"$T/first-b.want"
check "... its PCRs are shim -> mshim (verified by the MOK MokNew brings) -> $V6 with its new initrd (hashlib)" \
        cmp -s <(cli_approval_values "$a") "$T/first-b.want"
rm -f "$MOKNEW"

# No install recorded: the first boot is not predicted (nothing of mshim's to
# predict it with), apt goes on.
cp "$FB/MokListRT" "$MOKRT"; first_conf a
mv "$STATE/install.record" "$FB/record"
before=$(approvals_state)
run "first boot, no install recorded: nothing approved, exit 0, names mshim install" 0 \
        "no mshim install is recorded" mshim.post-update "$V6" "$BOOT/initrd.img-$V6"
check "... the approvals unchanged" test "$(approvals_state)" = "$before"
rm -rf "$FB/record"

# The firmware starts mshim (install without --shim), from a GRUB boot with
# Secure Boot off: mshim's image checked against the record, no MokList.
ESP=$FB/esp2 APPROVALS=$FB/esp2/loader/mshim/approvals
mkdir -p "$ESP/EFI/mshim" "$ESP/loader" && cp build/mshimx64.efi "$ESP/EFI/mshim/mshimx64.efi" &&
        echo "# written by mshim install" >"$ESP/loader/loader.conf" &&
        python3 tests/cli/first_boot_fixture.py make "$FB/g" --chain grub --shim "$SHIM" --grub "$GRUB" --kernel "$K1" ||
        fail "first boot, firmware starts mshim: set-up"
printf '%s\n' "mshim-install 1" "esp $ESP" "layout unsigned" "loader $ROOT/build/mshimx64.efi" "mshim EFI/mshim/mshimx64.efi" \
        "dir EFI" "dir EFI/mshim" "file $(sha build/mshimx64.efi) EFI/mshim/mshimx64.efi" >"$STATE/install.record"
rm -f "$MOKRT"
first_conf g
run "first boot, GRUB started by the firmware (Secure Boot off): the first boot through mshim approved" 0 \
        "the next boot (kernel $V6) approved: " zz-mshim.postinst "$V6"
a=$(grep -o "$APPROVALS/[^ ]*\.approval" "$T/err" | tail -n 1)
sha256_lines "{\"sha256\": $(python3 tests/cli/first_boot_fixture.py expect "$FB/g/log.bin" --loader build/mshimx64.efi \
        --chain direct --entry-name "$TOKEN-$V6.conf" --entry <(entry_text "$V6" "$K1" "$T/initrd6b") --kernel "$K1" \
        --initrd "$T/initrd6b" --options "$OPTS" --loader-conf "$ESP/loader/loader.conf" --select 4,5,7,9,12 |
        python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["sha256"]))')}" >"$T/first-g.want"
check "... its PCRs are firmware -> mshim (the recorded image) -> $V6, no authority (hashlib, oracle.py)" \
        cmp -s <(cli_approval_values "$a") "$T/first-g.want"
rm -f "$STATE/install.record"
check "no temporary directory left" test -z "$(ls -A "$TMPDIR")"
