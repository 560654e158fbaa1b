#!/usr/bin/env python3
"""The offline judge against hand labels of real turns (issue 6/9).

Reads bench/judge_labels/*.json (sage.judge-labels/1: references to real logs, the finding's
CWE, task and file, and per turn TR/DI/VR/SA, kind and opportunity with a one-line reason),
runs `git sage judge LOG --cwe N --anchor-file F --task T --format json` on each log, and prints,
for the tuning part and the held-out part separately:

- per dimension: exact agreement, quadratic-weighted kappa, and the two confusions
  (label >= 2 and judge 0; judge >= 2 and label 0);
- kind agreement and opportunity agreement;
- every non-zero judge score of the held-out part with its quote, for a person to mark
  whether the quote supports it (--quotes);
- on the turns a second labeller scored blind (judge_labels/agreement/), how far the two
  labellers agree, beside the judge's agreement with each.

Logs come from ../shared/fixtures/real (SAGE_REAL, for "fixture" sources) or from a git
mirror or clone of the named repository at the named commit (SAGE_MIRRORS, default
/work/.mirror, else a clone from GitHub). Nothing here parses a log: the unit of a label is
the tool's own turn number.

Usage: bench/judge_eval.py [--bin PATH [--old]] [--quotes] [--json OUT]
(--old: the binary predates --anchor-file, as the baseline of 1e0b021 does)
"""
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIMS = ["tr", "di", "vr", "sa"]


def arg(name, default=None):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


BIN = arg("--bin", os.path.join(ROOT, "target/release/git-sage"))
REAL = os.environ.get("SAGE_REAL", os.path.join(ROOT, "..", "shared", "fixtures", "real"))
MIRRORS = os.environ.get("SAGE_MIRRORS", "/work/.mirror")
CACHE = tempfile.mkdtemp(prefix="judge-eval-")


def log_file(source):
    """A path to the raw log the labels refer to."""
    if "fixture" in source:
        p = os.path.join(REAL, source["fixture"])
        if not os.path.exists(p):
            sys.exit(f"missing fixture {p} (set SAGE_REAL)")
        return p
    owner, name = source["repo"].split("/")
    git_dir = os.path.join(MIRRORS, f"{owner}+{name}", "repo")
    if not os.path.isdir(git_dir):
        git_dir = os.path.join(CACHE, f"{owner}+{name}.git")
        if not os.path.isdir(git_dir):
            subprocess.run(["git", "clone", "-q", "--bare", f"https://github.com/{owner}/{name}", git_dir], check=True)
    out = os.path.join(CACHE, f"{owner}+{name}+{source['commit'][:12]}+" + source["path"].replace("/", "+"))
    if not os.path.exists(out):
        blob = subprocess.run(["git", "--git-dir", git_dir, "show", f"{source['commit']}:{source['path']}"],
                              check=True, capture_output=True).stdout
        with open(out, "wb") as f:
            f.write(blob)
    return out


def judge(session, path):
    cmd = [BIN, "judge", path, "--cwe", str(session["cwe"]), "--task", session["task"],
           "--format", "json", "--no-cache", "-q"]
    if "--old" in sys.argv:
        # a build from before issue 6/9: no --anchor-file, no --allow-partial
        pass
    elif session.get("anchor", {}).get("file"):
        cmd.append("--allow-partial")
        cmd += ["--anchor-file", session["anchor"]["file"]]
    env = dict(os.environ, HOME=CACHE)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=CACHE)
    if r.returncode != 0:
        sys.exit(f"{session['id']}: {' '.join(cmd)}\n{r.stderr}")
    return {t["turn"]: t for t in json.loads(r.stdout)["turns"]}


def kappa(pairs, k=4, weighted=True):
    """Cohen's kappa over pairs of 0..k-1 ratings (quadratic weights when `weighted`)."""
    n = len(pairs)
    if n == 0:
        return float("nan")
    obs = [[0.0] * k for _ in range(k)]
    for a, b in pairs:
        obs[a][b] += 1
    ra = [sum(obs[i]) for i in range(k)]
    rb = [sum(obs[i][j] for i in range(k)) for j in range(k)]
    w = (lambda i, j: (i - j) ** 2 / (k - 1) ** 2) if weighted else (lambda i, j: float(i != j))
    o = sum(w(i, j) * obs[i][j] for i in range(k) for j in range(k)) / n
    e = sum(w(i, j) * ra[i] * rb[j] for i in range(k) for j in range(k)) / (n * n)
    return 1.0 if e == 0 else 1 - o / e


