#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The first boot through mshim, predicted from a boot that did not run it
(docs/predict.md "The first boot"), computed here with hashlib and
tests/integration/oracle.py, never by mshim: for tests/cli/test_predict_first.sh.

  first_boot_fixture.py make DIR --chain shim|grub --shim SHIM --grub GRUB
                        --kernel KERNEL [--mok-list FILE]
                        [--secure-boot --db DER...] [--return-event]
      DIR/log.bin: a crypto-agile log (sha1, sha256) of firmware -> shim ->
      GRUB -> KERNEL (--chain shim) or firmware -> GRUB -> KERNEL, as OVMF,
      shim 16 and GRUB 2.06 log them (the order of
      keylime-binary_bios_measurements-secureboot.bin in
      ../shared/corpus/eventlogs): PCR 7 SecureBoot, PK, KEK, db (one X.509
      list per --db certificate, owner FW_OWNER), dbx, the separators, the
      firmware's authority for the first application (the first --db entry),
      GPT, shim's MokList/MokListX/MokListTrusted (PCR 14), its SbatLevel and,
      with Secure Boot, its MokListRT authority (its built-in certificate) for
      GRUB; GRUB's commands and files (PCRs 8, 9); the kernel's PCR 4 image
      event; ExitBootServices. --return-event: the firmware's "Returning from
      EFI Application" after the first application. DIR/pcrs.txt: its replay.
  first_boot_fixture.py expect LOG --esp ESP --loader FILE [--chain shim|direct]
                        [--entry-name NAME --entry FILE --kernel FILE --initrd FILE
                         --options S --loader-conf FILE] (in place of --esp)
                        [--mok-list FILE --vendor SHIM] [--auth VAR:OWNER:DER]...
                        [--select 0,2,...]
      the "pcrs" mshim predict must print for the first boot through mshim
      from ESP (loader.conf, the entry predict_fixture.py writes, its kernel,
      initrd and options), or of the entry FILE named NAME booting those: the firmware's events of LOG up to its first boot
      application (PCR 4, after PCR 4's separator), behind shim shim's image
      and its own events (not its verifications), then mshim's events as
      docs/MEASUREMENTS.md gives them, the kernel's image and its Linux 6.1
      stub's PCR 9 events, mshim's TOTP lock (PCR 13), and in PCR 7 one
      authority per --auth (VAR "db" or "MokListRT", OWNER a GUID's 16 bytes in
      hex, DER the certificate) after what stays.
  first_boot_fixture.py mok-files DIR SHIM MOK.der
      shim's MokList files for a MOK, as mokutil and shim write them (owner
      shim's GUID): DIR/vendor.der (SHIM's built-in certificate), DIR/moklist
      (MokList's data: the MOK), DIR/MokListRT and DIR/MokListRT-empty
      (efivarfs files, attributes first: shim's mirror, its built-in
      certificate then MokList, or that alone), DIR/MokNew (efivarfs: the
      request mokutil --import leaves).
"""
import argparse
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402
import predict_fixture as pf  # noqa: E402

BANKS = [("sha1", 0x4, 20), ("sha256", 0xB, 32)]
ALG_NAMES = {0x4: "sha1", 0xB: "sha256", 0xC: "sha384", 0xD: "sha512"}
FW_OWNER = bytes.fromhex("77fa9abd0359324dbd6028f4e78f784b")      # Microsoft's owner GUID, as stored
EV_EFI_GPT_EVENT, EV_EFI_VARIABLE_BOOT = 0x80000006, 0x80000002
APP = oracle.EV_EFI_BOOT_SERVICES_APPLICATION


def ev(pcr, etype, data, digests=None):
    return (pcr, etype, data, digests)


def digests(e, banks):
    pcr, etype, data, d = e
    return {b: (d[b] if d and b in d else oracle.H(b, data)) for b in banks}


def uefi_var(guid, name, data):
    return pf.uefi_var(guid, name, data)


def make(a):
    banks = [b for b, _, _ in BANKS]
    shim = open(a.shim, "rb").read()
    grub = open(a.grub, "rb").read()
    kernel = open(a.kernel, "rb").read()
    vendor = oracle.shim_vendor_cert(a.shim)[0]
    mok = open(a.mok_list, "rb").read() if a.mok_list else b""
    dbs = [open(f, "rb").read() for f in a.db or []]

    def auth_of(img):
        return {b: oracle.authenticode(img, b) for b in banks}
    e = [ev(0, 0x8, b"\0\0"), ev(1, EV_EFI_VARIABLE_BOOT, uefi_var(oracle.GUID_GLOBAL, "BootOrder", b"\1\0"))]
    e.append(ev(7, oracle.EV_EFI_VARIABLE_DRIVER_CONFIG,
                uefi_var(oracle.GUID_GLOBAL, "SecureBoot", b"\x01" if a.secure_boot else b"\x00")))
    if a.secure_boot:
        db = b"".join(oracle.x509_esl(d, FW_OWNER) for d in dbs)
        for g, n, d in ((oracle.GUID_GLOBAL, "PK", b"fixture PK"), (oracle.GUID_GLOBAL, "KEK", b"fixture KEK"),
                        (oracle.GUID_SECDB, "db", db), (oracle.GUID_SECDB, "dbx", b"")):
            e.append(ev(7, oracle.EV_EFI_VARIABLE_DRIVER_CONFIG, uefi_var(g, n, d)))
    e.append(ev(4, oracle.EV_EFI_ACTION, b"Calling EFI Application from Boot Option"))
    e += [ev(p, oracle.EV_SEPARATOR, bytes(4)) for p in range(8)]
    if a.secure_boot:
        e.append(ev(7, oracle.EV_EFI_VARIABLE_AUTHORITY, uefi_var(oracle.GUID_SECDB, "db", FW_OWNER + dbs[0])))
    e.append(ev(5, EV_EFI_GPT_EVENT, b"EFI PART" + bytes(84)))
    if a.chain == "shim":
        e.append(ev(4, APP, b"shim's device path", auth_of(shim)))
        if a.return_event:
            e.append(ev(4, oracle.EV_EFI_ACTION, b"Returning from EFI Application from Boot Option"))
        vesl = oracle.x509_esl(vendor, oracle.GUID_SHIM)
        e.append(ev(14, oracle.EV_IPL, b"MokList\0", {b: oracle.H(b, vesl + mok) for b in banks}))
        e.append(ev(14, oracle.EV_IPL, b"MokListX\0", {b: oracle.H(b, b"shim's dbx") for b in banks}))
        e.append(ev(7, oracle.EV_EFI_VARIABLE_AUTHORITY, uefi_var(oracle.GUID_SHIM, "SbatLevel", b"sbat,1,2022052400\n")))
        e.append(ev(14, oracle.EV_IPL, b"MokListTrusted\0", {b: oracle.H(b, b"\x01") for b in banks}))
        if a.secure_boot:
            e.append(ev(7, oracle.EV_EFI_VARIABLE_AUTHORITY, uefi_var(oracle.GUID_SHIM, "MokListRT",
                                                                      oracle.GUID_SHIM + vendor)))
    e.append(ev(4, APP, b"GRUB's device path", auth_of(grub)))
    if a.return_event and a.chain != "shim":
        e.append(ev(4, oracle.EV_EFI_ACTION, b"Returning from EFI Application from Boot Option"))
    for cmd in ("set root=hd0,gpt2", "linux /vmlinuz root=/dev/sda2 quiet"):
        e.append(ev(8, oracle.EV_IPL, b"grub_cmd: " + cmd.encode() + b"\0", {b: oracle.H(b, cmd.encode()) for b in banks}))
    e.append(ev(9, oracle.EV_IPL, b"/vmlinuz\0", {b: oracle.H(b, kernel) for b in banks}))
    e.append(ev(4, APP, b"", auth_of(kernel)))
    e.append(ev(8, oracle.EV_IPL, b"kernel_cmdline: /vmlinuz root=/dev/sda2 quiet\0"))
    e.append(ev(5, oracle.EV_EFI_ACTION, b"Exit Boot Services Invocation"))
    e.append(ev(5, oracle.EV_EFI_ACTION, b"Exit Boot Services Returned with Success"))
    os.makedirs(a.dir, exist_ok=True)
    log = pf.spec_header() + b"".join(pf.record(p, t, d, None, digests((p, t, d, x), banks)) for p, t, d, x in e)
    open(os.path.join(a.dir, "log.bin"), "wb").write(log)
    with open(os.path.join(a.dir, "pcrs.txt"), "w") as f:
        for b in banks:
            vals = {}
            for x in e:
                vals[x[0]] = oracle.extend(b, vals.get(x[0], oracle.zeros(b)), digests(x, banks)[b])
            for n in range(24):
                f.write("%s:%d=%s\n" % (b, n, vals.get(n, oracle.zeros(b)).hex()))
    return 0


def mshim_events(esp, loader, banks, boot=None):
    """mshim (started with loader's bytes) booting predict_fixture.py's
    entry a.conf from esp, or boot = (entry name, entry, kernel, initrd,
    options, loader.conf) as bytes (the options a str): (pcr, type, data,
    digests)."""
    def read(*p):
        return open(os.path.join(*p), "rb").read()
    if boot is None:
        boot = ("a.conf", read(esp, "loader", "entries", "a.conf"), read(esp, "vmlinuz"), read(esp, "initrd.img"),
                "quiet splash", read(esp, "loader", "loader.conf"))
    name, entry, kernel, initrd, options, conf = boot
    opts = pf.utf16(options)

    def h(data):
        return {b: oracle.H(b, data) for b in banks}
    out = [("mshim", ev(4, APP, b"", {b: oracle.authenticode(loader, b) for b in banks}))]
    for tag, path, content in ((oracle.TAG_MSHIM_LOADER_CONF, oracle.LOADER_CONF_PATH, conf),
                               (oracle.TAG_MSHIM_ENTRY, "\\loader\\entries\\" + name, entry)):
        data, digest_input = oracle.mshim_file_event(tag, path, content)
        out.append(("mshim", ev(5, oracle.EV_EVENT_TAG, data, h(digest_input))))
    out.append(("kernel", ev(4, APP, b"", {b: oracle.authenticode(kernel, b) for b in banks})))
    out.append(("mshim", ev(12, oracle.EV_IPL, opts, h(opts))))
    out.append(("mshim", ev(13, oracle.EV_EVENT_TAG, oracle.totp_fence_event(), h(oracle.totp_fence_event()))))
    # Linux 6.1's stub: LoadOptions, then the initrd (docs/MEASUREMENTS.md).
    out.append(("stub", ev(9, oracle.EV_EVENT_TAG, b"", h(opts))))
    out.append(("stub", ev(9, oracle.EV_EVENT_TAG, b"", h(initrd))))
    return out


def is_sbat_level(x):
    return x.type == oracle.EV_EFI_VARIABLE_AUTHORITY and x.data[:16] == oracle.GUID_SHIM and \
        x.data[32:32 + 18] == "SbatLevel".encode("utf-16-le")


def expect(a):
    sizes, events = oracle.parse_log(open(a.log, "rb").read())
    banks = [ALG_NAMES[alg] for alg in sizes if alg in ALG_NAMES]
    shim = a.chain == "shim"
    # The first boot application: PCR 4's first after its separator.
    sep4, first = False, None
    for i, x in enumerate(events):
        if x.pcr == 4 and x.type == oracle.EV_SEPARATOR:
            sep4 = True
        elif x.pcr == 4 and x.type == APP and sep4 and first is None:
            first = i
    keep, after = [], []         # events of the next boot, before and after mshim's
    verified = False
    for i, x in enumerate(events):
        e = (x.pcr, x.type, x.data, x.digests)
        if x.type == oracle.EV_NO_ACTION or x.pcr >= 24:
            continue
        if i < first:
            keep.append(e)
        elif i == first and shim:
            keep.append(e)
        elif x.pcr == 5 and x.type == oracle.EV_EFI_ACTION:
            after.append(e)          # ExitBootServices
        elif shim and x.pcr == 14:
            keep.append(e)
        elif shim and x.pcr == 7 and not verified and (x.type != oracle.EV_EFI_VARIABLE_AUTHORITY or is_sbat_level(x)):
            keep.append(e)
        elif shim and x.pcr == 7:
            verified = True
        # everything else: the old chain's (GRUB, its kernel, their authorities)
    if not shim:
        # The firmware's authority for the first application goes with it.
        seen_sep7, k2 = False, []
        for e in keep:
            if e[0] == 7 and seen_sep7 and e[1] == oracle.EV_EFI_VARIABLE_AUTHORITY:
                continue
            seen_sep7 |= e[0] == 7 and e[1] == oracle.EV_SEPARATOR
            k2.append(e)
        keep = k2
    boot = None
    if a.entry:
        def read(f):
            return open(f, "rb").read()
        boot = (a.entry_name, read(a.entry), read(a.kernel), read(a.initrd), a.options, read(a.loader_conf))
    m = [x for _, x in mshim_events(a.esp, open(a.loader, "rb").read(), banks, boot)]
    auths = []
    for spec in a.auth or []:
        var, owner, der = spec.split(":")
        guid = oracle.GUID_SHIM if var == "MokListRT" else oracle.GUID_SECDB
        auths.append(ev(7, oracle.EV_EFI_VARIABLE_AUTHORITY,
                        uefi_var(guid, var, bytes.fromhex(owner) + open(der, "rb").read())))
    seq = keep + m + auths + after
    if shim and a.mok_list is not None:
        vendor = oracle.shim_vendor_cert(a.vendor)[0]
        data = oracle.x509_esl(vendor, oracle.GUID_SHIM) + open(a.mok_list, "rb").read()
        seq = [e if not (e[0] == 14 and e[2] == b"MokList\0") else
               (14, e[1], e[2], {b: oracle.H(b, data) for b in banks}) for e in seq]
    # Log order does not matter across PCRs; within one it is keep, mshim, after.
    pcrs = {b: {} for b in banks}
    for x in events:
        if x.type == oracle.EV_NO_ACTION and x.pcr == 0 and x.data.startswith(b"StartupLocality\0"):
            for b in banks:     # PCR 0 starts at the locality (the corpus README)
                pcrs[b][0] = bytes(oracle.zeros(b)[:-1]) + x.data[16:17]
    for e in seq:
        for b in banks:
            d = digests(e, banks)[b]
            pcrs[b][e[0]] = oracle.extend(b, pcrs[b].get(e[0], oracle.zeros(b)), d)
    sel = [int(n) for n in a.select.split(",")] if a.select else sorted({e[0] for e in seq})
    print(json.dumps({b: {str(n): pcrs[b].get(n, oracle.zeros(b)).hex() for n in sel} for b in banks},
                     sort_keys=True))
    return 0


def mok_files(a):
    vendor = oracle.shim_vendor_cert(a.shim)[0]
    mok = oracle.x509_esl(open(a.mok, "rb").read(), oracle.GUID_SHIM)
    vendor_esl = oracle.x509_esl(vendor, oracle.GUID_SHIM)
    for name, data in (("vendor.der", vendor), ("moklist", mok), ("MokListRT", b"\x06\0\0\0" + vendor_esl + mok),
                       ("MokListRT-empty", b"\x06\0\0\0" + vendor_esl), ("MokNew", b"\x07\0\0\0" + mok)):
        with open(os.path.join(a.dir, name), "wb") as f:
            f.write(data)
    return 0


def main():
    p = argparse.ArgumentParser()
    sp = p.add_subparsers(dest="cmd", required=True)
    s = sp.add_parser("make")
    s.add_argument("dir")
    s.add_argument("--chain", choices=["shim", "grub"], required=True)
    s.add_argument("--shim", required=True)
    s.add_argument("--grub", required=True)
    s.add_argument("--kernel", required=True)
    s.add_argument("--mok-list")
    s.add_argument("--secure-boot", action="store_true")
    s.add_argument("--db", action="append")
    s.add_argument("--return-event", action="store_true")
    s = sp.add_parser("expect")
    s.add_argument("log")
    s.add_argument("--esp")
    s.add_argument("--loader", required=True)
    for o in ("--entry-name", "--entry", "--kernel", "--initrd", "--options", "--loader-conf"):
        s.add_argument(o)
    s.add_argument("--chain", choices=["shim", "direct"], default="direct")
    s.add_argument("--mok-list")
    s.add_argument("--vendor")
    s.add_argument("--auth", action="append")
    s.add_argument("--select")
    s = sp.add_parser("mok-files")
    s.add_argument("dir")
    s.add_argument("shim")
    s.add_argument("mok")
    a = p.parse_args()
    return {"make": make, "expect": expect, "mok-files": mok_files}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
