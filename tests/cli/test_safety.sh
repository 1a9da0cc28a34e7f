#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# How mshim writes files (docs/FILES.md, issue 13): no output over an input,
# edits through symlinks reach the target and keep owner, group and mode,
# new files get their documented mode, writes are atomic and synced, no
# temporary file survives a failure or a fatal signal while sbsign runs,
# inputs past their size limit cost no memory, a single-valued option given
# twice is an error, and the MOK password is asked twice without echo.
# Expectations come from stat(1), cmp, sbverify, strace and Python's
# hashlib, never from mshim itself.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
# The memory test runs the unsanitized build under an address-space limit
# (ASan reserves terabytes of address space up front).
MSHIM_REL=${MSHIM_REL:-build/mshim}
OVMF=${MB_OVMF_DIR:-/usr/share/OVMF}
VARS=$OVMF/OVMF_VARS_4M.fd
MS=$OVMF/OVMF_VARS_4M.ms.fd
FB=${MB_EFIROOT:-build/debian-efi}/usr/lib/shim/fbx64.efi
t=$(mktemp -d)
cli_init safety "$t"

# no_temp DIR: no temporary file of mshim's (.mshim-*) nor of older
# versions (NAME.XXXXXX, NAME.mshim-XXXXXX) in DIR.
no_temp() { [ -z "$(find "$1" -maxdepth 1 \( -name '.mshim-*' -o -name '*.mshim-*' -o -name '*.fd.??????' \))" ]; }
meta() { stat -c '%a %u:%g %F' "$1"; }

for f in "$MSHIM" "$MSHIM_REL"; do [ -x "$f" ] || { fail "prerequisite $f (make $f)"; exit 1; }; done
for f in "$VARS" "$MS" "$FB"; do [ -f "$f" ] || { fail "prerequisite $f (make deps)"; exit 1; }; done
for n in pk kek db mok sign; do
        openssl req -new -x509 -newkey rsa:2048 -nodes -subj "/CN=safety-$n/" -days 3650 \
                -keyout "$t/$n.key" -out "$t/$n.pem" 2>/dev/null || { fail "openssl req"; exit 1; }
done
ENROLL=(--pk "$t/pk.pem" --kek "$t/kek.pem" --db "$t/db.pem")

