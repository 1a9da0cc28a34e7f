#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench, part 3: one unseal of a disk key, mshim against the peers a
# Debian 12 user would pick, all on one swtpm in one run:
#   mshim unseal, signed policy (approval + PolicyAuthorize) and literal
#   clevis decrypt (clevis-tpm2 19, tpm2 pin)
#   systemd-cryptsetup attach with a systemd-cryptenroll 252 TPM2 token
# PCRs 4,5,7,9,12 (sha256) for all. TPM commands are counted on the TPM's
# side, from swtpm's own log (scripts/bench/tpmcount.py): nothing counted by
# hand. Wall time is the median of BENCH_RUNS runs.
# Informative: exits non-zero only when a tool fails to run.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
MSHIM=$(realpath "$B/mshim")
RUNS=${BENCH_RUNS:-5}
PCRS=4,5,7,9,12
D=$(mktemp -d /tmp/mshim-bench-unseal.XXXXXX)
trap 'swtpm_ioctl --unix "$D/srv.ctrl" -s >/dev/null 2>&1; rm -rf "$D"' EXIT
die() { echo "bench-unseal: $*" >&2; exit 1; }

mkdir -p "$D/state" "$D/esp" "$D/mshim"
swtpm_setup --tpm2 --tpmstate "$D/state" --pcr-banks sha256 >/dev/null 2>&1 || die "swtpm_setup failed"
swtpm socket --tpm2 --tpmstate dir="$D/state" --server type=unixio,path="$D/srv" \
        --ctrl type=unixio,path="$D/srv.ctrl" --flags not-need-init,startup-clear \
        --log file="$D/swtpm.log",level=20 --daemon || die "swtpm failed to start"
export TPM2TOOLS_TCTI="swtpm:path=$D/srv" TSS2_LOG=all+none
key=$D/key; head -c 32 /dev/urandom > "$key"

# run NAME CMD...: the median wall time and the TPM commands of one run.
run() {
        local name=$1; shift
        local times=() i off count
        for i in $(seq "$RUNS"); do
                # No resource manager between the tools and swtpm: flush
                # what an earlier run left loaded, as /dev/tpmrm0 would on
                # close (not counted: before the offset).
                tpm2_flushcontext --transient-object > /dev/null 2>&1
                tpm2_flushcontext --loaded-session > /dev/null 2>&1
                tpm2_flushcontext --saved-session > /dev/null 2>&1
                off=$(stat -c %s "$D/swtpm.log")
                local t0 t1
                t0=$(date +%s%N)
                "$@" > "$D/out" 2> "$D/err" || { sed 's/^/  /' "$D/err" >&2; }
                t1=$(date +%s%N)
                times+=($(( (t1 - t0) / 1000000 )))
                count=$(python3 scripts/bench/tpmcount.py "$D/swtpm.log" "$off")
        done
        local med
        med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
        printf '%-34s %6s ms  %3s TPM commands: %s\n' "$name" "$med" "${count%% *}" "${count#* }"
        echo "$name ${count%% *} $med" >> "$D/summary"
}

echo "== unseal one disk key, PCRs $PCRS (sha256), swtpm, median of $RUNS runs"
# mshim: policy key, approval of the current state, the two modes.
"$MSHIM" policy init --state-dir "$D/mshim" > /dev/null || die "mshim policy init failed"
"$MSHIM" policy approve --state-dir "$D/mshim" --esp "$D/esp" --current --select "$PCRS" > /dev/null || die "mshim policy approve failed"
"$MSHIM" seal --state-dir "$D/mshim" --select "$PCRS" -o "$D/signed.sealed" < "$key" || die "mshim seal failed"
"$MSHIM" seal --state-dir "$D/mshim" --select "$PCRS" --literal -o "$D/literal.sealed" < "$key" || die "mshim seal --literal failed"
run "mshim unseal (signed)" "$MSHIM" unseal --esp "$D/esp" "$D/signed.sealed"
cmp -s "$D/out" "$key" || die "mshim unseal (signed) gave another key"
# At boot the initramfs has the firmware's event log, which picks the
# approval with no PCR_Read. This TPM's boot measured nothing: its log is
# the Spec ID header alone (tests/cli/tcglog_build.py, hashlib-built).
python3 -c 'import sys; sys.path.insert(0, "tests/cli"); import tcglog_build as t; open(sys.argv[1], "wb").write(t.spec_id_header(["sha256"]))' "$D/log.bin" ||
        die "cannot build the event log"
run "mshim unseal (signed, event log)" "$MSHIM" unseal --log "$D/log.bin" --esp "$D/esp" "$D/signed.sealed"
cmp -s "$D/out" "$key" || die "mshim unseal (signed, event log) gave another key"
run "mshim unseal (literal)" "$MSHIM" unseal "$D/literal.sealed"
cmp -s "$D/out" "$key" || die "mshim unseal (literal) gave another key"

# clevis: the tpm2 pin seals a JWK; decrypt is what its unlocker runs.
if command -v clevis > /dev/null && [ -x /usr/bin/clevis-decrypt-tpm2 ]; then
        clevis encrypt tpm2 "{\"pcr_bank\":\"sha256\",\"pcr_ids\":\"$PCRS\"}" < "$key" > "$D/clevis.jwe" 2> "$D/err" || { cat "$D/err" >&2; die "clevis encrypt failed"; }
        run "clevis decrypt (tpm2 pin)" sh -c "clevis decrypt < '$D/clevis.jwe'"
        cmp -s "$D/out" "$key" || die "clevis decrypt gave another key"
else
        echo "clevis: missing (apt-get install clevis-tpm2)"
fi

# systemd-cryptenroll: a TPM2 token in a LUKS2 header (a file: enrolling
# needs no device-mapper). systemd-cryptsetup unseals the token, then asks
# device-mapper to map the volume: on a host without device-mapper (no
# /dev/mapper/control, as in a container) that last step fails after every
# TPM command has run, so the count is whole; the time then excludes the
# mapping, which mshim's and clevis's times exclude too.
if command -v systemd-cryptenroll > /dev/null && command -v cryptsetup > /dev/null; then
        truncate -s 32M "$D/luks.img"
        echo -n bench | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 "$D/luks.img" - > /dev/null 2>&1 || die "cryptsetup luksFormat failed"
        PASSWORD=bench systemd-cryptenroll --tpm2-device="swtpm:path=$D/srv" --tpm2-pcrs="${PCRS//,/+}" "$D/luks.img" > /dev/null 2>&1 || die "systemd-cryptenroll failed"
        run "systemd-cryptsetup (TPM2 token)" /lib/systemd/systemd-cryptsetup attach mshim-bench "$D/luks.img" - "tpm2-device=swtpm:path=$D/srv,headless=1"
        [ -e /dev/mapper/control ] || echo "  (no device-mapper here: the volume was not mapped; the TPM part ran in full)"
else
        echo "systemd-cryptenroll: missing"
fi

python3 - "$D/summary" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
r = {" ".join(x[:-2]): (int(x[-2]), int(x[-1])) for x in rows}
for m in ("mshim unseal (signed)", "mshim unseal (signed, event log)", "mshim unseal (literal)"):
    if m not in r:
        continue
    for peer in r:
        if peer.startswith("mshim"):
            continue
        c, t = r[m]; pc, pt = r[peer]
        print("%-24s vs %-32s commands %2d/%2d = %.2fx, time %.2fx" % (m, peer, c, pc, c / pc if pc else 0, t / pt if pt else 0))
PY
