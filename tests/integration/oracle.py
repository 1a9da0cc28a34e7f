#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Test oracles for the integration tests, independent of mshim's C code.

Everything here is recomputed from first principles with hashlib: a small
crypto-agile (TCG PC Client PFP) event-log parser and replay, PCR
predictions from the files put on the ESP, a PE/COFF Authenticode digest,
and the parser of the test initramfs' serial-console report.

Subcommands print "PASS: name" / "FAIL: name" lines (with details on
stderr) and exit 1 when anything failed.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import struct
import sys
import uuid

ALGS = {0x4: "sha1", 0xB: "sha256", 0xC: "sha384", 0xD: "sha512", 0x12: "sm3_256"}
EV_NO_ACTION, EV_SEPARATOR, EV_EVENT_TAG, EV_IPL = 0x3, 0x4, 0x6, 0xD
EV_EFI_BOOT_SERVICES_APPLICATION = 0x80000003
EV_EFI_VARIABLE_DRIVER_CONFIG, EV_EFI_ACTION, EV_EFI_VARIABLE_AUTHORITY = 0x80000001, 0x80000007, 0x800000E0
# GUIDs as they are stored (EFI_GUID: first three fields little endian).
GUID_GLOBAL = uuid.UUID("8be4df61-93ca-11d2-aa0d-00e098032b8c").bytes_le     # EFI_GLOBAL_VARIABLE
GUID_SECDB = uuid.UUID("d719b2cb-3d3a-4596-a3bc-dad00e67656f").bytes_le      # EFI_IMAGE_SECURITY_DATABASE
GUID_SHIM = uuid.UUID("605dab50-e046-4300-abb6-3dd810dd8b23").bytes_le       # SHIM_LOCK / MOK variables
GUID_X509 = uuid.UUID("a5c059a1-94e4-4aa7-87b5-ab155c2bf072").bytes_le       # EFI_CERT_X509_GUID


def x509_esl(der, owner):
    """One EFI_SIGNATURE_LIST holding one X.509 certificate (UEFI 2.10,
    32.4.1): type, ListSize, HeaderSize 0, SignatureSize, owner + DER."""
    return GUID_X509 + struct.pack("<III", 28 + 16 + len(der), 0, 16 + len(der)) + owner + der
# mshim's PCR 5/12 tags (docs/MEASUREMENTS.md), written here from the doc.
TAG_MSHIM_LOADER_CONF, TAG_MSHIM_ENTRY = 0x6D736801, 0x6D736802
TAG_MSHIM_ABSENT, TAG_MSHIM_UNREADABLE, TAG_MSHIM_ENTRY_BAD = 0x6D736803, 0x6D736804, 0x6D736805
TAG_MSHIM_CHAINLOAD, TAG_MSHIM_EXIT = 0x6D736806, 0x6D736807
TAG_MSHIM_TOTP_FENCE, TAG_MSHIM_TOTP_INITRD = 0x6D736808, 0x6D736809
LOADER_CONF_PATH = "\\loader\\loader.conf"
TAG_LINUX_INITRD, TAG_LINUX_LOAD_OPTIONS = 0x8F3B22EC, 0x8F3B22ED
# PCRs 0-15 but IMA's 10, and but those the test's OS extends itself
# (IT_OS_PCRS, e.g. "15": test_luks*.sh's keyscript, checked there against
# the events it logged): no firmware log nor prediction holds those.
CHECKED_PCRS = [n for n in list(range(0, 10)) + list(range(11, 16))
                if str(n) not in os.environ.get("IT_OS_PCRS", "").split(",")]

failed = False


def report(ok, name, detail=""):
    global failed
    print(("PASS: " if ok else "FAIL: ") + name, flush=True)
    if not ok:
        failed = True
        if detail:
            sys.stderr.write("  " + detail.replace("\n", "\n  ") + "\n")


def H(bank, data):
    return hashlib.new(bank, data).digest()


def zeros(bank):
    return bytes(hashlib.new(bank).digest_size)


def extend(bank, old, digest):
    return H(bank, old + digest)


