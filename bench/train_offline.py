#!/usr/bin/env python3
"""Trains the offline judge's model (src/judge/offline/model.rs) from the verdict benchmark's
development labels only, and writes templates/offline-model.json.

  bench/train_offline.py collect BIN CASES.json OUT.jsonl [--split dev] [--frames FRAMES.json]
      For each case of the split: a fresh clone, the frame of `git sage provenance` (scope,
      task, bound; no judge runs), then `git sage judge SESSION --turns A-B --task T --cwe N --anchor-file F
      --features-out` for what the model reads of every turn of the scope (the phrase rules'
      answers beside). One JSON line per turn: case, session, turn, kind, features.

  bench/train_offline.py collect-older BIN OUT.jsonl
      The same rows for the sessions of bench/judge_labels/*.json (the older single-labeller
      sets): each session judged over the span of its labelled turns with its CWE, task and
      anchored file, and the set's labels carried in the rows (`older`). They train the four
      score heads only: those sets followed other conventions for kinds and opportunities.

  bench/train_offline.py fit ROWS.jsonl LABELS.json... [--older OLDER.jsonl] [--out MODEL.json] [--folds K]
      Joins the rows with both labellers' labels (each labeller's label is a sample of weight
      1/2), standardises the features, fits one L2-regularised multinomial logistic regression
      per head (tr, di, vr, sa on 0-3; opportunity on 0/1) by full-batch Newton steps (the
      same answer on every run), reports K-fold cross-validation grouped by session (cases of
      one session stay together), and writes the model fitted on every row.

Needs numpy (pip install numpy==2.2.6). Deterministic: no random numbers; folds are the
sessions sorted by name, dealt in turn.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verdict as V  # noqa: E402

HEADS = {"tr": 4, "di": 4, "vr": 4, "sa": 4, "opportunity": 2}
# L2 strength per head (on standardised features), and the doubt ratio shipped.
LAMBDA = 4.0
LAMBDA_WORDS = 128.0
# How likely a level above 0 (an opportunity) must be to be given, per head; and the doubt
# ratio (src/judge/offline/model.rs). Chosen on the development cases' cross-validated
# predictions for the verdict's agreement with both labellers.
THRESHOLDS = {"tr": 0.5, "di": 0.4, "vr": 0.3, "sa": 0.4, "opportunity": 0.5}
DOUBT = 0.7


def session_key(case):
    return case["repo"] + ":" + case["session"].split(":", 1)[-1]


def cmd_collect(args):
    binary, cases_path, out = os.path.abspath(args[0]), args[1], args[2]
    split = args[args.index("--split") + 1] if "--split" in args else "dev"
    # The frame (scope, task, bound) from `git sage provenance`, which runs no judge; frames
    # saved by `verdict.py packets` (frames.json) may stand in for it.
    frames = json.load(open(args[args.index("--frames") + 1])) if "--frames" in args else {}
    cases = [c for c in json.load(open(cases_path)) if c["split"] == split]
    rows, names = [], None
    with tempfile.TemporaryDirectory() as work:
        for c in cases:
            repo, err = V.clone(c, work)
            if err:
                print(f"{c['id']}: {err}")
                continue
            fr = frames.get(c["id"])
            if fr is None:
                fr, err = V.provenance_frame(binary, c, repo, V.anchor_file(c, work))
                if err:
                    print(f"{c['id']}: {err}")
                    continue
            first, last = fr["scope"]
            feats = os.path.join(work, c["id"] + ".features")
            r = V.run([binary, "judge", c["session"], "--turns", f"{first}-{last}",
                       "--task", fr["task"] or "", "--cwe", str(c["finding"]["cwe"]),
                       "--anchor-file", c["finding"]["file"], "--features-out", feats,
                       "--format", "json", "-q", "--no-cache"], cwd=repo)
            if r.returncode != 0:
                print(f"{c['id']}: judge: {r.stderr.strip()[-300:]}")
                continue
            judged = {t["turn"]: t for t in json.loads(r.stdout)["turns"]}
            lines = open(feats).read().splitlines()
            names = json.loads(lines[0])["features"]
            for line in lines[1:]:
                x = json.loads(line)
                t = judged[x["turn"]]
                rows.append({"case": c["id"], "session": session_key(c), "turn": x["turn"],
                             "kind": t["kind"], "rule": t.get("scores") or {},
                             "rule_opportunity": t["opportunity"], "x": x["x"]})
            print(f"{c['id']}: {len(lines) - 1} turns")
    write_rows(out, names, rows)


def cmd_collect_older(args):
    import glob
    binary, out = os.path.abspath(args[0]), args[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    real = os.environ.get("SAGE_REAL", os.path.join(root, "..", "shared", "fixtures", "real"))
    mirrors = os.environ.get("SAGE_MIRRORS", "/work/.mirror")
    rows, names = [], None
    with tempfile.TemporaryDirectory() as work:
        for f in sorted(glob.glob(os.path.join(root, "bench", "judge_labels", "*.json"))):
            for sess in json.load(open(f))["sessions"]:
                src = sess["source"]
                if "fixture" in src:
                    log = os.path.join(real, src["fixture"])
                else:
                    owner, name = src["repo"].split("/")
                    git_dir = os.path.join(mirrors, f"{owner}+{name}", "repo")
                    log = os.path.join(work, sess["id"] + "." + src["path"].rsplit(".", 1)[-1])
                    r = subprocess.run(["git", "--git-dir", git_dir, "show", f"{src['commit']}:{src['path']}"],
                                       capture_output=True)
                    if r.returncode != 0:
                        print(f"{sess['id']}: cannot read {src['path']}")
                        continue
                    open(log, "wb").write(r.stdout)
                labelled = {t["turn"]: t for t in sess["turns"]}
                if not labelled:
                    continue
                feats = os.path.join(work, sess["id"] + ".features")
                cmd = [binary, "judge", log, "--turns", f"{min(labelled)}-{max(labelled)}",
                       "--task", sess["task"], "--cwe", str(sess["cwe"]), "--features-out", feats,
                       "--format", "json", "-q", "--no-cache", "--allow-partial"]
                if (sess.get("anchor") or {}).get("file"):
                    cmd += ["--anchor-file", sess["anchor"]["file"]]
                r = V.run(cmd, cwd=work)
                if r.returncode != 0:
                    print(f"{sess['id']}: judge: {r.stderr.strip()[-200:]}")
                    continue
                lines = open(feats).read().splitlines()
                names = json.loads(lines[0])["features"]
                n = 0
                for line in lines[1:]:
                    x = json.loads(line)
                    t = labelled.get(x["turn"])
                    if t is None:
                        continue
                    rows.append({"case": sess["id"], "session": "older:" + sess["id"], "turn": x["turn"],
                                 "older": {d: int(t[d]) for d in ("tr", "di", "vr", "sa")}, "x": x["x"]})
                    n += 1
                print(f"{sess['id']}: {n} turns")
    write_rows(out, names, rows)


def write_rows(path, names, rows):
    """The features' names on the first line, then one row per line (`load_rows` reads it)."""
    with open(path, "w") as f:
        f.write(json.dumps({"features": names}) + "\n")
        for r in rows:
            f.write(json.dumps(r) + "\n")


