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
# `mshim policy` (branch sealcli) is not on this branch yet: a stand-in
# records the approvals it is asked for (the predicted file, --entry-id,
# --label, --current) and answers `policy list --json` with
# "matches_current" once --current was approved.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
MSHIM_REAL=${MSHIM:-build/test/mshim}
K1=${KERNEL:-build/kernel/vmlinuz}
K2=${KERNEL_RT:-build/kernel-rt/vmlinuz}
FIX=tests/cli/predict_fixture.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

pass() { echo "PASS: hooks: $1"; }
fail() { echo "FAIL: hooks: $1"; }
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }
for f in "$K1" "$K2" "$MSHIM_REAL"; do
        [ -f "$f" ] || { fail "missing $f (make deps; make build/test/mshim)"; exit 1; }
done
MSHIM_REAL=$(realpath "$MSHIM_REAL")

# ---- the sandbox ------------------------------------------------------------------
F=$T/fixture
python3 "$FIX" make "$F" "$K1" >/dev/null || { fail "fixture"; exit 1; }
R=$T/root ESP=$T/root/boot/efi BOOT=$T/root/boot STATE=$T/root/var/lib/mshim
mkdir -p "$ESP" "$STATE" "$R/etc/kernel" "$T/bin" "$T/approved"
echo "stands for the policy key's PEM" >"$STATE/policy.pub"
echo "root=/dev/vda2 ro quiet" >"$R/etc/kernel/cmdline"
OPTS="root=/dev/vda2 ro quiet"
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
MSHIM=$T/bin/mshim
ENTRY_TOKEN=$TOKEN
TITLE="$TITLE"
CMDLINE_FILE=$R/etc/kernel/cmdline
LOG=$F/log.bin
PCRS=$F/pcrs.txt
EOF
        printf '%s\n' "$@" >>"$CONF"
}
write_conf
export MSHIM_HOOK_CONF=$CONF MSHIM_KERNEL_HOOK=$ROOT/hooks/kernel-hook
unset DEB_MAINT_PARAMS KERNEL_INSTALL_LAYOUT

cat >"$T/bin/mshim" <<EOF
#!/usr/bin/env bash
# Stand-in for \`mshim policy\` (see the header); anything else is the real mshim.
[ "\$1" = policy ] || exec "$MSHIM_REAL" "\$@"
echo "\$*" >>"$T/policy.log"
case \$2 in
list) if [ -f "$T/current-approved" ]; then echo '[{"matches_current": true}]'; else echo '[]'; fi; exit 0 ;;
approve) ;;
*) echo "mshim: stand-in: policy \$2 not handled" >&2; exit 2 ;;
esac
[ ! -f "$T/approve-fails" ] || { echo "mshim: policy approve: refused by the test" >&2; exit 2; }
shift 2
pred= id= label= current= esp=
while [ \$# -gt 0 ]; do
        case \$1 in
        --predicted) pred=\$2; shift ;; --entry-id) id=\$2; shift ;; --label) label=\$2; shift ;;
        --esp) esp=\$2; shift ;; --current) current=1 ;; --state-dir|--select|--pcrs) shift ;;
        *) echo "mshim: stand-in: \$1?" >&2; exit 2 ;;
        esac
        shift
done
d=\$esp/loader/mshim/approvals; mkdir -p "\$d"
n=\$(cat "$T/approved/count" 2>/dev/null || echo 0); echo \$((n + 1)) >"$T/approved/count"; a=\$d/\$n.approval
{ [ -z "\$id" ] || echo "entry-id \$id"; echo "label \$label"; } >"\$a"
if [ -n "\$current" ]; then : >"$T/current-approved"; else cp "\$pred" "$T/approved/last.json"; echo "\$a" >"$T/approved/last"; fi
echo "\$a"
EOF
chmod +x "$T/bin/mshim"

