#!/usr/bin/env bash
# Benchmark of issue 4/7: `git sage blame-origin --judge offline --format json` on a repository
# of 2,000 commits with a 200-turn session of 50 writes, against `git log -p BASE..TIP -- FILE`
# (git given the same path) in the same run. Prints both medians and the ratio (target <= 2).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${RUNS:-10}
need_hyperfine

[ -n "${SAGE_BIN:-}" ] || cargo build --release --locked -q
bin=${SAGE_BIN:-$root/target/release/git-sage}
repo=$out/e2e-repo
if [ ! -d "$repo/.git" ]; then
  rm -rf "$repo"
  git init -q -b main "$repo"
  python3 bench/gen_e2e_repo.py | git -C "$repo" fast-import --quiet
  git -C "$repo" checkout -q main
  git -C "$repo" gc -q
fi
base=$(git -C "$repo" rev-list --max-parents=0 main)
cat > "$out/e2e-anchor.yaml" <<'YAML'
id: e2e-ssrf
cwe: 918
file: media/fetcher.py
fragments:
  - 'if not url.startswith("https://"):'
YAML
"$bin" -C "$repo" blame-origin --base "$base" --finding "$out/e2e-anchor.yaml" --format json --no-cache -q |
  python3 -c 'import json,sys; d=json.load(sys.stdin); p=d["provenance"]; print("check: introduced at turn", p["introducing_write"]["turn"], "by", p["introducing_write"]["mapped_by"], "| origin", d["origin"]["status"], d["origin"].get("turn"), d["origin"].get("type"), "|", len(d["turns"]), "turns")'
hyperfine -N --warmup 2 --runs "$runs" --export-json "$out/e2e.json" \
  -n git-sage "$bin -C $repo blame-origin --base $base --finding $out/e2e-anchor.yaml --format json --no-cache -q" \
  -n "git log -p" "git -C $repo log -p $base..main -- media/fetcher.py" --output=null >&2
python3 - "$out/e2e.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
ours, ref = r["git-sage"]["median"], r["git log -p"]["median"]
print(f"git-sage blame-origin median: {ours*1000:.1f} ms")
print(f"git log -p median:            {ref*1000:.1f} ms")
print(f"ratio ours/git log -p: {ours/ref:.2f} (target <= 2)")
PY