def load_rows(path):
    lines = open(path).read().splitlines()
    return json.loads(lines[0])["features"], [json.loads(l) for l in lines[1:]]


def samples(rows, labels, head, older_weight=0.5):
    """(X, y, weights) for one head over every (row, labeller) pair labelled, each labeller's
    label of weight 1/2; rows of the older sets (score heads only) with `older_weight`."""
    xs, ys, ws = [], [], []
    for r in rows:
        if "older" in r:
            if head != "opportunity":
                xs.append(r["x"])
                ys.append(r["older"][head])
                ws.append(older_weight)
            continue
        got = [lab["turns"][r["turn"]] for lab in labels.get(r["case"], {}).values()
               if r["turn"] in lab["turns"]]
        for t in got:
            xs.append(r["x"])
            ys.append(int(bool(t["opportunity"])) if head == "opportunity" else int(t[head]))
            ws.append(1.0 / len(got))
    return np.array(xs, dtype=np.float64), np.array(ys), np.array(ws)


def fit_head(z, y, w, k, lam, iters=800):
    """`lam` is one strength per feature (an array), or one for all."""
    """Multinomial logistic regression, minimising the weighted cross-entropy plus
    lam/2 |W|^2 (the intercept unshrunk) by Nesterov's accelerated gradient with the step
    1/L of the loss's Lipschitz bound. W is k x (d+1)."""
    n, d = z.shape
    a = np.hstack([z, np.ones((n, 1))])
    onehot = np.eye(k)[y]
    reg = np.append(np.broadcast_to(lam, (d,)).astype(float), 0.0)
    # The softmax loss's Hessian is at most 1/2 A^T diag(w) A (per class block): its largest
    # eigenvalue, by power iteration from a fixed start, bounds the step.
    v = np.ones(d + 1)
    aw = a * w[:, None]
    for _ in range(100):
        v = a.T @ (aw @ v)
        v /= np.linalg.norm(v)
    big = float(v @ (a.T @ (aw @ v)))
    step = 1.0 / (0.5 * big + float(np.max(reg)))
    W = np.zeros((k, d + 1))
    prev = W.copy()
    for t in range(1, iters + 1):
        look = W + (t - 2) / (t + 1) * (W - prev) if t > 1 else W
        logits = a @ look.T
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        grad = ((p - onehot) * w[:, None]).T @ a + look * reg
        prev = W
        W = look - step * grad
    return W


