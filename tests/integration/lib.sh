# SPDX-License-Identifier: BSD-2-Clause
# Integration test library: boot OVMF + swtpm + a real Debian kernel under
# QEMU (TCG) from an ESP built with mtools, and read back what the TPM saw.
#
# Usage from a test (run from anywhere; paths are made absolute here):
#   . "$(dirname "$0")/lib.sh"
#   it_init replay                  # per-test dir under build/it/, traps
#   d=$(it_newboot base)            # boot dir with a default ESP tree in $d/esp
#   it_boot "$d"                    # build esp.img, start swtpm, run QEMU, parse
#   it_oracle check-... --result "$d/result" ...
#
# Layout of a boot dir:
#   esp/        the files that go on the ESP (edit them before it_boot)
#   esp.img     FAT image made with mtools; vars.fd per-boot OVMF variables
#   tpm/        swtpm state, sock, pid, log
#   serial.log  the guest's serial console; qemu.log QEMU's own output
#   result/     parsed: result.json (banks, PCRs, cmdline), eventlog.bin
#
# IT_PROGRESS (an array of "REGEX|message") makes it_qemu print message
# when REGEX first appears on the serial console.
# Environment: B (build dir, default build), IT_TIMEOUT (seconds per boot,
# default 300), IT_KEEP=1 keeps build/it/<test>.* after success,
# IT_SWTPM_LOG_LEVEL (swtpm --log level; 20 logs every command: make bench),
# IT_STAMP=1 (each boot's console with host timestamps in DIR/serial.stamped).

