# SPDX-License-Identifier: BSD-2-Clause
# The real-Debian tests (make check-debian): a Debian 12 system built by
# tests/debian/build-image.sh, booted under QEMU (TCG) with OVMF in Secure
# Boot with Microsoft's keys enrolled and swtpm, driven over its serial
# console by tests/debian/drive.py. The integration library
# (tests/integration/lib.sh) gives the TPM template, the traps and logs.
#
#   . "$(dirname "$0")/lib.sh"
#   deb_init NAME                  # it_init, and the image (built if needed)
#   deb_pkgdisk DIR FILE...        # DIR/pkgs.img: the guest's local packages
#   deb_boot DIR SCRIPT [DEADLINE] # one QEMU run (resets included) under drive.py
#   deb_power_cycle DIR            # QEMU and swtpm restarted (drive.py's reset guard)
#
# A boot dir DIR holds disk.img (a sparse copy of the cached image, or of
# another test's disk), vars.fd (the OVMF variable store), tpm/ (swtpm's
# state; DIR/tpm.in is copied in when present) and serial.log.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
DEB_HERE=$IT_REPO/tests/debian
# The system's passphrase (build-image.sh's DEB_PASS) and the MOK password.
DEB_PASS=${DEB_PASS:-debian-test-passphrase}
DEB_MOKPW=${DEB_MOKPW:-mshim-test}
DEB_CODE=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
DEB_VARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
DEB_CACHE=$IT_B/debian-sys
DEB_IMAGE=

deb_log() { it_log "$IT_NAME: $*"; }

