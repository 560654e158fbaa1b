#!/usr/bin/env python3
"""Measures `git sage screen` on data its tables were NOT tuned on, split into halves:

  dev    half: tuning allowed (its files may be listed and read);
  report half: never tuned on, never listed; the figures the targets are judged on.

Each set is split by a hash of a key that keeps related samples together:
  1. BenchmarkPython (OWASP): testcode/BenchmarkTestNNNNN.py, labelled by expectedresults-0.1.csv;
     true = insecure positive with its CWE, false = the set's own negative. Key: the test's name.
  2. SVEN (eth-sri): Python functions before (positive) and after (paired negative) a CVE fix.
     Key: the fix's commit (functions of one commit stay in one half). Functions of test files
     (test_*.py, *_test.py, tests/, testing/, conftest.py) are left out: a fix's regression
     test is changed by the fix but is not the vulnerable code (seen in the dev half: isort's
     test_isort.py functions labelled CWE-78). Besides the per-function figures, each fix counts
     once: caught when one of its functions is flagged.
  3. Semgrep rule tests: python/**/X.py next to a rule X.yaml listing CWE-918, -327 or -798;
     a positive when it has a `# ruleid:` line. Key: the file's path.
  4. Negative control, ordinary reviewed code: pip's src/pip/ (without _vendor/), requests,
     Flask's and Click's src/ are the dev half (their flagged files were read while tuning), joined
     on 2026-12-04 by Werkzeug's and Jinja's src/, Tornado's tornado/ (without test/) and httpx,
     and on 2026-12-06 by aiohttp, urllib3, gunicorn, coverage.py, paramiko, pluggy, Scrapy
     (built on Twisted), pyftpdlib, aiosmtpd, tox, pytest-xdist and Hypothesis (network servers
     and clients, protocol code, a test tool's plumbing: the kinds of code the report half holds;
     their tests left out);
     pytest's src/ and Twisted's src/twisted/ (without its tests) are the report half.
With --dev also CyberSecEval (PurpleLlama) Python origin_code snippets, all development.

Every source is read from a bare mirror ($SAGE_MIRROR/OWNER+NAME/repo, default /work/.mirror) at
a pinned commit, or, when the mirror lacks it, from a blobless clone in WORK_DIR/cache; a set
whose source cannot be had is printed as "skipped". Each set becomes a throw-away repository
(base: a README, tip: the samples as samples/CWE-N_<id>.py) screened once per CWE with
`--cwe N -- samples/CWE-N_*` and once without a CWE, as bench/securityeval.py does. A file is
flagged when l2.flagged or l3.flagged (an absent layer counts as not flagged).

Prints one table per set and half and a pooled block per half with the targets; writes every
figure and each file's flagged booleans to WORK_DIR/heldout.json so two runs can be diffed.

With --fresh also a fresh held-out set, never tuned on, measured once (bench/advisories.py): the
functions that the fix commits of the PyPA advisory database changed, before (vulnerable) and after
(fixed); every figure is printed beside the fixed versions' flag rate, per CWE, and per fix.

usage: heldout.py BIN WORK_DIR [--dev] [--only-dev] [--fresh] [--list SET]
  --only-dev: screen and print the dev half alone (a tuning loop that never sees the report half)
  SET: benchmarkpython, sven, semgrep, control, cyberseceval (lists the dev half only)"""
import csv
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import time

try:
    import yaml  # optional: the Semgrep rules' metadata; a regex on CWE-NNN otherwise
except ImportError:
    yaml = None

