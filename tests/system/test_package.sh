#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The Debian package (debian/, issue 23): dpkg-buildpackage -b builds it from
# a copy of this tree, lintian finds no error, and the package holds what a
# user needs where Debian looks for it (the table below, written from
# Debian policy and the tools' own search paths, not from `make install`).
set -u
cd "$(dirname "$0")/../.." || exit 1
pass() { echo "PASS: package: $1"; }
fail() { echo "FAIL: package: $1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@" >&2; }
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }

for p in dpkg-buildpackage dh lintian; do
        command -v "$p" >/dev/null || { fail "no $p (make check-system installs debhelper and lintian)"; exit 1; }
done
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
# The tree as committed plus what is not ignored: a fresh clone's files.
mkdir "$t/mshim"
git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$t/mshim" || { fail "copy the tree"; exit 1; }
if (cd "$t/mshim" && dpkg-buildpackage -b -us -uc) > "$t/build.log" 2>&1; then
        pass "dpkg-buildpackage -b builds it"
else
        fail "dpkg-buildpackage -b builds it" "$(tail -n 20 "$t/build.log")"; exit 1
fi
ver=$(cd "$t/mshim" && dpkg-parsechangelog -S Version)
deb=$t/mshim_${ver}_amd64.deb
check "the package is mshim_${ver}_amd64.deb" test -f "$deb"

lintian --tag-display-limit 0 "$deb" > "$t/lintian.log" 2>&1
errs=$(grep '^E: ' "$t/lintian.log")
if [ -z "$errs" ]; then pass "lintian: no error"; else fail "lintian: no error" "$errs"; fi
grep '^W: ' "$t/lintian.log" | sed 's/^/  lintian /' >&2

# What must be where: the command, the unsigned loader, the hooks where
# kernel packages (/etc/kernel/postinst.d), initramfs-tools, kernel-install
# and systemd look for them, the keyscript, the manual and the completion.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' > "$t/files"
for f in /usr/bin/mshim /usr/lib/mshim/mshimx64.efi /usr/lib/mshim/kernel-hook \
         /usr/lib/mshim/cryptroot-unseal /etc/kernel/postinst.d/zz-mshim /etc/kernel/postrm.d/zz-mshim \
         /etc/initramfs/post-update.d/mshim /usr/share/initramfs-tools/hooks/mshim \
         /usr/lib/kernel/install.d/90-mshim.install /usr/lib/systemd/system/mshim-prune.service \
         /usr/lib/systemd/system/mshim-bless.service \
         /etc/mshim/hook.conf /usr/share/man/man1/mshim.1.gz /usr/share/man/man5/mshim-loader.conf.5.gz \
         /usr/share/bash-completion/completions/mshim /usr/share/doc/mshim/copyright; do
        check "ships $f" grep -qx "$f" "$t/files"