IT_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${B:-build}
case "$B" in /*) IT_B=$B ;; *) IT_B=$IT_REPO/$B ;; esac
# The interpreter itself rather than a version manager's shim.
. "$IT_REPO/tests/python3.sh"
# Debian's signed shim, MokManager and GRUB (scripts/fetch-efi.sh).
IT_EFIROOT=${MB_EFIROOT:-$IT_B/debian-efi}
case "$IT_EFIROOT" in /*) ;; *) IT_EFIROOT=$IT_REPO/$IT_EFIROOT ;; esac
IT_EFI=${IT_EFI:-$IT_B/mshimx64.efi}
IT_CLI=${IT_CLI:-$IT_B/mshim}
# The kernel the VMs boot: Debian's cloud flavour (linux-image-cloud-amd64,
# signed by Debian like the others, made for VMs: its image is LZ4- rather
# than XZ-compressed, and its EFI stub unpacks it in about 0.4 s under TCG
# where the generic kernel's takes about 2.9 s, a third of a plain boot).
# Debian's generic kernel (IT_B/kernel) boots in test_measured_boot.sh, its
# RT kernel (IT_B/kernel-rt) wherever a second kernel is needed. IT_KDIR:
# the directory scripts/fetch-kernel.sh filled (vmlinuz, VERSION, modules).
IT_KDIR=${IT_KDIR:-$IT_B/kernel-cloud}
IT_KERNEL=${IT_KERNEL:-$IT_KDIR/vmlinuz}
IT_INITRD=$IT_B/it/initrd.img
IT_ORACLE=$IT_REPO/tests/integration/oracle.py
IT_TIMEOUT=${IT_TIMEOUT:-300}
# Seconds between two looks at a running boot's console (it_qemu): a boot
# is seen to end within this of its last line.
IT_POLL=${IT_POLL:-0.2}
# The guest's CPU: QEMU's default model with RDRAND, as x86 machines of the
# last decade have (Intel's since 2012, AMD's since 2015). Without it the
# guest kernel has no entropy source: the first getrandom() of a boot
# (cryptsetup's, mshim's) waited about a second while the kernel gathered
# jitter entropy, emulated under TCG; with it the kernel's random pool is
# ready before /init.
IT_CPU=${IT_CPU:-qemu64,+rdrand}
# The firmware: Debian's OVMF. By default its 2 MB build (OVMF_CODE.fd, a
# 128 KiB variable store), which under TCG reaches the boot manager in
# about 3 s where the 4 MB build takes about 5.5 s (the same boot: 9.1 s of
# CPU against 11.6 s). That build enforces Secure Boot too when its store
# holds keys (Debian's OVMF_VARS.ms.fd, or keys `mshim vars enroll
# --secure-boot` wrote): an unsigned loader is refused, "Access Denied".
# It keeps its variables without SMM, so the OS could write the flash
# directly; the image checks are the same code as in the SMM build.
# IT_OVMF_SMM=1 (set before sourcing this file) boots the Secure Boot
# builds with SMM and a secure pflash instead, as real machines protect
# their variables: test_secureboot.sh, test_vars_secureboot.sh and
# test_mokmanager.sh, and tests/debian. Their start-up takes about 9.5 s
# under TCG, in the 2 MB and the 4 MB build alike (measured), so they take
# the 4 MB builds Debian's own VMs use (IT_OVMF_4M=1; the 2 MB SMM build
# starts only with S3 disabled).
# IT_OVMF_CODE_SB is the Secure Boot build, IT_OVMF_VARS_BLANK the empty
# store, IT_OVMF_VARS_MS the store with Microsoft's keys Debian ships.
[ "${IT_OVMF_SMM:-0}" = 1 ] && IT_OVMF_4M=1
if [ "${IT_OVMF_4M:-0}" = 1 ]; then IT_OVMF_SIZE=_4M; else IT_OVMF_SIZE=; fi
if [ "${IT_OVMF_SMM:-0}" = 1 ]; then
        IT_OVMF_CODE_SB=/usr/share/OVMF/OVMF_CODE$IT_OVMF_SIZE.secboot.fd
else
        IT_OVMF_CODE_SB=/usr/share/OVMF/OVMF_CODE$IT_OVMF_SIZE.fd
fi
IT_OVMF_VARS_BLANK=/usr/share/OVMF/OVMF_VARS$IT_OVMF_SIZE.fd
IT_OVMF_VARS_MS=/usr/share/OVMF/OVMF_VARS$IT_OVMF_SIZE.ms.fd
OVMF_CODE=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE$IT_OVMF_SIZE.fd}
OVMF_VARS=${OVMF_VARS:-$IT_OVMF_VARS_BLANK}
# The PCR banks the test TPMs activate. Files whose subject is the
# measurements in every bank (test_measured_boot, test_predict,
# test_tcg2_faults) set IT_ALL_BANKS=1 before sourcing this
# file: all four banks swtpm has. The others (unlocking, TOTP, Secure
# Boot, shim, hooks) boot with SHA-1 and SHA-256, the two banks TPMs
# commonly ship active: the firmware and mshim hash each image once per
# bank, and SHA-384 and SHA-512 under TCG cost about a quarter of a boot.
if [ "${IT_ALL_BANKS:-0}" = 1 ]; then
        IT_BANKS=${IT_BANKS:-sha1,sha256,sha384,sha512}
else
        IT_BANKS=${IT_BANKS:-sha1,sha256}
fi
# The TPM's interface: CRB (tpm-crb), as firmware TPMs have it. Every
# command then goes through one shared buffer, where TIS (tpm-tis, a
# discrete TPM's FIFO) costs a trapped MMIO access per byte under TCG:
# CRB makes a boot about a fifth cheaper (14.1 s -> 11.5 s of CPU, the same
# PCRs and log). test_measured_boot.sh boots with TIS, so both interfaces
# stay covered by the firmware, mshim and Linux.
IT_TPM_DEVICE=${IT_TPM_DEVICE:-tpm-crb}
# The kernel command line of the default entry. mshim.test=N is an
# unknown parameter the kernel ignores: tests change it to alter one byte.
# no_timer_check: under TCG on a host busy with other work the kernel's
# IO-APIC timer check can miss its ticks and panic ("IO-APIC + timer
# doesn't work"), as virtual machines commonly avoid.
# cryptomgr.notests: the kernel's self-tests of its crypto algorithms (as
# each registers: at start-up, and for dm-crypt's in the LUKS initramfs)
# are the kernel's own business, not the suite's: a fifth of the kernel's
# initcall time under TCG.
IT_OPTIONS=${IT_OPTIONS:-console=ttyS0 quiet panic=-1 no_timer_check cryptomgr.notests mshim.test=0}

# A boot that reaches this line on the console fell through to the firmware's
# shell: the loader under test failed. Tests that boot the shell on purpose
# set it empty.
IT_FALLTHROUGH=${IT_FALLTHROUGH-'BdsDxe: (loading|starting) Boot[0-9A-F]+ "EFI Internal Shell"'}

IT_DIR=
IT_NAME=
IT_FAILED=0
IT_PIDS=

it_log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
it_pass() { echo "PASS: $*"; }
it_fail() { echo "FAIL: $*"; IT_FAILED=1; }
it_oracle() { python3 "$IT_ORACLE" "$@"; }

# it_check_replay DIR NAME: every active bank's PCRs 0-9 and 11-15 that the
# guest read from the TPM (DIR/result) equal three replays of its event log:
# `mshim log --json`, tpm2_eventlog's, and oracle.py's own. A replayer that
# cannot read the log is a failure too.
it_check_replay() {
        local d=$1 name=$2 r=$1/result
        local args=(--result "$r" --name "$name")
        if [ -x "$IT_CLI" ] && "$IT_CLI" log --json "$r/eventlog.bin" > "$d/mshim-log.json" 2> "$d/mshim-log.err"; then
                args+=(--mshim-json "$d/mshim-log.json")
        else
                it_fail "$name: mshim log --json"
                if [ -x "$IT_CLI" ]; then echo "  $IT_CLI log --json failed: $(cat "$d/mshim-log.err")" >&2; else echo "  $IT_CLI is missing" >&2; fi
        fi
        if tpm2_eventlog "$r/eventlog.bin" > "$d/tpm2_eventlog.yaml" 2> "$d/tpm2_eventlog.err"; then
                args+=(--eventlog-yaml "$d/tpm2_eventlog.yaml")
        else
                it_fail "$name: tpm2_eventlog"
                cat "$d/tpm2_eventlog.err" >&2
        fi
        it_oracle check-replay "${args[@]}" || IT_FAILED=1
}

it_cleanup() {
        local f pid
        for pid in $IT_PIDS; do kill "$pid" 2>/dev/null; done
        if [ -n "$IT_DIR" ] && [ -d "$IT_DIR" ]; then
                for f in "$IT_DIR"/*/qemu.pid "$IT_DIR"/*/tpm/pid; do
                        [ -f "$f" ] || continue
                        pid=$(cat "$f" 2>/dev/null) && kill "$pid" 2>/dev/null
                done
                if [ "$IT_FAILED" = 0 ] && [ "${IT_KEEP:-0}" != 1 ]; then
                        rm -rf "$IT_DIR"
                else
                        echo "(test files kept in $IT_DIR)" >&2
                fi
        fi
}

# it_init NAME: per-test temporary directory and cleanup traps; NAME is
# IT_NAME, what shared checks (it_luks_*) report under.
it_init() {
        IT_NAME=$1
        mkdir -p "$IT_B/it"
        IT_DIR=$(mktemp -d "$IT_B/it/$1.XXXXXX")
        trap it_cleanup EXIT
        trap 'exit 130' INT TERM
}

# it_require FILE...: FAIL (and exit) when a prerequisite is missing.
it_require() {
        local f ok=1
        for f; do
                if [ ! -e "$f" ]; then
                        echo "missing prerequisite: $f (run make; make deps)" >&2
                        ok=0
                fi
        done
        [ "$ok" = 1 ]
}

# it_initrd: build (once, reproducibly) the reporting initramfs.
it_initrd() {
        local s=$IT_REPO/scripts/mkinitramfs.sh
        if [ ! -s "$IT_INITRD" ] || [ "$s" -nt "$IT_INITRD" ]; then
                mkdir -p "$(dirname "$IT_INITRD")"
                "$s" "$IT_INITRD.$$" && mv "$IT_INITRD.$$" "$IT_INITRD"
        fi
}

# it_initrd_luks KDIR OUT: build (once, reproducibly) the LUKS test
# initramfs for the kernel in KDIR (scripts/mkinitramfs-luks.sh: the
# report, cryptsetup, mshim and the keyscript hooks/cryptroot-unseal).
# Rebuilt when a script, the keyscript or the CLI is newer.
it_initrd_luks() {
        local k=$1 out=$2 f
        if [ -s "$out" ]; then
                for f in "$IT_REPO"/scripts/mkinitramfs*.sh "$IT_REPO/hooks/cryptroot-unseal" "$IT_CLI" "$k/VERSION"; do
                        [ "$f" -nt "$out" ] && rm -f "$out"
                done
                # OUT.version: the kernel whose modules it holds.
                cmp -s "$k/VERSION" "$out.version" || rm -f "$out"
        fi
        [ -s "$out" ] && return 0
        mkdir -p "$(dirname "$out")"
        MSHIM_CLI=$IT_CLI MSHIM_LUKS_UUID=$IT_LUKS_UUID "$IT_REPO/scripts/mkinitramfs-luks.sh" "$out.$$" "$k" &&
                cp "$k/VERSION" "$out.version" && mv "$out.$$" "$out"
}

# it_console_script FILE [REGEX TEXT]...: a mok_console.py script (for
# it_qemu --console) that, for each pair, waits for REGEX on the guest's
# console and then types TEXT and Enter, as a person answering a prompt.
it_console_script() {
        local f=$1; shift
        : > "$f"
        while [ $# -ge 2 ]; do
                printf 'expect %s\nsleep 0.5\ntype %s<enter>\n' "$1" "$2" >> "$f"
                shift 2
        done
}

# it_mok_enroll_steps PASSWORD [WRONG]: the steps (the language of
# mok_console.py and of tests/debian/drive.py) that enrol the waiting MOK
# from MokManager's main menu as Debian's shim draws it on the serial
# console (the menus start on their first item): "Enroll MOK", "Continue",
# "Yes", the password (WRONG first, when given: MokManager must refuse it
# and ask again), "Reboot". The caller's script waits for the main menu
# first (tests/integration/test_mokmanager.sh, tests/debian/test_install.sh).
it_mok_enroll_steps() {
        cat <<'EOF'
# main menu: Continue boot, [Enroll MOK], ...
send <down>
send <enter>
expect 30 \[Enroll MOK\]\s+View key 0\s+Continue
sleep 1
# View key 0, [Continue]
send <down>
send <enter>
expect 30 Enroll the key\(s\)\?\s+No\s+Yes
sleep 1
# No, [Yes]
send <down>
send <enter>
expect 30 Password:
sleep 1
EOF
        # Between the message and its OK button only blanks are drawn; [^A-Za-z]
        # rather than \s: under load the serial console once lost bytes of a
        # cursor escape ("[24;01H" came as "[24"), whose digits then showed
        # as text, "Password doesn't match ... 24 ... OK" (make check, on a
        # busy 2-core machine).
        [ -z "${2:-}" ] || printf '%s\n' "# A wrong password first: MokManager must refuse it and ask again." \
                "send $2<enter>" "expect 30 ERROR\\s+Password doesn't match[^A-Za-z]+OK" "sleep 1" "send <enter>" \
                "expect 30 Password:" "sleep 1"
        # Enrolled: the main menu now starts with Reboot, then "Enroll key
        # from disk" (before the enrolment: Continue boot, Enroll MOK). Under
        # load the serial console once lost the bytes of "Reboot" itself, so
        # the menu's next item is accepted too; Enter then takes the first
        # item. Whether the key was enrolled is checked afterwards, from the
        # variable store and the boot that follows (test_mokmanager.sh,
        # tests/debian).
        printf '%s\n' "send $1<enter>" \
                "expect 60 Perform MOK management[^A-Za-z]+(Reboot|Enroll key from disk)" "sleep 1" "send <enter>"
}

# it_newboot NAME [LOADER_EFI]: make $IT_DIR/NAME with the default ESP tree:
#   /EFI/BOOT/BOOTX64.EFI   mshimx64.efi (or LOADER_EFI)
#   /loader/loader.conf     timeout 0, default mshim-test
#   /loader/entries/mshim-test.conf   linux /vmlinuz, initrd /initrd.img, options
#   /vmlinuz /initrd.img
# Prints the directory.
it_newboot() {
        local d=$IT_DIR/$1 efi=${2:-$IT_EFI}
        it_initrd || return 1
        mkdir -p "$d/esp/EFI/BOOT" "$d/esp/loader/entries"
        cp "$efi" "$d/esp/EFI/BOOT/BOOTX64.EFI"
        cp "$IT_KERNEL" "$d/esp/vmlinuz"
        cp "$IT_INITRD" "$d/esp/initrd.img"
        printf '# mshim integration test 0\ntimeout 0\ndefault mshim-test\n' > "$d/esp/loader/loader.conf"
        printf 'title mshim integration test\nversion %s\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s\n' \
                "$(cat "$IT_KDIR/VERSION" 2>/dev/null || echo 0)" "$IT_OPTIONS" \
                > "$d/esp/loader/entries/mshim-test.conf"
        echo "$d"
}

# it_mkesp DIR [SECTORS]: DIR/esp.img, a FAT image (no partition table)
# holding DIR/esp; SECTORS (512 bytes) fixes its size, else it fits the files.
it_mkesp() {
        local d=$1 kib sectors=${2:-}
        if [ -z "$sectors" ]; then
                kib=$(du -sk "$d/esp" | cut -f1)
                sectors=$(( (kib + 8192) * 2 ))
                [ "$sectors" -lt 65536 ] && sectors=65536
        fi
        rm -f "$d/esp.img"
        mformat -i "$d/esp.img" -C -T "$sectors" -h 64 -s 32 -v MSHIMESP :: >/dev/null &&
                mcopy -i "$d/esp.img" -s -Q -m "$d"/esp/* ::/
}

# ---- a GPT disk: the ESP and a LUKS2 volume (test_luks.sh) ----------------------

# Fixed GUIDs, so every disk (and the PCR 5 GPT event the firmware logs
# for it) is the same whatever the test or the run.
IT_DISK_GUID=6D736869-6D00-4000-8000-6469736B0001
IT_ESP_PARTUUID=6D736869-6D00-4000-8000-657370000001
IT_LUKS_PARTUUID=6D736869-6D00-4000-8000-6C756B730002
IT_LUKS_UUID=6d736869-6d00-4000-8000-6c756b730003
# Partition sizes in 512-byte sectors: fixed for the same reason (the
# ESP must hold both test kernels and the LUKS initramfs).
IT_DISK_ESP_SECTORS=${IT_DISK_ESP_SECTORS:-131072}    # 64 MiB
IT_DISK_LUKS_SECTORS=4096                             # 2 MiB: 1 MiB header, 1 MiB data
# The data segment starts 1 MiB into the volume; its first sector holds
# IT_LUKS_MARKER, encrypted on the host (it_mkluks), which the guest reads
# back after opening the volume.
IT_LUKS_OFFSET=2048
IT_LUKS_MARKER="MSHIM-LUKS-MARKER c3a1f0e2"

# it_mkluks DIR PASSPHRASE [CONTENT]: DIR/luks.img, a LUKS2 volume made by
# Debian's cryptsetup on a plain file (no device-mapper needed):
# aes-xts-plain64, 512-byte sectors, UUID IT_LUKS_UUID, the volume key
# DIR/luks.vk (random) so the host can write the first data sectors itself
# (XTS, tweak = sector number, as dm-crypt's plain64 IV), and one keyslot
# for PASSPHRASE. PBKDF2 with 1000 iterations (cryptsetup's floor) instead
# of argon2id's tuned cost: the test's speed only; a real volume keeps
# cryptsetup's defaults. The data starts with IT_LUKS_MARKER, or with the
# file CONTENT (at most 4 sectors).
it_mkluks() {
        local d=$1 pass=$2 content=${3:-}
        mkdir -p "$d" && rm -f "$d/luks.img"
        head -c 64 /dev/urandom > "$d/luks.vk" &&
        truncate -s $((IT_DISK_LUKS_SECTORS * 512)) "$d/luks.img" &&
        printf '%s' "$pass" | cryptsetup luksFormat --batch-mode --type luks2 --uuid "$IT_LUKS_UUID" \
                --cipher aes-xts-plain64 --key-size 512 --sector-size 512 --volume-key-file "$d/luks.vk" \
                --pbkdf pbkdf2 --pbkdf-force-iterations 1000 --hash sha256 \
                --offset "$IT_LUKS_OFFSET" --luks2-metadata-size 16k --luks2-keyslots-size 512k \
                --key-file - "$d/luks.img" >"$d/luks.log" 2>&1 || { cat "$d/luks.log" >&2; return 1; }
        # The data's first 4 sectors: the marker or CONTENT, NUL-padded to
        # all 4 (the initramfs reads 2048 bytes; an unwritten sector decrypts
        # to noise, which it would run as part of a VOLUME-INIT script: CI
        # saw that noise in the console), each AES-256-XTS
        # (python3-cryptography) with its sector number as tweak (plain64:
        # little-endian).
        python3 - "$d/luks.vk" "$IT_LUKS_MARKER" "$d/luks.img" $((IT_LUKS_OFFSET * 512)) "$content" <<'PY'
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
vk, marker, img, off, content = open(sys.argv[1], "rb").read(), sys.argv[2].encode(), sys.argv[3], int(sys.argv[4]), sys.argv[5]
data = open(content, "rb").read() if content else marker
if len(data) > 2048:
    sys.exit("it_mkluks: more than 4 sectors of content")
data = data.ljust(2048, b"\0")
with open(img, "r+b") as f:
    f.seek(off)
    for i in range(0, len(data), 512):
        enc = Cipher(algorithms.AES(vk), modes.XTS((i // 512).to_bytes(16, "little"))).encryptor()
        f.write(enc.update(data[i:i + 512]) + enc.finalize())
PY
}

# it_mkdisk DIR LUKS_IMG: DIR/disk.img, a GPT disk (sfdisk) with the fixed
# GUIDs above: partition 1 the ESP (type EFI System, DIR/esp as it_mkesp
# makes it, IT_DISK_ESP_SECTORS), partition 2 a copy of LUKS_IMG (type
# Linux LUKS). The images are written into the partitions at their offsets.
it_mkdisk() {
        local d=$1 luks=$2 esp_start=2048
        local luks_start=$((esp_start + IT_DISK_ESP_SECTORS))
        local total=$((luks_start + IT_DISK_LUKS_SECTORS + 2048))
        it_mkesp "$d" "$IT_DISK_ESP_SECTORS" || return 1
        rm -f "$d/disk.img"
        truncate -s $((total * 512)) "$d/disk.img" || return 1
        printf '%s\n' "label: gpt" "label-id: $IT_DISK_GUID" "first-lba: 2048" \
                "start=$esp_start, size=$IT_DISK_ESP_SECTORS, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$IT_ESP_PARTUUID, name=\"ESP\"" \
                "start=$luks_start, size=$IT_DISK_LUKS_SECTORS, type=CA7D7CCB-63ED-4C53-861C-1742536059CC, uuid=$IT_LUKS_PARTUUID, name=\"root\"" |
                sfdisk --quiet --no-reread --no-tell-kernel "$d/disk.img" >"$d/sfdisk.log" 2>&1 ||
                { cat "$d/sfdisk.log" >&2; return 1; }
        # 1 MiB blocks, the offsets in bytes: 512-byte blocks made each
        # disk 130,000 system calls (a quarter of a second of CPU here).
        dd if="$d/esp.img" of="$d/disk.img" bs=1M oflag=seek_bytes seek=$((esp_start * 512)) conv=notrunc status=none &&
        dd if="$luks" of="$d/disk.img" bs=1M oflag=seek_bytes seek=$((luks_start * 512)) conv=notrunc status=none &&
        rm -f "$d/esp.img"
}

# ---- a sealed LUKS key, unlocked by the keyscript (test_luks*.sh) ----------------
# Reports go under IT_NAME (it_init's NAME).

# The host's TPM state every LUKS boot starts from, and mshim's policy
# state: it_luks_provision makes both.
IT_LUKS_TPM=
IT_LUKS_POLICY=

# it_luks_provision PASSPHRASE: the LUKS initramfs, IT_DIR/luks.img
# (it_mkluks) with PASSPHRASE in its first keyslot (and in IT_DIR/pass),
# then on the host, against the swtpm state IT_LUKS_TPM: `mshim policy
# init` (state IT_LUKS_POLICY), a random key IT_DIR/luks.key added to a
# second keyslot (cryptsetup luksAddKey; the passphrase's keyslot stays),
# `mshim seal` (signed) of it to IT_DIR/root.sealed.
it_luks_provision() {
        IT_LUKS_TPM=$IT_DIR/tpm-host
        IT_LUKS_POLICY=$IT_DIR/policy
        local tp=$IT_LUKS_TPM pol=$IT_LUKS_POLICY
        it_initrd_luks "$IT_KDIR" "$IT_B/it/initrd-luks.img" || { it_fail "$IT_NAME: set-up (LUKS initramfs)"; return 1; }
        it_mkluks "$IT_DIR" "$1" || { it_fail "$IT_NAME: set-up (LUKS volume)"; return 1; }
        printf '%s' "$1" > "$IT_DIR/pass"
        head -c 32 /dev/urandom > "$IT_DIR/luks.key"
        if it_swtpm_host_start "$tp" &&
           "$IT_CLI" policy init --state-dir "$pol" > "$IT_DIR/setup.log" 2>&1 &&
           cryptsetup luksAddKey --batch-mode --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
                --key-file "$IT_DIR/pass" "$IT_DIR/luks.img" "$IT_DIR/luks.key" >> "$IT_DIR/setup.log" 2>&1 &&
           "$IT_CLI" seal --state-dir "$pol" -o "$IT_DIR/root.sealed" < "$IT_DIR/luks.key" >> "$IT_DIR/setup.log" 2>&1; then
                it_pass "$IT_NAME: host: policy init, luksAddKey, mshim seal"
        else
                it_fail "$IT_NAME: host: policy init, luksAddKey, mshim seal"; cat "$IT_DIR/setup.log" >&2; return 1
        fi
        it_swtpm_host_stop "$tp"
}

# it_luks_boot NAME [LOADER_EFI]: a boot dir (it_newboot) with the LUKS
# initramfs in place of the reporting one, starting from the provisioned
# TPM. Prints the directory.
it_luks_boot() {
        local d
        d=$(it_newboot "$@") && cp "$IT_B/it/initrd-luks.img" "$d/esp/initrd.img" &&
                cp -a "$IT_LUKS_TPM/state" "$d/tpm.in" && echo "$d"
}

# it_luks_sealed_esp DIR APPROVAL...: the sealed key and approvals on DIR's
# ESP; the sealed key is $IT_DIR/root.sealed, or SEALED when set.
it_luks_sealed_esp() {
        local e=$1/esp/loader/mshim
        shift
        mkdir -p "$e/approvals" && cp "${SEALED:-$IT_DIR/root.sealed}" "$e/root.sealed" &&
                { [ $# = 0 ] || cp "$@" "$e/approvals/"; }
}

# ---- attestation from the LUKS initramfs (test_attest.sh, test_luks_sb.sh,
# test_predict_shim.sh) -------------------------------------------------------

# it_attest_init TPMDIR OUTDIR: `mshim attest init --out-dir OUTDIR` on the
# host against the swtpm state TPMDIR/state (it_swtpm_host_start), so every
# boot started from a copy of it has the AK (OUTDIR/ak.pub) at 0x81014D41.
it_attest_init() {
        local rc
        mkdir -p "$2" && it_swtpm_host_start "$1" &&
                "$IT_CLI" attest init --out-dir "$2" > "$2/init.log" 2>&1
        rc=$?
        it_swtpm_host_stop "$1"
        [ "$rc" = 0 ] || { cat "$2/init.log" >&2; return 1; }
}

# it_attest_nonce DIR: a fresh nonce in DIR/nonce and on DIR's ESP
# (mshim-test/attest-nonce): the LUKS initramfs then quotes with it.
it_attest_nonce() {
        mkdir -p "$1/esp/mshim-test" && openssl rand -hex 32 > "$1/nonce" &&
                cp "$1/nonce" "$1/esp/mshim-test/attest-nonce"
}

# it_attest_got DIR LABEL: after DIR's boot, the files the guest printed
# between MSHIM-ATTEST-BEGIN and -END (a tar in base64) in DIR/att
# (evidence.json, tt/, err); PASS "IT_NAME: LABEL: the guest's mshim attest
# quote --nonce succeeds, the evidence reaches the host" or FAIL (1).
it_attest_got() {
        local d=$1 n="$IT_NAME: $2: the guest's mshim attest quote --nonce succeeds, the evidence reaches the host"
        mkdir -p "$d/att"
        tr -d '\r' < "$d/serial.log" | sed -n '/^MSHIM-ATTEST-BEGIN$/,/^MSHIM-ATTEST-END$/p' | sed '1d;$d' |
                base64 -d 2>/dev/null | tar xf - -C "$d/att" 2>/dev/null
        if tr -d '\r' < "$d/serial.log" | grep -qx 'MSHIM-ATTEST RC 0' && [ -s "$d/att/evidence.json" ]; then
                it_pass "$n"
        else
                it_fail "$n"
                tr -d '\r' < "$d/serial.log" | grep -a 'MSHIM-\|^mshim' >&2; cat "$d/att/err" >&2 2>/dev/null
                return 1
        fi
}

# it_attest_verify NAME WANT_RC REGEX OUT VERIFY_ARGS...: `mshim verify
# --json VERIFY_ARGS` into OUT (its stderr OUT.err); PASS NAME when it
# exits WANT_RC and REGEX (grep -E) is in OUT or OUT.err (or is empty).
it_attest_verify() {
        local name=$1 want=$2 re=$3 out=$4 rc
        shift 4
        "$IT_CLI" verify --json "$@" > "$out" 2> "$out.err"
        rc=$?
        if [ "$rc" = "$want" ] && { [ -z "$re" ] || cat "$out" "$out.err" | grep -q -E -- "$re"; }; then it_pass "$IT_NAME: $name"
        else it_fail "$IT_NAME: $name (status $rc)"; cat "$out.err" >&2; fi
}

# it_attest_facts NAME VERDICT PYEXPR: PASS NAME when PYEXPR holds of the
# verdict's facts (f: its "facts" object).
it_attest_facts() {
        if python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["facts"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" 2>/dev/null; then it_pass "$IT_NAME: $1"
        else it_fail "$IT_NAME: $1"; cat "$2" >&2; fi
}

# Keylime's own measured-boot engine (an unmodified snapshot, its README:
# `evaluate --import MODULE POLICY REFSTATE EVENTLOG`) with mshim's policy
# module: it_keylime_accepts NAME REFSTATE LOG passes when Keylime says AOK;
# it_keylime_rejects NAME REGEX REFSTATE LOG when it refuses in words
# matching REGEX. Keylime's verdict is in IT_DIR/keylime.verdict.
IT_KEYLIME=${MB_KEYLIME:-$IT_REPO/../shared/oracles/keylime}
[ -d "$IT_KEYLIME" ] || IT_KEYLIME=$IT_REPO/../../shared/oracles/keylime
it_keylime() {
        /usr/bin/python3 "$IT_KEYLIME/evaluate" --import "$IT_REPO/keylime/mshim_policy.py" mshim "$1" "$2" \
                > "$IT_DIR/keylime.verdict" 2>&1
}
it_keylime_accepts() {
        if it_keylime "$2" "$3" && grep -qx AOK "$IT_DIR/keylime.verdict"; then it_pass "$IT_NAME: $1"
        else it_fail "$IT_NAME: $1"; cat "$IT_DIR/keylime.verdict" >&2; fi
}
it_keylime_rejects() {
        if ! it_keylime "$3" "$4" && grep -q -E -- "$2" "$IT_DIR/keylime.verdict"; then it_pass "$IT_NAME: $1"
        else it_fail "$IT_NAME: $1"; cat "$IT_DIR/keylime.verdict" >&2; fi
}

# it_step RC NAME LOG: PASS NAME when RC is 0, else FAIL and LOG.
it_step() { if [ "$1" = 0 ]; then it_pass "$IT_NAME: $2"; else it_fail "$IT_NAME: $2"; cat "$3" >&2; fi; }

# it_luks_has DIR NAME LINE: the guest printed LINE (whole line) on its console.
it_luks_has() {
        if tr -d '\r' < "$1/serial.log" | grep -qxF -- "$3"; then
                it_pass "$IT_NAME: $2"
        else
                it_fail "$IT_NAME: $2: no line '$3'"
                tr -d '\r' < "$1/serial.log" | grep -a 'MSHIM-LUKS\|^mshim:' >&2
        fi
}

# it_luks_booted DIR: it_boot_all's boot of DIR succeeded.
it_luks_booted() {
        if [ "$(cat "$1/boot.rc" 2>/dev/null)" = 0 ]; then it_pass "$IT_NAME: $(basename "$1"): boot"; return 0; fi
        it_fail "$IT_NAME: $(basename "$1"): boot"; return 1
}

# it_luks_unsealed DIR: no passphrase asked, the volume open, the marker read.
it_luks_unsealed() {
        local n
        n=$(basename "$1")
        if tr -d '\r' < "$1/serial.log" | grep -q '^MSHIM-LUKS FALLBACK\|asking for the passphrase'; then
                it_fail "$IT_NAME: $n: unsealed with no passphrase"
                tr -d '\r' < "$1/serial.log" | grep -a 'MSHIM-LUKS\|^mshim:' >&2
        else
                it_pass "$IT_NAME: $n: unsealed with no passphrase"
        fi
        it_luks_has "$1" "$n: the volume opens with the unsealed key" "MSHIM-LUKS UNLOCKED"
        it_luks_has "$1" "$n: and decrypts to the marker" "MSHIM-LUKS MARKER $IT_LUKS_MARKER"
}

# it_luks_fallback A DIR WANT: the keyscript fell back naming exactly the
# PCRs WANT ("9", "5,9,12"), which are also exactly the PCRs of the
# approval (4, 5, 7, 9, 12) that differ between boot A's and DIR's TPM
# (sha256); the typed passphrase still unlocks.
it_luks_fallback() {
        local a=$1 d=$2 want=$3 n line got diff
        n=$(basename "$d")
        line=$(tr -d '\r' < "$d/serial.log" | grep -a '^MSHIM-LUKS FALLBACK ' | head -n1)
        got=$(sed -n 's/^MSHIM-LUKS FALLBACK unseal refused: PCRs\{0,1\} \([0-9,]*\) differs\{0,1\} .*/\1/p' <<<"$line")
        diff=$(python3 - "$IT_REPO/tests/integration" "$a/result" "$d/result" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import oracle
ra, rb = oracle.load_result(sys.argv[2]), oracle.load_result(sys.argv[3])
print(",".join(str(n) for n in (4, 5, 7, 9, 12) if oracle.tpm_pcr(ra, "sha256", n) != oracle.tpm_pcr(rb, "sha256", n)))
PY
)
        if [ -n "$got" ] && [ "$got" = "$want" ] && [ "$diff" = "$want" ]; then
                it_pass "$IT_NAME: $n: falls back naming PCRs $want (the ones that changed)"
        else
                it_fail "$IT_NAME: $n: falls back naming PCRs $want: said '$line', the TPMs differ in '$diff'"
                tr -d '\r' < "$d/serial.log" | grep -a '^mshim:' >&2
        fi
        it_luks_has "$d" "$n: the typed passphrase still unlocks" "MSHIM-LUKS UNLOCKED"
}

