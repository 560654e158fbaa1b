#!/usr/bin/env bash
# Screenshots of the worked example's HTML report, whole pages at 1400 px and 400 px wide, for
# docs/img/ (README.md's "Reports"). Needs Debian's chromium (`apt-get install chromium`).
#   bench/report_screenshots.sh [GIT_SAGE_BINARY] [OUT_DIR]
# The report is laid out in a frame of the exact width (chromium's headless window is never
# narrower than 500 px), measured once with tests/it/browser_check.js, then shot whole.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/debug/git-sage}")
out=$(realpath "${2:-docs/img}")
chromium=$(command -v chromium || true)
[ -n "$chromium" ] || { echo "chromium not found (apt-get install chromium)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The browser gets a home and a profile of its own: nothing of the user's is read or written.
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_CACHE_HOME="$tmp/home/.cache"
mkdir -p "$HOME"
"$bin" demo --format html -q 2>/dev/null >"$tmp/report.html"
cp tests/it/browser_check.js "$tmp/check.js"
sed 's#</body>#<script src="check.js"></script></body>#' "$tmp/report.html" >"$tmp/checked.html"
browse() { # WINDOW_W WINDOW_H ARGS...
  local w=$1 h=$2
  shift 2
  "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --hide-scrollbars --user-data-dir="$tmp/profile" --window-size="$w,$h" "$@" 2>/dev/null
}
host() { # FRAME_W FRAME_H PAGE
  printf '<!DOCTYPE html><html><body style="margin:0"><pre id="v" style="display:none"></pre><script>addEventListener("message",function(e){document.getElementById("v").textContent=e.data})</script><iframe src="%s" style="display:block;border:0;width:%spx;height:%spx"></iframe></body></html>' \
    "$3" "$1" "$2" >"$tmp/host.html"
}
for w in 1400 400; do
  host "$w" 900 checked.html
  verdict=$(browse "$w" 900 --dump-dom "file://$tmp/host.html" | sed -n 's/.*<pre id="v"[^>]*>\([^<]*\)<.*/\1/p')
  height=$(printf '%s' "$verdict" | sed -n 's/.*"scrollHeight":\([0-9]*\).*/\1/p')
  [ -n "$height" ] || { echo "no measurement at $w px: $verdict" >&2; exit 1; }
  host "$w" "$height" report.html
  browse "$w" "$height" --screenshot="$out/report-$w.png" "file://$tmp/host.html" >/dev/null
  echo "$out/report-$w.png: $w x $height; check: $verdict"
done
