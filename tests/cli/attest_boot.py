# SPDX-License-Identifier: BSD-2-Clause
"""An mshim boot's event log for `mshim verify`'s facts, built from the
specs with hashlib (tcglog_build.py): PCR 0's S-CRTM version and two
firmware blobs (PFP 10.4.3, UEFI_PLATFORM_FIRMWARE_BLOB: base, length;
the digest is of memory the log does not hold), PCR 7's Secure Boot
configuration (PK, KEK, db: one EFI_SIGNATURE_LIST of one X.509
certificate each, db's the certificate CERT.der; dbx: one list of SHA-256
hashes; UEFI 2.10 32.4.1) and one db authority (PC Client PFP 10.4.4,
UEFI_VARIABLE_DATA; the authority's EFI_SIGNATURE_DATA is owner GUID +
certificate DER), PCR 4's
two images by their Authenticode hashes (given, from pesign), PCR 5's
loader.conf event (docs/MEASUREMENTS.md "The PCR 5 digest input"), PCR
12's command line (UTF-16LE with NUL), mshim's TOTP initrd and fence
events, PCR 9's initrd. Writes DIR/NAME.bin and DIR/NAME.extends for each
variant and DIR/expected.json, what verify must report:

  good        the boot
  disclosed   the same digests, the data of two events edited (SecureBoot
              01 -> 00, the command line -> init=/bin/sh): the log still
              replays, and verify must not report the edited data
  other       another kernel (OTHER_HASH) in PCR 4
  initsh      the command line with init=/bin/sh (PCR 12)
  fwblob      PCR 0's second firmware blob with another digest
  dbother     db another certificate (its event's data and digest)
  sboff       Secure Boot off (the SecureBoot byte 00, and its digest)

usage: attest_boot.py DIR CERT.der MSHIM_HASH KERNEL_HASH OTHER_HASH (hex, sha256)"""
import hashlib, json, struct, sys, uuid
import tcglog_build as tb

DRIVER_CONFIG, AUTHORITY, APP, TAG = 0x80000001, 0x800000E0, 0x80000003, 0x6
S_CRTM_VERSION, FIRMWARE_BLOB = 0x8, 0x80000008
CERT_X509 = uuid.UUID("a5c059a1-94e4-4aa7-87b5-ab155c2bf072")
CERT_SHA256 = uuid.UUID("c1c41626-504c-4092-aca9-41f936934328")
GLOBAL = uuid.UUID("8be4df61-93ca-11d2-aa0d-00e098032b8c")
IMAGE_SECURITY = uuid.UUID("d719b2cb-3d3a-4596-a3bc-dad00e67656f")
OWNER = uuid.UUID("77fa9abd-0359-4d32-bd60-28f4e78f784b")


def var(guid, name, data):
    n = name.encode("utf-16-le")
    return guid.bytes_le + struct.pack("<QQ", len(name), len(data)) + n + data


def siglist(sig_type, sigs):
    """One EFI_SIGNATURE_LIST of EFI_SIGNATURE_DATA (owner, then the
    signature), all of one size, no header."""
    size = 16 + len(sigs[0])
    return (sig_type.bytes_le + struct.pack("<III", 28 + size * len(sigs), 0, size) +
            b"".join(OWNER.bytes_le + s for s in sigs))


def tagged(tag, data):
    return struct.pack("<II", tag, len(data)) + data


sha = lambda b: {"sha256": hashlib.sha256(b).digest()}


