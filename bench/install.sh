#!/usr/bin/env bash
# Benchmark of issue 44: from nothing to `git sage demo` with the prebuilt binary and its
# installer, against `cargo install` from this checkout, in the same run.
#
# The prebuilt side: `dist build` (cargo-dist, dist-workspace.toml) makes this host's archive,
# its sha256 and the shell installer under target/distrib; a local HTTP server serves them;
# the installer (GIT_SAGE_DOWNLOAD_URL pointing at that server, nothing beyond this machine)
# installs into an empty folder, and the installed binary runs the demo. Timed with hyperfine.
# The reference: `cargo install --locked --path .` with an empty target folder and an empty
# root, then the demo; timed once with /usr/bin/time -v (it takes minutes).
# Prints both, the ratio, and the stripped binary's size. Target: under 30 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_hyperfine
command -v dist >/dev/null 2>&1 || { echo "cargo-dist is missing: cargo install cargo-dist --locked" >&2; exit 2; }
runs=${RUNS:-5}
host=$(rustc -vV | sed -n 's/^host: //p')
distrib=$root/target/distrib
if [ ! -s "$distrib/git-sage-installer.sh" ] || [ ! -s "$distrib/git-sage-$host.tar.xz" ]; then
  dist build --artifacts=all --target "$host" >&2
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$distrib" >/dev/null 2>&1 &
server=$!
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$port/git-sage-installer.sh" -o /dev/null 2>/dev/null && break; sleep 0.1; done

cat >"$work/prebuilt.sh" <<SH
set -e
rm -rf "$work/home" && mkdir -p "$work/home"
curl --proto '=http' -LsSf "http://127.0.0.1:$port/git-sage-installer.sh" |
  HOME="$work/home" GIT_SAGE_DOWNLOAD_URL="http://127.0.0.1:$port" \
  GIT_SAGE_INSTALL_DIR="$work/home/.cargo" GIT_SAGE_NO_MODIFY_PATH=1 sh -s -- --quiet
cd "$work/home"
HOME="$work/home" PATH="$work/home/.cargo/bin:\$PATH" git sage demo --keep demo >/dev/null
SH
bash "$work/prebuilt.sh"
test -x "$work/home/.cargo/bin/git-sage"
echo "installed: $("$work/home/.cargo/bin/git-sage" --version) into an empty home, demo ran" >&2
hyperfine -N --warmup 1 --runs "$runs" --export-json "$out/install.json" \
  -n prebuilt "bash $work/prebuilt.sh" >&2

if [ "${SKIP_CARGO_INSTALL:-0}" != 1 ]; then
  /usr/bin/time -v -o "$out/cargo-install.time" bash -c "
    set -e
    CARGO_TARGET_DIR='$work/target' cargo install --locked --quiet --path '$root' --root '$work/root'
    mkdir -p '$work/h2' && cd '$work/h2'
    HOME='$work/h2' PATH=\"$work/root/bin:\$PATH\" git sage demo --keep demo >/dev/null
  "
  cargo_s=$(python3 - "$out/cargo-install.time" <<'PY'
import sys
for line in open(sys.argv[1]):
    if "Elapsed (wall clock)" in line:
        t = line.rsplit(" ", 1)[1].strip().split(":")
        s = float(t[-1]) + 60 * float(t[-2]) + (3600 * float(t[-3]) if len(t) == 3 else 0)
        print(s)
PY
)
else
  cargo_s=
fi
size=$(stat -c %s "$work/home/.cargo/bin/git-sage")
python3 - "$out/install.json" "$cargo_s" "$size" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["results"][0]["median"]
print(f"prebuilt (installer from a local server, then git sage demo): {p:.2f} s (target < 30 s)")
if sys.argv[2]:
    c = float(sys.argv[2])
    print(f"cargo install --locked --path . (empty target), then the demo: {c:.1f} s")
    print(f"ratio prebuilt/cargo install: {p / c:.4f} ({c / p:.0f}x faster)")
print(f"binary (stripped, profile dist): {int(sys.argv[3]) / 1e6:.1f} MB")
PY
