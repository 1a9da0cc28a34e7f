#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks of `mshim log` against sources that are not mshim:
EXPECTED.json (values replayed by other tools, see tests/data/eventlogs/README.md)
and tpm2_eventlog from tpm2-tools. Prints PASS:/FAIL: lines."""
import json, os, re, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from oracle import eventlog_yaml_pcrs  # one tpm2_eventlog YAML reader for all tests

MSHIM = os.environ.get("MSHIM", "build/test/mshim")
TSAN = os.environ.get("MSHIM_TSAN", "build/tsan/mshim")
DATA = os.environ.get("MB_CORPUS", "tests/data") + "/eventlogs"
failed = 0

def result(ok, name, detail=""):
    global failed
    print(("PASS: " if ok else "FAIL: ") + name)
    if not ok:
        failed += 1
        if detail:
            print("  " + detail.replace("\n", "\n  "), file=sys.stderr)

def run(*args):
    return subprocess.run([MSHIM, *args], capture_output=True, text=True, timeout=120)

def expected():
    with open(os.path.join(DATA, "EXPECTED.json")) as f:
        return json.load(f)

def test_corpus():
    bins = {f for f in os.listdir(DATA) if f.endswith(".bin")}
    result(bins == set(expected()), "every corpus log has an EXPECTED.json entry, and every entry a log",
           str(bins ^ set(expected())))
    for name, exp in sorted(expected().items()):
        p = run("log", "--json", os.path.join(DATA, name))
        try:
            out = json.loads(p.stdout)
        except ValueError as e:
            result(False, f"log --json {name}", f"invalid JSON: {e}\n{p.stderr}")
            continue
        if "error" in exp:
            ok = (p.returncode == 2 and "error" in out and "offset" in p.stderr
                  and "record" in p.stderr and "malformed" in p.stderr)
            result(ok, f"log rejects malformed {name}", f"rc={p.returncode} stderr={p.stderr!r}")
            continue
        ok = (p.returncode == 0 and out["format"] == exp["format"]
              and out["event_count"] == exp["events"] and len(out["events"]) == exp["events"]
              and out["pcrs"] == exp["pcrs"] and out["schema"] == "mshim-log/1")
        result(ok, f"log --json {name} replays to EXPECTED.json",
               f"rc={p.returncode} stderr={p.stderr}")

def eventlog_pcrs(path):
    """tpm2_eventlog's replay: the 'pcrs:' section of its YAML, as hex strings."""
    import tempfile
    with tempfile.NamedTemporaryFile("w+") as out:
        p = subprocess.run(["tpm2_eventlog", path], stdout=out, stderr=subprocess.DEVNULL, timeout=120)
        pcrs = eventlog_yaml_pcrs(out.name)
    return p.returncode, {b: {str(i): v.hex() for i, v in d.items()} for b, d in pcrs.items()}

def test_differential():
    """Same files through tpm2_eventlog, both ways: every PCR either tool
    replays must agree. Its 5.4 replay ignores StartupLocality, so PCR 0 of
    a log with that event is excluded."""
    for name, exp in sorted(expected().items()):
        if "error" in exp:
            continue
        path = os.path.join(DATA, name)
        rc, theirs = eventlog_pcrs(path)
        if rc != 0 or not theirs:
            result(False, f"differential vs tpm2_eventlog {name}", f"tpm2_eventlog cannot read it: rc={rc}")
            continue
        ours = json.loads(run("log", "--json", path).stdout)["pcrs"]
        with open(path, "rb") as f:
            has_locality = b"StartupLocality\0" in f.read()
        bad = []
        for bank in set(theirs) | set(ours):
            t = {i: v for i, v in theirs.get(bank, {}).items() if int(i) < 24 and v.strip("0")}
            o = ours.get(bank, {})
            for idx in set(t) | set(o):
                if idx == "0" and has_locality:
                    continue
                if t.get(idx) != o.get(idx):
                    bad.append(f"{bank}:{idx} tpm2_eventlog={t.get(idx)} mshim={o.get(idx)}")
        result(not bad, f"differential vs tpm2_eventlog {name}", "\n".join(bad))

