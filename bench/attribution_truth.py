#!/usr/bin/env python3
"""Ground-truth finder for the turn-attribution corpus (bench/attribution_cases.json).

Independent of git-sage: it reads the raw session file with json and re only, and none of
git-sage's parsers or rules, so that bench/attribution.py measures git-sage against it.

Reads a RAW agent session file (json / regex only, no agent-specific libraries)
and reports which edit record wrote a given code fragment.

Formats:
  claude     Claude Code JSONL. Edit records = assistant tool_use blocks named
             Edit / MultiEdit / Write (/ NotebookEdit). New text = new_string,
             edits[].new_string, content (new_source). Truth = 1-based JSONL line.
  codex      Codex rollout JSONL. Edit records = apply_patch calls
             (custom_tool_call / function_call named apply_patch, or shell /
             exec_command calls whose command embeds an apply_patch heredoc).
             New text = the '+' lines / Add File bodies of the patch.
             Truth = 1-based JSONL line of the call.
  gemini     Gemini CLI session JSON ({"messages":[...]}) or JSONL of messages.
             Edit records = toolCalls named write_file / replace (/ edit).
             Truth = message id (line reported as null; JSONL line if JSONL).
  aider      .aider.chat.history.md. An edit record = one assistant response
             (the text between a '#### ' user block and the next one); new text
             = REPLACE halves of SEARCH/REPLACE blocks, '+' lines of udiff
             blocks, or whole fenced blocks (whole-file format). Truth = line of
             the '> Applied edit to PATH' line after that response (PATH matched
             to the case file when possible) + the response's first line.
  specstory  .specstory/history/*.md. Edit records = tool blocks
             (<tool-use ...> / <details><summary>Edit file: ...) and
             fenced code blocks whose info string names a path (```lang:path).
             Truth = 1-based line where that block starts.

Matching is whitespace-insensitive: all whitespace is removed from both the
fragment and the record's new text, then substring test.
If several records match, the LAST one whose timestamp is <= --before (the
commit time) is the truth; failed records (tool_result is_error, patch
success=false, aider edit that was not applied) are excluded but listed.

Usage:
  attribution_truth.py --format claude --session FILE --fragment-file F [--file PATH] [--before ISO]
  attribution_truth.py --format claude --git-dir MIRROR --rev REV:PATH --fragment 'text' ...
  attribution_truth.py --cases bench/attribution_cases.json [--id ID]   # recompute every truth
"""
import argparse
import os
import tempfile
import html
import json
import re
import subprocess
import sys
from datetime import datetime, timezone

WS = re.compile(r"\s+")


def norm(s):
    return WS.sub("", s or "")


def parse_ts(s):
    if s is None:
        return None
    if isinstance(s, (int, float)):
        return datetime.fromtimestamp(s / (1000 if s > 1e11 else 1), tz=timezone.utc)
    try:
        s = s.strip().replace("Z", "+00:00")
        d = datetime.fromisoformat(s)
        if d.tzinfo is None:
            d = d.replace(tzinfo=timezone.utc)
        return d
    except Exception:
        return None


# ---------------------------------------------------------------- claude
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit", "str_replace_editor",
              "str_replace_based_edit_tool", "create_file", "edit_file"}


def json_lines(text):
    """(1-based line number, object) for every line that is a JSON object; lines count
    '\n' only (str.splitlines() would also split on lone CRs and U+2028)."""
    for i, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        try:
            o = json.loads(line)
        except Exception:
            continue
        if isinstance(o, dict):
            yield i, o


