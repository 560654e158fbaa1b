#!/usr/bin/env bash
# Benchmark of issue 11: git sage on two large real Python histories, against git itself in
# the same run, with and without a commit-graph carrying changed-path filters, at 1k / 10k /
# full first-parent depth.
#
#   ansible/ansible   ~46k first-parent commits; lib/ansible/module_utils/urls.py
#   twisted/twisted   ~19k first-parent commits, one (ed075dad73) moving every file into src/;
#                     src/twisted/web/client.py, whose code predates the move
#
# For each: provenance against `git log --first-parent -S` (`--follow -S` for twisted, whose
# file moved), blame-origin with a named session and discovering one, against
# `git log -p -- FILE`; medians by hyperfine, peak RSS by /usr/bin/time -v (provenance against
# the `log -S`, blame-origin against the `log -p`), and the ratios. Usage:
#
#   bench/large_history.sh [ANSIBLE_GIT_DIR TWISTED_GIT_DIR]
#
# Without arguments the histories are cloned (bare, ~600 MB in all) into bench/out/repos.
# The answers are checked against git's before anything is timed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
runs=${RUNS:-5}
need_hyperfine
[ -x /usr/bin/time ] || { apt-get install -y -qq time >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq time; }; }

[ -n "${SAGE_BIN:-}" ] || cargo build --release --locked -q
bin=${SAGE_BIN:-$root/target/release/git-sage}
repos=$out/repos
mkdir -p "$repos"

# A bare copy without and one with a commit-graph (changed-path filters), sharing objects.
prepare() { # name source
  local name=$1 src=$2
  if [ ! -d "$repos/$name.src" ]; then
    case $src in
      http*) git clone -q --bare "$src" "$repos/$name.src" ;;
      *) git clone -q --bare --shared "$src" "$repos/$name.src" ;;
    esac
  fi
  [ -d "$repos/$name.plain" ] || git clone -q --bare --shared "$repos/$name.src" "$repos/$name.plain"
  rm -f "$repos/$name.plain/objects/info/commit-graph"
  rm -rf "$repos/$name.plain/objects/info/commit-graphs"
  if [ ! -d "$repos/$name.graph" ]; then
    git clone -q --bare --shared "$repos/$name.src" "$repos/$name.graph"
    git -C "$repos/$name.graph" commit-graph write --reachable --changed-paths
  fi
}

prepare ansible "${1:-https://github.com/ansible/ansible}"
prepare twisted "${2:-https://github.com/twisted/twisted}"

# A small session naming the task, so blame-origin reads no history to find one.
session=$out/large-session.yaml
cat > "$session" <<'YAML'
schema: sage.session/1
task: harden the HTTP client against server-side request forgery
turns:
  - text: "Plan: restrict the URLs the client may fetch to https and public addresses."
  - text: "Implemented; the tests pass."
YAML

report=$out/large_history.md
: > "$report"
row() { printf '%s\n' "$*" | tee -a "$report"; }
row "| repo | depth | graph | provenance | git log -S | ratio | RSS ours / git (MB) | blame-origin --session | discovering | git log -p FILE | ratios | RSS named / discovering / git (MB) |"
row "|---|---|---|---|---|---|---|---|---|---|---|---|"

median() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]["median"])' "$@"; }
rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident/ {print int($6/1024)}'; }

