# SPDX-License-Identifier: BSD-2-Clause
"""mshim's measured-boot policy for Keylime's verifier (docs/ATTESTATION.md
"Keylime").

Keylime's stock policy ("example") reads a boot as shim -> GRUB -> kernel
with the command line in PCR 8; an mshim boot measures its configuration in
PCR 5, the kernel in PCR 4, the command line in PCR 12 and the initrd in PCR
9, so it needs its own. This module registers the policy "mshim" the way the
verifier's `measured_boot_imports` setting loads modules:

    [verifier]
    measured_boot_imports = ["/usr/share/mshim/keylime/mshim_keylime.py"]
    measured_boot_policy_name = mshim

Its reference state is what `mshim verify keylime-refstate` writes:

    {"mshim_refstate": 1,
     "boots": [{"name": "...", "pcrs": {"sha256": {"0": "<hex>", ...}}}, ...]}

one entry per allowed boot (this machine's current boot, and `mshim predict`
predictions of the next ones: a kernel upgrade is allowed before it boots).
A boot's log is accepted when replaying its sha256 digests gives, for one
allowed boot, every PCR that boot lists. Keylime's verifier has already
checked the quote's signature and that the log replays to the quoted PCRs
(get_relevant_pcrs); only digests are read here, never event data, which
no digest covers for some event types.
"""
import hashlib
import typing

from keylime.mba.elchecking import policies, tests

# PCRs 0-9 and 12-14: the firmware (0-3, 6), the images started (4),
# mshim's configuration and entry (5), Secure Boot (7), GRUB when chainloaded
# (8, 9), the initrd and the kernel's command line (9), mshim's command line
# and TOTP fence (12), the TOTP lock (13), shim's MOK lists (14).
RELEVANT = frozenset(list(range(10)) + [12, 13, 14])
WHAT = {
    0: "the firmware", 1: "the firmware's configuration (boot order, variables)", 2: "option ROMs and drivers",
    3: "their configuration", 4: "the images started (mshim, the kernel)", 5: "mshim's loader.conf and entry",
    6: "platform events", 7: "Secure Boot (its state, keys and authorities)", 8: "GRUB's commands",
    9: "the initrd and the kernel's command line", 12: "mshim's command line, initrd and TOTP fence",
    13: "mshim's TOTP lock", 14: "shim's MOK lists",
}


def _replay(eventlog: typing.Mapping[str, typing.Any]) -> typing.Dict[int, bytes]:
    """sha256 PCR values from the log's digests (EV_NO_ACTION extends nothing)."""
    pcrs = {i: bytes(32) for i in RELEVANT}
    for ev in eventlog.get("events", []):
        if ev.get("EventType") == "EV_NO_ACTION":
            continue
        pcr = ev.get("PCRIndex")
        if pcr not in pcrs:
            continue
        for d in ev.get("Digests", []):
            if d.get("AlgorithmId") == "sha256":
                pcrs[pcr] = hashlib.sha256(pcrs[pcr] + bytes.fromhex(d["Digest"])).digest()
    return pcrs


def _boots(refstate: typing.Mapping[str, typing.Any]) -> typing.List[typing.Tuple[str, typing.Dict[int, bytes]]]:
    """The refstate's allowed boots; ValueError when it is not mshim's."""
    if refstate.get("mshim_refstate") != 1 or not isinstance(refstate.get("boots"), list) or not refstate["boots"]:
        raise ValueError("not an mshim reference state (mshim verify keylime-refstate writes one)")
    out = []
    for k, b in enumerate(refstate["boots"]):
        vals = b.get("pcrs", {}).get("sha256") if isinstance(b, dict) else None
        if not isinstance(vals, dict) or not vals:
            raise ValueError("boot %d has no sha256 PCR values" % k)
        pcrs = {}
        for i, v in vals.items():
            if not i.isdigit() or int(i) not in RELEVANT or not isinstance(v, str) or len(v) != 64:
                raise ValueError("boot %d: PCR %r is not one of 0-9, 12-14 with a sha256 value" % (k, i))
            pcrs[int(i)] = bytes.fromhex(v)
        out.append((str(b.get("name", "boot %d" % k)), pcrs))
    return out


def _events(eventlog: typing.Mapping[str, typing.Any], pcr: int) -> str:
    """The log's events in pcr, by type, for a refusal."""
    types = [ev.get("EventType", "?") for ev in eventlog.get("events", [])
             if ev.get("PCRIndex") == pcr and ev.get("EventType") != "EV_NO_ACTION"]
    return ", ".join(types[:6]) + (", ..." if len(types) > 6 else "") if types else "no event"


class MshimBoots(tests.Test):
    """Accepts a log that replays to one of the allowed boots."""

    def __init__(self, refstate: typing.Mapping[str, typing.Any]):
        try:
            self.boots = _boots(refstate)
            self.malformed = ""
        except (ValueError, AttributeError) as e:
            self.boots, self.malformed = [], "the reference state is malformed: %s" % e

    def why_not(self, globs: tests.Globals, subject: tests.Data) -> str:
        if self.malformed:
            return self.malformed
        if not isinstance(subject, dict):
            return "is not a parsed event log"
        got = _replay(subject)
        best = None
        for name, want in self.boots:
            differ = [i for i in sorted(want) if got[i] != want[i]]
            if not differ:
                return ""
            if best is None or len(differ) < len(best[1]):
                best = (name, differ)
        name, differ = best
        return "matches no allowed mshim boot; the closest (%s) differs in %s" % (
            name, "; ".join("PCR %d, %s (the log's events there: %s)" % (i, WHAT.get(i, "?"), _events(subject, i))
                            for i in differ))


class Mshim(policies.Policy):
    """Keylime's measured-boot policy for boots through mshim."""

    def get_relevant_pcrs(self) -> typing.FrozenSet[int]:
        return RELEVANT

    def refstate_to_test(self, refstate: policies.RefState) -> tests.Test:
        return MshimBoots(refstate)


policies.register("mshim", Mshim())
