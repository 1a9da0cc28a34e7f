#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every --json output of mshim against its JSON Schema (docs/schema/), with
the real validator (python-jsonschema, Debian's python3-jsonschema): every
corpus log, malformed and mutated logs, log diffs, and variable stores.
Then the schemas themselves: strict enough that drift fails, and every
member they allow documented. Prints PASS:/FAIL: lines."""
import concurrent.futures, copy, glob, json, os, random, re, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tcglog_build as tb
from clitest import Report

try:
    import jsonschema
except ImportError:
    print("FAIL: json-schema: python3-jsonschema is not installed (scripts/deps.sh)")
    sys.exit(1)

MSHIM = os.environ.get("MSHIM", "build/test/mshim")
DATA = os.environ.get("MB_CORPUS", "tests/data") + "/eventlogs"
OVMF = os.environ.get("MB_OVMF_DIR", "/usr/share/OVMF")
result = Report("json-schema: ")
tmp = tempfile.mkdtemp()




def run(*args, stdin=None):
    return subprocess.run([MSHIM, *args], capture_output=True, text=True, timeout=300, stdin=stdin)


def runs(arglists):
    """run(*args) for each of arglists, the results in that order: two at a
    time in threads, so that mshim's runs overlap the validation of the
    outputs before them (the file's time, not what is checked)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        yield from pool.map(lambda a: run(*a), arglists)


# ---- the schemas and a validator over all of them (cross-file $refs) -------

SCHEMAS = {}
for f in sorted(glob.glob("docs/schema/*.schema.json")):
    with open(f) as fh:
        s = json.load(fh)
    SCHEMAS[s["$id"]] = s
LOG, DIFF, VARS, PCRS, PREDICT = ("urn:mshim:schema:mshim-log-1", "urn:mshim:schema:mshim-log-diff-1",
                                  "urn:mshim:schema:mshim-vars-1", "urn:mshim:schema:mshim-pcrs-1",
                                  "urn:mshim:schema:mshim-predict-1")
# mshim policy list --json: validated by tests/cli/test_seal.sh, which has
# a TPM to make approvals with.
APPROVALS = "urn:mshim:schema:mshim-approvals-1"
# mshim attest quote's evidence and mshim verify --json: validated by
# tests/cli/test_attest.sh, which has a TPM to quote with.
EVIDENCE, VERDICT = "urn:mshim:schema:mshim-evidence-1", "urn:mshim:schema:mshim-verdict-1"
# mshim verify challenge / register's records: validated by
# tests/cli/test_attest_cred.sh.
MACHINE = "urn:mshim:schema:mshim-machine-1"
# mshim status --json: here on an empty root and on fake efivars;
# tests/cli/test_mshim_install.sh validates it with an install recorded.
STATUS = "urn:mshim:schema:mshim-status-1"
# mshim predict --list-entries --json: here on small ESP trees.
PLAN = "urn:mshim:schema:mshim-plan-1"


def validator(sid):
    schema = SCHEMAS[sid]
    try:  # python-jsonschema >= 4.18
        from referencing import Registry, Resource
        reg = Registry().with_resources([(k, Resource.from_contents(v)) for k, v in SCHEMAS.items()])
        return jsonschema.Draft202012Validator(schema, registry=reg)
    except ImportError:  # Debian 12's 4.10
        return jsonschema.Draft202012Validator(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=SCHEMAS))


def errors(sid, doc):
    return ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message[:300])
            for e in validator(sid).iter_errors(doc)]


def validate_file(sid, path):
    """For tests elsewhere (test_pcrs.sh needs a TPM): exit 1 on errors."""
    with open(path) as fh:
        errs = errors(sid, json.load(fh))
    for e in errs:
        print("  " + e, file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if errs else 0)


