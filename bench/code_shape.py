#!/usr/bin/env python3
"""The shape of src/ for issue 45: lines without tests, and functions over 100 and 150 lines.

  bench/code_shape.py [--list] [REV]

Reads the tree of REV (default: the working tree) with git; a file's test module
(`#[cfg(test)]` and what follows it) and `#[cfg(test)]` files are left out. A function runs
from its `fn` line to the brace that closes its body, strings, chars and comments minded.
"""

import re
import subprocess
import sys

RAW = re.compile(r'(?<![A-Za-z0-9_])br?(#+)"[\s\S]*?"\1|(?<![A-Za-z0-9_])r(#*)"[\s\S]*?"\2')
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")


def files(rev):
    if rev:
        out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "src"],
                             capture_output=True, text=True, check=True).stdout.split()
        return [(p, subprocess.run(["git", "show", f"{rev}:{p}"], capture_output=True,
                                   text=True, check=True).stdout) for p in out if p.endswith(".rs")]
    out = subprocess.run(["git", "ls-files", "src"], capture_output=True, text=True,
                         check=True).stdout.split()
    return [(p, open(p, encoding="utf-8").read()) for p in out if p.endswith(".rs")]


def production(text):
    """The text before the test module, or nothing for a file that is all tests."""
    head = text.lstrip()
    lines = [l for l in head.splitlines() if not l.startswith("//")]
    if lines and lines[0].strip() == "#![cfg(test)]":
        return ""
    i = text.find("#[cfg(test)]\nmod tests")
    return text if i < 0 else text[:i]


def body_end(lines, start):
    """The index of the line that closes the function opening at `start`."""
    depth, seen = 0, False
    in_str = in_block = False
    for k in range(start, len(lines)):
        line = lines[k]
        j = 0
        while j < len(line):
            c = line[j]
            two = line[j:j + 2]
            if in_block:
                if two == "*/":
                    in_block, j = False, j + 2
                    continue
            elif in_str:
                if c == "\\":
                    j += 2
                    continue
                if c == '"':
                    in_str = False
            elif two == "//":
                break
            elif two == "/*":
                in_block, j = True, j + 2
                continue
            elif c == '"':
                in_str = True
            elif c == "'" and re.match(r"'(\\.|[^\\'])'", line[j:]):
                j += len(re.match(r"'(\\.|[^\\'])'", line[j:]).group(0))
                continue
            elif c == "{":
                depth, seen = depth + 1, True
            elif c == "}":
                depth -= 1
                if seen and depth == 0:
                    return k
            elif c == ";" and not seen and depth == 0:
                return k  # a declaration without a body
            j += 1
    return len(lines) - 1


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rev = args[0] if args else None
    total, long_fns = 0, []
    for path, text in files(rev):
        if "/conformance" in path or path.endswith("_tests.rs"):
            continue
        prod = production(text)
        # Raw strings (regexes, templates) hold braces and quotes of their own: blanked, their
        # lines kept.
        prod = RAW.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), prod)
        lines = prod.splitlines()
        total += len(lines)
        i = 0
        while i < len(lines):
            m = FN.match(lines[i])
            if m and "#[cfg(test)]" not in (lines[i - 1] if i else ""):
                end = body_end(lines, i)
                n = end - i + 1
                if n > 100:
                    long_fns.append((n, f"{path}:{i + 1} {m.group(6)}"))
            i += 1
    long_fns.sort(reverse=True)
    print(f"src/ lines without tests: {total}")
    print(f"functions over 100 lines: {len(long_fns)}; over 150: {sum(1 for n, _ in long_fns if n > 150)}")
    if "--list" in sys.argv:
        for n, where in long_fns:
            print(f"  {n:4}  {where}")


main()
