#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""mshim log on crafted logs whose expected output is computed here
(tests/cli/tcglog_build.py): SM3_256 banks replayed and checked, `log -`
reading standard input, and `log diff` comparing the banks both logs share
and flagging payloads their digest does not cover. Prints PASS:/FAIL:."""
import json, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tcglog_build as tb
from clitest import Report
from tcglog_build import EV_EFI_ACTION, EV_SEPARATOR

MSHIM = os.environ.get("MSHIM", "build/test/mshim")
# SM3 runs through both engines: the portable one (the ASan build, like the
# loader) and the host one (OpenSSL for SHA, handing SM3 to src/sha.c).
BINARIES = [MSHIM, os.environ.get("MSHIM_HOST", "build/mshim"), os.environ.get("MSHIM_TSAN", "build/tsan/mshim")]
result = Report("log-formats: ")
tmp = tempfile.mkdtemp()




def run(*args, binary=MSHIM, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run([binary, *args], timeout=600, **kw)


def write(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def as_json(p):
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


# ---- SM3_256 ------------------------------------------------------------------

def test_sm3():
    banks = ["sha256", "sm3_256"]
    events = tb.sample_events()
    want = tb.replay(banks, events)
    path = write("sm3.bin", tb.build(banks, events))
    for b in BINARIES:
        p = run("log", "--json", path, binary=b)
        j = as_json(p)
        ok = (p.returncode == 0 and j is not None and j["algorithms"] == banks and j["pcrs"] == want
              and j["integrity_mismatches"] == 0)
        result(ok, f"SM3 bank replayed to the independent values ({b})", p.stderr.decode()[-500:] + str(j and j["pcrs"]))
        checked = j and [e for e in j["events"][1:] if e.get("integrity") == "ok"]
        result(bool(checked) and len(checked) == len(events), f"every event's SM3 and SHA-256 digests checked ({b})",
               j and [e.get("integrity") for e in j["events"]])
    # An SM3-only log: nothing but SM3 to replay and check.
    path1 = write("sm3only.bin", tb.build(["sm3_256"], events))
    j = as_json(run("log", "--json", path1))
    result(j is not None and j["pcrs"] == tb.replay(["sm3_256"], events), "an SM3-only log replays", j and j["pcrs"])
    # A forged SM3 digest (the SHA-256 one still right) is caught.
    bad = list(events)
    bad[0] = events[0] + ({"sm3_256": bytes(32)},)
    path2 = write("sm3bad.bin", tb.build(banks, bad))
    p = run("log", "--json", "--check", path2)
    j = as_json(p)
    result(p.returncode == 1 and j["events"][1]["integrity"] == "mismatch" and j["integrity_mismatches"] == 1,
           "a wrong SM3 digest is an integrity mismatch (--check exits 1)", j and j["events"][1])
    result(j is not None and j["pcrs"]["sm3_256"] == tb.replay(banks, bad)["sm3_256"],
           "the forged digest is replayed as logged", j and j["pcrs"])
    # --pcrs with sm3_256 lines: a match, then one PCR off.
    pf = os.path.join(tmp, "sm3pcrs.txt")
    lines = [f"{b}:{i}={want[b].get(str(i), '00' * 32)}" for b in banks for i in range(16)]
    open(pf, "w").write("\n".join(lines) + "\n")
    p = run("log", "--pcrs", pf, path)
    result(p.returncode == 0 and b"sm3_256 PCR  4  match" in p.stdout, "--pcrs compares the SM3 bank", p.stdout[-800:])
    open(pf, "w").write("\n".join(l if not l.startswith("sm3_256:4=") else "sm3_256:4=" + "11" * 32
                                  for l in lines) + "\n")
    p = run("log", "--pcrs", pf, path)
    result(p.returncode == 1 and b"sm3_256 PCR  4  MISMATCH" in p.stdout, "--pcrs finds a wrong SM3 PCR", p.stdout[-800:])


# ---- standard input -----------------------------------------------------------

def test_stdin():
    banks = ["sha1", "sha256"]
    events = tb.sample_events()
    path = write("in.bin", tb.build(banks, events))
    ref = as_json(run("log", "--json", path))
    cat = subprocess.Popen(["cat", path], stdout=subprocess.PIPE)
    p = run("log", "--json", "-", stdin=cat.stdout)
    cat.wait()
    j = as_json(p)
    result(p.returncode == 0 and j is not None and j["file"] == "-" and {**j, "file": path} == ref,
           "log - reads a pipe: the same object as from the file", p.stderr)
    with open(path, "rb") as f:
        p = run("log", "-", stdin=f)
    result(p.returncode == 0 and b"Replayed PCRs, sha256" in p.stdout, "log - < FILE (a regular file)", p.stderr)
    # Standard input already read past its start: what is left is the log.
    p = subprocess.run(["sh", "-c", 'dd bs=1 count=10 of=/dev/null 2>/dev/null; exec "$0" log -', MSHIM],
                       stdin=open(path, "rb"), capture_output=True, timeout=60)
    result(p.returncode == 2 and b"standard input: malformed event log at byte offset 0" in p.stderr,
           "log - reads from where standard input stands", p.stderr)
    # A large log through a pipe: 60,000 records, about 9 MB.
    big_events = [(i % 24, EV_EFI_ACTION, b"event %06d" % i + b"x" * 64) for i in range(60000)]
    big = write("big.bin", tb.build(banks, big_events))
    cat = subprocess.Popen(["cat", big], stdout=subprocess.PIPE)
    p = run("log", "--json", "--no-payload", "-", binary=BINARIES[1], stdin=cat.stdout)
    cat.wait()
    j = as_json(p)
    result(p.returncode == 0 and j is not None and j["event_count"] == 60001 and j["pcrs"] == tb.replay(banks, big_events),
           f"log - on a {os.path.getsize(big) >> 20} MiB log through a pipe", p.stderr[-500:])
    for b in BINARIES:
        p = run("log", "--json", "-", binary=b, stdin=subprocess.DEVNULL)
        j = as_json(p)
        result(p.returncode == 2 and b"mshim: standard input: malformed event log at byte offset 0 (record 0): empty"
               in p.stderr and j is not None and j["events"] == [] and j["pcrs"] == {} and j["event_count"] == 0,
               f"log - on an empty standard input: exit 2, a message, a complete object ({b})", p.stderr)
    p = subprocess.run(f"head -c {(256 << 20) + 1} /dev/zero | {BINARIES[1]} log -", shell=True, capture_output=True,
                       timeout=120)
    result(p.returncode == 2 and b"mshim: standard input: more than 256 MiB" in p.stderr,
           "log - refuses a stream past 256 MiB", p.stderr)
    p = run("log", "diff", "-", path, stdin=open(path, "rb"))
    result(p.returncode == 0, "log diff - FILE", p.stderr)
    p = run("log", "diff", "-", "-", stdin=open(path, "rb"))
    result(p.returncode == 2 and b"only one of A and B can be standard input" in p.stderr, "log diff - - refused",
           p.stderr)


# ---- log diff -------------------------------------------------------------------

def diff(a, b, *opts):
    return run("log", "diff", *opts, a, b)


def test_diff():
    events = tb.sample_events()
    a = write("a.bin", tb.build(["sha1", "sha256"], events))
    b = write("b.bin", tb.build(["sha256"], events))
    c = write("c.bin", tb.build(["sha256", "sha384", "sm3_256"], events))
    for other, what in ((b, "sha256 only"), (c, "sha256+sha384+sm3_256")):
        p = diff(a, other, "--json")
        j = as_json(p)
        result(p.returncode == 0 and j is not None and j["identical"] and j["banks"] == ["sha256"] and j["pcrs"] == {},
               f"the same events, sha1+sha256 vs {what}: identical over the shared bank", p.stdout[-800:])
        p = diff(a, other)
        result(p.returncode == 0 and b"same events" in p.stdout and b"is only in" in p.stderr,
               f"text: identical, the unshared banks named on stderr ({what})", p.stderr)
    # PCR 7's separator with another SHA-1 digest (the SHA-256 one the same):
    # no difference against a log without a SHA-1 bank, one against a log
    # with it.
    sep = [e if e[1] != EV_SEPARATOR or e[0] != 7 else e + ({"sha1": bytes(20)},) for e in events]
    d = write("d.bin", tb.build(["sha1", "sha256"], sep))
    p = diff(d, b, "--json")
    result(p.returncode == 0 and as_json(p)["identical"], "a SHA-1-only difference is not compared against a log without SHA-1")
    p = diff(a, d, "--json")
    j = as_json(p)
    result(p.returncode == 1 and list(j["pcrs"]) == ["7"] and j["pcrs"]["7"][0]["change"] == "changed",
           "a SHA-1-only difference counts when both logs have SHA-1", p.stdout[-800:])
    # A payload changed but its digests kept: a change, flagged as such.
    forged = list(events)
    forged[1] = (4, EV_EFI_ACTION, b"Returning from a different place!!!!!!!!!!!!!!!",
                 {k: tb.digest(k, events[1][2]) for k in tb.ALGS})
    f = write("f.bin", tb.build(["sha1", "sha256"], forged))
    p = diff(a, f, "--json")
    j = as_json(p)
    ch = (j or {}).get("pcrs", {}).get("4", [{}])[0]
    ea, eb = ch.get("a", {}), ch.get("b", {})
    result(p.returncode == 1 and ch.get("change") == "changed" and ea.get("integrity") == "ok"
           and eb.get("integrity") == "mismatch" and eb["payload"]["text"].startswith("Returning from a different"),
           "a forged payload: changed, B's integrity mismatch", p.stdout[-1500:])
    p = diff(a, f)
    lines = [l for l in p.stdout.decode().splitlines() if l.startswith("  ~ ")]
    result(p.returncode == 1 and len(lines) == 2 and "[DIGEST MISMATCH]" not in lines[0] and "[DIGEST MISMATCH]" in lines[1],
           "text: the forged event is marked [DIGEST MISMATCH]", p.stdout)
    # No bank in common: refused, not "identical".
    s1 = write("s1.bin", tb.build(["sha1"], events))
    p = diff(s1, b)
    result(p.returncode == 2 and b"share no PCR bank" in p.stderr, "logs without a shared bank are refused", p.stderr)


try:
    test_sm3()
    test_stdin()
    test_diff()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if result.failed else 0)