def schema_checks():
    ok, why = set(SCHEMAS) == {LOG, DIFF, VARS, PCRS, PREDICT, APPROVALS, EVIDENCE, VERDICT, STATUS, MACHINE, PLAN,
                                "urn:mshim:schema:mshim-keylime-refstate-1"}, sorted(SCHEMAS)
    for sid, s in SCHEMAS.items():
        try:
            jsonschema.Draft202012Validator.check_schema(s)
        except jsonschema.SchemaError as e:
            ok, why = False, f"{sid}: {e.message}"
    result(ok, "the three schemas are valid draft 2020-12 schemas", why)


def check_output(name, p, sid, want_rc=(0,)):
    """p: a finished mshim run whose stdout must be one JSON object valid
    against sid. Returns the object (or None)."""
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        result(False, name, f"not JSON: {e}; rc={p.returncode} stderr={p.stderr}")
        return None
    errs = errors(sid, doc)
    result(not errs and p.returncode in want_rc, name, f"rc={p.returncode} {errs[:5]} {p.stderr[-500:]}")
    return doc


# ---- mshim-log/1 -----------------------------------------------------------

def corpus_dirs():
    """tests/data/eventlogs, and the shared corpus next to the checkout when
    there is one (MB_SHARED_CORPUS, or ../shared or ../../shared)."""
    dirs = [DATA]
    top = os.path.abspath(".")
    for d in (os.environ.get("MB_SHARED_CORPUS", ""), os.path.join(top, "../shared/corpus/eventlogs"),
              os.path.join(top, "../../shared/corpus/eventlogs")):
        if d and os.path.isdir(d) and os.path.realpath(d) not in map(os.path.realpath, dirs):
            dirs.append(d)
    return dirs


def malformed_ok(doc):
    return (doc is not None and doc["events"] == [] and doc["event_count"] == 0 and doc["pcrs"] == {}
            and doc["error"]["record"] == 0 and doc["error"]["offset"] == 0)


def log_corpus():
    for d in corpus_dirs():
        logs = sorted(glob.glob(os.path.join(d, "*.bin")))
        result(len(logs) > 10, f"corpus {d} has logs", len(logs))
        done = runs([a for f in logs for a in (("log", "--json", f), ("log", "--json", "--no-payload", f))])
        for f in logs:
            name = f"log --json {os.path.basename(f)} ({d})"
            doc = check_output(name, next(done), LOG, (0, 2))
            if doc is not None and "error" in doc:
                # Malformed at its first record: still a complete object.
                result(malformed_ok(doc) and doc["mshim_version"], f"{name}: malformed at record 0, "
                       "events/event_count/pcrs still there", doc)
            check_output(f"log --json --no-payload {os.path.basename(f)} ({d})", next(done), LOG, (0, 2))


def log_mutants():
    """Truncations and byte flips of every corpus log: each run, whatever
    it decodes or rejects, still prints a valid mshim-log/1 object."""
    rng = random.Random(13)
    bad = []
    n = 0
    mutants = []            # (log's name, variant number, file)
    for f in sorted(glob.glob(os.path.join(DATA, "*.bin"))):
        data = open(f, "rb").read()
        if len(data) < 64:
            continue
        variants = [data[:k] for k in sorted(rng.sample(range(1, len(data)), 4))]
        for _ in range(6):
            b = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            variants.append(bytes(b))
        for i, v in enumerate(variants):
            path = os.path.join(tmp, "mut%d.bin" % len(mutants))
            open(path, "wb").write(v)
            mutants.append((f, i, path))
    for (f, i, _), p in zip(mutants, runs([("log", "--json", m[2]) for m in mutants])):
        n += 1
        try:
            doc = json.loads(p.stdout)
            errs = errors(LOG, doc)
        except ValueError as e:
            errs = [f"not JSON: {e}"]
        if errs or p.returncode not in (0, 1, 2) or ("error" in doc) != (p.returncode == 2):
            bad.append(f"{os.path.basename(f)} variant {i}: rc={p.returncode} {errs[:3]} {p.stderr[-300:]}")
    result(not bad and n > 100, f"log --json on {n} truncated and corrupted logs", "\n".join(bad[:10]))