case_for() { # name file fragment follow
  local name=$1 file=$2 frag=$3 follow=$4
  local anchor=$out/large-$name.yaml
  printf 'id: large-%s\ncwe: 918\nfile: %s\nfragments:\n  - %s\n' "$name" "$file" "'$frag'" > "$anchor"
  for kind in plain graph; do
    local g=$repos/$name.$kind
    local tip total
    tip=$(git -C "$g" rev-parse HEAD)
    total=$(git -C "$g" rev-list --first-parent --count HEAD)
    for depth in 1000 10000 full; do
      local base
      if [ "$depth" = full ]; then
        base=$(git -C "$g" rev-list --first-parent --max-parents=0 HEAD | tail -n1)
        depth=$total
      else
        base=$(git -C "$g" rev-parse "HEAD~$depth")
      fi
      local pick="git -C $g log --first-parent --reverse --format=%H -S'$frag' $base..$tip -- $file"
      [ "$follow" = yes ] && pick="git -C $g log --first-parent --follow --reverse --format=%H -S'$frag' $base..$tip -- $file"
      # Same answer first: git's first commit adding the fragment is ours, or neither has one.
      # The truth is `log -S` over every name git's own rename tracking gives the file:
      # `--follow -S` (timed below, as a user would type it) loses the file's old name when
      # the range starts before the move, since -S hides the rename commit --follow learns from.
      local ours theirs names
      ours=$("$bin" -C "$g" provenance --base "$base" "$tip" --finding "$anchor" --format json |
        python3 -c 'import json,sys; w=json.load(sys.stdin)["provenance"]["introducing_write"]; print(w["commit"] if w else "")')
      names=$(git -C "$g" log --follow --name-only --format= "$tip" -- "$file" | sort -u)
      # shellcheck disable=SC2086 # one argument per name
      theirs=$(git -C "$g" log --first-parent --reverse --format=%H -S"$frag" "$base..$tip" -- $names | head -n1)
      if [ -n "$ours" ] && [ "$ours" != "$theirs" ]; then
        echo "MISMATCH on $name at depth $depth: git-sage $ours, git $theirs" >&2
        exit 1
      fi
      hyperfine -N --warmup 1 --runs "$runs" --export-json "$out/large-prov.json" \
        "$bin -C $g provenance --base $base $tip --finding $anchor --format json" \
        "$pick" --output=null >/dev/null 2>&1
      local p r
      p=$(median "$out/large-prov.json" 0)
      r=$(median "$out/large-prov.json" 1)
      local blame="$bin -C $g blame-origin --base $base $tip --finding $anchor --session $session --format json -q --no-cache"
      local logp="git -C $g log -p --first-parent $base..$tip -- $file"
      hyperfine -N --warmup 1 --runs "$runs" --export-json "$out/large-blame.json" \
        "$blame" "$logp" --output=null >/dev/null 2>&1
      local b l
      b=$(median "$out/large-blame.json" 0)
      l=$(median "$out/large-blame.json" 1)
      # Without a named session: discovery looks through the range for one (none here).
      local found="$bin -C $g blame-origin --base $base $tip --finding $anchor --format json -q --no-cache"
      hyperfine -N --warmup 1 --runs "$runs" --export-json "$out/large-found.json" \
        "$found" --output=null >/dev/null 2>&1
      local d
      d=$(median "$out/large-found.json" 0)
      local po pg mo md mg
      po=$(rss "$bin" -C "$g" provenance --base "$base" "$tip" --finding "$anchor" --format json)
      pg=$(rss sh -c "$pick")
      mo=$(rss $blame)
      md=$(rss $found)
      mg=$(rss $logp)
      python3 - "$name" "$depth" "$kind" "$p" "$r" "$b" "$d" "$l" "$po" "$pg" "$mo" "$md" "$mg" <<'PY' | tee -a "$report"
import sys
name, depth, kind, p, r, b, d, l, po, pg, mo, md, mg = sys.argv[1:]
p, r, b, d, l = map(float, (p, r, b, d, l))
print(f"| {name} | {int(depth):,} | {'changed-path filters' if kind == 'graph' else 'none'} | "
      f"{p*1000:.0f} ms | {r*1000:.0f} ms | {p/r:.2f} | {po} / {pg} | "
      f"{b*1000:.0f} ms | {d*1000:.0f} ms | {l*1000:.0f} ms | {b/l:.2f} / {d/l:.2f} | {mo} / {md} / {mg} |")
PY
      # Cold: the page cache dropped before every run of either side (full depth, with a
      # graph), where the machine lets us; git-sage keeps no cache of its own, so every run
      # above is a first run in its sense.
      if [ "$kind" = graph ] && [ "$depth" = "$total" ] && [ -w /proc/sys/vm/drop_caches ]; then
        local drop="sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'"
        hyperfine -N --runs "${COLD_RUNS:-3}" --prepare "$drop" --export-json "$out/large-cold.json" \
          "$bin -C $g provenance --base $base $tip --finding $anchor --format json" "$pick" \
          "$blame" "$found" "$logp" --output=null >/dev/null 2>&1
        python3 - "$name" "$out/large-cold.json" <<'PY' >> "$out/large-cold.md"
import json, sys
name, path = sys.argv[1:]
m = [r["median"] * 1000 for r in json.load(open(path))["results"]]
print(f"| {name} | {m[0]:.0f} ms | {m[1]:.0f} ms | {m[0]/m[1]:.2f} | {m[2]:.0f} ms | {m[3]:.0f} ms | "
      f"{m[4]:.0f} ms | {m[2]/m[4]:.2f} / {m[3]/m[4]:.2f} |")
PY
      fi
    done
  done
}

rm -f "$out/large-cold.md"
case_for ansible lib/ansible/module_utils/urls.py 'class Request:' no
case_for twisted src/twisted/web/client.py 'class Agent(_AgentBase):' yes
if [ -s "$out/large-cold.md" ]; then
  row ""
  row "Cold page cache (dropped before every run of either side), full depth, changed-path filters:"
  row ""
  row "| repo | provenance | git log -S | ratio | blame-origin --session | discovering | git log -p FILE | ratios |"
  row "|---|---|---|---|---|---|---|---|"
  cat "$out/large-cold.md" | tee -a "$report"
else
  row "(no cold rows: the page cache cannot be dropped here)"
fi
echo "targets (issue 48): with filters provenance <= 0.35x git log -S (--follow -S for twisted); blame-origin <= 2x git log -p FILE, with a named session and discovering; RSS <= 1.3x git's" | tee -a "$report"