def predict(W, z):
    a = np.hstack([z, np.ones((z.shape[0], 1))])
    logits = a @ W.T
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def standardise(X):
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return mean, scale


def fit_all(rows, labels, lam):
    """Standardise on every row, then fit each head; `lam` is one strength per feature."""
    X = np.array([r["x"] for r in rows], dtype=np.float64)
    mean, scale = standardise(X)
    heads = {}
    for h, k in HEADS.items():
        Xh, y, w = samples(rows, labels, h)
        heads[h] = fit_head((Xh - mean) / scale, y, w, k, lam)
    return mean, scale, heads


def strengths(names, lam, lam_words):
    return np.array([lam_words if n.startswith("word:") else lam for n in names])


def predict_rows(model, rows):
    mean, scale, heads = model
    z = (np.array([r["x"] for r in rows]) - mean) / scale
    return {h: predict(W, z) for h, W in heads.items()}


def load_older(path):
    """The older sets' rows, each in the session of the development case built from it (cases
    of one session stay in one fold)."""
    _, older = load_rows(path)
    cases = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "verdict", "cases.json")))
    same = {c["from"].split("/", 1)[-1]: session_key(c) for c in cases if "/" in c.get("from", "")}
    for r in older:
        r["session"] = same.get(r["case"], r["session"])
    return older


def load_labels(paths):
    raw = V.load_labels(paths)
    return {c: {who: {"turns": {t["turn"]: t for t in e["turns"]}, "verdict": e["verdict"]}
                for who, e in by.items()} for c, by in raw.items()}


def cross_validate(rows, older, labels, lam, folds):
    """Each development row predicted by a model that never saw its session (older rows of
    other sessions always train)."""
    sessions = sorted({r["session"] for r in rows})
    fold_of = {s: i % folds for i, s in enumerate(sessions)}
    cv = {h: np.zeros((len(rows), k)) for h, k in HEADS.items()}
    for f in range(folds):
        train = [r for r in rows + older if fold_of.get(r["session"], -1) != f]
        test = [i for i, r in enumerate(rows) if fold_of[r["session"]] == f]
        if not test:
            continue
        model = fit_all(train, labels, lam)
        pred = predict_rows(model, [rows[i] for i in test])
        for h in HEADS:
            cv[h][test] = pred[h]
    return cv


def opt(args, name, default, kind=float):
    return kind(args[args.index(name) + 1]) if name in args else default


