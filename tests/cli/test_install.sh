#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make install / make uninstall into a temporary DESTDIR: the tree holds
# exactly the files the packagers' layout calls for, with their modes; the
# installed mshim runs; man finds the installed pages; uninstall removes all
# of it and nothing a user added.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
B=${B:-build}
# The layout variables come from the command lines below alone: make reads
# them from the environment too (PREFIX ?= /usr/local), and a caller may
# have set one (perf record exports PREFIX=/usr to what it runs).
unset PREFIX BINDIR LIBDIR MANDIR KEYLIMEDIR BASHCOMPDIR INITRAMFSHOOKDIR SYSCONFDIR KERNELINSTALLDIR \
        SYSTEMDUNITDIR ENABLE_PRUNE ENABLE_BLESS DESTDIR
VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
t=$(mktemp -d)
cli_init install "$t"
mk() { make --no-print-directory -s B="$B" "$@" >"$t/make.log" 2>&1 || { cat "$t/make.log" >&2; return 1; }; }

# The layout, written out here rather than derived from the Makefile.
expected() {
        local p=$1 ihooks=etc/initramfs-tools/hooks
        [ "$p" = usr ] && ihooks=usr/share/initramfs-tools/hooks
        cat <<EOF2 | sort
$p/bin/mshim 755
$p/lib/mshim/mshimx64.efi 644
$p/lib/mshim/hooks/README 644
$p/lib/mshim/cryptroot-unseal 755
$ihooks/mshim 755
$p/share/man/man1/mshim.1 644
$p/share/man/man1/mshim-log.1 644
$p/share/man/man1/mshim-pcrs.1 644
$p/share/man/man1/mshim-vars.1 644
$p/share/man/man1/mshim-sign.1 644
$p/share/man/man1/mshim-sigs.1 644
$p/share/man/man1/mshim-pe-hash.1 644
$p/share/man/man1/mshim-sbat.1 644
$p/share/man/man1/mshim-boot-policy.1 644
$p/share/man/man1/mshim-predict.1 644
$p/share/man/man1/mshim-policy.1 644
$p/share/man/man1/mshim-seal.1 644
$p/share/man/man1/mshim-unseal.1 644
$p/share/man/man1/mshim-fence.1 644
$p/share/man/man1/mshim-luks.1 644
$p/share/man/man1/mshim-totp.1 644
$p/share/man/man1/mshim-attest.1 644
$p/share/man/man1/mshim-verify.1 644
$p/share/man/man1/mshim-set-default.1 644
$p/share/man/man1/mshim-set-oneshot.1 644
$p/share/man/man1/mshim-bless.1 644
$p/share/man/man1/mshim-install.1 644
$p/share/man/man1/mshim-uninstall.1 644
$p/share/man/man1/mshim-status.1 644
$p/share/man/man5/mshim-loader.conf.5 644
$p/share/bash-completion/completions/mshim 644
$p/share/mshim/keylime/mshim_policy.py 644
$p/lib/mshim/kernel-hook 755
$p/lib/kernel/install.d/90-mshim.install 755
$p/lib/systemd/system/mshim-prune.service 644
$p/lib/systemd/system/mshim-bless.service 644
etc/kernel/postinst.d/zz-mshim 755
etc/kernel/postrm.d/zz-mshim 755
etc/initramfs/post-update.d/mshim 755
etc/mshim/hook.conf 644
etc/systemd/system/basic.target.wants/mshim-bless.service 777
EOF2
}
tree() { (cd "$1" && find . -type f -o -type l | sed 's|^\./||' | while read -r f; do echo "$f $(stat -c %a "$f")"; done | sort); }