def main():
    d, cert_path, mshim_hash, kernel_hash, other_hash = sys.argv[1:6]
    cert = open(cert_path, "rb").read()
    # Certificate-shaped (a DER SEQUENCE of n bytes), hex with letters in it
    # (YAML reads a long all-digit hex string as a number).
    fake = lambda n: b"\x30\x82" + struct.pack(">H", n) + (b"\xab\xcd" + struct.pack(">H", n)) * (n // 4)
    keys = {"PK": siglist(CERT_X509, [fake(300)]), "KEK": siglist(CERT_X509, [fake(400)]),
            "db": siglist(CERT_X509, [cert]),
            "dbx": siglist(CERT_SHA256, [hashlib.sha256(b"revoked %d" % i).digest() for i in range(3)])}
    blob = lambda base, n, what: (0, FIRMWARE_BLOB, struct.pack("<QQ", base, n), sha(what))
    conf = b"default debian.conf\ntimeout 0\n"
    initrd = bytes(range(256)) * 40
    cmdline = "root=/dev/vda2 ro quiet"
    conf_ev = tagged(0x6D736801, "\\loader\\loader.conf\0".encode("utf-16-le"))
    ev = [(0, S_CRTM_VERSION, b"\0\0"), blob(0x820000, 0xe0000, b"firmware volume 1"),
          blob(0x900000, 0xc00000, b"firmware volume 2"),
          (7, DRIVER_CONFIG, var(GLOBAL, "SecureBoot", b"\x01"))]
    ev += [(7, DRIVER_CONFIG, var(GLOBAL if k in ("PK", "KEK") else IMAGE_SECURITY, k, v)) for k, v in keys.items()]
    ev += [(p, tb.EV_SEPARATOR, b"\0\0\0\0") for p in range(8)]
    ev += [(7, AUTHORITY, var(IMAGE_SECURITY, "db", OWNER.bytes_le + cert)),
           (4, tb.EV_EFI_ACTION, b"Calling EFI Application from Boot Option"),
           (4, APP, bytes(40), {"sha256": bytes.fromhex(mshim_hash)}),
           (5, TAG, conf_ev, sha(conf_ev + conf)),
           (4, APP, bytes(40), {"sha256": bytes.fromhex(kernel_hash)}),
           (12, tb.EV_IPL, (cmdline + "\0").encode("utf-16-le")),
           (12, TAG, tagged(0x6D736809, struct.pack("<Q", len(initrd)) + hashlib.sha256(initrd).digest())),
           (12, TAG, tagged(0x6D736808, b"mshim TOTP fence\0")),
           (9, TAG, b"\xec\x22\x3b\x8f\x0d\0\0\0Linux initrd\0", sha(initrd)),
           (5, tb.EV_EFI_ACTION, b"Exit Boot Services Invocation")]
    # The same digests, two events' data edited.
    dis = []
    for e in ev:
        if e[2] == var(GLOBAL, "SecureBoot", b"\x01"):
            e = (e[0], e[1], var(GLOBAL, "SecureBoot", b"\x00"), {"sha256": hashlib.sha256(e[2]).digest()})
        elif e[1] == tb.EV_IPL:
            e = (e[0], e[1], "init=/bin/sh\0".encode("utf-16-le"), {"sha256": hashlib.sha256(e[2]).digest()})
        dis.append(e)
    other = [(4, APP, bytes(40), {"sha256": bytes.fromhex(other_hash)}) if len(e) > 3 and
             e[3].get("sha256") == bytes.fromhex(kernel_hash) else e for e in ev]
    sh = (cmdline + " init=/bin/sh\0").encode("utf-16-le")
    initsh = [(12, tb.EV_IPL, sh) if e[1] == tb.EV_IPL else e for e in ev]
    fwblob = [blob(0x900000, 0xc00000, b"firmware volume 2, updated") if e[2] == struct.pack("<QQ", 0x900000, 0xc00000)
              else e for e in ev]
    dbother = [(7, DRIVER_CONFIG, var(IMAGE_SECURITY, "db", siglist(CERT_X509, [fake(500)])))
               if e[2] == var(IMAGE_SECURITY, "db", keys["db"]) else e for e in ev]
    sboff = [(7, DRIVER_CONFIG, var(GLOBAL, "SecureBoot", b"\x00")) if e[2] == var(GLOBAL, "SecureBoot", b"\x01")
             else e for e in ev]
    replay = {n: tb.replay(["sha256"], e)["sha256"] for n, e in (("good", ev), ("other", other), ("initsh", initsh))}
    for name, events in (("good", ev), ("disclosed", dis), ("other", other), ("initsh", initsh), ("fwblob", fwblob),
                         ("dbother", dbother), ("sboff", sboff)):
        open("%s/%s.bin" % (d, name), "wb").write(tb.build(["sha256"], events))
        with open("%s/%s.extends" % (d, name), "w") as f:
            for e in events:
                f.write("%d:sha256=%s\n" % (e[0], ((e[3] if len(e) > 3 else {}).get("sha256") or
                                                  hashlib.sha256(e[2]).digest()).hex()))
    json.dump({"keys": {k: hashlib.sha256(v).hexdigest() for k, v in keys.items()},
               "authority": {"owner": str(OWNER), "sha256": hashlib.sha256(cert).hexdigest()},
               "pcr4": [mshim_hash, kernel_hash],
               "pcr5": [hashlib.sha256(conf_ev + conf).hexdigest(), hashlib.sha256(b"Exit Boot Services Invocation").hexdigest()],
               "cmdline": cmdline,
               "initrd": {"size": len(initrd), "sha256": hashlib.sha256(initrd).hexdigest()},
               "pcr9": hashlib.sha256(initrd).hexdigest(),
               "replay": replay},
              open(d + "/expected.json", "w"))


main()
