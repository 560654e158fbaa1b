#!/usr/bin/env python3
"""The judge's largest prompt at the default context budget on the real 51-turn Claude Code
sessions the public entireio/cli repository checkpoints (issue 48, item 5), and the estimate
against the prompts actually sent.

Each session gets the throw-away repository of bench/schedule.py (an agent write no turn maps
to, so every turn is asked). A `command:` judge answers each prompt with the offline judge's
answer and keeps the prompt; the prompts are counted in bytes and, where the Python tiktoken
package is installed, in o200k_base tokens from the tokenizer file tiktoken-rs ships (no
download). `--estimate` for anthropic:claude-sonnet-4-5 gives the figures to compare.

    python3 bench/largest_prompt.py [target/release/git-sage] [CHECKPOINT_PATH...]
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
args = sys.argv[1:]
binary = os.path.join(ROOT, "target/release/git-sage")
if args and os.path.isfile(args[0]):
    binary = args.pop(0)
MIRROR = "/work/.mirror/entireio+cli/repo"
# The sessions of 51 turns among the checkpoints (turn counts by `git sage turns`).
SESSIONS = args or ["2a/29469db94c/0/full.jsonl", "36/1bace85e2c/0/full.jsonl",
                    "3a/a278c851a7/0/full.jsonl", "3f/603dd13c2c/0/full.jsonl"]
BUDGET_BYTES = 160_000
BUDGET_TOKENS = 32_000

ANSWER = r'''
import json, os, re, sys
prompt = sys.stdin.read()
turn = int(re.findall(r"Score turn (\d+) of the log above", prompt)[-1])
open(os.path.join(os.environ["SAGE_BENCH_DIR"], f"p{turn}.txt"), "w").write(prompt)
print(json.dumps(json.load(open(os.environ["SAGE_BENCH_ANSWERS"]))[str(turn)]))
'''


def tokenizer():
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
    except ImportError:
        return None
    found = glob.glob(os.path.expanduser(
        "~/.cargo/registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken"))
    if not found:
        return None
    pat = "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""",
        r"""\s+"""])
    return tiktoken.Encoding("o200k", pat_str=pat, mergeable_ranks=load_tiktoken_bpe(found[0]),
                             special_tokens={})


def main():
    if not os.path.isdir(MIRROR):
        sys.exit(f"{MIRROR} is missing: fetch github:entireio/cli first")
    from schedule import make_repo  # the same throw-away repository as bench/schedule.py
    tmp = tempfile.mkdtemp(prefix="sage-prompt-")
    repo = make_repo(tmp)
    script = os.path.join(tmp, "answer.py")
    open(script, "w").write(ANSWER)
    enc = tokenizer()

    def blame(session, judge, extra, env=None):
        cmd = [binary, "-C", repo, "blame-origin", "--base", "main", "--session", session,
               "--anchor-file", "app.py", "--anchor-snippet", "os.system(cmd)", "--judge", judge,
               "--no-cache", "-q", "--format", "json", *extra]
        run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
        return json.loads(run.stdout)

    print(f"default budget {BUDGET_TOKENS:,} tokens; target: largest prompt <= {BUDGET_BYTES:,} bytes, "
          "estimate within 15% of the prompts sent\n")
    print("| session | turns | prompts | largest prompt (bytes) | largest (tokens, counted) | "
          "largest (tokens, estimate) | input tokens counted | estimate | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p in SESSIONS:
        session = os.path.join(tmp, p.replace("/", "_"))
        with open(session, "wb") as f:
            f.write(subprocess.run(["git", "show", f"entire/checkpoints/v1:{p}"],
                                   env={**os.environ, "GIT_DIR": MIRROR},
                                   capture_output=True, check=True).stdout)
        offline = blame(session, "offline", [])
        answers = {str(t["turn"]): {k: t[k] for k in
                                    ("turn", "applicable", "opportunity", "kind", "scores", "quotes")}
                   for t in offline["turns"] if t["scores"] is not None}
        ans = os.path.join(tmp, "answers.json")
        json.dump(answers, open(ans, "w"))
        prompts = os.path.join(tmp, "prompts")
        subprocess.run(["rm", "-rf", prompts], check=True)
        os.makedirs(prompts)
        blame(session, f"command:python3 {script}", ["--score-all"],
              {"SAGE_BENCH_DIR": prompts, "SAGE_BENCH_ANSWERS": ans})
        texts = [open(f).read() for f in glob.glob(os.path.join(prompts, "p*.txt"))]
        est = blame(session, "anthropic:claude-sonnet-4-5", ["--estimate", "--score-all"],
                    {"ANTHROPIC_API_KEY": ""})["estimates"][0]
        largest = max(len(t.encode()) for t in texts)
        if enc:
            counts = [len(enc.encode_ordinary(t)) for t in texts]
            counted, big = f"{sum(counts):,}", f"{max(counts):,}"
            err = f"{(est['input_tokens'] - sum(counts)) / sum(counts):+.1%}"
        else:
            counted, big, err = "n/a", "n/a", "n/a (pip install tiktoken)"
        print(f"| {p} | {len(offline['turns'])} | {len(texts)} | {largest:,} | {big} | "
              f"{est['largest_prompt_tokens']:,} | {counted} | {est['input_tokens']:,} | {err} |",
              flush=True)


if __name__ == "__main__":
    main()