# ---- no output over an input ------------------------------------------------
# Victims are copies in $t/in, compared with the originals afterwards, so
# that a failure here does not spoil the later tests' keys.
mkdir "$t/in"; cp "$t"/*.pem "$t/sign.key" "$t/in/"; cp "$MS" "$t/in/store.fd"; cp "$VARS" "$t/in/other.fd"
refuses "vars get -o STORE (the store read)" "refusing to write .*store.fd: it is the variable store" \
        "$MSHIM" vars get "$t/in/store.fd" PK -o "$t/in/store.fd"
ln -s store.fd "$t/in/store-link.fd"
refuses "vars get -o a symlink to the store read" "it is the variable store" \
        "$MSHIM" vars get "$t/in/store.fd" PK -o "$t/in/store-link.fd"
refuses "vars get -o another variable store" "other.fd, a variable store" \
        "$MSHIM" vars get "$MS" PK -o "$t/in/other.fd"
check "vars get left both stores alone" sh -c "cmp -s '$t/in/store.fd' '$MS' && cmp -s '$t/in/other.fd' '$VARS'"
check "vars --help says get's DATA is never a store" sh -c "'$MSHIM' vars --help | grep -q 'DATA is never FILE or another variable store'"

IN=(--pk "$t/in/pk.pem" --kek "$t/in/kek.pem" --db "$t/in/db.pem")
refuses "vars enroll --pk P -o P" "it is the --pk certificate" "$MSHIM" vars enroll "$MS" "${IN[@]}" -o "$t/in/pk.pem"
ln "$t/in/db.pem" "$t/in/db-hardlink.pem"
refuses "vars enroll -o a hard link of a --db certificate" "it is a --db certificate" \
        "$MSHIM" vars enroll "$MS" "${IN[@]}" -o "$t/in/db-hardlink.pem"
refuses "vars add-mok --cert M -o M" "it is the --cert certificate" \
        "$MSHIM" vars add-mok "$MS" --cert "$t/in/mok.pem" -o "$t/in/mok.pem"
printf 'pw\n' > "$t/pw.txt"; cp "$t/pw.txt" "$t/in/pw.txt"
refuses "vars mok-import -o the --password-file" "it is the --password-file" \
        "$MSHIM" vars mok-import "$MS" --cert "$t/mok.pem" --password-file "$t/in/pw.txt" -o "$t/in/pw.txt"
cp "$FB" "$t/img.efi"
SIGN=(--key "$t/sign.key" --cert "$t/sign.pem")
INSIGN=(--key "$t/in/sign.key" --cert "$t/in/sign.pem")
refuses "sign -o KEY" "it is the key" "$MSHIM" sign "${INSIGN[@]}" -o "$t/in/sign.key" "$t/img.efi"
refuses "sign -o CERT" "it is the certificate" "$MSHIM" sign "${INSIGN[@]}" -o "$t/in/sign.pem" "$t/img.efi"
ln "$t/in/sign.key" "$t/in/key-hardlink"; ln -s sign.pem "$t/in/cert-symlink"
refuses "sign -o a hard link of the key" "it is the key" "$MSHIM" sign "${INSIGN[@]}" -o "$t/in/key-hardlink" "$t/img.efi"
refuses "sign -o a symlink to the certificate" "it is the certificate" \
        "$MSHIM" sign "${INSIGN[@]}" -o "$t/in/cert-symlink" "$t/img.efi"
for f in pk.pem db.pem mok.pem sign.key sign.pem pw.txt; do
        check "$f untouched" cmp -s "$t/in/$f" "$t/$f"
done

# ---- symlinks, owner, group, mode ---------------------------------------------
# libvirt's nvram: a store owned by its qemu user and group, 0660, reached
# through a symlink. The edit must land in the target and keep all three.
cp "$VARS" "$t/nvram.fd"; chmod 0660 "$t/nvram.fd"
owner=""
if [ "$(id -u)" = 0 ]; then chown 4242:4243 "$t/nvram.fd"; owner=4242:4243; fi
ln -s nvram.fd "$t/vm.fd"
"$MSHIM" vars enroll "$t/vm.fd" "${ENROLL[@]}" -o "$t/vm.fd" 2>"$t/err"
check "enroll through a symlink exits 0" test $? = 0
check "the symlink is still a symlink to the store" test "$(readlink "$t/vm.fd")" = nvram.fd
check "the symlink's target was edited" sh -c "'$MSHIM' vars list '$t/nvram.fd' | grep -q safety-db"
check "the edited store kept mode 0660 ${owner:+and owner $owner}" \
        test "$(meta "$t/nvram.fd")" = "660 ${owner:-$(id -u):$(id -g)} regular file"
cp "$VARS" "$t/qemu.fd"; chmod 0640 "$t/qemu.fd"; [ -n "$owner" ] && chown "$owner" "$t/qemu.fd"
"$MSHIM" vars add-mok "$t/qemu.fd" --cert "$t/mok.pem" -o "$t/qemu.fd" 2>"$t/err"
check "an in-place edit keeps mode 0640 ${owner:+and owner $owner}" sh -c "
        [ \"\$(stat -c '%a %u:%g' '$t/qemu.fd')\" = '640 ${owner:-$(id -u):$(id -g)}' ] &&
        '$MSHIM' vars list '$t/qemu.fd' | grep -q safety-mok"
# Debian's /vmlinuz -> boot/vmlinuz-VERSION, 0644, signed in place.
mkdir "$t/boot"; cp "$FB" "$t/boot/vmlinuz-6.1"; chmod 0644 "$t/boot/vmlinuz-6.1"
ln -s boot/vmlinuz-6.1 "$t/vmlinuz"
"$MSHIM" sign "${SIGN[@]}" --in-place "$t/vmlinuz" >/dev/null 2>"$t/err"
check "sign --in-place through a symlink exits 0" test $? = 0
check "/vmlinuz stays a symlink" test "$(readlink "$t/vmlinuz")" = boot/vmlinuz-6.1
check "the kernel it points to is signed (sbverify)" sbverify --cert "$t/sign.pem" "$t/boot/vmlinuz-6.1" >/dev/null 2>&1
check "the kernel signed in place stays 0644" test "$(stat -c %a "$t/boot/vmlinuz-6.1")" = 644
cp "$FB" "$t/vmlinuz-direct"; chmod 0644 "$t/vmlinuz-direct"
"$MSHIM" sign "${SIGN[@]}" --in-place "$t/vmlinuz-direct" >/dev/null 2>"$t/err"
check "a 0644 kernel signed in place stays 0644 and is signed" sh -c "
        [ \$(stat -c %a '$t/vmlinuz-direct') = 644 ] && sbverify --cert '$t/sign.pem' '$t/vmlinuz-direct' >/dev/null 2>&1"
check "no temporary file in either directory" sh -c "no_temp() { [ -z \"\$(find \"\$1\" -maxdepth 1 -name '*mshim-*')\" ]; }; no_temp '$t' && no_temp '$t/boot'"

# As another user (nobody): a store owned by someone else cannot keep its
# owner, and a read-only one is not replaced; both stay as they were.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
        chmod 0711 "$t"; mkdir -m 0777 "$t/shared"
        cp "$VARS" "$t/shared/theirs.fd"; chown 4242:4243 "$t/shared/theirs.fd"; chmod 0666 "$t/shared/theirs.fd"
        cp "$VARS" "$t/shared/ro.fd"; chown 65534:65534 "$t/shared/ro.fd"; chmod 0444 "$t/shared/ro.fd"
        cp "$t/mok.pem" "$t/shared/mok.pem"; chmod 0644 "$t/shared/mok.pem"
        as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
        refuses "another user's store: its owner cannot be kept, nothing written" "keeping its owner and group" \
                as_nobody "$MSHIM" vars add-mok "$t/shared/theirs.fd" --cert "$t/shared/mok.pem" -o "$t/shared/theirs.fd"
        refuses "a read-only store is not replaced" "refusing to replace .*ro.fd: Permission denied" \
                as_nobody "$MSHIM" vars add-mok "$t/shared/ro.fd" --cert "$t/shared/mok.pem" -o "$t/shared/ro.fd"
        check "both stores unchanged, same owners, no temporary file" sh -c "
                cmp -s '$t/shared/theirs.fd' '$VARS' && cmp -s '$t/shared/ro.fd' '$VARS' &&
                [ \"\$(stat -c '%u %a' '$t/shared/theirs.fd' '$t/shared/ro.fd' | tr '\n' ' ')\" = '4242 666 65534 444 ' ]" &&
                no_temp "$t/shared"
        chmod 0700 "$t"
else
        echo "SKIP: safety: ownership as another user (needs root and setpriv)"
fi

# New files: 0644 (0666 less the umask) for images, 0600 for stores and
# variable data, which may hold a MOK password hash.
for um in 022 077 002; do
        img=$(printf '%o' $(( 0666 & ~8#$um ))); sec=$(printf '%o' $(( 0600 & ~8#$um )))
        rm -f "$t/new.efi" "$t/new.fd" "$t/new.bin"
        (umask "$um"
         "$MSHIM" sign "${SIGN[@]}" -o "$t/new.efi" "$t/img.efi" >/dev/null &&
         "$MSHIM" vars enroll "$VARS" "${ENROLL[@]}" -o "$t/new.fd" &&
         "$MSHIM" vars get "$MS" PK -o "$t/new.bin") 2>"$t/err"
        check "umask $um: new image $img, new store and data $sec" \
                test "$(stat -c %a "$t/new.efi" "$t/new.fd" "$t/new.bin" | tr '\n' ' ')" = "$img $sec $sec "
done

ln -s nowhere.fd "$t/dangling.fd"
refuses "no write through a dangling symlink" "dangling symlink .*dangling.fd" \
        "$MSHIM" vars enroll "$VARS" "${ENROLL[@]}" -o "$t/dangling.fd"
check "the dangling symlink's target was not created" test ! -e "$t/nowhere.fd" -a -L "$t/dangling.fd"
mkfifo "$t/fifo"
refuses "no output over a FIFO" "fifo: not a regular file" timeout 20 "$MSHIM" vars get "$MS" PK -o "$t/fifo"
check "the FIFO is still a FIFO" test -p "$t/fifo"
cp "$VARS" "$t/linked.fd"; ln "$t/linked.fd" "$t/linked2.fd"
refuses "no in-place edit of a file with two hard links" "2 hard links" \
        "$MSHIM" vars enroll "$t/linked.fd" "${ENROLL[@]}" -o "$t/linked.fd"
check "both hard links unchanged and still one file" sh -c "
        cmp -s '$t/linked.fd' '$VARS' && [ \$(stat -c %i '$t/linked.fd') = \$(stat -c %i '$t/linked2.fd') ]"

# ---- atomic and durable --------------------------------------------------------
# strace: the data is fsync()ed before the rename over the target, and
# after it the file again under its new name, then the directory (on FAT a
# renamed file's directory entry gets its size only when the file is
# written back: tests/integration/test_bless.sh).
# sync_order FILE: the traced calls in order, reduced to F (fsync of a
# file), R (rename), D (fsync of a directory, opened O_DIRECTORY).
sync_order() {
        python3 - "$1" <<'EOF'
import re, sys
dirs, out = set(), ""
for line in open(sys.argv[1]):
    m = re.search(r'open(?:at)?\(.*O_DIRECTORY.*\)\s*=\s*(\d+)', line)
    if m:
        dirs.add(m.group(1)); continue
    m = re.search(r'\bf(?:data)?sync\((\d+)', line)
    if m:
        out += "D" if m.group(1) in dirs else "F"
    elif re.search(r'\brename(?:at2?)?\(', line):
        out += "R"
print(out)
EOF
}
if command -v strace >/dev/null; then
        cp "$VARS" "$t/trace.fd"
        strace -f -o "$t/trace" -e trace=open,openat,fsync,fdatasync,rename,renameat,renameat2 \
                "$MSHIM" vars enroll "$t/trace.fd" "${ENROLL[@]}" -o "$t/trace.fd" 2>/dev/null
        check "vars: fsync, rename, fsync of the renamed file, of the directory (strace: $(sync_order "$t/trace"))" \
                test "$(sync_order "$t/trace")" = FRFD
        strace -f -o "$t/trace" -e trace=open,openat,fsync,fdatasync,rename,renameat,renameat2 \
                "$MSHIM" sign "${SIGN[@]}" -o "$t/trace.efi" "$t/img.efi" >/dev/null 2>&1
        check "sign: fsync, rename, fsync of the renamed file, of the directory (strace: $(sync_order "$t/trace"))" \
                test "$(sync_order "$t/trace")" = FRFD
else
        fail "strace not installed: run make deps"
fi

# A slow fake sbsign on PATH: it writes part of its output, records its pid
# and the output path it was given, then sleeps (exec: the pid stays) or
# fails with a message naming that path.
mkdir "$t/bin" "$t/fake"
cat > "$t/bin/sbsign" <<'EOF'
#!/bin/sh
out=$6
printf '%s\n' "$out" > "$FAKE_DIR/outarg"
printf 'partial' > "$out"
echo $$ > "$FAKE_DIR/pid.tmp" && mv "$FAKE_DIR/pid.tmp" "$FAKE_DIR/pid"
case $FAKE_MODE in
fail) echo "cannot write $out" >&2; exit 1 ;;
garbage) exit 0 ;;
esac
exec sleep 60
EOF
chmod +x "$t/bin/sbsign"
cp "$FB" "$t/fake/img.efi"; printf 'old output\n' > "$t/fake/out.efi"
export FAKE_DIR=$t/fake
# interrupt SIGNAL: run sign with the slow sbsign, send SIGNAL to mshim
# alone once sbsign runs; print what happened as KEY=VALUE lines.
interrupt() {
        PATH=$t/bin:$PATH FAKE_MODE=slow python3 - "$1" "$MSHIM" "$t" <<'EOF'
import os, signal, subprocess, sys, time
sig, mshim, t = getattr(signal, sys.argv[1]), sys.argv[2], sys.argv[3]
d = t + "/fake"
# As from a terminal: a suite started in the background (nohup, &) has
# SIGINT and SIGHUP ignored, and an ignored signal stays ignored across exec.
def default_signals():
    for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)
for f in ("pid", "outarg"):
    if os.path.exists(d + "/" + f):
        os.unlink(d + "/" + f)
p = subprocess.Popen([mshim, "sign", "--key", t + "/sign.key", "--cert", t + "/sign.pem",
                      "-o", d + "/out.efi", d + "/img.efi"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, preexec_fn=default_signals)
deadline = time.time() + 20
while not os.path.exists(d + "/pid") and time.time() < deadline:
    time.sleep(0.05)
child = int(open(d + "/pid").read())
os.kill(p.pid, sig)
try:
    p.wait(timeout=15)
except subprocess.TimeoutExpired:
    p.kill()
time.sleep(0.2)
try:
    os.kill(child, 0)
    alive = "yes"
except ProcessLookupError:
    alive = "no"
finally:
    try:
        os.kill(child, signal.SIGKILL)
    except ProcessLookupError:
        pass
print("status=%s" % p.returncode)
print("child_alive=%s" % alive)
print("outdir=%s" % os.path.dirname(open(d + "/outarg").read().strip()))
print("stderr=%s" % p.stderr.read().decode(errors="replace").replace("\n", " "))
EOF
}
for s in SIGTERM SIGINT SIGHUP; do
        r=$(interrupt "$s")
        n=-$(kill -l "$s")
        check "$s while sbsign runs: mshim dies of $s" grep -q "^status=$n\$" <<<"$r"
        check "$s while sbsign runs: sbsign is stopped" grep -q '^child_alive=no$' <<<"$r"
        check "$s while sbsign runs: no temporary file survives" no_temp "$t/fake"
        check "$s while sbsign runs: the old output is untouched" test "$(cat "$t/fake/out.efi")" = "old output"
done
check "sbsign writes into the output's directory" grep -q "^outdir=$t/fake\$" <<<"$r"
PATH=$t/bin:$PATH FAKE_MODE=fail "$MSHIM" sign "${SIGN[@]}" -o "$t/fake/out.efi" "$t/fake/img.efi" >/dev/null 2>"$t/err"
check "a failing sbsign: exit 2" test $? = 2
check "a failing sbsign: its message names OUT, as an mshim message" \
        grep -q "^mshim: sbsign: cannot write $t/fake/out.efi\$" "$t/err"
check "a failing sbsign: no temporary file, old output kept" sh -c "
        ! grep -q mshim- '$t/err' && [ \"\$(cat '$t/fake/out.efi')\" = 'old output' ]" && no_temp "$t/fake"
PATH=$t/bin:$PATH FAKE_MODE=garbage "$MSHIM" sign "${SIGN[@]}" -o "$t/fake/out.efi" "$t/fake/img.efi" >/dev/null 2>"$t/err"
check "a bad signed result: exit 1, the message names OUT, not the temporary file" sh -c "
        [ $? = 1 ] && grep -q '^mshim: $t/fake/out.efi: signed output has no readable certificate table' '$t/err' &&
        ! grep -q mshim- '$t/err'"
check "a bad signed result: no temporary file" no_temp "$t/fake"
mkdir "$t/nobin"
PATH=$t/nobin "$MSHIM" sign "${SIGN[@]}" -o "$t/fake/out.efi" "$t/fake/img.efi" >/dev/null 2>"$t/err"
check "no sbsign on PATH: exit 2, says which package, no temporary file" sh -c "
        [ $? = 2 ] && grep -q '^mshim: sign needs sbsign (install the Debian package sbsigntool)' '$t/err'" &&
        no_temp "$t/fake"

# ---- memory: inputs past their size limit are refused before being read --------
truncate -s 4G "$t/huge.fd"
# limited NAME REGEX CMD...: exit 2 with REGEX, under a 1 GiB address space,
# with a peak RSS under 48 MiB and in under 10 s.
limited() {
        local n=$1 re=$2 r; shift 2
        r=$(python3 - "$@" <<'EOF'
import os, resource, subprocess, sys, time
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
start = time.time()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, preexec_fn=limit)
err = p.stderr.read().decode(errors="replace")
_, status, ru = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(status), ru.ru_maxrss // 1024, int(time.time() - start),
      err.replace("\n", " "))
EOF
)
        read -r rc rss secs msg <<<"$r"
        if [ "$rc" = 2 ] && [ "$rss" -lt 48 ] && [ "$secs" -lt 10 ] && grep -q -E "^mshim: .*$re" <<<"$msg"; then
                pass "$n (peak RSS $rss MiB)"
        else
                fail "$n (status $rc, peak RSS $rss MiB, $secs s: $msg)"
        fi
}
limited "vars list on a 4 GiB file" "huge.fd: more than 64 MiB; not an OVMF variable store" \
        "$MSHIM_REL" vars list "$t/huge.fd"
limited "vars enroll of a 4 GiB file" "more than 64 MiB" \
        "$MSHIM_REL" vars enroll "$t/huge.fd" "${ENROLL[@]}" -o "$t/x.fd"
limited "a 4 GiB certificate" "huge.fd: more than 1 MiB; not a certificate" \
        "$MSHIM_REL" vars add-mok "$VARS" --cert "$t/huge.fd" -o "$t/x.fd"
limited "sign with a 4 GiB key" "huge.fd: more than 1 MiB; not a private key" \
        "$MSHIM_REL" sign --key "$t/huge.fd" --cert "$t/sign.pem" -o "$t/x.efi" "$t/img.efi"
check "vars: an endless stream is read no further than the store limit" sh -c "
        '$MSHIM' vars list /dev/zero 2>&1 | grep -q '^mshim: /dev/zero: more than 64 MiB; not an OVMF variable store'"
check "nothing written" test ! -e "$t/x.fd" -a ! -e "$t/x.efi"

# ---- a single-valued option given twice ------------------------------------------
refuses "--pk twice" "--pk given twice \('$t/pk.pem' and '$t/kek.pem'\)" \
        "$MSHIM" vars enroll "$VARS" "${ENROLL[@]}" --pk "$t/kek.pem" -o "$t/x.fd"
refuses "vars --cert twice" "--cert given twice" "$MSHIM" vars add-mok "$VARS" --cert "$t/mok.pem" --cert "$t/db.pem" -o "$t/x.fd"
refuses "vars -o twice" "-o/--output given twice" "$MSHIM" vars add-mok "$VARS" --cert "$t/mok.pem" -o "$t/x.fd" --output "$t/y.fd"
refuses "vars --guid twice" "--guid given twice" "$MSHIM" vars get "$MS" PK --guid global --guid security
refuses "vars --owner twice" "--owner given twice" "$MSHIM" vars enroll "$VARS" "${ENROLL[@]}" --owner shim --owner global -o "$t/x.fd"
refuses "vars --password twice" "--password given twice" \
        "$MSHIM" vars mok-import "$VARS" --cert "$t/mok.pem" --password a --password b -o "$t/x.fd"
refuses "sign --cert twice" "--cert given twice" "$MSHIM" sign "${SIGN[@]}" --cert "$t/db.pem" "$t/img.efi"
refuses "sign --key twice" "--key given twice" "$MSHIM" sign "${SIGN[@]}" --key "$t/db.key" "$t/img.efi"
refuses "sign -o twice" "-o/--output given twice" "$MSHIM" sign "${SIGN[@]}" -o "$t/a.efi" -o "$t/b.efi" "$t/img.efi"
refuses "pe-hash --alg twice" "--alg given twice" "$MSHIM" pe-hash --alg sha1 --alg sha256 "$t/img.efi"
refuses "sbat --policy twice" "--policy given twice" "$MSHIM" sbat --policy "$t/pw.txt" --policy "$t/pw.txt" "$t/img.efi"
refuses "log --pcrs twice" "--pcrs given twice" "$MSHIM" log --pcrs "$t/pw.txt" --pcrs "$t/pw.txt" "$t/pw.txt"
check "nothing written" test ! -e "$t/x.fd" -a ! -e "$t/y.fd" -a ! -e "$t/a.efi" -a ! -e "$t/b.efi"
"$MSHIM" vars enroll "$VARS" "${ENROLL[@]}" --db "$t/mok.pem" --kek "$t/db.pem" -o "$t/rep.fd" 2>"$t/err"
check "--db and --kek stay repeatable" sh -c "
        '$MSHIM' vars list '$t/rep.fd' | grep -q '(2 signature lists, 2 entries)' && [ \$('$MSHIM' vars list '$t/rep.fd' | grep -c '(2 signature lists, 2 entries)') = 2 ]"

# ---- the MOK password -------------------------------------------------------------
# mokauth_is STORE PASSWORD: MokAuth = SHA-256(MokNew || UTF-16LE password).
mokauth_is() {
        "$MSHIM" vars get "$1" MokNew -o "$t/new.bin" && "$MSHIM" vars get "$1" MokAuth -o "$t/auth.bin" &&
        python3 - "$t/new.bin" "$t/auth.bin" "$2" <<'EOF'
import hashlib, sys
new, auth = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
sys.exit(auth != hashlib.sha256(new + sys.argv[3].encode("utf-16-le")).digest())
EOF
}
printf 'file pw\nsecond line\n' > "$t/pw1"; printf 'crlf pw\r\n' > "$t/pw2"; printf 'no newline' > "$t/pw3"
for i in 1 2 3; do
        rm -f "$t/imp.fd"
        "$MSHIM" vars mok-import "$VARS" --cert "$t/mok.pem" --password-file "$t/pw$i" -o "$t/imp.fd" </dev/null
        want=$(python3 -c "import sys; print(open(sys.argv[1], 'rb').read().splitlines()[0].decode())" "$t/pw$i")
        check "--password-file: the first line without its line end ('$want')" mokauth_is "$t/imp.fd" "$want"
done
refuses "--password and --password-file together" "not both" \
        "$MSHIM" vars mok-import "$VARS" --cert "$t/mok.pem" --password x --password-file "$t/pw1" -o "$t/x.fd"
# tty_import PW1 PW2 OUT: mok-import on a pseudo-terminal, typing PW1 at the
# first prompt and PW2 at the second; prints the exit status and whether
# either password was echoed.
tty_import() {
        python3 - "$MSHIM" "$VARS" "$t/mok.pem" "$@" <<'EOF'
import os, pty, select, subprocess, sys, time
mshim, vars_, cert, pw1, pw2, out = sys.argv[1:]
master, slave = pty.openpty()
p = subprocess.Popen([mshim, "vars", "mok-import", vars_, "--cert", cert, "-o", out],
                     stdin=slave, stdout=slave, stderr=slave, close_fds=True)
os.close(slave)
seen = b""
def until(text, timeout=10):
    global seen
    end = time.time() + timeout
    while text not in seen and time.time() < end:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    return text in seen
prompts = 0
if until(b"password: "):
    prompts += 1
    os.write(master, pw1.encode() + b"\n")
    if until(b"again: "):
        prompts += 1
        os.write(master, pw2.encode() + b"\n")
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "hung"
until(b"\0", 0.3)
echoed = pw1.encode() in seen or pw2.encode() in seen
print("prompts=%d status=%s echoed=%s" % (prompts, rc, "yes" if echoed else "no"))
print(seen.decode(errors="replace").replace("\r", "").replace("\n", " "))
EOF
}
r=$(tty_import 'tty pass' 'tty pass' "$t/tty.fd")
check "terminal: asked twice, not echoed, exit 0 ($(head -1 <<<"$r"))" grep -q '^prompts=2 status=0 echoed=no$' <<<"$r"
check "terminal: MokAuth from the typed password" mokauth_is "$t/tty.fd" 'tty pass'
r=$(tty_import 'one pass' 'other pass' "$t/tty2.fd")
check "terminal: different passwords: exit 2, nothing written ($(head -1 <<<"$r"))" bash -c "
        grep -q '^prompts=2 status=2 echoed=no$' <<<\"\$1\" && grep -q 'mshim: the passwords do not match' <<<\"\$1\" &&
        [ ! -e '$t/tty2.fd' ]" _ "$r"
# The prompts go to the terminal, not to standard error: with standard
# error redirected to a file, the user still sees what is asked.
check "terminal: prompts on the terminal, not on standard error" python3 - "$MSHIM" "$VARS" "$t/mok.pem" "$t/tty4.fd" "$t/stderr4" <<'EOF'
import os, pty, select, subprocess, sys, time
master, slave = pty.openpty()
with open(sys.argv[5], "wb") as err:
    p = subprocess.Popen([sys.argv[1], "vars", "mok-import", sys.argv[2], "--cert", sys.argv[3], "-o", sys.argv[4]],
                         stdin=slave, stdout=slave, stderr=err)
os.close(slave)
seen, end, typed = b"", time.time() + 10, 0
while time.time() < end and p.poll() is None:
    if select.select([master], [], [], 0.1)[0]:
        try:
            seen += os.read(master, 4096)
        except OSError:
            break
    if seen.count(b": ") > typed:
        typed += 1
        os.write(master, b"tty pass\n")
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "hung"
err = open(sys.argv[5], "rb").read()
sys.exit(not (rc == 0 and b"MOK password: " in seen and b"MOK password again: " in seen and b"password" not in err))
EOF
check "terminal: the terminal's echo is back afterwards" python3 - "$MSHIM" "$VARS" "$t/mok.pem" "$t/tty3.fd" <<'EOF'
# SIGTERM at the prompt: mshim must die of it and leave echo on.
import os, pty, select, signal, subprocess, sys, termios, time
master, slave = pty.openpty()
p = subprocess.Popen([sys.argv[1], "vars", "mok-import", sys.argv[2], "--cert", sys.argv[3], "-o", sys.argv[4]],
                     stdin=slave, stdout=slave, stderr=slave)
seen, end = b"", time.time() + 10
while b"password: " not in seen and time.time() < end:
    if select.select([master], [], [], 0.1)[0]:
        seen += os.read(master, 4096)
p.send_signal(signal.SIGTERM)
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "hung"
sys.exit(not (rc == -signal.SIGTERM and termios.tcgetattr(slave)[3] & termios.ECHO and not os.path.exists(sys.argv[4])))
EOF

check "no temporary file anywhere" no_temp "$t"
exit "$CLI_FAILED"