def claude_records(text):
    recs, by_id = [], {}
    for i, o in json_lines(text):
        blocks, sub = [], False
        msg = o.get("message") or {}
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, list):
            blocks = content
        else:
            # subagent (Task/Agent tool) activity is embedded in "progress" records:
            # {"type":"progress","data":{"message":{"type":"assistant","message":{"content":[...]}}}}
            dm = (o.get("data") or {}).get("message") if isinstance(o.get("data"), dict) else None
            if isinstance(dm, dict) and isinstance(dm.get("message"), dict) and isinstance(dm["message"].get("content"), list):
                blocks, sub = dm["message"]["content"], True
        if not blocks:
            continue
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use" and b.get("name") in EDIT_TOOLS:
                inp = b.get("input") or {}
                parts = []
                if "new_string" in inp:
                    parts.append(inp.get("new_string") or "")
                if "content" in inp and isinstance(inp.get("content"), str):
                    parts.append(inp["content"])
                if "new_source" in inp:
                    parts.append(inp.get("new_source") or "")
                if "file_text" in inp:
                    parts.append(inp.get("file_text") or "")
                for e in inp.get("edits") or []:
                    if isinstance(e, dict):
                        parts.append(e.get("new_string") or "")
                r = {"line": i, "id": b.get("id"), "tool": b.get("name"),
                     "path": inp.get("file_path") or inp.get("path") or inp.get("notebook_path"),
                     "texts": parts, "ts": o.get("timestamp"), "ok": None,
                     "sidechain": o.get("isSidechain") or sub}
                recs.append(r)
                by_id[b.get("id")] = r
            elif b.get("type") == "tool_result" and b.get("tool_use_id") in by_id:
                r = by_id[b["tool_use_id"]]
                err = b.get("is_error")
                c = b.get("content")
                if isinstance(c, list):
                    c = " ".join(x.get("text", "") for x in c if isinstance(x, dict))
                r["ok"] = not err
                if err:
                    r["error"] = (c or "")[:160]
    return recs


# ---------------------------------------------------------------- codex
def patch_added(patch):
    """Return {path: added_text} from an apply_patch envelope."""
    out, cur = {}, None
    for ln in patch.splitlines():
        m = re.match(r"\*\*\* (Add|Update|Delete) File: (.*)$", ln)
        if m:
            cur = m.group(2).strip()
            out.setdefault(cur, [])
            continue
        m = re.match(r"\*\*\* Move to: (.*)$", ln)
        if m:
            continue
        if ln.startswith("***"):
            continue
        if cur is not None and ln.startswith("+"):
            out[cur].append(ln[1:])
        elif cur is not None and not ln.startswith("-") and not ln.startswith("@@"):
            # context line breaks contiguity: insert marker
            out[cur].append("\x00")
    return {k: "\n".join(v) for k, v in out.items()}


def codex_records(text):
    recs, by_call = [], {}
    for i, o in json_lines(text):
        p = o.get("payload") if isinstance(o.get("payload"), dict) else o
        t, name = p.get("type"), p.get("name")
        patch = None
        if t == "custom_tool_call" and name == "apply_patch":
            patch = p.get("input") or ""
        elif t == "function_call":
            args = p.get("arguments")
            try:
                a = json.loads(args) if isinstance(args, str) else (args or {})
            except Exception:
                a = {"raw": args}
            if name == "apply_patch":
                patch = a.get("input") or a.get("patch") or a.get("raw") or ""
            elif name in ("shell", "exec_command", "container.exec", "shell_command", "local_shell"):
                cmd = a.get("command") or a.get("cmd") or ""
                if isinstance(cmd, list):
                    cmd = "\n".join(map(str, cmd))
                if "*** Begin Patch" in cmd:
                    patch = cmd
        elif t == "local_shell_call":
            cmd = (p.get("action") or {}).get("command") or []
            cmd = "\n".join(cmd) if isinstance(cmd, list) else str(cmd)
            if "*** Begin Patch" in cmd:
                patch = cmd
        if patch is not None:
            added = patch_added(patch)
            r = {"line": i, "id": p.get("call_id"), "tool": name or t,
                 "path": ",".join(added.keys()), "paths": list(added.keys()),
                 "texts": [v.replace("\x00", "\n\x00\n") for v in added.values()],
                 "ts": o.get("timestamp"), "ok": None}
            recs.append(r)
            if p.get("call_id"):
                by_call[p["call_id"]] = r
        if t == "patch_apply_end" and p.get("call_id") in by_call:
            by_call[p["call_id"]]["ok"] = bool(p.get("success"))
        if t in ("custom_tool_call_output", "function_call_output") and p.get("call_id") in by_call:
            r = by_call[p["call_id"]]
            outp = p.get("output")
            s = outp if isinstance(outp, str) else json.dumps(outp)
            if r["ok"] is None:
                if "Success." in s or '"exit_code":0' in s or '"exit_code": 0' in s:
                    r["ok"] = True
                elif "error" in s.lower() or "failed" in s.lower():
                    r["ok"] = False
    return recs


