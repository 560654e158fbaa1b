#!/usr/bin/env python3
"""Turn attribution on real cases: does `git sage provenance` land the introducing write on
the session edit that wrote the anchored code?

A case (JSON list, see bench/attribution.md) names a public repository's git directory, a
base and tip, the anchored file and fragment, where the session lives, and the truth: the raw
line (or Gemini message id) of the session edit whose new text holds the fragment, computed
from the raw log by a script independent of git-sage's parsers, or "none" when no session
edit wrote it. Each case runs on a fresh `git clone` (so checkpoint branches exist only as
remote-tracking refs, as after a plain clone), with discovery, as a user would run it.

A turn is right when the truth's line falls inside the turn git-sage names (from its first
line to the next turn's) — or, for a "none" truth, when git-sage names no turn. The session is
right when it is the truth's file or a longer copy of it (the truth's bytes its prefix).

The corpus (bench/attribution_cases.json, see bench/attribution.md) names public repositories,
commits, paths and line numbers only; the repositories are cloned from fetched snapshots or
GitHub. Rows "~held-out" and "~tuned-on" split the cases never looked at while changing
git-sage from the rest.

Usage: bench/attribution.py BIN CASES.json [--only ID] [--json OUT]
"""

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(args, cwd=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


def turn_span(binary, cwd, source, turn):
    """(first line, last line or None, event id) of `turn` in the session git-sage read."""
    name = source
    if source.endswith(" message"):
        name = source.split()[0] + "^{commit}"
    r = run([binary, "turns", name, "--format", "json"], cwd=cwd)
    if r.returncode != 0:
        return None
    turns = json.loads(r.stdout)["turns"]
    for i, t in enumerate(turns):
        if t["turn"] == turn:
            src = t.get("source") or {}
            nxt = turns[i + 1].get("source", {}).get("line") if i + 1 < len(turns) else None
            return src.get("line"), (nxt - 1 if nxt else None), src.get("event")
    return None


def show(repo, rev_path):
    r = subprocess.run(["git", "show", rev_path], cwd=repo, capture_output=True)
    return r.stdout if r.returncode == 0 else None


def extends(repo, chosen, want):
    """A later copy of the truth's session (checkpoints keep growing copies of one session):
    the truth's bytes are a prefix of the chosen file's, so its line numbers hold there."""
    if chosen.endswith(" message") or ":" not in chosen:
        return False
    mine, theirs = show(repo, chosen), show(repo, want["where"])
    return bool(mine and theirs) and mine.startswith(theirs)


def source_of(case):
    """Where to clone from: the case's mirror, a fetched snapshot under $SAGE_MIRRORS
    (default /work/.mirror, where the workplace `fetch` tool puts them), else GitHub."""
    owner, name = case["repo"].split("/")
    for m in (case.get("mirror"),
              os.path.join(os.environ.get("SAGE_MIRRORS", "/work/.mirror"), f"{owner}+{name}", "repo")):
        if m and os.path.isdir(m):
            return m
    return f"https://github.com/{case['repo']}.git"


def fragment_of(case, repo):
    """The anchored fragment: given, or read from the file at the commit (the corpus stores a
    line number, not the third-party code)."""
    if "fragment" in case:
        return case["fragment"]
    at = case["fragment_at"]
    text = show(repo, f"{case['commit']}:{case['file']}")
    if text is None:
        return None
    line = text.decode("utf-8", "replace").split("\n")[at["line"] - 1].rstrip("\r")
    return line.strip() if at.get("strip") else line


def touched(binary, cwd, source, path):
    """Whether the session git-sage chose edits the anchored file (or makes pathless edits)."""
    name = source.split()[0] + "^{commit}" if source.endswith(" message") else source
    r = run([binary, "turns", name, "--format", "json"], cwd=cwd)
    if r.returncode != 0:
        return None
    for t in json.loads(r.stdout)["turns"]:
        for c in t.get("file_changes") or []:
            p = c.get("path") or ""
            if p == "" or p == path or path.endswith("/" + p) or p.endswith("/" + path):
                return True
    return False


def check(binary, case, work):
    repo = os.path.join(work, case["id"])
    src = source_of(case)
    r = run(["git", "clone", "-q", src, repo])
    if r.returncode != 0:
        # A snapshot may leave its largest blobs out: the history is all provenance needs.
        shutil.rmtree(repo, ignore_errors=True)
        r = run(["git", "clone", "-q", "--no-checkout", src, repo])
    if r.returncode != 0:
        return {"error": "clone: " + r.stderr.strip()[-200:]}
    anchor = os.path.join(work, case["id"] + ".yaml")
    fragment = fragment_of(case, repo)
    if fragment is None:
        return {"error": f"{case['file']} not found at {case['commit']}"}
    with open(anchor, "w") as f:
        json.dump({"id": case["id"], "file": case["file"], "fragment": fragment}, f)
    r = run([binary, "provenance", case["tip"], "--finding", anchor, "--base", case["base"],
             "--format", "json"], cwd=repo)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-300:]}
    v = json.loads(r.stdout)
    w = (v.get("provenance") or {}).get("introducing_write") or {}
    session = v.get("session") or {}
    out = {
        "status": v["provenance"]["status"],
        "session": session.get("source"),
        "turn": w.get("turn"),
        "mapped_by": w.get("mapped_by"),
        "unmapped_reason": w.get("unmapped_reason"),
    }
    if out["turn"] is not None and out["session"]:
        out["session_touched"] = touched(binary, repo, out["session"], case["file"])
    truth = case["truth"]
    want_path = case["session"]["path"]
    out["session_right"] = bool(out["session"]) and (
        out["session"].endswith(want_path) or extends(repo, out["session"], case["session"]))
    if truth.get("line") is None and not truth.get("message_id"):
        out["turn_right"] = out["turn"] is None
        return out
    if out["turn"] is None:
        out["turn_right"] = False
        return out
    span = turn_span(binary, repo, out["session"], out["turn"])
    if span is None or not out["session_right"]:
        out["turn_right"] = False
        return out
    first, last, event = span
    if truth.get("message_id"):
        out["turn_right"] = event == truth["message_id"]
    else:
        line = truth["line"]
        out["turn_right"] = first is not None and first <= line and (last is None or line <= last)
    out["span"] = [first, last]
    return out


