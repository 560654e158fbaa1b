#!/usr/bin/env python3
"""Writes a Claude Code session JSONL of about SIZE_MB megabytes for bench/turns.sh.

Realistic records, in the shapes Claude Code 2.1 writes: user prompts, assistant messages
streamed one content block per line (text, thinking, tool_use Read/Edit/Bash/Write), tool
results on `type:"user"` lines with `toolUseResult` (Edit: structuredPatch + originalFile),
progress (hook) lines and file-history snapshots.
"""
import json
import random
import sys

size_mb = float(sys.argv[1]) if len(sys.argv) > 1 else 200
target = int(size_mb * 1024 * 1024)
rng = random.Random(42)
out = sys.stdout
written = 0
session = "4606c3cc-1111-2222-3333-444455556666"
cwd = "/home/dev/shop"
words = ("the url scheme host fetch request client validate preview image seller product "
         "download resolve address private network check test error handler return value").split()


def sentence(n):
    return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."


def code(n):
    lines = []
    for i in range(n):
        lines.append(f"    def helper_{i}(self, value):\n        return self.{rng.choice(words)}(value) + {i}")
    return "\n".join(lines) + "\n"


def emit(obj):
    global written
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    out.write(s)
    out.write("\n")
    written += len(s) + 1


def envelope(kind, t, extra):
    base = {"parentUuid": f"u-{t-1}", "isSidechain": False, "userType": "external", "cwd": cwd,
            "sessionId": session, "version": "2.1.119", "gitBranch": "agent/fix", "type": kind,
            "uuid": f"u-{t}", "timestamp": f"2026-04-24T19:{(t // 60) % 60:02d}:{t % 60:02d}.{t % 1000:03d}Z"}
    base.update(extra)
    return base


t = 0
msg = 0
while written < target:
    t += 1
    emit(envelope("user", t, {"message": {"role": "user", "content": sentence(20)}, "permissionMode": "default"}))
    for step in range(rng.randint(4, 9)):
        msg += 1
        mid = f"msg_{msg:08d}"
        model = {"model": "claude-opus-4-7", "id": mid, "type": "message", "role": "assistant",
                 "stop_reason": "tool_use", "usage": {"input_tokens": 6, "output_tokens": 215}}
        t += 1
        think = sentence(40) if rng.random() < 0.5 else ""
        emit(envelope("assistant", t, {"requestId": f"req_{msg}", "message": dict(model, content=[
            {"type": "thinking", "thinking": think, "signature": "ErAEClkIDRgC" + "x" * 200}])}))
        t += 1
        emit(envelope("assistant", t, {"requestId": f"req_{msg}", "message": dict(model, content=[
            {"type": "text", "text": " ".join(sentence(15) for _ in range(rng.randint(1, 6)))}])}))
        tool = rng.choice(["Read", "Edit", "Bash", "Bash", "Edit", "Write"])
        tid = f"toolu_{msg:08d}"
        path = f"{cwd}/media/mod_{rng.randint(0, 40)}.py"
        original = code(rng.randint(20, 120))
        if tool == "Read":
            inp = {"file_path": path}
            res = {"type": "text", "file": {"filePath": path, "content": original, "numLines": 100,
                                            "startLine": 1, "totalLines": 100}}
            text = original
        elif tool == "Bash":
            cmd = rng.choice(["python -m pytest -q tests/", "git status", "ls media", "grep -rn fetch media"])
            inp = {"command": cmd, "description": sentence(5)}
            text = "\n".join(sentence(8) for _ in range(rng.randint(3, 40)))
            res = {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
        elif tool == "Edit":
            old = original.splitlines()[3] + "\n"
            new = old.replace("return", "return validate(value) and")
            inp = {"file_path": path, "old_string": old, "new_string": new, "replace_all": False}
            res = {"filePath": path, "oldString": old, "newString": new, "originalFile": original,
                   "structuredPatch": [{"oldStart": 4, "oldLines": 3, "newStart": 4, "newLines": 3,
                                        "lines": [" a", "-" + old.rstrip("\n"), "+" + new.rstrip("\n"), " b"]}],
                   "userModified": False, "replaceAll": False}
            text = f"The file {path} has been updated."
        else:
            inp = {"file_path": path, "content": original}
            res = {"type": "update", "filePath": path, "content": original, "originalFile": original,
                   "structuredPatch": [], "userModified": False}
            text = f"File created successfully at: {path}"
        t += 1
        emit(envelope("assistant", t, {"requestId": f"req_{msg}", "message": dict(model, content=[
            {"type": "tool_use", "id": tid, "name": tool, "input": inp}])}))
        for k in range(2):
            t += 1
            emit({"parentUuid": f"u-{t-1}", "isSidechain": False, "type": "progress", "uuid": f"u-{t}",
                  "timestamp": "2026-04-24T19:00:00.000Z", "sessionId": session,
                  "data": {"type": "hook_progress", "hookEvent": "PreToolUse" if k == 0 else "PostToolUse",
                           "hookName": "lint", "command": "./hooks/check.sh"}, "toolUseID": tid})
        t += 1
        emit(envelope("user", t, {"message": {"role": "user", "content": [
            {"tool_use_id": tid, "type": "tool_result", "content": text, "is_error": False}]},
            "toolUseResult": res, "sourceToolAssistantUUID": f"u-{t-3}"}))
    emit({"type": "file-history-snapshot", "messageId": f"m-{t}", "snapshot": {"trackedFileBackups": {}},
          "isSnapshotUpdate": False})
