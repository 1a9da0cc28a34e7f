#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SHIM_LOCK Verify from the outside (issue 9, point 6): a test-only EFI
# program (tests/efi/shimlock_probe.c) that mshim starts as an `efi` entry
# calls Verify on a 1 KiB text buffer, then twice on \probe\target.efi (a
# copy of Debian's GRUB: two separate buffers, the same bytes), then on
# \probe\unsigned.efi and \probe\revoked.efi if present, and prints each
# answer; it returns, and mshim boots its next entry, the kernel, whose
# initramfs reports the log. Both variable stores hold an SbatLevel one
# generation above mshim's own "mshim" record (read from its .sbat), and
# revoked.efi is a copy of mshim (SBAT, issue 9 point 7, on Verify).
#  off: Secure Boot off. The text buffer is refused (not a PE image); the
#       target passes twice and is in PCR 4 exactly once, from Verify
#       itself: EV_EFI_BOOT_SERVICES_APPLICATION, digest = its Authenticode
#       digest (oracle.py), event data = shim's tpm_log_pe layout (address,
#       length = the file's size, link address 0, no device path); PCR 4
#       holds mshim, the probe, the target and the kernel, once each. SBAT
#       is not applied without Secure Boot (as shim): revoked.efi passes and
#       is measured like the target.
#  on:  Secure Boot on, own keys (it_sb_keys). mshim's start-up self-test
#       reports that the firmware refused its unsigned image; the text
#       buffer is refused; the db-signed target passes twice and is in
#       PCR 4 once, from the firmware's LoadImage, with mshim's file device
#       path \mshim\shim-lock-verify; GRUB without any signature is refused
#       by the firmware; the mshim copy is refused by SBAT, naming the
#       component and the generations; the probe, which has a .sbat, passes
#       as an efi entry; neither the self-test image, the unsigned nor the
#       revoked one is in PCR 4.
# Not producible here: a firmware that accepts the unsigned self-test image
# (OVMF enforces Secure Boot on every LoadImage with a device path).
set -u
. "$(dirname "$0")/lib.sh"
T=shimlock_verify
it_init "$T"
PROBE=${PROBE:-$IT_B/test/shimlock_probe.efi}
GRUB_SIGNED=${GRUB_SIGNED:-$IT_EFIROOT/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed}
if ! it_require "$IT_EFI" "$IT_KERNEL" "$IT_CLI" "$PROBE" "$GRUB_SIGNED" \
                "$IT_OVMF_CODE_SB" "$IT_OVMF_VARS_BLANK" ||
   ! command -v sbattach >/dev/null || ! command -v sbverify >/dev/null; then
        it_fail "$T: prerequisites (make build/test/shimlock_probe.efi, grub-efi-amd64-signed, ovmf, sbsigntool)"; exit 1
fi

# probe_esp NAME MSHIM PROBE KERNEL TARGET REVOKED [UNSIGNED]: the default
# entry starts the probe; the kernel entry (it_newboot's) comes next.
probe_esp() {
        local d
        d=$(it_newboot "$1" "$2") || return 1
        mkdir -p "$d/esp/probe"
        cp "$3" "$d/esp/probe/probe.efi" && cp "$4" "$d/esp/vmlinuz" && cp "$5" "$d/esp/probe/target.efi" &&
                cp "$6" "$d/esp/probe/revoked.efi" || return 1
        [ -n "${7:-}" ] && { cp "$7" "$d/esp/probe/unsigned.efi" || return 1; }
        printf 'timeout 0\ndefault probe\n' > "$d/esp/loader/loader.conf"
        printf 'title SHIM_LOCK probe\nefi /probe/probe.efi\n' > "$d/esp/loader/entries/probe.conf"
        echo "$d"
}

# check_probe DIR NAME WANT...: each WANT ("case=Status") is on the
# console as the probe's answer.
check_probe() {
        local d=$1 name=$2 w log bad=
        shift 2
        log=$(tr -d '\r' < "$d/serial.log")
        for w; do
                grep -q -E "^mshim-probe: verify ${w%%=*} \([0-9]+ bytes\): ${w#*=} \(0x" <<<"$log" || bad="$bad ${w}"
        done
        grep -q '^mshim-probe: done' <<<"$log" || bad="$bad done"
        if [ -z "$bad" ]; then
                it_pass "$T: $name: Verify answers $*"
        else
                it_fail "$T: $name: Verify answers $* (missing:$bad)"
                grep -a -E 'mshim-probe|SHIM_LOCK' <<<"$log" | sed 's/^/  console: /' >&2
        fi
}