# it_swtpm_template: print the directory of a freshly manufactured TPM
# state with IT_BANKS active, made once by swtpm_setup (0.6 s a boot
# otherwise) and kept under $IT_B/it for the swtpm version that made it.
# Boots copy it, so each starts from a TPM no boot has touched; tests that
# need a second, different TPM run swtpm_setup themselves.
it_swtpm_template() {
        local v dir
        v=$(swtpm --version 2>&1 | cksum | cut -d' ' -f1)
        # No comma in the path: swtpm takes it inside a comma-separated option.
        dir=$IT_B/it/swtpm-template.${IT_BANKS//,/-}.$v
        if [ ! -s "$dir/tpm2-00.permall" ]; then
                # Files running side by side may ask at once: one makes it.
                (
                        flock 9
                        [ -s "$dir/tpm2-00.permall" ] && exit 0
                        rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
                                swtpm_setup --tpm2 --tpmstate "$dir.tmp" --pcr-banks "$IT_BANKS" \
                                        --overwrite --logfile "$dir.tmp/setup.log" >/dev/null 2>&1 &&
                                rm -f "$dir.tmp/setup.log" && mv "$dir.tmp" "$dir"
                ) 9> "$IT_B/it/swtpm-template.lock" ||
                        { echo "swtpm_setup failed:" >&2; cat "$dir.tmp/setup.log" >&2; return 1; }
        fi
        echo "$dir"
}

# it_vars_booted: print the variable store a boot starts from when it has
# none of its own (DIR/vars.in.fd): OVMF_VARS itself, or, when that is the
# blank store (no Secure Boot keys), the blank store as the firmware left
# it after one boot of mshim and the test kernel, made once per firmware
# build and kept under $IT_B/it. A machine's store has been booted before:
# the firmware then finds its boot options, console and language variables
# already written, where a never-booted store has it write them all to the
# emulated flash first (about 0.8 s of a 7 s boot under TCG). Every boot
# starting from the same store, one boot's PCRs 1 and 7 still predict the
# next's, and a test that is about a first boot brings its own store.
IT_VARS_MAKING=
it_vars_booted() {
        if [ "$OVMF_VARS" != "$IT_OVMF_VARS_BLANK" ] || [ -n "$IT_VARS_MAKING" ]; then
                echo "$OVMF_VARS"; return 0
        fi
        local v f d
        v=$({ cat "$OVMF_CODE" "$OVMF_VARS"; echo "$IT_CPU"; } | cksum | cut -d' ' -f1)
        f=$IT_B/it/vars-booted.$v.fd
        if [ ! -s "$f" ]; then
                (
                        flock 9
                        [ -s "$f" ] && exit 0
                        # The same boot whichever file asks first: lib.sh's
                        # default ESP (it_newboot), none of the caller's QEMU
                        # options, command line or console.
                        IT_QEMU_EXTRA=() IT_PROGRESS=() IT_STAMP=0 IT_OPTIONS="console=ttyS0 quiet panic=-1"
                        IT_DIR=$(mktemp -d "$IT_B/it/vars-booted.XXXXXX") && d=$(it_newboot boot) && it_mkesp "$d" &&
                                IT_VARS_MAKING=1 it_qemu "$d" >/dev/null 2>&1 &&
                                grep -a -q MSHIM-RESULT-END "$d/serial.log" && cp "$d/vars.fd" "$f.tmp" && mv "$f.tmp" "$f"
                        local rc=$?
                        [ "$rc" = 0 ] && rm -rf "$IT_DIR"
                        exit "$rc"
                ) 9> "$IT_B/it/vars-booted.lock" ||
                        { echo "it_vars_booted: the boot that makes $f failed (kept in $IT_B/it/vars-booted.*)" >&2; return 1; }
        fi
        echo "$f"
}

# it_swtpm_start DIR [keep]: fresh TPM 2.0 state in DIR/tpm with IT_BANKS
# active (or, when DIR/tpm.in exists, a copy of that state directory: a TPM
# provisioned on the host, see it_swtpm_provision), then the QEMU-facing
# daemon on DIR/tpm/sock. With "keep", DIR/tpm/state is served as it is:
# the same TPM after a power cycle (its non-volatile state kept).
it_swtpm_start() {
        local t=$1/tpm
        mkdir -p "$t/state"
        if [ "${2:-}" = keep ]; then
                :
        elif [ -d "$1/tpm.in" ]; then
                rm -rf "$t/state" && cp -a "$1/tpm.in" "$t/state" || return 1
        else
                local tmpl
                tmpl=$(it_swtpm_template) || return 1
                rm -rf "$t/state" && cp -a "$tmpl" "$t/state" || return 1
        fi
        rm -f "$t/sock"
        if ! swtpm socket --tpm2 --tpmstate dir="$t/state" \
                        --ctrl type=unixio,path="$t/sock" \
                        --log file="$t/swtpm.log",level="${IT_SWTPM_LOG_LEVEL:-1}" \
                        --daemon --pid file="$t/pid"; then
                echo "swtpm failed to start" >&2; return 1
        fi
        local i=0
        while [ ! -S "$t/sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        [ -S "$t/sock" ]
}

# it_swtpm_host_start DIR: serve the TPM state DIR/state (made by
# swtpm_setup with IT_BANKS active when absent) to the host, as
# docs/SEALING.md's tests do: DIR/srv, DIR/srv.ctrl, and TPM2TOOLS_TCTI
# pointing at it, so `mshim policy`/`seal` provision it. Stop it with
# it_swtpm_host_stop DIR; a boot started from a copy (DIR/state copied to
# the boot dir's tpm.in) then finds what the host left there.
it_swtpm_host_start() {
        local t=$1
        mkdir -p "$t/state"
        # A TPM of its own, not the boots' template: what the host seals
        # must not load in a boot that did not start from this state.
        if [ ! -s "$t/state/tpm2-00.permall" ] &&
           ! swtpm_setup --tpm2 --tpmstate "$t/state" --pcr-banks "$IT_BANKS" \
                        --overwrite --logfile "$t/setup.log" >/dev/null 2>&1; then
                echo "swtpm_setup failed:" >&2; cat "$t/setup.log" >&2
                return 1
        fi
        rm -f "$t/srv" "$t/srv.ctrl"
        swtpm socket --tpm2 --tpmstate dir="$t/state" --server type=unixio,path="$t/srv" \
                --ctrl type=unixio,path="$t/srv.ctrl" --flags not-need-init,startup-clear \
                --log file="$t/swtpm.log",level=1 --daemon --pid file="$t/pid" || return 1
        local i=0
        while [ ! -S "$t/srv" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        [ -S "$t/srv" ] || return 1
        IT_PIDS="$IT_PIDS $(cat "$t/pid")"
        export TPM2TOOLS_TCTI="swtpm:path=$t/srv"
        unset TCTI TSS2_TCTI
}

it_swtpm_host_stop() {
        swtpm_ioctl --unix "$1/srv.ctrl" -s 2>/dev/null
        local i=0 pid
        pid=$(cat "$1/pid" 2>/dev/null)
        while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        unset TPM2TOOLS_TCTI
}

it_swtpm_stop() {
        local t=$1/tpm pid
        [ -f "$t/pid" ] || return 0
        pid=$(cat "$t/pid" 2>/dev/null)
        if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
                local i=0
                while kill -0 "$pid" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
        fi
        rm -f "$t/pid"
}

# it_console_new FD: what the file open on FD (a boot's serial.log) got
# since the last call, into IT_CON_NEW: whole lines, and the line still
# being written, which IT_CON_PART keeps to be read again next time (set it
# empty before the first call). A NUL byte ends a read and is left out.
IT_CON_PART=
IT_CON_NEW=
it_console_new() {
        local chunk text=$IT_CON_PART LC_ALL=C
        while IFS= read -r -d '' -u "$1" chunk; do text+=$chunk; done
        text+=$chunk
        IT_CON_NEW=$text
        IT_CON_PART=${text##*$'\n'}
}

# it_console_has ERE [i]: a line of IT_CON_NEW matches ERE (as grep -E
# would, line by line; "i": ignoring case).
it_console_has() {
        # Bytes, as grep -a matches them: in a UTF-8 locale bash's regex
        # fails on a console's stray bytes (firmware and shim output).
        local l rc=1 LC_ALL=C
        [ "${2:-}" = i ] && shopt -s nocasematch
        # The whole text first (one regcomp; the lines only when it
        # matches), unless ERE has an anchor: on the whole text ^ and $
        # match only at its ends, not at each line's.
        if [[ $1 == *[\^\$]* ]] || [[ $IT_CON_NEW =~ $1 ]]; then
                while IFS= read -r l; do
                        if [[ $l =~ $1 ]]; then rc=0; break; fi
                done <<< "$IT_CON_NEW"
        fi
        shopt -u nocasematch
        return $rc
}

# it_qemu DIR [--no-tpm] [--stop REGEX] [--timeout S] [--image FILE]
#         [--console SCRIPT]: run the VM until it
# powers off, the time limit passes, or (with --stop) REGEX (grep -E -i)
# appears on the serial console; IT_FALLTHROUGH (boot fell through to the
# UEFI shell) also stops it. The variable store is a copy of DIR/vars.in.fd
# if that exists, else of OVMF_VARS. The boot disk is DIR/esp.img, or FILE
# (e.g. it_mkdisk's DIR/disk.img); DIR/extra-disk.img, when there, a second. With --console, the serial port is a
# unix socket that mok_console.py drives with SCRIPT (typing a passphrase
# after a prompt, say), recording into DIR/serial.log until the report's
# end (MSHIM-RESULT-END); a step that does not match is a failure (1).
# DIR/console.script, when there, is used as if given with --console.
# Returns 0 when QEMU exited by itself or --stop matched,
# 124 on timeout, 125 when the firmware fell back to its shell.
it_qemu() {
        local d=$1; shift
        local tpm=1 stop='' limit=$IT_TIMEOUT image=$d/esp.img console=''
        while [ $# -gt 0 ]; do
                case "$1" in
                --no-tpm) tpm=0 ;;
                --stop) stop=$2; shift ;;
                --timeout) limit=$2; shift ;;
                --image) image=$2; shift ;;
                --console) console=$2; shift ;;
                esac
                shift
        done
        # DIR/console.script, when there, drives the console (it_boot_all).
        [ -z "$console" ] && [ -f "$d/console.script" ] && console=$d/console.script
        local machine=q35,accel=tcg serial="file:$d/serial.log"
        # An SMM build of the firmware needs SMM and a secure pflash.
        it_ovmf_smm "$OVMF_CODE" && machine=q35,smm=on,accel=tcg
        if [ -n "$console" ]; then
                rm -f "$d/serial.sock"
                serial="unix:$d/serial.sock,server=on,wait=on"
        fi
        # shellcheck disable=SC2054 # commas belong to QEMU options
        local args=(-machine "$machine" -cpu "$IT_CPU" -m 512 -smp 1 -display none -monitor none
                -no-reboot -nic none -serial "$serial"
                -drive "if=pflash,format=raw,unit=0,readonly=on,file=$OVMF_CODE"
                -drive "if=pflash,format=raw,unit=1,file=$d/vars.fd"
                -drive "if=none,id=esp,format=raw,file=$image"
                -device virtio-blk-pci,drive=esp,bootindex=1)
        # shellcheck disable=SC2054 # commas belong to QEMU options
        it_ovmf_smm "$OVMF_CODE" && args+=(-global driver=cfi.pflash01,property=secure,value=on)
        # DIR/extra-disk.img, when there: a second virtio disk, after the
        # boot disk (vdb in Linux), never booted from.
        # shellcheck disable=SC2054 # commas belong to QEMU options
        [ -f "$d/extra-disk.img" ] &&
                args+=(-drive "if=none,id=extra,format=raw,file=$d/extra-disk.img" -device virtio-blk-pci,drive=extra)
        # IT_QEMU_EXTRA (an array): more QEMU options, e.g. -rtc base=...
        args+=(${IT_QEMU_EXTRA[@]+"${IT_QEMU_EXTRA[@]}"})
        # DIR/vars.in.fd, when there, is this boot's own store (boots that
        # run side by side from different stores, e.g. test_predict_shim.sh).
        if [ -f "$d/vars.in.fd" ]; then
                cp "$d/vars.in.fd" "$d/vars.fd"
        else
                cp "$(it_vars_booted)" "$d/vars.fd" || return 1
        fi
        : > "$d/serial.log"
        if [ "$tpm" = 1 ]; then
                it_swtpm_start "$d" || return 1
                # shellcheck disable=SC2054
                args+=(-chardev "socket,id=chrtpm,path=$d/tpm/sock"
                        -tpmdev emulator,id=tpm0,chardev=chrtpm -device "$IT_TPM_DEVICE,tpmdev=tpm0")
        fi
        local t0=$SECONDS
        qemu-system-x86_64 "${args[@]}" </dev/null >"$d/qemu.log" 2>&1 &
        local qpid=$! rc=0 m seen= done_at_report=
        IT_PIDS="$IT_PIDS $qpid"
        echo "$qpid" > "$d/qemu.pid"
        # IT_STAMP=1: DIR/serial.stamped, each console line with the seconds
        # since QEMU started (where a boot's time goes: README.md "Testing").
        [ "${IT_STAMP:-0}" = 1 ] && python3 "$IT_REPO/tests/integration/stamp.py" \
                "$d/serial.log" "$d/serial.stamped" "$qpid" &
        if [ -n "$console" ]; then
                python3 "$IT_REPO/tests/integration/mok_console.py" --socket "$d/serial.sock" \
                        --log "$d/serial.log" --script "$console" --until 'MSHIM-RESULT-END' \
                        --deadline "$limit" --timeout "$limit" --until-timeout "$limit" >&2 || rc=1
                # Nothing after the report is needed: the VM is stopped
                # below rather than waited for (its poweroff takes 2 s).
                done_at_report=1
                # A socket-backed UART drains slowly: kernel messages can
                # land inside the report (it_strip_kmsg). The raw log stays.
                cp "$d/serial.log" "$d/serial.raw.log" && it_strip_kmsg "$d/serial.raw.log" "$d/serial.log"
        fi
        # The console is read as it grows, through one descriptor, and
        # matched by bash itself (it_console_new, it_console_has); the pause
        # between two looks is a read that times out. A grep and a sleep
        # process at every look cost about 15 ms of CPU each time on a
        # machine where process start-ups are dear: about 1 s a boot.
        local con tick
        exec {con}<"$d/serial.log" {tick}<> <(:)
        IT_CON_PART=
        while [ "$rc" = 0 ] && [ -z "$done_at_report" ] && kill -0 "$qpid" 2>/dev/null; do
                if [ $((SECONDS - t0)) -ge "$limit" ]; then
                        rc=124; break
                fi
                it_console_new "$con"
                # The report is whole once its end marker is written (the
                # guest syncs before it): stop the VM there, as the guest
                # would power off a second or two later anyway.
                if [ -z "$stop" ] && it_console_has 'MSHIM-RESULT-END'; then
                        done_at_report=1; break
                fi
                if [ -n "$stop" ] && it_console_has "$stop" i; then
                        sleep 1; rc=0; break
                fi
                if [ -n "$IT_FALLTHROUGH" ] && it_console_has "$IT_FALLTHROUGH"; then
                        sleep 1; rc=125; break
                fi
                if [ -n "${IT_PROGRESS:-}" ]; then
                        for m in "${IT_PROGRESS[@]}"; do
                                case "$seen" in *"<${m%%|*}>"*) continue ;; esac
                                if grep -a -q -E "${m%%|*}" "$d/serial.log"; then
                                        seen="$seen<${m%%|*}>"
                                        it_log "  ${m#*|} ($((SECONDS - t0)) s)"
                                fi
                        done
                fi
                read -r -t "$IT_POLL" -u "$tick"
        done
        exec {con}<&- {tick}<&-
        if kill -0 "$qpid" 2>/dev/null; then
                kill "$qpid" 2>/dev/null
        fi
        wait "$qpid" 2>/dev/null
        local qrc=$?
        rm -f "$d/qemu.pid"
        [ "$rc" = 0 ] && [ -z "$stop" ] && [ -z "$done_at_report" ] && [ "$qrc" != 0 ] && rc=$qrc
        echo $((SECONDS - t0)) > "$d/seconds"
        [ "$tpm" = 1 ] && it_swtpm_stop "$d"
        return $rc
}

