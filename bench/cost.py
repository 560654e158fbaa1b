#!/usr/bin/env python3
"""What a case's judge calls cost, naive against the default context budget (issue 22).

For every real third-party transcript under ../shared/fixtures/real (or the folders given),
`git sage judge SESSION --estimate` is run twice with the same judge: with `--context-tokens 0`
(the full prefix for every turn: the naive cost) and with the default budget of the price
table. Nothing is sent anywhere. Prints one row per session and the totals over sessions of
40+ turns, the sessions the budget is meant for.

    cargo build --release --locked
    python3 bench/cost.py [target/release/git-sage] [--judge anthropic:claude-sonnet-4-5] [DIR...]
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = sys.argv[1:]
binary = os.path.join(ROOT, "target/release/git-sage")
if args and not args[0].startswith("--") and os.path.isfile(args[0]):
    binary = args.pop(0)
judge = "anthropic:claude-sonnet-4-5"
if "--judge" in args:
    i = args.index("--judge")
    judge = args[i + 1]
    del args[i:i + 2]
dirs = args or [os.path.join(ROOT, "..", "shared", "fixtures", "real")]
SKIP = {"findings", "securityeval"}


def sessions():
    for d in dirs:
        for top, subs, files in os.walk(d):
            subs[:] = sorted(s for s in subs if s not in SKIP)
            for f in sorted(files):
                if f.endswith((".jsonl", ".json", ".md", ".yaml")) and f != "SOURCES.md":
                    yield os.path.join(top, f)


def estimate(path, extra):
    run = subprocess.run([binary, "judge", path, "--judge", judge, "--estimate", "--no-cache",
                          "--format", "json", *extra], capture_output=True, text=True,
                         env={**os.environ, "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""})
    if run.returncode != 0:
        return None
    return json.loads(run.stdout)


rows = []
print(f"judge {judge}; naive = --context-tokens 0, budget = the price table's default\n")
print("| session | turns | calls | naive input tokens | budget input tokens | ratio | naive largest | budget largest | naive USD | budget USD |")
print("|---|---|---|---|---|---|---|---|---|---|")
for p in sessions():
    naive = estimate(p, ["--context-tokens", "0"])
    if naive is None:
        continue
    budget = estimate(p, [])
    a, b = naive["estimates"][0], budget["estimates"][0]
    if a["calls"] == 0:
        continue
    ratio = b["input_tokens"] / a["input_tokens"]
    rows.append((naive["turns"], a, b))
    usd = lambda e: "-" if e["cost_usd"] is None else f"{e['cost_usd']:.3f}"
    print(f"| {os.path.relpath(p, dirs[0])} | {naive['turns']} | {a['calls']} | {a['input_tokens']:,} | "
          f"{b['input_tokens']:,} | {ratio:.2f} | {a['largest_prompt_tokens']:,} | "
          f"{b['largest_prompt_tokens']:,} | {usd(a)} | {usd(b)} |")
long = [(a, b) for t, a, b in rows if t >= 40]
if long:
    na = sum(a["input_tokens"] for a, _ in long)
    nb = sum(b["input_tokens"] for _, b in long)
    print(f"\nsessions of 40+ turns: {len(long)}; input tokens {na:,} naive, {nb:,} with the budget: "
          f"{nb / na:.2f}x (target <= 0.25x)")
else:
    print("\nno session of 40+ turns")