# check_verify_event RESULT TARGET NAME MODE: the PCR 4 event whose
# Authenticode digest is TARGET's: MODE "shim" = shim's tpm_log_pe layout
# (32 bytes: address, length = TARGET's size, link address 0, device path
# length 0); MODE "firmware" = its device path ends in mshim's
# \mshim\shim-lock-verify file node.
check_verify_event() {
        python3 - "$IT_REPO/tests/integration" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import oracle
r, target, name, mode = sys.argv[2:6]
data = open(target, "rb").read()
want = oracle.authenticode(data)
ev = [e for e in oracle.load_log(r + "/eventlog.bin")
      if e.pcr == 4 and e.type == oracle.EV_EFI_BOOT_SERVICES_APPLICATION and e.digests.get("sha256") == want]
bad = []
if len(ev) != 1:
    bad.append("%d PCR 4 events with the target's Authenticode digest, want 1" % len(ev))
else:
    d = ev[0].data
    addr, length, link, dplen = struct.unpack_from("<QQQQ", d, 0)
    if mode == "shim":
        if len(d) != 32 or length != len(data) or link != 0 or dplen != 0 or addr == 0:
            bad.append("event data %s: want address, length %d, 0, 0 (32 bytes)" % (d.hex(), len(data)))
    elif "\\mshim\\shim-lock-verify".encode("utf-16-le") not in d[32:32 + dplen]:
        bad.append("device path %s does not name \\mshim\\shim-lock-verify" % d[32:].hex())
oracle.report(not bad, name, "\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

k=$IT_DIR/keys
it_sb_keys "$k" || { it_fail "$T: set-up (keys, mshim vars enroll)"; exit 1; }
# mshim's "mshim" generation, from its .sbat, without mshim; a policy one above.
mgen=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import oracle
for l in oracle.pe_section(sys.argv[2], b".sbat").decode().splitlines():
    f = l.split(",")
    if f[0] == "mshim": print(int(f[1]))' "$IT_REPO/tests/integration" "$IT_EFI")
[ -n "$mgen" ] || { it_fail "$T: set-up (mshim's .sbat has no mshim record)"; exit 1; }
printf 'sbat,1,2024010900\nmshim,%d\n' "$((mgen + 1))" > "$k/sbat.txt"
"$IT_CLI" vars sbat-level "$k/sb.fd" --policy "$k/sbat.txt" -o "$k/sb-sbat.fd" >"$k/sbat.log" 2>&1 &&
        "$IT_CLI" vars sbat-level "$OVMF_VARS" --policy "$k/sbat.txt" -o "$k/off-sbat.fd" >>"$k/sbat.log" 2>&1 ||
        { cat "$k/sbat.log" >&2; it_fail "$T: set-up (mshim vars sbat-level)"; exit 1; }
it_sb_sign "$IT_EFI" "$k/mshim.efi" "$k" db &&
        it_sb_sign "$PROBE" "$k/probe.efi" "$k" db &&
        it_sb_sign "$IT_KERNEL" "$k/vmlinuz" "$k" db &&
        it_sb_sign "$GRUB_SIGNED" "$k/target.efi" "$k" db &&
        it_sb_sign "$GRUB_SIGNED" "$k/unsigned.efi" "$k" none || { it_fail "$T: set-up (mshim sign)"; exit 1; }
if sbverify --list "$k/unsigned.efi" 2>&1 | grep -q 'No signature table' &&
   sbverify --cert "$k/db.pem" "$k/target.efi" >/dev/null 2>&1; then
        it_pass "$T: set-up: target signed by the db key, unsigned.efi without any signature (sbverify)"
else
        it_fail "$T: set-up: target signed by the db key, unsigned.efi without any signature (sbverify)"
fi

off=$(probe_esp off "$IT_EFI" "$PROBE" "$IT_KERNEL" "$GRUB_SIGNED" "$IT_EFI") || { it_fail "$T: set-up (off)"; exit 1; }
( OVMF_VARS=$k/off-sbat.fd; it_boot "$off" > "$off/boot.out" 2>&1; echo $? > "$off/boot.rc" ) &
offpid=$!
it_secure_boot_on "$k/sb-sbat.fd" || { it_fail "$T: set-up (Secure Boot)"; exit 1; }
on=$(probe_esp on "$k/mshim.efi" "$k/probe.efi" "$k/vmlinuz" "$k/target.efi" "$k/mshim.efi" "$k/unsigned.efi") ||
        { it_fail "$T: set-up (on)"; exit 1; }
it_boot "$on"; onrc=$?
wait "$offpid"
cat "$off/boot.out" >&2

# Secure Boot off.
if [ "$(cat "$off/boot.rc")" = 0 ]; then
        it_pass "$T: off: mshim -> probe (efi entry) -> kernel boots"
        check_probe "$off" off "non-pe=Unsupported" "target-1=Success" "target-2=Success" "revoked=Success"
        if tr -d '\r' < "$off/serial.log" | grep -q 'SHIM_LOCK Verify: 1024 bytes refused: not a PE image'; then
                it_pass "$T: off: mshim says why the text buffer is refused"
        else
                it_fail "$T: off: mshim says why the text buffer is refused"
        fi
        it_check_replay "$off" "$T: off: TPM PCRs equal the event-log replay"
        it_oracle check-pcr4 --result "$off/result" \
                --name "$T: off: mshim, the probe, the verified target (once), the mshim copy (SBAT not applied) and the kernel" \
                "$off/esp/EFI/BOOT/BOOTX64.EFI" "$off/esp/probe/probe.efi" "$off/esp/probe/target.efi" \
                "$off/esp/probe/revoked.efi" "$off/esp/vmlinuz" ||
                IT_FAILED=1
        check_verify_event "$off/result" "$off/esp/probe/target.efi" \
                "$T: off: Verify's own PCR 4 event = shim's tpm_log_pe (Authenticode digest; address, length, no path)" shim ||
                IT_FAILED=1
else
        it_fail "$T: off: mshim -> probe (efi entry) -> kernel boots"
fi

# Secure Boot on.
if [ "$onrc" = 0 ]; then
        it_pass "$T: on: mshim -> probe (efi entry) -> kernel boots under Secure Boot"
        log=$(tr -d '\r' < "$on/serial.log")
        if grep -q 'SHIM_LOCK self-test: the firmware refused an unsigned image' <<<"$log" &&
           ! grep -q 'self-test FAILED' <<<"$log"; then
                it_pass "$T: on: start-up self-test: the firmware refuses the embedded unsigned image"
        else
                it_fail "$T: on: start-up self-test: the firmware refuses the embedded unsigned image"
        fi
        check_probe "$on" on "non-pe=Unsupported" "target-1=Success" "target-2=Success" \
                "unsigned=Security Policy Violation" "revoked=Security Policy Violation"
        want="SHIM_LOCK Verify: revoked by SBAT (SbatLevel): component mshim is generation $mgen, the policy requires $((mgen + 1)) or later"
        if grep -q -F "$want" <<<"$log"; then
                it_pass "$T: on: Verify refuses the mshim copy by SBAT, naming component and generations"
        else
                it_fail "$T: on: Verify refuses the mshim copy by SBAT, naming component and generations"
        fi
        it_check_replay "$on" "$T: on: TPM PCRs equal the event-log replay"
        it_oracle check-pcr4 --result "$on/result" \
                --name "$T: on: mshim, the probe (.sbat, passes the policy), the target (once) and the kernel; no self-test, unsigned or revoked image" \
                "$on/esp/EFI/BOOT/BOOTX64.EFI" "$on/esp/probe/probe.efi" "$on/esp/probe/target.efi" "$on/esp/vmlinuz" ||
                IT_FAILED=1
        check_verify_event "$on/result" "$on/esp/probe/target.efi" \
                "$T: on: the firmware's PCR 4 event for the target names \\mshim\\shim-lock-verify" firmware || IT_FAILED=1
else
        it_fail "$T: on: mshim -> probe (efi entry) -> kernel boots under Secure Boot"
fi
exit "$IT_FAILED"