def test_pcrs_option(tmp):
    name = "tpm2-tools-event-arch-linux.bin"
    path = os.path.join(DATA, name)
    exp = expected()[name]["pcrs"]
    good = os.path.join(tmp, "good.txt")
    with open(good, "w") as f:
        for bank, vals in exp.items():
            for i in range(16):
                v = vals.get(str(i), "00" * (20 if bank == "sha1" else 32))
                f.write(f"{bank}:{i}={v}\n")
    p = run("log", "--pcrs", good, path)
    result(p.returncode == 0 and "MISMATCH" not in p.stdout, "log --pcrs matching values exit 0", p.stdout[-2000:] + p.stderr)
    # tpm2_pcrread on a TPM with an sm3_256 bank lists it too; the log has
    # no such bank, so it is read and not compared.
    with_sm3 = os.path.join(tmp, "sm3.yaml")
    with open(with_sm3, "w") as f:
        f.write("  sm3_256:\n" + "".join(f"    {i} : 0x{'11' * 32}\n" for i in range(16)))
        for bank, vals in exp.items():
            f.write(f"  {bank}:\n")
            for i in range(16):
                f.write(f"    {i} : 0x{vals.get(str(i), '00' * (20 if bank == 'sha1' else 32)).upper()}\n")
    p = run("log", "--pcrs", with_sm3, path)
    result(p.returncode == 0 and "MISMATCH" not in p.stdout, "log --pcrs accepts tpm2_pcrread output with an sm3_256 bank",
           p.stdout[-1000:] + p.stderr)
    # tpm2_pcrread's YAML form, with one PCR changed.
    yaml = os.path.join(tmp, "pcrread.yaml")
    with open(yaml, "w") as f:
        for bank, vals in exp.items():
            f.write(f"  {bank}:\n")
            for i in range(16):
                v = vals.get(str(i), "00" * (20 if bank == "sha1" else 32))
                if bank == "sha256" and i == 4:
                    v = "ab" * 32
                f.write(f"    {i} : 0x{v.upper()}\n")
    p = run("log", "--pcrs", yaml, path)
    ok = (p.returncode == 1 and re.search(r"sha256\s+PCR\s+4\s+MISMATCH", p.stdout)
          and "EV_EFI_BOOT_SERVICES_APPLICATION" in p.stdout.split("MISMATCH", 1)[1])
    result(bool(ok), "log --pcrs YAML mismatch exits 1 and lists the PCR's events", p.stdout[-3000:] + p.stderr)
    p = run("log", "--json", "--pcrs", yaml, path)
    cmp = json.loads(p.stdout).get("comparison", [])
    bad = [c for c in cmp if not c["match"]]
    result(p.returncode == 1 and len(bad) == 1 and bad[0]["pcr"] == 4 and bad[0]["bank"] == "sha256",
           "log --json --pcrs reports exactly the changed PCR", str(bad))
    junk = os.path.join(tmp, "junk.txt")
    with open(junk, "w") as f:
        f.write("sha256:0=zz\n")
    p = run("log", "--pcrs", junk, path)
    result(p.returncode == 2 and "junk.txt:1" in p.stderr, "log --pcrs rejects a bad value file with its line", p.stderr)