# Pinned so that a run is repeatable and cannot drift onto data seen while tuning.
PINS = {
    "benchmarkpython": ("OWASP-Benchmark/BenchmarkPython", "7cf0674b9a33788ac3105e4c4a75a7fdce4c44bd"),
    "sven": ("eth-sri/sven", "e8449a0d54a5ae0bbdc6bb236330b8c7ec71df57"),
    "semgrep": ("semgrep/semgrep-rules", "157ae4706d7f54aa33647332f234dd68f30da195"),
    "pip": ("pypa/pip", "6d309205789d368b2749d93fd6193d584811efd5"),
    "requests": ("psf/requests", "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e"),
    "pytest": ("pytest-dev/pytest", "df87db7b0462fb764ef73fa00561adf8ad047572"),
    "twisted": ("twisted/twisted", "64661601a1e492a9448ac1011deb9cd9467a9e30"),
    "flask": ("pallets/flask", "2ac89889f4cc330eabd50f295dcef02828522c69"),
    "click": ("pallets/click", "2c8cd3ac958a7eb316d67f2d316c27086c4c0369"),
    "werkzeug": ("pallets/werkzeug", "1b00618e787f40dfb21eba29caf8f8be7c8e1d93"),
    "tornado": ("tornadoweb/tornado", "e530031405e2154654dedc4c84d5656b557ea310"),
    "jinja": ("pallets/jinja", "5ef70112a1ff19c05324ff889dd30405b1002044"),
    "httpx": ("encode/httpx", "ae1b9f66238f75ced3ced5e4485408435de10768"),
    "aiohttp": ("aio-libs/aiohttp", "495e778360d1924da63e16dba0f0d76baf56a56a"),
    "urllib3": ("urllib3/urllib3", "6a8536b6e1b0cbe69ae801337c599951e527ae29"),
    "gunicorn": ("benoitc/gunicorn", "65ac1a3a4c0aa00960968c720d6e6bd2ac32f1b9"),
    "coverage": ("nedbat/coveragepy", "210ade2b3bed97c089ba29255c9a342c5b7aee14"),
    "paramiko": ("paramiko/paramiko", "8697158113a3eab25ed1d1d541ebe2cad10169a7"),
    "pluggy": ("pytest-dev/pluggy", "e382e72789f8d791991c489d4322aa04e660b952"),
    "scrapy": ("scrapy/scrapy", "11079cb1c85b9e75a39a7269943c69d1a975d485"),
    "pyftpdlib": ("giampaolo/pyftpdlib", "9167dea23607bfb599abc339641a4e4dea0ee712"),
    "aiosmtpd": ("aio-libs/aiosmtpd", "44c0159d77719ffc38696f166b49c5edc013560a"),
    "tox": ("tox-dev/tox", "ccb12fc2e1bb9df0da860be4af175e9b97949fbc"),
    "xdist": ("pytest-dev/pytest-xdist", "f63b6a25b4eb932385c6ee4651eac5c08fbd3a20"),
    "hypothesis": ("HypothesisWorks/hypothesis", "41004301f02bcb35b7953518ed16705c4cf0211c"),
    "cyberseceval": ("meta-llama/PurpleLlama", "4be64c3a24442b51c76175e6ec67722cc3f5fe38"),
}
HELD_OUT = ["benchmarkpython", "sven", "semgrep"]  # the positive sets pooled in "overall"
TITLES = {"benchmarkpython": "BenchmarkPython (OWASP)", "sven": "SVEN (CVE fixes, before/after)",
          "semgrep": "Semgrep rule tests (CWE-918/327/798)",
          "control": "Negative control (dev: pip, requests, flask, click, werkzeug, tornado, jinja, httpx,"
                     " aiohttp, urllib3, gunicorn, coverage, paramiko, pluggy, scrapy, pyftpdlib, aiosmtpd, tox, xdist,"
                     " hypothesis; report: pytest, twisted)",
          "cyberseceval": "CyberSecEval (PurpleLlama)",
          "advisories": "PyPA advisories' fix commits (before/after), fresh"}
SEMGREP_CWES = (918, 327, 798)
TARGETS = {"with": 75.0, "without": 50.0, "ordinary": 5.0}
DEFAULT_THRESHOLD = 10.0  # git sage screen's default (src/screen/mod.rs DEFAULT_THRESHOLD)
SWEEP = (6, 8, 10, 12, 14, 15, 16, 18, 20, 22, 25, 30)

args = sys.argv[1:]
if len(args) < 2 or args[0].startswith("-") or args[1].startswith("-"):
    sys.exit(__doc__)
bin_, work = os.path.abspath(args[0]), os.path.abspath(args[1])
dev = "--dev" in args
only_dev = "--only-dev" in args
fresh = "--fresh" in args
list_set = args[args.index("--list") + 1] if "--list" in args and args.index("--list") + 1 < len(args) else None
if "--list" in args and list_set not in TITLES:
    sys.exit(f"--list takes one of: {', '.join(TITLES)}")
mirror_root = os.environ.get("SAGE_MIRROR", "/work/.mirror")
os.makedirs(work, exist_ok=True)


class Skip(Exception):
    """A set that cannot be measured here (source absent, screen failed): printed, then go on."""


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


# --- sources --------------------------------------------------------------------------------

