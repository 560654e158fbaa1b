#!/usr/bin/env python3
"""The verdict benchmark (bench/verdict/README.md): origin turn, type and missed opportunities
of git sage's default judge against two blind labellers, on real agent sessions that public
repositories commit beside their code.

  bench/verdict.py packets BIN CASES.json OUTDIR [--only ID]
      For each case: a fresh clone, `git sage blame-origin` for provenance, bound and scope
      (nothing of the judge is kept), and a Markdown packet for labellers (OUTDIR/ID.md) with
      the task, the finding, what history says, and every turn of the scope in full. Packets
      hold third-party text: keep them out of the repository.

  bench/verdict.py manifest OUTDIR [--split dev|held_out|all]
      Makes the dataset something `git sage batch` runs over: clones every case's repository
      into OUTDIR/repos/ID (no work tree), writes its finding as OUTDIR/findings/ID.yaml, and
      OUTDIR/verdict.yaml, a sage.manifest/1 whose labels carry the first labeller's verdict
      (origin_type, origin_turn, which the batch summary compares with) and the second's
      (origin_type_l2, origin_turn_l2). Then: git sage batch OUTDIR/verdict.yaml

  bench/verdict.py merge OUT.json SPLIT LABELLER BATCH.json...
      Joins one labeller's batch files into the dataset's file for a split, sorted by case,
      with quoted session text (three or more words between quotes) in the reasons left out:
      the dataset holds references and our own words only.

  bench/verdict.py measure BIN CASES.json LABELS.json... [--split dev|held_out|all] [--json OUT]
      Runs the product on every case and prints the labellers' agreement with each other (the
      ceiling) beside the product's agreement with each labeller: origin turn exact and ±1,
      type, missed-opportunity Jaccard, per-dimension Cohen's κ (quadratic weights), kinds and
      opportunities, and how many verdicts are firm.

Repositories are cloned from the case's mirror, $SAGE_MIRRORS/<owner>+<name>/repo (default
/work/.mirror, where the workplace fetch tool puts snapshots), else GitHub.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attribution import source_of  # noqa: E402  (clone from a mirror when there is one)
from judge_eval import kappa  # noqa: E402

DIMS = ["tr", "di", "vr", "sa"]
TYPES = ["inadequate_defence", "unaddressed_requirement", "defect_in_change", "undetermined"]
KINDS = ["planning", "implementation", "verification", "review", "administrative"]


def run(args, cwd=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


def clone(case, work):
    repo = os.path.join(work, case["id"])
    if os.path.isdir(repo):
        return repo, None
    src = source_of(case)
    r = run(["git", "clone", "-q", "--no-checkout", src, repo])
    if r.returncode != 0:
        shutil.rmtree(repo, ignore_errors=True)
        return None, "clone: " + r.stderr.strip()[-200:]
    return repo, None


def anchor_file(case, work):
    """The finding as an anchor YAML (JSON is YAML) outside the clone."""
    f = case["finding"]
    doc = {"id": case["id"], "cwe": f["cwe"], "class": f.get("class", "insufficient_defence"),
           "file": f["file"], "description": f.get("description", "")}
    for k in ("lines", "pattern", "fragments", "kind"):
        if k in f:
            doc[k] = f[k]
    path = os.path.join(work, case["id"] + ".anchor.yaml")
    with open(path, "w") as out:
        json.dump(doc, out)
    return path


def blame(binary, case, repo, anchor, extra=()):
    args = [binary, "blame-origin", case["tip"], "--base", case["base"], "--finding", anchor,
            "--session", case["session"], "--format", "json", "-q", *extra]
    r = run(args, cwd=repo)
    if r.returncode not in (0, 1):
        return None, r.stderr.strip()[-400:]
    try:
        return json.loads(r.stdout), None
    except json.JSONDecodeError:
        return None, "no JSON: " + r.stderr.strip()[-300:]


def provenance_frame(binary, case, repo, anchor):
    """The frame from `git sage provenance` alone (no judge): provenance, scope and task, and
    the bound the origin rule takes (docs/method.md#origin-rule)."""
    r = run([binary, "provenance", case["tip"], "--base", case["base"], "--finding", anchor,
             "--session", case["session"], "--format", "json", "-q"], cwd=repo)
    if r.returncode != 0:
        return None, r.stderr.strip()[-300:]
    doc = json.loads(r.stdout)
    prov = doc.get("provenance") or {}
    w = prov.get("introducing_write") or {}
    scope = (doc.get("session") or {}).get("scope") or {}
    first, last = scope.get("first"), scope.get("last")
    delivered = max((x["turn"] for x in prov.get("writes") or []
                     if x.get("agent") and x.get("turn") is not None), default=None)
    if prov.get("status") == "introduced":
        bound = w.get("turn") if w.get("turn") is not None else last
    else:
        bound = delivered if delivered is not None else last
    return {"status": prov.get("status"), "introducing_turn": w.get("turn"),
            "bound": bound, "scope": [first, last], "task": scope.get("task"),
            "session": (doc.get("session") or {}).get("source")}, None


def session_turns(binary, case, repo):
    r = run([binary, "turns", case["session"], "--format", "json"], cwd=repo)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)