# ---------------------------------------------------------------- gemini
def gemini_records(text):
    recs = []
    msgs = []
    try:
        o = json.loads(text)
        if isinstance(o, dict):
            msgs = [(None, m) for m in o.get("messages", [])]
        elif isinstance(o, list):
            msgs = [(None, m) for m in o]
    except Exception:
        for i, line in enumerate(text.split("\n"), 1):
            try:
                msgs.append((i, json.loads(line)))
            except Exception:
                pass
    for ln, m in msgs:
        if not isinstance(m, dict):
            continue
        for tc in m.get("toolCalls") or []:
            if tc.get("name") in ("write_file", "replace", "edit", "smart_edit"):
                a = tc.get("args") or {}
                parts = [a.get(k) for k in ("content", "new_string", "newContent") if isinstance(a.get(k), str)]
                st = tc.get("status")
                recs.append({"line": ln, "id": m.get("id"), "call_id": tc.get("id"),
                             "tool": tc.get("name"), "path": a.get("file_path") or a.get("absolute_path"),
                             "texts": parts, "ts": tc.get("timestamp") or m.get("timestamp"),
                             "ok": None if st is None else st == "success"})
    return recs


# ---------------------------------------------------------------- aider
def aider_records(text):
    lines = text.split("\n")
    recs = []
    # split into responses: a response = maximal run of lines after a user block
    i, n = 0, len(lines)
    resp_start = None
    blocks = []  # (start, end) 0-based inclusive-exclusive of assistant text + trailing '>' lines
    cur = None
    for idx, ln in enumerate(lines):
        if (ln.startswith("#### ") and "(Y)es/(N)o" not in ln) or ln.startswith("# aider chat started"):
            # '#### ...(Y)es/(N)o...' lines are answers to confirmation prompts, not new user turns
            if cur is not None:
                blocks.append((cur, idx))
                cur = None
            continue
        if cur is None and ln.strip() and not ln.startswith(">"):
            cur = idx
    if cur is not None:
        blocks.append((cur, n))
    for s, e in blocks:
        seg = lines[s:e]
        texts = []
        infence, fence, buf, mode = False, None, [], None
        in_repl, repl = False, []
        for ln in seg:
            st = ln.strip()
            if re.match(r"^<{5,9} SEARCH", st):
                in_repl = False
                continue
            if re.match(r"^={5,9}$", st):
                in_repl = True
                repl = []
                continue
            if re.match(r"^>{5,9} REPLACE", st):
                texts.append("\n".join(repl))
                in_repl = False
                continue
            if in_repl:
                repl.append(ln)
        # fenced blocks without SEARCH markers -> whole / udiff
        body, inb = [], False
        for ln in seg:
            if ln.startswith("```"):
                if not inb:
                    inb, body = True, []
                else:
                    inb = False
                    blk = "\n".join(body)
                    if "SEARCH" in blk and "REPLACE" in blk:
                        pass
                    elif re.search(r"^@@", blk, re.M):
                        texts.append("\n".join(l[1:] for l in body if l.startswith("+") and not l.startswith("+++")))
                    else:
                        texts.append(blk)
                continue
            if inb:
                body.append(ln)
        applied = []
        commit, dirty, prev = None, [], ""
        for k, ln in enumerate(seg):
            m = re.match(r"^> Applied edit to (.*?)\s*$", ln)
            if m:
                applied.append((s + k + 1, m.group(1).strip()))
            m = re.match(r"^> Commit ([0-9a-f]{6,40}) ", ln)
            if m:
                if prev.startswith("> Committing") and "before applying edits" in prev:
                    dirty.append(m.group(1))      # aider committed the USER's dirty files
                elif commit is None and applied:
                    commit = m.group(1)           # commit of this response's edits
            if ln.strip():
                prev = ln
        recs.append({"line": applied[0][0] if applied else None, "applied": applied,
                     "first_line": s + 1, "texts": texts, "commit": commit, "dirty_commits": dirty,
                     "ok": bool(applied), "ts": None, "tool": "aider-response",
                     "path": ",".join(p for _, p in applied)})
    return recs