# ---- event log -----------------------------------------------------------

class Event:
    def __init__(self, index, pcr, etype, digests, data):
        self.index, self.pcr, self.type, self.digests, self.data = index, pcr, etype, digests, data

    def tag_id(self):
        if self.type == EV_EVENT_TAG and len(self.data) >= 8:
            return struct.unpack_from("<I", self.data, 0)[0]
        return None


def parse_log(blob):
    """Parse a crypto-agile log; returns (algorithm sizes, events)."""
    off = 0

    def need(n):
        if len(blob) - off < n:
            raise ValueError("event log truncated at offset %d" % off)

    need(32)
    pcr, etype = struct.unpack_from("<II", blob, 0)
    size = struct.unpack_from("<I", blob, 28)[0]
    off = 32
    need(size)
    spec = blob[off:off + size]
    off += size
    if etype != EV_NO_ACTION or not spec.startswith(b"Spec ID Event03\0"):
        raise ValueError("not a crypto-agile log (first event is not Spec ID Event03)")
    nalg = struct.unpack_from("<I", spec, 24)[0]
    sizes = {}
    for i in range(nalg):
        alg, dsz = struct.unpack_from("<HH", spec, 28 + 4 * i)
        sizes[alg] = dsz
    events = []
    while off < len(blob):
        need(12)
        pcr, etype, count = struct.unpack_from("<III", blob, off)
        off += 12
        digests = {}
        for _ in range(count):
            need(2)
            alg = struct.unpack_from("<H", blob, off)[0]
            off += 2
            if alg not in sizes:
                raise ValueError("unknown algorithm 0x%x at offset %d" % (alg, off))
            need(sizes[alg])
            digests[ALGS.get(alg, "alg%x" % alg)] = blob[off:off + sizes[alg]]
            off += sizes[alg]
        need(4)
        esz = struct.unpack_from("<I", blob, off)[0]
        off += 4
        need(esz)
        events.append(Event(len(events) + 1, pcr, etype, digests, blob[off:off + esz]))
        off += esz
    return sizes, events


def replay(events, banks):
    pcrs = {b: {} for b in banks}
    for ev in events:
        if ev.type == EV_NO_ACTION:
            if ev.pcr == 0 and ev.data.startswith(b"StartupLocality\0") and len(ev.data) >= 17:
                for b in banks:
                    pcrs[b][0] = bytes(hashlib.new(b).digest_size - 1) + ev.data[16:17]
            continue
        for b in banks:
            if b in ev.digests:
                pcrs[b][ev.pcr] = extend(b, pcrs[b].get(ev.pcr, zeros(b)), ev.digests[b])
    return pcrs


def load_log(path):
    with open(path, "rb") as f:
        return parse_log(f.read())[1]


# ---- the guest's report ----------------------------------------------------

def pe_section(path, want):
    """The raw data of section `want` (bytes) of a PE file, long COFF names
    (e.g. ".vendor_cert", ".sbatlevel") resolved through the string table."""
    d = open(path, "rb").read()
    pe = struct.unpack_from("<I", d, 0x3C)[0]
    n, optsz = struct.unpack_from("<H", d, pe + 6)[0], struct.unpack_from("<H", d, pe + 20)[0]
    symtab, nsym = struct.unpack_from("<II", d, pe + 12)
    for i in range(n):
        s = pe + 24 + optsz + 40 * i
        nm = d[s:s + 8].rstrip(b"\0")
        if nm.startswith(b"/") and symtab:      # long name: offset into the COFF string table
            o = symtab + 18 * nsym + int(nm[1:])
            nm = d[o:d.index(b"\0", o)]
        if nm == want:
            vsize, _, rsize, rptr = struct.unpack_from("<IIII", d, s + 8)
            return d[rptr:rptr + min(vsize, rsize)]
    raise SystemExit("%s: no %s section" % (path, want.decode()))