def test_diff(tmp):
    a = os.path.join(DATA, "tpm2-tools-event-arch-linux.bin")
    p = run("log", "diff", a, a)
    result(p.returncode == 0, "log diff of a log with itself is empty", p.stdout + p.stderr)
    # Change one digest byte of one event in PCR 4 (an independent edit of the file).
    with open(a, "rb") as f:
        data = bytearray(f.read())
    out = json.loads(run("log", "--json", a).stdout)
    ev = next(e for e in out["events"] if e["pcr"] == 4 and e["type_id"] == 0x80000003)
    # TCG_PCR_EVENT2: pcr(4) type(4) count(4) alg(2) digest...
    data[ev["offset"] + 14] ^= 0xFF
    b = os.path.join(tmp, "b.bin")
    with open(b, "wb") as f:
        f.write(data)
    p = run("log", "diff", "--json", a, b)
    d = json.loads(p.stdout)
    changes = [(pcr, c["change"]) for pcr, cs in d["pcrs"].items() for c in cs]
    result(p.returncode == 1 and changes == [("4", "changed")] and not d["identical"],
           "log diff reports exactly one changed event in PCR 4", str(changes))
    # One record inserted in the middle of a PCR with more events than the
    # alignment table takes (5,800 in PCR 7): still exactly one addition.
    big = os.path.join(tmp, "diff-big.bin")
    subprocess.run([sys.executable, "scripts/bench/mklog.py", os.path.join(DATA, "qemu-ovmf-systemd-boot-linux61.bin"),
                    "30001", big], check=True)
    evs = json.loads(run("log", "--json", "--no-payload", big).stdout)["events"]
    in7 = [e for e in evs if e["pcr"] == 7]
    mid = in7[len(in7) // 2]
    with open(big, "rb") as f:
        data = f.read()
    start, end = mid["offset"], evs[mid["number"] + 1]["offset"]
    big2 = os.path.join(tmp, "diff-big2.bin")
    with open(big2, "wb") as f:
        f.write(data[:end] + data[start:end] + data[end:])
    p = run("log", "diff", "--json", big, big2)
    d = json.loads(p.stdout)
    changes = [(pcr, c["change"]) for pcr, cs in d["pcrs"].items() for c in cs]
    result(p.returncode == 1 and len(in7) > 4096 and changes == [("7", "added")],
           f"log diff finds one event added among {len(in7)} in a PCR", str(changes[:6]))
    c = os.path.join(DATA, "tpm2-tools-event-sd-boot-fedora37.bin")
    p = run("log", "diff", a, c)
    result(p.returncode == 1 and "PCR " in p.stdout, "log diff of two different machines' logs", p.stderr)

def test_errors(tmp):
    p = run("log", os.path.join(tmp, "does-not-exist"))
    result(p.returncode == 2 and "cannot open" in p.stderr and "does-not-exist" in p.stderr, "log: missing file is exit 2 with a message", p.stderr)
    p = run("log", tmp)
    result(p.returncode == 2 and "directory" in p.stderr, "log: a directory is exit 2", p.stderr)
    p = run("log", "--bogus-option")
    result(p.returncode == 2 and p.stderr == "mshim: unknown or ambiguous option '--bogus-option'; see 'mshim log --help'\n",
           "log: an unknown option is one line pointing to the help", p.stderr)
    p = run("frobnicate")
    result(p.returncode == 2 and "unknown command" in p.stderr, "unknown command", p.stderr)
    for args in (["--help"], ["log", "--help"], ["log", "diff", "--help"]):
        p = run(*args)
        result(p.returncode == 0 and "Usage" in p.stdout and len(p.stdout) > 200, "help: mshim " + " ".join(args), p.stderr)
    # A truncated real log: records before the error are printed, then exit 2.
    with open(os.path.join(DATA, "tpm2-tools-event-arch-linux.bin"), "rb") as f:
        data = f.read()
    t = os.path.join(tmp, "trunc.bin")
    with open(t, "wb") as f:
        f.write(data[:len(data) - 7])
    p = run("log", "--json", t)
    out = json.loads(p.stdout)
    result(p.returncode == 2 and len(out["events"]) == 24 and out["error"]["record"] == 24
           and f"record 24" in p.stderr, "log: truncated log shows earlier records and names the record", p.stderr)
    p = run("log", t)
    result(p.returncode == 2 and p.stdout.count("PCR") >= 24, "log: truncated log, table mode", p.stderr)

def test_integrity(tmp):
    """Every real log passes --check; a separator whose data no longer
    hashes to its digest (PFP 10.4.1: EV_SEPARATOR digest = H(data)) fails."""
    for name, exp in sorted(expected().items()):
        if "error" in exp:
            continue
        p = run("log", "--check", "--no-payload", os.path.join(DATA, name))
        result(p.returncode == 0, f"log --check {name}: every checkable digest covers its data", p.stdout[-800:])
    path = os.path.join(DATA, "tpm2-tools-event-arch-linux.bin")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    out = json.loads(run("log", "--json", path).stdout)
    ev = next(e for e in out["events"] if e["type_id"] == 4)
    # The data are the record's last 4 bytes.
    end = out["events"][ev["number"] + 1]["offset"]
    data[end - 1] ^= 0x01
    t = os.path.join(tmp, "sep.bin")
    with open(t, "wb") as f:
        f.write(data)
    p = run("log", "--check", t)
    result(p.returncode == 1 and p.stdout.count("DIGEST MISMATCH") == 1, "log --check flags a tampered separator", p.stdout[-800:])
    j = json.loads(run("log", "--json", t).stdout)
    bad = [e["number"] for e in j["events"] if e.get("integrity") == "mismatch"]
    result(bad == [ev["number"]] and j["integrity_mismatches"] == 1, "log --json marks exactly that event", str(bad))

def test_integrity_per_bank(tmp):
    """A separator whose SHA-512 digest alone no longer covers its data (the
    other banks' still do) is flagged, whether the SHA-384/512 digests are
    checked eight at a time (AVX-512) or one at a time."""
    path = os.path.join(DATA, "qemu-ovmf-systemd-boot-linux61.bin")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    out = json.loads(run("log", "--json", path).stdout)
    for bank in ("sha384", "sha512", "sha1"):
        ev = [e for e in out["events"] if e["type_id"] == 4][3]
        digest = bytes.fromhex(ev["digests"][bank])
        at = data.index(digest, ev["offset"])
        bad = bytearray(data)
        bad[at + 5] ^= 0x40
        t = os.path.join(tmp, f"sep-{bank}.bin")
        with open(t, "wb") as f:
            f.write(bad)
        for env in ({}, {"MSHIM_NO_AVX512": "1"}):
            j = json.loads(run_env(env, "log", "--json", "--check", t).stdout)
            flagged = [e["number"] for e in j["events"] if e.get("integrity") == "mismatch"]
            result(flagged == [ev["number"]] and j["integrity_mismatches"] == 1,
                   f"log --check flags a separator whose {bank} digest alone is wrong"
                   + (" (MSHIM_NO_AVX512=1)" if env else ""), str(flagged))

def test_json_escaping(tmp):
    """EV_EFI_ACTION text with quotes, backslashes, tabs and newlines at
    every position of an 8-byte word (the JSON writer scans eight bytes at
    a time) comes back from --json exactly, and the digests still check."""
    import hashlib, struct
    src = os.path.join(DATA, "qemu-ovmf-systemd-boot-linux61.bin")
    with open(src, "rb") as f:
        log = f.read()
    hsize = struct.unpack_from("<I", log, 28)[0]
    out = bytearray(log[:32 + hsize])
    texts = []
    for k in range(24):
        text = "x" * k + 'say "hi"\\ and\ttab\nline\r' + "y" * (k % 9) + "\\"
        data = text.encode()
        rec = struct.pack("<III", 5, 0x80000007, 4)
        for alg, h in ((4, hashlib.sha1), (11, hashlib.sha256), (12, hashlib.sha384), (13, hashlib.sha512)):
            rec += struct.pack("<H", alg) + h(data).digest()
        out += rec + struct.pack("<I", len(data)) + data
        texts.append(text)
    t = os.path.join(tmp, "escapes.bin")
    with open(t, "wb") as f:
        f.write(out)
    p = run("log", "--json", "--check", t)
    try:
        j = json.loads(p.stdout)
        got = [e["payload"].get("text") for e in j["events"][1:]]
        ok = p.returncode == 0 and got == texts and j["integrity_mismatches"] == 0
    except (ValueError, KeyError) as e:
        ok, got = False, str(e)
    result(ok, "log --json escapes quotes, backslashes and control characters anywhere in a string",
           f"rc={p.returncode} {got!r:.400}")

def spec_id_log(algs, records):
    """A crypto-agile log: the Spec ID header declaring algs [(id, size)],
    then records [(pcr, type, [(alg, digest)], data)] (PFP 10.4.5.1, 10.2.2)."""
    import struct
    spec = b"Spec ID Event03\0" + struct.pack("<IBBBBI", 0, 0, 2, 0, 2, len(algs))
    spec += b"".join(struct.pack("<HH", a, n) for a, n in algs) + b"\0"
    out = struct.pack("<II", 0, 3) + bytes(20) + struct.pack("<I", len(spec)) + spec
    for pcr, typ, digests, data in records:
        out += struct.pack("<III", pcr, typ, len(digests))
        out += b"".join(struct.pack("<H", a) + d for a, d in digests)
        out += struct.pack("<I", len(data)) + data
    return out

def test_robustness(tmp):
    """Inputs that once crashed, hung or lost output."""
    import socket, threading, time
    # A bank with a 2-byte digest (an algorithm mshim cannot hash): the
    # table shows both bytes and reads nothing past them (ASan build).
    t = os.path.join(tmp, "short.bin")
    with open(t, "wb") as f:
        f.write(spec_id_log([(0x27, 2)], [(4, 0x80000007, [(0x27, b"\xab\xcd")], b"act")]))
    p, q = run("log", t), run("log", "diff", t, t)
    result(p.returncode == 0 and "alg_0x0027:abcd.." in p.stdout and q.returncode == 0,
           "log and log diff show a 2-byte digest without reading past it", p.stdout[-500:] + p.stderr + q.stderr)
    log = os.path.join(DATA, "qemu-ovmf-systemd-boot-linux61.bin")
    with open("/dev/full", "w") as full:
        p = subprocess.run([MSHIM, "log", log], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    result(p.returncode == 2 and "cannot write" in p.stderr, "log: a full disk is exit 2, not lost output", p.stderr)
    p = run("log", "/dev/zero")
    result(p.returncode == 2 and "more than 256 MiB" in p.stderr, "log: an endless stream is refused", p.stderr)
    p = run("log", "--pcrs", os.path.join(tmp, "missing.txt"), log)
    result(p.returncode == 2 and p.stdout == "" and "missing.txt" in p.stderr,
           "log --pcrs with a missing file fails before printing the log", p.stdout[:300] + p.stderr)
    # Records with fewer digests than the header declares: accepted (the
    # tpm2-tools test logs have them) but counted and warned about.
    p = run("log", "--json", "--no-payload", os.path.join(DATA, "tpm2-tools-event-uefiaction.bin"))
    q = run("log", "--json", "--no-payload", log)
    result(p.returncode == 0 and json.loads(p.stdout)["records_missing_digests"] == 1 and "#1" in p.stderr
           and json.loads(q.stdout)["records_missing_digests"] == 0 and q.stderr == "",
           "log warns about records with fewer digests than the header declares", p.stderr)
    # A bank mshim cannot hash (SHA3-256, TPM_ALG_ID 0x27) next to sha256:
    # kept in "algorithms", not replayed, and sha256 replayed as hashlib
    # says. (SM3 banks are replayed: tests/cli/log_formats.py.)
    import hashlib
    d1, d2 = hashlib.sha256(b"one").digest(), hashlib.sha256(b"two").digest()
    t = os.path.join(tmp, "sha3.bin")
    with open(t, "wb") as f:
        f.write(spec_id_log([(0x0B, 32), (0x27, 32)], [(4, 0x80000007, [(0x0B, d1), (0x27, bytes(32))], b"one"),
                                                       (4, 0x80000007, [(0x0B, d2), (0x27, bytes(32))], b"two")]))
    want = hashlib.sha256(hashlib.sha256(bytes(32) + d1).digest() + d2).hexdigest()
    p = run("log", "--json", t)
    j = json.loads(p.stdout) if p.returncode == 0 else {}
    result(j.get("algorithms") == ["sha256", "alg_0x0027"] and j.get("pcrs") == {"sha256": {"4": want}},
           "log keeps a bank it cannot hash and replays sha256 beside it", p.stdout[-600:] + p.stderr)
    # A file name that is not UTF-8 still gives valid JSON (RFC 8259).
    odd = os.path.join(os.fsencode(tmp), b"log-\xff\xc3\xa9.bin")
    with open(odd, "wb") as f, open(log, "rb") as g:
        f.write(g.read())
    p = subprocess.run([MSHIM, "log", "--json", "--no-payload", odd], capture_output=True, timeout=60)
    try:
        name = json.loads(p.stdout)["file"]
    except (ValueError, KeyError) as e:
        name = f"invalid: {e}"
    result(name.endswith("log-\ufffd\u00e9.bin"), "log --json: a non-UTF-8 file name becomes U+FFFD", name)
    p, q = run_env({"MSHIM_THREADS": "abc"}, "log", log), run("log", log)
    result(p.returncode == 0 and p.stdout == q.stdout and "MSHIM_THREADS=abc" in p.stderr,
           "log: a bad MSHIM_THREADS is named and ignored", p.stderr)
    p = run("help", "bogus")
    result(p.returncode == 2 and "unknown command" in p.stderr, "mshim help with an unknown command is exit 2", p.stderr)
    # A TPM endpoint (both swtpm ports) that accepts and never answers.
    socks = []
    for _ in range(20):
        try:
            base = 20000 + (os.getpid() * 7 + len(socks)) % 20000
            socks = [socket.create_server(("127.0.0.1", port)) for port in (base, base + 1)]
            break
        except OSError:
            socks = []
    held = []
    def accept(s):
        s.settimeout(10)
        try:
            held.append(s.accept())
        except OSError:
            pass
    for s in socks:
        threading.Thread(target=accept, args=(s,), daemon=True).start()
    t0 = time.time()
    p = run_env({"MSHIM_TPM_TIMEOUT": "2", "TPM2TOOLS_TCTI": f"swtpm:host=127.0.0.1,port={base}"}, "log", "--tpm", log)
    result(bool(socks) and p.returncode == 2 and "did not answer within 2 s" in p.stderr and time.time() - t0 < 30,
           "log --tpm gives up on a TPM that never answers (MSHIM_TPM_TIMEOUT)", p.stderr)
    for s in socks:
        s.close()

def has_avx512():
    with open("/proc/cpuinfo") as f:
        return " avx512f" in f.read()

def skip(name, why):
    print(f"SKIP: {name} ({why})")

def run_env(env, *args):
    return subprocess.run([MSHIM, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})

def test_threads(tmp):
    """A log of many chunks (tools/lib/logwork.c cuts 128 events each): the
    replay agrees with tpm2_eventlog, and the output with any number of
    threads is byte for byte the single-threaded one, for a clean log and
    for one with a tampered event and a truncated tail."""
    src = os.path.join(DATA, "qemu-ovmf-systemd-boot-linux61.bin")
    big = os.path.join(tmp, "big.bin")
    subprocess.run([sys.executable, "scripts/bench/mklog.py", src, "3001", big], check=True)
    rc, theirs = eventlog_pcrs(big)
    ours = json.loads(run_env({"MSHIM_THREADS": "4"}, "log", "--json", big).stdout)
    bad = [f"{b}:{i}" for b, vals in theirs.items() for i, v in vals.items()
           if int(i) < 24 and v.strip("0") and ours["pcrs"].get(b, {}).get(i) != v]
    result(rc == 0 and ours["event_count"] == 3001 and not bad,
           "log: 3001-event log replays as tpm2_eventlog does (4 threads)", " ".join(bad))
    # Past 4 MiB the written part of the mapping is given back (and read
    # again where still needed): a 20001-event log replays the same, and a
    # --pcrs mismatch still lists every event of the PCR from the start.
    huge = os.path.join(tmp, "huge.bin")
    subprocess.run([sys.executable, "scripts/bench/mklog.py", src, "20001", huge], check=True)
    rc, theirs = eventlog_pcrs(huge)
    j = json.loads(run("log", "--json", huge).stdout)
    bad = [f"{b}:{i}" for b, vals in theirs.items() for i, v in vals.items()
           if int(i) < 24 and v.strip("0") and j["pcrs"].get(b, {}).get(i) != v]
    result(rc == 0 and j["event_count"] == 20001 and os.path.getsize(huge) > 4 << 20 and not bad,
           "log: 20001-event (4.7 MB) log replays as tpm2_eventlog does", " ".join(bad))
    vals = os.path.join(tmp, "huge-pcrs.txt")
    with open(vals, "w") as f:
        for i, v in j["pcrs"]["sha256"].items():
            f.write(f"sha256:{i}={'ab' * 32 if i == '2' else v}\n")
    p = run("log", "--no-payload", "--pcrs", vals, huge)
    listed = p.stdout.split("MISMATCH", 1)[-1].count(" EV_")
    n_pcr2 = sum(1 for e in j["events"] if e["pcr"] == 2 and e["type_id"] != 3)
    result(p.returncode == 1 and listed == n_pcr2 and n_pcr2 > 600,
           "log --pcrs on a 20001-event log lists all of the mismatching PCR's events", f"listed {listed} of {n_pcr2}")
    with open(big, "rb") as f:
        data = bytearray(f.read())
    sep = [e for e in ours["events"] if e["type_id"] == 4][20]
    data[ours["events"][sep["number"] + 1]["offset"] - 1] ^= 1
    bad_log = os.path.join(tmp, "big-bad.bin")
    with open(bad_log, "wb") as f:
        f.write(data[:len(data) - 5])
    for path in (big, bad_log):
        for args in (["--json"], ["-v"]):
            outs = [run_env({"MSHIM_THREADS": t}, "log", *args, path) for t in ("1", "2", "3", "8")]
            one = outs[0]
            same = all((p.returncode, p.stdout, p.stderr) == (one.returncode, one.stdout, one.stderr) for p in outs)
            result(same and one.returncode == (0 if path == big else 2),
                   f"log {' '.join(args)} {os.path.basename(path)}: same output with 1, 2, 3 and 8 threads")
    # SHA-384/512 extends eight at a time (AVX-512) or one at a time: same output.
    for path in (big, bad_log) if has_avx512() else ():
        a = run_env({}, "log", "--json", path)
        b = run_env({"MSHIM_NO_AVX512": "1"}, "log", "--json", path)
        result((a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr),
               f"log --json {os.path.basename(path)}: same output with MSHIM_NO_AVX512=1")
    if not has_avx512():
        skip("log --json: same output with and without AVX-512", "this CPU has no AVX-512F")
    # The same runs under ThreadSanitizer (make builds build/tsan/mshim).
    for path, want in ((big, 0), (bad_log, 2)):
        for args in (["--json"], []):
            env = {**os.environ, "MSHIM_THREADS": "4", "TSAN_OPTIONS": "halt_on_error=1 exitcode=66"}
            p = subprocess.run([TSAN, "log", *args, path], capture_output=True, text=True, timeout=300, env=env)
            if "unexpected memory mapping" in p.stderr:
                # gcc 12's TSan cannot start under the large mmap
                # randomisation of newer kernels; without ASLR it can.
                p = subprocess.run(["setarch", os.uname().machine, "-R", TSAN, "log", *args, path],
                                   capture_output=True, text=True, timeout=300, env=env)
            result(p.returncode == want and "ThreadSanitizer" not in p.stderr,
                   f"log {' '.join(args) or '(table)'} {os.path.basename(path)}: no data race (ThreadSanitizer, 4 threads)",
                   f"rc={p.returncode} " + p.stderr[-3000:])
    j = json.loads(run_env({"MSHIM_THREADS": "3"}, "log", "--json", bad_log).stdout)
    result(j["integrity_mismatches"] == 1 and j["error"]["record"] == 3000 and len(j["events"]) == 3000,
           "log: tampered event and truncated tail found on 3 threads", json.dumps(j.get("error")))

def test_table(tmp):
    p = run("log", os.path.join(DATA, "qemu-ovmf-systemd-boot-linux61.bin"))
    ok = (p.returncode == 0 and "EV_EFI_BOOT_SERVICES_APPLICATION" in p.stdout
          and "Replayed PCRs, sha256" in p.stdout and "32 events" in p.stdout)
    result(ok, "log table output", p.stdout[-1500:] + p.stderr)

if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        test_corpus()
        test_differential()
        test_pcrs_option(tmp)
        test_diff(tmp)
        test_errors(tmp)
        test_integrity(tmp)
        test_table(tmp)
        test_threads(tmp)
        test_integrity_per_bank(tmp)
        test_json_escaping(tmp)
        test_robustness(tmp)
    sys.exit(1 if failed else 0)
