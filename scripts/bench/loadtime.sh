#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench, part 5: the loader's time against systemd-boot 252 (Debian
# 12's systemd-boot-efi), issue 21 part 4, docs/BENCHMARK.md "Loader time".
#
# The same ESP content booted through each loader under QEMU (TCG) + OVMF
# + swtpm, as the integration tests boot: the test kernel (IT_KDIR: by
# default build/kernel-cloud; IT_KDIR=build/kernel for the generic one),
# a 48 MiB initrd, one Type #1 entry with the same command line, loader.conf
# "timeout 0". Each boot is timed from QEMU's start to the Linux EFI stub's
# "Loaded initrd from LINUX_EFI_INITRD_MEDIA_GUID device path" on the serial
# console (the initrd handed over: the loader's work is done), and also
# from the firmware's "BdsDxe: starting Boot" (the loader starts) to that
# line, which leaves out the firmware's own start-up. The loaders take
# turns (scripts/bench/loadtime.py), BENCH_RUNS rounds, medians.
# A third image, build/bench/mshimx64.efi (make bench-efi: the same loader
# with -DMB_BENCH), prints each phase's time, the table printed last.
# "quiet" is left off the command line: the stub prints its lines at the
# default log level only.
#
# Informative only: exits non-zero when a boot fails, never on a ratio.
# Environment: B, BENCH_RUNS (default 5), BENCH_INITRD_MB (default 48),
# BENCH_VARS (blank, the default, or booted: the variable store, below),
# BENCH_CPU (the CPU every boot runs on: fastest, the default, a number,
# or any),
# BENCH_BASELINE (an older mshimx64.efi to compare, see below),
# SDBOOT (systemd-boot's image; default Debian's, installed by make deps,
# else unpacked once into $B/systemd-boot-efi with apt-get download).
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
RUNS=${BENCH_RUNS:-5}
# All four banks, as the figures in docs/ were measured.
IT_ALL_BANKS=1
. tests/integration/lib.sh
die() { echo "bench-loadtime: $*" >&2; exit 1; }
BENCH_EFI=${BENCH_EFI:-$IT_B/bench/mshimx64.efi}
it_require "$IT_EFI" "$BENCH_EFI" "$IT_KERNEL" "$OVMF_CODE" "$OVMF_VARS" || die "prerequisites missing (make bench-efi; make deps)"

# systemd-boot: Debian's, as the integration tests use it; without the
# package, the .deb unpacked under $B (as scripts/fetch-efi.sh does for
# shim and GRUB), never installed.
SDBOOT_REL=usr/lib/systemd/boot/efi/systemd-bootx64.efi
if [ -z "${SDBOOT:-}" ]; then
        SDBOOT=/$SDBOOT_REL
        if [ ! -s "$SDBOOT" ]; then
                SDBOOT=$IT_B/systemd-boot-efi/$SDBOOT_REL
                if [ ! -s "$SDBOOT" ]; then
                        tmp=$(mktemp -d "${TMPDIR:-/tmp}/mshim-sdboot.XXXXXX") && chmod 0777 "$tmp" &&
                        (cd "$tmp" && apt-get download -q systemd-boot-efi) >&2 &&
                        dpkg-deb -x "$tmp"/systemd-boot-efi_*.deb "$IT_B/systemd-boot-efi" || die "cannot fetch systemd-boot-efi"
                        rm -rf "$tmp"
                fi
        fi
fi
[ -s "$SDBOOT" ] || die "no systemd-boot at $SDBOOT"
SDVER=$(grep -aoE '#### LoaderInfo: systemd-boot [^ ]+ ####' "$SDBOOT" | head -1 | awk '{print $4}')

it_init bench-loadtime
# The variable store every boot starts from: by default the firmware's
# blank store, never booted (every figure in docs/BENCHMARK.md). With
# BENCH_VARS=booted, the blank store as one boot of mshim left it
# (it_vars_booted, the one the integration boots start from), as a
# machine's store is: the firmware then skips writing its boot options,
# console and language variables to the emulated flash, the same for
# every loader.
if [ "${BENCH_VARS:-blank}" = booted ]; then
        OVMF_VARS=$(it_vars_booted) || die "no booted variable store"
fi
D=$IT_DIR
OPTIONS="console=ttyS0 panic=-1 mshim.test=0"
head -c $(( ${BENCH_INITRD_MB:-48} << 20 )) /dev/urandom > "$D/initrd.img" || die "no initrd"
# mkesp NAME LOADER: DIR/NAME/esp.img with LOADER as the removable-media
# path and the shared kernel, initrd and entry.
mkesp() {
        local d=$D/$1
        mkdir -p "$d/esp/EFI/BOOT" "$d/esp/loader/entries"
        cp "$2" "$d/esp/EFI/BOOT/BOOTX64.EFI"
        cp "$IT_KERNEL" "$d/esp/vmlinuz"
        cp "$D/initrd.img" "$d/esp/initrd.img"
        printf 'timeout 0\n' > "$d/esp/loader/loader.conf"
        printf 'title bench\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s\n' "$OPTIONS" > "$d/esp/loader/entries/bench.conf"
        # Every image the same size, whatever the loader's.
        it_mkesp "$d" 262144 || return 1
        echo "$1=$d/esp.img"
}
imgs=()
# BENCH_BASELINE: an older build of mshimx64.efi, booted in turn with the
# others, to show what a change gained under the same load.
NAMES="mshim ${BENCH_BASELINE:+baseline }sdboot"
for x in "mshim $IT_EFI" ${BENCH_BASELINE:+"baseline $BENCH_BASELINE"} "sdboot $SDBOOT" "phases $BENCH_EFI"; do
        # shellcheck disable=SC2086 # two words: name, loader
        imgs+=("$(mkesp $x)") || die "cannot build the ESP for ${x%% *}"