def clip(text, limit):
    text = text or ""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters]"


def fence(text):
    ticks = "````"
    while ticks in (text or ""):
        ticks += "`"
    return f"{ticks}\n{text}\n{ticks}"


def frame(doc):
    """What a labeller needs of the product's answer: provenance, bound, scope — no judge."""
    prov = doc.get("provenance") or {}
    w = prov.get("introducing_write") or {}
    session = doc.get("session") or {}
    scope = session.get("scope") or {}
    origin = doc.get("origin") or {}
    return {
        "status": prov.get("status"),
        "introducing_turn": w.get("turn"),
        "introducing_commit": w.get("commit"),
        "mapped_by": w.get("mapped_by"),
        "bound": origin.get("bound"),
        "bound_by": origin.get("bound_by"),
        "scope": [scope.get("first"), scope.get("last")],
        "task": scope.get("task"),
        "scope_reason": scope.get("reason"),
        "session": session.get("source"),
        "reconstruction": prov.get("reconstruction"),
    }


def render_turn(t):
    out = [f"## Turn {t['turn']}", ""]
    if t.get("text"):
        out += ["**Message**", "", fence(t["text"]), ""]
    if t.get("reasoning"):
        out += ["**Reasoning**", "", fence(clip(t["reasoning"], 6000)), ""]
    elif t.get("reasoning_redacted"):
        out += ["*(reasoning withheld by the log)*", ""]
    for c in t.get("tool_calls") or []:
        args = json.dumps(c.get("arguments"), ensure_ascii=False, indent=1)
        out += [f"**Tool call** `{c.get('name')}`", "", fence(clip(args, 5000)), ""]
        res = c.get("result") or {}
        if res:
            tag = " (error)" if res.get("is_error") else ""
            out += [f"Result{tag}:", "", fence(clip(res.get("text"), 2000)), ""]
    for ch in t.get("file_changes") or []:
        body = ch.get("patch") or ch.get("content") or ch.get("new") or ""
        out += [f"**File change** `{ch.get('path')}` ({ch.get('op')})", "", fence(clip(body, 6000)), ""]
    return "\n".join(out)


def packet(binary, case, work):
    repo, err = clone(case, work)
    if err:
        return None, err
    anchor = anchor_file(case, work)
    doc, err = blame(binary, case, repo, anchor)
    if err:
        return None, err
    fr = frame(doc)
    turns = session_turns(binary, case, repo)
    if turns is None:
        return None, "turns: cannot read " + case["session"]
    first, last = fr["scope"]
    f = case["finding"]
    lines = run(["git", "show", f"{case['tip']}:{f['file']}"], cwd=repo).stdout.split("\n")
    snippet = ""
    if "lines" in f:
        a, _, b = str(f["lines"]).partition("-")
        a, b = int(a), int(b or a)
        snippet = "\n".join(lines[max(0, a - 4):b + 3])
    context = [m for m in turns.get("context") or [] if first <= m["before_turn"] <= last + 1]
    out = [f"# Case {case['id']}", "",
           f"- Session: `{fr['session']}` ({case['format']}), turns {first}–{last} in scope "
           f"({fr['scope_reason']})",
           f"- Task (the user message that opened the scope): see below",
           f"- Finding: CWE-{f['cwe']}, {f.get('class')}, `{f['file']}` lines {f.get('lines') or f.get('pattern')}",
           f"- What it says: {f.get('description')}",
           f"- Provenance: **{fr['status']}**; introducing write's turn: {fr['introducing_turn']} "
           f"(commit {fr['introducing_commit']}, mapped by {fr['mapped_by']}); reconstruction {fr['reconstruction']}",
           f"- Bound B for the origin rule: **turn {fr['bound']}** ({fr['bound_by']})", "",
           "## Task", "", fence(fr["task"] or ""), "",
           "## The anchored code at the tip (with 3 lines around)", "", fence(snippet), ""]
    by_turn = {m["before_turn"]: m for m in context}
    for t in turns["turns"]:
        if not (first <= t["turn"] <= last):
            continue
        if t["turn"] in by_turn and t["turn"] != first:
            m = by_turn[t["turn"]]
            out += [f"## ({m['role']} message before turn {t['turn']})", "", fence(clip(m["text"], 4000)), ""]
        out.append(render_turn(t))
    return {"frame": fr, "text": "\n".join(out)}, None