def log_other_outputs():
    events = tb.sample_events()
    log = os.path.join(tmp, "s.bin")
    open(log, "wb").write(tb.build(["sha256", "sm3_256"], events))
    with open(log, "rb") as fh:
        check_output("log --json - (standard input)", run("log", "--json", "-", stdin=fh), LOG)
    with open(os.devnull, "rb") as fh:
        doc = check_output("log --json - on an empty standard input", run("log", "--json", "-", stdin=fh), LOG, (2,))
    result(malformed_ok(doc), "empty standard input: events/event_count/pcrs still there", doc)
    want = tb.replay(["sha256", "sm3_256"], events)
    pf = os.path.join(tmp, "pcrs.txt")
    with open(pf, "w") as fh:
        for b, vals in want.items():
            for i in range(16):
                fh.write(f"{b}:{i}={vals.get(str(i), '00' * 32)}\n")
    doc = check_output("log --json --pcrs (comparison)", run("log", "--json", "--pcrs", pf, log), LOG)
    # PCRs 0-15 but 10 in both banks (tools/cmd/log.c compared_pcr), SM3 included.
    got = doc and sorted((c["bank"], c["pcr"]) for c in doc.get("comparison", []) if c["match"])
    result(got == sorted((b, i) for b in ("sha256", "sm3_256") for i in range(16) if i != 10),
           "comparison lists every compared PCR of both banks, all matching", doc and doc.get("comparison"))
    doc = check_output("log --json --pcrs MISSING (error without offset)",
                       run("log", "--json", "--pcrs", os.path.join(tmp, "nope"), log), LOG, (2,))
    result(doc is not None and doc["events"] == [] and "offset" not in doc["error"],
           "a missing --pcrs file: error object, no events decoded", doc)


# ---- mshim-log-diff/1 ------------------------------------------------------

def diffs():
    logs = sorted(f for f in glob.glob(os.path.join(DATA, "*.bin")) if os.path.getsize(f) > 64)
    n = 0
    pairs = [(logs[i], logs[j]) for i in range(len(logs)) for j in (i, (i + 1) % len(logs))]
    for (a, b), p in zip(pairs, runs([("log", "diff", "--json", a, b) for a, b in pairs])):
        if p.returncode == 2 and "share no PCR bank" in p.stderr:
            continue
        n += 1
        check_output(f"log diff --json {os.path.basename(a)} {os.path.basename(b)}", p, DIFF, (0, 1))
    result(n >= len(logs), f"{n} log diffs validated")
    ev = tb.sample_events()
    forged = list(ev)
    forged[0] = (0, tb.EV_EFI_ACTION, b"Calling something else entirely", {b: tb.digest(b, ev[0][2]) for b in tb.ALGS})
    fa, fb = os.path.join(tmp, "da.bin"), os.path.join(tmp, "db.bin")
    open(fa, "wb").write(tb.build(["sha1", "sha256"], ev))
    open(fb, "wb").write(tb.build(["sha256", "sm3_256"], forged))
    check_output("log diff --json with a forged payload and different bank sets",
                 run("log", "diff", "--json", fa, fb), DIFF, (1,))


# ---- mshim-vars/1 ----------------------------------------------------------

def stores():
    found = [f for f in (f"{OVMF}/OVMF_VARS_4M.fd", f"{OVMF}/OVMF_VARS_4M.ms.fd") if os.path.exists(f)]
    result(len(found) == 2, "Debian's OVMF variable stores are there", found)
    for f in found:
        check_output(f"vars list --json {os.path.basename(f)}", run("vars", "list", "--json", f), VARS)
    if not found:
        return
    key, pem = os.path.join(tmp, "k.pem"), os.path.join(tmp, "c.pem")
    subprocess.run(["openssl", "req", "-new", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=schema-test/",
                    "-days", "30", "-keyout", key, "-out", pem], capture_output=True, check=True)
    en, mok = os.path.join(tmp, "en.fd"), os.path.join(tmp, "mok.fd")
    p = run("vars", "enroll", found[0], "--pk", pem, "--kek", pem, "--db", pem, "--dbx-hash", "ab" * 32,
            "--secure-boot", "-o", en)
    result(p.returncode == 0, "vars enroll for the store test", p.stderr)
    check_output("vars list --json of an enrolled store", run("vars", "list", "--json", en), VARS)
    p = run("vars", "add-mok", found[0], "--cert", pem, "-o", mok)
    result(p.returncode == 0, "vars add-mok for the store test", p.stderr)
    check_output("vars list --json of a MOK store", run("vars", "list", "--json", mok), VARS)