# ---------------------------------------------------------------- specstory
def specstory_records(text):
    lines = text.split("\n")
    recs = []
    n = len(lines)
    idx = 0
    while idx < n:
        ln = lines[idx]
        start = None
        m_tool = re.search(r'<tool-use[^>]*data-tool-name="([^"]*(?:[Ee]dit|[Ww]rite|[Rr]eplace|[Cc]reate|[Pp]atch|MultiEdit)[^"]*)"', ln)
        m_sum = re.search(r"<summary>(?:Tool use: \*\*)?(Edit file|edit_file|Write|Edit|MultiEdit|write|search_replace|create_file|apply_patch)[^<]*</summary>", ln)
        m_fence = re.match(r"^```[\w+-]*:(\S+)", ln)
        if m_tool or m_sum:
            start = idx
            # block ends at </tool-use> or </details>
            end = idx + 1
            closer = "</tool-use>" if m_tool else "</details>"
            while end < n and closer not in lines[end]:
                end += 1
            seg = lines[start:end + 1]
            header = " ".join(seg[:4])
            mp = re.search(r"(?:Edit file|edit_file|Write|Edit|MultiEdit|search_replace|create_file|apply_patch)[^:]*:\s*([^<\n*]+)", header)
            name = m_tool.group(1) if m_tool else m_sum.group(1)
            # new text: '+' lines of diff fences, else all fence contents
            txt, inb, cur_is_diff, cur_is_json, body = [], False, False, False, []
            jpath, status = None, None
            for l2 in seg:
                ms = re.match(r"^Status: \*\*(\w+)\*\*", l2)
                if ms:
                    status = ms.group(1)
                if l2.startswith("```"):
                    if not inb:
                        inb, body = True, []
                        cur_is_diff = l2.strip().startswith("```diff")
                        cur_is_json = l2.strip().startswith("```json")
                    else:
                        inb = False
                        if cur_is_diff:
                            txt.append("\n".join(b[1:] for b in body if b.startswith("+") and not b.startswith("+++")))
                        elif cur_is_json:
                            try:
                                jo = json.loads("\n".join(body))
                            except Exception:
                                jo = None
                            if isinstance(jo, dict):
                                for k in ("textEditContent", "content", "new_string", "newString", "code", "contents", "file_text"):
                                    if isinstance(jo.get(k), str) and jo[k]:
                                        txt.append(html.unescape(jo[k]))
                                jpath = jpath or jo.get("file_path") or jo.get("filePath") or jo.get("path")
                            else:
                                txt.append("\n".join(body))
                        else:
                            txt.append("\n".join(body))
                    continue
                if inb:
                    body.append(l2)
            recs.append({"line": start + 1, "tool": name, "path": (mp.group(1).strip() if mp else None) or jpath,
                         "texts": txt, "ok": None if status is None else status == "completed", "ts": None})
            idx = end + 1
            continue
        if m_fence:
            start = idx
            end = idx + 1
            while end < n and not lines[end].startswith("```"):
                end += 1
            recs.append({"line": start + 1, "tool": "codeblock", "path": m_fence.group(1),
                         "texts": ["\n".join(lines[start + 1:end])], "ok": None, "ts": None})
            idx = end + 1
            continue
        idx += 1
    return recs


PARSERS = {"claude": claude_records, "codex": codex_records, "gemini": gemini_records,
           "aider": aider_records, "specstory": specstory_records}


