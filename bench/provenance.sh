#!/usr/bin/env bash
# Benchmark of issue 1/7: `git sage provenance` against git's own pickaxe on a synthetic
# repository of 5,000 first-parent commits (every 5th changes the anchored file; the
# fragment appears at commit 3,000). Prints both medians and the ratio (target ≤ 0.5).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${BENCH_OUT:-$root/bench/out}
mkdir -p "$out"
runs=${RUNS:-20}

command -v hyperfine >/dev/null 2>&1 || {
  echo "installing hyperfine (Debian package)" >&2
  apt-get install -y -qq hyperfine >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq hyperfine; }
}

[ -n "${SAGE_BIN:-}" ] || cargo build --release --locked -q
bin=${SAGE_BIN:-$root/target/release/git-sage}

repo=$out/provenance-repo
if [ ! -d "$repo/.git" ]; then
  rm -rf "$repo"
  git init -q -b main "$repo"
  python3 bench/gen_provenance_repo.py 5000 3000 | git -C "$repo" fast-import --quiet
  git -C "$repo" checkout -q main
  git -C "$repo" gc -q
fi
base=$(git -C "$repo" rev-list --max-parents=0 main)
tip=$(git -C "$repo" rev-parse main)
fragment='if not url.startswith("https://"):'
cat > "$out/anchor.yaml" <<YAML
id: bench-ssrf
cwe: 918
file: media/fetcher.py
fragments:
  - '$fragment'
YAML

# Both must agree on the introducing commit before we time them.
ours=$("$bin" -C "$repo" provenance --base "$base" --finding "$out/anchor.yaml" --format json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["provenance"]["introducing_write"]["commit"])')
theirs=$(git -C "$repo" log --reverse --format=%H -S"$fragment" "$base..$tip" -- media/fetcher.py | head -n1)
echo "introducing write: git-sage $ours, pickaxe $theirs"
[ "$ours" = "$theirs" ] || { echo "MISMATCH" >&2; exit 1; }

hyperfine -N --warmup 3 --runs "$runs" --export-json "$out/provenance.json" \
  -n git-sage "$bin -C $repo provenance --base $base --finding $out/anchor.yaml --format json" \
  -n pickaxe "git -C $repo log --reverse --format=%H -S'$fragment' $base..$tip -- media/fetcher.py" >&2

python3 - "$out/provenance.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
ours, ref = r["git-sage"]["median"], r["pickaxe"]["median"]
print(f"git-sage provenance median: {ours*1000:.1f} ms")
print(f"git log -S (pickaxe) median: {ref*1000:.1f} ms")
print(f"ratio ours/pickaxe: {ours/ref:.2f} (target <= 0.5)")
PY