def second_labels(rows, report):
    """The turns a second labeller scored blind (bench/judge_labels/agreement/): how far two
    careful labellers agree, beside how far the judge agrees with each."""
    d = os.path.join(ROOT, "bench", "judge_labels", "agreement")
    if not os.path.isdir(d):
        return
    by = {(r["session"], r["turn"]): r for r in rows}
    pairs = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".json"):
            doc = json.load(open(os.path.join(d, f)))
            # Quote marks (sage.quote-marks/1) sit beside the second labels; they hold no turns.
            for s in doc.get("sessions", []):
                for t in s["turns"]:
                    r = by.get((s["id"], t["turn"]))
                    if r is not None:
                        pairs.append((r, t))
    if not pairs:
        return
    print(f"\n== two labellers: {len(pairs)} turns labelled twice, blind")
    print(f"{'dim':4} {'kappa 1-2':>10} {'exact 1-2':>10} {'judge-1':>8} {'judge-2':>8}")
    out = {"turns": len(pairs), "dims": {}}
    for dim in DIMS:
        ll = [(r["label"][dim], t[dim]) for r, t in pairs]
        j1 = [(r["label"][dim], r["judge"][dim]) for r, t in pairs]
        j2 = [(t[dim], r["judge"][dim]) for r, t in pairs]
        exact = sum(a == b for a, b in ll) / len(ll)
        out["dims"][dim] = {"labellers_kappa": kappa(ll), "labellers_exact": exact,
                            "judge_first_kappa": kappa(j1), "judge_second_kappa": kappa(j2)}
        print(f"{dim.upper():4} {kappa(ll):10.2f} {exact:10.0%} {kappa(j1):8.2f} {kappa(j2):8.2f}")
    kinds = sum(r["label"]["kind"] == t["kind"] for r, t in pairs) / len(pairs)
    opp = sum(r["label"]["opportunity"] == t["opportunity"] for r, t in pairs) / len(pairs)
    out.update(labellers_kind=kinds, labellers_opportunity=opp)
    print(f"labellers' kind agreement {kinds:.0%} · opportunity agreement {opp:.0%}")
    report["two labellers"] = out


def main():
    rows = []
    # SAGE_EVAL_EXCLUDE=a.json,b.json leaves label files out: a held-out set kept unseen while
    # tuning, to be measured once at the end.
    exclude = set(filter(None, os.environ.get("SAGE_EVAL_EXCLUDE", "").split(",")))
    for f in sorted(os.listdir(os.path.join(ROOT, "bench", "judge_labels"))):
        if not f.endswith(".json") or f in exclude:
            continue
        doc = json.load(open(os.path.join(ROOT, "bench", "judge_labels", f)))
        for s in doc["sessions"]:
            got = judge(s, log_file(s["source"]))
            for t in s["turns"]:
                j = got.get(t["turn"])
                if j is None:
                    sys.exit(f"{s['id']}: turn {t['turn']} not in the judge's output")
                scores = j.get("scores") or {d: 0 for d in DIMS}
                rows.append({"file": f, "session": s["id"], "format": s["format"], "cwe": s["cwe"],
                             "held_out": s["held_out"], "turn": t["turn"], "label": t,
                             "judge": {d: scores[d] for d in DIMS}, "kind": j["kind"],
                             "opportunity": j.get("opportunity", False), "quotes": j.get("quotes", {})})
    report = {}
    # The tuning part; every held-out turn together; and each labels file's held-out part on
    # its own (heldout3.json was labelled last and measured once, after the tuning).
    parts = [("tuning", lambda r: not r["held_out"]), ("held-out, all", lambda r: r["held_out"])]
    for f in sorted({r["file"] for r in rows if r["held_out"]}):
        parts.append((f"held-out, {f}", lambda r, f=f: r["held_out"] and r["file"] == f))
    for part, pick in parts:
        rs = [r for r in rows if pick(r)]
        out = {"turns": len(rs), "sessions": len({r["session"] for r in rs}), "dims": {}}
        print(f"\n== {part}: {out['turns']} turns from {out['sessions']} sessions")
        print(f"{'dim':4} {'exact':>6} {'kappa':>6} {'label>=2,judge 0':>17} {'judge>=2,label 0':>17}")
        for d in DIMS:
            pairs = [(r["label"][d], r["judge"][d]) for r in rs]
            exact = sum(a == b for a, b in pairs) / max(len(pairs), 1)
            k = kappa(pairs)
            miss = sum(a >= 2 and b == 0 for a, b in pairs)
            false = sum(b >= 2 and a == 0 for a, b in pairs)
            out["dims"][d] = {"exact": exact, "kappa": k, "label2_judge0": miss, "judge2_label0": false}
            print(f"{d.upper():4} {exact:6.0%} {k:6.2f} {miss:17d} {false:17d}")
        kinds = sum(r["kind"] == r["label"]["kind"] for r in rs) / max(len(rs), 1)
        opp = sum(bool(r["opportunity"]) == r["label"]["opportunity"] for r in rs) / max(len(rs), 1)
        nonzero = sum(1 for r in rs for d in DIMS if r["judge"][d] > 0)
        out.update(kind_agreement=kinds, opportunity_agreement=opp, judge_nonzero=nonzero)
        print(f"kind agreement {kinds:.0%} · opportunity agreement {opp:.0%} · judge non-zero scores {nonzero}")
        report[part] = out
    second_labels(rows, report)
    if "--quotes" in sys.argv:
        print("\n== held-out non-zero scores and their quotes (mark each: supports / does not)")
        for r in rows:
            if not r["held_out"]:
                continue
            for d in DIMS:
                if r["judge"][d] > 0:
                    q = (r["quotes"] or {}).get(d) or ""
                    print(f"{r['session']} turn {r['turn']} {d.upper()} {r['judge'][d]} (label {r['label'][d]}): {q[:160]!r}")
    if arg("--json"):
        json.dump({"report": report, "rows": rows}, open(arg("--json"), "w"), indent=1)


if __name__ == "__main__":
    main()
