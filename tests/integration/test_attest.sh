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
# Reference states (verify --state, predictions from A's log): A accepted
# by its own; R accepted by the prediction made before it booted, refused
# by A's (PCRs 4, 9); S refused by A's; another initrd alone (A's kernel
# with R's initramfs predicted, A's evidence against it): PCR 9 named.
# With no boot: A's log replayed into a copy of the machine's TPM on the
# host (tpm2_pcrextend), quoted (accepted), PCR 9 extended with no event,
# quoted again (refused, PCR 9 named); the machine registered (challenge
# with its EK certificate, activate, register) and A accepted by `verify
# --dir`; another TPM's AK challenged under its EK never activates and its
# quote is refused by the "machine" check.
# Oracles: the guest kernel's own report (sysfs PCRs and event log,
# scripts/mkinitramfs.sh), tpm2_checkquote, tpm2_eventlog, Keylime's
# engine, hashlib; mshim's output is never the expected value of mshim.
set -u
. "$(dirname "$0")/lib.sh"
T=attest
IT_OPTIONS="$IT_OPTIONS efi=runtime"
IT_KERNEL_RT=${IT_KERNEL_RT:-$IT_B/kernel-rt/vmlinuz}
KEYLIME=$IT_KEYLIME
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_KERNEL_RT" "$IT_CLI" "$IT_KDIR/modules/KMODS" \
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
it_initrd_luks "$IT_KDIR" "$IT_B/it/initrd-luks.img" &&
        it_initrd_luks "$IT_B/kernel-rt" "$IT_B/it/initrd-luks-rt.img" ||
        { it_fail "$T: set-up (the initramfs images)"; exit 1; }
# No volume to open: the disk's second partition is zeros.
truncate -s $((IT_DISK_LUKS_SECTORS * 512)) "$IT_DIR/none.img"
# attest_boot NAME: a boot dir from the host TPM's state, the LUKS
# initramfs (which quotes), a fresh nonce on its ESP (and in DIR/nonce).
attest_boot() {
        local d
        d=$(it_newboot "$1") && cp "$IT_B/it/initrd-luks.img" "$d/esp/initrd.img" &&
                cp -a "$tp/state" "$d/tpm.in" && it_attest_nonce "$d" && echo "$d"
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
        it_attest_got "$d" "$n" || return 1
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
it_keylime_accepts "enrolled: Keylime's engine with the mshim policy accepts the guest's log (its refstate)" "$IT_DIR/ref-a.json" "$a/log.bin"

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
it_keylime_rejects "an event edited: Keylime's engine rejects the log (PCR 4)" "no allowed boot: PCR 4 differs" "$IT_DIR/ref-a.json" "$IT_DIR/edited.json.log"
it_keylime_rejects "an event removed: Keylime's engine rejects the log (PCR 12)" "no allowed boot: PCR 12 differs" "$IT_DIR/ref-a.json" "$IT_DIR/removed.json.log"

# ---- S: init=/bin/sh ----------------------------------------------------------------
if [ -s "$s/log.bin" ]; then
        verify_ok "init=/bin/sh: the quote itself verifies (mshim verify checks the TPM, not the policy)" "$s/att/evidence.json" "$NS"
        # The PCRs it must name: those (of 4, 5, 7, 9, 12: the policy's) whose
        # values the two guests' TPMs reported differently (sysfs, sha256).
        want=$(python3 -c 'import json, sys
a, s = (json.load(open(f))["pcrs"]["sha256"] for f in sys.argv[1:3])
print(",".join(str(n) for n in (4, 5, 7, 9, 12) if a[str(n)] != s[str(n)]))' \
                "$a/result/result.json" "$s/result/result.json")
        it_keylime_rejects "init=/bin/sh: Keylime's engine rejects it with the enrolled refstate, naming the PCRs the TPMs differ in ($want)" \
                "no allowed boot: PCRs? $want differs? from the closest" "$IT_DIR/ref-a.json" "$s/log.bin"
        case ",$want," in *",12,"*) ;; *) it_fail "$T: init=/bin/sh: the TPMs differ in PCR 12 (the command line)" ;; esac
        N="init=/bin/sh: the guest's command line has it (sysfs report)"
        ok grep -q 'init=/bin/sh' "$s/result/result.json"
