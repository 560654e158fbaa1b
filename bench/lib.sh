# Shared by the benchmark scripts (sourced, not run): work from the repository root, results
# under bench/out (or $BENCH_OUT), and hyperfine installed from Debian's packages if missing.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
out=${BENCH_OUT:-$root/bench/out}
mkdir -p "$out"

need_hyperfine() {
  command -v hyperfine >/dev/null 2>&1 || { apt-get install -y -qq hyperfine >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq hyperfine; }; }
}