# deb_image: DEB_IMAGE, the cached system image for this build-image.sh
# (and builder.sh): built when absent (one build at a time), older ones
# removed.
deb_image() {
        local key dir
        key=$(cat "$DEB_HERE/build-image.sh" "$DEB_HERE/builder.sh" | sha256sum | cut -c1-16)
        dir=$DEB_CACHE/$key
        mkdir -p "$DEB_CACHE"
        (
                flock 9
                [ -s "$dir/disk.img" ] && exit 0
                for old in "$DEB_CACHE"/*/disk.img; do [ -e "$old" ] && rm -rf "$(dirname "$old")"; done
                rm -rf "$dir"
                it_log "building the Debian 12 image (debootstrap, a builder boot) into $dir ..."
                DEB_PASS=$DEB_PASS bash "$DEB_HERE/build-image.sh" "$dir" ||
                        { rm -rf "$dir"; exit 1; }
        ) 9> "$DEB_CACHE/build.lock" || return 1
        DEB_IMAGE=$dir/disk.img
}

# deb_init NAME [noimage]: it_init, the prerequisites, the image (unless
# "noimage": test_drive.sh's machine has a blank disk).
deb_init() {
        it_init "$1"
        local p
        for p in qemu-system-x86_64 swtpm debootstrap mke2fs mkfs.vfat sfdisk; do
                command -v "$p" >/dev/null || { it_fail "$1: prerequisites: no $p"; exit 1; }
        done
        it_require "$DEB_CODE" "$DEB_VARS" || { it_fail "$1: prerequisites: OVMF's Secure Boot images"; exit 1; }
        [ "${2:-}" = noimage ] && return 0
        local t0=$SECONDS
        deb_image || { it_fail "$1: the Debian 12 image builds (tests/debian/build-image.sh)"; exit 1; }
        deb_log "image ready ($((SECONDS - t0)) s): $DEB_IMAGE"
}

# deb_mshim_deb OUTDIR [VERSION]: the mshim package built from this tree as
# tests/system/test_package.sh builds it (dpkg-buildpackage -b on a copy
# of the tree's files), into OUTDIR. With VERSION, the package and the
# binaries say that version (debian/changelog, the Makefile's VERSION): a
# rebuilt mshim, whose loader differs by its version string.
deb_mshim_deb() {
        local out=$1 ver=${2:-} t
        t=$(mktemp -d) || return 1
        mkdir "$t/mshim"
        (cd "$IT_REPO" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$t/mshim") &&
        if [ -n "$ver" ]; then
                sed -i "1 s/([^)]*)/($ver)/" "$t/mshim/debian/changelog" &&
                        sed -i "s/^VERSION  *:= .*/VERSION  := $ver/" "$t/mshim/Makefile"
        fi &&
        (cd "$t/mshim" && dpkg-buildpackage -b -us -uc) > "$t/build.log" 2>&1 ||
                { tail -n 20 "$t/build.log" >&2; rm -rf "$t"; return 1; }
        mkdir -p "$out" && cp "$t"/mshim_*_amd64.deb "$out/" && rm -rf "$t"
}

# deb_pkgdisk DIR FILE...: DIR/pkgs.img, an ext4 file system labelled
# "pkgs" holding the FILEs: the guest's local package directory (it has no
# network).
deb_pkgdisk() {
        local d=$1; shift
        rm -rf "$d/pkgs" && mkdir -p "$d/pkgs" && cp "$@" "$d/pkgs/" &&
                mke2fs -q -t ext4 -L pkgs -d "$d/pkgs" "$d/pkgs.img" 1G
}

# deb_qemu_start DIR [keep [OPTION...]]: power the boot dir's machine on:
# swtpm (with "keep", on DIR/tpm's state as it is, else a fresh copy of
# DIR/tpm.in), then QEMU in the background with OPTIONs added, its pid in
# DIR/qemu.pid. QEMU waits for drive.py on DIR/serial.sock before the
# firmware runs.
deb_qemu_start() {
        local d=$1 keep=${2:-}
        shift 2 2>/dev/null || shift $#
        rm -f "$d/serial.sock" "$d/qmp.sock"
        it_swtpm_start "$d" "$keep" || return 1
        # shellcheck disable=SC2054 # commas belong to QEMU options
        # One vCPU: with two, OVMF (SMM, TCG) at times never came back from
        # the guest's warm reset: the boot CPU spinning in the firmware, the
        # second halted, no console output, and the same after QEMU's
        # system_reset (drive.py's reset guard dumped it: once in CI, once
        # here in wip_lifecycle.sh). With one CPU it was rarer, not gone:
        # drive.py power-cycles the machine then (deb_power_cycle).
        local args=(-machine q35,smm=on,accel=tcg -m 2048 -smp 1 -display none -monitor none
                -global driver=cfi.pflash01,property=secure,value=on -nic none
                -serial "unix:$d/serial.sock,server=on,wait=on"
                -qmp "unix:$d/qmp.sock,server=on,wait=off"
                -debugcon "file:$d/ovmf-debug.log" -global isa-debugcon.iobase=0x402
                -drive "if=pflash,format=raw,unit=0,readonly=on,file=$DEB_CODE"
                -drive "if=pflash,format=raw,unit=1,file=$d/vars.fd"
                -drive "if=none,id=disk,format=raw,file=$d/disk.img"
                -device virtio-blk-pci,drive=disk,bootindex=1
                -chardev "socket,id=chrtpm,path=$d/tpm/sock"
                -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0)
        [ -f "$d/pkgs.img" ] && args+=(-drive "if=none,id=pkgs,format=raw,file=$d/pkgs.img"
                -device virtio-blk-pci,drive=pkgs)
        # The firmware's debug port appends: a power cycle keeps what the
        # stuck firmware wrote.
        [ -f "$d/ovmf-debug.log" ] && mv "$d/ovmf-debug.log" "$d/ovmf-debug.$(date +%s).log"
        command qemu-system-x86_64 "${args[@]}" "$@" </dev/null >>"$d/qemu.log" 2>&1 &
        echo "$!" > "$d/qemu.pid"
        IT_PIDS="$IT_PIDS $!"
}

# deb_alive PID: the process runs (a zombie, a QEMU started by another
# shell and killed, does not).
deb_alive() {
        local st
        st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ]
}

# deb_qemu_stop DIR: power off: QEMU asked to quit (SIGTERM: its disk and
# variable store written out), then killed if it has not within 20 s;
# then swtpm, whose state stays in DIR/tpm/state.
deb_qemu_stop() {
        local d=$1 pid i=0
        pid=$(cat "$d/qemu.pid" 2>/dev/null)
        if [ -n "$pid" ]; then
                kill "$pid" 2>/dev/null
                while deb_alive "$pid" && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
                deb_alive "$pid" && kill -9 "$pid" 2>/dev/null
        fi
        rm -f "$d/qemu.pid"
        it_swtpm_stop "$d"
}

