#!/usr/bin/env python3
"""Real agent logs against `git sage turns`: file changes found vs the log's own count of
applied edits, and turn kinds.

The truth side reads each raw file with nothing but regular expressions and json (none of
git-sage's parsers): Aider's "> Applied edit to" lines; SpecStory's edit tool blocks and
"Edit file:" summaries; Claude Code's successful Edit/Write/MultiEdit/NotebookEdit calls;
Codex apply_patch files; Gemini CLI's successful write/replace calls; Cursor text
transcripts' Write/StrReplace/Edit calls; OpenHands file-editor actions. Aider commit bodies
("# Aider chat conversation:") count the files of the commit's `--stat` saved beside them.

Usage: bench/real_logs.py BIN DIR... [--json OUT]   (BIN: the git-sage binary)
"""

import collections
import glob
import json
import os
import re
import subprocess
import sys

EDIT_TOOLS = {
    "search_replace", "write", "edit_file", "edit", "multiedit", "create_file",
    "replace_string_in_file", "strreplace", "str_replace", "notebookedit", "apply_patch",
    "multi_replace_string_in_file", "insert_edit_into_file", "edit_notebook",
}


def aider_truth(text):
    return len(re.findall(r"^> Applied edit to ", text, re.M))


def aider_commit_truth(path):
    stat = path[: -len(".md")] + ".stat.txt"
    if not os.path.exists(stat):
        return None
    files = [l for l in open(stat, encoding="utf-8", errors="replace") if "|" in l]
    return len(files)


def specstory_truth(text):
    """Edit tool blocks that name their file (a pathless `Tool use: **write**` with no body
    names none, and no tool could place it), plus the oldest exports' bare ```diff parts."""
    n = 0
    parts = re.split(r"^(?:---|_\*\*(?:User|Assistant|Agent)\b.*\*\*_)\s*$", text, flags=re.M)
    for part in parts:
        body = part.strip()
        m = re.search(r"Tool use: \*\*([A-Za-z0-9_]+)\*\*|data-tool-name=\"([A-Za-z0-9_]+)\"", body)
        # newer Cursor builds version their tools: edit_file_v2
        name = re.sub(r"_v\d+$", "", (m.group(1) or m.group(2)).lower()) if m else None
        if name is not None and 'data-tool-type="write"' in body:
            EDIT_TOOLS.add(name)
        named_file = re.search(r"Edit file: |filePath|file_path|relativeWorkspacePath|targetFile|The file \S+ has been (updated|created)|File created successfully at: ", body)
        if name in EDIT_TOOLS and named_file:
            n += 1
        elif name is None and (re.search(r"<summary>Edit file:", body) or body.startswith("```diff")):
            n += 1
    return n


def claude_truth(text):
    uses, failed = {}, set()
    for line in text.splitlines():
        try:
            v = json.loads(line)
        except ValueError:
            continue
        content = (v.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use" and b.get("name", "").lower() in EDIT_TOOLS:
                uses[b.get("id")] = b.get("name")
            if b.get("type") == "tool_result" and b.get("is_error"):
                failed.add(b.get("tool_use_id"))
    return len([u for u in uses if u not in failed])


def codex_truth(text):
    files = 0
    for line in text.splitlines():
        try:
            v = json.loads(line)
        except ValueError:
            continue
        p = v.get("payload") or {}
        blob = json.dumps(p)
        if "apply_patch" in blob or "*** Begin Patch" in blob:
            if p.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
                files += len(re.findall(r"\*\*\* (?:Update|Add|Delete) File: ", blob))
    return files


def gemini_truth(text):
    try:
        doc = json.loads(text)
        msgs = doc.get("messages", [])
    except ValueError:
        msgs = []
        for line in text.splitlines():
            try:
                msgs.append(json.loads(line))
            except ValueError:
                pass
    n = 0
    for m in msgs:
        for tc in m.get("toolCalls") or []:
            if tc.get("name") in ("write_file", "replace", "edit") and tc.get("status", "success") == "success":
                n += 1
    return n


def cursor_txt_truth(text):
    return len(re.findall(r"^\[Tool call\] (Write|StrReplace|Edit|MultiEdit|EditNotebook)\b", text, re.M))


def openhands_v1_truth(events):
    n = 0
    for e in events:
        if e.get("kind") != "ActionEvent":
            continue
        action = e.get("action") or {}
        if action.get("kind", "").lower().startswith(("fileeditor", "strreplaceeditor")) and action.get("command") not in (None, "view"):
            n += 1
    return n


def detect(path, text):
    name = os.path.basename(path)
    if name.startswith("commit_aider_") or text.lstrip().startswith("# Aider chat conversation"):
        return "aider-commit"
    if "aider chat started at" in text or re.search(r"^> Applied edit to ", text, re.M) or name.endswith(".aider.chat.history.md"):
        return "aider"
    if "_**User" in text and ("_**Assistant" in text or "_**Agent" in text):
        return "specstory"
    if re.search(r"^user:\s*$", text, re.M) and "[Tool call]" in text:
        return "cursor-txt"
    head = text[:4000]
    if '"sessionId"' in head and ('"projectHash"' in head or '"messages"' in head):
        return "gemini"
    if '"payload"' in head and '"type"' in head:
        return "codex"
    if '"sessionId"' in head or '"uuid"' in head:
        return "claude"
    if '"kind"' in head and ("Event" in head):
        return "openhands-v1"
    return None


def truth(path):
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, "events", "*.json"))) or sorted(glob.glob(os.path.join(path, "*.jsonl")))
        events = []
        for f in files:
            for line in open(f, encoding="utf-8"):
                line = line.strip()
                if line:
                    events.append(json.loads(line))
        return "openhands-v1", openhands_v1_truth(events)
    text = open(path, encoding="utf-8", errors="replace").read()
    fmt = detect(path, text)
    if fmt == "aider":
        return fmt, aider_truth(text)
    if fmt == "aider-commit":
        return fmt, aider_commit_truth(path)
    if fmt == "specstory":
        return fmt, specstory_truth(text)
    if fmt == "claude":
        return fmt, claude_truth(text)
    if fmt == "codex":
        return fmt, codex_truth(text)
    if fmt == "gemini":
        return fmt, gemini_truth(text)
    if fmt == "cursor-txt":
        return fmt, cursor_txt_truth(text)
    if fmt == "openhands-v1":
        events = [json.loads(l) for l in text.splitlines() if l.strip()]
        return fmt, openhands_v1_truth(events)
    return fmt, None


