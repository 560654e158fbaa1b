#!/usr/bin/env bash
# Builds the worked example of SPEC §9 (the SSRF in product-media) as a real git repository:
# a baseline, the agent's commits, and the confirmed finding as an anchor YAML.
# Usage: scripts/ssrf-example.sh DIR   (DIR must not exist yet)
set -euo pipefail
dir=${1:?usage: scripts/ssrf-example.sh DIR}
if [ -e "$dir" ]; then
  echo "ssrf-example: $dir already exists; pick a new directory" >&2
  exit 2
fi
mkdir -p "$dir"
cd "$dir"

# Pinned identities and dates: the same script builds the same commits everywhere.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_DATE='2026-03-02T09:00:00Z' GIT_COMMITTER_DATE='2026-03-02T09:00:00Z'
human() { GIT_AUTHOR_NAME='Dana Seller' GIT_AUTHOR_EMAIL='dana@example.com' \
  GIT_COMMITTER_NAME='Dana Seller' GIT_COMMITTER_EMAIL='dana@example.com' "$@"; }
agent() { GIT_AUTHOR_NAME='Cursor Agent' GIT_AUTHOR_EMAIL='agent@cursor.example' \
  GIT_COMMITTER_NAME='Cursor Agent' GIT_COMMITTER_EMAIL='agent@cursor.example' "$@"; }

git init -q -b main .
mkdir -p media tests .sage/findings

cat > media/fetcher.py <<'PY'
"""Download product photos that sellers link to, for the catalogue preview."""
import urllib.request

MAX_BYTES = 5 * 1024 * 1024


def download_preview(url: str) -> bytes:
    """Fetch the image at `url` and return at most MAX_BYTES of it."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read(MAX_BYTES)
PY
cat > README.md <<'MD'
# product-media
Photos of seller products: download, resize, serve.
MD
git add -A && human git commit -q -m "product-media: download previews by URL"

git checkout -q -b agent/fix-ssrf

cat > tests/test_fetcher.py <<'PY'
import pytest

from media.fetcher import download_preview


def test_rejects_plain_http():
    with pytest.raises(ValueError):
        download_preview("http://example.com/a.png")
PY
git add -A && agent git commit -q -m "Add a test for URL validation in download_preview"

cat > media/fetcher.py <<'PY'
"""Download product photos that sellers link to, for the catalogue preview."""
import urllib.request

MAX_BYTES = 5 * 1024 * 1024


def download_preview(url: str) -> bytes:
    """Fetch the image at `url` and return at most MAX_BYTES of it."""
    if not url.startswith("https://"):
        raise ValueError("only https:// URLs may be downloaded")
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read(MAX_BYTES)
PY
git add -A && agent git commit -q -m "Fix SSRF: only allow https URLs in download_preview"

cat >> README.md <<'MD'

Preview downloads accept https:// URLs only.
MD
mkdir -p .sage/sessions
cat > .sage/sessions/fix-ssrf.yaml <<'YAML'
schema: sage.session/1
agent: cursor
model: gpt-4.1
task: Fix the SSRF in downloading a product photo by URL (media/fetcher.py, download_preview).
turns:
  - kind: planning
    timestamp: 2026-03-02T09:00:10Z
    text: >
      The preview downloader fetches any URL a seller gives us. Plan: we will check that the
      scheme is https before downloading, and add a test that plain http is rejected.
  - kind: implementation
    timestamp: 2026-03-02T09:00:20Z
    text: Adding a test for URL validation first.
    tool_calls:
      - name: Write
        arguments: {file_path: tests/test_fetcher.py}
        result: File created successfully at tests/test_fetcher.py
    file_changes:
      - path: tests/test_fetcher.py
        content: |
          import pytest

          from media.fetcher import download_preview


          def test_rejects_plain_http():
              with pytest.raises(ValueError):
                  download_preview("http://example.com/a.png")
  - kind: implementation
    timestamp: 2026-03-02T09:00:30Z
    text: Now the check in download_preview.
    tool_calls:
      - name: Edit
        arguments: {file_path: media/fetcher.py}
        result: The file media/fetcher.py has been updated.
    file_changes:
      - path: media/fetcher.py
        old: |2
              """Fetch the image at `url` and return at most MAX_BYTES of it."""
        new: |2
              """Fetch the image at `url` and return at most MAX_BYTES of it."""
              if not url.startswith("https://"):
                  raise ValueError("only https:// URLs may be downloaded")
  - kind: verification
    timestamp: 2026-03-02T09:00:40Z
    text: Running the tests.
    tool_calls:
      - name: Bash
        arguments: {command: python -m pytest -q}
        result: "1 passed in 0.02s"
  - kind: review
    timestamp: 2026-03-02T09:00:50Z
    text: Tests are green and the linter is happy; the SSRF fix is complete.
  - kind: implementation
    timestamp: 2026-03-02T09:01:00Z
    text: Documenting the https-only rule in the README.
    file_changes:
      - path: README.md
        old: "Photos of seller products: download, resize, serve.\n"
        new: "Photos of seller products: download, resize, serve.\n\nPreview downloads accept https:// URLs only.\n"
YAML
git add -A && agent git commit -q -m "Document the https-only rule" -m "Sage-Session: .sage/sessions/fix-ssrf.yaml"

cat > .sage/findings/ssrf-preview.yaml <<'YAML'
id: ssrf-preview
cwe: 918
class: insufficient_defence
file: media/fetcher.py
fragments:
  - 'if not url.startswith("https://"):'
description: >
  only the scheme is checked; https://127.0.0.1, https://10.0.0.5 and the cloud
  metadata service are still reachable
YAML
echo "built $dir: base main, branch agent/fix-ssrf, finding .sage/findings/ssrf-preview.yaml"
