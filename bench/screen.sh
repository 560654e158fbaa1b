#!/usr/bin/env bash
# Benchmark of issue 7/7: `git sage screen` on a range that changes 2,000 Python files, against
# `python3 -m bandit -r` on the same files (a checkout of the tip's svc/), in the same run.
# Prints both medians and the ratio (target <= 1.2: our layers add little on top of Bandit).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${RUNS:-5}
files=${FILES:-2000}
need_hyperfine
python3 -m bandit --version >/dev/null 2>&1 || python3 -m pip install -q bandit

[ -n "${SAGE_BIN:-}" ] || cargo build --release --locked -q
bin=${SAGE_BIN:-$root/target/release/git-sage}
repo=$out/screen-repo-$files
if [ ! -d "$repo/.git" ]; then
  rm -rf "$repo"
  git init -q -b main "$repo"
  python3 bench/gen_screen_repo.py "$files" | git -C "$repo" fast-import --quiet
  git -C "$repo" checkout -q agent
fi
"$bin" -C "$repo" screen agent --base main --format json |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print("check:", d["counts"], "| bandit", d["bandit"]["status"])'

hyperfine -N -i --warmup 1 --runs "$runs" --export-json "$out/screen.json" \
  -n "git sage screen" "$bin -C $repo screen agent --base main --format json" \
  -n "bandit -r" "python3 -m bandit -q -f json -r $repo/svc" --output=null >&2
python3 - "$out/screen.json" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
ours, ref = r["git sage screen"], r["bandit -r"]
print(f"git sage screen median: {ours:.2f} s")
print(f"bandit -r median:       {ref:.2f} s")
print(f"ratio screen/bandit: {ours/ref:.2f} (target <= 1.2)")
PY
