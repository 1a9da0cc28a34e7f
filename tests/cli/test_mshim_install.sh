#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim install / uninstall / status (docs/UPGRADES.md "mshim install") on a
# temporary ESP and root: a fake /boot with Debian's kernel, a recording
# efibootmgr (tests/cli/fake_efibootmgr.py) that also keeps efivarfs files.
# Expected values come from the sources: cmp against the package files,
# entries written out here by hand from sha256sum, sbverify for signatures,
# sbattach --remove to see what was signed, find|sha256sum for "as before".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
t=$(mktemp -d)
cli_init mshim-install "$t"
LOADER=${B:-build}/mshimx64.efi
SHIMDIR=${MB_EFIROOT:-build/debian-efi}/usr/lib/shim
KDIR=${KDIR:-build/kernel}
for f in "$MSHIM" "$LOADER" "$SHIMDIR/shimx64.efi.signed" "$KDIR/vmlinuz"; do
        [ -e "$f" ] || { fail "no $f (make check-build, make deps)"; exit 1; }
done
command -v sbverify >/dev/null || { fail "no sbverify (sbsigntool)"; exit 1; }
V1=$(cat "$KDIR/VERSION") V2=6.1.0-99-amd64
TOKEN=0123456789abcdef0123456789abcdef TITLE="Debian GNU/Linux 12 (bookworm)"
openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mshim install test/" -days 1 \
        -keyout "$t/k.pem" -out "$t/c.pem" 2>/dev/null || { fail "openssl req"; exit 1; }
openssl x509 -in "$t/c.pem" -outform DER -out "$t/c.der"

# The kernel hook as `make install` puts it (placeholders replaced).
sed -e 's|@SYSCONFDIR@|/etc|g' -e 's|@BINDIR@|/usr/bin|g' -e 's|@LIBDIR@|/usr/lib/mshim|g' \
        hooks/kernel-hook >"$t/kernel-hook" && chmod +x "$t/kernel-hook"
export MSHIM_KERNEL_HOOK=$t/kernel-hook TMPDIR=$t/tmp
mkdir -p "$TMPDIR"
unset MSHIM_EFIBOOTMGR KERNEL_INSTALL_LAYOUT