# ---- the schemas catch drift ----------------------------------------------

def drift():
    """Outputs edited the ways a careless change to the code would: each
    must fail validation, or the schema is too loose to guard anything."""
    doc = json.loads(run("log", "--json", os.path.join(DATA, "keylime-binary_bios_measurements.bin")).stdout)

    def first(pred):
        return next(e for e in doc["events"] if pred(e))
    loc = first(lambda e: "startup_locality" in e["payload"])["number"]
    sep = first(lambda e: e["type_id"] == tb.EV_SEPARATOR)["number"]
    img = first(lambda e: "image_location" in e["payload"])["number"]
    cases = {
        "a top-level member removed": lambda d: d.pop("pcrs"),
        "an unknown top-level member": lambda d: d.update(extra=1),
        "mshim_version missing": lambda d: d.pop("mshim_version"),
        "startup_locality renamed": lambda d: d["events"][loc]["payload"].update(
            locality=d["events"][loc]["payload"].pop("startup_locality")),
        "an unknown payload member": lambda d: d["events"][img]["payload"].update(image_path="x"),
        "a payload member removed": lambda d: d["events"][img]["payload"].pop("image_length"),
        "a number as a string": lambda d: d["events"][sep]["payload"].update(value="0"),
        "a digest of the wrong size": lambda d: d["events"][sep]["digests"].update(sha256="00" * 20),
        "upper-case hex": lambda d: d["events"][sep]["digests"].update(
            sha256=d["events"][sep]["digests"]["sha256"].upper()),
        "PCR 24 in pcrs": lambda d: d["pcrs"]["sha256"].update({"24": "00" * 32}),
        "an unknown integrity verdict": lambda d: d["events"][sep].update(integrity="maybe"),
        "an unknown event member": lambda d: d["events"][sep].update(pcr_index=0),
    }
    for name, edit in cases.items():
        d = copy.deepcopy(doc)
        edit(d)
        result(errors(LOG, d) != [], f"mshim-log/1 rejects {name}")
    logs = [os.path.join(DATA, n) for n in ("tpm2-tools-event-arch-linux.bin", "tpm2-tools-event-bootorder.bin")]
    d0 = json.loads(run("log", "diff", "--json", *logs).stdout)
    pcr = next(iter(d0["pcrs"]))
    for name, edit in {
        "banks missing": lambda d: d.pop("banks"),
        "identical true with changes": lambda d: d.update(identical=True),
        "a change without its event": lambda d: d["pcrs"][pcr][0].pop("b" if "b" in d["pcrs"][pcr][0] else "a"),
        "an unknown change kind": lambda d: d["pcrs"][pcr][0].update(change="moved"),
    }.items():
        d = copy.deepcopy(d0)
        edit(d)
        result(errors(DIFF, d) != [], f"mshim-log-diff/1 rejects {name}")
    d = json.loads(run("vars", "list", "--json", f"{OVMF}/OVMF_VARS_4M.ms.fd").stdout)
    d["variables"][0]["fingerprint"] = "x"
    result(errors(VARS, d) != [], "mshim-vars/1 rejects an unknown variable member")


