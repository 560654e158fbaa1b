#!/usr/bin/env bash
# Benchmark of issue 6/9: the offline judge on a generated 1,000-turn Claude Code session
# (`git sage judge FILE --cwe 918 --format json`, prefix protocol, no cache) against
# `git sage turns FILE --format json` on the same file — the parse the judge needs anyway.
# Prints both medians and the ratio (targets: judge <= 0.2 s, ratio <= 2).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${RUNS:-10}
need_hyperfine

[ -n "${SAGE_BIN:-}" ] || cargo build --release --locked -q
bin=${SAGE_BIN:-$root/target/release/git-sage}
file=$out/claude-1000-turns.jsonl
# about 330 turns per 3.3 MB of the generator's records
[ -s "$file" ] || python3 bench/gen_claude_jsonl.py 10 > "$file"
turns=$("$bin" turns "$file" --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["turns"]))')
echo "input: $file ($turns turns)"
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT

HOME=$home hyperfine -N --warmup 1 --runs "$runs" --export-json "$out/offline_judge.json" \
  -n judge "$bin judge $file --cwe 918 --format json --no-cache -q" \
  -n turns "$bin turns $file --format json" --output=null >&2
python3 - "$out/offline_judge.json" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
j, t = r["judge"], r["turns"]
print(f"offline judge median: {j*1000:.1f} ms (target <= 200 ms)")
print(f"git sage turns median: {t*1000:.1f} ms")
print(f"ratio judge/turns: {j/t:.2f} (target <= 2)")
PY
