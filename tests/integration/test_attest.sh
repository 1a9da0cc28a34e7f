#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Remote attestation proven by booting (docs/ATTESTATION.md): OVMF + swtpm
# (EK certificate from swtpm's local CA, `swtpm_setup --create-ek-cert`)
# + mshim + Debian's kernels, the GUEST running `mshim attest quote --nonce
# N` from its initramfs (scripts/mkinitramfs-luks.sh: the nonce is
# mshim-test/attest-nonce on the ESP, the evidence comes back as base64 on
# the serial console), the HOST verifying it. `mshim attest init` runs on
# the host against the TPM state every boot then starts from.
#
# Three boots, each with its own nonce, all with efi=runtime on the command
# line (the RT kernel's EFI variables; the same line everywhere):
#   A  the enrolled boot: Debian's kernel and its initramfs
#   S  the same with init=/bin/sh added to the command line (an initramfs
#      still runs its /init, so the guest still quotes; the log shows it)
#   R  Debian's RT kernel and its own initramfs, predicted from A's log
#      and PCRs before it boots
# Accepted: `mshim verify` of A's and R's evidence with their nonces;
# tpm2_checkquote of the files the guest's `attest quote --tpm2-tools`
# wrote; Keylime's own engine (../shared/oracles/keylime, its parser and
# policy evaluation) with mshim's policy module on A's log with A's
# refstate, on R's log with the refstate of R's prediction.
# Refused, each by tampering with a real boot's evidence on the host:
# another nonce (stale; tpm2_checkquote agrees), A's evidence replayed when
# R's nonce was asked, the kernel's PCR 4 event edited, a PCR 12 event
# removed, another TPM's AK. Refused by Keylime's engine with A's refstate:
# R (another kernel and initrd: PCRs 4 and 9), S (the PCRs its TPM and
# A's differ in: 5 the entry, 9 and 12 the command line), the edited and
# the cut log.
# Oracles: the guest kernel's own report (sysfs PCRs and event log,
# scripts/mkinitramfs.sh), tpm2_checkquote, tpm2_eventlog, Keylime's
# engine, hashlib; mshim's output is never the expected value of mshim.
set -u
. "$(dirname "$0")/lib.sh"
T=attest
IT_OPTIONS="${IT_OPTIONS:-console=ttyS0 quiet panic=-1 no_timer_check mshim.test=0} efi=runtime"
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
KEYLIME=${MB_KEYLIME:-$IT_REPO/../shared/oracles/keylime}
[ -d "$KEYLIME" ] || KEYLIME=$IT_REPO/../../shared/oracles/keylime
MOD=$IT_REPO/keylime/mshim_policy.py
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_KERNEL_RT" "$IT_CLI" "$IT_B/kernel/modules/KMODS" \
                "$IT_B/kernel-rt/modules/KMODS" /usr/sbin/cryptsetup "$KEYLIME/evaluate" ||
   ! command -v sfdisk >/dev/null || ! command -v tpm2_checkquote >/dev/null; then
        it_fail "$T: prerequisites (make; make deps; Keylime's snapshot)"; exit 1
fi
ok() { if "$@"; then it_pass "$T: $N"; else it_fail "$T: $N"; cat "$IT_DIR/err" >&2 2>/dev/null; fi; }

# ---- the host: two TPMs, attest init on each --------------------------------------
# tp: the machine's TPM, EK certificate from swtpm's local CA; every boot
# starts from a copy of its state. tp2: another machine's (its AK only).
tp=$IT_DIR/tpm-host tp2=$IT_DIR/tpm-other
mkdir -p "$tp/state" "$IT_DIR/ca"
printf 'statedir = %s\nsigningkey = %s\nissuercert = %s\ncertserial = %s\n' "$IT_DIR/ca" \
        "$IT_DIR/ca/signkey.pem" "$IT_DIR/ca/issuercert.pem" "$IT_DIR/ca/certserial" > "$IT_DIR/localca.conf"
printf 'create_certs_tool = /usr/bin/swtpm_localca\ncreate_certs_tool_config = %s\ncreate_certs_tool_options = /etc/swtpm-localca.options\n' \
        "$IT_DIR/localca.conf" > "$IT_DIR/setup.conf"