def shim_vendor_cert(shim):
    """shim's built-in (vendor certificate, vendor dbx), from its
    .vendor_cert section: u32 cert size, dbx size, cert offset, dbx offset."""
    vc = pe_section(shim, b".vendor_cert")
    a_size, d_size, a_off, d_off = struct.unpack_from("<IIII", vc, 0)
    return vc[a_off:a_off + a_size], vc[d_off:d_off + d_size]


def parse_serial(text):
    text = text.replace("\r", "")
    if "MSHIM-RESULT-BEGIN" not in text:
        raise ValueError("no MSHIM-RESULT-BEGIN marker on the serial console")
    body = text.split("MSHIM-RESULT-BEGIN", 1)[1]
    if "MSHIM-RESULT-END" not in body:
        raise ValueError("report not terminated (no MSHIM-RESULT-END)")
    body = body.split("MSHIM-RESULT-END", 1)[0]
    res = {"tpm": True, "banks": [], "pcrs": {}, "cmdline": None}
    log_lines, in_log, log_size = [], False, None
    for line in body.split("\n"):
        line = line.strip()
        if in_log:
            if line == "EVENTLOG-END":
                in_log = False
            elif line:
                log_lines.append(line)
            continue
        if line == "NO-TPM":
            res["tpm"] = False
        elif line.startswith("BANKS"):
            res["banks"] = line.split()[1:]
        elif line.startswith("PCR "):
            _, bank, n, val = line.split()
            res["pcrs"].setdefault(bank, {})[n] = val.lower()
        elif line.startswith("CMDLINE"):
            res["cmdline"] = line[len("CMDLINE "):]
        elif line.startswith("EVENTLOG-SIZE"):
            log_size = int(line.split()[1])
        elif line == "EVENTLOG-BEGIN":
            in_log = True
    log = base64.b64decode("".join(log_lines)) if log_lines else None
    if log is not None and log_size is not None and len(log) != log_size:
        raise ValueError("event log: decoded %d bytes, guest said %d" % (len(log), log_size))
    if res["tpm"]:
        for b in res["banks"]:
            if len(res["pcrs"].get(b, {})) != 24:
                raise ValueError("bank %s: %d PCR values reported, expected 24"
                                 % (b, len(res["pcrs"].get(b, {}))))
    return res, log


def load_result(d):
    with open(os.path.join(d, "result.json")) as f:
        return json.load(f)


def tpm_pcr(res, bank, n):
    return bytes.fromhex(res["pcrs"][bank][str(n)])


# ---- PE/COFF Authenticode (sha256), for the PCR 4 image digests ------------

def authenticode(data, bank="sha256"):
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        raise ValueError("not a PE image")
    coff = pe + 4
    nsect = struct.unpack_from("<H", data, coff + 2)[0]
    optsz = struct.unpack_from("<H", data, coff + 16)[0]
    opt = coff + 20
    magic = struct.unpack_from("<H", data, opt)[0]
    dd = opt + (96 if magic == 0x10B else 112)      # data directories
    csum = opt + 64
    sec_dir = dd + 8 * 4                            # IMAGE_DIRECTORY_ENTRY_SECURITY
    hdr_size = struct.unpack_from("<I", data, opt + 60)[0]
    cert_off, cert_size = struct.unpack_from("<II", data, sec_dir)
    h = hashlib.new(bank)
    # Slices of a memoryview: the sections are hashed where they lie, not
    # copied first (a copy of a kernel is thousands of page faults).
    data = memoryview(data)
    h.update(data[:csum])
    h.update(data[csum + 4:sec_dir])
    h.update(data[sec_dir + 8:hdr_size])
    done = hdr_size
    sects = []
    for i in range(nsect):
        s = opt + optsz + 40 * i
        raw_size, raw_ptr = struct.unpack_from("<II", data, s + 16)
        if raw_size:
            sects.append((raw_ptr, raw_size))
    for ptr, size in sorted(sects):
        h.update(data[ptr:ptr + size])
        done += size
    end = len(data) - (cert_size if cert_off else 0)
    if end > done:
        h.update(data[done:end])
    return h.digest()


# ---- subcommands -------------------------------------------------------------