# it_totp_codes DIR BASE32 BASE_UNIX NAME: pass when the console of boot
# DIR shows at least one "mshim: TOTP CODE for YYYY-MM-DD HH:MM:SS UTC" and
# each is oathtool's code for the secret BASE32 at the time it names, a
# step inside [BASE_UNIX, BASE_UNIX + the boot's length] (the guest's RTC
# started at BASE_UNIX: -rtc base=...).
it_totp_codes() {
        local d=$1 b32=$2 base=$3 name=$4 n=0 bad=0 code when t want
        while read -r code when; do
                n=$((n + 1))
                t=$(date -u -d "$when UTC" +%s)
                want=$(oathtool --totp -b "$b32" --now "$when UTC")
                if [ "$code" != "$want" ]; then
                        bad=1; echo "  code $code for $when, oathtool says $want" >&2
                fi
                if [ "$t" -lt $((base / 30 * 30)) ] || [ "$t" -gt $((base + $(cat "$d/seconds") + 30)) ]; then
                        bad=1; echo "  $when is outside the guest clock's span" >&2
                fi
        done < <(tr -d '\r' < "$d/serial.log" | sed -n 's/^mshim: TOTP \([0-9]\{6\}\) for \(.*\) UTC$/\1 \2/p')
        if [ "$n" -ge 1 ] && [ "$bad" = 0 ]; then
                it_pass "$name: the $n code(s) on the console are oathtool's at the steps they name"
        else
                it_fail "$name: codes on the console ($n) differ from oathtool's"
                tr -d '\r' < "$d/serial.log" | grep -a '^mshim:' >&2
        fi
}

