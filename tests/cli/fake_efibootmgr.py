#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A stand-in for efibootmgr (tests/cli/test_mshim_install.sh): the boot
entries live in the JSON file $FAKE_EFI; each call is appended to
$FAKE_EFI.log; when $FAKE_EFIVARS names a directory, the variables are
also written there as efivarfs files (4 bytes of attributes, then the data;
Boot#### as UEFI 2.10 section 3.1.3's EFI_LOAD_OPTION), for mshim status
--efivars. It prints efibootmgr's listing after every call, as efibootmgr
does. Only the options mshim uses: --create-only --disk --part --loader
--label, --bootnext, --delete-bootnext, --bootnum --delete-bootnum,
--bootorder."""
import json, os, struct, sys, uuid

GLOBAL = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
STATE = os.environ["FAKE_EFI"]
with open(STATE + ".log", "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
with open(STATE) as f:
    st = json.load(f)

args, opts, i = sys.argv[1:], {}, 0
while i < len(args):
    a = args[i]
    if a in ("--disk", "--part", "--loader", "--label", "--bootnext", "--bootnum", "--bootorder"):
        opts[a] = args[i + 1]
        i += 2
    elif a in ("--create-only", "--delete-bootnext", "--delete-bootnum"):
        opts[a] = True
        i += 1
    else:
        sys.exit("fake efibootmgr: unknown argument " + a)

ents = st["entries"]
if "--create-only" in opts:
    num = next("%04X" % n for n in range(0x10000) if "%04X" % n not in ents)
    ents[num] = {"label": opts["--label"], "loader": opts["--loader"], "part": int(opts["--part"]),
                 "disk": opts["--disk"]}
if "--bootnext" in opts:
    if opts["--bootnext"] not in ents:
        sys.exit("fake efibootmgr: no such entry")
    st["next"] = opts["--bootnext"]
if "--delete-bootnext" in opts:
    st["next"] = None
if "--delete-bootnum" in opts:
    n = opts["--bootnum"]
    if n not in ents:
        sys.exit("fake efibootmgr: Boot%s not found" % n)
    del ents[n]
    st["order"] = [o for o in st["order"] if o != n]
if "--bootorder" in opts:
    st["order"] = opts["--bootorder"].split(",")
with open(STATE, "w") as f:
    json.dump(st, f)


def devpath(e):
    """HD(part, GPT, a fixed GUID) then File(loader) then End."""
    hd = struct.pack("<BBHIQQ16sBB", 4, 1, 42, e["part"], 2048, 1048576,
                     uuid.UUID("11111111-2222-3333-4444-555555555555").bytes_le, 2, 2)
    name = (e["loader"] + "\0").encode("utf-16-le")
    fp = struct.pack("<BBH", 4, 4, 4 + len(name)) + name
    return hd + fp + struct.pack("<BBH", 0x7F, 0xFF, 4)


vd = os.environ.get("FAKE_EFIVARS")
if vd:
    def put(name, data):
        with open(os.path.join(vd, "%s-%s" % (name, GLOBAL)), "wb") as f:
            f.write(struct.pack("<I", 7) + data)
    for fn in os.listdir(vd):
        if fn.startswith(("Boot", )) and fn.endswith(GLOBAL) and fn[4:8] not in ("Curr",):
            os.unlink(os.path.join(vd, fn))
    for n, e in ents.items():
        dp = devpath(e)
        put("Boot" + n, struct.pack("<IH", 1, len(dp)) + (e["label"] + "\0").encode("utf-16-le") + dp)
    put("BootOrder", b"".join(struct.pack("<H", int(o, 16)) for o in st["order"]))
    if st.get("next"):
        put("BootNext", struct.pack("<H", int(st["next"], 16)))
    if st.get("current"):
        put("BootCurrent", struct.pack("<H", int(st["current"], 16)))

if st.get("current"):
    print("BootCurrent: " + st["current"])
if st.get("next"):
    print("BootNext: " + st["next"])
print("Timeout: 1 seconds")
print("BootOrder: " + ",".join(st["order"]))
for n in sorted(ents):
    e = ents[n]
    print("Boot%s%s %s\tHD(%d,GPT,11111111-2222-3333-4444-555555555555)/File(%s)" %
          (n, "*", e["label"], e["part"], e["loader"]))
