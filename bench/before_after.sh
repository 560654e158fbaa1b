#!/usr/bin/env bash
# Issue 45's guard against regressions: every benchmark in bench/ run by the binary of
# BEFORE_REV (default 927befc, before the issue's refactoring) and by this checkout's, one
# after the other in the same run, and each git sage command's median compared (no more than
# 5% slower). The references the benchmarks time against (jq, git, bandit) run with both, so
# their own ratio shows the run's noise. Also the crate's release build time and the
# incremental debug rebuild after touching src/report/text.rs, for both revisions.
#
#   bench/before_after.sh [BENCH...]   (default: provenance turns offline_judge e2e batch
#                                       guard screen redaction)
#
# large_history.sh is left out unless named: it clones ~600 MB of public histories.
# SKIP_BUILD_TIMES=1 skips the build timings (to re-run benchmarks alone).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
before_rev=${BEFORE_REV:-927befc}
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(provenance turns offline_judge e2e batch guard screen redaction)
export RUNS=${RUNS:-5}
need_hyperfine

wt=$out/before-$before_rev
[ -d "$wt" ] || git worktree add -f -q "$wt" "$before_rev"
btarget=$out/before-target
# Build times: the crate alone (its dependencies built), release, then a debug rebuild after
# touching the text report; the same steps for both revisions.
build_times() { # dir target label
  (cd "$1" && CARGO_TARGET_DIR=$2 cargo build --release --locked -q && CARGO_TARGET_DIR=$2 cargo build --locked -q)
  (cd "$1" && CARGO_TARGET_DIR=$2 cargo clean -q --release -p git-sage)
  local t0 t1 t2
  t0=$(date +%s.%N)
  (cd "$1" && CARGO_TARGET_DIR=$2 cargo build --release --locked -q)
  t1=$(date +%s.%N)
  touch "$1/src/report/text.rs"
  (cd "$1" && CARGO_TARGET_DIR=$2 cargo build --locked -q)
  t2=$(date +%s.%N)
  python3 -c "print(f'$3: release build of the crate {$t1-$t0:.1f} s; debug rebuild after touching report/text.rs {$t2-$t1:.1f} s')"
}
if [ -z "${SKIP_BUILD_TIMES:-}" ]; then
  build_times "$wt" "$btarget" before | tee "$out/build-times.txt"
  build_times "$root" "$root/target" after | tee -a "$out/build-times.txt"
else
  # Only the binaries: SKIP_BUILD_TIMES=1 re-runs benchmarks without timing builds.
  (cd "$wt" && CARGO_TARGET_DIR=$btarget cargo build --release --locked -q)
  cargo build --release --locked -q
fi
before=$btarget/release/git-sage
after=$root/target/release/git-sage

for b in "${benches[@]}"; do
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    echo "== $b ($side)" >&2
    if [ "$b" = redaction ]; then
      # redaction.sh compares two binaries itself: give it this pair.
      BEFORE_BIN=$before bash "bench/$b.sh" >/dev/null
      cp "$out/redaction.json" "$out/ba-$b-$side.json"
      break
    fi
    SAGE_BIN=$bin bash "bench/$b.sh" >/dev/null
    json=$out/$b.json
    [ "$b" = large_history ] && json=$out/large-prov.json
    cp "$json" "$out/ba-$b-$side.json"
  done
done

python3 - "$out" "${benches[@]}" <<'PY'
import json, sys, os
out, benches = sys.argv[1], sys.argv[2:]
worst = 0.0
print(f"{'benchmark':<16}{'command':<22}{'before s':>10}{'after s':>10}{'ratio':>8}")
for b in benches:
    def medians(side):
        p = os.path.join(out, f"ba-{b}-{side}.json")
        return {r["command"]: r["median"] for r in json.load(open(p))["results"]}
    if b == "redaction":
        m = medians("before")
        rows = [("record", m["before"], m["after"])]
    else:
        x, y = medians("before"), medians("after")
        rows = [(c, x[c], y[c]) for c in x if c in y]
    for c, t0, t1 in rows:
        r = t1 / t0
        print(f"{b:<16}{c[:21]:<22}{t0:>10.4f}{t1:>10.4f}{r:>8.2f}")
print("(a reference's ratio, jq/git/bandit, is the run's noise)")
PY
[ -z "${SKIP_BUILD_TIMES:-}" ] && cat "$out/build-times.txt" || true
