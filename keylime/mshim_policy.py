# SPDX-License-Identifier: BSD-2-Clause
"""Keylime measured-boot policy "mshim": a boot through mshim (firmware ->
[shim ->] mshim -> kernel) against a refstate that lists the boots allowed
(docs/ATTESTATION.md "Keylime").

Keylime's verifier has already checked the quote and that the event log
replays to the quoted PCRs (the relevant PCRs below: 0, 4, 5, 7, 9, 12,
14). The policy then checks, in this order:

1. the firmware, as Keylime's own "example" policy checks it and with its
   refstate fields, its tests and its refstate checks (imported from
   keylime.mba.elchecking, not copied): scrtm_and_bios (PCR 0's
   EV_S_CRTM_VERSION and EV_EFI_PLATFORM_FIRMWARE_BLOB(2) digests),
   has_secureboot (PCR 7's SecureBoot variable), pk, kek, db, dbx (and the
   optional vendor_db) and mokdig, mokxdig (PCR 14's MokList, MokListX);
   a refusal is Keylime's own text, naming the event;
2. the boot: the log's SHA-256 digests of the PCRs mshim's disk keys
   cover (4 images, 5 mshim's configuration, 7 Secure Boot's state, keys
   and authorities, 9 the initrd and the kernel's load options, 12 the
   command line and mshim's TOTP events) replayed, and accepted when they
   are exactly one allowed boot's values; a refusal names the closest boot
   and the PCRs that differ. Only digests are used here.

Refstate (`mshim verify keylime-refstate -o FILE` writes it, from this
machine's log; docs/ATTESTATION.md, docs/schema/):
  {"schema": "mshim-keylime-refstate/1",
   "has_secureboot": true|false,
   "scrtm_and_bios": [{"scrtm": {"sha256": "0x<hex>"},
                       "platform_firmware": [{"sha256": "0x<hex>"}, ...]}, ...],
   "pk": [{"SignatureOwner": "<guid>", "SignatureData": "0x<hex>"}, ...],
   "kek": [...], "db": [...], "dbx": [...], "mokdig": [{"sha256": "0x<hex>"}, ...],
   "mokxdig": [...],
   "boots": [{"label": "...", "pcrs": {"4": "<sha256 hex>", ...}}, ...]}
The firmware fields mean what they mean in Keylime's example (its
example.py's comment). Each boot lists some of PCRs 4, 5, 7, 9, 12 (its
predicted ones); every listed PCR must match.

Deploy: copy this file into a directory on the verifier's Python path
(or install it with `make install`, /usr/share/mshim/keylime/) and name it
in the verifier's `measured_boot_imports` (keylime.conf, [verifier]),
e.g. `measured_boot_imports = mshim_policy`, with
`measured_boot_policy_name = mshim`."""
import hashlib
import re
import typing

from keylime.mba.elchecking import example, policies, tests

