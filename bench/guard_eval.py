#!/usr/bin/env python3
"""Replays real Claude Code sessions through `git sage guard check`, write by write.

For every file-writing tool call of a session (Write, Edit, MultiEdit, NotebookEdit), the
session file is cut just before the line that holds the call, and the guard is asked about
that call with the hook input Claude Code would send (docs/guard.md). The cut and the calls
come from the raw JSONL with `json` only: no git-sage parser decides what a write is.

Two sets:
- security: the Claude Code sessions of bench/judge_labels/ (each a security task with a
  confirmed finding and its anchored file). The introducing write is the first call that
  writes the anchored file. Reported: whether the guard saw the task as a security one,
  whether it denied the first write, and whether it denied the write of the anchored file.
  Each session is run twice: with the session alone (the guard reads the task from it), and
  with the finding kept in the repository (`.sage/findings/`), as after a report.
  The sessions of the label sets written last (heldout11, heldout12) are reported apart: the
  guard's rule was settled on the others.
- other: the Claude Code sessions of bench/attribution_cases.json whose task does not bear on
  security (`security: false` below, by reading each session's first prompt). Reported: how
  many writes the guard denied; the target is none.

Each check after the first of a session resumes from what the one before it read and judged
(`.git/sage/guard/sessions/`, docs/guard.md#speed), as in a real session. `--cold` drops that
record before every check, so each reads and judges the session whole; `--compare` runs both
and counts the decisions that differ (they must not).

    python3 bench/guard_eval.py target/release/git-sage [--json OUT] [--cold | --compare]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIRRORS = os.environ.get("SAGE_MIRRORS", "/work/.mirror")
REAL = os.environ.get("SAGE_REAL", os.path.join(ROOT, "..", "shared", "fixtures", "real"))
WRITES = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
HELD_OUT = {"heldout11.json", "heldout12.json"}

# The attribution corpus's Claude Code sessions that bear on security, by case id, read by
# hand from each session's first prompt (2026-12-02): none of the 19 does — lint fixes, e2e
# test harnesses, checkpoint summaries, `entire explain` debugging, a token benchmark.
ATTRIBUTION_SECURITY = set()


def git_dir(repo):
    owner, name = repo.split("/")
    d = os.path.join(MIRRORS, f"{owner}+{name}", "repo")
    if not os.path.isdir(d):
        d = os.path.join(tempfile.gettempdir(), f"guard-eval-{owner}+{name}.git")
        if not os.path.isdir(d):
            subprocess.run(["git", "clone", "-q", "--bare", f"https://github.com/{repo}", d], check=True)
    return d


def blob(repo, rev, path):
    return subprocess.run(["git", "--git-dir", git_dir(repo), "show", f"{rev}:{path}"],
                          check=True, capture_output=True).stdout


def calls(raw):
    """(line index, tool name, tool input) of every file-writing tool_use, in order."""
    out = []
    for i, line in enumerate(raw.splitlines()):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) else None
        content = msg.get("content") if isinstance(msg, dict) else None
        if rec.get("type") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in WRITES:
                out.append((i, block["name"], block.get("input") or {}))
    return out


def ask(binary, repo_dir, prefix_path, name, tool_input):
    hook = {"session_id": "eval", "transcript_path": prefix_path, "cwd": repo_dir,
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": name, "tool_input": tool_input, "tool_use_id": "toolu_eval"}
    env = dict(os.environ, HOME=repo_dir, XDG_CONFIG_HOME=repo_dir, GIT_CONFIG_NOSYSTEM="1")
    r = subprocess.run([binary, "guard", "check", "--agent", "claude-code"], input=json.dumps(hook),
                       capture_output=True, text=True, cwd=repo_dir, env=env)
    if r.returncode != 0:
        sys.exit(f"guard check exited {r.returncode}: {r.stderr}")
    if not r.stdout.strip():
        return "allow"
    out = json.loads(r.stdout)
    return out["hookSpecificOutput"]["permissionDecision"]


COLD = ["--cold" in sys.argv]


def replay(binary, raw, anchor=None, finding_cwe=None):
    """The guard's decision on every write of `raw`, and which write wrote `anchor`."""
    lines = raw.splitlines(keepends=True)
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["git", "init", "-q", d], check=True)
        if finding_cwe is not None:
            os.makedirs(os.path.join(d, ".sage", "findings"))
            with open(os.path.join(d, ".sage", "findings", "f.yaml"), "w") as f:
                f.write(f"id: f\ncwe: {finding_cwe}\nfile: {anchor}\nfragment: 'x'\n")
        decisions, introducing = [], None
        for n, (i, name, tool_input) in enumerate(calls(raw)):
            prefix = os.path.join(d, "prefix.jsonl")
            with open(prefix, "w", encoding="utf-8") as f:
                f.write("".join(lines[:i]))
            if COLD[0]:
                shutil.rmtree(os.path.join(d, ".git", "sage", "guard", "sessions"), ignore_errors=True)
            decisions.append(ask(binary, d, prefix, name, tool_input))
            path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
            if introducing is None and anchor and (path == anchor or path.endswith("/" + anchor)):
                introducing = n
        return decisions, introducing