class Source:
    """Files of one GitHub repository at one pinned commit, from the mirror or a blobless clone."""

    def __init__(self, key):
        self.slug, self.commit = PINS[key]
        name = self.slug.replace("/", "+")
        self.git_dir = os.path.join(mirror_root, name, "repo")
        if not self.has_commit():
            self.git_dir = self.clone(os.path.join(work, "cache", name))

    def has_commit(self):
        return os.path.isdir(self.git_dir) and run(
            ["git", "--git-dir", self.git_dir, "cat-file", "-e", self.commit + "^{commit}"]).returncode == 0

    def clone(self, into):
        git_dir = os.path.join(into, ".git")
        if not os.path.isdir(git_dir):
            r = run(["git", "clone", "-q", "--filter=blob:none", "--no-checkout",
                     f"https://github.com/{self.slug}", into], text=True, timeout=1800)
            if r.returncode != 0:
                raise Skip(f"no mirror of {self.slug} and clone failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
        self.git_dir = git_dir
        if not self.has_commit():  # a pinned commit off the default branch
            run(["git", "-C", into, "fetch", "-q", "origin", self.commit], timeout=1800)
        # Checking out fetches the commit's blobs in one go, so `git show` below stays local.
        r = run(["git", "-C", into, "checkout", "-q", "--detach", self.commit], text=True, timeout=1800)
        if r.returncode != 0:
            raise Skip(f"{self.slug}@{self.commit[:12]} not available: {r.stderr.strip()[-200:]}")
        return git_dir

    def ls(self, prefix):
        out = run(["git", "--git-dir", self.git_dir, "ls-tree", "-r", "--name-only", self.commit, "--", prefix],
                  text=True, check=True).stdout
        return out.splitlines()

    def show(self, path):
        """The file's bytes (bytes, not text: a sample is written back exactly as stored)."""
        return run(["git", "--git-dir", self.git_dir, "show", f"{self.commit}:{path}"], check=True).stdout

    def text(self, path):
        return self.show(path).decode("utf-8", "replace")


HALVES = ("dev", "report")
CONTROL_HALF = {"pip": "dev", "requests": "dev", "flask": "dev", "click": "dev", "werkzeug": "dev",
                "tornado": "dev", "jinja": "dev", "httpx": "dev", "aiohttp": "dev", "urllib3": "dev",
                "gunicorn": "dev", "coverage": "dev", "paramiko": "dev", "pluggy": "dev", "scrapy": "dev",
                "pyftpdlib": "dev", "aiosmtpd": "dev", "tox": "dev", "xdist": "dev", "hypothesis": "dev",
                "pytest": "report",
                "twisted": "report"}


def half_of(key):
    """'dev' or 'report', fixed by the key's hash: the same split in every run and on every machine."""
    return HALVES[hashlib.sha256(key.encode("utf-8")).digest()[0] & 1]


def sample(path, cwe, label, data, origin, half, **extra):
    """One file to screen: its path in the throw-away repo, task CWE, 'pos' or 'neg', content."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return dict(path=path, cwe=cwe, label=label, data=data, origin=origin, half=half, **extra)


def load_benchmarkpython():
    src = Source("benchmarkpython")
    labels = {}
    for row in csv.reader(io.StringIO(src.text("expectedresults-0.1.csv"))):
        if row and not row[0].startswith("#"):
            labels[row[0].strip()] = (row[2].strip() == "true", int(row[3]))
    samples = []
    for p in src.ls("testcode"):
        m = re.fullmatch(r"testcode/(BenchmarkTest\d+)\.py", p)
        if m and m.group(1) in labels:
            real, cwe = labels[m.group(1)]
            samples.append(sample(f"samples/CWE-{cwe}_{m.group(1)}.py", cwe, "pos" if real else "neg",
                                  src.show(p), p, half_of(m.group(1))))
    # The tests import their app's helpers (helpers.utils, …) and declared packages (flask, …):
    # the base holds them, unchanged, so L1 resolves those imports and only the tests are screened.
    context = {p: src.show(p) for p in src.ls("helpers") if p.endswith(".py")}
    context["requirements.txt"] = src.show("requirements.txt")
    return samples, context, src


TEST_FILE = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_tests?\.py$|(^|/)conftest\.py$")
sven_tests_left_out = {"dev": 0, "report": 0}


def load_sven():
    src = Source("sven")
    samples = []
    for p in sorted(src.ls("data_train_val")):
        m = re.fullmatch(r"data_train_val/(train|val)/cwe-(\d+)\.jsonl", p)
        if not m:
            continue
        split, cwe = m.group(1), int(m.group(2))
        recs = [json.loads(line) for line in src.text(p).splitlines() if line.strip()]
        # SVEN has no language field: the record's file_name says which are Python.
        py = [r for r in recs if r["file_name"].endswith(".py")]
        for i, r in enumerate(py):
            if TEST_FILE.search(r["file_name"]):
                sven_tests_left_out[half_of(r["commit_link"])] += 1
                continue
            pid = f"{split}{i:03d}"
            origin = f"{p}#{i} {r['commit_link']} {r['file_name']}:{r['func_name']}"
            # Methods come indented as in their class; dedented, each function is a module of its own.
            for label, key, tag in (("pos", "func_src_before", "before"), ("neg", "func_src_after", "after")):
                samples.append(sample(f"samples/CWE-{cwe}_{pid}_{tag}.py", cwe, label,
                                      textwrap.dedent(r[key]).rstrip("\n") + "\n", origin,
                                      half_of(r["commit_link"]), pair=f"{cwe}-{pid}", fix=r["commit_link"]))
    return samples, {}, src


def rule_cwes(text):
    """The CWE numbers a Semgrep rule file's metadata lists, in order."""
    found = []
    if yaml is not None:
        try:
            for rule in (yaml.safe_load(text) or {}).get("rules", []):
                cwe = (rule.get("metadata") or {}).get("cwe") or []
                for entry in [cwe] if isinstance(cwe, str) else cwe:
                    found += [int(n) for n in re.findall(r"CWE-(\d+)", str(entry))]
            return found
        except yaml.YAMLError:
            pass  # fall back to the regex, which reads the same metadata lines
    return [int(n) for n in re.findall(r"CWE-(\d+)", text)]


def load_semgrep():
    src = Source("semgrep")
    paths = set(src.ls("python"))
    samples = []
    for p in sorted(paths):
        if not p.endswith(".py") or p[:-3] + ".yaml" not in paths:
            continue
        hits = [c for c in rule_cwes(src.text(p[:-3] + ".yaml")) if c in SEMGREP_CWES]
        if not hits:
            continue
        data = src.show(p)
        if re.search(rb"^\s*#\s*ruleid:", data, re.M):  # no ruleid line: nothing insecure to find
            sid = p[len("python/"):-3].replace("/", "__")
            samples.append(sample(f"samples/CWE-{hits[0]}_{sid}.py", hits[0], "pos", data, p, half_of(p)))
    return samples, {}, src


def load_control():
    samples, sources = [], []
    for key, roots, skip in (("pip", ["src/pip/"], "src/pip/_vendor/"), ("requests", ["src/requests/", "requests/"], None),
                             ("flask", ["src/flask/"], None), ("click", ["src/click/"], None),
                             ("werkzeug", ["src/werkzeug/"], None), ("tornado", ["tornado/"], "/test/"),
                             ("jinja", ["src/jinja2/"], None), ("httpx", ["httpx/"], None),
                             ("aiohttp", ["aiohttp/"], None), ("urllib3", ["src/urllib3/"], None),
                             ("gunicorn", ["gunicorn/"], None), ("coverage", ["coverage/"], None),
                             ("paramiko", ["paramiko/"], None), ("pluggy", ["src/pluggy/"], None),
                             ("scrapy", ["scrapy/"], None), ("pyftpdlib", ["pyftpdlib/"], "/test"),
                             ("aiosmtpd", ["aiosmtpd/"], "/test"), ("tox", ["src/tox/"], None),
                             ("xdist", ["src/xdist/"], None), ("hypothesis", ["hypothesis/src/hypothesis/"], None),
                             ("pytest", ["src/"], None), ("twisted", ["src/twisted/"], "/test/")):
        src = Source(key)
        sources.append(src)
        for root in roots:
            files = [p for p in src.ls(root) if p.endswith(".py") and not (skip and skip in p)]
            if files:  # requests moved to src/ once; take whichever layout the commit has
                samples += [sample(f"{key}/{p}", None, "neg", src.show(p), f"{key}:{p}", CONTROL_HALF[key],
                                   project=key) for p in files]
                break
    return samples, {}, sources


def load_cyberseceval():
    src = Source("cyberseceval")
    samples, seen = [], set()
    base = "CybersecurityBenchmarks/datasets/"
    names = [p for p in src.ls(base) if re.search(r"/(autocomplete|instruct)/[^/]*\.json$", p)]
    for p in sorted(names):
        tag = os.path.basename(p)[:-5]
        for e in json.loads(src.text(p)):
            if e.get("language") != "python":
                continue
            m = re.search(r"(\d+)", str(e.get("cwe_identifier", "")))
            code = e.get("origin_code") or ""
            # autocomplete and instruct share the same snippets: each counts once
            if not m or not code.strip() or (code, m.group(1)) in seen:
                continue
            seen.add((code, m.group(1)))
            cwe = int(m.group(1))
            samples.append(sample(f"samples/CWE-{cwe}_{tag}-{e['prompt_id']}.py", cwe, "pos",
                                  textwrap.dedent(code).rstrip("\n") + "\n",
                                  f"{p}#{e['prompt_id']} {e.get('repo', '')}/{e.get('file_path', '')}", "dev"))
    return samples, {}, src


def load_advisories():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import advisories
    if yaml is None:
        raise Skip("needs PyYAML to read the advisories")
    # Fixes SVEN has are development data already; the control's projects were read while tuning.
    sven = Source("sven")
    known = {}
    for p in sven.ls("data_train_val"):
        if p.endswith(".jsonl"):
            for line in sven.text(p).splitlines():
                m = line.strip() and re.search(r"github\.com/([^/]+/[^/]+)/commit/([0-9a-f]+)",
                                               json.loads(line)["commit_link"])
                if m:
                    known.setdefault(m.group(1).lower(), set()).add(m.group(2))
    read = [PINS[k][0] for k in CONTROL_HALF] + ["gzpan123/pip"]  # a fork of pip
    try:
        samples, left_out = advisories.load(mirror_root, yaml, read, known, TEST_FILE, sample)
    except FileNotFoundError as e:
        raise Skip(str(e))
    advisories_left_out.update(left_out)
    src = Source.__new__(Source)
    src.slug, src.commit = advisories.ADVISORY_DB
    return samples, {}, src


advisories_left_out = {}
LOADERS = {"benchmarkpython": load_benchmarkpython, "sven": load_sven, "semgrep": load_semgrep,
           "control": load_control, "cyberseceval": load_cyberseceval, "advisories": load_advisories}


# --- repositories and screening -------------------------------------------------------------

def git(repo, *a):
    env = dict(os.environ, GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.com")
    subprocess.run(["git", "-C", repo, *a], env=env, check=True, capture_output=True)


def write(repo, files):
    for path, data in files.items():
        p = os.path.join(repo, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)


def build(name, samples, context):
    """Base: a README (and the context the samples import); tip: the samples."""
    repo = os.path.join(work, "repos", name)
    subprocess.run(["rm", "-rf", repo], check=True)
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"README.md": f"# {name}\nThrow-away repository of bench/heldout.py.\n".encode(), **context})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    write(repo, {s["path"]: s["data"] for s in samples})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "samples")
    return repo