done
sync
mkdir -p "$D/tpm-state"
swtpm_setup --tpm2 --tpmstate "$D/tpm-state" --pcr-banks "$IT_BANKS" --overwrite --logfile "$D/setup.log" \
        > /dev/null 2>&1 || die "swtpm_setup failed"

echo "Loader time: firmware start to the initrd handed over (QEMU TCG, OVMF, swtpm with $IT_BANKS banks)"
echo "  kernel $(cat "$IT_KDIR/VERSION" 2>/dev/null) ($(( $(stat -c %s "$IT_KERNEL") >> 10 )) KiB), initrd ${BENCH_INITRD_MB:-48} MiB, systemd-boot ${SDVER:-?} ($SDBOOT)"
echo "  variable store: $OVMF_VARS"
echo "  $RUNS rounds, loaders in turn, medians; load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
out=$(python3 scripts/bench/loadtime.py --runs "$RUNS" --cpu "${BENCH_CPU:-fastest}" --dir "$D/runs" --tpm-state "$D/tpm-state" \
        --ovmf-code "$OVMF_CODE" --ovmf-vars "$OVMF_VARS" "${imgs[@]}") || { IT_FAILED=1; die "a boot failed"; }
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# Each round's boots on one CPU (loadtime.py --cpu, by default the one
# fastest at the round's start): this machine's CPUs were seen to differ
# by up to half, for minutes at a time.
awk '$1 == "cpus" { printf "  each round on the CPU fastest at its start; the slowest of the %d CPUs ran at %.2f of the fastest (median over the rounds %.2f)\n", $2, $3, $4 }' <<< "$out"
# One row per loader and span, the medians of wall clock and CPU time
# (QEMU's and swtpm's: far less sensitive to the machine's other load),
# and the ratio to systemd-boot's.
# The last row: the firmware's start-up to its "loading" line taken over
# every boot of every loader (the same code each time: its spread is the
# machine's), plus each loader's own median from that line on.
awk -v names="$NAMES" '
$1 == "median" || $1 == "cpu" { v[$1, $2, $3] = $4 }
$1 == "pooled" { v[$2, "pooled", $3] = $4 }
$1 == "roundratio" { rr[$2, $3, $4] = $5 }
function span(kind, n, k, k0) { return v[kind, n, k] - (k0 == "" ? 0 : v[kind, n, k0]) }
function pooled(kind, n) { return v[kind, "pooled", "loading"] + span(kind, n, "initrd", "loading") }
END {
        n = split(names, nm, " ")
        printf "  %-38s %-8s %22s %22s\n", "medians", "loader", "wall clock, ratio", "CPU (QEMU+swtpm), ratio"
        split("QEMU start -> initrd handed over|QEMU start -> loader started|loader started -> initrd handed over", label, "|")
        split("initrd|loader|initrd", k, "|"); split("||loader", k0, "|")
        for (r = 1; r <= 3; r++)
                for (i = 1; i <= n; i++) {
                        w = span("median", nm[i], k[r], k0[r]); ws = span("median", "sdboot", k[r], k0[r])
                        c = span("cpu", nm[i], k[r], k0[r]); cs = span("cpu", "sdboot", k[r], k0[r])
                        printf "  %-38s %-8s %10.3f s %7.3fx %10.3f s %7.3fx\n", i == 1 ? label[r] : "", nm[i], w, w / ws, c, c / cs
                }
        for (i = 1; i <= n; i++) {
                w = pooled("median", nm[i]); ws = pooled("median", "sdboot")
                c = pooled("cpu", nm[i]); cs = pooled("cpu", "sdboot")
                printf "  %-38s %-8s %10.3f s %7.3fx %10.3f s %7.3fx\n", i == 1 ? "QEMU start -> initrd, firmware pooled" : "", nm[i], w, w / ws, c, c / cs
        }
        split("whole|loader", sp, "|")
        split("QEMU start -> initrd, round by round|the loader'"'"'s span, round by round", rl, "|")
        for (r = 1; r <= 2; r++)
                for (i = 1; i <= n; i++)
                        printf "  %-38s %-8s %12s %7.3fx %12s %7.3fx\n", i == 1 ? rl[r] : "", nm[i], "", rr["median", nm[i], sp[r]], "", rr["cpu", nm[i], sp[r]]
}' <<< "$out"
echo "  (target: mshim <= 0.85x systemd-boot, QEMU start -> initrd handed over; informative, never a failure."
echo "   \"firmware pooled\": the firmware's start-up up to its \"BdsDxe: loading\" line, the same code for every"
echo "   loader, is the median over all boots of all loaders; each loader's own median from that line on is added."
echo "   \"round by round\": the median of each round's ratio, the loaders booting back to back in a round)"
echo "  mshim's phases (build/bench/mshimx64.efi, -DMB_BENCH; medians, milliseconds):"
awk '$1 == "phase" && $2 == "phases" { us = $3; $1 = $2 = $3 = ""; sub(/^ +/, ""); printf "    %-52s %9.1f\n", $0, us / 1000 }' <<< "$out"
# The floor issue 21 names (loadtime.py "floor": mshim's whole span less
# its own work, each round against systemd-boot's boot of that round).
awk '$1 == "floor" {
        printf "  mshim'"'"'s own work (its phases but LoadImage and the image read): %.1f ms; without it, QEMU start -> initrd\n", $2 * 1000
        printf "  would be %.3fx systemd-boot'"'"'s, round by round (%.3fx to %.3fx over the rounds): the floor, the firmware'"'"'s and the stub'"'"'s\n", $3, $4, $5
}' <<< "$out"