def cmd_fit(args):
    rows_path = args[0]
    out = opt(args, "--out", None, str)
    folds = opt(args, "--folds", 8, int)
    lam_words = opt(args, "--lambda-words", LAMBDA_WORDS)
    skip = {out} | {args[i + 1] for i, a in enumerate(args[:-1]) if a.startswith("--")}
    label_paths = [a for a in args[1:] if a.endswith(".json") and a not in skip]
    names, rows = load_rows(rows_path)
    lam = strengths(names, opt(args, "--lambda", LAMBDA), lam_words)
    older = load_older(args[args.index("--older") + 1]) if "--older" in args else []
    labels = load_labels(label_paths)
    cv = cross_validate(rows, older, labels, lam, folds)
    report(rows, labels, cv)
    if "--frames" in args:
        frames = json.load(open(args[args.index("--frames") + 1]))
        verdicts(rows, labels, cv, frames)
    if out:
        mean, scale, heads = fit_all(rows + older, labels, lam)
        doc = {"schema": "sage.offline-model/1",
               "trained": "bench/train_offline.py fit on the verdict benchmark's development labels (bench/verdict/labels/dev.*.json) and the older sets' score labels (bench/judge_labels)",
               "lambda": float(lam.min()), "lambda_words": lam_words, "thresholds": THRESHOLDS,
               "doubt": DOUBT, "features": names,
               "mean": [round(float(v), 6) for v in mean],
               "scale": [round(float(v), 6) for v in scale],
               "heads": {h: {"coef": [[round(float(v), 5) for v in W[c, :-1]] for c in range(W.shape[0])],
                             "intercept": [round(float(W[c, -1]), 5) for c in range(W.shape[0])]}
                         for h, W in heads.items()}}
        with open(out, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        print(f"wrote {out}")


def report(rows, labels, cv):
    """Cross-validated agreement with each labeller per head (κ with quadratic weights, as
    bench/verdict.py measures), beside the phrase rules' own levels."""
    whos = sorted({w for by in labels.values() for w in by})
    for who in whos:
        line = [f"vs {who}:"]
        for h in HEADS:
            pairs, rule_pairs = [], []
            for i, r in enumerate(rows):
                lab = labels.get(r["case"], {}).get(who)
                if not lab or r["turn"] not in lab["turns"]:
                    continue
                t = lab["turns"][r["turn"]]
                want = int(bool(t["opportunity"])) if h == "opportunity" else int(t[h])
                # what the judge gives: thresholds and the rules' floor, as shipped
                got = int(model_turn(rows, cv, i)[h])
                rule = int(bool(r["rule_opportunity"])) if h == "opportunity" else int(r["rule"].get(h, 0))
                pairs.append((want, got))
                rule_pairs.append((want, rule))
            k = HEADS[h]
            if h == "opportunity":
                acc = sum(a == b for a, b in pairs) / len(pairs)
                racc = sum(a == b for a, b in rule_pairs) / len(rule_pairs)
                line.append(f"opp {acc:.2f} (rules {racc:.2f})")
            else:
                line.append(f"{h} {V.kappa(pairs, k):.2f} (rules {V.kappa(rule_pairs, k):.2f})")
        print("  ".join(line))


def decide(rows, pred, frames, opp_t=0.5, pos_t=None):
    """Per case the verdict the rule gives over predicted turns: `pred(i)` is (tr, di, vr, sa,
    opportunity) of row i."""
    by_case = {}
    for i, r in enumerate(rows):
        tr, di, vr, sa, opp = pred(i)
        kind = r["kind"]
        by_case.setdefault(r["case"], []).append(
            {"turn": r["turn"], "kind": kind, "applicable": kind != "administrative",
             "opportunity": opp and kind != "administrative", "tr": tr, "di": di, "vr": vr, "sa": sa})
    out = {}
    for c, turns in by_case.items():
        fr = frames[c]
        out[c] = V.rule(turns, fr["bound"], fr["status"], fr["introducing_turn"])
    return out


def level(p, threshold):
    """The level a head gives (src/judge/offline/model.rs): 0 unless a level above 0 is at
    least `threshold` likely, then the likeliest of those."""
    return 0 if p[1:].sum() < threshold else 1 + int(p[1:].argmax())


def model_turn(rows, cv, i):
    """A turn as the judge answers it (src/judge/offline.rs, `judge`): the model's levels,
    floored by the rules' where they found task-specific words (level 2 or more)."""
    r = rows[i]
    k = r["kind"]
    rule = r["rule"]
    t = {"turn": r["turn"], "kind": k, "applicable": k != "administrative"}
    for h in ("tr", "di", "vr", "sa"):
        floor = rule.get(h, 0) if rule.get(h, 0) >= 2 else 0
        t[h] = max(level(cv[h][i], THRESHOLDS[h]), floor) if t["applicable"] else 0
    t["opportunity"] = t["applicable"] and (
        bool(cv["opportunity"][i][1] >= THRESHOLDS["opportunity"])
        or rule.get("tr", 0) >= 2 or rule.get("di", 0) >= 2)
    return t


def doubts(rows, cv, i):
    """The one-step changes the model finds plausible (model.rs's `say`)."""
    out = []
    if rows[i]["kind"] == "administrative":
        return out
    rule = rows[i]["rule"]
    near = lambda p, t: t * DOUBT <= p < t / DOUBT  # noqa: E731
    for h in ("tr", "di", "vr", "sa"):
        p = cv[h][i]
        k = level(p, THRESHOLDS[h])
        alts = []
        if near(p[1:].sum(), THRESHOLDS[h]):
            alts.append(1 if k == 0 else 0)
        if k >= 1:
            alts += [j for j in (k - 1, k + 1) if 1 <= j <= 3 and p[j] >= DOUBT * p[k]]
        floor = rule.get(h, 0) if rule.get(h, 0) >= 2 else 0
        out += [(h, j) for j in alts if j >= floor]
    if near(cv["opportunity"][i][1], THRESHOLDS["opportunity"]) and not (
            rule.get("tr", 0) >= 2 or rule.get("di", 0) >= 2):
        out.append(("opportunity", None))
    return out


def verdicts(rows, labels, cv, frames):
    """The verdict over cross-validated predictions against each labeller, and how often a
    firm verdict agrees compared with a close call."""
    by = {}
    for i, r in enumerate(rows):
        by.setdefault(r["case"], []).append(i)
    whos = sorted({w for b in labels.values() for w in b})
    score = {w: [0, 0, 0.0, 0] for w in whos}
    groups = {"firm": [], "close": []}
    for c, idx in by.items():
        fr = frames[c]
        turns = [model_turn(rows, cv, i) for i in idx]
        o = V.rule(turns, fr["bound"], fr["status"], fr["introducing_turn"])
        for w in whos:
            v = labels[c][w]["verdict"]
            score[w][0] += o[0] == v.get("origin_turn")
            score[w][1] += o[1] == v.get("type")
            score[w][2] += V.jaccard(o[2], v.get("missed") or [])
            want = v.get("origin_turn")
            score[w][3] += o[0] == want or (o[0] is not None and want is not None and abs(o[0] - want) <= 1)
        last = o[0] if o[1] in ("inadequate_defence", "unaddressed_requirement") else fr["bound"]
        moved = False
        for j, i in enumerate(idx):
            if turns[j]["turn"] > last or moved:
                break
            for h, val in doubts(rows, cv, i):
                alt = [dict(t) for t in turns]
                if h == "opportunity":
                    alt[j]["opportunity"] = not alt[j]["opportunity"]
                else:
                    alt[j][h] = val
                if V.rule(alt, fr["bound"], fr["status"], fr["introducing_turn"])[:2] != o[:2]:
                    moved = True
                    break
        groups["close" if moved else "firm"].append((c, o))
    n = len(by)
    print("  ".join(f"vs {w}: turn {s[0]}/{n} (±1 {s[3]}/{n}) type {s[1]}/{n} missed {s[2] / n:.2f}"
                    for w, s in score.items()))
    for g, items in groups.items():
        agree = sum(o[:2] == (labels[c][w]["verdict"].get("origin_turn"), labels[c][w]["verdict"].get("type"))
                    for c, o in items for w in whos)
        print(f"  {g}: {len(items)} cases, turn and type agree {agree}/{len(items) * len(whos)}")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "collect":
        cmd_collect(sys.argv[2:])
    elif cmd == "collect-older":
        cmd_collect_older(sys.argv[2:])
    elif cmd == "fit":
        cmd_fit(sys.argv[2:])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