N="host: swtpm_setup --create-ek-cert, mshim attest init (EK certificate from swtpm's local CA)"
swtpm_setup --tpm2 --tpmstate "$tp/state" --create-ek-cert --pcr-banks "$IT_BANKS" --config "$IT_DIR/setup.conf" \
        --overwrite --logfile "$tp/setup.log" >/dev/null 2>&1 &&
        it_swtpm_host_start "$tp" && mkdir -p "$IT_DIR/reg" &&
        "$IT_CLI" attest init --out-dir "$IT_DIR/reg" > "$IT_DIR/err" 2>&1 &&
        openssl x509 -inform DER -in "$IT_DIR/reg/ek-rsa.crt" -out "$IT_DIR/ek.pem" 2>>"$IT_DIR/err" &&
        openssl verify -partial_chain -CAfile "$IT_DIR/ca/swtpm-localca-rootca-cert.pem" \
                -untrusted "$IT_DIR/ca/issuercert.pem" "$IT_DIR/ek.pem" >> "$IT_DIR/err" 2>&1
rc=$?
it_swtpm_host_stop "$tp"
if [ "$rc" = 0 ]; then it_pass "$T: $N"; else it_fail "$T: $N"; cat "$tp/setup.log" "$IT_DIR/err" >&2; exit 1; fi
N="host: another TPM's attest init"
it_swtpm_host_start "$tp2" && mkdir -p "$IT_DIR/reg2" && "$IT_CLI" attest init --out-dir "$IT_DIR/reg2" > "$IT_DIR/err" 2>&1
rc=$?
it_swtpm_host_stop "$tp2"
if [ "$rc" = 0 ]; then it_pass "$T: $N"; else it_fail "$T: $N"; cat "$IT_DIR/err" >&2; exit 1; fi
AK=$IT_DIR/reg/ak.pub AKPEM=$IT_DIR/reg/ak.pem AK2=$IT_DIR/reg2/ak.pub

# ---- the boots' ESPs ------------------------------------------------------------
it_initrd_luks "$IT_B/kernel" "$IT_B/it/initrd-luks.img" &&
        it_initrd_luks "$IT_B/kernel-rt" "$IT_B/it/initrd-luks-rt.img" ||
        { it_fail "$T: set-up (the initramfs images)"; exit 1; }
# No volume to open: the disk's second partition is zeros.
truncate -s $((IT_DISK_LUKS_SECTORS * 512)) "$IT_DIR/none.img"
# attest_boot NAME: a boot dir from the host TPM's state, the LUKS
# initramfs (which quotes), a fresh nonce on its ESP (and in DIR/nonce).
attest_boot() {
        local d
        d=$(it_newboot "$1") && cp "$IT_B/it/initrd-luks.img" "$d/esp/initrd.img" &&
                cp -a "$tp/state" "$d/tpm.in" && mkdir -p "$d/esp/mshim-test" &&
                openssl rand -hex 32 > "$d/nonce" && cp "$d/nonce" "$d/esp/mshim-test/attest-nonce" && echo "$d"
}
a=$(attest_boot enrolled) && s=$(attest_boot initsh) && r=$(attest_boot rt) &&
        sed -i 's|^options .*|& init=/bin/sh|' "$s/esp/loader/entries/mshim-test.conf" &&
        cp "$IT_KERNEL_RT" "$r/esp/vmlinuz" && cp "$IT_B/it/initrd-luks-rt.img" "$r/esp/initrd.img" ||
        { it_fail "$T: set-up (boot directories)"; exit 1; }

