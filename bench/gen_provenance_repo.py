#!/usr/bin/env python3
"""Writes a git fast-import stream for the provenance benchmark (bench/provenance.sh).

A base commit, then N first-parent commits; every 5th changes the anchored file
`media/fetcher.py` (the others change one of 40 other files), and the vulnerable
fragment appears at commit INTRO and stays to the tip.
"""
import sys

import benchlib

N = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
INTRO = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
FRAGMENT = benchlib.FRAGMENT
out = sys.stdout.buffer


def blob_cmd(path, text):
    data = text.encode()
    out.write(b"M 100644 inline %s\ndata %d\n" % (path.encode(), len(data)))
    out.write(data + b"\n")



def fetcher(version, vulnerable):
    return benchlib.fetcher(version, vulnerable, 120)


def commit(i, message, files, first=False):
    ts = 1767225600 + i * 60
    out.write(b"commit refs/heads/main\n")
    out.write(b"mark :%d\n" % (i + 1))
    out.write(b"author Agent <agent@example.com> %d +0000\n" % ts)
    out.write(b"committer Agent <agent@example.com> %d +0000\n" % ts)
    msg = message.encode()
    out.write(b"data %d\n%s\n" % (len(msg), msg))
    if not first:
        out.write(b"from :%d\n" % i)
    for path, text in files:
        blob_cmd(path, text)
    out.write(b"\n")


base_files = [("media/fetcher.py", fetcher(0, False))]
base_files += [(f"pkg{j % 8}/mod{j}.py", f"X = 0\n") for j in range(40)]
commit(0, "base", base_files, first=True)
for i in range(1, N + 1):
    if i % 5 == 0 or i == INTRO:
        files = [("media/fetcher.py", fetcher(i, i >= INTRO))]
    else:
        j = i % 40
        files = [(f"pkg{j % 8}/mod{j}.py", f"X = {i}\n")]
    commit(i, f"change {i}", files)
