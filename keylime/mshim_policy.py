# SPDX-License-Identifier: BSD-2-Clause
"""Keylime measured-boot policy "mshim": a boot through mshim (firmware ->
[shim ->] mshim -> kernel) against a refstate that lists the boots allowed
(docs/ATTESTATION.md "Keylime").

Keylime's verifier has already checked the quote and that the event log
replays to the quoted PCRs. This policy replays the log's SHA-256 digests
of the PCRs mshim's disk keys cover (4 images, 5 mshim's configuration, 7
Secure Boot's state, keys and authorities, 9 the initrd and the kernel's
load options, 12 the command line and mshim's TOTP events) and accepts the
log when they are exactly one allowed boot's values; a refusal names the
closest boot and the PCRs that differ. Only digests are used: no event's
type or data, which its digest may not cover, decides anything.

Refstate (`mshim verify keylime-refstate -o FILE` writes it):
  {"schema": "mshim-keylime-refstate/1",
   "boots": [{"label": "...", "pcrs": {"4": "<sha256 hex>", ...}}, ...]}
Each boot lists some of PCRs 4, 5, 7, 9, 12 (its predicted ones); every
listed PCR must match.

Deploy: copy this file into a directory on the verifier's Python path
(or install it with `make install`, /usr/share/mshim/keylime/) and name it
in the verifier's `measured_boot_imports` (keylime.conf, [verifier]),
e.g. `measured_boot_imports = mshim_policy`, with
`measured_boot_policy_name = mshim`."""
import hashlib
import re
import typing

from keylime.mba.elchecking import policies, tests

SCHEMA = "mshim-keylime-refstate/1"
PCRS = (4, 5, 7, 9, 12)
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


class MshimPolicy(policies.Policy):
    def get_relevant_pcrs(self) -> typing.FrozenSet[int]:
        return frozenset(PCRS)

    def refstate_to_test(self, refstate) -> tests.Test:
        return _AllowedBoots(_boots(refstate))


policies.register("mshim", MshimPolicy())
