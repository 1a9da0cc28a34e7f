#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Measurements nobody can forge (docs/SECURITY.md). Two boots, in parallel:
#  (a) no loader.conf and an entry file that does not parse, next to the
#      good entry: PCR 5 holds mshim's "absent" event for loader.conf, the
#      broken entry (tag "unparseable", its bytes in the digest), then the
#      entry that boots; every digest is computed here from the ESP files
#      (oracle.py: tag, UTF-16LE path and file bytes), and PCR 5 is
#      predicted from them. The 6.1 kernel's stub measures the initrd
#      itself, so PCR 9 holds exactly one initrd event.
#  (b) a copy of the 6.1 kernel whose setup header (kernel_version string)
#      claims 5.9, a kernel whose stub takes the initrd and measures
#      nothing: mshim measures it, so PCR 9 holds mshim's event and the
#      real stub's, both with the initrd's hash; PCRs replay from the log.
set -u
. "$(dirname "$0")/lib.sh"
T=hardening
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL"; then
        it_fail "$T: prerequisites"; exit 1
fi
a=$(it_newboot noconf) && b=$(it_newboot oldstub) || { it_fail "$T: set-up"; exit 1; }
rm "$a/esp/loader/loader.conf"
# Sorts before mshim-test.conf by name; names neither linux nor efi.
printf 'title broken\noptions init=/bin/sh\n' > "$a/esp/loader/entries/0-broken.conf"

# The kernel_version string (x86 boot protocol: its offset at 0x20e, +0x200)
# of the copy says 5.9 instead of 6.1: same length, Secure Boot is off.
python3 - "$b/esp/vmlinuz" <<'PY' || { it_fail "$T: set-up (patch kernel_version)"; exit 1; }
import struct, sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
off = struct.unpack_from("<H", d, 0x20e)[0] + 0x200
assert d[0x202:0x206] == b"HdrS" and d[off:off + 4] == b"6.1.", d[off:off + 16]
d[off:off + 4] = b"5.9."
open(p, "wb").write(d)
PY

it_boot_all "$a" "$b"
it_boot_replays "$T" "$a" "$b"
if it_boot_ok "$a"; then
        it_oracle check-pcr5 --result "$a/result" --name "$T: noconf" \
                --bad-entry "$a/esp/loader/entries/0-broken.conf" \
                --entry "$a/esp/loader/entries/mshim-test.conf" || IT_FAILED=1
        it_oracle check-pcr12 --result "$a/result" --name "$T: noconf" --options "$IT_OPTIONS" || IT_FAILED=1
        it_oracle check-pcr9 --result "$a/result" --name "$T: noconf: 6.1 stub" \
                --initrd "$a/esp/initrd.img" --count 1 || IT_FAILED=1
fi
if it_boot_ok "$b"; then
        it_oracle check-pcr9 --result "$b/result" --name "$T: oldstub: mshim's and the stub's" \
                --initrd "$b/esp/initrd.img" --count 2 || IT_FAILED=1
        it_oracle check-pcr4 --result "$b/result" --name "$T: oldstub" \
                "$b/esp/EFI/BOOT/BOOTX64.EFI" "$b/esp/vmlinuz" || IT_FAILED=1
fi
exit "$IT_FAILED"