V1=6.1.0-57-amd64 V2=6.1.0-57-rt-amd64 V3=6.1.0-58-rt-amd64 V0=5.10.0-30-amd64 VBAD=6.1.0-99-amd64
printf 'initrd of %s\n' "$V1" >"$T/initrd1"; printf 'initrd of %s\n' "$V2" >"$T/initrd2"
printf 'initrd of %s, new\n' "$V2" >"$T/initrd2b"; printf 'initrd of %s\n' "$V3" >"$T/initrd3"

# install_kernel V IMAGE: what the kernel package unpacks (dpkg keeps the
# package's mtime: older than any initrd written now).
install_kernel() { cp "$2" "$BOOT/vmlinuz-$1"; touch -d '2024-01-01' "$BOOT/vmlinuz-$1"; }
# write_initrd V FILE: what update-initramfs writes.
write_initrd() { cp "$2" "$BOOT/initrd.img-$1"; }

hook() { "$ROOT/hooks/$1" "${@:2}"; }
# run NAME WANT_RC PATTERN HOOK ARGS...: exit status and a line on stderr.
run() {
        local name=$1 want=$2 pat=$3; shift 3
        hook "$@" >"$T/out" 2>"$T/err"; local rc=$?
        if [ "$rc" = "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" "$T/err"; }; then pass "$name"
        else fail "$name (exit $rc, want $want; stderr: $(head -c 600 "$T/err"))"; fi
}
short() { python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest()[:16])' "$1"; }
# The entry the hook must write for V with kernel K and initrd I, as bytes.
entry_text() {
        printf '%s\n' "# written by mshim's kernel hook; the approval of the next boot covers these bytes" \
                "title $TITLE" "version $1" "linux /$TOKEN/$1/linux-$(short "$2")" \
                "initrd /$TOKEN/$1/initrd-$(short "$3")" "options ${4:-$OPTS}"
}
# check_installed V K I: the entry's bytes, the copies, nothing else.
check_installed() {
        local v=$1 k=$2 i=$3 e=$ESP/loader/entries/$TOKEN-$1.conf
        check "$v: the entry's bytes" cmp -s <(entry_text "$v" "$k" "$i") "$e"
        check "$v: the kernel's copy" cmp -s "$k" "$ESP/$TOKEN/$v/linux-$(short "$k")"
        check "$v: the initrd's copy" cmp -s "$i" "$ESP/$TOKEN/$v/initrd-$(short "$i")"
        check "$v: no other file by them" test "$(ls -A "$ESP/$TOKEN/$v" | sort)" = \
                "$(printf '%s\n' "initrd-$(short "$i")" "linux-$(short "$k")")"
}
n_approvals() { ls "$ESP/loader/mshim/approvals" 2>/dev/null | wc -l; }
last_approval() { cat "$T/approved/last"; }
# check_approved NAME V K I [ENTRY_ID]: the last approval is of V's entry
# booting K and I (the PCRs predict_fixture.py computes), with ENTRY_ID.
check_approved() {
        local name=$1 v=$2 k=$3 i=$4 id=${5-$TOKEN-$2}
        local want; want=$(python3 "$FIX" expect-entry --entry-name "$TOKEN-$v.conf" --entry <(entry_text "$v" "$k" "$i") \
                --kernel "$k" --initrd "$i" --options "$OPTS" --select 4,5,7,9,12)
        if python3 -c 'import json, sys
got = json.load(open(sys.argv[1]))["pcrs"]; want = json.loads(sys.argv[2])
sys.exit(0 if got == want else "got %s\nwant %s" % (got, want))' "$T/approved/last.json" "$want"; then
                pass "$name: approved the PCRs of $v's boot (hashlib)"
        else fail "$name: approved the PCRs of $v's boot (hashlib)"; fi
        check "$name: approval's entry id ${id:-(none)}" test "$(sed -n 's/^entry-id //p' "$(last_approval)")" = "$id"
}
# esp_state: every file on the ESP with its hash, approvals aside.
esp_state() { (cd "$ESP" && find . -path ./loader/mshim -prune -o -type f -print0 | sort -z | xargs -0 sha256sum); }