fi

# ---- reference states (verify --state): predictions from A's log -----------------
# pred-a: A's own kernel and initramfs (the enrolled boot, predicted);
# pred-x: the same kernel with another initramfs (the RT kernel's): the
# state a verifier holds when it allows only that initrd.
it_pcrs_file "$a" > "$a/pcrs.txt"
N="host: mshim predict --log A --pcrs A --json of A's files, and of A's kernel with another initrd"
ok bash -c "'$IT_CLI' predict --log '$a/log.bin' --pcrs '$a/pcrs.txt' --kernel '$IT_KERNEL' \
        --initrd '$IT_B/it/initrd-luks.img' --json > '$IT_DIR/pred-a.json' 2> '$IT_DIR/err' &&
        '$IT_CLI' predict --log '$a/log.bin' --pcrs '$a/pcrs.txt' --kernel '$IT_KERNEL' \
        --initrd '$IT_B/it/initrd-luks-rt.img' --json > '$IT_DIR/pred-x.json' 2>> '$IT_DIR/err'"
it_attest_verify "enrolled: mshim verify --state (A's prediction) accepts A's evidence" 0 "" "$IT_DIR/v-a.json" \
        --ak "$AK" --nonce "$NA" --state "$IT_DIR/pred-a.json" "$a/att/evidence.json"
it_attest_verify "another initrd (same kernel): refused (state), PCR 9 alone named" 1 \
        "refused: state: no reference state matches: PCR 9 differs from the closest, the prediction" "$IT_DIR/v-x.json" \
        --ak "$AK" --nonce "$NA" --state "$IT_DIR/pred-x.json" "$a/att/evidence.json"
# The values it names, from hashlib: quoted = A's PCR 9 as the guest kernel
# read it; expected = A's PCR 9 events replayed with the initrd's digest
# (SHA-256 of the file on A's ESP) replaced by the other file's.
N="another initrd: the refusal's expected and quoted PCR 9 are hashlib's replays with each initrd"
ok python3 - "$IT_REPO/tests/integration" "$IT_DIR/v-x.json" "$a/result" "$a/esp/initrd.img" "$IT_B/it/initrd-luks-rt.img" <<'PY'
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
import oracle
v, r = json.load(open(sys.argv[2])), oracle.load_result(sys.argv[3])
mine, other = (hashlib.sha256(open(f, "rb").read()).digest() for f in sys.argv[4:6])
h, hit = bytes(32), 0
for e in oracle.load_log(sys.argv[3] + "/eventlog.bin"):
    if e.pcr == 9 and e.type != oracle.EV_NO_ACTION:
        d = e.digests["sha256"]
        if d == mine:
            d, hit = other, hit + 1
        h = hashlib.sha256(h + d).digest()
