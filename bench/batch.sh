#!/usr/bin/env bash
# Benchmark of issue 6/7: `git sage batch` on 200 generated cases (each a repository with 10
# agent commits and a 20-turn session; offline judge) against a loop that calls
# `git sage blame-origin` once per case with the same two workers (`xargs -P 2`, as fair to
# `--cases 2`), and `batch --cases 2` against `--cases 1`, in the same run. Prints the medians
# and the ratios (targets: loop/batch >= 3, jobs1/jobs2 >= 1.6).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${RUNS:-10}
cases=${CASES:-200}
need_hyperfine

[ -n "${SAGE_BIN:-}" ] || cargo build --release --locked -q
bin=${SAGE_BIN:-$root/target/release/git-sage}
corpus=$out/batch-corpus-$cases
[ -f "$corpus/manifest.yaml" ] || python3 bench/gen_batch_corpus.py "$corpus" "$cases"

# The loop a user would write without batch: one process per case, same analysis, same output
# (each case's report in its own file), two at a time as `--cases 2` runs them.
cat > "$out/batch-loop.sh" <<SH
#!/bin/sh
cd "$corpus"
ls -d case*/ | xargs -P 2 -I{} "$bin" -C {} blame-origin agent --base main --finding ../finding.yaml --format json -q --no-cache --out "$out/batch-loop-out/{}report.json"
SH
rm -rf "$out/batch-loop-out"
for d in "$corpus"/case*/; do mkdir -p "$out/batch-loop-out/$(basename "$d")"; done
chmod +x "$out/batch-loop.sh"

res=$out/batch-results.jsonl
"$bin" batch "$corpus/manifest.yaml" --results "$res" -q --format json --no-cache |
  python3 -c 'import json,sys; d=json.load(sys.stdin); o=d["overall"]; print("check:", d["ok"], "of", d["cases"], "analysed |", o["provenance"], "| origin", o["origin_types"])'
n=$(wc -l < "$res")
[ "$n" -eq "$cases" ] || { echo "expected $cases results, got $n" >&2; exit 1; }

hyperfine -N --warmup 1 --runs "$runs" --export-json "$out/batch.json" \
  --prepare "rm -f $res" \
  -n "batch --cases 2" "$bin batch $corpus/manifest.yaml --results $res -q --no-cache --cases 2" \
  -n "batch --cases 1" "$bin batch $corpus/manifest.yaml --results $res -q --no-cache --cases 1" \
  -n "blame-origin loop (xargs -P 2)" "$out/batch-loop.sh" --output=null >&2
python3 - "$out/batch.json" "$cases" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
j2, j1, loop = r["batch --cases 2"], r["batch --cases 1"], r["blame-origin loop (xargs -P 2)"]
n = int(sys.argv[2])
print(f"batch --cases 2 median:    {j2*1000:8.1f} ms ({j2/n*1000:.2f} ms/case)")
print(f"batch --cases 1 median:    {j1*1000:8.1f} ms")
print(f"loop, xargs -P 2, median:   {loop*1000:8.1f} ms ({loop/n*1000:.2f} ms/case)")
print(f"ratio loop/batch:   {loop/j2:.2f} (target >= 3)")
print(f"ratio cases1/cases2: {j1/j2:.2f} (target >= 1.6)")
PY