# deb_power_cycle DIR: what a person does with a machine stuck in its
# firmware: power off and on. The disk, the variable store and the TPM's
# non-volatile state are the machine's and stay; the new QEMU and swtpm
# start from them. drive.py runs it (--power-cycle) when the reset guard
# finds the firmware silent after a reset.
deb_power_cycle() {
        local d=$1
        deb_qemu_stop "$d"
        # Where the firmware was stuck, for the log: its debug port's last
        # lines (the whole file is kept in the test's directory).
        echo "  | the firmware's debug output (ovmf-debug.log), last lines:" >&2
        tail -n 12 "$d/ovmf-debug.log" 2>/dev/null | tr -d '\r' | sed 's/^/  |   /' >&2
        deb_qemu_start "$d" keep
}

# deb_boot DIR SCRIPT [DEADLINE]: one QEMU process (the guest's reboots are
# resets of it: the same variable store and TPM) driven by drive.py with
# SCRIPT; drive.py prints the PASS/FAIL lines. The VM is stopped when the
# script ends. Returns drive.py's status. DEB_QEMU_FIRST: QEMU options for
# the first power-on only (test_drive.sh's -S: a machine that never runs).
deb_boot() {
        local d=$1 script=$2 deadline=${3:-1800}
        [ -f "$d/disk.img" ] || cp --sparse=always "$DEB_IMAGE" "$d/disk.img" || return 1
        [ -f "$d/vars.fd" ] || cp "$DEB_VARS" "$d/vars.fd" || return 1
        local t0=$SECONDS rc first=()
        [ -n "${DEB_QEMU_FIRST:-}" ] && read -r -a first <<< "$DEB_QEMU_FIRST"
        deb_qemu_start "$d" "" "${first[@]}" || return 1
        mkdir -p "$d/out"
        python3 -B "$DEB_HERE/drive.py" --socket "$d/serial.sock" --log "$d/serial.log" \
                --script "$script" --out "$d/out" --deadline "$deadline" --qmp "$d/qmp.sock" \
                --reset-grace "${DEB_RESET_GRACE:-240}" \
                --power-cycle "bash -c '. \"\$1\" && deb_power_cycle \"\$2\"' power-cycle $(printf %q "$DEB_HERE/lib.sh") $(printf %q "$d")"
        rc=$?
        # A clean stop: the guest was asked to power off by the script's
        # end (QEMU has quit), or is stopped here.
        local i=0 pid
        pid=$(cat "$d/qemu.pid" 2>/dev/null)
        while [ -n "$pid" ] && deb_alive "$pid" && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
        deb_qemu_stop "$d"
        deb_log "QEMU run: $((SECONDS - t0)) s (drive.py status $rc)"
        return $rc
}

# deb_from_installed NAME DIR: DIR (a boot directory) starts as the system
# test_install.sh left (DEB_CACHE/after-install: its disk, firmware
# variables, and TPM state as DIR/tpm.in); FAIL NAME's set-up when there
# is none of this image (by its real path: a worktree's build/debian-sys
# may be a link to another's).
deb_from_installed() {
        local prev=$DEB_CACHE/after-install
        if [ ! -s "$prev/disk.img" ] ||
           [ "$(readlink -f "$(cat "$prev/image" 2>/dev/null)")" != "$(readlink -f "$DEB_IMAGE")" ]; then
                it_fail "$1: needs tests/debian/test_install.sh's system (run it first: make check-debian)"; return 1
        fi
        mkdir -p "$2/tpm.in" && cp --sparse=always "$prev/disk.img" "$2/disk.img" && cp "$prev/vars.fd" "$2/vars.fd" &&
                cp -a "$prev/tpm/." "$2/tpm.in/" || { it_fail "$1: set-up (copy the installed system)"; return 1; }
}

# deb_vm_lock / deb_vm_unlock: the machine's VM lock (/tmp/mshim-vm.lock,
# which integration runs beside them take exclusively), held shared while
# QEMU runs: Debian guests have one vCPU each, so two share the two CPUs
# (make check-debian runs its files after test_install.sh two at a time).
deb_vm_lock() {
        exec 8>/tmp/mshim-vm.lock && flock -s 8
}
deb_vm_unlock() {
        flock -u 8; exec 8>&-
}
