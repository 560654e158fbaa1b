#!/usr/bin/env python3
"""Carries a label set's turn numbers over a parser change that joins or splits turns.

Both binaries read the same session file; each old turn is mapped to the new turn that holds
its first raw line (a turn's `source.line`). Old turns that land in one new turn are joined as
earlier renumberings did (bench/judge_labels/README.md): the highest score per dimension, the
kind that does most (implementation, verification, review, planning, administrative), an
opportunity when any was one, the reasons joined, and `v1_turns` listing the old numbers. A
split old turn keeps its labels on the first new turn it starts.

Usage: bench/renumber_labels.py OLD_BIN NEW_BIN LABELS.json SESSION_ID SESSION_FILE NOTE
"""

import json
import subprocess
import sys

DOES_MOST = ["implementation", "verification", "review", "planning", "administrative"]


def starts(binary, path):
    out = subprocess.run([binary, "turns", path, "--format", "json"], capture_output=True,
                         text=True, check=True).stdout
    return [(t["turn"], (t.get("source") or {}).get("line")) for t in json.loads(out)["turns"]]


def main():
    old_bin, new_bin, labels_path, sid, session, note = sys.argv[1:7]
    old, new = starts(old_bin, session), starts(new_bin, session)
    old_line = dict(old)

    def new_turn(line):
        holder = None
        for n, start in new:
            if start is not None and start <= line:
                holder = n
        return holder

    doc = json.load(open(labels_path))
    session_doc = next(s for s in doc["sessions"] if s["id"] == sid)
    joined = {}
    for t in session_doc["turns"]:
        n = new_turn(old_line[t["turn"]])
        joined.setdefault(n, []).append(t)
    turns = []
    for n, group in sorted(joined.items()):
        if len(group) == 1:
            t = dict(group[0])
            if t["turn"] != n:
                t["v1_turns"] = [t["turn"]]
            t["turn"] = n
            turns.append(t)
            continue
        t = {"turn": n}
        for k in ("tr", "di", "vr", "sa"):
            t[k] = max(g[k] for g in group)
        for k in ("sa_v1",):
            if all(k in g for g in group):
                t[k] = max(g[k] for g in group)
        t["kind"] = min((g["kind"] for g in group), key=DOES_MOST.index)
        t["opportunity"] = any(g.get("opportunity") for g in group)
        t["why"] = " / ".join(g.get("why", "") for g in group)
        t["v1_turns"] = [g["turn"] for g in group]
        turns.append(t)
    moved = sum(1 for t in turns if "v1_turns" in t)
    if moved == 0:
        print(f"{sid}: {len(turns)} turns, none renumbered")
        return
    session_doc["turns"] = turns
    session_doc["renumbered"] = (session_doc.get("renumbered", "") + " " + note).strip()
    with open(labels_path, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{sid}: {len(session_doc['turns'])} turns, {moved} renumbered or joined")


if __name__ == "__main__":
    main()