bandit_status = {}


def screen(repo, extra):
    """One `git sage screen` run; its files by path."""
    r = run([bin_, "-C", repo, "screen", "HEAD", "--base", "HEAD~1", "--format", "json", "-q", *extra], text=True)
    if r.returncode != 0:
        raise Skip(f"git sage screen {' '.join(extra)} failed: {r.stderr.strip()[-300:]}")
    doc = json.loads(r.stdout)
    bandit_status[f"{doc['bandit']['status']} ({doc['bandit'].get('detail', '')})"] = True
    return {f["path"]: f for f in doc["files"] if f["status"] != "deleted"}


def flagged(f):
    return bool(f and (f.get("l2", {}).get("flagged") or f.get("l3", {}).get("flagged")))


def raw(f):
    """(L2 flagged, L3 grounded, R) of a file screened at threshold 0: flagged at threshold T
    when L2 flags it or it is grounded with R >= T."""
    if f is None:
        return (False, False, 0.0)
    l3 = f.get("l3", {})
    return (bool(f.get("l2", {}).get("flagged")), bool(l3.get("flagged")), float(l3.get("score") or 0.0))


def flagged_at(r, threshold):
    l2, grounded, score = r
    return l2 or (grounded and score >= threshold)


def summary(f, threshold=None):
    """What a file's report says, kept per file in heldout.json and for --list; `threshold`:
    the report was made at threshold 0 and L3 flags at this one."""
    if f is None:  # screen did not report it: counted as not flagged
        return dict(missing=True, flagged=False)
    l3 = f.get("l3", {})
    l3_flag = bool(l3.get("flagged")) and (threshold is None or (l3.get("score") or 0) >= threshold)
    return dict(flagged=bool(f.get("l2", {}).get("flagged")) or l3_flag, l0=bool(f.get("l0", {}).get("ok")),
                l0_error=f.get("l0", {}).get("error"), l2=bool(f.get("l2", {}).get("flagged")),
                l3=l3_flag, score=l3.get("score"),
                sinks=[h["id"] for h in l3.get("sinks", [])], candidate=bool(f.get("candidate")))


