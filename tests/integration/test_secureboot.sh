#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Secure Boot, firmware -> mshim -> kernel, with the project's own keys
# (issue 4): PK, KEK and db made with OpenSSL at test time, enrolled into a
# copy of OVMF_VARS_4M.fd by `mshim vars enroll --secure-boot`; mshim and the
# kernels signed by `mshim sign` with the db key; OVMF_CODE_4M.secboot.fd,
# SMM, secure pflash (it_secure_boot_on).
#  (a) signed mshim -> signed kernel reaches the initramfs; the PCRs replay
#      from the log; PCR 7 holds only what the firmware logs (SecureBoot =
#      enabled, PK, KEK, db, dbx as enrolled, the separator, and one
#      EV_EFI_VARIABLE_AUTHORITY: exactly the db entry, owner GUID + the
#      DER of the test db certificate) and replays.
#  (b)+(c) one boot, three entries: a kernel with no signature (default),
#      the signed kernel with one byte of .text flipped, the signed kernel:
#      mshim names each refused file and the reason, the third boots; the
#      firmware does not measure a refused image (observed with Debian 12's
#      OVMF: it verifies before it measures), so PCR 4 holds mshim and the
#      signed kernel only, and PCR 7 is as in (a).
#  (d) mshim without a signature: the firmware refuses it (BdsDxe "Access
#      Denied"), mshim never runs.
#  (e) the same keys enrolled without --secure-boot (SecureBootEnable 0):
#      the unsigned mshim runs.
set -u
# Secure Boot with the SMM firmware, as real machines keep their variables
# (lib.sh IT_OVMF_SMM: the 4 MB builds and stores).
IT_OVMF_SMM=1
. "$(dirname "$0")/lib.sh"
T=secureboot
it_init "$T"
k=$IT_DIR/keys
it_sb_setup "$T" "$k" || exit 1

# Signed and unsigned images, checked with sbverify as an independent oracle.
it_sb_sign "$IT_EFI" "$k/mshim-signed.efi" "$k" db &&
        it_sb_sign "$IT_KERNEL" "$k/vmlinuz-signed" "$k" db &&
        it_sb_sign "$IT_KERNEL" "$k/vmlinuz-unsigned" "$k" none &&
        it_sb_sign "$IT_EFI" "$k/mshim-unsigned.efi" "$k" none || { it_fail "$T: set-up (mshim sign)"; exit 1; }
