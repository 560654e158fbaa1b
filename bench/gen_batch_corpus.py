#!/usr/bin/env python3
"""Generates the corpus of bench/batch.sh: N small cases, each a repository (built with git
fast-import) with a human base commit on main and 10 agent commits on `agent`, a 20-turn
sage.session/1 session committed with the last one, and `Sage-Turn:` trailers tying commit k
to turn 2k. Most agents introduce the defect at a case-dependent commit; every seventh case
inherits it. Writes DIR/manifest.yaml (labels: framework, model, task) and DIR/finding.yaml.

usage: gen_batch_corpus.py DIR [N]"""
import os
import subprocess
import sys

import benchlib

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
FRAGMENT = benchlib.FRAGMENT
FRAMEWORKS = ["openhands", "swe-agent", "aider"]
MODELS = ["gpt-4.1", "claude-sonnet-4-5"]



def fetcher(version, vulnerable):
    return benchlib.fetcher(version, vulnerable, 30)


yq = benchlib.yq


TEXTS = [
    "Plan: we will check that the scheme is https before downloading, and add a test for http.",
    "Reading media/fetcher.py and the tests around download().",
    "Adding the scheme check to download().",
    "Running the test suite: python -m pytest -q",
    "The tests pass; reviewing the change for other call sites.",
    "Updating the README with the https-only rule.",
    "Refactoring the helper functions while I am here.",
    "Checking that redirects are handled by urllib.",
]


def session(case):
    out = ["schema: sage.session/1", f"task: Fix the SSRF in downloading a product photo by URL (case {case}).", "turns:"]
    for t in range(1, 21):
        text = TEXTS[(t + case) % len(TEXTS)] if t > 1 else TEXTS[0]
        out.append("  - text: " + yq(f"{text} (step {t})"))
    return "\n".join(out) + "\n"


def stream(case, intro, inherited):
    buf = bytearray()

    def commit(i, ref, who, message, files, parent):
        ts = 1767225600 + i * 60
        buf.extend(b"commit %s\nmark :%d\n" % (ref.encode(), i + 1))
        buf.extend(b"author %s %d +0000\ncommitter %s %d +0000\n" % (who, ts, who, ts))
        msg = message.encode()
        buf.extend(b"data %d\n%s\n" % (len(msg), msg))
        if parent:
            buf.extend(b"from :%d\n" % parent)
        for path, text in files:
            data = text.encode()
            buf.extend(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        buf.extend(b"\n")

    human = b"Dana Dev <dana@example.com>"
    agent = b"Coding Agent <agent@example.com>"
    commit(0, "refs/heads/main", human, "base", [("media/fetcher.py", fetcher(0, inherited)), ("README.md", "# media\n")], None)
    for k in range(1, 11):
        files = [("media/fetcher.py", fetcher(k, inherited or k >= intro))]
        if k == 10:
            files.append((".sage/sessions/fix.yaml", session(case)))
        commit(k, "refs/heads/agent", agent, f"agent change {k}\n\nSage-Turn: {2 * k}", files, k)
    return bytes(buf)


os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "finding.yaml"), "w") as f:
    f.write(f"id: ssrf\ncwe: 918\nfile: media/fetcher.py\nfragments:\n  - '{FRAGMENT}'\n")
cases = []
for c in range(1, n + 1):
    repo = os.path.join(out, f"case{c:03d}")
    if not os.path.isdir(os.path.join(repo, ".git")):
        subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
        data = stream(c, 1 + c % 10, c % 7 == 0)
        subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=data, check=True)
        subprocess.run(["git", "-C", repo, "checkout", "-q", "agent"], check=True)
    cases.append(
        f"  - {{id: case{c:03d}, repo: case{c:03d}, finding: finding.yaml, "
        f"labels: {{framework: {FRAMEWORKS[c % 3]}, model: {MODELS[c % 2]}, task: task{c // 4:02d}}}}}"
    )
with open(os.path.join(out, "manifest.yaml"), "w") as f:
    f.write("schema: sage.manifest/1\ndefaults:\n  base: main\n  tip: agent\ncases:\n")
    f.write("\n".join(cases) + "\n")