def screen_set(name, samples, context, cwes_for_all):
    """Per file: the report with its task CWE, without CWE, and (control) with each CWE."""
    repo = build(name, samples, context)
    by_cwe = {}
    for cwe in sorted({s["cwe"] for s in samples if s["cwe"] is not None}):
        by_cwe.update(screen(repo, ["--cwe", str(cwe), "--", f"samples/CWE-{cwe}_*"]))
    # Without a CWE at threshold 0, so that L3's flag is whether a sink grounds the file and
    # any threshold can be applied afterwards (the dev half's sweep; see calibrate()).
    plain = screen(repo, ["--threshold", "0"])
    # The negative control has no task: it is screened whole under each CWE the positives have,
    # the false-alarm rate a team would see whichever task the agent had.
    every = {cwe: screen(repo, ["--cwe", str(cwe)]) for cwe in cwes_for_all}
    for s in samples:
        s["with"] = summary(by_cwe.get(s["path"])) if s["cwe"] is not None else None
        s["raw"] = raw(plain.get(s["path"]))
        s["without"] = summary(plain.get(s["path"]), DEFAULT_THRESHOLD)
        s["every"] = {c: flagged(doc.get(s["path"])) for c, doc in every.items()}


# --- figures --------------------------------------------------------------------------------

def pct(k, n):
    return 100.0 * k / n if n else 0.0


def cell(k, n):
    return f"{k:>4} {pct(k, n):>3.0f}%" if n else f"{'–':>9}"


def pos_figures(group):
    n = len(group)
    return dict(n=n,
                l0=sum(s["with"]["l0"] if not s["with"].get("missing") else 0 for s in group),
                with_cwe=sum(s["with"]["flagged"] for s in group),
                without=sum(s["without"]["flagged"] for s in group),
                l3_only=sum(s["with"].get("l3", False) and not s["with"].get("l2", False) for s in group),
                candidates=sum(s["with"].get("candidate", False) for s in group))


def print_pos_table(samples):
    print(f"  {'positives':12} {'n':>5} {'L0 pass':>9} {'flag CWE':>9} {'flag none':>9} {'L3-only':>9} {'cand.':>9}")
    rows = {}
    cwes = sorted({s["cwe"] for s in samples})
    for key, group in [(f"CWE-{c}", [s for s in samples if s["cwe"] == c]) for c in cwes] + [("all", samples)]:
        fig = rows[key] = pos_figures(group)
        n = fig["n"]
        print(f"  {key:12} {n:>5} " + " ".join(cell(fig[k], n) for k in ("l0", "with_cwe", "without", "l3_only", "candidates")))
    return rows


