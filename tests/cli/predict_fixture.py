#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Fixtures for tests/cli/test_predict.sh, computed here with hashlib and
tests/integration/oracle.py (never by mshim): a crypto-agile event log of a
boot firmware -> mshim -> Linux 6.1 (sha1 and sha256 banks) from an ESP
tree, its replayed PCRs, and the PCR values a change must give.

  predict_fixture.py make DIR KERNEL [--grub] [--authority]
      DIR/esp (loader.conf, entries/a.conf, vmlinuz = KERNEL, initrd.img),
      DIR/log.bin, DIR/pcrs.txt ("sha256:4=<hex>" lines), DIR/extends.txt
      (tpm2_pcrextend arguments, one event a line)
  predict_fixture.py make DIR KERNEL --totp
      the same with loader.conf "totp show": PCR 12 holds the TOTP initrd
      event (size and SHA-256 of the initrd) and the fence after the
      command line
  predict_fixture.py expect DIR [--options S] [--initrd FILE] [--totp [--totp-point]]
                     [--conf FILE] [--loader FILE] [--extends OUT]
                     [--secure-boot [--db-add FILE] [--dbx-add FILE]]
      the JSON "pcrs" object the prediction must print; with --db-add or
      --dbx-add, db or dbx with FILE's signature lists after its own (new
      entries only: the firmware's appending, without duplicates)

  make --secure-boot: PCR 7 as OVMF logs it with Secure Boot on
  (docs/MEASUREMENTS.md): SecureBoot = 1, PK, KEK, db (one X.509 entry,
  SB_OWNER + SB_CERT), dbx (empty) as UEFI_VARIABLE_DATA, the separator,
  one EV_EFI_VARIABLE_AUTHORITY naming that db entry.
  predict_fixture.py make-grub DIR KERNEL
      the chainload path firmware -> mshim -> GRUB 2.06 (no entries) whose
      DIR/grub.cfg boots KERNEL with GRUB_INITRD: its commands in PCR 8 and
      the files they open in PCR 9 as docs/MEASUREMENTS.md gives them
  predict_fixture.py expect-grub DIR [--options S] [--initrd FILE]
      the "pcrs" of that boot with another linux line or initrd
  predict_fixture.py expect-entry --entry-name NAME --entry FILE
                     --kernel FILE --initrd FILE --options S
                     [--loader-conf FILE] [--select 4,5,...] [--extends OUT]
                     [--loader FILE] [--approval-lines]
      the "pcrs" of make's boot with every file mshim reads replaced: entry
      NAME (FILE's bytes) booting KERNEL with INITRD and S, loader.conf
      FILE's or absent (tests/cli/test_hooks.sh); --extends: that boot's
      tpm2_pcrextend arguments to OUT, as make's extends.txt;
      --approval-lines: the sha256 PCRs 4,5,7,9,12 as "sha256:N=hex" lines
      (an approval's order) rather than JSON
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import oracle  # noqa: E402

BANKS = [("sha1", 0x4, 20), ("sha256", 0xB, 32)]
CONF = b"timeout 0\ndefault a\n"
CONF_TOTP = b"timeout 0\ndefault a\ntotp show\n"
ENTRY = b"title A\nlinux /vmlinuz\ninitrd /initrd.img\noptions quiet splash\n"
INITRD = b"an initrd for the fixture\n" * 10


def spec_header():
    spec = b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 0, 2, len(BANKS))
    spec += b"".join(struct.pack("<HH", a, s) for _, a, s in BANKS) + b"\0"
    return struct.pack("<II", 0, oracle.EV_NO_ACTION) + bytes(20) + struct.pack("<I", len(spec)) + spec


def record(pcr, etype, data, digest_input=None, digests=None):
    out = struct.pack("<III", pcr, etype, len(BANKS))
    for b, alg, _ in BANKS:
        d = digests[b] if digests else oracle.H(b, data if digest_input is None else digest_input)
        out += struct.pack("<H", alg) + d
    return out + struct.pack("<I", len(data)) + data


SB_OWNER = b"fixture db owner"
SB_CERT = b"\x30 stands for the fixture's db certificate (DER)"
GUID_X509 = oracle.GUID_X509


def uefi_var(guid, name, data):
    """UEFI_VARIABLE_DATA (PC Client PFP 10.4.4)."""
    n = name.encode("utf-16-le")
    return guid + struct.pack("<QQ", len(n) // 2, len(data)) + n + data


def esl(sig_type, entries):
    """EFI_SIGNATURE_LIST (UEFI 2.10 32.4.1), entries of equal size."""
    size = len(entries[0])
    return sig_type + struct.pack("<III", 28 + size * len(entries), 0, size) + b"".join(entries)


def sb_config(db_add=b"", dbx_add=b""):
    """PCR 7's configuration events, before the separator."""
    db = esl(GUID_X509, [SB_OWNER + SB_CERT]) + db_add
    return [(7, oracle.EV_EFI_VARIABLE_DRIVER_CONFIG, uefi_var(g, n, d), None) for g, n, d in (
        (oracle.GUID_GLOBAL, "SecureBoot", b"\x01"), (oracle.GUID_GLOBAL, "PK", b"fixture PK"),
        (oracle.GUID_GLOBAL, "KEK", b"fixture KEK"), (oracle.GUID_SECDB, "db", db),
        (oracle.GUID_SECDB, "dbx", dbx_add))]


def utf16(s):
    return s.encode("utf-16-le") + b"\0\0"


def events(esp, grub, authority, options="quiet splash", sb=None, conf=CONF, entry=("a.conf", ENTRY), kernel=None,
           initrd=None, totp=False, loader=None):
    """(pcr, type, data, digest input or {bank: digest}) in log order. conf
    None: no loader.conf; entry: (file name, bytes) of the entry booted;
    totp: TOTP on (the initrd event and the fence after the command line);
    loader: mshimx64.efi's bytes (else a stand-in digest)."""
    if kernel is None:
        kernel = open(os.path.join(esp, "vmlinuz"), "rb").read()
    mshim_auth = {b: oracle.H(b, b"stands for mshim's Authenticode") if loader is None else
                  oracle.authenticode(loader, b) for b, _, _ in BANKS}
    kernel_auth = {b: oracle.authenticode(kernel, b) for b, _, _ in BANKS}
    opts = utf16(options)
    ev = [(0, 0x8, b"\0\0", None), (4, oracle.EV_EFI_ACTION, b"Calling EFI Application from Boot Option", None)]
    if sb is not None:
        ev += sb_config(*sb)
    ev += [(p, oracle.EV_SEPARATOR, bytes(4), None) for p in range(8)]
    if sb is not None:
        ev.append((7, oracle.EV_EFI_VARIABLE_AUTHORITY, uefi_var(oracle.GUID_SECDB, "db", SB_OWNER + SB_CERT), None))
    if authority:
        ev.append((7, oracle.EV_EFI_VARIABLE_AUTHORITY, b"a db entry", None))
    ev.append((4, oracle.EV_EFI_BOOT_SERVICES_APPLICATION, b"mshim's device path", mshim_auth))
    conf_tag = oracle.TAG_MSHIM_ABSENT if conf is None else oracle.TAG_MSHIM_LOADER_CONF
    for tag, path, content in ((conf_tag, oracle.LOADER_CONF_PATH, conf),
                               (oracle.TAG_MSHIM_ENTRY, "\\loader\\entries\\" + entry[0], entry[1])):
        data, digest_input = oracle.mshim_file_event(tag, path, content)
        ev.append((5, oracle.EV_EVENT_TAG, data, digest_input))
    ev.append((4, oracle.EV_EFI_BOOT_SERVICES_APPLICATION, b"the kernel's device path", kernel_auth))
    if grub:
        ev.append((8, oracle.EV_IPL, b"grub_cmd: linux /vmlinuz", None))
    ev.append((12, oracle.EV_IPL, opts, opts))
    if totp:
        # The TOTP point: the initrd the code vouches for, then the fence;
        # the 6.1 stub's PCR 9 events come after StartImage.
        ti = oracle.totp_initrd_event(INITRD if initrd is None else initrd)
        ev += [(12, oracle.EV_EVENT_TAG, ti, ti), (12, oracle.EV_EVENT_TAG, oracle.totp_fence_event(), None)]
    ev.append((9, oracle.EV_EVENT_TAG, oracle.tagged(oracle.TAG_LINUX_LOAD_OPTIONS, b"LOADED_IMAGE::LoadOptions\0"), opts))
    ev.append((9, oracle.EV_EVENT_TAG, oracle.tagged(oracle.TAG_LINUX_INITRD, b"Linux initrd\0"),
               INITRD if initrd is None else initrd))
    ev.append((5, oracle.EV_EFI_ACTION, b"Exit Boot Services Invocation", None))
    ev.append((5, oracle.EV_EFI_ACTION, b"Exit Boot Services Returned with Success", None))
    return ev


GRUB_INITRD = b"an initrd GRUB loads\n" * 7
GRUB_OPTIONS = "console=ttyS0 quiet"


def grub_cfg(options):
    return ("set timeout=0\nsearch --no-floppy --file --set=root /vmlinuz\necho 'mshim: GRUB'\n"
            "linuxefi /vmlinuz %s\ninitrdefi /initrd.img\nboot\n" % options).encode()


def grub_events(esp, options, initrd):
    """OVMF, mshim's chainload path, GRUB 2.06 running grub_cfg(options)."""
    kernel = open(os.path.join(esp, "vmlinuz"), "rb").read()
    auth = {b: oracle.H(b, b"stands for mshim's Authenticode") for b, _, _ in BANKS}
    grub_auth = {b: oracle.H(b, b"stands for GRUB's Authenticode") for b, _, _ in BANKS}
    ev = [(0, 0x8, b"\0\0", None), (4, oracle.EV_EFI_ACTION, b"Calling EFI Application from Boot Option", None)]
    ev += [(p, oracle.EV_SEPARATOR, bytes(4), None) for p in range(8)]
    ev.append((4, oracle.EV_EFI_BOOT_SERVICES_APPLICATION, b"mshim's device path", auth))
    data, digest_input = oracle.mshim_file_event(oracle.TAG_MSHIM_LOADER_CONF, oracle.LOADER_CONF_PATH, CONF)
    ev.append((5, oracle.EV_EVENT_TAG, data, digest_input))
    ev.append((4, oracle.EV_EFI_BOOT_SERVICES_APPLICATION, b"GRUB's device path", grub_auth))
    ev.append((12, oracle.EV_EVENT_TAG, oracle.tagged(oracle.TAG_MSHIM_CHAINLOAD, b"\0\0"), None))

    def cmd(prefix, text):
        ev.append((8, oracle.EV_IPL, (prefix + text).encode() + b"\0", text.encode()))

    def opened(path, content):
        ev.append((9, oracle.EV_IPL, path.encode() + b"\0", content))
    cmd("grub_cmd: ", "set timeout=0")
    cmd("grub_cmd: ", "search --no-floppy --file --set=root /vmlinuz")
    opened("(hd0)/vmlinuz", kernel)
    cmd("grub_cmd: ", "echo mshim: GRUB")
    cmd("grub_cmd: ", "linuxefi /vmlinuz " + options)
    opened("/vmlinuz", kernel)
    cmd("kernel_cmdline: ", "/vmlinuz " + options)
    cmd("grub_cmd: ", "initrdefi /initrd.img")
    opened("/initrd.img", initrd)
    cmd("grub_cmd: ", "boot")
    ev.append((5, oracle.EV_EFI_ACTION, b"Exit Boot Services Invocation", None))
    return ev


def digests_of(e):
    pcr, etype, data, x = e
    if isinstance(x, dict):
        return x
    return {b: oracle.H(b, data if x is None else x) for b, _, _ in BANKS}


def replay(evs):
    pcrs = {b: {} for b, _, _ in BANKS}
    for e in evs:
        for b, d in digests_of(e).items():
            pcrs[b][e[0]] = oracle.extend(b, pcrs[b].get(e[0], oracle.zeros(b)), d)
    return pcrs


def write_extends(path, evs):
    """tpm2_pcrextend arguments, one event a line."""
    with open(path, "w") as f:
        for e in evs:
            f.write("%d:%s\n" % (e[0], ",".join("%s=0x%s" % (b, d.hex()) for b, d in digests_of(e).items())))


def cmd_make(a):
    esp = os.path.join(a.dir, "esp")
    grub = a.cmd == "make-grub"
    os.makedirs(os.path.join(esp, "loader", "entries"), exist_ok=True)
    totp = getattr(a, "totp", False)
    open(os.path.join(esp, "loader", "loader.conf"), "wb").write(CONF_TOTP if totp else CONF)
    open(os.path.join(esp, "vmlinuz"), "wb").write(open(a.kernel, "rb").read())
    if grub:
        open(os.path.join(esp, "initrd.img"), "wb").write(GRUB_INITRD)
        open(os.path.join(a.dir, "grub.cfg"), "wb").write(grub_cfg(GRUB_OPTIONS))
        evs = grub_events(esp, GRUB_OPTIONS, GRUB_INITRD)
    else:
        open(os.path.join(esp, "loader", "entries", "a.conf"), "wb").write(ENTRY)
        open(os.path.join(esp, "initrd.img"), "wb").write(INITRD)
        evs = events(esp, a.grub, a.authority, sb=(b"", b"") if a.secure_boot else None,
                     conf=CONF_TOTP if totp else CONF, totp=totp)
    log = spec_header() + b"".join(record(p, t, d, None, digests_of((p, t, d, x))) for p, t, d, x in evs)
    open(os.path.join(a.dir, "log.bin"), "wb").write(log)
    write_extends(os.path.join(a.dir, "extends.txt"), evs)
    with open(os.path.join(a.dir, "pcrs.txt"), "w") as f:
        for b, vals in replay(evs).items():
            for n in range(24):
                f.write("%s:%d=%s\n" % (b, n, vals.get(n, oracle.zeros(b)).hex()))
    return 0


def cmd_expect(a):
    global INITRD
    esp = os.path.join(a.dir, "esp")
    if a.initrd:
        INITRD = open(a.initrd, "rb").read()
    if a.cmd == "expect-grub":
        initrd = open(a.initrd, "rb").read() if a.initrd else GRUB_INITRD
        evs = grub_events(esp, a.options or GRUB_OPTIONS, initrd)
    else:
        sb = None
        if a.secure_boot:
            sb = tuple(open(f, "rb").read() if f else b"" for f in (a.db_add, a.dbx_add))
        conf = open(a.conf, "rb").read() if a.conf else CONF_TOTP if a.totp else CONF
        loader = open(a.loader, "rb").read() if a.loader else None
        evs = events(esp, False, False, a.options or "quiet splash", sb, conf=conf, totp=a.totp, loader=loader)
        if a.totp_point:
            # Up to the TOTP point: the initrd event after the command line;
            # the fence, the stub's PCR 9 and Exit Boot Services come later.
            ti = oracle.totp_initrd_event(INITRD)
            evs = evs[:[e[2] for e in evs].index(ti) + 1]
        if a.extends:
            write_extends(a.extends, evs)
        if loader is not None:
            # A new mshim extends the TOTP lock into PCR 13 before it starts
            # the kernel, whatever loader.conf says (docs/MEASUREMENTS.md
            # "The TOTP fence"); the baseline's older mshim did not.
            evs.append((13, oracle.EV_EVENT_TAG, oracle.totp_fence_event(), None))
    print(json.dumps({b: {str(n): v.hex() for n, v in vals.items()} for b, vals in replay(evs).items()}, sort_keys=True))
    return 0


def cmd_expect_entry(a):
    """The boot of one entry from an ESP tree written out by the caller."""
    def read(f):
        return open(f, "rb").read()
    conf = read(a.loader_conf) if a.loader_conf else None
    evs = events(None, False, False, a.options, conf=conf, entry=(a.entry_name, read(a.entry)),
                 kernel=read(a.kernel), initrd=read(a.initrd), loader=read(a.loader) if a.loader else None)
    if a.extends:
        write_extends(a.extends, evs)
    pcrs = {b: {str(n): v.hex() for n, v in vals.items() if not a.select or n in a.select}
            for b, vals in replay(evs).items()}
    if a.approval_lines:
        # An approval's values in its order, as the tests read one back.
        print("\n".join("sha256:%d=%s" % (n, pcrs["sha256"][str(n)]) for n in (4, 5, 7, 9, 12)))
        return 0
    print(json.dumps(pcrs, sort_keys=True))
    return 0


def main():
    import argparse
    p = argparse.ArgumentParser()
    sp = p.add_subparsers(dest="cmd", required=True)
    s = sp.add_parser("make"); s.add_argument("dir"); s.add_argument("kernel")
    s.add_argument("--grub", action="store_true"); s.add_argument("--authority", action="store_true")
    s.add_argument("--secure-boot", action="store_true")
    s.add_argument("--totp", action="store_true", help="loader.conf totp show: the initrd event and the fence")
    s.set_defaults(f=cmd_make)
    s = sp.add_parser("make-grub"); s.add_argument("dir"); s.add_argument("kernel")
    s.set_defaults(f=cmd_make)
    for name in ("expect", "expect-grub"):
        s = sp.add_parser(name); s.add_argument("dir"); s.add_argument("--options"); s.add_argument("--initrd")
        s.add_argument("--secure-boot", action="store_true"); s.add_argument("--db-add"); s.add_argument("--dbx-add")
        s.add_argument("--totp", action="store_true", help="TOTP on in the next boot")
        s.add_argument("--conf", help="the next boot's loader.conf (else make's)")
        s.add_argument("--loader", help="the next boot's mshimx64.efi (PCR 4)")
        s.add_argument("--totp-point", action="store_true", help="with --totp: the PCRs at the TOTP point")
        s.add_argument("--extends", help="the boot's tpm2_pcrextend arguments to this file")
        s.set_defaults(f=cmd_expect)
    s = sp.add_parser("expect-entry"); s.add_argument("--entry-name", required=True)
    s.add_argument("--entry", required=True); s.add_argument("--kernel", required=True)
    s.add_argument("--initrd", required=True); s.add_argument("--options", required=True)
    s.add_argument("--loader-conf"); s.add_argument("--select", type=lambda v: [int(x) for x in v.split(",")])
    s.add_argument("--extends"); s.add_argument("--loader", help="the next boot's mshimx64.efi (PCR 4)")
    s.add_argument("--approval-lines", action="store_true",
                   help="the sha256 PCRs 4,5,7,9,12 as 'sha256:N=hex' lines, not JSON")
    s.set_defaults(f=cmd_expect_entry)
    a = p.parse_args()
    return a.f(a)


if __name__ == "__main__":
    sys.exit(main())