def status():
    """mshim status --json: nothing there, then Secure Boot variables and
    a Boot#### with a file path (efivarfs files: attributes, then data)."""
    root = os.path.join(tmp, "status-root")
    ev = os.path.join(root, "efivars")
    os.makedirs(ev)
    check_output("status --json, an empty root", run("status", "--json", "--root", root, "--efivars", ev), STATUS)
    g = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
    def put(name, data):
        with open(os.path.join(ev, f"{name}-{g}"), "wb") as f:
            f.write(b"\x07\x00\x00\x00" + data)
    name = "\\EFI\\mshim\\mshimx64.efi\0".encode("utf-16-le")
    dp = bytes([4, 4]) + (4 + len(name)).to_bytes(2, "little") + name + bytes([0x7F, 0xFF, 4, 0])
    put("Boot0003", (1).to_bytes(4, "little") + len(dp).to_bytes(2, "little") + "mshim\0".encode("utf-16-le") + dp)
    put("BootOrder", b"\x03\x00\x01\x00")
    put("BootNext", b"\x03\x00")
    put("SecureBoot", b"\x00")
    put("SetupMode", b"\x01")
    put("Boot0001", b"\x01\x00")  # malformed: reported as unreadable
    doc = check_output("status --json, Secure Boot off, Setup Mode, a Boot####",
                       run("status", "--json", "--root", root, "--efivars", ev), STATUS)
    result(doc is not None and doc["firmware"]["secure_boot"] is False and doc["firmware"]["setup_mode"] is True
           and doc["firmware"]["entries"][0]["path"] == "\\EFI\\mshim\\mshimx64.efi"
           and doc["firmware"]["entries"][1]["label"] is None, "status --json reports the variables as set", doc)


def plan():
    """mshim predict --list-entries --json: an entry, a broken one and
    loader.conf's default; then no usable entry (chainload)."""
    esp = os.path.join(tmp, "plan-esp")
    ent = os.path.join(esp, "loader", "entries")
    os.makedirs(ent)
    for name, text in (("a.conf", "title A\nlinux /vmlinuz\n"), ("b.conf", "title B\nlinux /vmlinuz\n"),
                       ("bad.conf", "no such key\n")):
        with open(os.path.join(ent, name), "w") as f:
            f.write(text)
    with open(os.path.join(esp, "loader", "loader.conf"), "w") as f:
        f.write("default b\n")
    args = ("predict", "--list-entries", "--esp", esp, "--oneshot", "", "--default", "", "--json")
    doc = check_output("predict --list-entries --json", run(*args), PLAN)
    result(doc is not None and (doc["default_from"], doc["boot"], doc["unusable"]) ==
           ("loader.conf", ["b.conf", "a.conf"], ["bad.conf"]), "predict --list-entries --json: the plan", doc)
    for name in ("a.conf", "b.conf"):
        os.remove(os.path.join(ent, name))
    doc = check_output("predict --list-entries --json, no usable entry", run(*args), PLAN)
    result(doc is not None and doc["chainload"] is True and "default_from" not in doc,
           "predict --list-entries --json: chainload, no default_from", doc)


def documented():
    """Every member name the schemas allow is named in the prose docs, so
    neither can grow without the other."""
    prose = open("docs/log-json.md").read() + open("docs/VARS.md").read() + open("docs/predict.md").read() + \
        open("docs/SEALING.md").read() + open("docs/ATTESTATION.md").read() + open("docs/UPGRADES.md").read()
    names = set()

    def walk(o):
        if isinstance(o, dict):
            names.update(o.get("properties", {}).keys())
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    for s in SCHEMAS.values():
        walk(s)
    # Named inside a `code span`, alone or in a list like `{alg_id, alg}`.
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)
    words = {w for span in re.findall(r"`([^`\n]+)`", prose) for w in re.findall(r"[A-Za-z0-9_]+", span)}
    missing = sorted(names - words)
    result(not missing, f"all {len(names)} members the schemas allow are documented", missing)


if len(sys.argv) == 4 and sys.argv[1] == "--validate":
    validate_file("urn:mshim:schema:" + sys.argv[2], sys.argv[3])
try:
    schema_checks()
    log_corpus()
    log_mutants()
    log_other_outputs()
    diffs()
    stores()
    drift()
    status()
    plan()
    documented()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if result.failed else 0)
