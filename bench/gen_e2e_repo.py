#!/usr/bin/env python3
"""Writes a git fast-import stream for bench/e2e.sh: a base commit and N commits on main,
every (N/WRITES)-th an agent write to media/fetcher.py (the fragment appears at write
INTRO), the rest changes to other files; the last commit also adds a TURNS-turn session
under .sage/sessions/ whose edits replay every write (write k is turn 4k)."""
import sys

import benchlib

N, WRITES, TURNS, INTRO = 2000, 50, 200, 30
FRAGMENT = benchlib.FRAGMENT
out = sys.stdout.buffer
every = N // WRITES



def fetcher(version, vulnerable):
    return benchlib.fetcher(version, vulnerable, 60)


yq = benchlib.yq


def session():
    out = ["schema: sage.session/1", "task: Fix the SSRF in downloading a product photo by URL.", "turns:"]
    for t in range(1, TURNS + 1):
        if t == 1:
            out.append("  - text: " + yq("Plan: we will check that the scheme is https before downloading."))
            continue
        k = t // 4
        if t % 4 == 0 and 1 <= k <= WRITES:
            old = fetcher(k - 1, k - 1 >= INTRO)
            new = fetcher(k, k >= INTRO)
            out.append("  - text: " + yq(f"Write {k}: updating the fetcher."))
            out.append("    file_changes:")
            out.append(f"      - {{path: media/fetcher.py, old: {yq(old)}, new: {yq(new)}}}")
        else:
            out.append("  - text: " + yq(f"Step {t}: reading the code around the download path and the tests again."))
    return "\n".join(out) + "\n"


def commit(i, message, files, first=False):
    ts = 1767225600 + i * 60
    out.write(b"commit refs/heads/main\nmark :%d\n" % (i + 1))
    out.write(b"author Agent <agent@example.com> %d +0000\ncommitter Agent <agent@example.com> %d +0000\n" % (ts, ts))
    msg = message.encode()
    out.write(b"data %d\n%s\n" % (len(msg), msg))
    if not first:
        out.write(b"from :%d\n" % i)
    for path, text in files:
        data = text.encode()
        out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    out.write(b"\n")


commit(0, "base", [("media/fetcher.py", fetcher(0, False))] + [(f"pkg/mod{j}.py", "X = 0\n") for j in range(20)], first=True)
for i in range(1, N + 1):
    files = []
    if i % every == 0:
        k = i // every
        files.append(("media/fetcher.py", fetcher(k, k >= INTRO)))
    else:
        files.append((f"pkg/mod{i % 20}.py", f"X = {i}\n"))
    if i == N:
        files.append((".sage/sessions/fix.yaml", session()))
    commit(i, f"change {i}", files)
