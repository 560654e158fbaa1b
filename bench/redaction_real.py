#!/usr/bin/env python3
"""Redaction on real session logs, against a truth git sage's parsers take no part in.

  bench/redaction_real.py BIN [--cases bench/verdict/cases.json] [--fixtures DIR]

The sessions: every session file of the verdict benchmark (read with `git show` from
$SAGE_MIRRORS/<owner>+<name>/repo, default /work/.mirror) and the real logs of
../shared/fixtures/real (when present). The truth: Yelp's detect-secrets
(`pip install detect-secrets`) run over each raw file, and over every string of it decoded
as JSON to any depth (its own decoding, with Python's json module), so a secret behind an
escape counts too. What leaves the machine: the prompts `git sage judge FILE --export DIR`
writes for a model (the manual judge's files). A secret detect-secrets finds that is still
in those prompts has leaked.

detect-secrets' plugins fall in two groups: formats (AWS keys, GitHub and other tokens,
private keys, JWTs, basic-auth URLs) where a hit is a secret, and guesses (high-entropy
strings of 20 characters or more, `password = ...` keywords) that hit commit hashes,
checksums, paths and code as often as secrets: they are counted, not listed. A surviving
format hit is listed by its shape (length, first characters), never its value.

Prints one row per format and the totals; exit 1 when a format secret survives.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile

from detect_secrets.core.scan import scan_line
from detect_secrets.settings import default_settings

GUESSES = {"Hex High Entropy String", "Base64 High Entropy String", "Secret Keyword"}


def strings_of(text):
    """Every string a text holds when read as JSON (a line or the whole), decoded, to any
    depth: a JSON document inside a string is read again."""
    out, todo = [], []
    for chunk in [text] + text.splitlines():
        try:
            todo.append(json.loads(chunk))
        except ValueError:
            pass
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            out.append(v)
            try:
                inner = json.loads(v)
                if isinstance(inner, (dict, list, str)):
                    todo.append(inner)
            except ValueError:
                pass
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return out


def secrets_in(text):
    """detect-secrets' findings in the decoded strings of a JSON or JSONL file, or in the raw
    text of any other: {(type, value)}. Each distinct line is scanned once."""
    pieces = strings_of(text) or [text]
    lines = {line[:4000] for piece in pieces for line in piece.splitlines() if len(line.strip()) > 5}
    found = set()
    with default_settings():
        for line in lines:
            for s in scan_line(line):
                if s.secret_value and len(s.secret_value) >= 6:
                    found.add((s.type, s.secret_value))
    return found


def sessions(cases_path, fixtures):
    """(format, name, text) for each session file."""
    mirrors = os.environ.get("SAGE_MIRRORS", "/work/.mirror")
    seen = set()
    for c in json.load(open(cases_path)):
        commit, path = c["session"].split(":", 1)
        key = (c["repo"], commit, path)
        if key in seen:
            continue
        seen.add(key)
        repo = os.path.join(mirrors, c["repo"].replace("/", "+"), "repo")
        r = subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], capture_output=True)
        if r.returncode == 0:
            yield c["format"], f"{c['repo']}:{path}", r.stdout.decode("utf-8", "replace")
    if fixtures and os.path.isdir(fixtures):
        for fmt in sorted(os.listdir(fixtures)):
            if fmt in ("findings", "securityeval") or not os.path.isdir(os.path.join(fixtures, fmt)):
                continue
            for p in sorted(glob.glob(os.path.join(fixtures, fmt, "**", "*"), recursive=True)):
                if os.path.isfile(p) and not p.endswith("SOURCES.md"):
                    yield fmt, os.path.relpath(p, fixtures), open(p, encoding="utf-8", errors="replace").read()


def exported(binary, name, text, work):
    """Everything `judge --export` writes for the session, as one text; None when git sage
    cannot read the file as a session."""
    ext = os.path.splitext(name)[1] or ".txt"
    f = os.path.join(work, "session" + ext)
    with open(f, "w") as out:
        out.write(text)
    d = os.path.join(work, "export")
    subprocess.run(["rm", "-rf", d])
    r = subprocess.run([binary, "judge", f, "--export", d, "-q"], capture_output=True, text=True,
                       cwd=work, env={**os.environ, "HOME": work})
    if r.returncode != 0:
        return None
    return "\n".join(open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(d, "*"))))


def main():
    args = sys.argv[1:]
    binary = os.path.abspath(args[0])
    opt = lambda n, d: args[args.index(n) + 1] if n in args else d  # noqa: E731
    cases = opt("--cases", "bench/verdict/cases.json")
    fixtures = opt("--fixtures", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                              "shared", "fixtures", "real"))
    rows = {}
    leaks = []
    with tempfile.TemporaryDirectory() as work:
        for fmt, name, text in sessions(cases, fixtures):
            row = rows.setdefault(fmt, {"files": 0, "unread": 0, "formats": 0, "formats_left": 0,
                                        "guesses": 0, "guesses_left": 0})
            row["files"] += 1
            print(f"{fmt} {name} ({len(text) // 1024} KB)", file=sys.stderr)
            prompts = exported(binary, name, text, work)
            if prompts is None:
                row["unread"] += 1
                continue
            for kind, value in secrets_in(text):
                guess = kind in GUESSES
                # Below 20 characters the guessing plugins flag words and short hashes.
                if guess and len(value) < 20:
                    continue
                row["guesses" if guess else "formats"] += 1
                if value in prompts:
                    row["guesses_left" if guess else "formats_left"] += 1
                    leaks.append((fmt, name, kind, guess, f"{len(value)} chars, {value[:4]}…"))
    print(f"{'format':14} {'files':>5} {'unread':>6} {'format hits':>11} {'left':>4} {'guesses':>7} {'left':>4}")
    tot = {k: 0 for k in ("files", "unread", "formats", "formats_left", "guesses", "guesses_left")}
    for fmt, r in sorted(rows.items()):
        print(f"{fmt:14} {r['files']:5} {r['unread']:6} {r['formats']:11} {r['formats_left']:4} {r['guesses']:7} {r['guesses_left']:4}")
        for k in tot:
            tot[k] += r[k]
    print(f"{'total':14} {tot['files']:5} {tot['unread']:6} {tot['formats']:11} {tot['formats_left']:4} {tot['guesses']:7} {tot['guesses_left']:4}")
    for fmt, name, kind, guess, shape in leaks:
        if not guess:
            print(f"  left in the prompts: {kind} ({shape}) in {fmt} {name}")
    sys.exit(1 if tot["formats_left"] else 0)


if __name__ == "__main__":
    main()
