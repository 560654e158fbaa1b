#!/usr/bin/env bash
# Held-out measurement of `git sage screen`: BenchmarkPython, SVEN, Semgrep's rule tests and a
# negative control of ordinary code (pip and requests; pytest and Twisted), each split by a hash
# into a dev half (tuning allowed, listed by --list) and a report half (never tuned on, never
# listed: the figures the targets are judged on); with --dev also CyberSecEval, all development.
# Data: the pinned commits of the bare mirrors under $SAGE_MIRROR (default /work/.mirror), else
# blobless clones in the work directory. BIN=path/to/git-sage skips the release build; WORK
# (default bench/out/heldout) keeps the repositories, the clone cache and heldout.json.
# Arguments go to the script: [--dev] [--only-dev] [--fresh] [--list SET]; --fresh adds the set of
# bench/advisories.py (fix commits of the PyPA advisory database), held out and measured once.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=${WORK:-$root/bench/out/heldout}
python3 -m bandit --version >/dev/null 2>&1 || python3 -m pip install -q bandit
if [ -z "${BIN:-}" ]; then
  cargo build --release --locked -q
  BIN=$root/target/release/git-sage
fi
mkdir -p "$work"
python3 bench/heldout.py "$BIN" "$work" "$@"