want = [{"pcr": 9, "expected": h.hex(), "quoted": oracle.tpm_pcr(r, "sha256", 9).hex()}]
got = [{k: x[k] for k in ("pcr", "expected", "quoted")} for x in v["state"]["differing"]]
sys.exit(0 if hit and got == want and not v["accepted"] else "%d initrd events; %s, want %s" % (hit, got, want))
PY
if [ -s "$s/log.bin" ]; then
        # The PCRs it must name: those of the prediction that the two
        # guests' TPMs reported differently (sysfs, sha256).
        want=$(python3 -c 'import json, sys
a, s = (json.load(open(f))["pcrs"]["sha256"] for f in sys.argv[1:3])
p = json.load(open(sys.argv[3]))["pcrs"]["sha256"]
print(",".join(n for n in sorted(p, key=int) if a[n] != s[n]))' "$a/result/result.json" "$s/result/result.json" "$IT_DIR/pred-a.json")
        it_attest_verify "init=/bin/sh: refused by verify --state (A's prediction), naming the PCRs the TPMs differ in ($want)" 1 \
                "refused: state: no reference state matches: PCRs? $want differs? from the closest" "$IT_DIR/v-s.json" \
                --ak "$AK" --nonce "$NS" --state "$IT_DIR/pred-a.json" "$s/att/evidence.json"
fi

# ---- a PCR extended outside the log, on a real boot's log -------------------------
# A copy of the machine's TPM (its AK) on the host: A's log replayed into it
# with tpm2_pcrextend (each event's digests, every bank), a quote with A's
# log accepted (the replay is faithful); then PCR 9 extended in SHA-256
# with no event (a second initrd hidden), a quote with the same log: refused.
x=$IT_DIR/tpm-replay
mkdir -p "$x" && cp -a "$tp/state" "$x/state"
python3 - "$IT_REPO/tests/integration" "$a/log.bin" > "$IT_DIR/extends.txt" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import oracle
for e in oracle.load_log(sys.argv[2]):
    if e.type == oracle.EV_NO_ACTION:
        if e.data.startswith(b"StartupLocality\0") and e.data[16:17] != b"\0":
            sys.exit("the log starts at locality %d: not reproducible by the host" % e.data[16])
        continue
    print("%d:%s" % (e.pcr, ",".join("%s=%s" % (b, d.hex()) for b, d in sorted(e.digests.items()))))
PY
rc=$?
N1=$(openssl rand -hex 32) N2=$(openssl rand -hex 32)
[ "$rc" = 0 ] && it_swtpm_host_start "$x" || rc=1
if [ "$rc" = 0 ]; then
        while read -r e; do tpm2_pcrextend "$e" || rc=1; done < "$IT_DIR/extends.txt" > /dev/null 2> "$IT_DIR/err"
        "$IT_CLI" attest quote --nonce "$N1" --log "$a/log.bin" -o "$IT_DIR/ext0.json" 2>> "$IT_DIR/err" &&
                tpm2_pcrextend "9:sha256=$(openssl rand -hex 32)" > /dev/null 2>> "$IT_DIR/err" &&
                "$IT_CLI" attest quote --nonce "$N2" --log "$a/log.bin" -o "$IT_DIR/ext1.json" 2>> "$IT_DIR/err" || rc=1
        it_swtpm_host_stop "$x"
fi
if [ "$rc" = 0 ]; then
        it_pass "$T: host: A's log replayed into the machine's TPM (tpm2_pcrextend), quoted before and after PCR 9 is extended"
        verify_ok "outside the log: the quote of A's log replayed into the TPM is accepted" "$IT_DIR/ext0.json" "$N1"
        verify_refused "outside the log: PCR 9 extended with no event: refused (event-log), sha256 PCR 9 named" \
                "$IT_DIR/ext1.json" "$N2" "$AK" "refused: event-log: sha256 PCR 9: the quoted value is not what the event log replays to"
else
        it_fail "$T: host: A's log replayed into the machine's TPM (tpm2_pcrextend), quoted before and after PCR 9 is extended"
        cat "$IT_DIR/err" >&2
fi

# ---- the registered machine (verify challenge / attest activate / register) --------
# The machine's AK registered against its EK certificate (swtpm's local
# CA): A's evidence accepted by the registered AK (no --ak). Another TPM's
# AK challenged under the machine's EK is never activated (the machine's
# TPM does not hold it), so a quote it signs is refused by "machine".
mkdir -p "$IT_DIR/trust" && cp "$IT_DIR/ca/swtpm-localca-rootca-cert.pem" "$IT_DIR/ca/issuercert.pem" "$IT_DIR/trust/"
VD=$IT_DIR/verifier
"$IT_CLI" verify challenge --dir "$VD" --ak "$AK" --ek-cert "$IT_DIR/reg/ek-rsa.crt" --ek-ca "$IT_DIR/trust" \
        -o "$IT_DIR/ch" > "$IT_DIR/err" 2>&1 &&
        "$IT_CLI" verify challenge --dir "$VD" --ak "$AK2" --ek-cert "$IT_DIR/reg/ek-rsa.crt" --ek-ca "$IT_DIR/trust" \
        -o "$IT_DIR/ch2" >> "$IT_DIR/err" 2>&1 && it_swtpm_host_start "$tp"
rc=$?
if [ "$rc" = 0 ]; then
        "$IT_CLI" attest activate "$IT_DIR/ch" -o "$IT_DIR/secret" >> "$IT_DIR/err" 2>&1 || rc=1
        "$IT_CLI" attest activate "$IT_DIR/ch2" -o "$IT_DIR/secret2" > "$IT_DIR/err2" 2>&1
        rc2=$?
        it_swtpm_host_stop "$tp"
fi
N="registered: the machine's TPM activates the challenge for its AK under its certified EK; verify register records it"
ok bash -c "[ $rc = 0 ] && '$IT_CLI' verify register --dir '$VD' --ak '$AK' '$IT_DIR/secret' >> '$IT_DIR/err' 2>&1"
it_attest_verify "registered: mshim verify --dir (the registered AK, no --ak) accepts A's evidence" 0 "" "$IT_DIR/v-reg.json" \
        --dir "$VD" --nonce "$NA" "$a/att/evidence.json"
N="not activated: the machine's TPM does not activate another TPM's AK under its EK: exit 1"
ok bash -c "[ '${rc2:-0}' = 1 ] && grep -q 'refused: the TPM does not activate' '$IT_DIR/err2' && [ ! -s '$IT_DIR/secret2' ]"
it_swtpm_host_start "$tp2" && "$IT_CLI" attest quote --nonce "$N1" --log "$a/log.bin" -o "$IT_DIR/ev-ak2.json" > "$IT_DIR/err" 2>&1
rc=$?
it_swtpm_host_stop "$tp2"
if [ "$rc" = 0 ]; then
        it_attest_verify "not activated: its quote is refused by the registered machines (machine: the challenge is pending)" 1 \
                "refused: machine: the AK [0-9a-f]+ is not registered in .*: its challenge is pending" "$IT_DIR/v-ak2.json" \
                --dir "$VD" --nonce "$N1" "$IT_DIR/ev-ak2.json"
else
        it_fail "$T: not activated: a quote by that AK (another TPM, A's log)"; cat "$IT_DIR/err" >&2
fi

# ---- R: the RT kernel, predicted from A before it boots -----------------------------
N="rt: mshim predict --log A --pcrs A --kernel RT --initrd RT's initramfs, keylime-refstate --log A --no-log --state"
ok bash -c "'$IT_CLI' predict --log '$a/log.bin' --pcrs '$a/pcrs.txt' --kernel '$IT_KERNEL_RT' \
        --initrd '$IT_B/it/initrd-luks-rt.img' --json > '$IT_DIR/pred.json' 2> '$IT_DIR/err' &&
        '$IT_CLI' verify keylime-refstate --log '$a/log.bin' --no-log --state '$IT_DIR/pred.json' -o '$IT_DIR/ref-r.json' 2>> '$IT_DIR/err'"
it_boot_all "$r"
unset IT_BOOT_ARGS
if got "$r"; then
        NR=$(cat "$r/nonce")
        it_check_replay "$r" "$T: rt: the TPM's PCRs equal the event log's replay"
        it_predict_check "$T: rt: the booted TPM's PCRs equal the prediction made before the boot" "$a" "$r" "$IT_DIR/pred.json" || true
        verify_ok "rt: mshim verify accepts the upgraded boot's evidence" "$r/att/evidence.json" "$NR"
        it_attest_verify "rt: mshim verify --state (the prediction made before the boot) accepts its evidence" 0 "" \
                "$IT_DIR/v-r.json" --ak "$AK" --nonce "$NR" --state "$IT_DIR/pred.json" "$r/att/evidence.json"
        it_attest_verify "rt: refused by verify --state with A's prediction alone: another kernel and initrd, PCRs 4 and 9 named" 1 \
                "refused: state: no reference state matches: PCRs 4,9 differ from the closest, the prediction" "$IT_DIR/v-r2.json" \
                --ak "$AK" --nonce "$NR" --state "$IT_DIR/pred-a.json" "$r/att/evidence.json"
        N="rt: tpm2_checkquote accepts its quote"
        ok checkquote "$r" "$NR"
        it_keylime_accepts "rt: Keylime's engine accepts its log with the refstate of the prediction" "$IT_DIR/ref-r.json" "$r/log.bin"
        it_keylime_rejects "rt: Keylime's engine rejects it with the enrolled refstate (another kernel and initrd: PCRs 4 and 9)" \
                "no allowed boot: PCRs 4,9 differ" "$IT_DIR/ref-a.json" "$r/log.bin"
        it_keylime_rejects "enrolled: Keylime's engine rejects A's log with the prediction's refstate alone (PCR 4)" \
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
