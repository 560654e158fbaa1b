#!/usr/bin/env python3
"""What a case's judge calls cost — naive, with the default context budget, and with the budget
plus rule-aware scheduling — and whether the result stays the same (issue 22).

For every session (the real third-party transcripts under ../shared/fixtures/real, and with
--corpus N, N Claude Code sessions drawn with a fixed seed from the checkpoints of the mirrored
entireio/cli repository), a throw-away repository is built: an agent commit brings a shell
call into app.py that no turn of the session maps to, so the bound is the session's last turn
and every turn up to it can be the origin, the hardest case for scheduling. Then:

  1. `blame-origin --judge offline` gives the scores; a small judge command (`command:`) answers
     every prompt with the offline judge's answer for the turn it is asked about.
  2. That judge runs three ways: `--score-all --context-tokens 0` (naive: the full prefix for
     every turn), `--score-all` (the default budget), and the default (budget + scheduling),
     with the default `--jobs` and with `--jobs 1`.
  3. Each run's origin and missed opportunities must equal the offline judge's, and they and
     the turns a --jobs 1 run asked must be what the origin rule, written out again in this
     script from docs/method.md (no git-sage code), gives over the same scores.

Tokens: the naive and budget totals are `--estimate`'s exact o200k counts for
anthropic:claude-sonnet-4-5 at the same budget; a scheduled run's tokens are the budget total
times the share of the budget run's prompt bytes that the scheduled run sent (the prompts are
the same text, so bytes and tokens go together).

    cargo build --release --locked
    python3 bench/schedule.py [target/release/git-sage] [--corpus N] [--no-fixtures] [DIR...]
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = sys.argv[1:]
binary = os.path.join(ROOT, "target/release/git-sage")
if args and not args[0].startswith("--") and os.path.isfile(args[0]):
    binary = args.pop(0)
corpus = 0
if "--corpus" in args:
    i = args.index("--corpus")
    corpus = int(args[i + 1])
    del args[i:i + 2]
fixtures = "--no-fixtures" not in args
args = [a for a in args if a != "--no-fixtures"]
dirs = args or ([os.path.join(ROOT, "..", "shared", "fixtures", "real")] if fixtures else [])
MIRROR = "/work/.mirror/entireio+cli/repo"
ESTIMATE_JUDGE = "anthropic:claude-sonnet-4-5"
BUDGET = "32000"
SKIP = {"findings", "securityeval"}

# The judge command: the offline answer of the turn asked about, and the prompt's size logged.
ANSWER = r'''
import json, os, re, sys
prompt = sys.stdin.read()
turn = int(re.findall(r"Score turn (\d+) of the log above", prompt)[-1])
with open(os.environ["SAGE_BENCH_LOG"], "a") as f:
    f.write(f"{turn}\t{len(prompt.encode())}\n")
print(json.dumps(json.load(open(os.environ["SAGE_BENCH_ANSWERS"]))[str(turn)]))
'''


def sessions(tmp):
    for d in dirs:
        for top, subs, files in os.walk(d):
            subs[:] = sorted(s for s in subs if s not in SKIP)
            for f in sorted(files):
                if f.endswith((".jsonl", ".json", ".md", ".yaml", ".traj")) and f != "SOURCES.md":
                    yield os.path.relpath(os.path.join(top, f), d), os.path.join(top, f)
    if corpus and os.path.isdir(MIRROR):
        env = {**os.environ, "GIT_DIR": MIRROR}
        ls = subprocess.run(["git", "ls-tree", "-r", "-l", "entire/checkpoints/v1"], env=env,
                            capture_output=True, text=True, check=True).stdout.splitlines()
        # Sessions of 50 kB to 1.5 MB: long enough to matter, short enough for a bench.
        # (A blob the mirror does not hold has no size: it is left out.)
        files = sorted(l.split()[4] for l in ls if l.endswith("full.jsonl")
                       and l.split()[3].isdigit() and 50_000 <= int(l.split()[3]) <= 1_500_000)
        for p in random.Random(22).sample(files, min(corpus, len(files))):
            out = os.path.join(tmp, "corpus", p.replace("/", "_"))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(subprocess.run(["git", "show", f"entire/checkpoints/v1:{p}"], env=env,
                                       capture_output=True, check=True).stdout)
            yield f"entireio/cli:{p}", out


def git(repo, *a):
    subprocess.run(["git", "-C", repo, *a], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "a@x",
                        "GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "a@x"})


def make_repo(tmp):
    repo = os.path.join(tmp, "repo")
    if os.path.isdir(repo):
        return repo
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    with open(os.path.join(repo, "app.py"), "w") as f:
        f.write("import os\n\n\ndef run(cmd):\n    return 0\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "agent/fix")
    with open(os.path.join(repo, "app.py"), "w") as f:
        f.write("import os\n\n\ndef run(cmd):\n    return os.system(cmd)\n")
    git(repo, "commit", "-qam", "run the command")
    return repo


def blame(repo, session, judge, extra, env=None):
    cmd = [binary, "-C", repo, "blame-origin", "--base", "main", "--session", session,
           "--anchor-file", "app.py", "--anchor-snippet", "os.system(cmd)", "--judge", judge,
           "--no-cache", "-q", "--format", "json", *extra]
    run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if run.returncode not in (0, 1):
        return None, run.stderr.strip().splitlines()[-1:] or [f"exit {run.returncode}"]
    return json.loads(run.stdout), None


def estimate(repo, session, extra):
    doc, _ = blame(repo, session, ESTIMATE_JUDGE, ["--estimate", *extra],
                   env={"ANTHROPIC_API_KEY": ""})
    return doc["estimates"][0] if doc else None


def truth(turns):
    """The origin rule of docs/method.md written out again here, not read from git-sage: over
    the judged turns (this bench's bound is the last turn in scope, and (iii) cannot apply, as
    the defect's write maps to no turn), the origin turn and type, the missed opportunities,
    and the turns a run with --jobs 1 has to ask (every turn put to the judge up to the
    origin, then the implementation and review turns after it; all of them with no origin)."""
    bound = max(t["turn"] for t in turns)
    sent = [t for t in turns if t["kind"] != "administrative"]
    origin = None
    for t in turns:
        s = t["scores"]
        if not t["applicable"]:
            continue
        if t["turn"] < bound and s["di"] > 0:
            origin = (t["turn"], "inadequate_defence")
            break
        if t["opportunity"] and s["tr"] == 0 and s["di"] == 0:
            origin = (t["turn"], "unaddressed_requirement")
            break
    if origin is None:
        return None, [], [t["turn"] for t in sent]
    o = origin[0]
    later = [t for t in turns if t["turn"] > o and t["applicable"]
             and t["kind"] in ("implementation", "review")]
    missed = [t["turn"] for t in later if t["scores"]["vr"] <= 1 or t["scores"]["sa"] <= 1]
    asked = [t["turn"] for t in sent
             if t["turn"] <= o or t["kind"] in ("implementation", "review")]
    return origin, missed, asked


def result(doc):
    # The verdict, not its margin: the margin lists the one-step changes that would move the
    # origin, which differ by judge (the offline judge's evidence vs any score) and name turns
    # a scheduled run did not ask as unscored.
    origin = {k: v for k, v in doc["origin"].items() if k != "margin"}
    return json.dumps([origin, doc["missed_opportunities"]], sort_keys=True)


def main():
    tmp = tempfile.mkdtemp(prefix="sage-schedule-")
    repo = make_repo(tmp)
    script = os.path.join(tmp, "answer.py")
    with open(script, "w") as f:
        f.write(ANSWER)
    rows, mismatches = [], []
    print(f"estimate judge {ESTIMATE_JUDGE}, budget {BUDGET} tokens; judge: the offline judge's "
          "answers through command:\n")
    print("| session | turns | asked naive | asked scheduled (jobs 8 / 1) | naive tokens | budget "
          "| budget + scheduling (jobs 8) | (jobs 1) | ratio (jobs 8) | (jobs 1) | largest prompt naive → budget "
          "| origin | same result, and as the rule written out here says |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, path in sessions(tmp):
        offline, err = blame(repo, path, "offline", [])
        if offline is None or not offline.get("turns"):
            continue
        answers = {str(t["turn"]): {k: t[k] for k in
                                    ("turn", "applicable", "opportunity", "kind", "scores", "quotes")}
                   for t in offline["turns"] if t["scores"] is not None}
        ans = os.path.join(tmp, "answers.json")
        with open(ans, "w") as f:
            json.dump(answers, f)
        judge = f"command:python3 {script}"
        runs = {}
        for label, extra in [("naive", ["--score-all", "--context-tokens", "0"]),
                             ("budget", ["--score-all", "--context-tokens", BUDGET]),
                             ("sched8", ["--context-tokens", BUDGET]),
                             ("sched1", ["--context-tokens", BUDGET, "--jobs", "1"])]:
            log = os.path.join(tmp, f"{label}.log")
            open(log, "w").close()
            doc, err = blame(repo, path, judge, extra,
                             env={"SAGE_BENCH_LOG": log, "SAGE_BENCH_ANSWERS": ans})
            sent = [tuple(map(int, l.split("\t"))) for l in open(log)]
            runs[label] = (doc, sent, err)
        if any(r[0] is None for r in runs.values()):
            print(f"| {name} | failed: {[r[2] for r in runs.values() if r[2]]} |")
            continue
        same = all(result(r[0]) == result(offline) for r in runs.values())
        want_origin, want_missed, want_asked = truth(offline["turns"])
        o = offline["origin"]
        got_origin = (o["turn"], o["type"]) if o["status"] == "localized" else None
        got_missed = [m["turn"] for m in offline["missed_opportunities"]]
        asked1 = sorted(t for t, _ in runs["sched1"][1])
        independent = (got_origin == want_origin and got_missed == want_missed
                       and asked1 == want_asked)
        same = same and independent
        if not same:
            mismatches.append(name)
        e_naive = estimate(repo, path, ["--score-all", "--context-tokens", "0"])
        e_budget = estimate(repo, path, ["--score-all", "--context-tokens", BUDGET])
        budget_bytes = sum(b for _, b in runs["budget"][1]) or 1
        tok = {"naive": e_naive["input_tokens"], "budget": e_budget["input_tokens"]}
        for k in ("sched8", "sched1"):
            tok[k] = round(e_budget["input_tokens"] * sum(b for _, b in runs[k][1]) / budget_bytes)
        if not tok["naive"]:
            continue
        n_turns = len(offline["turns"])
        o = offline["origin"]
        origin = f"{o['status']} {o.get('turn') or o.get('reason')}"
        rows.append((n_turns, tok, e_budget["largest_prompt_tokens"]))
        print(f"| {name} | {n_turns} | {len(runs['naive'][1])} | {len(runs['sched8'][1])} / "
              f"{len(runs['sched1'][1])} | {tok['naive']:,} | {tok['budget']:,} | "
              f"{tok['sched8']:,} | {tok['sched1']:,} | {tok['sched8'] / tok['naive']:.2f} | "
              f"{tok['sched1'] / tok['naive']:.2f} | {e_naive['largest_prompt_tokens']:,} → "
              f"{e_budget['largest_prompt_tokens']:,} | {origin} | {'yes' if same else 'NO'} |",
              flush=True)
    for label, pick in [("all sessions", lambda t: True), ("sessions of 40+ turns", lambda t: t >= 40)]:
        sel = [tok for t, tok, _ in rows if pick(t)]
        if not sel:
            continue
        naive = sum(t["naive"] for t in sel)
        print(f"\n{label}: {len(sel)}; input tokens naive {naive:,}; budget "
              f"{sum(t['budget'] for t in sel) / naive:.2f}x; budget + scheduling "
              f"{sum(t['sched8'] for t in sel) / naive:.2f}x (--jobs 8), "
              f"{sum(t['sched1'] for t in sel) / naive:.2f}x (--jobs 1)")
    over = [big for _, _, big in rows if big > int(BUDGET)]
    print(f"\nlargest prompt over the budget of {int(BUDGET):,}: {len(over)} of {len(rows)} sessions"
          + (f" (largest {max(over):,})" if over else ""))
    print(f"\nsame origin and missed opportunities as the offline judge in every run: "
          f"{'yes' if not mismatches else 'NO: ' + ', '.join(mismatches)}")
    shutil.rmtree(tmp)
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