def cmd_parse(a):
    with open(a.serial, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    try:
        res, log = parse_serial(text)
    except ValueError as e:
        sys.stderr.write("parse %s: %s\n" % (a.serial, e))
        return 1
    os.makedirs(a.outdir, exist_ok=True)
    if log is not None:
        with open(os.path.join(a.outdir, "eventlog.bin"), "wb") as f:
            f.write(log)
    with open(os.path.join(a.outdir, "result.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    return 0


def cmd_get(a):
    print(load_result(a.result)["pcrs"][a.bank][a.pcr])
    return 0


def replay_json_pcrs(path):
    with open(path) as f:
        j = json.load(f)
    return {b: {int(k): bytes.fromhex(v) for k, v in d.items()} for b, d in j["pcrs"].items()}


def eventlog_yaml_pcrs(path):
    """The "pcrs:" section printed by tpm2_eventlog (tpm2-tools 5.x)."""
    pcrs, bank, in_pcrs = {}, None, False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("pcrs:"):
                in_pcrs = True
                continue
            if not in_pcrs:
                continue
            m = re.match(r"^  (\w+):\s*$", line)
            if m:
                bank = m.group(1)
                pcrs[bank] = {}
                continue
            m = re.match(r"^    (\d+)\s*:\s*0x([0-9a-fA-F]+)\s*$", line)
            if m and bank:
                pcrs[bank][int(m.group(1))] = bytes.fromhex(m.group(2))
            elif line and not line.startswith(" "):
                in_pcrs = False
    return pcrs


def compare_all(res, replayed, who, name):
    bad = []
    for b in res["banks"]:
        if b not in replayed:
            bad.append("%s: bank %s missing from the replay" % (who, b))
            continue
        for n in CHECKED_PCRS:
            want = tpm_pcr(res, b, n)
            got = replayed[b].get(n, bytes(len(want)))
            if got != want:
                bad.append("%s %s PCR %d: tpm %s replay %s" % (who, b, n, want.hex(), got.hex()))
    if not res["banks"]:
        bad.append("no active PCR banks reported")
    report(not bad, name, "\n".join(bad))


def cmd_check_replay(a):
    res = load_result(a.result)
    log = os.path.join(a.result, "eventlog.bin")
    events = load_log(log)
    compare_all(res, replay(events, res["banks"]), "python replay", a.name + ": python replay")
    if a.mshim_json:
        compare_all(res, replay_json_pcrs(a.mshim_json), "mshim log --json", a.name + ": mshim log --json")
    if a.eventlog_yaml:
        compare_all(res, eventlog_yaml_pcrs(a.eventlog_yaml), "tpm2_eventlog", a.name + ": tpm2_eventlog")
    return 1 if failed else 0


def tagged(tag, data):
    """TCG_PCClientTaggedEvent (PC Client PFP 10.4.2)."""
    return struct.pack("<II", tag, len(data)) + data


def mshim_file_event(tag, path, content):
    """One of mshim's PCR 5 events: (event data, digest input). The event
    data is the tagged event with the UTF-16LE path and its NUL; the digest
    covers the event data followed by the file (docs/MEASUREMENTS.md)."""
    ev = tagged(tag, path.encode("utf-16-le") + b"\0\0")
    return ev, ev + (content or b"")


def totp_fence_event():
    """The TOTP fence (docs/MEASUREMENTS.md "The TOTP fence"): its event
    data, which is also its digest input."""
    return tagged(TAG_MSHIM_TOTP_FENCE, b"mshim TOTP fence\0")


def totp_initrd_event(initrd):
    """The TOTP initrd event (docs/MEASUREMENTS.md "The TOTP initrd event")
    of the initrd bytes as served (the entry's initrd files concatenated):
    u64 LE size, SHA-256; event data and digest input alike."""
    return tagged(TAG_MSHIM_TOTP_INITRD, struct.pack("<Q", len(initrd)) + hashlib.sha256(initrd).digest())


def cmd_check_totp_initrd(a):
    """With TOTP on: PCR 12 holds the command line, then the TOTP initrd
    event of --initrd's files (concatenated), then the fence, each event's
    digest in every bank the hash of its data."""
    res = load_result(a.result)
    events = [e for e in load_log(os.path.join(a.result, "eventlog.bin")) if e.pcr == 12 and e.type != EV_NO_ACTION]
    blob = b"".join(open(f, "rb").read() for f in a.initrd)
    want = [totp_initrd_event(blob), totp_fence_event()]
    bad = []
    if len(events) < 3 or events[0].type != EV_IPL or [e.data for e in events[1:3]] != want:
        bad.append("PCR 12 events: %s; expected the EV_IPL, then %s" % ([(hex(e.type), e.data[:48]) for e in events], want))
    for e, w in zip(events[1:3], want):
        for b in res["banks"]:
            if e.digests.get(b) != H(b, w):
                bad.append("event %d %s digest %s, expected %s" % (e.index, b, (e.digests.get(b) or b"").hex(),
                                                                    H(b, w).hex()))
    report(not bad, a.name + ": PCR 12 binds the initrd (size and SHA-256 of its bytes) before the fence",
           "\n".join(bad))
    return 1 if failed else 0


def entry_path(f):
    """The path mshim measures for entry file f: its entry id, the name
    without a Boot Loader Specification boot counter ("NAME+LEFT-DONE.conf"
    or "NAME+LEFT.conf" is measured as "NAME.conf", BLS "Boot counting")."""
    name = os.path.basename(f)
    m = re.match(r"^(.+)\+[0-9]+(?:-[0-9]+)?(\.conf)$", name, re.I | re.S)
    if m:
        name = m.group(1) + m.group(2)
    return "\\loader\\entries\\" + name


def mshim_pcr5_expected(a):
    """mshim's PCR 5 events, in order, from the ESP files named in a."""
    if a.loader_conf:
        want = [mshim_file_event(TAG_MSHIM_LOADER_CONF, LOADER_CONF_PATH, open(a.loader_conf, "rb").read())]
    else:
        want = [mshim_file_event(TAG_MSHIM_ABSENT, LOADER_CONF_PATH, None)]
    for f in sorted(a.bad_entry or [], key=lambda f: os.path.basename(f).encode()):
        want.append(mshim_file_event(TAG_MSHIM_ENTRY_BAD, entry_path(f), open(f, "rb").read()))
    for f in a.entry or []:
        want.append(mshim_file_event(TAG_MSHIM_ENTRY, entry_path(f), open(f, "rb").read()))
    if a.exit:
        ev = tagged(TAG_MSHIM_EXIT, b"")
        want.append((ev, ev))
    return want


def is_mshim_tag(e):
    t = e.tag_id()
    return e.type == EV_EVENT_TAG and t is not None and (t & 0xFFFFFF00) == 0x6D736800


def cmd_check_pcr5(a):
    """PCR 5 = firmware events (digests from the log) + mshim's events with
    event data and digests computed here from the files on the ESP."""
    res = load_result(a.result)
    events = [e for e in load_log(os.path.join(a.result, "eventlog.bin")) if e.pcr == 5]
    want = mshim_pcr5_expected(a)
    got = [e for e in events if is_mshim_tag(e)]
    bad = []
    if len(got) != len(want):
        bad.append("%d mshim events in PCR 5, expected %d: %s" % (
            len(got), len(want), [(hex(e.tag_id()), e.data[8:].decode("utf-16-le", "replace")) for e in got]))
    for e, (data, digest_input) in zip(got, want):
        if e.data != data:
            bad.append("event %d: data %r, expected %r" % (e.index, e.data, data))
        for b in res["banks"]:
            if e.digests.get(b) != H(b, digest_input):
                bad.append("event %d (tag 0x%x) %s digest %s, expected %s"
                           % (e.index, e.tag_id(), b, (e.digests.get(b) or b"").hex(), H(b, digest_input).hex()))
    report(not bad, a.name + ": mshim's PCR 5 events bind tag, path and file content", "\n".join(bad))
    bad = []
    for b in res["banks"]:
        v = pcr5_predict(events, want, b)
        if v != tpm_pcr(res, b, 5):
            bad.append("%s PCR 5: tpm %s predicted %s" % (b, tpm_pcr(res, b, 5).hex(), v.hex()))
    report(not bad, a.name + ": PCR 5 equals the prediction from the ESP files", "\n".join(bad))
    return 1 if failed else 0


def pcr5_predict(events, want, b):
    """Replay PCR 5 with the firmware's logged digests and mshim's events
    replaced, in order, by the expected ones."""
    v, k = zeros(b), 0
    for e in events:
        if e.type == EV_NO_ACTION:
            continue
        if is_mshim_tag(e):
            d = H(b, want[k][1]) if k < len(want) else b"\xff" * len(zeros(b))
            k += 1
        else:
            d = e.digests.get(b)
        v = extend(b, v, d)
    return v


def cmd_check_pcr12(a):
    """PCR 12's first event is mshim's: EV_IPL over the UTF-16LE options with
    their NUL (--options), or, on the chainload path (--chainload), the
    tagged event MB_TAG_CHAINLOAD whose digest covers its own data. Without
    --then-others it is the only event and PCR 12 is predicted from the
    options alone."""
    res = load_result(a.result)
    events = [e for e in load_log(os.path.join(a.result, "eventlog.bin")) if e.pcr == 12]
    bad = []
    if a.chainload:
        first_ok = (events and events[0].type == EV_EVENT_TAG and events[0].tag_id() == TAG_MSHIM_CHAINLOAD
                    and events[0].data == tagged(TAG_MSHIM_CHAINLOAD, events[0].data[8:]))
        data = events[0].data if first_ok else b""
        what = "one mshim chainload event"
    else:
        data = a.options.encode("utf-16-le") + b"\0\0"
        first_ok = events and events[0].type == EV_IPL and events[0].data == data
        what = "one EV_IPL with the UTF-16LE options"
    if not first_ok or (not a.then_others and len(events) != 1):
        bad.append("PCR 12 events: %s" % [(hex(e.type), e.data[:80]) for e in events])
    report(not bad, a.name + ": PCR 12 log starts with %s" % what, "\n".join(bad))
    bad = []
    for b in res["banks"]:
        if tpm_pcr(res, b, 12) == zeros(b):
            bad.append("%s PCR 12 is still at its reset value" % b)
        if first_ok and events[0].digests.get(b) != H(b, data):
            bad.append("%s digest of mshim's PCR 12 event %s, expected %s" % (
                b, (events[0].digests.get(b) or b"").hex(), H(b, data).hex()))
        if not a.then_others and tpm_pcr(res, b, 12) != extend(b, zeros(b), H(b, data)):
            bad.append("%s PCR 12: tpm %s predicted %s" % (
                b, tpm_pcr(res, b, 12).hex(), extend(b, zeros(b), H(b, data)).hex()))
    report(not bad, a.name + ": PCR 12 is extended by mshim as predicted", "\n".join(bad))
    return 1 if failed else 0


# The TOTP fence (docs/MEASUREMENTS.md "The TOTP fence"): a tagged event,
# tag "\x08hsm" (0x6D736808), data "mshim TOTP fence" with its NUL.
TOTP_FENCE = tagged(0x6D736808, b"mshim TOTP fence\0")


def cmd_check_fence(a):
    """The fence is PCR 12's last event, exactly once, and PCR 13's one
    event (the signed TOTP key's lock): EV_EVENT_TAG over the 25 bytes, each
    bank's digest their hash; the guest's PCR 13 is that digest extended
    into zeros (nothing else extended PCR 13 in an mshim boot)."""
    res = load_result(a.result)
    events = [e for e in load_log(os.path.join(a.result, "eventlog.bin")) if e.type != EV_NO_ACTION]
    e12, e13 = [e for e in events if e.pcr == 12], [e for e in events if e.pcr == 13]

    def fence(e):
        return e.type == EV_EVENT_TAG and e.data == TOTP_FENCE and all(
            e.digests.get(b) == H(b, TOTP_FENCE) for b in res["banks"])
    report(bool(e12) and fence(e12[-1]) and sum(e.data == TOTP_FENCE for e in e12) == 1,
           a.name + ": the fence is PCR 12's last event, once",
           "PCR 12 events: %s" % [(hex(e.type), e.data[:40]) for e in e12])
    report(len(e13) == 1 and fence(e13[0]), a.name + ": the fence is PCR 13's one event",
           "PCR 13 events: %s" % [(hex(e.type), e.data[:40]) for e in e13])
    bad = ["%s PCR 13: tpm %s" % (b, tpm_pcr(res, b, 13).hex()) for b in res["banks"]
           if tpm_pcr(res, b, 13) != extend(b, zeros(b), H(b, TOTP_FENCE))]
    report(not bad, a.name + ": the guest's PCR 13 is the fence extended into zeros", "\n".join(bad))
    return 1 if failed else 0


def cmd_check_pcr4(a):
    events = [e for e in load_log(os.path.join(a.result, "eventlog.bin")) if e.pcr == 4]
    apps = [e for e in events if e.type == EV_EFI_BOOT_SERVICES_APPLICATION]
    want = [authenticode(open(p, "rb").read()) for p in a.images]
    got = [e.digests.get("sha256") for e in apps]
    ok = got == want
    detail = "PCR 4 events: %s\nexpected Authenticode sha256 digests of %s: %s\nlogged: %s" % (
        [hex(e.type) for e in events], a.images, [w.hex() for w in want],
        [(g or b"").hex() for g in got])
    report(ok, a.name + ": PCR 4 holds one EV_EFI_BOOT_SERVICES_APPLICATION per image (%d)"
           % len(a.images), detail)
    return 1 if failed else 0


def cmd_check_pcr9(a):
    """PCR 9 holds --count "Linux initrd" events (tag 0x8F3B22EC, data
    "Linux initrd" and its NUL), each digest the initrd's hash in every bank."""
    res = load_result(a.result)
    events = [e for e in load_log(os.path.join(a.result, "eventlog.bin")) if e.pcr == 9]
    initrd = [e for e in events if e.tag_id() == TAG_LINUX_INITRD]
    blob = open(a.initrd, "rb").read()
    ok = len(initrd) == a.count and all(
        e.data == tagged(TAG_LINUX_INITRD, b"Linux initrd\0") and
        all(e.digests.get(b) == H(b, blob) for b in res["banks"]) for e in initrd)
    detail = "PCR 9 events: %s; sha256(initrd) %s" % (
        [(hex(e.type), hex(e.tag_id() or 0), (e.digests.get("sha256") or b"").hex()) for e in events],
        H("sha256", blob).hex())
    report(ok, a.name + ": PCR 9 holds %d initrd event(s) with the initrd's hash in every bank" % a.count, detail)
    return 1 if failed else 0


def cmd_diff(a):
    base, var = load_result(a.base), load_result(a.variant)
    expect = sorted(int(x) for x in a.expect.split(",") if x)
    bad = []
    for b in base["banks"]:
        # PCR 10 is IMA's: its boot_aggregate entry hashes PCRs 0-9, so it
        # follows any change there and says nothing on its own.
        changed = [n for n in range(24) if n != 10 and tpm_pcr(base, b, n) != tpm_pcr(var, b, n)]
        if changed != expect:
            bad.append("%s: changed PCRs %s, expected %s" % (b, changed, expect))
    if base["banks"] != var["banks"] or not base["banks"]:
        bad.append("banks differ or empty: %s vs %s" % (base["banks"], var["banks"]))
    report(not bad, a.name, "\n".join(bad))
    return 1 if failed else 0


def cmd_flip(a):
    """Change one byte of a file: the first occurrence of OLD (one char) in
    the first occurrence of the ASCII context string."""
    data = bytearray(open(a.file, "rb").read())
    i = data.find(a.context.encode())
    if i < 0:
        sys.stderr.write("flip: %r not found in %s\n" % (a.context, a.file))
        return 1
    data[i + a.pos] ^= 0x01
    open(a.file, "wb").write(bytes(data))
    return 0


def cmd_predict(a):
    """For the demo: print "PCR value" predictions for PCRs 5 and 12 (one bank)."""
    b = a.bank
    a.bad_entry, a.exit, a.entry = [], False, [a.entry]
    events = [e for e in load_log(a.log) if e.pcr == 5]
    print("5 %s" % pcr5_predict(events, mshim_pcr5_expected(a), b).hex())
    data = a.options.encode("utf-16-le") + b"\0\0"
    print("12 %s" % extend(b, zeros(b), H(b, data)).hex())
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    sp = p.add_subparsers(dest="cmd", required=True)
    s = sp.add_parser("parse"); s.add_argument("serial"); s.add_argument("outdir")
    s.set_defaults(f=cmd_parse)
    s = sp.add_parser("get"); s.add_argument("result"); s.add_argument("bank"); s.add_argument("pcr")
    s.set_defaults(f=cmd_get)
    s = sp.add_parser("check-replay"); s.add_argument("--result", required=True)
    s.add_argument("--name", required=True); s.add_argument("--mshim-json")
    s.add_argument("--eventlog-yaml"); s.set_defaults(f=cmd_check_replay)
    s = sp.add_parser("check-pcr5"); s.add_argument("--result", required=True)
    s.add_argument("--name", required=True)
    s.add_argument("--loader-conf", help="loader.conf as on the ESP; without it, measured as absent")
    s.add_argument("--entry", action="append", help="an entry file mshim tried, in order")
    s.add_argument("--bad-entry", action="append", help="an entry file that does not parse")
    s.add_argument("--exit", action="store_true", help="mshim returned to the firmware")
    s.set_defaults(f=cmd_check_pcr5)
    s = sp.add_parser("check-pcr12"); s.add_argument("--result", required=True)
    s.add_argument("--name", required=True); s.add_argument("--options")
    s.add_argument("--chainload", action="store_true", help="the chainload path's tagged event")
    s.add_argument("--then-others", action="store_true", help="later stages add PCR 12 events")
    s.set_defaults(f=cmd_check_pcr12)
    s = sp.add_parser("check-fence"); s.add_argument("--result", required=True)
    s.add_argument("--name", required=True); s.set_defaults(f=cmd_check_fence)
    s = sp.add_parser("check-pcr4"); s.add_argument("--result", required=True)
    s.add_argument("--name", required=True); s.add_argument("images", nargs="+")
    s.set_defaults(f=cmd_check_pcr4)
    s = sp.add_parser("check-pcr9"); s.add_argument("--result", required=True)
    s.add_argument("--name", required=True); s.add_argument("--initrd", required=True)
    s.add_argument("--count", type=int, default=1); s.set_defaults(f=cmd_check_pcr9)
    s = sp.add_parser("check-totp-initrd"); s.add_argument("--result", required=True)
    s.add_argument("--name", required=True)
    s.add_argument("--initrd", action="append", default=[], help="the entry's initrd files, in order")
    s.set_defaults(f=cmd_check_totp_initrd)
    s = sp.add_parser("diff"); s.add_argument("--name", required=True)
    s.add_argument("--expect", required=True, help="comma-separated PCRs that must change")
    s.add_argument("base"); s.add_argument("variant"); s.set_defaults(f=cmd_diff)
    s = sp.add_parser("flip"); s.add_argument("file"); s.add_argument("context")
    s.add_argument("--pos", type=int, default=0); s.set_defaults(f=cmd_flip)
    s = sp.add_parser("predict"); s.add_argument("--log", required=True)
    s.add_argument("--bank", default="sha256"); s.add_argument("--loader-conf", required=True)
    s.add_argument("--entry", required=True); s.add_argument("--options", required=True)
    s.set_defaults(f=cmd_predict)
    a = p.parse_args()
    try:
        return a.f(a)
    except (ValueError, OSError, KeyError, struct.error) as e:
        report(False, "%s: %s" % (getattr(a, "name", a.cmd), a.cmd), "%s: %s" % (type(e).__name__, e))
        return 1


if __name__ == "__main__":
    sys.exit(main())