# ---- a first kernel, initramfs-tools' hook first (run-parts order) ---------------
install_kernel "$V1" "$K1"
run "$V1: post-update.d before any entry: nothing to do" 0 "nothing to do" mshim.post-update "$V1" "$BOOT/initrd.img-$V1"
write_initrd "$V1" "$T/initrd1"
run "$V1: post-update.d, no entry, no kernel waiting: nothing to do" 0 "nothing to do" mshim.post-update "$V1" "$BOOT/initrd.img-$V1"
check "$V1: nothing written yet" test -z "$(ls -A "$ESP")"
run "$V1: postinst.d after the initrd: entry and approval" 0 "approved the next boot" zz-mshim.postinst "$V1" "$BOOT/vmlinuz-$V1"
check_installed "$V1" "$K1" "$T/initrd1"
check_approved "$V1" "$V1" "$K1" "$T/initrd1"
check "$V1: label 'kernel $V1'" grep -qx "label kernel $V1" "$(last_approval)"
check "$V1: the current boot approved too (no approval matched it)" grep -q -- "--current" "$T/policy.log"
check "$V1: the predicted file is mshim-predict/1 JSON" python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["schema"] != "mshim-predict/1")' "$T/approved/last.json"
check "$V1: no temporary file left" test -z "$(find "$ESP" -name '*mshim-tmp*')"
n=$(n_approvals)
run "$V1: postinst.d again: nothing to do" 0 "nothing to do" zz-mshim.postinst "$V1"
check "$V1: ... and no new approval" test "$(n_approvals)" = "$n"

# ---- a second kernel, zz-mshim before the initrd exists -------------------------------
install_kernel "$V2" "$K2"
before=$(esp_state)
run "$V2: postinst.d before the initrd: deferred" 0 "not written yet" zz-mshim.postinst "$V2" "$BOOT/vmlinuz-$V2"
check "$V2: deferred: the ESP unchanged" test "$(esp_state)" = "$before"
check "$V2: deferred: no approval" test "$(n_approvals)" = "$n"
write_initrd "$V2" "$T/initrd2"
: >"$T/policy.log"
run "$V2: post-update.d writes the entry once the initrd is there" 0 "approved the next boot" mshim.post-update "$V2" "$BOOT/initrd.img-$V2"
check_installed "$V2" "$K2" "$T/initrd2"
check_approved "$V2" "$V2" "$K2" "$T/initrd2"
check "$V2: the current boot already approved: not again" bash -c "! grep -q -- --current '$T/policy.log'"
check "$V2: $V1's entry untouched" cmp -s <(entry_text "$V1" "$K1" "$T/initrd1") "$ESP/loader/entries/$TOKEN-$V1.conf"
n=$(n_approvals)
run "$V2: postinst.d after it: nothing to do" 0 "nothing to do" zz-mshim.postinst "$V2"
check "$V2: no second approval" test "$(n_approvals)" = "$n"

# ---- update-initramfs -u: a new initrd for an installed kernel -------------------------
write_initrd "$V2" "$T/initrd2b"
run "$V2: a new initrd: a new approval" 0 "approved the next boot" mshim.post-update "$V2" "$BOOT/initrd.img-$V2"
check_installed "$V2" "$K2" "$T/initrd2b"
check_approved "$V2 new initrd" "$V2" "$K2" "$T/initrd2b"

# ---- a kernel that is not the default (an older version) ---------------------------
install_kernel "$V0" "$K1"; write_initrd "$V0" "$T/initrd1"
run "$V0 (older): installed, not the default" 0 "will not be the default" zz-mshim.postinst "$V0"
check_installed "$V0" "$K1" "$T/initrd1"
check_approved "$V0 (older): the default boot ($V2) approved again" "$V2" "$K2" "$T/initrd2b" ""

