#!/usr/bin/env bash
# Measurement of issue 7/7 on real data: `git sage screen` over SecurityEval's 121 insecure
# samples and this repository's 20 secure rewrites (tests/fixtures/screen/secure/); prints how
# many files each layer flags and the candidates (targets: L2 ∪ L3 >= 75% of the insecure,
# <= 15% of the secure). Needs ../shared/fixtures/real/securityeval/dataset.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
data=${SECURITYEVAL:-$root/../shared/fixtures/real/securityeval/dataset.jsonl}
[ -f "$data" ] || { echo "skipped: $data is absent"; exit 0; }
python3 -m bandit --version >/dev/null 2>&1 || python3 -m pip install -q bandit
cargo build --release --locked -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/securityeval.py "$root/target/release/git-sage" "$data" tests/fixtures/screen/secure "$work" "$@"
