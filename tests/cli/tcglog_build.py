# SPDX-License-Identifier: BSD-2-Clause
"""Crafted TCG event logs for the CLI tests, built from the TCG PC Client
PFP (10.2.1 TCG_PCR_EVENT, 10.2.2 TCG_PCR_EVENT2, 10.4.5.1 Spec ID Event03)
with digests and replays computed here, independently of mshim: hashlib for
the SHA banks, hashlib's or else the OpenSSL command line's SM3."""
import hashlib, struct, subprocess

# TCG Algorithm Registry ids and digest sizes.
ALGS = {"sha1": (0x4, 20), "sha256": (0xB, 32), "sha384": (0xC, 48), "sha512": (0xD, 64), "sm3_256": (0x12, 32)}
EV_NO_ACTION, EV_SEPARATOR, EV_EFI_ACTION, EV_IPL = 0x3, 0x4, 0x80000007, 0xD


def digest(bank, data):
    if bank != "sm3_256":
        return hashlib.new(bank, data).digest()
    try:
        return hashlib.new("sm3", data).digest()
    except ValueError:
        p = subprocess.run(["openssl", "dgst", "-sm3", "-binary"], input=data, capture_output=True, check=True)
        return p.stdout


def spec_id_header(banks):
    """Record 0: a TCG_PCR_EVENT (SHA-1 format) holding the Spec ID Event03."""
    body = b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 0, 2, len(banks))
    for b in banks:
        body += struct.pack("<HH", *ALGS[b])
    body += b"\0"  # vendorInfoSize
    return struct.pack("<II", 0, EV_NO_ACTION) + bytes(20) + struct.pack("<I", len(body)) + body


def record(pcr, ev_type, data, banks, override=None):
    """A TCG_PCR_EVENT2; override maps a bank to the digest to log instead
    of the data's own."""
    r = struct.pack("<III", pcr, ev_type, len(banks))
    for b in banks:
        d = (override or {}).get(b) or digest(b, data)
        r += struct.pack("<H", ALGS[b][0]) + d
    return r + struct.pack("<I", len(data)) + data


def build(banks, events):
    """events: (pcr, type, data[, override]) tuples after the header."""
    return spec_id_header(banks) + b"".join(record(e[0], e[1], e[2], banks, e[3] if len(e) > 3 else None)
                                            for e in events)


def replay(banks, events):
    """PCR values the log must replay to: every PCR starts at zero (no
    StartupLocality event here), EV_NO_ACTION is never extended, PCRs
    from 24 on are not replayed; {bank: {"pcr": hex}}."""
    out = {}
    for b in banks:
        vals = {}
        for e in events:
            pcr, ev_type, data = e[0], e[1], e[2]
            if ev_type == EV_NO_ACTION or pcr >= 24:
                continue
            d = (e[3] if len(e) > 3 else {}).get(b) or digest(b, data)
            vals[pcr] = digest(b, vals.get(pcr, bytes(ALGS[b][1])) + d)
        out[b] = {str(p): v.hex() for p, v in vals.items()}
    return out


def sample_events():
    """A small boot: actions, separators, an IPL string, in several PCRs."""
    return [
        (0, EV_EFI_ACTION, b"Calling EFI Application from Boot Option"),
        (4, EV_EFI_ACTION, b"Returning from EFI Application from Boot Option"),
        *[(p, EV_SEPARATOR, b"\0\0\0\0") for p in range(8)],
        (8, EV_IPL, b"grub_cmd: linux /vmlinuz root=/dev/sda1\0"),
        (12, EV_IPL, "initrd=\\initrd.img quiet\0".encode("utf-16-le")),
    ]