SCHEMA = "mshim-keylime-refstate/1"
PCRS = (4, 5, 7, 9, 12)
# The boot's PCRs, and those the firmware part reads: Keylime's verifier
# replays the log against the quote for these alone (tpm_main.py,
# mb_pcrs_to_check), so every event the policy reads is in one.
RELEVANT = frozenset(PCRS) | {0, 14}
# EFI_GLOBAL_VARIABLE, EFI_IMAGE_SECURITY_DATABASE_GUID and the
# EFI_CERT_X509 and EFI_CERT_SHA256 types (UEFI 2.10, 3.3 and 32.4.1),
# each in both spellings: tpm2-tools before 5.2 printed GUIDs byte-swapped
# (Keylime's example says so, keylime issue 1003).
GLOBAL = ("8be4df61-93ca-11d2-aa0d-00e098032b8c", "61dfe48b-ca93-d211-aa0d-00e098032b8c")
IMAGE_DB = ("d719b2cb-3d3a-4596-a3bc-dad00e67656f", "cbb219d7-3a3d-9645-a3bc-dad00e67656f")
X509 = ("a5c059a1-94e4-4aa7-87b5-ab155c2bf072", "a159c0a5-e494-a74a-87b5-ab155c2bf072")
SHA256 = ("c1c41626-504c-4092-aca9-41f936934328", "2616c4c1-4c50-9240-aca9-41f936934328")
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _boots(refstate) -> typing.List[typing.Tuple[str, typing.Dict[int, bytes]]]:
    """The refstate's boots, checked; raises on anything else."""
    if not isinstance(refstate, dict) or refstate.get("schema") != SCHEMA:
        raise Exception(f"refstate is not {SCHEMA} (made by 'mshim verify keylime-refstate')")
    boots = refstate.get("boots")
    if not isinstance(boots, list) or not boots:
        raise Exception("refstate lists no boots")
    out = []
    for i, b in enumerate(boots):
        pcrs = b.get("pcrs") if isinstance(b, dict) else None
        label = b.get("label", f"boot {i}") if isinstance(b, dict) else None
        if not isinstance(label, str) or not isinstance(pcrs, dict) or not pcrs:
            raise Exception(f"refstate boot {i} is not {{label, pcrs}}")
        vals = {}
        for k, v in pcrs.items():
            if k not in [str(p) for p in PCRS] or not isinstance(v, str) or not HEX64.match(v):
                raise Exception(f"refstate boot {label!r}: PCR {k!r} is not one of {PCRS} with a SHA-256 value")
            vals[int(k)] = bytes.fromhex(v)
        out.append((label, vals))
    return out


def _replay(eventlog) -> typing.Dict[int, bytes]:
    """The log's SHA-256 values of PCRS, from its events' digests alone."""
    vals = {p: bytes(32) for p in PCRS}
    for e in eventlog.get("events", []):
        pcr = e.get("PCRIndex")
        if pcr not in vals or e.get("EventType") == "EV_NO_ACTION":
            continue
        d = [x["Digest"] for x in e.get("Digests", []) if x.get("AlgorithmId") == "sha256"]
        if len(d) != 1:
            raise ValueError(f"event {e.get('EventNum')} in PCR {pcr} has no SHA-256 digest")
        vals[pcr] = hashlib.sha256(vals[pcr] + bytes.fromhex(d[0])).digest()
    return vals


class _AllowedBoots(tests.Test):
    def __init__(self, boots):
        self.boots = boots

    def why_not(self, globs, subject) -> str:
        try:
            got = _replay(subject)
        except (ValueError, KeyError, TypeError) as e:
            return f"mshim: the event log cannot be replayed: {e}"
        best = None
        for label, want in self.boots:
            diff = [p for p in sorted(want) if got[p] != want[p]]
            if not diff:
                return ""
            if best is None or len(diff) < len(best[1]):
                best = (label, diff)
        label, diff = best
        return "mshim: no allowed boot: PCR%s %s differ%s from the closest, %r" % (
            "s" if len(diff) > 1 else "", ",".join(map(str, diff)), "" if len(diff) > 1 else "s", label)