# it_show_serial DIR: print the serial log (last 150 lines) for a failure.
it_show_serial() {
        echo "---- $1/serial.log (last 150 lines) ----" >&2
        tr -d '\r' < "$1/serial.log" | tail -n 150 >&2
        if [ -s "$1/qemu.log" ]; then
                echo "---- $1/qemu.log ----" >&2; cat "$1/qemu.log" >&2
        fi
        echo "---- end ----" >&2
}

# it_boot DIR [--disk LUKS_IMG] [it_qemu options]: ESP image, boot, parse
# the report into DIR/result/. With --disk, the boot disk is it_mkdisk's
# DIR/disk.img (the ESP and LUKS_IMG, or DIR/luks.img when there) instead
# of the bare ESP image.
# Returns non-zero (and prints the serial log) when the boot timed out or
# the report is missing. IT_BOOT_ARGS (an array), when set, comes first.
it_boot() {
        local d=$1; shift
        set -- ${IT_BOOT_ARGS[@]+"${IT_BOOT_ARGS[@]}"} "$@"
        if [ "${1:-}" = --disk ]; then
                # DIR/luks.img, when there, is this boot's own volume.
                it_mkdisk "$d" "$([ -f "$d/luks.img" ] && echo "$d/luks.img" || echo "$2")" ||
                        { echo "it_mkdisk failed" >&2; return 1; }
                shift 2
                set -- --image "$d/disk.img" "$@"
        else
                it_mkesp "$d" || { echo "it_mkesp failed" >&2; return 1; }
        fi
        it_log "booting $(basename "$d") ..."
        it_qemu "$d" "$@"
        local rc=$?
        it_log "boot $(basename "$d") finished in $(cat "$d/seconds") s (status $rc)"
        if [ "$rc" != 0 ]; then
                case $rc in
                124) echo "boot $(basename "$d"): no power-off within the time limit" >&2 ;;
                125) echo "boot $(basename "$d"): firmware fell back to the UEFI shell" >&2 ;;
                *) echo "boot $(basename "$d"): status $rc" >&2 ;;
                esac
                it_show_serial "$d"
                return 1
        fi
        if ! it_oracle parse "$d/serial.log" "$d/result"; then
                it_show_serial "$d"
                return 1
        fi
}

# it_boot_all DIR...: it_boot each DIR (default options), IT_JOBS at a time
# (default: the number of CPUs, at most 4). DIR/boot.rc holds each status;
# returns non-zero when any boot failed. Messages go out per boot, in order.
it_boot_all() {
        local jobs=${IT_JOBS:-$(nproc 2>/dev/null || echo 1)} d running=() rc=0
        [ "$jobs" -gt 4 ] && jobs=4
        for d; do
                ( it_boot "$d" > "$d/boot.out" 2>&1; echo $? > "$d/boot.rc" ) &
                running+=($!)
                if [ "${#running[@]}" -ge "$jobs" ]; then
                        wait "${running[0]}"; running=("${running[@]:1}")
                fi
        done
        wait
        for d; do
                cat "$d/boot.out" >&2
                [ "$(cat "$d/boot.rc" 2>/dev/null)" = 0 ] || rc=1
        done
        return $rc
}

# it_boot_ok DIR: DIR's boot (it_boot_all: DIR/boot.rc) finished and its
# report was parsed.
it_boot_ok() { [ "$(cat "$1/boot.rc" 2>/dev/null)" = 0 ]; }

# it_boot_replays NAME DIR...: for each DIR booted by it_boot_all, PASS or
# FAIL "NAME: BASENAME: boot through mshim reaches the initramfs", and when
# it did, the TPM's PCRs against the event log's replay (it_check_replay).
it_boot_replays() {
        local name=$1 d bn; shift
        for d; do
                bn=$(basename "$d")
                if ! it_boot_ok "$d"; then
                        it_fail "$name: $bn: boot through mshim reaches the initramfs"
                        continue
                fi
                it_pass "$name: $bn: boot through mshim reaches the initramfs"
                it_check_replay "$d" "$name: $bn: TPM PCRs equal the event-log replay"
        done
}

# it_pcrs_file DIR: DIR's PCRs as the guest read them, in the
# "sha256:0=<hex>" form `mshim predict --pcrs` takes.
it_pcrs_file() {
        python3 - "$1/result/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for b in r["banks"]:
    for n, v in r["pcrs"][b].items():
        print("%s:%s=%s" % (b, n, v))
PY
}

# it_predict_check NAME A B PREDICT_JSON: B's booted PCRs 0-15 except 10,
# every bank, equal `mshim predict --json`'s prediction made from A; the
# PCRs it calls changed are exactly those that differ between A and B;
# nothing unpredictable. The events behind each disagreement are shown.
it_predict_check() {
        python3 - "$IT_REPO/tests/integration" "$@" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[1])
import oracle
name, a, d, pj = sys.argv[2:6]
pred = json.load(open(pj))
ra, rb = oracle.load_result(a + "/result"), oracle.load_result(d + "/result")
bad = []
if pred.get("schema") != "mshim-predict/1":
    bad.append("schema %r" % pred.get("schema"))
if pred.get("unpredictable"):
    bad.append("unpredictable: %s" % pred["unpredictable"])
diff = set()
for b in rb["banks"]:
    for n in oracle.CHECKED_PCRS:
        tpm = oracle.tpm_pcr(rb, b, n)
        want = pred["pcrs"].get(b, {}).get(str(n))
        want = bytes.fromhex(want) if want else bytes(len(tpm))
        if want != tpm:
            bad.append("%s PCR %d: predicted %s, booted %s" % (b, n, want.hex(), tpm.hex()))
        if tpm != oracle.tpm_pcr(ra, b, n):
            diff.add(n)
if sorted(diff) != sorted(pred.get("changed", [])):
    bad.append("changed %s, but A and B differ in %s" % (pred.get("changed"), sorted(diff)))
if not diff:
    bad.append("B's PCRs equal A's: the case changed nothing")
# Show the events behind each disagreement.
for n in sorted({int(m.group(1)) for m in (re.match(r"\S+ PCR (\d+):", x) for x in bad) if m}):
    for label, r in (("A", a), ("B", d)):
        for e in oracle.load_log(r + "/result/eventlog.bin"):
            if e.pcr == n and e.type != oracle.EV_NO_ACTION:
                bad.append("  %s PCR %d event %d type 0x%x sha256 %s data %r" % (
                    label, n, e.index, e.type, (e.digests.get("sha256") or b"").hex(), e.data[:48]))