# ---- failures leave nothing behind ---------------------------------------------------
before=$(esp_state); n=$(n_approvals)
head -c 4096 /dev/urandom >"$T/bad-kernel"; install_kernel "$VBAD" "$T/bad-kernel"; write_initrd "$VBAD" "$T/initrd1"
run "corrupt kernel: refused, with mshim predict's message" 1 "^mshim: .*vmlinuz\|^mshim: .*linux-" zz-mshim.postinst "$VBAD"
check "corrupt kernel: the hook says it removed what it wrote" grep -q "removed what this run had written" "$T/err"
check "corrupt kernel: the ESP as before (no entry, no copy, no temporary file)" test "$(esp_state)" = "$before"
check "corrupt kernel: no directory left for it" test ! -e "$ESP/$TOKEN/$VBAD"
check "corrupt kernel: no approval" test "$(n_approvals)" = "$n"
install_kernel "$V3" "$K2"; write_initrd "$V3" "$T/initrd3"
: >"$T/approve-fails"
run "approval refused: the hook fails, naming it" 1 "policy approve" zz-mshim.postinst "$V3"
rm -f "$T/approve-fails"
check "approval refused: the ESP as before" test "$(esp_state)" = "$before"
check "approval refused: no default entry for $V3" test ! -e "$ESP/loader/entries/$TOKEN-$V3.conf"
sed 's/^sha256:4=./sha256:4=f/; s/^sha256:4=ff/sha256:4=00/' "$F/pcrs.txt" >"$T/wrong-pcrs.txt"
write_conf "PCRS=$T/wrong-pcrs.txt"
run "a baseline that does not replay: refused, naming the PCR" 1 "sha256 PCR 4" zz-mshim.postinst "$V3"
write_conf
check "a baseline that does not replay: the ESP as before" test "$(esp_state)" = "$before"
check "a baseline that does not replay: no approval" test "$(n_approvals)" = "$n"

# ---- removal -------------------------------------------------------------------------
run "$V3: installed now" 0 "approved the next boot" zz-mshim.postinst "$V3"
check_approved "$V3" "$V3" "$K2" "$T/initrd3"
rm -f "$BOOT/vmlinuz-$V3" "$BOOT/initrd.img-$V3"
n=$(n_approvals)
run "$V3 (the default) removed: the next default's boot approved first" 0 "entry removed" zz-mshim.postrm "$V3" "$BOOT/vmlinuz-$V3"
check_approved "$V3 removed" "$V2" "$K2" "$T/initrd2b" ""
check "$V3 removed: its entry is gone" test ! -e "$ESP/loader/entries/$TOKEN-$V3.conf"
check "$V3 removed: its copies are gone" test ! -e "$ESP/$TOKEN/$V3"
check "$V3 removed: no approval names its entry" bash -c "! grep -rqx 'entry-id $TOKEN-$V3' '$ESP/loader/mshim/approvals'"
check "$V3 removed: $V2's approvals stay" grep -rqx "entry-id $TOKEN-$V2" "$ESP/loader/mshim/approvals"
n=$(n_approvals)
run "$V0 (not the default) removed" 0 "entry removed" zz-mshim.postrm "$V0"
check "$V0 removed: no approval needed" test "$(n_approvals)" = "$n"
check "$V0 removed: entry and copies gone" test ! -e "$ESP/loader/entries/$TOKEN-$V0.conf" -a ! -e "$ESP/$TOKEN/$V0"
run "removing an unknown version: nothing to remove, status 0" 0 "" zz-mshim.postrm 9.9.9-1-amd64