# ---- PREFIX=/usr, as a Debian package would -----------------------------------
R=$t/root
if mk install DESTDIR="$R" PREFIX=/usr; then pass "make install DESTDIR PREFIX=/usr"; else fail "make install DESTDIR PREFIX=/usr"; exit 1; fi
if [ "$(tree "$R")" = "$(expected usr)" ]; then pass "the tree is exactly the layout, with its modes"
else fail "the tree is exactly the layout, with its modes" "$(diff <(expected usr) <(tree "$R"))"; fi
check "installed mshim --version is mshim $VERSION" test "$("$R/usr/bin/mshim" --version)" = "mshim $VERSION"
check "installed mshimx64.efi is the built one" cmp -s "$B/mshimx64.efi" "$R/usr/lib/mshim/mshimx64.efi"
check "installed mshimx64.efi is a PE image" bash -c "'$R/usr/bin/mshim' pe-hash '$R/usr/lib/mshim/mshimx64.efi' >/dev/null"
check "installed keyscript is hooks/cryptroot-unseal, which test_luks.sh boots" cmp -s hooks/cryptroot-unseal "$R/usr/lib/mshim/cryptroot-unseal"
check "installed initramfs hook is hooks/initramfs-tools.hook" cmp -s hooks/initramfs-tools.hook "$R/usr/share/initramfs-tools/hooks/mshim"
check "man finds mshim-pcrs(1) there" test "$(man --manpath="$R/usr/share/man" -w mshim-pcrs)" = "$R/usr/share/man/man1/mshim-pcrs.1"
check "man finds mshim-loader.conf(5) there" test "$(man --manpath="$R/usr/share/man" -w 5 mshim-loader.conf)" = "$R/usr/share/man/man5/mshim-loader.conf.5"
check "the installed completion defines _mshim" bash -c "source '$R/usr/share/bash-completion/completions/mshim' && complete -p mshim | grep -q _mshim"
# The hooks name the installed paths: no @PLACEHOLDER@ left, each Debian hook
# runs the installed kernel-hook, hook.conf names the installed mshim.
check "no @...@ placeholder left in the installed files" bash -c "! grep -rlE '@(BINDIR|LIBDIR|SYSCONFDIR)@' '$R'"
for h in etc/kernel/postinst.d/zz-mshim etc/kernel/postrm.d/zz-mshim etc/initramfs/post-update.d/mshim \
         usr/lib/kernel/install.d/90-mshim.install; do
        check "$h runs /usr/lib/mshim/kernel-hook" grep -q '^exec "${MSHIM_KERNEL_HOOK:-/usr/lib/mshim/kernel-hook}" ' "$R/$h"
        check "$h is a POSIX shell script" sh -n "$R/$h"
done
check "hook.conf's default MSHIM is /usr/bin/mshim" grep -qx '#MSHIM=/usr/bin/mshim' "$R/etc/mshim/hook.conf"
check "mshim-prune.service runs /usr/bin/mshim policy prune" grep -qx 'ExecStart=/usr/bin/mshim policy prune .*' "$R/usr/lib/systemd/system/mshim-prune.service"
check "mshim-prune.service then prunes revoked TOTP approvals when there are any" grep -qx "ExecStart=/bin/sh -c 'test ! -d /boot/efi/loader/mshim/totp-approvals || exec /usr/bin/mshim policy prune --totp --state-dir /var/lib/mshim --esp /boot/efi'" "$R/usr/lib/systemd/system/mshim-prune.service"
check "mshim-prune.service: oneshot, WantedBy=multi-user.target" bash -c "grep -qx 'Type=oneshot' '$R/usr/lib/systemd/system/mshim-prune.service' && grep -qx 'WantedBy=multi-user.target' '$R/usr/lib/systemd/system/mshim-prune.service'"
# systemd's own check; the only complaint allowed: the ExecStart binary is not
# installed on this host (it is under DESTDIR).
if command -v systemd-analyze >/dev/null; then
        msgs=$(systemd-analyze verify --man=no "$R/usr/lib/systemd/system/mshim-prune.service" 2>&1 |
               grep -v 'Command /usr/bin/mshim is not executable')
        check "systemd-analyze verify accepts mshim-prune.service" test -z "$msgs"