done
# Every page of man/ is shipped.
for src in man/*.txt; do
        n=$(basename "$src" .txt)
        check "ships the manual page $n" grep -qE "^/usr/share/man/man[0-9]/$n\.gz$" "$t/files"
done
dpkg-deb -x "$deb" "$t/root"
check "mshim --version is the package's version" \
        bash -c "[ \"\$('$t/root/usr/bin/mshim' --version)\" = 'mshim $ver' ]"
bad=$(grep -rl '@BINDIR@\|@LIBDIR@\|@SYSCONFDIR@' "$t/root" 2>/dev/null)
if [ -z "$bad" ]; then pass "no hook keeps a @DIR@ placeholder"; else fail "no hook keeps a @DIR@ placeholder" "$bad"; fi
check "mshim luks enroll names the packaged keyscript" \
        grep -q '/usr/lib/mshim/cryptroot-unseal' "$t/root/usr/bin/mshim"
check "the hooks call /usr/bin/mshim" grep -q '/usr/bin/mshim' "$t/root/usr/lib/mshim/kernel-hook"
# /etc files are conffiles: an admin's hook.conf survives upgrades.
dpkg-deb -e "$deb" "$t/ctl"
check "/etc/mshim/hook.conf is a conffile" grep -qx /etc/mshim/hook.conf "$t/ctl/conffiles"
# The prune unit is shipped disabled (as make install leaves it); the bless
# unit is enabled (the hook's boot counters need it: debian/rules).
check "no maintainer script enables mshim-prune.service" \
        bash -c "! grep -qs 'enable.*mshim-prune' '$t/ctl/postinst'"
check "the postinst enables mshim-bless.service" grep -q 'deb-systemd-helper enable mshim-bless.service' "$t/ctl/postinst"
check "the postrm forgets mshim-bless.service on purge" grep -q 'deb-systemd-helper purge mshim-bless.service' "$t/ctl/postrm"
check "the postinst starts no unit" bash -c "! grep -qs 'deb-systemd-invoke .*start' '$t/ctl/postinst'"
# Debian's grub and shim packages run grub-install, which puts the "debian"
# entry first in BootOrder: their files trigger mshim's postinst.
for d in /usr/lib/grub/x86_64-efi /usr/lib/grub/x86_64-efi-signed /usr/lib/shim; do
        check "a change under $d triggers mshim" grep -qx "interest-noawait $d" "$t/ctl/triggers"
done
# The postinst on an upgrade: `mshim install --update` when an install is
# recorded, and apt goes on (exit 0, a message) when it fails. Run here
# with its state directory pointed at a sandbox and a stand-in mshim on PATH
# that records its arguments and fails.
mkdir -p "$t/pi/bin" "$t/pi/state"
printf '#!/bin/sh\necho "$*" >>"%s"\nexit 1\n' "$t/pi/args" >"$t/pi/bin/mshim" && chmod +x "$t/pi/bin/mshim"
# And deb-systemd-helper's stand-in: the host's units are left alone.
printf '#!/bin/sh\necho "$*" >>"%s"\n' "$t/pi/dsh" >"$t/pi/bin/deb-systemd-helper" && chmod +x "$t/pi/bin/deb-systemd-helper"
sed "s|/var/lib/mshim|$t/pi/state|g" "$t/ctl/postinst" >"$t/pi/postinst"
PATH=$t/pi/bin:$PATH sh "$t/pi/postinst" configure 0.0.1 >/dev/null 2>&1
check "postinst, upgrade, no install recorded: mshim not run, exit 0" \
        bash -c "[ $? = 0 ] && [ ! -e '$t/pi/args' ]"
: >"$t/pi/state/install.record"
PATH=$t/pi/bin:$PATH sh "$t/pi/postinst" configure 0.0.1 >/dev/null 2>"$t/pi/err"; rc=$?
check "postinst, upgrade, install recorded: runs mshim install --update" grep -qx "install --update" "$t/pi/args"
check "postinst: mshim install --update failing does not fail apt (exit 0, says what to run)" \
        bash -c "[ $rc = 0 ] && grep -q 'run: mshim install --update' '$t/pi/err'"
: >"$t/pi/args"
PATH=$t/pi/bin:$PATH sh "$t/pi/postinst" configure >/dev/null 2>&1
check "postinst, first install (no old version): no update" test ! -s "$t/pi/args"
check "postinst, configure: enables mshim-bless.service" grep -qx "enable mshim-bless.service" "$t/pi/dsh"
# Triggered (grub or shim changed): mshim install --confirm only when the
# install was confirmed; its failure does not fail apt.
PATH=$t/pi/bin:$PATH sh "$t/pi/postinst" triggered /usr/lib/shim >/dev/null 2>&1
check "postinst, triggered, install not confirmed: BootOrder left alone, exit 0" \
        bash -c "[ $? = 0 ] && [ ! -s '$t/pi/args' ]"
printf 'confirmed yes\n' >"$t/pi/state/install.record"
PATH=$t/pi/bin:$PATH sh "$t/pi/postinst" triggered /usr/lib/shim >/dev/null 2>"$t/pi/err"; rc=$?
check "postinst, triggered, install confirmed: runs mshim install --confirm" grep -qx "install --confirm" "$t/pi/args"
check "postinst, triggered: mshim install --confirm failing does not fail apt (exit 0, says what to run)" \
        bash -c "[ $rc = 0 ] && grep -q 'run: mshim install --confirm' '$t/pi/err'"
# The package's loader is the one `make` builds from this tree (the build is
# reproducible: docs/REPRODUCIBLE.md), when that build is at hand.
if [ -f build/mshimx64.efi ]; then
        check "the packaged loader is byte-identical to build/mshimx64.efi" \
                cmp -s "$t/root/usr/lib/mshim/mshimx64.efi" build/mshimx64.efi
fi