# The tampered kernel: one byte in the middle of .text changed after signing.
cp "$k/vmlinuz-signed" "$k/vmlinuz-tampered"
python3 - "$k/vmlinuz-tampered" <<'PY' || { it_fail "$T: set-up (tamper)"; exit 1; }
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
pe = struct.unpack_from("<I", d, 0x3C)[0]
n, optsz = struct.unpack_from("<H", d, pe + 6)[0], struct.unpack_from("<H", d, pe + 20)[0]
for i in range(n):
    s = pe + 24 + optsz + 40 * i
    if d[s:s + 8].rstrip(b"\0") == b".text":
        rsize, rptr = struct.unpack_from("<II", d, s + 16)
        d[rptr + rsize // 2] ^= 0x01
        open(sys.argv[1], "wb").write(d)
        sys.exit(0)
sys.exit("no .text section")
PY
ok=1
for f in mshim-signed.efi vmlinuz-signed; do
        sbverify --cert "$k/db.pem" "$k/$f" >/dev/null 2>&1 || { ok=0; echo "  sbverify: $f does not verify" >&2; }
done
for f in mshim-unsigned.efi vmlinuz-unsigned vmlinuz-tampered; do
        sbverify --cert "$k/db.pem" "$k/$f" >/dev/null 2>&1 && { ok=0; echo "  sbverify: $f verifies" >&2; }
done
if [ "$ok" = 1 ]; then
        it_pass "$T: mshim sign: sbverify accepts the signed images with db.pem, refuses the unsigned and the tampered one"
else
        it_fail "$T: mshim sign: sbverify accepts the signed images with db.pem, refuses the unsigned and the tampered one"
fi

# Boot dirs. (a): signed mshim, signed kernel.
a=$(it_newboot signed "$k/mshim-signed.efi") || { it_fail "$T: set-up"; exit 1; }
cp "$k/vmlinuz-signed" "$a/esp/vmlinuz"
# (b)+(c): entries sorted a, b, c: unsigned, tampered, signed; each with its
# own mshim.test= value so the command line tells which one booted.
bc=$(it_newboot refused "$k/mshim-signed.efi") || { it_fail "$T: set-up"; exit 1; }
cp "$k/vmlinuz-signed" "$bc/esp/vmlinuz"
cp "$k/vmlinuz-unsigned" "$bc/esp/vmlinuz-unsigned"
cp "$k/vmlinuz-tampered" "$bc/esp/vmlinuz-tampered"
rm "$bc/esp/loader/entries/mshim-test.conf"
printf '# mshim secure boot test\ntimeout 0\n' > "$bc/esp/loader/loader.conf"
BC_OPTIONS="console=ttyS0 quiet panic=-1 mshim.test=signed"
printf 'title unsigned kernel\nsort-key a\nlinux /vmlinuz-unsigned\ninitrd /initrd.img\noptions %s\n' \
        "console=ttyS0 quiet panic=-1 mshim.test=unsigned" > "$bc/esp/loader/entries/a.conf"
printf 'title tampered kernel\nsort-key b\nlinux /vmlinuz-tampered\ninitrd /initrd.img\noptions %s\n' \
        "console=ttyS0 quiet panic=-1 mshim.test=tampered" > "$bc/esp/loader/entries/b.conf"
printf 'title signed kernel\nsort-key c\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s\n' \
        "$BC_OPTIONS" > "$bc/esp/loader/entries/c.conf"

it_boot_all "$a" "$bc"

# (a)
if [ "$(cat "$a/boot.rc")" = 0 ]; then
        it_pass "$T: signed mshim -> signed kernel reaches the initramfs with Secure Boot on (own keys)"
        r=$a/result
        it_check_replay "$a" "$T: signed: TPM PCRs equal the event-log replay"
        it_oracle check-pcr4 --result "$r" --name "$T: signed: mshim and the kernel once each in PCR 4" \
                "$a/esp/EFI/BOOT/BOOTX64.EFI" "$a/esp/vmlinuz" || IT_FAILED=1
        it_sb_pcr7 "$r" "$k/sb.fd" "$k/db.der" \
                "$T: signed: PCR 7 = SecureBoot enabled, PK/KEK/db/dbx as enrolled, separator, one authority = the db entry (owner + db.der); replays" ||
                IT_FAILED=1
else
        it_fail "$T: signed mshim -> signed kernel reaches the initramfs with Secure Boot on (own keys)"
fi

# (b)+(c)
bclog=$(tr -d '\r' < "$bc/serial.log")
REASON='refused by Secure Boot \((Access Denied|Security Violation)\): not signed by .*db.*revoked'
for what in unsigned tampered; do
        if grep -q -E "mshim: \\\\vmlinuz-$what: $REASON" <<<"$bclog"; then
                it_pass "$T: $what kernel: mshim names the file and why it was refused"
                grep -m1 "vmlinuz-$what:" <<<"$bclog" | sed 's/^/  console: /' >&2
        else
                it_fail "$T: $what kernel: mshim names the file and why it was refused"
                grep -i -E 'mshim:|refused|denied|violation' <<<"$bclog" | head -20 | sed 's/^/  console: /' >&2
        fi
done
if [ "$(cat "$bc/boot.rc")" = 0 ] && [ "$(it_oracle_cmdline "$bc/result")" = "$BC_OPTIONS" ]; then
        it_pass "$T: after the unsigned and the tampered kernel were refused, the next entry (signed) boots"
        r=$bc/result
        it_oracle check-replay --result "$r" --name "$T: refused: TPM PCRs equal the event-log replay" || IT_FAILED=1
        # What the firmware measures for a refused image (observed with
        # Debian 12's OVMF, edk2 2022.11): nothing. Its image verification
        # runs before its TPM measurement handler and a refusal ends the
        # LoadImage, so PCR 4 holds mshim and the signed kernel only (the
        # unsigned kernel has the signed one's Authenticode digest: the file
        # device path tells them apart), and PCR 7 the one db authority,
        # logged before the PCR 4 event of the image it verified.
        python3 - "$IT_REPO/tests/integration" "$r/eventlog.bin" "$bc/esp" <<'PY' || IT_FAILED=1
import struct, sys
sys.path.insert(0, sys.argv[1])
import oracle
ev, esp = oracle.load_log(sys.argv[2]), sys.argv[3]

def path(e):
    n = struct.unpack_from("<Q", e.data, 24)[0]
    dp, out = e.data[32:32 + n], []
    while len(dp) >= 4:
        t, st, ln = dp[0], dp[1], struct.unpack_from("<H", dp, 2)[0]
        if t == 4 and st == 4:
            out.append(dp[4:ln].decode("utf-16-le").rstrip("\0"))
        if t == 0x7F or ln < 4:
            break
        dp = dp[ln:]
    return "/".join(out)

def auth(f):
    return oracle.authenticode(open(esp + f, "rb").read())

apps = [e for e in ev if e.pcr == 4 and e.type == oracle.EV_EFI_BOOT_SERVICES_APPLICATION]
got = [(path(e), e.digests.get("sha256")) for e in apps]
want = [("\\EFI\\BOOT\\BOOTX64.EFI", auth("/EFI/BOOT/BOOTX64.EFI")), ("\\vmlinuz", auth("/vmlinuz"))]
bad = []
if got != want:
    bad.append("PCR 4 applications: %s\nwant %s" % ([(p, (d or b"").hex()[:16]) for p, d in got],
                                                  [(p, d.hex()[:16]) for p, d in want]))
if any(d == auth("/vmlinuz-tampered") for p, d in got):
    bad.append("PCR 4 has the tampered kernel's digest")
a7 = [e.index for e in ev if e.pcr == 7 and e.type == 0x800000E0]
if len(a7) != 1 or not apps or a7[0] > apps[0].index:
    bad.append("PCR 7 authority events %s, want one, before mshim's PCR 4 event %s" % (a7, [e.index for e in apps]))
oracle.report(not bad, "secureboot: refused: PCR 4 = mshim and the signed kernel (\\vmlinuz) only, the firmware "
              "measures no refused image; the db authority is logged before the PCR 4 event", "\n".join(bad))
sys.exit(1 if bad else 0)
PY
        it_sb_pcr7 "$r" "$k/sb.fd" "$k/db.der" \
                "$T: refused: PCR 7 unchanged by the refusals (configuration, separator, the one db authority); replays" ||
                IT_FAILED=1
else
        it_fail "$T: after the unsigned and the tampered kernel were refused, the next entry (signed) boots"
        [ -f "$bc/result/result.json" ] && echo "  booted with: $(it_oracle_cmdline "$bc/result")" >&2
fi

# (d) and (e): stop as soon as the firmware decided; no kernel needs to run.
d=$(it_newboot unsigned-mshim "$k/mshim-unsigned.efi") && it_mkesp "$d" || { it_fail "$T: set-up"; exit 1; }
e=$(it_newboot sb-disabled "$k/mshim-unsigned.efi") && it_mkesp "$e" || { it_fail "$T: set-up"; exit 1; }
BANNER='mshim: version '
REFUSED='BdsDxe: failed to (load|start) Boot[0-9A-F]+ "UEFI[^"]*".*(Access Denied|Security Violation)'
it_log "booting unsigned-mshim (SecureBootEnable 1) and sb-disabled (SecureBootEnable 0) ..."
( it_qemu "$d" --timeout 120 --stop "$REFUSED|$BANNER" ) &
dpid=$!
( OVMF_VARS=$k/nosb.fd it_qemu "$e" --timeout 120 --stop "$REFUSED|$BANNER" ) &
epid=$!
wait "$dpid" "$epid"
it_log "unsigned-mshim stopped after $(cat "$d/seconds") s, sb-disabled after $(cat "$e/seconds") s"
dlog=$(tr -d '\r' < "$d/serial.log" | tr -c '\n -~' ' ')
if grep -q -E "$REFUSED" <<<"$dlog" && ! grep -q "$BANNER" <<<"$dlog"; then
        it_pass "$T: mshim without a signature: the firmware refuses it, mshim never runs"
        grep -m1 -E "$REFUSED" <<<"$dlog" | sed 's/^/  console: /' >&2
else
        it_fail "$T: mshim without a signature: the firmware refuses it, mshim never runs"
        it_show_serial "$d"
fi
elog=$(tr -d '\r' < "$e/serial.log" | tr -c '\n -~' ' ')
if grep -q "$BANNER" <<<"$elog" && ! grep -q -E "$REFUSED" <<<"$elog"; then
        it_pass "$T: keys enrolled without --secure-boot (SecureBootEnable 0): the unsigned mshim runs"
else
        it_fail "$T: keys enrolled without --secure-boot (SecureBootEnable 0): the unsigned mshim runs"
        it_show_serial "$e"
fi
exit "$IT_FAILED"
