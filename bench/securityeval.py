#!/usr/bin/env python3
"""Measures `git sage screen` on SecurityEval (../shared/fixtures/real/securityeval/dataset.jsonl):
a repository whose base holds each sample's prompt and whose tip holds its insecure code, and
one whose tip holds this repository's own secure rewrites (tests/fixtures/screen/secure/).
Prints how many files each layer flags and how many are candidates, for both.

usage: securityeval.py BIN DATASET SECURE_DIR WORK_DIR [--list]"""
import json
import os
import subprocess
import sys

bin_, dataset, secure_dir, work = sys.argv[1:5]
show = "--list" in sys.argv


def git(repo, *args, data=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.com")
    return subprocess.run(["git", "-C", repo, *args], input=data, env=env, check=True,
                          capture_output=True, text=True).stdout


def build(name, files_base, files_tip):
    repo = os.path.join(work, name)
    subprocess.run(["rm", "-rf", repo], check=True)
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    for path, text in files_base.items():
        p = os.path.join(repo, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "prompts")
    for path, text in files_tip.items():
        open(os.path.join(repo, path), "w").write(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "agent code")
    return repo


def screen_run(repo, extra):
    out = subprocess.run([bin_, "-C", repo, "screen", "HEAD", "--base", "HEAD~1", "--format", "json", *extra],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"git sage screen failed: {out.stderr}")
    return json.loads(out.stdout)


def screen(repo):
    """One run per CWE, as a team would screen each task with its CWE (--cwe N -- files)."""
    ids = sorted(p for p in os.listdir(os.path.join(repo, "samples")))
    cwes = sorted({i.split("_")[0] for i in ids})
    merged = None
    for c in cwes:
        doc = screen_run(repo, ["--cwe", c, "--", f"samples/{c}_*"])
        if merged is None:
            merged = doc
        else:
            merged["files"].extend(doc["files"])
    return merged


samples = [json.loads(line) for line in open(dataset)]
base = {f"samples/{s['ID']}": s["Prompt"] + "\n" for s in samples}
tip = {f"samples/{s['ID']}": s["Insecure_code"] + "\n" for s in samples}
insecure_repo = build("securityeval-insecure", base, tip)
insecure = screen(insecure_repo)
insecure_plain = screen_run(insecure_repo, [])

secure_ids = sorted(f for f in os.listdir(secure_dir) if f.endswith(".py"))
by_id = {s["ID"]: s for s in samples}
base2 = {f"samples/{i}": by_id[i]["Prompt"] + "\n" for i in secure_ids}
tip2 = {f"samples/{i}": open(os.path.join(secure_dir, i)).read() for i in secure_ids}
secure_repo = build("securityeval-secure", base2, tip2)
secure = screen(secure_repo)
secure_plain = screen_run(secure_repo, [])


def row(doc):
    files = [f for f in doc["files"] if f["status"] != "deleted"]
    n = len(files)
    l0 = sum(1 for f in files if f.get("l0", {}).get("ok"))
    l1 = sum(1 for f in files if f.get("l1", {}).get("ok"))
    l2 = sum(1 for f in files if f.get("l2", {}).get("flagged"))
    l3 = sum(1 for f in files if f.get("l3", {}).get("flagged"))
    either = sum(1 for f in files if f.get("l2", {}).get("flagged") or f.get("l3", {}).get("flagged"))
    cand = sum(1 for f in files if f["candidate"])
    return n, l0, l1, l2, l3, either, cand


print(f"Bandit: {insecure['bandit']['status']} ({insecure['bandit'].get('detail', '')})")
print("(rows 1-2: each task screened with its CWE, --cwe N -- samples/CWE-N_*; rows 3-4: one run without it)")
print(f"{'':22} {'n':>4} {'L0 pass':>8} {'L1 pass':>8} {'L2 flag':>8} {'L3 flag':>8} {'L2∪L3':>8} {'cand.':>8}")
for label, doc in (("insecure (SecurityEval)", insecure), ("secure rewrites (ours)", secure),
                   ("insecure, no task CWE", insecure_plain), ("secure, no task CWE", secure_plain)):
    n, *cols = row(doc)
    cells = " ".join(f"{c:>4} {100 * c / n:>2.0f}%" if n else "   –" for c in cols)
    print(f"{label:22} {n:>4} {cells}")
n, l0, l1, l2, l3, either, cand = row(insecure)
sn, _, _, _, _, s_either, s_cand = row(secure)
print(f"L2 ∪ L3 on insecure: {either}/{n} = {100 * either / n:.1f}% (target ≥ 75%)")
print(f"L2 ∪ L3 on secure rewrites: {s_either}/{sn} = {100 * s_either / sn:.1f}% (target ≤ 15%)")
if show:
    print("\nnot flagged (insecure):")
    for f in insecure["files"]:
        if not (f.get("l2", {}).get("flagged") or f.get("l3", {}).get("flagged")):
            l3 = f.get("l3", {})
            print(f"  {f['path']}: R {l3.get('score')} sinks {[h['id'] for h in l3.get('sinks', [])]} sources {[h['id'] for h in l3.get('sources', [])]} guards {[g['category'] for g in l3.get('guards', [])]}")
    print("\nflagged (secure):")
    for f in secure["files"]:
        if f.get("l2", {}).get("flagged") or f.get("l3", {}).get("flagged"):
            l3 = f.get("l3", {})
            print(f"  {f['path']}: R {l3.get('score')} L2 {[x['test_id'] for x in f.get('l2', {}).get('findings', []) if x['severity'] == 'HIGH']} sinks {[(h['id'], h['lines']) for h in l3.get('sinks', [])]} sources {[h['id'] for h in l3.get('sources', [])]} guards {[g['category'] for g in l3.get('guards', [])]}")