def cmd_packets(args):
    binary, cases_path, outdir = os.path.abspath(args[0]), args[1], args[2]
    only = args[args.index("--only") + 1] if "--only" in args else None
    os.makedirs(outdir, exist_ok=True)
    cases = json.load(open(cases_path))
    frames = {}
    with tempfile.TemporaryDirectory() as work:
        for c in cases:
            if only and c["id"] != only:
                continue
            p, err = packet(binary, c, work)
            if err:
                print(f"{c['id']}: {err}")
                continue
            with open(os.path.join(outdir, c["id"] + ".md"), "w") as f:
                f.write(p["text"])
            frames[c["id"]] = p["frame"]
            fr = p["frame"]
            print(f"{c['id']}: {fr['status']}, B={fr['bound']}, scope {fr['scope']}")
    with open(os.path.join(outdir, "frames.json"), "w") as f:
        json.dump(frames, f, indent=1)


QUOTED = re.compile("[\"'\u2018\u201c]([^\"'\u2019\u201d]{6,})[\"'\u2019\u201d]")


def unquote(text):
    """A reason without the session's own words: quoted spans of three or more words go."""
    return QUOTED.sub(lambda m: "[…]" if len(m.group(1).split()) >= 3 else m.group(0), text or "")


def cmd_manifest(args):
    outdir = os.path.abspath(args[0])
    split = args[args.index("--split") + 1] if "--split" in args else "all"
    here = os.path.dirname(os.path.abspath(__file__))
    cases = [c for c in json.load(open(os.path.join(here, "verdict", "cases.json")))
             if split in ("all", c["split"])]
    labels = load_labels(sorted(
        os.path.join(here, "verdict", "labels", f) for f in os.listdir(os.path.join(here, "verdict", "labels"))
        if f.endswith(".json")))
    os.makedirs(os.path.join(outdir, "repos"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "findings"), exist_ok=True)
    lines = ["schema: sage.manifest/1", "# The verdict benchmark (docs/dataset.md), made by bench/verdict.py manifest.", "cases:"]
    for c in cases:
        repo, err = clone(c, os.path.join(outdir, "repos"))
        if err:
            print(f"{c['id']}: {err}")
            continue
        finding = anchor_file(c, os.path.join(outdir, "findings"))
        lab = {"framework": c["format"], "task": c["repo"] + ":" + c["session"].split(":", 1)[-1],
               "split": c["split"]}
        for who, suffix in (("L1", ""), ("L2", "_l2")):
            v = (labels.get(c["id"], {}).get(who) or {}).get("verdict")
            if v:
                lab["origin_type" + suffix] = v["type"]
                if v.get("origin_turn") is not None:
                    lab["origin_turn" + suffix] = v["origin_turn"]
        entry = {"id": c["id"], "repo": os.path.relpath(repo, outdir), "base": c["base"], "tip": c["tip"],
                 "finding": os.path.relpath(finding, outdir), "session": c["session"], "labels": lab}
        lines.append("  - " + json.dumps(entry, ensure_ascii=False))
        print(f"{c['id']}: ready")
    with open(os.path.join(outdir, "verdict.yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"git sage batch {os.path.join(outdir, 'verdict.yaml')}")


def cmd_merge(args):
    out, split, who, batches = args[0], args[1], args[2], args[3:]
    cases = []
    for b in batches:
        cases += json.load(open(b))["cases"]
    ids = [c["case"] for c in cases]
    if len(ids) != len(set(ids)):
        raise SystemExit(f"{who}: a case is labelled twice")
    for c in cases:
        for t in c["turns"] + [c["verdict"]]:
            if "why" in t:
                t["why"] = unquote(t["why"])
    doc = {"schema": "sage.verdict-labels/1", "labeller": who, "split": split,
           "held_out": split == "held_out", "measured": None,
           "cases": sorted(cases, key=lambda c: c["case"])}
    if os.path.exists(out):
        doc["measured"] = json.load(open(out)).get("measured")
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{out}: {len(cases)} cases")


def load_labels(paths):
    """{case: {labeller: entry}} from sage.verdict-labels/1 files."""
    out = {}
    for p in paths:
        doc = json.load(open(p))
        who = doc.get("labeller") or os.path.basename(os.path.dirname(p))
        for c in doc["cases"]:
            out.setdefault(c["case"], {})[who] = c
    return out


def rule(turns, bound, status, introducing_turn, vr_max=1, sa_max=1):
    """docs/method.md's origin rule over labelled turns: (origin turn, type, missed)."""
    ordered = sorted(turns, key=lambda t: t["turn"])
    origin = None
    for t in ordered:
        if t["turn"] > bound:
            break
        if not t.get("applicable", t["kind"] != "administrative"):
            continue
        if t["turn"] < bound and t["di"] > 0:
            origin = (t["turn"], "inadequate_defence")
            break
        if t.get("opportunity") and t["tr"] == 0 and t["di"] == 0:
            origin = (t["turn"], "unaddressed_requirement")
            break
    if origin is None and status == "introduced" and introducing_turn is not None:
        t = next((t for t in ordered if t["turn"] == bound), None)
        if t and t.get("applicable", t["kind"] != "administrative") and (t["tr"] > 0 or t["di"] > 0):
            origin = (bound, "defect_in_change")
    if origin is None:
        return None, "undetermined", []
    missed = [t["turn"] for t in ordered
              if t["turn"] > origin[0] and t.get("applicable", t["kind"] != "administrative")
              and t["kind"] in ("implementation", "review") and (t["vr"] <= vr_max or t["sa"] <= sa_max)]
    return origin[0], origin[1], missed


def jaccard(a, b):
    a, b = set(a), set(b)
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def compare(x, y):
    """Agreement of two raters over the cases both rated: x, y map case -> rating, where a
    rating is {"verdict": (turn, type, missed), "turns": {turn: labels}}."""
    cases = sorted(set(x) & set(y))
    m = {"cases": len(cases)}
    if not cases:
        return m
    same_turn = sum(x[c]["verdict"][0] == y[c]["verdict"][0] for c in cases)
    near = sum((x[c]["verdict"][0] is None) == (y[c]["verdict"][0] is None)
               and (x[c]["verdict"][0] is None or abs(x[c]["verdict"][0] - y[c]["verdict"][0]) <= 1)
               for c in cases)
    same_type = sum(x[c]["verdict"][1] == y[c]["verdict"][1] for c in cases)
    m["turn_exact"] = same_turn / len(cases)
    m["turn_pm1"] = near / len(cases)
    m["type"] = same_type / len(cases)
    m["type_kappa"] = kappa([(TYPES.index(x[c]["verdict"][1]), TYPES.index(y[c]["verdict"][1])) for c in cases],
                            k=len(TYPES), weighted=False)
    m["missed_jaccard"] = sum(jaccard(x[c]["verdict"][2], y[c]["verdict"][2]) for c in cases) / len(cases)
    pairs = {d: [] for d in DIMS}
    kinds = opp = n = 0
    for c in cases:
        for t, a in x[c]["turns"].items():
            b = y[c]["turns"].get(t)
            if b is None:
                continue
            n += 1
            kinds += a["kind"] == b["kind"]
            opp += bool(a.get("opportunity")) == bool(b.get("opportunity"))
            for d in DIMS:
                pairs[d].append((a[d], b[d]))
    m["turns"] = n
    for d in DIMS:
        m[d] = kappa(pairs[d])
    m["kinds"] = kinds / n if n else float("nan")
    m["opportunity"] = opp / n if n else float("nan")
    return m


def product_rating(doc, scope):
    """The product's answer in the shape of a labeller's."""
    o = doc.get("origin") or {}
    turn = o.get("turn") if o.get("status") == "localized" else None
    typ = o.get("type") if turn is not None else "undetermined"
    missed = [m["turn"] for m in doc.get("missed_opportunities") or []]
    turns = {}
    for t in doc.get("turns") or []:
        if scope[0] <= t["turn"] <= scope[1]:
            s = t.get("scores") or {}
            turns[t["turn"]] = {"kind": t["kind"], "opportunity": t["opportunity"],
                                "applicable": t["applicable"], **{d: s.get(d, 0) for d in DIMS}}
    margin = o.get("margin") or {}
    return {"verdict": (turn, typ, missed), "turns": turns, "firm": margin.get("firm")}


def fmt(v):
    return "  -  " if v is None or v != v else f"{v:5.2f}"


def cmd_measure(args):
    binary, cases_path = os.path.abspath(args[0]), args[1]
    opts = {"--split": "all", "--json": None}
    rest = []
    i = 2
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = args[i + 1]
            i += 2
        else:
            rest.append(args[i])
            i += 1
    labels = load_labels(rest)
    cases = [c for c in json.load(open(cases_path))
             if opts["--split"] in ("all", c["split"]) and c["id"] in labels]
    raters = {}
    problems = []
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for c in cases:
            repo, err = clone(c, work)
            if err:
                problems.append(f"{c['id']}: {err}")
                continue
            doc, err = blame(binary, c, repo, anchor_file(c, work))
            if err:
                problems.append(f"{c['id']}: {err}")
                continue
            fr = frame(doc)
            prod = product_rating(doc, fr["scope"])
            raters.setdefault("product", {})[c["id"]] = prod
            row = {"id": c["id"], "product": prod["verdict"], "firm": prod["firm"]}
            for who, entry in sorted(labels[c["id"]].items()):
                turns = {t["turn"]: t for t in entry["turns"]}
                v = entry["verdict"]
                stated = (v.get("origin_turn"), v.get("type"), sorted(v.get("missed") or []))
                derived = rule(entry["turns"], fr["bound"], fr["status"], fr["introducing_turn"])
                if (derived[0], derived[1], sorted(derived[2])) != stated:
                    problems.append(f"{c['id']}/{who}: stated verdict {stated[:2]} but the rule over the labels gives {derived[:2]}")
                raters.setdefault(who, {})[c["id"]] = {"verdict": stated, "turns": turns}
                row[who] = stated
            rows.append(row)
    for r in rows:
        cells = "  ".join(f"{k}={v[0]}/{v[1][:12]}" for k, v in r.items() if isinstance(v, tuple))
        print(f"{r['id']:<34} {'firm ' if r['firm'] else 'close'} {cells}")
    humans = sorted(k for k in raters if k != "product")
    table = {}
    if len(humans) >= 2:
        table[f"{humans[0]} vs {humans[1]} (ceiling)"] = compare(raters[humans[0]], raters[humans[1]])
    for h in humans:
        table[f"product vs {h}"] = compare(raters["product"], raters[h])
    keys = ["cases", "turns", "turn_exact", "turn_pm1", "type", "type_kappa", "missed_jaccard",
            "tr", "di", "vr", "sa", "kinds", "opportunity"]
    print(f"\nsplit: {opts['--split']}")
    print(f"{'':<28}" + "".join(f"{k[:9]:>10}" for k in keys))
    for name, m in table.items():
        print(f"{name:<28}" + "".join(f"{(str(m.get(k)) if k in ('cases', 'turns') else fmt(m.get(k))):>10}" for k in keys))
    ceiling = next((m for n, m in table.items() if n.endswith("(ceiling)")), None)
    if ceiling:
        print("\nproduct / ceiling (target >= 0.80; kinds >= 0.85 absolute):")
        for h in humans:
            m = table[f"product vs {h}"]
            print(f"  vs {h}: " + ", ".join(
                f"{k} {m[k] / ceiling[k]:.2f}" if ceiling.get(k) and ceiling[k] > 0 else f"{k} -"
                for k in ["turn_exact", "type", "missed_jaccard", "tr", "di", "vr", "sa"]) + f", kinds {m.get('kinds', 0):.2f}")
    firm = [c for c, p in raters.get("product", {}).items() if p["firm"]]
    close = [c for c, p in raters.get("product", {}).items() if not p["firm"]]
    print(f"\nfirm verdicts: {len(firm)} of {len(firm) + len(close)}")
    for name, group in (("firm", firm), ("close call", close)):
        for h in humans:
            g = [c for c in group if c in raters[h]]
            if not g:
                continue
            t = sum(raters["product"][c]["verdict"][:2] == raters[h][c]["verdict"][:2] for c in g)
            ty = sum(raters["product"][c]["verdict"][1] == raters[h][c]["verdict"][1] for c in g)
            print(f"  {name:<10} vs {h}: turn and type {t}/{len(g)}, type {ty}/{len(g)}")
    if problems:
        print("\nproblems:")
        for p in problems:
            print("  " + p)
    if opts["--json"]:
        with open(opts["--json"], "w") as f:
            json.dump({"table": table, "rows": rows, "problems": problems}, f, indent=1, default=str)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("packets", "measure", "merge", "manifest"):
        print(__doc__)
        sys.exit(2)
    if sys.argv[1] == "packets":
        cmd_packets(sys.argv[2:])
    elif sys.argv[1] == "merge":
        cmd_merge(sys.argv[2:])
    elif sys.argv[1] == "manifest":
        cmd_manifest(sys.argv[2:])
    else:
        cmd_measure(sys.argv[2:])



if __name__ == "__main__":
    main()
