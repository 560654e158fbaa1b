#!/usr/bin/env bash
# Benchmark of issue 8/9: `git sage guard check` answering a Claude Code PreToolUse hook for a
# write, in a security task, over a generated 1,000-turn session (the offline judge scores the
# task's turns so far), against `git sage turns` on the same file — the parse the check needs
# anyway — with the same input and one process each. Prints both medians and the ratio
# (target: the check <= 50 ms).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${RUNS:-10}
need_hyperfine

cargo build --release --locked -q
bin=$root/target/release/git-sage
file=$out/claude-1000-turns.jsonl
[ -s "$file" ] || python3 bench/gen_claude_jsonl.py 10 > "$file"
turns=$("$bin" turns "$file" --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["turns"]))')
echo "input: $file ($turns turns)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$work" init -q
# The task is a security one, so the check judges every turn of it.
git -C "$work" config sage.task "Fix the SSRF in download_preview (CWE-918)"
python3 - "$file" "$work" > "$work/hook.json" <<'PY'
import json, sys
print(json.dumps({"session_id": "bench", "transcript_path": sys.argv[1], "cwd": sys.argv[2],
    "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Write",
    "tool_input": {"file_path": sys.argv[2] + "/media/fetcher.py", "content": "x = 1\n"},
    "tool_use_id": "toolu_bench"}))
PY
cd "$work"
# Both through the same shell (hyperfine before 1.16 has no --input for stdin).
HOME=$work hyperfine --shell=bash --warmup 1 --runs "$runs" --export-json "$out/guard.json" \
  -n check "$bin guard check --agent claude-code < $work/hook.json" \
  -n turns "$bin turns $file --format json < $work/hook.json" --output=null >&2
python3 - "$out/guard.json" "$work/.sage/guard.log" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
c, t = r["check"], r["turns"]
last = json.loads(open(sys.argv[2]).read().splitlines()[-1])
print(f"decision: {last['decision']} ({last['facts']['turns_judged']} turns judged)")
print(f"guard check median: {c*1000:.1f} ms (target <= 50 ms)")
print(f"git sage turns median: {t*1000:.1f} ms")
print(f"ratio check/turns: {c/t:.2f}")
PY