def print_pair_table(pos, neg):
    """Vulnerable beside fixed or safe code of the same CWE: a rule that flags both tells nothing."""
    print(f"  {'vulnerable vs safe':12} {'n vuln':>6} {'flag CWE':>9} {'n safe':>6} {'flag CWE':>9}"
          f" {'vuln none':>9} {'safe none':>9}")
    rows = {}
    cwes = sorted({s["cwe"] for s in pos + neg})
    for key, p, n in [(f"CWE-{c}", [s for s in pos if s["cwe"] == c], [s for s in neg if s["cwe"] == c])
                      for c in cwes] + [("all", pos, neg)]:
        fig = rows[key] = dict(n_vulnerable=len(p), vulnerable_with_cwe=sum(s["with"]["flagged"] for s in p),
                               n_safe=len(n), safe_with_cwe=sum(s["with"]["flagged"] for s in n),
                               vulnerable_without=sum(s["without"]["flagged"] for s in p),
                               safe_without=sum(s["without"]["flagged"] for s in n))
        print(f"  {key:12} {len(p):>6} {cell(fig['vulnerable_with_cwe'], len(p))} {len(n):>6}"
              f" {cell(fig['safe_with_cwe'], len(n))} {cell(fig['vulnerable_without'], len(p))}"
              f" {cell(fig['safe_without'], len(n))}")
    return rows


def control_figures(group, cwes):
    n = len(group)
    per = {c: sum(s["every"][c] for s in group) for c in cwes}
    worst = max(per, key=per.get) if per else None
    return dict(n=n, without=sum(s["without"]["flagged"] for s in group),
                with_mean_pct=sum(pct(k, n) for k in per.values()) / len(per) if per else None,
                with_max_pct=pct(per[worst], n) if per else None, with_max_cwe=worst,
                with_94=per.get(94), per_cwe=per)


def print_control_table(samples, cwes):
    print(f"  {'negatives':12} {'n':>5} {'flag none':>9} {'CWE mean':>9} {'CWE max':>15} {'--cwe 94':>9}")
    rows = {}
    projects = sorted({s["project"] for s in samples}, key=list(CONTROL_HALF).index)
    for key, group in [(p, [s for s in samples if s["project"] == p]) for p in projects] + [("all", samples)]:
        f = rows[key] = control_figures(group, cwes)
        n = f["n"]
        mean = f"{f['with_mean_pct']:>8.1f}%" if f["with_mean_pct"] is not None else f"{'–':>9}"
        mx = f"{f['with_max_pct']:>5.1f}% (CWE-{f['with_max_cwe']})" if f["with_max_cwe"] else f"{'–':>15}"
        c94 = cell(f["with_94"], n) if f["with_94"] is not None else f"{'–':>9}"
        print(f"  {key:12} {n:>5} {cell(f['without'], n)} {mean} {mx:>15} {c94}")
    print(f"  (with CWE: the whole control screened under each of {len(cwes)} CWEs of the held-out positives)")
    return rows


def per_file(samples):
    out = {}
    for s in samples:
        d = dict(label=s["label"], cwe=s["cwe"], origin=s["origin"], half=s["half"],
                 flagged_without=s["without"]["flagged"])
        if s["with"] is not None:
            d["flagged_with_cwe"] = s["with"]["flagged"]
        if s["every"]:
            d["flagged_by_cwe"] = {str(c): v for c, v in s["every"].items()}
        out[s["path"]] = d
    return out


def list_files(name, samples):
    """The dev half's misses and false alarms; the report half is never listed, so that no one
    tunes on it by accident."""
    samples = [s for s in samples if s["half"] == "dev"]
    print(f"\n{TITLES[name]}, dev half (tuning allowed; the report half is not listed):"
          " positives not flagged with their task CWE, negatives flagged")

    def line(s, rep, note=""):
        print(f"  {s['label']} {s['path']}{note}: R {rep.get('score')} sinks {rep.get('sinks', [])}"
              f" L2 {rep.get('l2')} L0 {'ok' if rep.get('l0') else rep.get('l0_error')}  <- {s['origin']}")

    for s in samples:
        if s["label"] == "pos" and not s["with"]["flagged"]:
            line(s, s["with"])
        elif s["label"] == "neg" and s["with"] is not None and s["with"]["flagged"]:
            line(s, s["with"], " (with its CWE)")
        elif s["label"] == "neg" and s["with"] is None and (s["without"]["flagged"] or any(s["every"].values())):
            by = [c for c, v in s["every"].items() if v]
            line(s, s["without"], f" (no CWE: {s['without']['flagged']}; flagged under CWE {by})")


# --- main -----------------------------------------------------------------------------------

started = time.time()
names = HELD_OUT + ["control"] + (["cyberseceval"] if dev else []) + (["advisories"] if fresh else [])
loaded, report, skipped = {}, {"bin": bin_, "pins": {k: dict(repo=r, commit=c) for k, (r, c) in PINS.items()},
                               "sets": {}}, []
