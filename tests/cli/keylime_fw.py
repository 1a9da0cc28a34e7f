# SPDX-License-Identifier: BSD-2-Clause
"""The firmware part of a Keylime refstate (the fields of Keylime's
example policy, keylime/mba/elchecking/example.py) as an event log's bytes
give it, read here from the specs, never from mshim: TCG PC Client PFP
10.2.2 TCG_PCR_EVENT2 records after the Spec ID Event03 (10.4.5.1), PCR
0's EV_S_CRTM_VERSION (whose digest must be the hashlib SHA-256 of its
data) and EV_EFI_PLATFORM_FIRMWARE_BLOB(2) SHA-256 digests, PCR 7's
SecureBoot byte and PK/KEK/db/dbx EFI_SIGNATURE_LISTs (UEFI 2.10 32.4.1)
from UEFI_VARIABLE_DATA (PFP 10.4.4), PCR 14's MokList/MokListX digests.

usage: keylime_fw.py LOG REFSTATE.json: exit 0 when REFSTATE's firmware
fields are exactly these."""
import hashlib, json, struct, sys, uuid

ALG_SIZE = {0x4: 20, 0xB: 32, 0xC: 48, 0xD: 64, 0x12: 32}


def events(b):
    """(pcr, type, {alg id: digest}, data) of each TCG_PCR_EVENT2."""
    n = struct.unpack_from("<I", b, 28)[0]
    spec = b[32:32 + n]
    algs = {}
    for i in range(struct.unpack_from("<I", spec, 24)[0]):
        a, s = struct.unpack_from("<HH", spec, 28 + 4 * i)
        algs[a] = s
    off = 32 + n
    while off < len(b):
        pcr, t, nd = struct.unpack_from("<III", b, off)
        off += 12
        dg = {}
        for _ in range(nd):
            a = struct.unpack_from("<H", b, off)[0]
            dg[a] = b[off + 2:off + 2 + algs[a]]
            off += 2 + algs[a]
        size = struct.unpack_from("<I", b, off)[0]
        yield pcr, t, dg, b[off + 4:off + 4 + size]
        off += 4 + size


def variable(data):
    guid = uuid.UUID(bytes_le=data[:16])
    nlen, dlen = struct.unpack_from("<QQ", data, 16)
    name = data[32:32 + 2 * nlen].decode("utf-16-le")
    return guid, name, data[32 + 2 * nlen:32 + 2 * nlen + dlen]


def keys(v):
    out, off = [], 0
    while off < len(v):
        lsize, hsize, ssize = struct.unpack_from("<III", v, off + 16)
        p = off + 28 + hsize
        while p < off + lsize:
            out.append({"SignatureOwner": str(uuid.UUID(bytes_le=v[p:p + 16])),
                        "SignatureData": "0x" + v[p + 16:p + ssize].hex()})
            p += ssize
        off += lsize
    return out


def firmware(log):
    x = lambda d: {"sha256": "0x" + d[0xB].hex()}
    fw = {"has_secureboot": None, "scrtm_and_bios": [{"scrtm": None, "platform_firmware": []}],
          "pk": [], "kek": [], "db": [], "dbx": [], "mokdig": [], "mokxdig": []}
    sep7 = False
    for pcr, t, dg, data in events(log):
        if (pcr, t) == (0, 0x8):
            assert hashlib.sha256(data).digest() == dg[0xB], "S-CRTM digest is not its data's"
            fw["scrtm_and_bios"][0]["scrtm"] = x(dg)
        elif pcr == 0 and t in (0x80000008, 0x8000000A):
            fw["scrtm_and_bios"][0]["platform_firmware"].append(x(dg))
        elif (pcr, t) == (7, 0x80000001) and not sep7:
            assert hashlib.sha256(data).digest() == dg[0xB], "PCR 7 variable's digest is not its data's"
            guid, name, v = variable(data)
            if name == "SecureBoot":
                fw["has_secureboot"] = v == b"\x01"
            elif name in ("PK", "KEK", "db", "dbx"):
                fw[name.lower()] = keys(v)
        elif (pcr, t) == (7, 0x4):
            sep7 = True
        elif (pcr, t) == (14, 0xD) and data.rstrip(b"\0") in (b"MokList", b"MokListX"):
            fw["mokdig" if data.rstrip(b"\0") == b"MokList" else "mokxdig"].append(x(dg))
    return fw


if __name__ == "__main__":
    want = firmware(open(sys.argv[1], "rb").read())
    got = json.load(open(sys.argv[2]))
    bad = [k for k in want if got.get(k) != want[k]]
    if bad:
        sys.exit("differ: %s" % ", ".join(bad))
