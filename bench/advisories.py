"""A fresh held-out set for `bench/heldout.py --fresh`: real vulnerable and fixed Python functions
from the fix commits that the Python Packaging Authority's advisory database names.

No rule of `templates/screen/python/` was written from it: it was built on 2026-12-08, after the
rules of that day, and is measured once (`--fresh`); a rule changed after seeing its figures makes
them development figures (docs/screen.md keeps the history).

  - Advisories: pypa/advisory-database at a pinned commit, `vulns/*/*.yaml` with a reference
    `https://github.com/OWNER/REPO/commit/SHA` (OSV's FIX references, which the database gives as
    WEB or FIX).
  - The weakness: the advisory's own words (summary and details) against CWE_WORDS, first match
    wins; an advisory none of them names is left out. PYSEC entries carry no CWE field.
  - Code: each fix commit against its first parent, in the repository's mirror
    ($SAGE_MIRROR/OWNER+REPO/repo). Python files the fix modified (renames followed; test files
    left out as for SVEN); a function is *changed* when a line the fix removed or added falls in it
    and in no function nested inside it. Its version before the fix is a positive (vulnerable),
    its version after the fix, when the function still exists, the paired negative (fixed).
    Functions the fix only adds are neither.
  - Left out: repositories whose code the tuning has read (the negative control's projects),
    fixes SVEN already has, and commits or repositories not in the mirror (listed as skipped).
"""
import ast
import difflib
import os
import re
import subprocess
import textwrap

ADVISORY_DB = ("pypa/advisory-database", "3ccb612573e2511ab5cad7dafecd838605c80cda")
# Ordered: the first pattern the advisory's text matches names its CWE. Deserialisation and XXE come
# before code injection because their advisories often add "leading to arbitrary code execution".
CWE_WORDS = [
    (89, r"sql injection"),
    (78, r"command injection|os command|shell injection|arbitrary command"),
    (22, r"path traversal|directory traversal|\.\./"),
    (79, r"cross[- ]site scripting|\bxss\b"),
    (918, r"server[- ]side request forgery|\bssrf\b"),
    (502, r"deserializ|pickle|unsafe yaml|yaml\.load"),
    (611, r"xml external entit|\bxxe\b"),
    (601, r"open redirect"),
    (94, r"code injection|eval\(|arbitrary (python )?code"),
    (327, r"weak (hash|crypto)|\bmd5\b|\bsha1\b"),
    (798, r"hard-?coded (credential|password|key|secret)"),
    (1333, r"regular expression denial|\bredos\b"),
]
FIX_URL = re.compile(r"https://github\.com/([^/]+/[^/]+)/commit/([0-9a-f]{7,40})$")


def _run(cmd):
    return subprocess.run(cmd, capture_output=True)


def cwe_of(text):
    text = text.lower()
    for cwe, pattern in CWE_WORDS:
        if re.search(pattern, text):
            return cwe
    return None


def advisories(db_git_dir, yaml):
    """(advisory id, CWE, [(owner/repo, sha)]) for every advisory with a GitHub fix commit and a
    weakness CWE_WORDS names, in path order."""
    commit = ADVISORY_DB[1]
    paths = _run(["git", "--git-dir", db_git_dir, "ls-tree", "-r", "--name-only", commit, "--", "vulns/"])
    out = []
    for p in sorted(paths.stdout.decode().splitlines()):
        if not p.endswith(".yaml"):
            continue
        doc = yaml.safe_load(_run(["git", "--git-dir", db_git_dir, "show", f"{commit}:{p}"]).stdout) or {}
        fixes = []
        for ref in doc.get("references") or []:
            m = FIX_URL.match(str(ref.get("url", "")))
            if m and (m.group(1), m.group(2)) not in fixes:
                fixes.append((m.group(1), m.group(2)))
        cwe = cwe_of(f"{doc.get('summary', '')} {doc.get('details', '')}")
        if fixes and cwe is not None:
            out.append((str(doc.get("id", p)), cwe, fixes))
    return out


def functions(tree):
    """[(qualified name, first line, last line)] of every function, nested ones included; a
    function's first line is its first decorator's."""
    found = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                name = prefix + child.name
                found.append((name, start, child.end_lineno))
                walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def innermost(funcs, line):
    best = None
    for name, start, end in funcs:
        if start <= line <= end and (best is None or end - start < best[2] - best[1]):
            best = (name, start, end)
    return best