# ---- Debian's maintainer-script arguments --------------------------------------------
before=$(esp_state)
DEB_MAINT_PARAMS="'upgrade' '6.1.0-57'" run "postrm on upgrade: nothing" 0 "" zz-mshim.postrm "$V2"
DEB_MAINT_PARAMS="'abort-install'" run "postinst on abort-install: nothing" 0 "" zz-mshim.postinst "$V3"
check "maintainer-script arguments: the ESP unchanged" test "$(esp_state)" = "$before"

# ---- kernel-install ----------------------------------------------------------------
printf 'a staged initrd\n' >"$T/initrd-ki"
KERNEL_INSTALL_LAYOUT=bls KERNEL_INSTALL_CONF_ROOT=$R/etc/kernel \
        run "kernel-install, layout bls with 90-loaderentry active: refused" 1 "90-loaderentry" \
        90-mshim.install add "$V3" "$T/entry-dir" "$K2" "$T/initrd-ki"
check "kernel-install refused: the ESP unchanged" test "$(esp_state)" = "$before"
mkdir -p "$R/etc/kernel/install.d"; ln -s /dev/null "$R/etc/kernel/install.d/90-loaderentry.install"
KERNEL_INSTALL_LAYOUT=bls KERNEL_INSTALL_CONF_ROOT=$R/etc/kernel \
        run "kernel-install add (90-loaderentry masked)" 0 "approved the next boot" \
        90-mshim.install add "$V3" "$T/entry-dir" "$K2" "$T/initrd-ki"
check_installed "$V3" "$K2" "$T/initrd-ki"
check_approved "kernel-install add" "$V3" "$K2" "$T/initrd-ki"
run "kernel-install remove" 0 "entry removed" 90-mshim.install remove "$V3" "$T/entry-dir"
check "kernel-install remove: entry and copies gone" test ! -e "$ESP/loader/entries/$TOKEN-$V3.conf" -a ! -e "$ESP/$TOKEN/$V3"
run "kernel-install: two initrds refused" 1 "more than one initrd" 90-mshim.install add "$V3" "$T/e" "$K2" "$T/initrd-ki" "$T/initrd-ki"

# ---- settings --------------------------------------------------------------------
before=$(esp_state)
write_conf "FOO=bar"
run "hook.conf: an unknown key is refused" 1 "unknown setting FOO" zz-mshim.postinst "$V2"
write_conf "ESP /boot/efi"
run "hook.conf: a line that is not KEY=VALUE is refused" 1 "not KEY=VALUE" zz-mshim.postinst "$V2"
write_conf "ENTRY_TOKEN=../x"
run "hook.conf: an ENTRY_TOKEN with a slash is refused" 1 "ENTRY_TOKEN" zz-mshim.postinst "$V2"
write_conf "STATE_DIR=$T/nowhere"
run "no policy key (mshim policy init not run): refused" 1 "mshim policy init" zz-mshim.postinst "$V2"
write_conf
MSHIM_HOOK_CONF=$T/absent.conf run "no hook.conf: refused" 1 "absent.conf" zz-mshim.postinst "$V2"
run "a version with a slash is refused" 1 "not a kernel version" zz-mshim.postinst "../x"
mv "$R/etc/kernel/cmdline" "$R/etc/kernel/cmdline.off"
install_kernel "$V3" "$K2"; write_initrd "$V3" "$T/initrd3"
run "no OPTIONS, no /etc/kernel/cmdline, no entry of the running kernel: refused" 1 "no kernel command line" zz-mshim.postinst "$V3"
mv "$R/etc/kernel/cmdline.off" "$R/etc/kernel/cmdline"
check "settings refused: the ESP unchanged" test "$(esp_state)" = "$before"
write_conf "OPTIONS=root=/dev/vda3 mshim.test=1"
OPTS="root=/dev/vda3 mshim.test=1"
run "OPTIONS in hook.conf override /etc/kernel/cmdline" 0 "approved the next boot" zz-mshim.postinst "$V3"
check_installed "$V3" "$K2" "$T/initrd3"
check_approved "OPTIONS" "$V3" "$K2" "$T/initrd3"