# got DIR: after DIR's boot, its attestation files in DIR/att (evidence.json,
# tt/, err), the log in DIR/log.bin, the evidence's nonce in DIR/nonce.
got() {
        local d=$1 n
        n=$(basename "$d")
        if ! it_boot_ok "$d"; then it_fail "$T: $n: boot reaches the initramfs"; return 1; fi
        it_pass "$T: $n: boot reaches the initramfs"
        mkdir -p "$d/att"
        tr -d '\r' < "$d/serial.log" | sed -n '/^MSHIM-ATTEST-BEGIN$/,/^MSHIM-ATTEST-END$/p' | sed '1d;$d' |
                base64 -d 2>/dev/null | tar xf - -C "$d/att" 2>/dev/null
        if tr -d '\r' < "$d/serial.log" | grep -qx 'MSHIM-ATTEST RC 0' && [ -s "$d/att/evidence.json" ]; then
                it_pass "$T: $n: the guest's mshim attest quote --nonce succeeds, the evidence reaches the host"
        else
                it_fail "$T: $n: the guest's mshim attest quote --nonce succeeds, the evidence reaches the host"
                tr -d '\r' < "$d/serial.log" | grep -a 'MSHIM-\|^mshim' >&2; cat "$d/att/err" >&2 2>/dev/null
                return 1
        fi
        # The evidence's log and PCRs are what the guest kernel itself
        # read from sysfs after the quote (the report, not mshim).
        N="$n: the evidence's event log and PCRs are those the guest kernel reads (sysfs)"
        if python3 - "$d/att/evidence.json" "$d/result" "$d/log.bin" <<'PY'
import base64, json, sys
ev = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2] + "/result.json"))
log = base64.b64decode(ev["event_log"]["data"])
open(sys.argv[3], "wb").write(log)
bad = []
if log != open(sys.argv[2] + "/eventlog.bin", "rb").read():
    bad.append("the evidence's log is not the kernel's binary_bios_measurements")
for b, vals in ev["pcrs"].items():
    for n, v in vals.items():
        if r["pcrs"][b][n] != v:
            bad.append("%s PCR %s: evidence %s, sysfs %s" % (b, n, v, r["pcrs"][b][n]))
if sorted(ev["pcrs"]) != sorted(r["banks"]):
    bad.append("banks %s, the TPM has %s" % (sorted(ev["pcrs"]), r["banks"]))
if bad:
    sys.exit("\n".join(bad))
PY
        then it_pass "$T: $N"; else it_fail "$T: $N"; fi
}

# verify NAME EVIDENCE NONCE [AK]: mshim verify accepts (exit 0).
verify_ok() {
        N=$1
        if "$IT_CLI" verify --ak "${4:-$AK}" --nonce "$3" "$2" > "$IT_DIR/err" 2>&1; then it_pass "$T: $N"
        else it_fail "$T: $N"; cat "$IT_DIR/err" >&2; fi
}
# verify_refused NAME EVIDENCE NONCE AK PATTERN: exit 1, PATTERN (ERE) on stderr.
verify_refused() {
        local rc
        N=$1
        "$IT_CLI" verify --ak "$4" --nonce "$3" "$2" > "$IT_DIR/out" 2> "$IT_DIR/err"
        rc=$?
        if [ "$rc" = 1 ] && grep -q -E -- "$5" "$IT_DIR/err"; then it_pass "$T: $N"
        else it_fail "$T: $N (rc=$rc)"; cat "$IT_DIR/err" >&2; fi
}
# checkquote DIR NONCE: tpm2_checkquote of the files the guest wrote.
checkquote() {
        tpm2_checkquote -u "$AKPEM" -m "$1/att/tt/message" -s "$1/att/tt/signature" -f "$1/att/tt/pcrs" \
                -q "$2" -g sha256 > "$IT_DIR/err" 2>&1
}
# keylime REFSTATE LOG: Keylime's engine's verdict in $IT_DIR/verdict.
keylime() { /usr/bin/python3 "$KEYLIME/evaluate" --import "$MOD" mshim "$1" "$2" > "$IT_DIR/verdict" 2>&1; }
kl_accepts() { N=$1; if keylime "$2" "$3" && grep -qx AOK "$IT_DIR/verdict"; then it_pass "$T: $N"; else it_fail "$T: $N"; cat "$IT_DIR/verdict" >&2; fi; }
kl_rejects() {
        N=$1
        if ! keylime "$3" "$4" && grep -q -E -- "$2" "$IT_DIR/verdict"; then it_pass "$T: $N"
        else it_fail "$T: $N"; cat "$IT_DIR/verdict" >&2; fi
}

# ---- boots A and S ----------------------------------------------------------------
IT_BOOT_ARGS=(--disk "$IT_DIR/none.img")
IT_JOBS=${IT_JOBS:-2} it_boot_all "$a" "$s"
got "$a" || exit 1
got "$s"
it_check_replay "$a" "$T: enrolled: the TPM's PCRs equal the event log's replay"
NA=$(cat "$a/nonce") NS=$(cat "$s/nonce")