class _Only(tests.Test):
    """The dispatcher's test for the (PCRIndex, EventType) pairs it knows;
    every other event is the boot part's (PCR 4, 5, 9, 12 digests) or
    outside what Keylime's example checks."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def why_not(self, globs, subject) -> str:
        key = tuple(subject.get(k) for k in self.dispatcher.key_names) if isinstance(subject, dict) else None
        if key not in self.dispatcher.tests:
            return ""
        return self.dispatcher.why_not(globs, subject)


def _keys(secure, keys, *alternatives) -> tests.Test:
    """One variable's key test as Keylime's example builds it: with Secure
    Boot off and no keys listed, anything (the variable may be empty)."""
    if not secure and not keys:
        return tests.OnceTest(tests.AcceptAll())
    return tests.OnceTest(tests.Or(*alternatives))


def _firmware(refstate) -> tests.Test:
    """Keylime's example policy's firmware checks (keylime/mba/elchecking/
    example.py, Example.refstate_to_test), from its own classes and refstate
    checks; raises on a refstate that lacks or misspells a field."""
    secure = refstate.get("has_secureboot")
    if not isinstance(secure, bool):
        raise Exception("refstate lacks has_secureboot (true or false)")
    spec = refstate.get("scrtm_and_bios")
    if spec is None:
        raise Exception("refstate['scrtm_and_bios'] is missing")
    example.allowed_scrtm_and_bios_list_test(spec)
    for req in ("pk", "kek", "db", "dbx", "mokdig", "mokxdig"):
        if req not in refstate:
            raise Exception(f"refstate lacks {req}")
    sigs = {k: example.sigs_strip0x(refstate.get(k, [])) for k in ("pk", "kek", "db", "dbx", "vendor_db")}
    delayed = tests.DelayToFields(
        tests.Or(*[tests.And(
            tests.FieldTest("s_crtms", tests.TupleTest(tests.DigestTest(example.digest_strip0x(a["scrtm"])))),
            tests.FieldTest("platform_firmware_blobs", tests.TupleTest(
                *[tests.DigestTest(example.digest_strip0x(pf)) for pf in a["platform_firmware"]])))
            for a in spec]),
        "s_crtms", "platform_firmware_blobs")
    d = tests.Dispatcher(("PCRIndex", "EventType"))
    d.set((0, "EV_S_CRTM_VERSION"), delayed.get("s_crtms"))
    d.set((0, "EV_EFI_PLATFORM_FIRMWARE_BLOB"), delayed.get("platform_firmware_blobs"))
    d.set((0, "EV_EFI_PLATFORM_FIRMWARE_BLOB2"), delayed.get("platform_firmware_blobs"))
    vd = tests.VariableDispatch()
    d.set((7, "EV_EFI_VARIABLE_DRIVER_CONFIG"), vd)
    sb = tests.FieldTest("Enabled", tests.StringEqual("Yes" if secure else "No"))
    pk = _keys(secure, sigs["pk"], *[tests.KeySubset(t, sigs["pk"]) for t in X509])
    kek = _keys(secure, sigs["kek"], *[tests.KeySubset(t, sigs["kek"]) for t in X509])
    db = _keys(secure, sigs["db"], *[tests.KeySubsetMulti(list(t), sigs["db"]) for t in zip(X509, SHA256)])
    vdb = _keys(secure, sigs["vendor_db"],
                *[tests.KeySubsetMulti(list(t), sigs["vendor_db"]) for t in zip(X509, SHA256)])
    dbx = _keys(secure, sigs["dbx"], *[tests.KeySuperset(t, sigs["dbx"]) for t in SHA256])
    for g in GLOBAL:
        vd.set(g, "SecureBoot", sb)
        vd.set(g, "PK", pk)
        vd.set(g, "KEK", kek)
    for g in IMAGE_DB:
        vd.set(g, "db", db)
        vd.set(g, "vendor_db", vdb)
        vd.set(g, "dbx", dbx)
    mok = lambda name, test: tests.And(
        tests.FieldTest("Event", tests.FieldTest("String", tests.StringEqual(name))), test)
    d.set((14, "EV_IPL"), tests.Or(
        mok("MokList", tests.DigestsTest(example.digests_strip0x(refstate["mokdig"]))),
        mok("MokListX", tests.DigestsTest(example.digests_strip0x(refstate["mokxdig"]))),
        mok("MokListTrusted", tests.OnceTest(tests.AcceptAll()))))
    return tests.FieldTest("events", tests.And(delayed.get_initializer(),
                                               tests.IterateTest(_Only(d), show_elt=True), delayed), show_name=False)


class MshimPolicy(policies.Policy):
    def get_relevant_pcrs(self) -> typing.FrozenSet[int]:
        return RELEVANT

    def refstate_to_test(self, refstate) -> tests.Test:
        boots = _boots(refstate)
        return tests.And(_firmware(refstate), _AllowedBoots(boots))


policies.register("mshim", MshimPolicy())