# new_root DIR [cmdline]: /etc (machine-id, os-release, cmdline when given),
# /proc/cmdline, /boot with two kernels (the second one's initrd written
# after its kernel, as initramfs-tools does), /proc/self/mountinfo with the
# ESP at /boot/efi on /dev/vda1 and sysfs for it; a fresh fake firmware.
new_root() {
        local r=$1
        rm -rf "$r"
        mkdir -p "$r/etc/kernel" "$r/proc/self" "$r/boot/efi" "$r/var/lib" \
                "$r/sys/devices/pci0000:00/virtio1/block/vda/vda1" "$r/sys/class/block"
        echo "$TOKEN" >"$r/etc/machine-id"
        printf 'NAME="Debian GNU/Linux"\nPRETTY_NAME="%s"\nID=debian\n' "$TITLE" >"$r/etc/os-release"
        [ -z "${2:-}" ] || echo "$2" >"$r/etc/kernel/cmdline"
        echo "BOOT_IMAGE=/vmlinuz-$V1 root=UUID=1234-abcd ro quiet" >"$r/proc/cmdline"
        cp "$KDIR/vmlinuz" "$r/boot/vmlinuz-$V1"
        head -c 70000 /dev/urandom >"$r/boot/initrd.img-$V1"
        cp "$KDIR/vmlinuz" "$r/boot/vmlinuz-$V2"
        head -c 50000 /dev/urandom >"$r/boot/initrd.img-$V2"
        echo "36 25 8:1 / /boot/efi rw,relatime shared:7 - vfat /dev/vda1 rw,fmask=0077,dmask=0077" >"$r/proc/self/mountinfo"
        echo "1" >"$r/sys/devices/pci0000:00/virtio1/block/vda/vda1/partition"
        ln -s ../../devices/pci0000:00/virtio1/block/vda/vda1 "$r/sys/class/block/vda1"
        export FAKE_EFI=$r/fw.json FAKE_EFIVARS=$r/efivars
        mkdir -p "$FAKE_EFIVARS"
        cat >"$FAKE_EFI" <<'EOF'
{"order": ["0001", "0000"], "next": null, "current": "0001", "entries": {
 "0000": {"label": "UiApp", "loader": "\\UiApp", "part": 1, "disk": "/dev/vda"},
 "0001": {"label": "debian", "loader": "\\EFI\\debian\\shimx64.efi", "part": 1, "disk": "/dev/vda"}}}
EOF
        : >"$FAKE_EFI.log"
        python3 tests/cli/fake_efibootmgr.py >/dev/null   # the efivars files
        : >"$FAKE_EFI.log"
}
fw() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$FAKE_EFI" "$1"; }
# A tree's names, types and contents, as one hash.
treesum() { (cd "$1" && find . -printf '%y %p\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort) | sha256sum; }
q() { "$@" >/dev/null 2>&1; }
h16() { sha256sum "$1" | cut -c1-16; }
# The entry the kernel hook writes, by hand from hooks/kernel-hook's format.
entry() {
        local r=$1 v=$2 opts=$3
        printf '%s\n' "# written by mshim's kernel hook; the approval of the next boot covers these bytes" \
                "title $TITLE" "version $v" "linux /$TOKEN/$v/linux-$(h16 "$r/boot/vmlinuz-$v")" \
                "initrd /$TOKEN/$v/initrd-$(h16 "$r/boot/initrd.img-$v")" "options $opts"
}
EFB=tests/cli/fake_efibootmgr.py

# ---- 1. plain layout, signed with a db key, --esp, no /etc/kernel/cmdline ----------
R=$t/r1 ESP=$t/r1/boot/efi ST=$t/r1/var/lib/mshim
new_root "$R"
mkdir -p "$ESP/EFI/debian" && echo "grub" >"$ESP/EFI/debian/grubx64.efi"
esp_before=$(treesum "$ESP") root_before=$(treesum "$R/etc")
"$MSHIM" install --root "$R" --esp "$ESP" --key "$t/k.pem" --cert "$t/c.pem" --loader "$LOADER" \
        --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "install (signed, --esp): exit 0" test "$rc" = 0
check "mshimx64.efi: sbverify --cert accepts it" q sbverify --cert "$t/c.pem" "$ESP/EFI/mshim/mshimx64.efi"
cp "$ESP/EFI/mshim/mshimx64.efi" "$t/unsigned.efi" && sbattach --remove "$t/unsigned.efi" 2>/dev/null
check "mshimx64.efi less its signature is the package's image byte for byte" cmp -s "$t/unsigned.efi" "$LOADER"
check "no shim in the plain layout" test ! -e "$ESP/EFI/mshim/shimx64.efi" -a ! -e "$ESP/EFI/mshim/grubx64.efi"
check "the running command line (less BOOT_IMAGE=) written to /etc/kernel/cmdline" \
        test "$(cat "$R/etc/kernel/cmdline")" = "root=UUID=1234-abcd ro quiet"
for v in "$V1" "$V2"; do
        check "entry for $v: the kernel hook's, byte for byte" \
                cmp -s <(entry "$R" "$v" "root=UUID=1234-abcd ro quiet") "$ESP/loader/entries/$TOKEN-$v+3-0.conf"
        check "kernel $v copied byte for byte" cmp -s "$R/boot/vmlinuz-$v" "$ESP/$TOKEN/$v/linux-$(h16 "$R/boot/vmlinuz-$v")"
        check "initrd $v copied byte for byte" cmp -s "$R/boot/initrd.img-$v" "$ESP/$TOKEN/$v/initrd-$(h16 "$R/boot/initrd.img-$v")"
done
check "loader.conf written (there was none), no chainload in the plain layout" \
        bash -c "test -f '$ESP/loader/loader.conf' && ! grep -q '^chainload' '$ESP/loader/loader.conf'"
check "the hook said it approved nothing (no policy key)" grep -q "mshim is not set up" "$t/err"
NUM=$(fw 'sorted(set(s["entries"])-{"0000","0001"})[0]')
check "one firmware boot entry added: label mshim, \\EFI\\mshim\\mshimx64.efi on /dev/vda 1" \
        test "$(fw '"|".join(str(v) for v in s["entries"]["'"$NUM"'"].values())')" = 'mshim|\EFI\mshim\mshimx64.efi|1|/dev/vda'
check "efibootmgr was told --create-only (BootOrder untouched by the creation)" grep -q -- "--create-only --disk /dev/vda --part 1" "$FAKE_EFI.log"
check "BootNext is the new entry (a trial boot)" test "$(fw 's["next"]')" = "$NUM"
check "BootOrder unchanged: the old entries only" test "$(fw '",".join(s["order"])')" = "0001,0000"
check "the record names the ESP, the layout and the boot entry" \
        bash -c "grep -qx 'esp $ESP' '$ST/install.record' && grep -qx 'layout signed' '$ST/install.record' && grep -qx 'boot-entry $NUM' '$ST/install.record'"
h=$(sha256sum "$ESP/EFI/mshim/mshimx64.efi" | cut -d' ' -f1)
check "the record has mshimx64.efi's SHA-256" grep -qx "file $h EFI/mshim/mshimx64.efi" "$ST/install.record"

# Refusals once installed.
expect_rc "install again: refused, saying --update" 1 "install --update" \
        "$MSHIM" install --root "$R" --esp "$ESP" --loader "$LOADER" --efibootmgr "$EFB"

"$MSHIM" status --root "$R" --efivars "$FAKE_EFIVARS" >"$t/status.txt" 2>&1
check "status before the trial boot: says the next boot tries mshim once, then --confirm" \
        grep -q "^Next: the next boot tries mshim once (BootNext $NUM)" "$t/status.txt"
# --trial: MokManager's boot spent BootNext (the firmware deletes it before
# it starts the entry); --trial sets the recorded entry again, BootOrder
# untouched.
python3 "$EFB" --delete-bootnext >/dev/null
check "(BootNext spent, as after MokManager's boot)" test "$(fw 's.get("next") or "none"')" = none
"$MSHIM" status --root "$R" --efivars "$FAKE_EFIVARS" >"$t/status.txt" 2>&1
check "status with BootNext spent: says mshim install --trial, then reboot" \
        grep -q "^Next: mshim install --trial, then reboot" "$t/status.txt"
"$MSHIM" install --trial --root "$R" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
check "install --trial: exit 0" test "$rc" = 0
check "--trial: BootNext is the recorded entry again" test "$(fw 's["next"]')" = "$NUM"
check "--trial: BootOrder untouched" test "$(fw '",".join(s["order"])')" = "0001,0000"
check "--trial: says the next boot tries mshim once, then --confirm" \
        bash -c "grep -q 'BootNext $NUM: the next boot tries mshim once' '$t/out' && grep -q 'install --confirm' '$t/out'"
expect_rc "--trial with --key: refused (it acts on the recorded install)" 2 "take no --key" \
        "$MSHIM" install --trial --key k --cert c --root "$R" --efibootmgr "$EFB"
expect_rc "--trial with --confirm: refused (one of them)" 2 "one of them" \
        "$MSHIM" install --trial --confirm --root "$R" --efibootmgr "$EFB"

# --confirm: the entry first in BootOrder, the old ones behind it.
check "install --confirm: exit 0" q "$MSHIM" install --confirm --root "$R" --efibootmgr "$EFB"
check "--confirm: BootOrder is mshim's, then the old ones" test "$(fw '",".join(s["order"])')" = "$NUM,0001,0000"

# --update with the ESP's copy swapped by an attacker: the package's image is
# signed again; the swapped file is neither read for it nor kept.
cp "$SHIMDIR/fbx64.efi" "$ESP/EFI/mshim/mshimx64.efi"
"$MSHIM" install --update --root "$R" --loader "$LOADER" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
check "--update (recorded key): exit 0" test "$rc" = 0
check "--update names the ESP copy changed outside mshim" grep -q "changed since mshim install wrote it" "$t/out"
check "--update: sbverify --cert accepts the new mshimx64.efi" q sbverify --cert "$t/c.pem" "$ESP/EFI/mshim/mshimx64.efi"
cp "$ESP/EFI/mshim/mshimx64.efi" "$t/unsigned.efi" && sbattach --remove "$t/unsigned.efi" 2>/dev/null
check "--update signed the package's image, not the attacker's swapped copy" cmp -s "$t/unsigned.efi" "$LOADER"
h=$(sha256sum "$ESP/EFI/mshim/mshimx64.efi" | cut -d' ' -f1)
check "--update recorded the new SHA-256" grep -qx "file $h EFI/mshim/mshimx64.efi" "$ST/install.record"
check "--update before setup (no policy key): says plainly that nothing was approved" grep -q "nothing was approved" "$t/out"

# --update once mshim is set up: the next boot with the new image is
# predicted and approved before the file is swapped. The baseline boot is
# predict_fixture.py's (its log, its events extended into a swtpm); the new
# image differs from the installed one in its COFF TimeDateStamp (hashed by
# Authenticode), so its PCR 4 digest is new. The expected PCR 4 is
# predict_fixture.py's (tests/integration/oracle.py's Authenticode hash with
# hashlib), of the default entry's boot with the new image.
F=$t/fix
python3 tests/cli/predict_fixture.py make "$F" "$KDIR/vmlinuz" >/dev/null || fail "predict_fixture.py make"
cli_swtpm "$t/tpm" || { fail "swtpm starts"; exit 1; }
cli_extend "$F/extends.txt"
q "$MSHIM" policy init --state-dir "$ST" || fail "mshim policy init"
mkdir -p "$R/etc/mshim" && printf 'LOG=%s\n' "$F/log.bin" >"$R/etc/mshim/hook.conf"
newimg() {    # OUT STAMP: the package's image with another COFF TimeDateStamp
        python3 -c 'import struct, sys
b = bytearray(open(sys.argv[1], "rb").read()); pe = struct.unpack_from("<I", b, 0x3C)[0]
struct.pack_into("<I", b, pe + 8, int(sys.argv[3])); open(sys.argv[2], "wb").write(b)' "$LOADER" "$1" "$2"
}
newimg "$t/new.efi" 1234567
newimg "$t/new2.efi" 7654321
AP=$ESP/loader/mshim/approvals
# pcr4 IMAGE: PCR 4 of the default entry's ($V2) boot with IMAGE as mshim.
pcr4() {
        python3 tests/cli/predict_fixture.py expect-entry --entry-name "$TOKEN-$V2.conf" \
                --entry "$ESP/loader/entries/$TOKEN-$V2+3-0.conf" --kernel "$R/boot/vmlinuz-$V2" \
                --initrd "$R/boot/initrd.img-$V2" --options "root=UUID=1234-abcd ro quiet" \
                --loader-conf "$ESP/loader/loader.conf" --loader "$1" --select 4 |
                python3 -c 'import json, sys; print(json.load(sys.stdin)["sha256"]["4"])'
}
ap_pcr4() { cli_approval_values "$1" | sed -n 's/^sha256:4=//p'; }
cp "$SHIMDIR/fbx64.efi" "$ESP/EFI/mshim/mshimx64.efi"     # the attacker's image, again
# (The hook's settings as install gives them, kept for a hook run below.)
printf '#!/bin/sh\ncp "$MSHIM_HOOK_CONF" %s\nexec %s "$@"\n' "$t/hook.conf.saved" "$t/kernel-hook" >"$t/hook-wrap" &&
        chmod +x "$t/hook-wrap"
MSHIM_KERNEL_HOOK=$t/hook-wrap "$MSHIM" install --update --root "$R" --loader "$t/new.efi" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "--update (set up): exit 0" test "$rc" = 0
A=$(ls "$AP"/*.approval 2>/dev/null)
check "--update (set up): one approval written" test "$(echo "$A" | grep -c .)" = 1
check "--update: the approval's PCR 4 is the boot with the new image (Authenticode by the oracle, hashlib)" \
        test -n "$A" -a "$(ap_pcr4 "$A")" = "$(pcr4 "$t/new.efi")"
check "--update: the approval names the default entry" grep -qx "entry-id $TOKEN-$V2" "$A"
check "--update: the approval is signed by the policy key (mshim policy list: live)" \
        bash -c "'$MSHIM' policy list --state-dir '$ST' --esp '$ESP' | grep -q live"
check "--update: the attacker's ESP image is in no approval (its PCR 4 by the oracle)" \
        test "$(ap_pcr4 "$A")" != "$(pcr4 "$SHIMDIR/fbx64.efi")"
cp "$ESP/EFI/mshim/mshimx64.efi" "$t/unsigned.efi" && sbattach --remove "$t/unsigned.efi" 2>/dev/null
# (sbsign fixes the stale PE checksum newimg left: the Authenticode digest,
# which leaves the checksum out, is what must be the same.)
sbv=bad; q sbverify --cert "$t/c.pem" "$ESP/EFI/mshim/mshimx64.efi" && sbv=ok
check "--update: the ESP holds the new image, signed (sbverify), its Authenticode digest the new image's (oracle)" \
        test "$sbv" = ok -a "$(pcr4 "$t/unsigned.efi")" = "$(pcr4 "$t/new.efi")"
check "--update: no staged image left in the state directory" test ! -e "$ST/.mshim-update.efi"
# A kernel hook run after --update, before the reboot (apt upgrading mshim
# and writing an initrd in the same run): the next boot starts the new
# mshim, so the hook predicts with the installed image (the ESP's copy,
# checked against install.record), not this boot's.
printf 'newer\n' >>"$R/boot/initrd.img-$V2"
before=$(ls "$AP")
MSHIM_HOOK_CONF=$t/hook.conf.saved "$t/kernel-hook" initrd "$V2" "$R/boot/initrd.img-$V2" >"$t/out" 2>&1; rc=$?
A2=$(cd "$AP" && ls | grep -vxF "$before" | head -n 1)
check "a hook run after --update (a new initrd): exit 0, one approval more" test "$rc" = 0 -a -n "$A2"
check "... its PCR 4 is the boot with the installed new mshim, not this boot's (oracle, hashlib)" \
        test -n "$A2" -a "$(ap_pcr4 "$AP/$A2")" = "$(pcr4 "$t/new.efi")"
[ "$rc" = 0 ] || cat "$t/out" >&2
h=$(sha256sum <"$R/boot/initrd.img-$V2") h=${h%% *}
check "... install.record names the initrd's copy with the SHA-256 of /boot's initrd (sha256sum), for uninstall" \
        grep -qx "file $h $TOKEN/$V2/initrd-${h:0:16}" "$ST/install.record"
cp "$ESP/EFI/mshim/mshimx64.efi" "$t/esp-mshim.bak"
cp "$SHIMDIR/fbx64.efi" "$ESP/EFI/mshim/mshimx64.efi"
printf 'newest\n' >>"$R/boot/initrd.img-$V2"
before=$(ls "$AP")
MSHIM_HOOK_CONF=$t/hook.conf.saved "$t/kernel-hook" initrd "$V2" "$R/boot/initrd.img-$V2" >"$t/out" 2>&1; rc=$?
check "... the ESP's mshim swapped (not the recorded file): nothing approved, the file and the fix named" \
        bash -c "[ -z \"\$(cd '$AP' && ls | grep -vxF '$before')\" ] && grep -q 'not the file mshim install wrote' '$t/out' && grep -q 'mshim install --update' '$t/out'"
cp "$t/esp-mshim.bak" "$ESP/EFI/mshim/mshimx64.efi"

# A failure keeps the old state: the default entry's options edited on the
# ESP (the kernel hook's check refuses it), then --update with another image.
E2=$ESP/loader/entries/$TOKEN-$V2+3-0.conf
cp "$E2" "$t/e2.good"; sed -i 's|^options .*|& init=/bin/sh|' "$E2"
before_img=$(sha256sum <"$ESP/EFI/mshim/mshimx64.efi") before_ap=$(cd "$AP" && sha256sum *) before_rec=$(sha256sum <"$ST/install.record")
expect_rc "--update when the next boot cannot be approved (entry edited on the ESP): refused, the old loader kept" 1 \
        "is kept as it was" "$MSHIM" install --update --root "$R" --loader "$t/new2.efi" --efibootmgr "$EFB"
check "... the ESP's mshim unchanged" test "$(sha256sum <"$ESP/EFI/mshim/mshimx64.efi")" = "$before_img"
check "... the approvals unchanged" test "$(cd "$AP" && sha256sum *)" = "$before_ap"
check "... the record unchanged" test "$(sha256sum <"$ST/install.record")" = "$before_rec"
check "... the edited entry's boot approved by nothing: the hook named the line" grep -q "init=/bin/sh" "$CLI_TMP/err"
cp "$t/e2.good" "$E2"
# Approvals are the policy's, not the install's: uninstall leaves them;
# hook.conf is the admin's.
rm -r "$ESP/loader/mshim" "$R/etc/mshim"

# status, while installed (schema validation: tests/cli/test_json_schema.sh
# and below).
printf '\x06\x00\x00\x00\x01' >"$FAKE_EFIVARS/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
printf '\x06\x00\x00\x00\x00' >"$FAKE_EFIVARS/SetupMode-8be4df61-93ca-11d2-aa0d-00e098032b8c"
# The keyscript's outcomes this boot (hooks/cryptroot-unseal writes them).
WHY="the TPM was cleared (its owner seed changed: the storage root key at 0x81000001 is gone, and the one the secret was sealed under can never be made again): after this passphrase boot run 'mshim policy init --reset', then enrol again"
mkdir -p "$R/run/mshim" && echo "fallback $WHY" >"$R/run/mshim/unlock-root" && echo unsealed >"$R/run/mshim/unlock-data"
if "$MSHIM" status --root "$R" --efivars "$FAKE_EFIVARS" --json >"$t/status.json" 2>"$t/err"; then
        check "status --json: each volume's unlock this boot, the fallback's cause in unseal's words" python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))["unlock"]
assert u == {"root": "fallback " + sys.argv[2], "data": "unsealed"}, u' "$t/status.json" "$WHY"
        pass "status --json: exit 0"
        check "status --json: secure_boot true, setup_mode false (the fake efivars)" python3 -c '
import json,sys; s=json.load(open(sys.argv[1]))
assert s["firmware"]["secure_boot"] is True and s["firmware"]["setup_mode"] is False, s["firmware"]' "$t/status.json"
        check "status --json: installed on the ESP, mshim's file intact" python3 -c '
import json,sys; s=json.load(open(sys.argv[1])); i=s["install"]
assert i["esp"] == sys.argv[2] and i["layout"] == "signed", i
assert all(f["state"] == "ok" for f in i["files"]), i["files"]' "$t/status.json" "$ESP"
        check "status --json: BootOrder's first entry is mshim's, its path decoded" python3 -c '
import json,sys; s=json.load(open(sys.argv[1])); f=s["firmware"]
assert f["boot_order"][0] == sys.argv[2], f
e=[e for e in f["entries"] if e["number"] == sys.argv[2]][0]
assert e["path"] == "\\EFI\\mshim\\mshimx64.efi" and e["label"] == "mshim", e' "$t/status.json" "$NUM"
        check "status --json validates against mshim-status-1.schema.json" \
                python3 tests/cli/json_schema.py --validate mshim-status-1 "$t/status.json"
else
        fail "status --json: exit 0" "$(cat "$t/err")"
fi
check "status (text): names the ESP and Secure Boot" bash -c "'$MSHIM' status --root '$R' --efivars '$FAKE_EFIVARS' | grep -q 'Secure Boot: enabled'"
"$MSHIM" status --root "$R" --efivars "$FAKE_EFIVARS" >"$t/status.txt" 2>&1
check "status (text): the passphrase fallback of root, its cause and commands" grep -qxF "  root: $WHY" "$t/status.txt"
rm -r "$R/run/mshim"

# Boot counting renames the entries install wrote (NAME+3-0.conf), bytes
# unchanged: the loader's try (NAME+2-1.conf), then mshim bless (NAME.conf).
# uninstall finds them by entry id and digest.
n=0
for f in "$ESP"/loader/entries/*+3-0.conf; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        if [ $n = 1 ]; then mv "$f" "${f%+3-0.conf}+2-1.conf"; else mv "$f" "${f%+3-0.conf}.conf"; fi
done
check "boot counting renamed the $n entries install wrote (one tried, the others blessed)" test "$n" -ge 2

# uninstall: the ESP and /etc as before, the boot entry gone, BootOrder as before.
"$MSHIM" uninstall --root "$R" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "uninstall: exit 0" test "$rc" = 0
check "uninstall: the ESP is as before install (find | sha256sum)" test "$(treesum "$ESP")" = "$esp_before"
check "uninstall: /etc as before (the command line install wrote is gone)" test "$(treesum "$R/etc")" = "$root_before"
check "uninstall: the boot entry is gone" test "$(fw 'sorted(s["entries"])')" = "['0000', '0001']"
check "uninstall: BootOrder as before install" test "$(fw '",".join(s["order"])')" = "0001,0000"
check "uninstall: BootNext unset" test "$(fw 's["next"]')" = None
check "uninstall: the record is gone" test ! -e "$ST/install.record"
expect_rc "uninstall with nothing recorded: refused" 1 "no install recorded" "$MSHIM" uninstall --root "$R" --efibootmgr "$EFB"

# ---- 2. --shim, the ESP found through mountinfo, /etc/kernel/cmdline kept ----------
R=$t/r2 ESP=$t/r2/boot/efi ST=$t/r2/var/lib/mshim
new_root "$R" "root=/dev/vda2 ro"
mkdir -p "$ESP/loader" && echo "default mine-*" >"$ESP/loader/loader.conf"
cp "$ESP/loader/loader.conf" "$t/lc"
esp_before=$(treesum "$ESP")
"$MSHIM" install --root "$R" --shim --shim-dir "$SHIMDIR" --key "$t/k.pem" --cert "$t/c.pem" --loader "$LOADER" \
        --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "install --shim (ESP from mountinfo): exit 0" test "$rc" = 0
check "--shim: shimx64.efi is Debian's signed shim" cmp -s "$SHIMDIR/shimx64.efi.signed" "$ESP/EFI/mshim/shimx64.efi"
check "--shim: shimx64.efi's SHA-256 is Debian's file's" \
        test "$(sha256sum <"$ESP/EFI/mshim/shimx64.efi")" = "$(sha256sum <"$SHIMDIR/shimx64.efi.signed")"
check "--shim: mmx64.efi is Debian's signed MokManager" cmp -s "$SHIMDIR/mmx64.efi.signed" "$ESP/EFI/mshim/mmx64.efi"
check "--shim: mshim is grubx64.efi, sbverify --cert accepts it" q sbverify --cert "$t/c.pem" "$ESP/EFI/mshim/grubx64.efi"
check "--shim: no fbx64.efi (the fallback would add boot entries)" test ! -e "$ESP/EFI/mshim/fbx64.efi"
check "a user's loader.conf is not overwritten" cmp -s "$t/lc" "$ESP/loader/loader.conf"
check "/etc/kernel/cmdline used as it is" test "$(cat "$R/etc/kernel/cmdline")" = "root=/dev/vda2 ro"
check "entry for $V1 with /etc/kernel/cmdline's options" cmp -s <(entry "$R" "$V1" "root=/dev/vda2 ro") "$ESP/loader/entries/$TOKEN-$V1+3-0.conf"
check "mok.der in the state directory is the certificate as DER" cmp -s "$t/c.der" "$ST/mok.der"
check "the mokutil --import step is printed" grep -q "mokutil --import $ST/mok.der" "$t/out"
check "boot entry: \\EFI\\mshim\\shimx64.efi on the mount's disk and partition (sysfs)" \
        grep -q -- '--create-only --disk /dev/vda --part 1 --loader \\EFI\\mshim\\shimx64.efi --label mshim' "$FAKE_EFI.log"
# A file changed since install is kept and named; the rest goes.
echo "# mine" >>"$ESP/EFI/mshim/mmx64.efi"
"$MSHIM" uninstall --root "$R" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
check "uninstall with a changed file: exit 1" test "$rc" = 1
check "uninstall names the changed file" grep -q "EFI/mshim/mmx64.efi: kept: changed" "$t/err"
check "the changed file is kept" test -f "$ESP/EFI/mshim/mmx64.efi"
check "the rest is removed" test ! -e "$ESP/EFI/mshim/grubx64.efi" -a ! -e "$ESP/loader/entries/$TOKEN-$V1+3-0.conf"
check "the boot entry is gone already" test "$(fw 'sorted(s["entries"])')" = "['0000', '0001']"
rm "$ESP/EFI/mshim/mmx64.efi"
check "uninstall again, once it is removed: exit 0" q "$MSHIM" uninstall --root "$R" --efibootmgr "$EFB"
check "then the ESP is as before install" test "$(treesum "$ESP")" = "$esp_before"

# ---- 3. --no-boot-entry, --dry-run, refusals ------------------------------------------
R=$t/r3 ESP=$t/r3/boot/efi
new_root "$R" "root=/dev/vda2 ro"
esp_before=$(treesum "$ESP")
"$MSHIM" install --root "$R" --dry-run --loader "$LOADER" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
check "--dry-run: exit 0" test "$rc" = 0
check "--dry-run: writes nothing on the ESP" test "$(treesum "$ESP")" = "$esp_before"
check "--dry-run: no efibootmgr call" test ! -s "$FAKE_EFI.log"
check "--dry-run: says what it would write" grep -q "would install $LOADER as $ESP/EFI/mshim/mshimx64.efi" "$t/out"
check "install --no-boot-entry: exit 0" q "$MSHIM" install --root "$R" --no-boot-entry --loader "$LOADER" --efibootmgr "$EFB"
check "--no-boot-entry: efibootmgr not run" test ! -s "$FAKE_EFI.log"
expect_rc "--confirm with no boot entry recorded: refused" 1 "nothing to confirm" \
        "$MSHIM" install --confirm --root "$R" --efibootmgr "$EFB"
expect_rc "--trial with no boot entry recorded: refused" 1 "nothing to try" \
        "$MSHIM" install --trial --root "$R" --efibootmgr "$EFB"
check "uninstall (no boot entry): exit 0" q "$MSHIM" uninstall --root "$R" --efibootmgr "$EFB"
check "then the ESP is as before" test "$(treesum "$ESP")" = "$esp_before"

# STRICT=yes in hook.conf before setup (no policy key): the hook alone would
# refuse (apt stops), but an install comes before the setup: it succeeds,
# writes the entries and says what to run next.
mkdir -p "$R/etc/mshim" && echo "STRICT=yes" >"$R/etc/mshim/hook.conf"
expect_rc "STRICT=yes before setup: install succeeds (nothing to approve with yet)" 0 "" \
        "$MSHIM" install --root "$R" --loader "$LOADER" --efibootmgr "$EFB" --no-boot-entry
check "... the entries written" test -n "$(ls "$ESP"/loader/entries/*.conf 2>/dev/null)"
check "... says what to run next: policy init, luks enroll, the hook for the newest kernel ($V2)" \
        bash -c "grep -q 'mshim policy init' '$CLI_TMP/out' && grep -q 'mshim luks enroll' '$CLI_TMP/out' && grep -q 'zz-mshim $V2 ' '$CLI_TMP/out'"
check "uninstall: exit 0" q "$MSHIM" uninstall --root "$R" --efibootmgr "$EFB"
check "... and the ESP is as before" test "$(treesum "$ESP")" = "$esp_before"
rm -r "$R/etc/mshim"

mkdir -p "$ESP/EFI/mshim"
expect_rc "an EFI/mshim not recorded: refused" 1 "EFI/mshim: exists, and .* records no install" \
        "$MSHIM" install --root "$R" --loader "$LOADER" --efibootmgr "$EFB"
rm -r "$ESP/EFI"
echo "36 25 8:1 / /boot/efi rw,relatime shared:7 - ext4 /dev/vda1 rw" >"$R/proc/self/mountinfo"
expect_rc "/boot/efi mounted as ext4: refused" 1 "mounted, but as ext4, not vfat" \
        "$MSHIM" install --root "$R" --loader "$LOADER" --efibootmgr "$EFB"
echo "36 25 8:1 / /home rw - ext4 /dev/vda3 rw" >"$R/proc/self/mountinfo"
expect_rc "no ESP mounted: refused" 1 "no ESP found: nothing is mounted" \
        "$MSHIM" install --root "$R" --loader "$LOADER" --efibootmgr "$EFB"
expect_rc "--esp not a directory: refused" 1 "not a directory" \
        "$MSHIM" install --root "$R" --esp "$t/nonexistent" --loader "$LOADER" --efibootmgr "$EFB"
expect_rc "--esp not a mount and no --disk: refused, naming --no-boot-entry" 1 "no-boot-entry" \
        "$MSHIM" install --root "$R" --esp "$ESP" --loader "$LOADER" --efibootmgr "$EFB"
check "... and leaves the ESP as it was" test "$(treesum "$ESP")" = "$esp_before"
check "... and no record" test ! -e "$R/var/lib/mshim/install.record"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
        # root writes anywhere: the unwritable ESP, as another user.
        chmod 755 "$t" "$R" "$R/boot" "$R/var/lib" && mkdir -p "$t/nobody" && chown 65534 "$t/nobody"
        expect_rc "an ESP not writable: refused" 1 "not writable" setpriv --reuid=65534 --regid=65534 --clear-groups \
                "$MSHIM" install --root "$R" --esp "$ESP" --state-dir "$t/nobody" --loader "$LOADER" --no-boot-entry
fi
refuses "--key without --cert" "--key and --cert go together" "$MSHIM" install --key "$t/k.pem"
refuses "--enroll-mok without --shim" "--enroll-mok needs --shim" "$MSHIM" install --enroll-mok --key "$t/k.pem" --cert "$t/c.pem"
refuses "--update with --shim" "with no layout option" "$MSHIM" install --update --shim
refuses "an operand" "takes no operand" "$MSHIM" install foo
expect_rc "--update with nothing recorded: refused" 1 "no install recorded" \
        "$MSHIM" install --update --root "$R" --loader "$LOADER"

# --enroll-mok runs mokutil --import with the DER certificate.
printf '#!/bin/sh\necho "$@" >"%s"\n' "$t/mokutil.args" >"$t/mokutil" && chmod +x "$t/mokutil"
echo "36 25 8:1 / /boot/efi rw,relatime shared:7 - vfat /dev/vda1 rw" >"$R/proc/self/mountinfo"
MSHIM_MOKUTIL=$t/mokutil "$MSHIM" install --root "$R" --shim --shim-dir "$SHIMDIR" --enroll-mok --key "$t/k.pem" \
        --cert "$t/c.pem" --loader "$LOADER" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"
check "--enroll-mok: mokutil --import STATE/mok.der was run" test "$(cat "$t/mokutil.args" 2>/dev/null)" = "--import $R/var/lib/mshim/mok.der"
check "--shim: loader.conf chainloads Debian's GRUB when there are no entries" grep -qx "chainload /EFI/debian/grubx64.efi" "$ESP/loader/loader.conf"
check "uninstall after --shim --enroll-mok: exit 0" q "$MSHIM" uninstall --root "$R" --efibootmgr "$EFB"
check "then mok.der is gone too" test ! -e "$R/var/lib/mshim/mok.der"
check "then the ESP is as before" test "$(treesum "$ESP")" = "$esp_before"

# ---- 4. from shim + GRUB to an approved first boot through mshim (issue 23) -----
# This boot did not run mshim: Debian's shim -> Debian's GRUB -> the kernel,
# Secure Boot on, the install's certificate enrolled as a MOK (owner shim's
# GUID, as mokutil writes it): tests/cli/first_boot_fixture.py's log and
# PCRs (hashlib). The fake efivarfs has this boot's MokListRT (shim's
# built-in certificate, then MokList). `mshim install --shim` with a policy
# key approves the first boot through mshim before it happens; the expected
# PCRs are first_boot_fixture.py's from the package's files (the unsigned
# image's Authenticode digest, the MOK by openssl, the entry written out
# here by hand), never from the ESP.
R=$t/r4 ESP=$t/r4/boot/efi ST=$t/r4/var/lib/mshim
GRUBIMG=${MB_EFIROOT:-build/debian-efi}/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
SHIM_OWNER=50ab5d6046e00043abb63dd810dd8b23
new_root "$R" "root=/dev/vda2 ro"
mkdir -p "$ST" "$R/etc/mshim" && cp "$t/r1/var/lib/mshim/policy.key" "$t/r1/var/lib/mshim/policy.pub" "$ST/" ||
        fail "section 4: the policy key"
openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=mshim install test db/" -days 1 \
        -keyout "$t/db.key" -outform DER -out "$t/db.der" 2>/dev/null
python3 tests/cli/first_boot_fixture.py mok-files "$t" "$SHIMDIR/shimx64.efi.signed" "$t/c.der" ||
        fail "section 4: MokList files"
python3 tests/cli/first_boot_fixture.py make "$t/fb" --chain shim --shim "$SHIMDIR/shimx64.efi.signed" --grub "$GRUBIMG" \
        --kernel "$KDIR/vmlinuz" --mok-list "$t/moklist" --secure-boot --db "$t/db.der" || fail "section 4: fixture (MOK enrolled)"
python3 tests/cli/first_boot_fixture.py make "$t/fb0" --chain shim --shim "$SHIMDIR/shimx64.efi.signed" --grub "$GRUBIMG" \
        --kernel "$KDIR/vmlinuz" --secure-boot --db "$t/db.der" || fail "section 4: fixture (no MOK)"
MOKRT=MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23 MOKNEW=MokNew-605dab50-e046-4300-abb6-3dd810dd8b23
AP=$ESP/loader/mshim/approvals
# first_want LOG [IMAGE]: sha256 lines (PCRs 4,5,7,9,12) of the first boot
# through shim -> mshim (IMAGE, default the package's; the MOK verifies it)
# -> $V2's entry (shim's built-in certificate verifies Debian's kernel).
first_want() {
        python3 tests/cli/first_boot_fixture.py expect "$1" --loader "${2:-$LOADER}" --chain shim \
                --entry-name "$TOKEN-$V2.conf" --entry <(entry "$R" "$V2" "root=/dev/vda2 ro") \
                --kernel "$R/boot/vmlinuz-$V2" --initrd "$R/boot/initrd.img-$V2" --options "root=/dev/vda2 ro" \
                --loader-conf "$ESP/loader/loader.conf" --auth "MokListRT:$SHIM_OWNER:$t/c.der" \
                --auth "MokListRT:$SHIM_OWNER:$t/vendor.der" --select 4,5,7,9,12 |
                python3 -c 'import json, sys; v = json.load(sys.stdin)["sha256"]
print("\n".join("sha256:%d=%s" % (p, v[str(p)]) for p in (4, 5, 7, 9, 12)))'
}
v2_approval() { grep -lx "entry-id $TOKEN-$V2" "$AP"/*.approval 2>/dev/null | head -n 1; }
approval_values() { cli_approval_values "$1"; }
inst4() { "$MSHIM" install --root "$R" --shim --shim-dir "$SHIMDIR" --key "$t/k.pem" --cert "$t/c.pem" --loader "$LOADER" \
        --efibootmgr "$EFB" "$@"; }
hook_conf4() { printf '%s\n' "LOG=$t/$1/log.bin" "PCRS=$t/$1/pcrs.txt" "EFIVARS=$FAKE_EFIVARS" "${@:2}" >"$R/etc/mshim/hook.conf"; }

cp "$t/MokListRT" "$FAKE_EFIVARS/$MOKRT"
hook_conf4 fb
inst4 >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "shim + GRUB boot, policy key, MOK enrolled: install --shim exits 0" test "$rc" = 0
check "... the hook predicted the first boot through mshim from the install's files" \
        grep -q "this boot did not run mshim: predicting the first boot through mshim (shim layout" "$t/err"
A=$(v2_approval)
check "... the default entry's ($V2) first boot approved" test -n "$A"
first_want "$t/fb/log.bin" >"$t/first.want"
check "... its approval holds PCRs 4,5,7,9,12 of shim -> mshim (the package's image, the MOK) -> $V2 (hashlib, oracle.py)" \
        cmp -s <(approval_values "$A") "$t/first.want"
check "... signed by the policy key (mshim policy list: live)" \
        bash -c "'$MSHIM' policy list --state-dir '$ST' --esp '$ESP' | grep -q live"
grep -E '^sha256:(4|5|7|9|12)=' "$t/fb/pcrs.txt" | sort -t: -k2 -n >"$t/grub.pcrs"
grub_approved=
for a in "$AP"/*.approval; do
        ! grep -qx 'label current boot' "$a" && ! cmp -s <(approval_values "$a") "$t/grub.pcrs" || grub_approved="$a"
done
check "... this boot (GRUB's: its command line is in none of 4,5,7,9,12) approved by nothing (its PCRs in no approval)" \
        test -z "$grub_approved" -a -s "$t/grub.pcrs"
check "... no 'what to run next' (it is set up)" bash -c "! grep -q 'Nothing is approved yet' '$t/out'"

# --update in the shim layout, still before the first boot through mshim:
# the next boot is the first one, with the new image behind the recorded
# shim and the MokList.
"$MSHIM" install --update --root "$R" --loader "$t/new.efi" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "--update (shim layout, from shim + GRUB): exit 0" test "$rc" = 0
A=$(grep -lx "label mshim update ($TOKEN-$V2)" "$AP"/*.approval 2>/dev/null | head -n 1)
first_want "$t/fb/log.bin" "$t/new.efi" >"$t/first-new.want"
check "--update (shim layout): the first boot with the new image behind shim approved (hashlib, oracle.py)" \
        test -n "$A" -a "$(approval_values "$A" 2>/dev/null)" = "$(cat "$t/first-new.want")"
cp "$ESP/EFI/mshim/grubx64.efi" "$t/unsigned.efi" && sbattach --remove "$t/unsigned.efi" 2>/dev/null
sbv=bad; q sbverify --cert "$t/c.pem" "$ESP/EFI/mshim/grubx64.efi" && sbv=ok
check "--update (shim layout): grubx64.efi is the new image, signed with the recorded MOK (sbverify)" \
        test "$sbv" = ok -a "$(first_want "$t/fb/log.bin" "$t/unsigned.efi")" = "$(cat "$t/first-new.want")"
check "--update (shim layout): shimx64.efi untouched (Debian's)" cmp -s "$SHIMDIR/shimx64.efi.signed" "$ESP/EFI/mshim/shimx64.efi"
h=$(sha256sum "$ESP/EFI/mshim/grubx64.efi" | cut -d' ' -f1)
check "--update (shim layout): the record has the new SHA-256" grep -qx "file $h EFI/mshim/grubx64.efi" "$ST/install.record"

# --update with the policy key kept elsewhere (policy.pub alone here, as
# `policy init --public-only` leaves a machine): a request is written, the
# old mshim stays; signed where the key is and installed, --update again
# swaps and names the signed approval.
mv "$ST/policy.key" "$t/policy.key.offline"
before_img=$(sha256sum <"$ESP/EFI/mshim/grubx64.efi") before_ap=$(cd "$AP" && sha256sum *) before_rec=$(sha256sum <"$ST/install.record")
expect_rc "--update, policy key elsewhere: exit 1, a request written and named" 1 "the policy key is not on this machine" \
        "$MSHIM" install --update --root "$R" --loader "$t/new2.efi" --efibootmgr "$EFB"
REQ=$(ls "$ST"/mshim-update-*.request 2>/dev/null | head -n 1)
check "... the request is in the state directory, named on stderr" test -n "$REQ" -a -n "$(grep -F "$REQ" "$CLI_TMP/err")"
check "... the ESP's mshim, the approvals and the record unchanged" \
        test "$(sha256sum <"$ESP/EFI/mshim/grubx64.efi")" = "$before_img" -a "$(cd "$AP" && sha256sum *)" = "$before_ap" \
        -a "$(sha256sum <"$ST/install.record")" = "$before_rec"
check "policy sign (the key elsewhere) and approve --signature (here): exit 0" \
        bash -c "'$MSHIM' policy sign --key '$t/policy.key.offline' '$REQ' -o '$t/req.sig' >/dev/null 2>&1 &&
                 '$MSHIM' policy approve --state-dir '$ST' --esp '$ESP' --signature '$t/req.sig' '$REQ' >/dev/null 2>&1"
"$MSHIM" install --update --root "$R" --loader "$t/new2.efi" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "--update again once the signature is installed: exit 0, the signed request named" \
        bash -c "[ $rc = 0 ] && grep -q 'approved already (the signed request)' '$t/err'"
cp "$ESP/EFI/mshim/grubx64.efi" "$t/unsigned.efi" && sbattach --remove "$t/unsigned.efi" 2>/dev/null
first_want "$t/fb/log.bin" "$t/new2.efi" >"$t/first-new2.want"
check "... the ESP holds the new image (its first boot's PCRs by the oracle equal the signed approval's)" \
        test "$(first_want "$t/fb/log.bin" "$t/unsigned.efi")" = "$(cat "$t/first-new2.want")" -a \
        -n "$(for a in "$AP"/*.approval; do [ "$(approval_values "$a")" = "$(cat "$t/first-new2.want")" ] && echo "$a"; done)"
mv "$t/policy.key.offline" "$ST/policy.key"
n_ap=$(ls "$AP" | wc -l)
"$MSHIM" uninstall --root "$R" --efibootmgr "$EFB" >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "uninstall: exit 0, loader/ kept for the policy's approvals (said)" \
        bash -c "[ $rc = 0 ] && grep -q 'the policy.s approvals' '$t/out'"
check "... the approvals stay, all $n_ap (the ones the install's hook wrote too: removing a file does not end an approval)" \
        test "$(ls "$AP" | wc -l)" = "$n_ap" -a "$n_ap" -ge 3
check "... and nothing else of the install is left on the ESP" \
        test "$(cd "$ESP" && find . -path ./loader/mshim -prune -o -print | LC_ALL=C sort | tr '\n' ' ')" = ". ./loader "
rm -r "$ESP/loader"

# The MOK not enrolled yet, STRICT=yes: the first boot cannot be approved
# (shim would refuse mshim): the install fails and takes back what it wrote.
cp "$t/MokListRT-empty" "$FAKE_EFIVARS/$MOKRT"
hook_conf4 fb0 STRICT=yes
esp_before=$(treesum "$ESP")
expect_rc "MOK not enrolled, STRICT=yes: install fails (shim would refuse mshim), takes back what it wrote" 1 \
        "install failed; what it had written is removed" inst4
check "... the ESP as before, no record" test "$(treesum "$ESP")" = "$esp_before" -a ! -e "$ST/install.record"
# Not strict (the default): installed, nothing approved, why and what to run said.
hook_conf4 fb0
expect_rc "MOK not enrolled, not strict: install exits 0, approves nothing, says why and what to run" 0 \
        "shim would refuse mshim" inst4
check "... nothing approved; the rerun named" bash -c "[ -z \"\$(ls -A '$AP' 2>/dev/null)\" ] && grep -q 'zz-mshim' '$CLI_TMP/err'"
check "uninstall: exit 0" q "$MSHIM" uninstall --root "$R" --efibootmgr "$EFB"
# --enroll-mok: mokutil --import queues the MOK (MokNew, a fake mokutil
# writing what the real one writes); the first boot is predicted with it
# enrolled, as MokManager will have enrolled it.
printf '%s\n' '#!/bin/sh' "echo \"\$*\" >>'$t/mokutil.log'" 'case $1 in' \
        "--import) cp '$t/MokNew' '$FAKE_EFIVARS/$MOKNEW' ;;" "--revoke-import) rm -f '$FAKE_EFIVARS/$MOKNEW' ;;" \
        'esac' >"$t/mokutil"
chmod +x "$t/mokutil"; : >"$t/mokutil.log"
hook_conf4 fb0 STRICT=yes
MSHIM_MOKUTIL=$t/mokutil inst4 --enroll-mok >"$t/out" 2>"$t/err"; rc=$?
[ "$rc" = 0 ] || cat "$t/out" "$t/err" >&2
check "--enroll-mok, STRICT=yes: install exits 0 (the MOK queued before the hook ran)" test "$rc" = 0
A=$(v2_approval)
first_want "$t/fb0/log.bin" >"$t/first0.want"
check "... the first boot after MokManager enrols it approved (hashlib, oracle.py)" \
        test -n "$A" -a "$(approval_values "$A" 2>/dev/null)" = "$(cat "$t/first0.want")"
check "uninstall: exit 0" q "$MSHIM" uninstall --root "$R" --efibootmgr "$EFB"
rm -rf "$ESP/loader" "$FAKE_EFIVARS/$MOKNEW"
# --enroll-mok, and the install fails after mokutil ran: the MOK request is
# taken back (mokutil --revoke-import), so MokManager enrols nothing.
sed -i "s|cp '$t/MokNew'|cp '$t/MokListRT-empty'|" "$t/mokutil"    # queues a list without the MOK
: >"$t/mokutil.log"
MSHIM_MOKUTIL=$t/mokutil expect_rc "--enroll-mok, STRICT=yes, the first boot still refused: install fails" 1 \
        "install failed" inst4 --enroll-mok
check "... mokutil --import, then --revoke-import" \
        test "$(cut -d' ' -f1 "$t/mokutil.log" | tr '\n' ' ')" = "--import --revoke-import "
check "... no MOK request left, the ESP as before" test ! -e "$FAKE_EFIVARS/$MOKNEW" -a "$(treesum "$ESP")" = "$esp_before"

exit "$CLI_FAILED"
