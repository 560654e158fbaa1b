#!/usr/bin/env bash
# Benchmark of issue 8/9: `git sage guard check` answering a Claude Code PreToolUse hook for a
# write, in a security task, over a generated 1,000-turn session, against `git sage turns` on
# the same file (one parse of the whole log), with the same input and one process each.
# Two checks are timed: "resumed", the check of a session the guard has checked before, after
# the agent appended its next turn (what each write of a real session costs: the record in
# .git/sage/guard/sessions says where to read from and what was judged); and "whole", the
# first check of a session that is already 1,000 turns long (read and judged whole).
# Prints the medians and the ratios (target: the check <= 50 ms).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${RUNS:-10}
need_hyperfine

[ -n "${SAGE_BIN:-}" ] || cargo build --release --locked -q
bin=${SAGE_BIN:-$root/target/release/git-sage}
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
# The resumed check reads a copy that grows by the session's last turn (its last 8 lines).
grow=$work/session.jsonl
head -n -8 "$file" > "$work/before.jsonl"
tail -n 8 "$file" > "$work/after.jsonl"
sed "s#$file#$grow#" "$work/hook.json" > "$work/hook-grow.json"
sessions=$work/.git/sage/guard/sessions
cd "$work"
# All through the same shell (hyperfine before 1.16 has no --input for stdin).
HOME=$work hyperfine --shell=bash --warmup 1 --runs "$runs" --export-json "$out/guard.json" \
  --prepare "cp $work/before.jsonl $grow && $bin guard check --agent claude-code < $work/hook-grow.json >/dev/null && cat $work/after.jsonl >> $grow" \
  -n resumed "$bin guard check --agent claude-code < $work/hook-grow.json" \
  --prepare "rm -rf $sessions" \
  -n whole "$bin guard check --agent claude-code < $work/hook.json" \
  --prepare true \
  -n turns "$bin turns $file --format json < $work/hook.json" --output=null >&2
python3 - "$out/guard.json" "$work/.sage/guard.log" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
c, w, t = r["resumed"], r["whole"], r["turns"]
last = json.loads(open(sys.argv[2]).read().splitlines()[-1])
print(f"decision: {last['decision']} ({last['why']})")
print(f"guard check, resumed: {c*1000:.1f} ms (target <= 50 ms)")
print(f"guard check, whole:   {w*1000:.1f} ms")
print(f"git sage turns:       {t*1000:.1f} ms")
print(f"ratio resumed/turns: {c/t:.2f}; whole/turns: {w/t:.2f}")
PY