def main():
    args = sys.argv[1:]
    out_path = None
    only = None
    if "--json" in args:
        i = args.index("--json")
        out_path = args[i + 1]
        del args[i: i + 2]
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i: i + 2]
    binary, cases_path = os.path.abspath(args[0]), args[1]
    cases = json.load(open(cases_path))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for c in cases:
            if only and c["id"] != only:
                continue
            res = check(binary, c, work)
            rows.append({"id": c["id"], "format": c["format"], "none": c["truth"].get("line") is None and not c["truth"].get("message_id"), **res})
            flag = "ok " if res.get("turn_right") else "BAD"
            print(f"{flag} {c['id']:<34} {c['format']:<9} session={'right' if res.get('session_right') else res.get('session') or '-'} "
                  f"turn={res.get('turn')} by={res.get('mapped_by')} {res.get('error') or res.get('unmapped_reason') or ''}"[:220])
    held = {c["id"] for c in cases if c.get("held_out")}
    by = collections.defaultdict(lambda: [0, 0, 0, 0])
    for r in rows:
        split = "~held-out" if r["id"] in held else "~tuned-on"
        for key in (r["format"], "all", split):
            b = by[key]
            b[0] += 1
            b[1] += bool(r.get("session_right"))
            b[2] += r.get("turn") is not None
            b[3] += bool(r.get("turn_right"))
    print(f"\n{'format':<10} {'cases':>5} {'session found':>14} {'write mapped':>13} {'turn right':>11}")
    for k, (n, s, m, t) in sorted(by.items()):
        print(f"{k:<10} {n:>5} {s:>14} {m:>13} {t:>11}  ({100 * t / n:.0f}%)")
    methods = collections.Counter((r.get("mapped_by") or "unmapped", bool(r.get("turn_right"))) for r in rows)
    print("\nby mapping method (right/all): " + ", ".join(
        f"{m} {methods[(m, True)]}/{methods[(m, True)] + methods[(m, False)]}"
        for m in sorted({m for m, _ in methods})))
    untouched = [r["id"] for r in rows if r.get("turn") is not None and r.get("session_touched") is False]
    print(f"writes mapped into a session that never edited the file: {len(untouched)} {untouched}")
    wrong_session = [r["id"] for r in rows if r.get("turn") is not None and r["none"]]
    print(f"writes mapped although no session edit wrote the code: {len(wrong_session)} {wrong_session}")
    print(f"unmapped writes without a reason: {sum(1 for r in rows if r.get('turn') is None and r.get('session') and r.get('status') == 'introduced' and not r.get('unmapped_reason'))}")
    if out_path:
        json.dump(rows, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