# ---- accepted: the enrolled boot ----------------------------------------------------
verify_ok "enrolled: mshim verify --ak --nonce accepts the guest's evidence" "$a/att/evidence.json" "$NA"
N="enrolled: tpm2_checkquote accepts the guest's quote (attest quote --tpm2-tools) with its nonce"
ok checkquote "$a" "$NA"
"$IT_CLI" verify keylime-refstate --log "$a/log.bin" -o "$IT_DIR/ref-a.json" 2> "$IT_DIR/err" ||
        { it_fail "$T: keylime-refstate --log of A's log"; cat "$IT_DIR/err" >&2; }
kl_accepts "enrolled: Keylime's engine with the mshim policy accepts the guest's log (its refstate)" "$IT_DIR/ref-a.json" "$a/log.bin"

# ---- refused: A's evidence tampered with on the host ---------------------------------
OTHER=$(openssl rand -hex 32)
verify_refused "stale: A's evidence against another nonce: refused (nonce)" "$a/att/evidence.json" "$OTHER" "$AK" "refused: nonce"
N="stale: ... and tpm2_checkquote refuses it too"
ok bash -c "! tpm2_checkquote -u '$AKPEM' -m '$a/att/tt/message' -s '$a/att/tt/signature' -f '$a/att/tt/pcrs' -q '$OTHER' -g sha256 >/dev/null 2>&1"
verify_refused "another TPM's AK: A's evidence against it: refused (signature)" "$a/att/evidence.json" "$NA" "$AK2" "refused: signature"
# tamper MODE IN OUT: the evidence IN with its event log changed, to OUT
# (and OUT.log). edit: one byte of the kernel's PCR 4 sha256 digest (the last
# EV_EFI_BOOT_SERVICES_APPLICATION); remove: the last PCR 12 event cut out.
tamper() {
        python3 - "$@" <<'PY'
import base64, json, struct, sys
mode, src, dst = sys.argv[1:4]
ev = json.load(open(src))
log = bytearray(base64.b64decode(ev["event_log"]["data"]))
# The crypto-agile log's events with their byte ranges (TCG PC Client
# Platform Firmware Profile 10.2): the Spec ID event first, then
# pcr, type, count, (alg, digest)..., size, data.
size = struct.unpack_from("<I", log, 28)[0]
spec = log[32:32 + size]
algs = {}
for i in range(struct.unpack_from("<I", spec, 24)[0]):
    a, n = struct.unpack_from("<HH", spec, 28 + 4 * i)
    algs[a] = n
off, events = 32 + size, []
while off < len(log):
    start = off
    pcr, etype, count = struct.unpack_from("<III", log, off)
    off += 12
    dig = {}
    for _ in range(count):
        a = struct.unpack_from("<H", log, off)[0]
        dig[a] = off + 2
        off += 2 + algs[a]
    off += 4 + struct.unpack_from("<I", log, off)[0]
    events.append((start, off, pcr, etype, dig))
if mode == "edit":
    e = [e for e in events if e[2] == 4 and e[3] == 0x80000003][-1]
    log[e[4][0x000B]] ^= 1
else:
    e = [e for e in events if e[2] == 12][-1]
    del log[e[0]:e[1]]
ev["event_log"]["data"] = base64.b64encode(bytes(log)).decode()
json.dump(ev, open(dst, "w"))
open(dst + ".log", "wb").write(log)
PY
}
tamper edit "$a/att/evidence.json" "$IT_DIR/edited.json" && tamper remove "$a/att/evidence.json" "$IT_DIR/removed.json" ||
        it_fail "$T: set-up (tampered evidence)"
verify_refused "an event edited (the kernel's PCR 4 digest): refused (event-log), PCR 4 named" \
        "$IT_DIR/edited.json" "$NA" "$AK" "refused: event-log.*PCR 4|PCR 4.*refused: event-log"
verify_refused "an event removed (the last PCR 12 event): refused (event-log), PCR 12 named" \
        "$IT_DIR/removed.json" "$NA" "$AK" "refused: event-log.*PCR 12|PCR 12.*refused: event-log"
kl_rejects "an event edited: Keylime's engine rejects the log (PCR 4)" "no allowed boot: PCR 4 differs" "$IT_DIR/ref-a.json" "$IT_DIR/edited.json.log"
kl_rejects "an event removed: Keylime's engine rejects the log (PCR 12)" "no allowed boot: PCR 12 differs" "$IT_DIR/ref-a.json" "$IT_DIR/removed.json.log"