for name in names:
    try:
        samples, context, src = LOADERS[name]()
        if only_dev:
            samples = [s for s in samples if s["half"] == "dev"]
            if name == "advisories":
                raise Skip("a fresh set has no dev half")
        if not samples:
            raise Skip("no samples found at the pinned commit")
        loaded[name] = (samples, context, src)
    except (Skip, subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        skipped.append(name)
        print(f"skipped: {name} ({e})")

# The control runs under each CWE that the held-out positives have (dev CWEs stay out, so the
# held-out figure does not move with --dev).
positive_cwes = sorted({s["cwe"] for n in HELD_OUT if n in loaded for s in loaded[n][0] if s["label"] == "pos"})
for name in list(loaded):
    samples, context, _ = loaded[name]
    try:
        screen_set(name, samples, context, positive_cwes if name == "control" else [])
    except Skip as e:
        del loaded[name]
        skipped.append(name)
        print(f"skipped: {name} ({e})")

print(f"git sage screen: {bin_}")
print(f"Bandit: {', '.join(bandit_status) or 'not run'}")
print("flag CWE: flagged (L2 or L3) when screened with the task's CWE (--cwe N -- samples/CWE-N_*);"
      " flag none: one run without a CWE; L3-only: flagged by L3 and not L2, with the CWE;"
      " cand.: candidate (L0, L1 pass and flagged), with the CWE")


def section(heading, members):
    for name in members:
        if name not in loaded:
            continue
        samples, _, src = loaded[name]
        if heading in HALVES:
            samples = [s for s in samples if s["half"] == heading]
            if not samples:
                continue
        srcs = src if isinstance(src, list) else [src]
        pins = ", ".join(f"{s.slug}@{s.commit[:12]}" for s in srcs)
        print(f"\n== {TITLES[name]}, {heading} — {pins}")
        entry = report["sets"].setdefault(name, {})[heading] = dict(files=per_file(samples))
        pos = [s for s in samples if s["label"] == "pos"]
        neg = [s for s in samples if s["label"] == "neg"]
        if name == "control":
            entry["negatives"] = print_control_table(neg, positive_cwes)
            continue
        entry["positives"] = print_pos_table(pos)
        if neg:
            entry["vulnerable_vs_safe"] = print_pair_table(pos, neg)
        if name == "advisories":
            for reason, items in sorted(advisories_left_out.items()):
                print(f"  left out, {reason}: {len(items)}")
            entry["left_out"] = advisories_left_out
        if name in ("sven", "advisories"):
            pairs = {}
            for s in samples:
                pairs.setdefault(s["pair"], {})[s["label"]] = s["with"]["flagged"]
            # a function the fix deleted has no after: not a pair
            pairs = {k: p for k, p in pairs.items() if "pos" in p and "neg" in p}
            apart = sum(1 for p in pairs.values() if p["pos"] and not p["neg"])
            both = sum(1 for p in pairs.values() if p["pos"] and p["neg"])
            entry["pairs"] = dict(n=len(pairs), before_only=apart, both=both)
            fixes, caught = by_fix(samples, "pos")
            # A fix's safe side: its fixed functions, flagged when one of them is (as its vulnerable side).
            safe, clean = by_fix(samples, "neg")
            entry["fixes"] = dict(n=len(fixes), with_cwe=caught["with"], without=caught["without"],
                                  fixed_n=len(safe), fixed_flagged_with_cwe=clean["with"],
                                  fixed_flagged_without=clean["without"],
                                  test_functions_left_out=sven_tests_left_out.get(heading, 0))
            print(f"  fixes (each commit once, caught when one of its functions is flagged): {len(fixes)};"
                  f" with CWE {cell(caught['with'], len(fixes))}; without {cell(caught['without'], len(fixes))}")
            print(f"  fixed side of each fix (flagged when one of its fixed functions is): {len(safe)};"
                  f" with CWE {cell(clean['with'], len(safe))}; without {cell(clean['without'], len(safe))}")
            if name == "sven":
                print(f"  functions of test files left out: {sven_tests_left_out[heading]}")
            print(f"  pairs (with CWE): {len(pairs)}; before flagged and after not {cell(apart, len(pairs))};"
                  f" both flagged {cell(both, len(pairs))}")


def by_fix(samples, label):
    """The samples of one label grouped by fix, and per run (with/without a CWE) how many fixes
    have one of them flagged."""
    groups = {}
    for s in samples:
        if s["label"] == label:
            groups.setdefault(s["fix"], []).append(s)
    flagged_fixes = {k: sum(any(s[k]["flagged"] for s in group) for group in groups.values())
                     for k in ("with", "without")}
    return groups, flagged_fixes


def pooled(half, members):
    """The positives of the held-out sets and the control, pooled, against the targets."""
    pos = [s for n in members if n in loaded for s in loaded[n][0] if s["label"] == "pos" and s["half"] == half]
    print(f"\n== {half} half, pooled (positives of {', '.join(n for n in members if n in loaded) or 'no set'})")
    out = {}
    if pos:
        n = len(pos)
        w, wo = sum(s["with"]["flagged"] for s in pos), sum(s["without"]["flagged"] for s in pos)
        out.update(n=n, with_cwe=w, without=wo)
        print(f"  positives flagged with task CWE: {w}/{n} = {pct(w, n):.1f}%  (target ≥ {TARGETS['with']:.0f}%:"
              f" {'met' if pct(w, n) >= TARGETS['with'] else 'NOT met'})")
        print(f"  positives flagged without CWE:   {wo}/{n} = {pct(wo, n):.1f}%  (target ≥ {TARGETS['without']:.0f}%:"
              f" {'met' if pct(wo, n) >= TARGETS['without'] else 'NOT met'})")
    ctl = [s for s in loaded["control"][0] if s["half"] == half] if "control" in loaded else []
    if ctl:
        f = control_figures(ctl, positive_cwes)
        out["control"] = {k: v for k, v in f.items() if k != "per_cwe"}
        print(f"  ordinary code flagged, no CWE:   {f['without']}/{f['n']} = {pct(f['without'], f['n']):.1f}%  (target ≤"
              f" {TARGETS['ordinary']:.0f}%: {'met' if pct(f['without'], f['n']) <= TARGETS['ordinary'] else 'NOT met'})")
        if f["with_mean_pct"] is not None:
            print(f"  ordinary code flagged with a CWE: mean {f['with_mean_pct']:.1f}%, max {f['with_max_pct']:.1f}%"
                  f" (CWE-{f['with_max_cwe']})" + (f", --cwe 94 {pct(f['with_94'], f['n']):.1f}%" if f["with_94"] is not None else ""))
    return out


def calibrate():
    """The CWE-free threshold, set on the dev half alone: R >= T flags (with a grounding sink);
    the chosen T flags the most dev positives while the dev control stays within the
    ordinary-code target, and of thresholds that flag as many, it is the highest. The report
    half is not looked at here."""
    pos = [s for n in HELD_OUT if n in loaded for s in loaded[n][0] if s["label"] == "pos" and s["half"] == "dev"]
    ctl = [s for s in loaded["control"][0] if s["half"] == "dev"] if "control" in loaded else []
    if not pos or not ctl:
        return None
    print("\n== CWE-free calibration on the dev half (no task CWE; flagged: L2, or L3 grounded with R >= T)")
    print(f"  {'T':>4} {'positives':>16} {'ordinary code':>18}")
    rows, chosen = {}, None
    for t in SWEEP:
        p = sum(flagged_at(s["raw"], t) for s in pos)
        c = sum(flagged_at(s["raw"], t) for s in ctl)
        rows[t] = dict(positives=p, n_positives=len(pos), control=c, n_control=len(ctl))
        # the most positives within the target; of thresholds that flag as many, the highest
        # (fewest false alarms)
        if pct(c, len(ctl)) <= TARGETS["ordinary"] and (chosen is None or p >= rows[chosen]["positives"]):
            chosen = t
        print(f"  {t:>4} {p:>5}/{len(pos)} {pct(p, len(pos)):>5.1f}% {c:>6}/{len(ctl)} {pct(c, len(ctl)):>5.1f}%"
              + ("   <- default" if t == DEFAULT_THRESHOLD else ""))
    print(f"  most positives with the dev control within {TARGETS['ordinary']:.0f}% (highest such T): {chosen}"
          f" ({'the default' if chosen == DEFAULT_THRESHOLD else f'the default is {DEFAULT_THRESHOLD:g}'})")
    return dict(rows=rows, chosen=chosen, default=DEFAULT_THRESHOLD)


for half in HALVES[:1] if only_dev else HALVES:
    print(f"\n######## {half.upper()} half — " + ("tuning allowed" if half == "dev" else "never tuned on, never listed")
          + " ########")
    section(half, HELD_OUT + ["control"])
    report[f"pooled_{half}"] = pooled(half, HELD_OUT)
    if half == "dev":
        report["calibration"] = calibrate()

if dev:
    print("\n######## DEVELOPMENT set — tuning allowed (not a held-out figure) ########")
    section("development", ["cyberseceval"])

if fresh:
    print("\n######## FRESH held-out set — measured once, never tuned on (bench/advisories.py) ########")
    section("fresh", ["advisories"])
    report["pooled_fresh"] = pooled("fresh", ["advisories"])

report.update(skipped=skipped, seconds=round(time.time() - started, 1))
with open(os.path.join(work, "heldout.json"), "w") as out:
    json.dump(report, out, indent=1, sort_keys=True)
print(f"\nwrote {os.path.join(work, 'heldout.json')}; {time.time() - started:.0f} s")

if list_set:
    if list_set in loaded:
        list_files(list_set, loaded[list_set][0])
    else:
        print(f"\n--list {list_set}: the set was not measured in this run" + ("" if dev or list_set != "cyberseceval" else " (needs --dev)"))
