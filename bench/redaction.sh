#!/usr/bin/env bash
# Benchmark of issue 43: redaction before and after the change that redacts decoded values,
# secret-named assignments however plain, SQL passwords and JSON nested to any depth.
# `git sage record --session FILE` (which redacts the whole document and writes it into
# .sage/sessions/) on a generated 200 MB Claude Code session, by the binary of BEFORE_REV
# (default e0fbcfb, before the change) and by this checkout's, in the same run; prints both
# medians and the ratio (target: at most 10% slower).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${RUNS:-5}
size_mb=${SIZE_MB:-200}
before_rev=${BEFORE_REV:-e0fbcfb}
need_hyperfine

cargo build --release --locked -q
after=$root/target/release/git-sage
before=${BEFORE_BIN:-}
if [ -z "$before" ]; then
  wt=$out/before-$before_rev
  [ -d "$wt" ] || git worktree add -f -q "$wt" "$before_rev"
  (cd "$wt" && CARGO_TARGET_DIR=$out/before-target cargo build --release --locked -q)
  before=$out/before-target/release/git-sage
fi
file=$out/claude-${size_mb}mb.jsonl
[ -s "$file" ] || python3 bench/gen_claude_jsonl.py "$size_mb" > "$file"
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
git -C "$repo" init -q
echo "input: $file ($(du -h "$file" | cut -f1))"

cd "$repo"
HOME=$repo hyperfine -N --warmup 1 --runs "$runs" --export-json "$out/redaction.json" \
  --prepare "rm -rf $repo/.sage" \
  -n before "$before record --agent claude-code --session $file --max-size 1024 -q" \
  -n after "$after record --agent claude-code --session $file --max-size 1024 -q" >&2
python3 - "$out/redaction.json" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
b, a = r["before"], r["after"]
print(f"record, before: {b:.2f} s   after: {a:.2f} s")
print(f"ratio after/before: {a/b:.3f} (target <= 1.10)")
PY