# ---- S: init=/bin/sh ----------------------------------------------------------------
if [ -s "$s/log.bin" ]; then
        verify_ok "init=/bin/sh: the quote itself verifies (mshim verify checks the TPM, not the policy)" "$s/att/evidence.json" "$NS"
        # The PCRs it must name: those (of 4, 5, 7, 9, 12: the policy's) whose
        # values the two guests' TPMs reported differently (sysfs, sha256).
        want=$(python3 -c 'import json, sys
a, s = (json.load(open(f))["pcrs"]["sha256"] for f in sys.argv[1:3])
print(",".join(str(n) for n in (4, 5, 7, 9, 12) if a[str(n)] != s[str(n)]))' \
                "$a/result/result.json" "$s/result/result.json")
        kl_rejects "init=/bin/sh: Keylime's engine rejects it with the enrolled refstate, naming the PCRs the TPMs differ in ($want)" \
                "no allowed boot: PCRs? $want differs? from the closest" "$IT_DIR/ref-a.json" "$s/log.bin"
        case ",$want," in *",12,"*) ;; *) it_fail "$T: init=/bin/sh: the TPMs differ in PCR 12 (the command line)" ;; esac
        N="init=/bin/sh: the guest's command line has it (sysfs report)"
        ok grep -q 'init=/bin/sh' "$s/result/result.json"
fi

# ---- R: the RT kernel, predicted from A before it boots -----------------------------
it_pcrs_file "$a" > "$a/pcrs.txt"
N="rt: mshim predict --log A --pcrs A --kernel RT --initrd RT's initramfs, keylime-refstate --no-log --state"
ok bash -c "'$IT_CLI' predict --log '$a/log.bin' --pcrs '$a/pcrs.txt' --kernel '$IT_KERNEL_RT' \
        --initrd '$IT_B/it/initrd-luks-rt.img' --json > '$IT_DIR/pred.json' 2> '$IT_DIR/err' &&
        '$IT_CLI' verify keylime-refstate --no-log --state '$IT_DIR/pred.json' -o '$IT_DIR/ref-r.json' 2>> '$IT_DIR/err'"
it_boot_all "$r"
unset IT_BOOT_ARGS
if got "$r"; then
        NR=$(cat "$r/nonce")
        it_check_replay "$r" "$T: rt: the TPM's PCRs equal the event log's replay"
        it_predict_check "$T: rt: the booted TPM's PCRs equal the prediction made before the boot" "$a" "$r" "$IT_DIR/pred.json" || true
        verify_ok "rt: mshim verify accepts the upgraded boot's evidence" "$r/att/evidence.json" "$NR"
        N="rt: tpm2_checkquote accepts its quote"
        ok checkquote "$r" "$NR"
        kl_accepts "rt: Keylime's engine accepts its log with the refstate of the prediction" "$IT_DIR/ref-r.json" "$r/log.bin"
        kl_rejects "rt: Keylime's engine rejects it with the enrolled refstate (another kernel and initrd: PCRs 4 and 9)" \
                "no allowed boot: PCRs 4,9 differ" "$IT_DIR/ref-a.json" "$r/log.bin"
        kl_rejects "enrolled: Keylime's engine rejects A's log with the prediction's refstate alone (PCR 4)" \
                "no allowed boot: PCRs? 4[,0-9]* differs?" "$IT_DIR/ref-r.json" "$a/log.bin"
        verify_refused "replayed: A's evidence sent when R's nonce was asked: refused (nonce)" \
                "$a/att/evidence.json" "$NR" "$AK" "refused: nonce"
        # A's signed quote with R's log and PCRs: the signature binds A's PCRs.
        python3 -c 'import json, sys
a, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
r["quote"] = a["quote"]
json.dump(r, open(sys.argv[3], "w"))' "$a/att/evidence.json" "$r/att/evidence.json" "$IT_DIR/spliced.json"
        verify_refused "replayed: A's quote spliced into R's evidence (with A's nonce): refused (pcr-digest)" \
                "$IT_DIR/spliced.json" "$NA" "$AK" "refused: pcr-digest"
fi
[ "$IT_FAILED" = 0 ]
