#!/usr/bin/env python3
"""Writes a git fast-import stream for bench/screen.sh: a base commit with N Python modules
and one agent commit that changes all of them (each gains a request handler; every tenth
reaches a dangerous sink, every seventh is guarded)."""
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
out = sys.stdout.buffer


def module(i, changed):
    lines = [f'"""Module {i} of the generated service."""', "import os", "import json", "import subprocess", ""]
    for k in range(12):
        lines.append(f"def helper_{k}(value):\n    total = 0\n    for item in range(value):\n        total += item * {k}\n    return total\n")
    lines.append(f"class Service{i}:\n    def __init__(self, name):\n        self.name = name\n\n    def describe(self):\n        return json.dumps({{'name': self.name, 'id': {i}}})\n")
    if changed:
        lines.append("def handle(request):")
        lines.append("    name = request.args.get('name', '')")
        if i % 10 == 0:
            lines.append("    return subprocess.check_output('echo ' + name, shell=True)")
        elif i % 7 == 0:
            lines.append("    if not name.isalnum():\n        raise ValueError(name)\n    return subprocess.run(['echo', name], check=True)")
        else:
            lines.append("    return os.path.basename(name).upper()")
    return "\n".join(lines) + "\n"


def commit(mark, message, files, parent=None):
    out.write(b"commit refs/heads/%s\nmark :%d\n" % (b"main" if parent is None else b"agent", mark))
    out.write(b"author Bench <bench@example.com> 1767225600 +0000\ncommitter Bench <bench@example.com> 1767225600 +0000\n")
    msg = message.encode()
    out.write(b"data %d\n%s\n" % (len(msg), msg))
    if parent:
        out.write(b"from :%d\n" % parent)
    for path, text in files:
        data = text.encode()
        out.write(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    out.write(b"\n")


commit(1, "base", [(f"svc/pkg{i // 100}/mod{i}.py", module(i, False)) for i in range(N)] + [("svc/__init__.py", ""), ("requirements.txt", "flask\n")])
commit(2, "agent: add handlers", [(f"svc/pkg{i // 100}/mod{i}.py", module(i, True)) for i in range(N)], parent=1)