def changed_functions(before, after):
    """{name: (before source or None, after source or None)} of the functions a change touches.
    None when a side cannot be parsed (Python 2, a syntax slip): the caller skips the file."""
    try:
        fb, fa = functions(ast.parse(before)), functions(ast.parse(after))
    except (SyntaxError, ValueError):
        return None
    bl, al = before.splitlines(), after.splitlines()
    touched = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, bl, al, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for line in range(i1 + 1, i2 + 1):
            f = innermost(fb, line)
            if f:
                touched.add(f[0])
        for line in range(j1 + 1, j2 + 1):
            f = innermost(fa, line)
            if f:
                touched.add(f[0])
    by_b = {n: (s, e) for n, s, e in fb}
    by_a = {n: (s, e) for n, s, e in fa}

    def source(lines, span):
        return textwrap.dedent("\n".join(lines[span[0] - 1:span[1]])).rstrip("\n") + "\n"

    return {n: (source(bl, by_b[n]) if n in by_b else None, source(al, by_a[n]) if n in by_a else None)
            for n in sorted(touched)}


def load(mirror_root, yaml, excluded_repos, excluded_commits, test_file, sample):
    """The set's samples (via heldout.py's `sample`) and what was left out, with reasons."""
    db = os.path.join(mirror_root, ADVISORY_DB[0].replace("/", "+"), "repo")
    if _run(["git", "--git-dir", db, "cat-file", "-e", ADVISORY_DB[1] + "^{commit}"]).returncode != 0:
        raise FileNotFoundError(f"no mirror of {ADVISORY_DB[0]} at {ADVISORY_DB[1][:12]}")
    samples, left_out, seen = [], {}, set()

    def leave(reason, what):
        left_out.setdefault(reason, []).append(what)

    excluded = {r.lower() for r in excluded_repos}
    for adv, cwe, fixes in advisories(db, yaml):
        for slug, sha in fixes:
            what = f"{adv} {slug}@{sha[:12]}"
            if slug.lower() in excluded:
                leave("repository read while tuning", what)
                continue
            if any(c.startswith(sha) or sha.startswith(c) for c in excluded_commits.get(slug.lower(), ())):
                leave("fix already in SVEN", what)
                continue
            git_dir = os.path.join(mirror_root, slug.replace("/", "+"), "repo")
            full = _run(["git", "--git-dir", git_dir, "rev-parse", "--verify", "-q", sha + "^{commit}"])
            if full.returncode != 0:
                leave("repository or commit not in the mirror", what)
                continue
            full = full.stdout.decode().strip()
            if (slug.lower(), full) in seen:  # two advisories naming one fix: counted once
                continue
            seen.add((slug.lower(), full))
            n = add_fix(git_dir, full, adv, cwe, slug, test_file, sample, samples)
            if n == 0:
                leave("no changed Python function outside tests", what)
    return samples, left_out


def add_fix(git_dir, sha, adv, cwe, slug, test_file, sample, samples):
    parent = _run(["git", "--git-dir", git_dir, "rev-parse", "--verify", "-q", sha + "^1"])
    if parent.returncode != 0:
        return 0
    parent = parent.stdout.decode().strip()
    status = _run(["git", "--git-dir", git_dir, "diff", "--name-status", "-M", parent, sha, "--", "*.py"])
    count = 0
    for row in status.stdout.decode("utf-8", "replace").splitlines():
        parts = row.split("\t")
        kind = parts[0][:1]
        if kind == "M":
            old = new = parts[1]
        elif kind == "R":
            old, new = parts[1], parts[2]
        else:  # added or deleted: no version of the other side to pair with
            continue
        if test_file.search(new):
            continue
        before = _run(["git", "--git-dir", git_dir, "show", f"{parent}:{old}"]).stdout.decode("utf-8", "replace")
        after = _run(["git", "--git-dir", git_dir, "show", f"{sha}:{new}"]).stdout.decode("utf-8", "replace")
        changed = changed_functions(before, after)
        if not changed:
            continue
        for name, (b, a) in changed.items():
            if b is None or b == a:
                continue
            # `_` kept: `Worker._extract_single` and `Worker.extract_single` are two functions
            tag = re.sub(r"[^A-Za-z0-9_]+", "-", f"{adv}-{sha[:8]}-{new}-{name}").strip("-")
            origin = f"{adv} https://github.com/{slug}/commit/{sha} {new}:{name}"
            key = f"{slug}@{sha}"
            samples.append(sample(f"samples/CWE-{cwe}_{tag}_before.py", cwe, "pos", b, origin, "fresh",
                                  pair=tag, fix=key))
            if a is not None:
                samples.append(sample(f"samples/CWE-{cwe}_{tag}_after.py", cwe, "neg", a, origin, "fresh",
                                      pair=tag, fix=key))
            count += 1
    return count