oracle.report(not bad, "%s: PCRs 0-15 except 10 equal the prediction in every bank (changed %s)"
              % (name, sorted(diff)), "\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# it_pcr DIR BANK N: one PCR value reported by the guest.
it_pcr() { it_oracle get "$1/result" "$2" "$3"; }

# it_oracle_cmdline RESULT_DIR: the kernel command line the guest reported.
it_oracle_cmdline() {
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cmdline"])' "$1/result.json"
}

# it_mkgrub CFG OUT: a standalone GRUB (grub-mkstandalone, Debian's
# grub-efi-amd64-bin) with CFG as its memdisk grub.cfg and the modules the
# tests' grub.cfg files use built in (tpm among them: GRUB measures).
it_mkgrub() {
        grub-mkstandalone -O x86_64-efi -o "$2" \
                --modules="part_gpt part_msdos fat linuxefi normal tpm echo search search_fs_file" \
                "boot/grub/grub.cfg=$1"
}

# it_grub_events EVENTLOG NAME CMDLINE PATH=FILE...: GRUB 2.06's own events
# (its tpm module, docs/MEASUREMENTS.md): in PCR 8 EV_IPL events whose data
# is "grub_cmd: <command>" and one "kernel_cmdline: <path> <CMDLINE>", each
# digest over the text after the prefix, without NUL (observed with Debian's
# 2.06); in PCR 9 EV_IPL events per file read,
# data = the path, digest = the file's hash, for each PATH=FILE given.
it_grub_events() {
        python3 - "$IT_REPO/tests/integration" "$@" <<'PY'
import hashlib, sys
sys.path.insert(0, sys.argv[1])
import oracle
log, name, cmdline, files = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
ev = oracle.load_log(log)
def text(e):
    return e.data.rstrip(b"\0").decode("utf-8", "replace")
p8 = [e for e in ev if e.pcr == 8]
p9 = [e for e in ev if e.pcr == 9]
bad = []
cmds = [e for e in p8 if e.type == oracle.EV_IPL and text(e).startswith("grub_cmd: ")]
kcl = [e for e in p8 if e.type == oracle.EV_IPL and text(e).startswith("kernel_cmdline: ")]
if not cmds:
    bad.append("no 'grub_cmd: ' events in PCR 8")
if len(kcl) != 1 or not text(kcl[0]).endswith(" " + cmdline):
    bad.append("want one 'kernel_cmdline: ... %s' in PCR 8, got %s" % (cmdline, [text(e) for e in kcl]))
for e in cmds + kcl:
    body = text(e).split(": ", 1)[1]
    if e.digests.get("sha256") != hashlib.sha256(body.encode()).digest():
        bad.append("PCR 8 %r: digest is not sha256 of the text after the prefix" % text(e))
for pf in files:
    path, f = pf.split("=", 1)
    want = hashlib.sha256(open(f, "rb").read()).digest()
    hits = [e for e in p9 if e.type == oracle.EV_IPL and text(e).endswith(path)]
    if not any(e.digests.get("sha256") == want for e in hits):
        bad.append("PCR 9: no EV_IPL event for %s with sha256 of the file; PCR 9: %s"
                   % (path, [(hex(e.type), text(e)[:60]) for e in p9]))
oracle.report(not bad, name + ": GRUB's PCR 8 commands/kernel_cmdline and PCR 9 file events", "\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# it_ovmf_smm CODE: true when the firmware file CODE is one of Debian's SMM
# builds (OVMF_CODE*.secboot.fd, or a link to one such as .ms.fd), which
# the machine must give SMM and a secure pflash (it_qemu,
# it_qemu_sb_start).
it_ovmf_smm() {
        case $(readlink -f "$1") in *.secboot.fd) return 0 ;; esac
        return 1
}

# it_secure_boot_on [VARS]: the following it_qemu calls boot OVMF with
# Secure Boot enforced: IT_SECURE_BOOT=1, OVMF_CODE = IT_SB_CODE or
# IT_OVMF_CODE_SB (this file's top: with SMM or without), OVMF_VARS = VARS
# or IT_SB_VARS (a store with keys enrolled, e.g. by it_sb_keys; required).
it_secure_boot_on() {
        local vars=${1:-${IT_SB_VARS:-}}
        if [ -z "$vars" ] || [ ! -f "$vars" ]; then
                echo "it_secure_boot_on: no variable store with keys (VARS or IT_SB_VARS)" >&2
                return 1
        fi
        IT_SECURE_BOOT=1
        OVMF_CODE=${IT_SB_CODE:-$IT_OVMF_CODE_SB}
        OVMF_VARS=$vars
}

# The SignatureOwner it_sb_keys enrolls db with (and the authority events
# in PCR 7 then carry).
IT_SB_OWNER=${IT_SB_OWNER:-6d736869-6d00-4000-8000-7465737464b0}

# it_sb_keys DIR: the project's own Secure Boot keys, made with OpenSSL
# (RSA-2048, SHA-256, self-signed): DIR/{pk,kek,db}.{key,pem}, DIR/db.der,
# and DIR/other.{key,pem}, a key in no database. DIR/sb.fd is a copy of
# IT_OVMF_VARS_BLANK with PK, KEK and db enrolled by `mshim vars enroll
# --secure-boot` (db owner IT_SB_OWNER); DIR/nosb.fd the same keys without
# --secure-boot (SecureBootEnable 0: images are not checked).
it_sb_keys() {
        local k=$1 n vars=${IT_SB_BASE_VARS:-$IT_OVMF_VARS_BLANK}
        mkdir -p "$k"
        for n in pk kek db other; do
                openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 3650 \
                        -subj "/CN=mshim integration test $n key/" \
                        -keyout "$k/$n.key" -out "$k/$n.pem" 2>/dev/null || return 1
        done
        openssl x509 -in "$k/db.pem" -outform DER -out "$k/db.der" &&
        "$IT_CLI" vars enroll "$vars" --pk "$k/pk.pem" --kek "$k/kek.pem" --db "$k/db.pem" \
                --owner "$IT_SB_OWNER" --secure-boot -o "$k/sb.fd" >"$k/enroll.log" 2>&1 &&
        "$IT_CLI" vars enroll "$vars" --pk "$k/pk.pem" --kek "$k/kek.pem" --db "$k/db.pem" \
                --owner "$IT_SB_OWNER" -o "$k/nosb.fd" >>"$k/enroll.log" 2>&1 ||
                { cat "$k/enroll.log" >&2; return 1; }
}

# it_sb_setup NAME KEYDIR: what a Secure Boot boot with the project's own
# keys needs (mshim, the kernel, the CLI, OVMF's secboot firmware,
# sbsigntool), the keys in KEYDIR (it_sb_keys) and Secure Boot on with
# KEYDIR/sb.fd (it_secure_boot_on); a failure is reported under NAME.
it_sb_setup() {
        local name=$1 k=$2
        if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$IT_OVMF_CODE_SB" \
                        "$IT_OVMF_VARS_BLANK" ||
           ! command -v sbattach >/dev/null || ! command -v sbverify >/dev/null; then
                it_fail "$name: prerequisites (ovmf, sbsigntool; make; make deps)"; return 1
        fi
        it_sb_keys "$k" || { it_fail "$name: set-up (keys, mshim vars enroll)"; return 1; }
        it_secure_boot_on "$k/sb.fd" || { it_fail "$name: set-up (Secure Boot)"; return 1; }
}

# it_sb_sign [--keep] IN OUT KEYDIR NAME: OUT = IN signed by `mshim sign`
# with KEYDIR/NAME.{key,pem} (e.g. db, other), after every signature IN
# had was removed (sbattach), unless --keep: then the new signature is
# appended to IN's. NAME "none": OUT = IN without any signature.
it_sb_sign() {
        local keep=0
        [ "$1" = --keep ] && { keep=1; shift; }
        local tmp=$2.in k=$3 n=$4
        cp "$1" "$tmp" || return 1
        if [ "$keep" = 0 ]; then
                while sbverify --list "$tmp" 2>/dev/null | grep -q '^signature [0-9]'; do
                        sbattach --remove "$tmp" >/dev/null 2>&1 || return 1
                done
        fi
        if [ "$n" = none ]; then
                mv "$tmp" "$2"; return
        fi
        "$IT_CLI" sign --key "$k/$n.key" --cert "$k/$n.pem" -o "$2" "$tmp" >"$2.log" 2>&1 ||
                { cat "$2.log" >&2; return 1; }
        rm -f "$tmp" "$2.log"
}

# it_sb_update_files KEYDIR SHA256_HEX: the Secure Boot updates a vendor
# ships, built here from the UEFI spec (2.10, 32.4.1 and 8.2.2), not by
# mshim, for `mshim predict --db-append` / `--dbx-append`
# (test_luks_sb.sh):
#   KEYDIR/db.esl    one EFI_SIGNATURE_LIST (X.509, owner IT_SB_OWNER) of
#                    KEYDIR/other.pem (it_sb_keys; also written as other.der)
#   KEYDIR/dbx.auth  an EFI_VARIABLE_AUTHENTICATION_2 payload: EFI_TIME,
#                    WIN_CERTIFICATE_UEFI_GUID with a PKCS#7 signature by
#                    the KEK key, then an EFI_CERT_SHA256 list (owner
#                    IT_SB_OWNER) of the digest SHA256_HEX
it_sb_update_files() {
        local k=$1
        openssl x509 -in "$k/other.pem" -outform DER -out "$k/other.der" &&
        python3 - "$k" "$IT_SB_OWNER" "$2" <<'PY'
import struct, subprocess, sys, uuid
k, owner, h = sys.argv[1], uuid.UUID(sys.argv[2]).bytes_le, bytes.fromhex(sys.argv[3])
X509 = uuid.UUID("a5c059a1-94e4-4aa7-87b5-ab155c2bf072").bytes_le
SHA256 = uuid.UUID("c1c41626-504c-4092-aca9-41f936934328").bytes_le
PKCS7 = uuid.UUID("4aafd29d-68df-49ee-8aa9-347d375665a7").bytes_le
SECDB = uuid.UUID("d719b2cb-3d3a-4596-a3bc-dad00e67656f").bytes_le

def esl(t, sig):   # EFI_SIGNATURE_LIST: type, ListSize, HeaderSize 0, SignatureSize, owner + data
    return t + struct.pack("<III", 28 + 16 + len(sig), 0, 16 + len(sig)) + owner + sig

open(k + "/db.esl", "wb").write(esl(X509, open(k + "/other.der", "rb").read()))
lists = esl(SHA256, h)
# EFI_TIME 2026-01-02 03:04:05, Pad1/Nanosecond/TimeZone/Daylight/Pad2 zero.
ts = struct.pack("<HBBBBBBIhBB", 2026, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0)
# What SetVariable verifies: name, vendor GUID, attributes, TimeStamp, data.
attrs = 0x1 | 0x2 | 0x4 | 0x20 | 0x40   # NV, BS, RT, time-based auth, append
signed = "dbx".encode("utf-16-le") + SECDB + struct.pack("<I", attrs) + ts + lists
open(k + "/dbx.tbs", "wb").write(signed)
p7 = subprocess.run(["openssl", "smime", "-sign", "-binary", "-noattr", "-md", "sha256", "-outform", "DER",
                     "-signer", k + "/kek.pem", "-inkey", k + "/kek.key", "-in", k + "/dbx.tbs"],
                    capture_output=True, check=True).stdout
wc = struct.pack("<IHH", 24 + len(p7), 0x0200, 0x0EF1) + PKCS7 + p7
open(k + "/dbx.auth", "wb").write(ts + wc + lists)
PY
}

# it_sb_pcr7 RESULT VARS DB_DER NAME: PCR 7 of a Secure Boot boot from the
# store VARS (it_sb_keys) holds exactly what the firmware logs: the
# configuration (SecureBoot = 1, PK, KEK, db, dbx: each event's data the
# variable's data in VARS, dbx empty when absent), one separator, then one
# EV_EFI_VARIABLE_AUTHORITY: the db entry (IT_SB_OWNER + DB_DER) that
# verified every image; each event's digests are the hashes of its data,
# and these events replay to the TPM's PCR 7 in every bank.
it_sb_pcr7() {
        local r=$1 vars=$2 der=$3 name=$4 v
        for v in PK KEK db dbx; do
                "$IT_CLI" vars get "$vars" "$v" -o "$r/var-$v.bin" >/dev/null 2>&1 || : > "$r/var-$v.bin"
        done
        python3 - "$IT_REPO/tests/integration" "$r" "$der" "$IT_SB_OWNER" "$name" <<'PY'
import struct, subprocess, sys, uuid
sys.path.insert(0, sys.argv[1])
import oracle
r, der, owner, name = sys.argv[2], open(sys.argv[3], "rb").read(), uuid.UUID(sys.argv[4]).bytes_le, sys.argv[5]
res = oracle.load_result(r)
ev = oracle.load_log(r + "/eventlog.bin")
GLOBAL, SECDB = oracle.GUID_GLOBAL, oracle.GUID_SECDB
EV_VAR_CONFIG, EV_VAR_AUTH = oracle.EV_EFI_VARIABLE_DRIVER_CONFIG, oracle.EV_EFI_VARIABLE_AUTHORITY
bad = []

def var(e):
    nl, dl = struct.unpack_from("<QQ", e.data, 16)
    return e.data[:16], e.data[32:32 + 2 * nl].decode("utf-16-le", "replace"), e.data[32 + 2 * nl:32 + 2 * nl + dl]

p7 = [e for e in ev if e.pcr == 7]
for e in p7:
    sys.stderr.write("  PCR 7 event %d: %s %s\n" % (e.index, hex(e.type),
                     var(e)[1] if e.type in (EV_VAR_CONFIG, EV_VAR_AUTH) else e.data[:8].hex()))
# Only the firmware's event types, in its order: the configuration, then
# the separator, then the authorities.
types = [e.type for e in p7]
seps = [i for i, t in enumerate(types) if t == oracle.EV_SEPARATOR]
if len(seps) != 1:
    bad.append("PCR 7: %d separators, want 1" % len(seps))
else:
    s = seps[0]
    if any(t != EV_VAR_CONFIG for t in types[:s]) or any(t != EV_VAR_AUTH for t in types[s + 1:]):
        bad.append("PCR 7: want EV_EFI_VARIABLE_DRIVER_CONFIG..., EV_SEPARATOR, EV_EFI_VARIABLE_AUTHORITY...; got %s"
                   % [hex(t) for t in types])
# Configuration: SecureBoot (enabled), PK, KEK, db, dbx, each the variable's
# data as the store held it (dbx absent: empty), digest = hash of the event data.
want = [(GLOBAL, "SecureBoot", b"\x01")] + [(GLOBAL, n, open("%s/var-%s.bin" % (r, n), "rb").read())
                                          for n in ("PK", "KEK")] + \
       [(SECDB, n, open("%s/var-%s.bin" % (r, n), "rb").read()) for n in ("db", "dbx")]
# What `mshim vars enroll` wrote must be, independently of mshim, one
# EFI_SIGNATURE_LIST per key (oracle.x509_esl).
keydir = sys.argv[3].rsplit("/", 1)[0]
for n, key in (("PK", "pk"), ("KEK", "kek"), ("db", "db")):
    kder = subprocess.run(["openssl", "x509", "-in", "%s/%s.pem" % (keydir, key), "-outform", "DER"],
                          capture_output=True, check=True).stdout
    if open("%s/var-%s.bin" % (r, n), "rb").read() != oracle.x509_esl(kder, owner):
        bad.append("%s in the store is not the EFI_SIGNATURE_LIST of %s.pem" % (n, key))
got = [var(e) for e in p7 if e.type == EV_VAR_CONFIG]
if got != want:
    bad.append("PCR 7 configuration: got %s, want %s"
               % ([(n, len(d), d[:1].hex() if n == "SecureBoot" else "") for g, n, d in got],
                  [(n, len(d), d[:1].hex() if n == "SecureBoot" else "") for g, n, d in want]))
for e in p7:
    if e.type in (EV_VAR_CONFIG, EV_VAR_AUTH):
        for b, dg in e.digests.items():
            if dg != oracle.H(b, e.data):
                bad.append("PCR 7 event %d: %s digest is not the hash of its data" % (e.index, b))
# The authority: exactly one, the db entry that verified mshim and the kernel.
auth = [var(e) for e in p7 if e.type == EV_VAR_AUTH]
if auth != [(SECDB, "db", owner + der)]:
    bad.append("PCR 7 authorities: got %s, want one db entry = owner %s + the DER of db.pem (%d bytes)"
               % ([(n, len(d), d[:16].hex()) for g, n, d in auth], owner.hex(), len(der)))
# PCR 7 replays from exactly these events, in every bank.
rep = oracle.replay(p7, res["banks"])
for b in res["banks"]:
    tv, rv = oracle.tpm_pcr(res, b, 7), rep[b].get(7, oracle.zeros(b))
    if rv != tv:
        bad.append("PCR 7 %s: TPM %s, replay of the events above %s" % (b, tv.hex(), rv.hex()))
oracle.report(not bad, name, "\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# ---- Debian's signed shim in front of mshim (test_shim.sh, test_mokmanager.sh)

IT_SHIM=${IT_SHIM:-$IT_EFIROOT/usr/lib/shim/shimx64.efi.signed}
IT_MM=${IT_MM:-$IT_EFIROOT/usr/lib/shim/mmx64.efi.signed}

# it_shim_keys DIR: DIR/mok.{key,pem,der}, the test MOK, and
# DIR/other.{key,pem}, a key nobody trusts (RSA-2048, SHA-256).
it_shim_keys() {
        local k=$1 n
        mkdir -p "$k"
        for n in mok other; do
                openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 3650 \
                        -subj "/CN=mshim integration test $n key/" \
                        -keyout "$k/$n.key" -out "$k/$n.pem" 2>/dev/null || return 1
        done
        openssl x509 -in "$k/mok.pem" -outform DER -out "$k/mok.der"
}

# it_shim_esp NAME KEYDIR: a boot dir (it_newboot) whose ESP holds
#   /EFI/BOOT/BOOTX64.EFI  Debian's Microsoft-signed shim
#   /EFI/BOOT/mmx64.efi    Debian's signed MokManager
#   /EFI/BOOT/grubx64.efi  mshimx64.efi signed with KEYDIR/mok.key
# and mshim's loader config, Debian's signed kernel and the test initrd.
it_shim_esp() {
        local d k=$2
        d=$(it_newboot "$1") || return 1
        cp "$IT_SHIM" "$d/esp/EFI/BOOT/BOOTX64.EFI" &&
                cp "$IT_MM" "$d/esp/EFI/BOOT/mmx64.efi" &&
                "$IT_CLI" sign --key "$k/mok.key" --cert "$k/mok.pem" \
                        -o "$d/esp/EFI/BOOT/grubx64.efi" "$IT_EFI" >"$d/sign.log" 2>&1 ||
                { cat "$d/sign.log" >&2; return 1; }
        echo "$d"
}

# it_shim_resign IN OUT KEY CERT: OUT = IN with every signature removed,
# then signed with KEY/CERT only.
it_shim_resign() {
        local tmp=$2.unsigned
        cp "$1" "$tmp" || return 1
        while sbverify --list "$tmp" 2>/dev/null | grep -q '^signature [0-9]'; do
                sbattach --remove "$tmp" >/dev/null 2>&1 || return 1
        done
        sbsign --key "$3" --cert "$4" --output "$2" "$tmp" >/dev/null 2>&1 && rm -f "$tmp"
}

# it_shim_events EVENTLOG NAME MOKLIST MOK_DER SHIM MSHIM KERNEL: what a boot
# firmware -> shim 16 -> mshim -> kernel logs (observed with Debian's
# 16.1 build, docs/MOK.md); MOKLIST is the MokList variable's data as the
# store held it at boot (`mshim vars get`), MOK_DER the certificate mshim
# was signed with. Checks:
#  - PCR 4: exactly one EV_EFI_BOOT_SERVICES_APPLICATION per image, shim
#    (by the firmware), mshim and the kernel (by shim), with Authenticode
#    sha256 digests, and nothing else but the firmware's EV_EFI_ACTION and
#    separator (mshim adds no PCR 4 event);
#  - PCR 14: shim's EV_IPL "MokList" = sha256(ESL of shim's built-in vendor
#    certificate || MOKLIST), "MokListX" = sha256(shim's built-in vendor dbx),
#    "MokListTrusted", once each, nothing else;
#  - PCR 7: every EV_EFI_VARIABLE_AUTHORITY has digest sha256(event data);
#    shim's "MokListRT" authority carrying MOK_DER once, before mshim's PCR 4
#    event; the one carrying shim's vendor certificate once, before the
#    kernel's; besides them only the firmware's db authority (for shim) and
#    shim's SbatLevel; no other PCR 7 event types (mshim adds none).
it_shim_events() {
        python3 -B - "$IT_REPO/tests/integration" "$@" <<'PY'
import hashlib, struct, sys, uuid
sys.path.insert(0, sys.argv[1])
import oracle
log, name, moklist, mokder, shim, mshim, kernel = sys.argv[2:9]
ev = oracle.load_log(log)
bad = []
SHIM_GUID = oracle.GUID_SHIM
EV_EFI_ACTION, EV_VAR_CONFIG, EV_VAR_AUTH = oracle.EV_EFI_ACTION, oracle.EV_EFI_VARIABLE_DRIVER_CONFIG, oracle.EV_EFI_VARIABLE_AUTHORITY

vendor_cert, vendor_dbx = oracle.shim_vendor_cert(shim)
mok = open(mokder, "rb").read()

# PCR 4
p4 = [e for e in ev if e.pcr == 4]
apps = [e for e in p4 if e.type == oracle.EV_EFI_BOOT_SERVICES_APPLICATION]
want = [oracle.authenticode(open(p, "rb").read()) for p in (shim, mshim, kernel)]
if [e.digests.get("sha256") for e in apps] != want:
    bad.append("PCR 4 applications: logged %s, want shim, mshim, kernel %s"
               % ([(e.digests.get("sha256") or b"").hex()[:16] for e in apps], [w.hex()[:16] for w in want]))
other = [hex(e.type) for e in p4 if e.type not in (oracle.EV_EFI_BOOT_SERVICES_APPLICATION,
                                                   oracle.EV_SEPARATOR, EV_EFI_ACTION)]
if other:
    bad.append("PCR 4: unexpected event types %s" % other)

# PCR 14
p14 = [e for e in ev if e.pcr == 14]
def x509_esl(der):
    """A one-certificate EFI_SIGNATURE_LIST owned by shim, built here
    independently of mshim vars."""
    return oracle.x509_esl(der, SHIM_GUID)

esl = x509_esl(vendor_cert)
# MokList as `mshim vars add-mok` stored it must be exactly the MOK's list.
if open(moklist, "rb").read() != x509_esl(mok):
    bad.append("MokList in the store is not one EFI_SIGNATURE_LIST of the MOK certificate")
expect14 = {b"MokList\0": hashlib.sha256(esl + x509_esl(mok)).digest(),
            b"MokListX\0": hashlib.sha256(vendor_dbx).digest(),
            b"MokListTrusted\0": None}
got14 = [e.data for e in p14]
if sorted(got14) != sorted(expect14) or any(e.type != oracle.EV_IPL for e in p14):
    bad.append("PCR 14 events: %s, want one EV_IPL each for %s" % ([(hex(e.type), e.data) for e in p14], list(expect14)))
for e in p14:
    w = expect14.get(e.data)
    if w is not None and e.digests.get("sha256") != w:
        bad.append("PCR 14 %r: digest %s, predicted %s" % (e.data, e.digests.get("sha256", b"").hex(), w.hex()))

# PCR 7
def var(e):
    nl, dl = struct.unpack_from("<QQ", e.data, 16)
    return e.data[:16], e.data[32:32 + 2 * nl].decode("utf-16-le", "replace"), e.data[32 + 2 * nl:]

p7 = [e for e in ev if e.pcr == 7]
for e in p7:
    if e.type not in (EV_VAR_CONFIG, EV_VAR_AUTH, oracle.EV_SEPARATOR):
        bad.append("PCR 7: unexpected event %d type %s" % (e.index, hex(e.type)))
    if e.type == EV_VAR_AUTH and e.digests.get("sha256") != hashlib.sha256(e.data).digest():
        bad.append("PCR 7 event %d: digest is not sha256 of the event data" % e.index)
auth = [(e, *var(e)) for e in p7 if e.type == EV_VAR_AUTH]
def by_cert(cert):
    return [e for e, g, n, d in auth if g == SHIM_GUID and n == "MokListRT" and d[16:] == cert]
idx = {e.digests.get("sha256"): e.index for e in apps}
for label, cert, image in (("the MOK", mok, want[1]), ("shim's vendor certificate", vendor_cert, want[2])):
    hits = by_cert(cert)
    if len(hits) != 1:
        bad.append("PCR 7: %d MokListRT authority events for %s, want 1" % (len(hits), label))
    elif image in idx and hits[0].index > idx[image]:
        bad.append("PCR 7: authority for %s logged after the image it verified" % label)
DB_GUID = oracle.GUID_SECDB
kinds = sorted((g == SHIM_GUID and "shim" or g == DB_GUID and "security" or "other", n) for e, g, n, d in auth)
want7 = sorted([("security", "db"), ("shim", "SbatLevel"), ("shim", "MokListRT"), ("shim", "MokListRT")])
if kinds != want7:
    bad.append("PCR 7 authorities %s, want exactly %s (firmware: db for shim; shim: SbatLevel, MOK, vendor)"
               % (kinds, want7))
sys.stderr.write("  PCR 7 authorities: %s\n" % [(n, len(d)) for e, g, n, d in auth])
oracle.report(not bad, name + ": shim's PCR 4/7/14 events (shim, mshim, kernel once each in PCR 4; MokList/MokListX/MokListTrusted; MOK and vendor authorities)",
              "\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# it_qemu_sb_start DIR CODE ID DISK MEM SMP [OPTION...]: QEMU started in the
# background as the Secure Boot VMs driven over their serial console are
# (it_qemu_console; tests/debian/lib.sh's deb_boot has the same options):
# q35 (with SMM and a secure pflash when CODE is an SMM build:
# it_ovmf_smm) booting CODE with DIR/vars.fd, MEM MiB and SMP
# CPUs, no network, the serial port on the unix socket DIR/serial.sock
# (QEMU waits for its client), DISK the first virtio disk (drive ID) and
# the boot device, the swtpm it_swtpm_start started for DIR, then OPTIONs.
# Its pid in IT_QEMU_PID, DIR/qemu.pid and IT_PIDS; its output in
# DIR/qemu.log.
it_qemu_sb_start() {
        local d=$1 code=$2 id=$3 disk=$4 mem=$5 smp=$6; shift 6
        local machine=q35,accel=tcg smm=()
        # shellcheck disable=SC2054 # commas belong to QEMU options
        it_ovmf_smm "$code" && machine=q35,smm=on,accel=tcg smm=(-global driver=cfi.pflash01,property=secure,value=on)
        # shellcheck disable=SC2054 # commas belong to QEMU options
        local args=(-machine "$machine" -m "$mem" -smp "$smp" -display none -monitor none
                "${smm[@]}" -nic none
                -serial "unix:$d/serial.sock,server=on,wait=on"
                -drive "if=pflash,format=raw,unit=0,readonly=on,file=$code"
                -drive "if=pflash,format=raw,unit=1,file=$d/vars.fd"
                -drive "if=none,id=$id,format=raw,file=$disk"
                -device "virtio-blk-pci,drive=$id,bootindex=1"
                -chardev "socket,id=chrtpm,path=$d/tpm/sock"
                -tpmdev emulator,id=tpm0,chardev=chrtpm -device "$IT_TPM_DEVICE,tpmdev=tpm0" "$@")
        command qemu-system-x86_64 "${args[@]}" </dev/null >"$d/qemu.log" 2>&1 &
        IT_QEMU_PID=$!
        IT_PIDS="$IT_PIDS $IT_QEMU_PID"
        echo "$IT_QEMU_PID" > "$d/qemu.pid"
}

# it_qemu_console DIR SCRIPT [mok_console.py options]: boot DIR/esp.img (it
# must exist) with Secure Boot (IT_SB_CODE or IT_OVMF_CODE_SB, with SMM
# and a secure pflash when an SMM build), DIR/vars.fd as the variable store (copied from
# OVMF_VARS first when missing, then kept: the firmware's changes stay in
# it) and swtpm, the serial port on a unix socket driven by mok_console.py
# running SCRIPT; DIR/serial.log records everything. Unlike it_qemu the VM
# may reset (no -no-reboot): a reset restarts the firmware in the same QEMU
# with the same store and ESP. Returns mok_console.py's status (0: every step
# and --until matched); QEMU is stopped afterwards in any case.
it_qemu_console() {
        local d=$1 script=$2; shift 2
        local code=${IT_SB_CODE:-$IT_OVMF_CODE_SB}
        [ -f "$d/vars.fd" ] || cp "$OVMF_VARS" "$d/vars.fd" || return 1
        rm -f "$d/serial.sock"
        : > "$d/serial.log"
        it_swtpm_start "$d" || return 1
        local t0=$SECONDS rc
        it_qemu_sb_start "$d" "$code" esp "$d/esp.img" 512 1
        python3 "$IT_REPO/tests/integration/mok_console.py" --socket "$d/serial.sock" \
                --log "$d/serial.log" --script "$script" "$@"
        rc=$?
        kill "$IT_QEMU_PID" 2>/dev/null
        wait "$IT_QEMU_PID" 2>/dev/null
        rm -f "$d/qemu.pid"
        echo $((SECONDS - t0)) > "$d/seconds"
        it_swtpm_stop "$d"
        return $rc
}

# it_strip_kmsg IN OUT: OUT = the serial log IN without the kernel's console
# messages ("[    2.936113] reboot: Power down" up to its line end). The
# test initramfs powers off right after echoing its report; when the UART
# drains slowly (a socket chardev, as it_qemu_console uses), the kernel's
# own "Power down" line can land inside the report's base64 lines. The
# report is checked afterwards (EVENTLOG-SIZE, PCR replay), so a wrong cut
# shows up as a failure, never as a pass.
it_strip_kmsg() {
        python3 -c 'import re, sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(re.sub(rb"\[ *[0-9]+\.[0-9]{6}\] [^\r\n]*\r?\n", b"", d))' "$1" "$2"
}

# ---- Debian's GRUB behind shim and mshim (test_shim.sh case 3) ----------------

# it_shim_grub_events EVENTLOG NAME SHIM MSHIM GRUB KERNEL MOK_DER: what a
# boot firmware -> shim 16 -> mshim -> (an `efi` entry) Debian's signed GRUB
# 2.06 -> Debian's signed kernel logs, with shim's SHIM_LOCK in charge
# (observed with Debian's shim 16.1 and GRUB 2.06-13+deb12u2; docs/MOK.md).
# Checks:
#  - PCR 4: the EV_EFI_BOOT_SERVICES_APPLICATION events are, in this order,
#    shim (device path ...\EFI\BOOT\BOOTX64.EFI: the firmware's), mshim
#    (\EFI\BOOT\grubx64.efi) and GRUB (\EFI\debian\grubx64.efi: shim's
#    LoadImage hook, as mshim loaded it), then the kernel exactly twice,
#    each with an empty device path, a link-time address of 0, the kernel
#    file's length and a different image address (two buffers): shim's
#    SHIM_LOCK Verify, called by GRUB's verifier and again by linuxefi;
#    GRUB enters the kernel through the EFI handover protocol, so no
#    LoadImage (shim's hook or the firmware's) measures it. Every digest is
#    the image's Authenticode hash in every bank the log carries; besides
#    these only the firmware's EV_EFI_ACTION and separator: mshim adds no
#    PCR 4 event;
#  - PCR 7: the authorities are exactly the firmware's db (for shim), shim's
#    SbatLevel, shim's MokListRT with MOK_DER (logged before mshim's PCR 4
#    event) and shim's MokListRT with its vendor certificate (once, before
#    GRUB's PCR 4 event: it verified GRUB and the kernel); no other PCR 7
#    event types;
#  - PCR 14: shim's MokList, MokListX, MokListTrusted, once each.
it_shim_grub_events() {
        python3 -B - "$IT_REPO/tests/integration" "$@" <<'PY'
import hashlib, os, struct, sys, uuid
sys.path.insert(0, sys.argv[1])
import oracle
log, name, shim, mshim, grub, kernel, mokder = sys.argv[2:9]
ev = oracle.load_log(log)
bad = []
SHIM_GUID, DB_GUID = oracle.GUID_SHIM, oracle.GUID_SECDB
EV_EFI_ACTION, EV_VAR_CONFIG, EV_VAR_AUTH = oracle.EV_EFI_ACTION, oracle.EV_EFI_VARIABLE_DRIVER_CONFIG, oracle.EV_EFI_VARIABLE_AUTHORITY

def image_event(e):
    """UEFI_IMAGE_LOAD_EVENT: (address, length, link-time address, file path text, device path length)."""
    addr, length, link, dplen = struct.unpack_from("<QQQQ", e.data, 0)
    dp, o, path = e.data[32:32 + dplen], 0, ""
    while o + 4 <= len(dp):
        t, st, ln = dp[o], dp[o + 1], struct.unpack_from("<H", dp, o + 2)[0]
        if ln < 4:
            break
        if t == 4 and st == 4:                   # media file path node
            path += dp[o + 4:o + ln].decode("utf-16-le", "replace").rstrip("\0")
        o += ln
    return addr, length, link, path, dplen

p4 = [e for e in ev if e.pcr == 4]
apps = [e for e in p4 if e.type == oracle.EV_EFI_BOOT_SERVICES_APPLICATION]
files = [("shim", shim), ("mshim", mshim), ("GRUB", grub), ("kernel", kernel), ("kernel", kernel)]
banks = sorted({b for e in apps for b in e.digests})
auth = {p: {b: oracle.authenticode(open(p, "rb").read(), b) for b in banks} for p in (shim, mshim, grub, kernel)}
def who(e):
    return [n for n, p in files[:4] if auth[p].get("sha256") == e.digests.get("sha256")] or ["?"]
seen = [(who(e)[0], image_event(e)) for e in apps]
for n, (addr, length, link, path, dplen) in seen:
    sys.stderr.write("  PCR 4: %-6s at 0x%x, %d bytes, link-time 0x%x, device path %d bytes %r\n"
                     % (n, addr, length, link, dplen, path))
if [n for n, _ in seen] != [n for n, _ in files]:
    bad.append("PCR 4 applications: %s, want shim, mshim, GRUB, kernel, kernel" % [n for n, _ in seen])
else:
    for e, (n, p) in zip(apps, files):
        for b in banks:
            if e.digests.get(b) != auth[p][b]:
                bad.append("PCR 4 %s: %s digest is not its Authenticode hash" % (n, b))
    paths = [x[3] for _, x in seen]
    for i, want in enumerate(("\\EFI\\BOOT\\BOOTX64.EFI", "\\EFI\\BOOT\\grubx64.efi", "\\EFI\\debian\\grubx64.efi")):
        if not paths[i].lower().endswith(want.lower()):
            bad.append("PCR 4 %s: device path %r, want ...%s" % (files[i][0], paths[i], want))
    ksize = os.path.getsize(kernel)
    k = [x for _, x in seen[3:]]
    if any(dplen != 0 or link != 0 or length != ksize for addr, length, link, path, dplen in k):
        bad.append("PCR 4 kernel events: want an empty device path, link-time address 0 and length %d "
                   "(shim's Verify of GRUB's buffer), got %s" % (ksize, k))
    if k[0][0] == k[1][0]:
        bad.append("PCR 4 kernel events: the same image address twice (want two buffers)")
other = [hex(e.type) for e in p4 if e.type not in (oracle.EV_EFI_BOOT_SERVICES_APPLICATION,
                                                   oracle.EV_SEPARATOR, EV_EFI_ACTION)]
if other:
    bad.append("PCR 4: unexpected event types %s" % other)

# PCR 14: shim's three, once each.
p14 = sorted((hex(e.type), e.data) for e in ev if e.pcr == 14)
if p14 != sorted((hex(oracle.EV_IPL), n) for n in (b"MokList\0", b"MokListX\0", b"MokListTrusted\0")):
    bad.append("PCR 14 events: %s, want shim's MokList, MokListX, MokListTrusted" % p14)

# PCR 7
def var(e):
    nl, dl = struct.unpack_from("<QQ", e.data, 16)
    return e.data[:16], e.data[32:32 + 2 * nl].decode("utf-16-le", "replace"), e.data[32 + 2 * nl:]
p7 = [e for e in ev if e.pcr == 7]
for e in p7:
    if e.type not in (EV_VAR_CONFIG, EV_VAR_AUTH, oracle.EV_SEPARATOR):
        bad.append("PCR 7: unexpected event %d type %s" % (e.index, hex(e.type)))
    if e.type == EV_VAR_AUTH and e.digests.get("sha256") != hashlib.sha256(e.data).digest():
        bad.append("PCR 7 event %d: digest is not sha256 of the event data" % e.index)
auths = [(e, *var(e)) for e in p7 if e.type == EV_VAR_AUTH]
kinds = sorted((g == SHIM_GUID and "shim" or g == DB_GUID and "security" or "other", n) for e, g, n, d in auths)
want7 = sorted([("security", "db"), ("shim", "SbatLevel"), ("shim", "MokListRT"), ("shim", "MokListRT")])
if kinds != want7:
    bad.append("PCR 7 authorities %s, want exactly %s" % (kinds, want7))
idx = {n: e.index for n, e in zip([n for n, _ in seen], apps)}
for label, cert, image in (("the MOK", open(mokder, "rb").read(), "mshim"),
                           ("shim's vendor certificate", oracle.shim_vendor_cert(shim)[0], "GRUB")):
    hits = [e for e, g, n, d in auths if g == SHIM_GUID and n == "MokListRT" and d[16:] == cert]
    if len(hits) != 1:
        bad.append("PCR 7: %d MokListRT authority events for %s, want 1" % (len(hits), label))
    elif image in idx and hits[0].index > idx[image]:
        bad.append("PCR 7: authority for %s logged after %s's PCR 4 event" % (label, image))
oracle.report(not bad, name + ": PCR 4 = shim, mshim, GRUB once each and the kernel twice (shim's Verify, "
              "empty device path), nothing from mshim; PCR 7 authorities db, SbatLevel, MOK, vendor; PCR 14 shim's",
              "\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