fi
check "the unit is not enabled by default" test ! -e "$R/etc/systemd/system/multi-user.target.wants/mshim-prune.service"
# The bless unit is (ENABLE_BLESS=yes): new entries get a boot counter
# (hook.conf's TRIES) that only it drops after a good boot.
check "mshim-bless.service is enabled by default: basic.target.wants links it" \
        test "$(readlink "$R/etc/systemd/system/basic.target.wants/mshim-bless.service")" = /usr/lib/systemd/system/mshim-bless.service
echo "ESP=/srv/esp" >>"$R/etc/mshim/hook.conf"
check "make install again (over an installed tree)" mk install DESTDIR="$R" PREFIX=/usr
check "make install keeps an edited hook.conf" grep -qx "ESP=/srv/esp" "$R/etc/mshim/hook.conf"
check "make uninstall keeps an edited hook.conf" bash -c "make --no-print-directory -s B='$B' uninstall DESTDIR='$R' PREFIX=/usr >/dev/null && test -f '$R/etc/mshim/hook.conf'"
rm -f "$R/etc/mshim/hook.conf"
check "make install ENABLE_PRUNE=yes" mk install DESTDIR="$R" PREFIX=/usr ENABLE_PRUNE=yes
check "ENABLE_PRUNE=yes: multi-user.target.wants links the unit" test "$(readlink "$R/etc/systemd/system/multi-user.target.wants/mshim-prune.service")" = /usr/lib/systemd/system/mshim-prune.service
if mk uninstall DESTDIR="$R" PREFIX=/usr; then pass "make uninstall"; else fail "make uninstall"; fi
left=$(cd "$R" && find . -type f -o -type l)
check "uninstall leaves no file" test -z "$left"
check "uninstall removes lib/mshim" test ! -e "$R/usr/lib/mshim"
check "uninstall removes share/mshim (the Keylime module's folder)" test ! -e "$R/usr/share/mshim"

# ---- the default PREFIX, /usr/local; a user's hook survives uninstall ---------------
R=$t/root2
check "make install DESTDIR (default PREFIX)" mk install DESTDIR="$R"
if [ "$(tree "$R")" = "$(expected usr/local)" ]; then pass "default PREFIX is /usr/local"
else fail "default PREFIX is /usr/local" "$(diff <(expected usr/local) <(tree "$R"))"; fi
echo "#!/bin/sh" >"$R/usr/local/lib/mshim/hooks/50-mine"
check "make uninstall (default PREFIX)" mk uninstall DESTDIR="$R"
check "uninstall keeps a file it did not install" test "$(cd "$R" && find . -type f)" = "./usr/local/lib/mshim/hooks/50-mine"

# Plain `make` in a fresh clone (issue 23): the default goal checks the build
# packages, then builds both binaries. A dry run in a copy of the tree lists
# the commands it would run.
mkdir "$t/clone"
git ls-files -z | xargs -0 cp --parents -t "$t/clone"
(cd "$t/clone" && make -n) >"$t/dry.log" 2>&1
check "plain make checks the build packages first" grep -q 'scripts/deps.sh --build' "$t/dry.log"
check "plain make builds build/mshimx64.efi" grep -qE -- '-o build/mshimx64\.so|build/mshimx64\.efi' "$t/dry.log"
check "plain make builds build/mshim" grep -qE -- '-o build/mshim ' "$t/dry.log"
out=$(scripts/deps.sh --bogus 2>&1); rc=$?
if [ "$rc" = 2 ] && grep -q '^usage: scripts/deps.sh \[--build | --packages | --fetch\]' <<<"$out"; then
        pass "scripts/deps.sh with an unknown option: usage, exit 2"
else
        fail "scripts/deps.sh with an unknown option: usage, exit 2" "rc=$rc: $out"
fi