def ours(binary, path):
    r = subprocess.run([binary, "turns", path, "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:] or ["?"]
    doc = json.loads(r.stdout)
    pairs, paths, opaque = set(), set(), set()
    for t in doc["turns"]:
        for c in t.get("file_changes", []):
            pairs.add((t["turn"], c["path"]))
            paths.add(c["path"])
            if c.get("op") == "opaque":
                opaque.add((t["turn"], c["path"]))
            if doc["format"] == "specstory":
                # an edit tool block is one change, whatever the file
                pairs.discard((t["turn"], c["path"]))
                pairs.add((t["turn"], c.get("tool_call"), c["path"]))
    kinds = collections.Counter(t["kind"] for t in doc["turns"])
    return {"format": doc["format"], "turns": len(doc["turns"]), "changes": len(pairs), "paths": len(paths), "opaque": len(opaque), "kinds": kinds}, None


def main():
    args = sys.argv[1:]
    out = None
    if "--json" in args:
        i = args.index("--json")
        out = args[i + 1]
        del args[i: i + 2]
    binary, roots = args[0], args[1:]
    rows = []
    for root in roots:
        entries = sorted(glob.glob(os.path.join(root, "**", "*"), recursive=True))
        for p in entries:
            if os.path.isdir(p):
                if not os.path.isdir(os.path.join(p, "events")):
                    continue
            elif p.endswith((".txt", ".md", ".json", ".jsonl")) and not p.endswith((".stat.txt", "SOURCES.md", "HELDOUT.md")):
                if "/events/" in p or p.endswith("base_state.json") or "/findings/" in p or "/securityeval/" in p:
                    continue
            else:
                continue
            fmt, t = truth(p)
            o, err = ours(binary, p)
            if o and fmt == "aider-commit":
                # a commit's --stat counts files, whatever the number of turns that edited them
                o["changes"] = o["paths"]
            rows.append({"file": os.path.relpath(p, root), "root": root, "truth_format": fmt, "truth_edits": t,
                         "ours": o and {**o, "kinds": dict(o["kinds"])}, "error": err})
    w = max(len(r["file"]) for r in rows) if rows else 10
    w = min(w, 60)
    print(f"{'file':<{w}}  {'format':<14} {'turns':>5} {'found':>5} {'truth':>5} {'opaq':>4}  kinds (plan/impl/verif/review/admin)")
    tot_found = tot_truth = 0
    all_planning = []
    for r in rows:
        o = r["ours"]
        if o is None:
            print(f"{r['file'][:w]:<{w}}  {r['truth_format'] or '?':<14} error: {r['error'][0][:80]}")
            continue
        k = o["kinds"]
        ks = "/".join(str(k.get(x, 0)) for x in ("planning", "implementation", "verification", "review", "administrative"))
        tr = "-" if r["truth_edits"] is None else r["truth_edits"]
        mark = "" if r["truth_edits"] is None or r["truth_edits"] == o["changes"] else "  ≠"
        print(f"{r['file'][:w]:<{w}}  {o['format']:<14} {o['turns']:>5} {o['changes']:>5} {tr:>5} {o['opaque']:>4}  {ks}{mark}")
        if r["truth_edits"] is not None:
            tot_found += o["changes"]
            tot_truth += r["truth_edits"]
        if o["turns"] > 0 and k.get("planning", 0) == o["turns"]:
            all_planning.append(r["file"])
    print(f"\nfile changes found {tot_found} of {tot_truth} applied edits; logs whose turns are all planning: {len(all_planning)}")
    for f in all_planning:
        print(f"  all planning: {f}")
    if out:
        json.dump(rows, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