def path_match(rec_path, file):
    if not file or not rec_path:
        return True
    for p in str(rec_path).split(","):
        p = p.strip().replace("\\", "/")
        if p.endswith("/" + file) or p == file or file.endswith("/" + p.lstrip("./")) or p.lstrip("./") == file:
            return True
    return False


def find_truth(fmt, text, fragment, file=None, before=None, commit=None):
    recs = PARSERS[fmt](text)
    nf = norm(fragment)
    hits = []
    for r in recs:
        if any(nf and nf in norm(t).replace("\x00", "") and nf in norm(t) for t in r["texts"]):
            hits.append(r)
    bt = parse_ts(before) if before else None
    if bt:
        hits = [r for r in hits if parse_ts(r.get("ts")) is None or parse_ts(r.get("ts")) <= bt]
    pm = [r for r in hits if path_match(r.get("path"), file)]
    good = [r for r in pm if r.get("ok") is not False]
    failed = [r for r in pm if r.get("ok") is False]
    if fmt == "aider" and commit:
        # prefer the response whose '> Commit' names this commit, else any before it
        c = [r for r in good if r.get("commit") and commit.startswith(r["commit"])]
        if c:
            good = c
    res = {"n_records": len(recs), "n_hits_any_path": len(hits), "n_hits": len(good),
           "failed_hits": [r["line"] for r in failed], "truth": None}
    if good:
        t = good[-1]
        line = t["line"]
        if fmt == "aider" and t.get("applied") and file:
            for ln, p in t["applied"]:
                if path_match(p, file):
                    line = ln
        res["truth"] = {k: t.get(k) for k in ("line", "id", "tool", "path", "ts", "first_line", "commit")}
        res["truth"]["line"] = line
        res["all_hit_lines"] = [r["line"] if fmt != "gemini" else r["id"] for r in good]
    return res


def load_session(args_git_dir, rev):
    return subprocess.run(["git", "--git-dir", args_git_dir, "show", rev], capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--format")
    ap.add_argument("--session")
    ap.add_argument("--git-dir")
    ap.add_argument("--rev")
    ap.add_argument("--fragment")
    ap.add_argument("--fragment-file")
    ap.add_argument("--file")
    ap.add_argument("--before")
    ap.add_argument("--commit")
    ap.add_argument("--cases")
    ap.add_argument("--id")
    a = ap.parse_args()
    if a.cases:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from attribution import fragment_of, source_of
        cases = json.load(open(a.cases))
        with tempfile.TemporaryDirectory() as work:
            for c in cases:
                if a.id and c["id"] != a.id:
                    continue
                git_dir = source_of(c)
                if "://" in git_dir:
                    local = os.path.join(work, c["id"])
                    subprocess.run(["git", "clone", "-q", "--bare", git_dir, local], check=True)
                    git_dir = local
                w = c["session"]["where"]
                text = load_session(git_dir, w)
                commit = c.get("commit") or c["tip"]
                before = c.get("cutoff") or subprocess.run(
                    ["git", "--git-dir", git_dir, "show", "-s", "--format=%cI", commit],
                    capture_output=True, text=True).stdout.strip()
                r = find_truth(c["format"], text, fragment_of(c, git_dir), c["file"], before, commit)
                got = r["truth"]["line"] if r["truth"] else None
                if c["format"] == "gemini" and r["truth"]:
                    got = r["truth"]["id"]
                exp = c["truth"].get("line") if c["format"] != "gemini" else c["truth"].get("message_id")
                flag = "OK " if got == exp else ("MANUAL" if c["truth"].get("manual") else "DIFF")
                print(f"{flag} {c['id']:<28} {c['format']:<9} expected={exp} computed={got} "
                      f"hits={r.get('all_hit_lines')} failed={r['failed_hits']}")
        return
    if a.session:
        text = open(a.session, encoding="utf-8", errors="replace").read()
    else:
        text = load_session(a.git_dir, a.rev)
    frag = open(a.fragment_file).read() if a.fragment_file else a.fragment
    print(json.dumps(find_truth(a.format, text, frag, a.file, a.before, a.commit), indent=1, default=str))


if __name__ == "__main__":
    main()