def security_sessions():
    for f in sorted(os.listdir(os.path.join(ROOT, "bench", "judge_labels"))):
        if not f.endswith(".json"):
            continue
        for s in json.load(open(os.path.join(ROOT, "bench", "judge_labels", f)))["sessions"]:
            if s["format"] == "claude-code" and "repo" in s["source"]:
                yield f, s


def main():
    binary = os.path.abspath(sys.argv[1])
    out = {"security": [], "other": []}
    print(f"{'session':40} {'writes':>6} {'first':>6} {'anchor':>7} | with finding: {'first':>6} {'anchor':>7}")
    for f, s in security_sessions():
        src = s["source"]
        raw = blob(src["repo"], src["commit"], src["path"]).decode("utf-8", "replace")
        anchor = s["anchor"]["file"]
        alone, intro = replay(binary, raw, anchor)
        kept, _ = replay(binary, raw, anchor, finding_cwe=s["cwe"])
        row = {"set": f, "held_out": f in HELD_OUT, "session": s["id"], "writes": len(alone), "introducing_write": intro,
               "alone": alone, "with_finding": kept}
        out["security"].append(row)
        at = lambda ds, k: "-" if k is None or not ds else ds[k]
        print(f"{s['id']:40} {len(alone):6} {at(alone, 0):>6} {at(alone, intro):>7} |"
              f"               {at(kept, 0):>6} {at(kept, intro):>7}")
    cases = json.load(open(os.path.join(ROOT, "bench", "attribution_cases.json")))
    done = set()
    for c in cases:
        # Cases that share a session file replay it once.
        if c["format"] != "claude" or c["id"] in ATTRIBUTION_SECURITY or c["session"]["where"] in done:
            continue
        done.add(c["session"]["where"])
        rev, _, path = c["session"]["where"].partition(":")
        raw = blob(c["repo"], rev, path).decode("utf-8", "replace")
        ds, _ = replay(binary, raw)
        out["other"].append({"case": c["id"], "held_out": c.get("held_out", False),
                             "writes": len(ds), "denied": ds.count("deny"), "decisions": ds})
    def share(rows, key, pick):
        hits = sum(1 for r in rows if r[key] and pick(r) is not None and r[key][pick(r)] == "deny")
        return f"{hits}/{len(rows)}"
    for part, held in (("seen", False), ("held out", True)):
        sec = [r for r in out["security"] if r["held_out"] == held]
        with_intro = [r for r in sec if r["introducing_write"] is not None]
        print()
        print(f"{part} security sessions: {len(sec)} ({sum(r['writes'] for r in sec)} writes); "
              f"{len(with_intro)} write the anchored file through a file tool")
        print(f"  session alone:   first write denied {share(sec, 'alone', lambda r: 0)}, "
              f"introducing write denied {share(with_intro, 'alone', lambda r: r['introducing_write'])}")
        print(f"  finding kept:    first write denied {share(sec, 'with_finding', lambda r: 0)}, "
              f"introducing write denied {share(with_intro, 'with_finding', lambda r: r['introducing_write'])}")
        other = [r for r in out["other"] if r["held_out"] == held]
        print(f"{part} other sessions: {len(other)} ({sum(r['writes'] for r in other)} writes); "
              f"writes denied: {sum(r['denied'] for r in other)} (target 0)")
    if "--compare" in sys.argv:
        COLD[0] = True
        cold = {"security": [], "other": []}
        for f, s in security_sessions():
            src = s["source"]
            raw = blob(src["repo"], src["commit"], src["path"]).decode("utf-8", "replace")
            cold["security"].append(replay(binary, raw, s["anchor"]["file"])[0])
            cold["security"].append(replay(binary, raw, s["anchor"]["file"], finding_cwe=s["cwe"])[0])
        for c in cases:
            if c["format"] == "claude" and c["id"] in {r["case"] for r in out["other"]}:
                rev, _, path = c["session"]["where"].partition(":")
                cold["other"].append(replay(binary, blob(c["repo"], rev, path).decode("utf-8", "replace"))[0])
        warm = [d for r in out["security"] for d in (r["alone"], r["with_finding"])]
        pairs = [(a, b) for x, y in zip(warm, cold["security"]) for a, b in zip(x, y)]
        pairs += [(a, b) for r, y in zip(out["other"], cold["other"]) for a, b in zip(r["decisions"], y)]
        differ = sum(1 for a, b in pairs if a != b)
        print()
        print(f"resumed vs whole: {len(pairs)} decisions, {differ} differ")
    if "--json" in sys.argv:
        json.dump(out, open(sys.argv[sys.argv.index("--json") + 1], "w"), indent=1)


if __name__ == "__main__":
    main()
