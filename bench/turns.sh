#!/usr/bin/env bash
# Benchmark of issue 2/7: `git sage turns --format json` on a generated 200 MB Claude Code
# JSONL against `jq empty` (parse only, the same reading work) on the same file. Prints medians, the ratio (target <= 0.5) and
# peak RSS (target <= the file's size).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${BENCH_OUT:-$root/bench/out}
mkdir -p "$out"
size_mb=${SIZE_MB:-200}
runs=${RUNS:-5}

for tool in hyperfine jq; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "installing $tool (Debian package)" >&2
    apt-get install -y -qq "$tool" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "$tool"; }
  }
done

[ -n "${SAGE_BIN:-}" ] || cargo build --release --locked -q
bin=${SAGE_BIN:-$root/target/release/git-sage}
file=$out/claude-${size_mb}mb.jsonl
[ -s "$file" ] || python3 bench/gen_claude_jsonl.py "$size_mb" > "$file"
bytes=$(stat -c %s "$file")
echo "input: $file ($((bytes / 1024 / 1024)) MiB)"

"$bin" turns "$file" --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("turns:", len(d["turns"]))'

hyperfine -N --warmup 1 --runs "$runs" --export-json "$out/turns.json" \
  -n git-sage "$bin turns $file --format json --from claude-code" \
  -n jq "jq empty $file" --output=null >&2

rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}'; }
ours_kb=$(rss "$bin" turns "$file" --format json)
jq_kb=$(rss jq empty "$file")

python3 - "$out/turns.json" "$ours_kb" "$jq_kb" "$bytes" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
ours, ref = r["git-sage"]["median"], r["jq"]["median"]
ours_kb, jq_kb, size = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(f"git-sage turns median: {ours:.2f} s")
print(f"jq empty median:       {ref:.2f} s")
print(f"ratio ours/jq: {ours/ref:.2f} (target <= 0.5)")
print(f"peak RSS git-sage: {ours_kb/1024:.0f} MiB, jq: {jq_kb/1024:.0f} MiB, file: {size/1024/1024:.0f} MiB "
      f"(ours/file {ours_kb*1024/size:.2f}, target <= 1.0)")
PY
