//! `git sage screen` through the binary: every layer on a range built for it, the outputs
//! (text, JSON, SARIF, anchors for blame-origin), Bandit present, missing and crashing, tests
//! only on request, and the SecurityEval measurement when the real fixtures are there.

use serde_json::Value;

use crate::common::{AGENT, HUMAN, Repo, real_fixtures};

fn bandit_installed() -> bool {
    std::process::Command::new("python3")
        .args(["-m", "bandit", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A base with four modules; the agent's commit touches each in a different way.
fn range() -> Repo {
    let r = Repo::new();
    r.write("app/__init__.py", "");
    r.write("app/util.py", "def helper(x):\n    return x\n");
    r.write(
        "app/views.py",
        "from flask import request\n\ndef show():\n    return 'ok'\n",
    );
    r.write(
        "app/keep.py",
        "def keep():\n    return 1\n\nclass Box:\n    def open(self):\n        return 2\n",
    );
    r.write("app/clean.py", "def add(a, b):\n    return a + b\n");
    r.write("requirements.txt", "Flask>=3\n");
    r.commit_as(HUMAN, "base");
    // L3: a request value reaches a shell
    r.write("app/views.py", "import subprocess\nfrom flask import request\n\ndef show():\n    name = request.args.get('name')\n    return subprocess.check_output('echo ' + name, shell=True)\n");
    // L1: a method of the base is gone, and an import resolves nowhere
    r.write("app/keep.py", "import nothere_pkg_xyz\nfrom app import util\n\ndef keep():\n    return util.helper(1)\n\nclass Box:\n    pass\n");
    // L0: a syntax error on line 3
    r.write("app/broken.py", "def f(:\n    pass\nx = (\n");
    // not text at all
    r.write_bytes("app/blob.py", b"\x00\x01\x02binary");
    // a clean change
    r.write(
        "app/clean.py",
        "import json\n\ndef add(a, b):\n    return json.dumps(a + b)\n",
    );
    r.commit_as(AGENT, "agent: features");
    r
}

/// `screen HEAD --base HEAD~1 --no-bandit` and more arguments.
fn screen_run(r: &Repo, extra: &[&str]) -> crate::common::Run {
    let mut args = vec!["screen", "HEAD", "--base", "HEAD~1", "--no-bandit"];
    args.extend_from_slice(extra);
    r.sage(&args)
}

/// The same, as JSON.
fn screen_json(r: &Repo, extra: &[&str]) -> Value {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(extra);
    screen_run(r, &args).ok().json()
}

fn file<'a>(doc: &'a Value, path: &str) -> &'a Value {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in {doc}"))
}

#[test]
fn layers_candidates_and_outputs() {
    let r = range();
    let doc = screen_json(&r, &[]);
    assert_eq!(doc["schema"], "sage.screen/1");
    assert_eq!(doc["bandit"]["status"], "off");
    assert_eq!(doc["tests"]["status"], "not run");
    let broken = file(&doc, "app/broken.py");
    assert_eq!(broken["l0"]["ok"], false);
    assert_eq!(broken["l0"]["error"]["line"], 1);
    let blob = file(&doc, "app/blob.py");
    assert_eq!(blob["status"], "binary");
    assert!(
        blob["l0"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not UTF-8")
    );
    let keep = file(&doc, "app/keep.py");
    assert_eq!(keep["l1"]["ok"], false);
    assert_eq!(keep["l1"]["missing_defs"], serde_json::json!(["Box.open"]));
    assert_eq!(
        keep["l1"]["unresolved_imports"][0]["module"],
        "nothere_pkg_xyz"
    );
    let views = file(&doc, "app/views.py");
    assert_eq!(
        views["l1"]["ok"], true,
        "flask is declared in requirements.txt: {views}"
    );
    assert_eq!(views["l3"]["flagged"], true);
    let sinks: Vec<&str> = views["l3"]["sinks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(sinks.contains(&"subprocess-shell"), "{sinks:?}");
    assert_eq!(views["l3"]["sources"][0]["id"], "flask-request");
    assert_eq!(views["candidate"], true);
    assert_eq!(file(&doc, "app/clean.py")["candidate"], false);
    assert_eq!(
        doc["counts"],
        serde_json::json!({"files": 5, "l0_failed": 2, "l1_failed": 1, "l2_flagged": 0, "l3_flagged": 1, "candidates": 1})
    );
    assert_eq!(doc["candidates"][0]["path"], "app/views.py");
    assert_eq!(doc["candidates"][0]["start"], 6);
    assert_eq!(doc["candidates"][0]["cwe"], 78);

    // text names every layer's reason
    let text = screen_run(&r, &[]).ok().stdout;
    for needle in [
        "L0: line 1: ",
        "L1: removed since the base: Box.open",
        "import nothere_pkg_xyz resolves nowhere",
        "app/views.py:6  R",
        "← candidate",
        "not UTF-8",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from\n{text}");
    }
    // the task's CWE raises the score of its sinks
    let with_cwe = screen_run(&r, &["--cwe", "CWE-78", "--format", "json"])
        .ok()
        .json();
    assert!(
        file(&with_cwe, "app/views.py")["l3"]["score"].as_f64() > views["l3"]["score"].as_f64()
    );
    assert_eq!(file(&with_cwe, "app/views.py")["l3"]["weakness"]["cwe"], 78);
    // pathspecs limit the files; --fail-on-candidates gates
    let only = screen_json(&r, &["--", "app/clean.py"]);
    assert_eq!(only["counts"]["files"], 1);
    let gate = screen_run(&r, &["--fail-on-candidates"]);
    assert_eq!(gate.code, 1);

    // SARIF and anchors that blame-origin takes, marked unconfirmed
    let sarif: Value =
        serde_json::from_str(&screen_run(&r, &["--format", "sarif"]).ok().stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "app/views.py"
    );
    let dir = r.path().join("cand");
    screen_run(&r, &["--emit-anchors", dir.to_str().unwrap()]).ok();
    let anchors: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(anchors.len(), 1);
    let y = std::fs::read_to_string(&anchors[0]).unwrap();
    assert!(
        y.contains("unconfirmed: true")
            && y.contains("file: \"app/views.py\"")
            && y.contains("lines: \"6-6\""),
        "{y}"
    );
    let report = r
        .sage(&[
            "blame-origin",
            "HEAD",
            "--base",
            "HEAD~1",
            "--finding",
            anchors[0].to_str().unwrap(),
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(report["unconfirmed"], true);
    assert_eq!(report["provenance"]["status"], "introduced");
}

/// The lines of six that make `moves`: module types, and a lazy module built under
/// `__name__ + ".moves"`.
const VENDORED_SIX: &str = "import types\n\nclass _LazyModule(types.ModuleType):\n    pass\n\nclass _MovedItems(_LazyModule):\n    __path__ = []\n\nmoves = _MovedItems(__name__ + \".moves\")\n";

#[test]
fn spaced_relative_imports_and_a_vendored_six_pass_l1() {
    let r = Repo::new();
    r.write("app/__init__.py", "");
    r.write("app/data.py", "def load(x):\n    return x\n");
    r.write("app/_vendor/__init__.py", "");
    r.write("app/_vendor/six.py", VENDORED_SIX);
    r.write("app/fetch.py", "def fetch():\n    return 1\n");
    r.write("app/other.py", "X = 1\n");
    r.write("requirements.txt", "Flask>=3\n");
    r.commit_as(HUMAN, "base");
    // flagged by L3 (a request value reaches a shell), with imports L1 used to fail on
    r.write("app/fetch.py", "import subprocess\nfrom flask import request\nfrom . data import load\nfrom app._vendor.six.moves.urllib.request import urlopen\nfrom ._vendor.six.moves import http_client\n\ndef fetch():\n    name = load(request.args.get('name'))\n    return subprocess.check_output('echo ' + name, shell=True)\n");
    // a module that is missing, with nothing dynamic on its path, still fails
    r.write(
        "app/other.py",
        "from . datum import load\nfrom app._vendor.six.shelved import x\n\nX = 1\n",
    );
    r.commit_as(AGENT, "agent: fetch");
    let doc = screen_json(&r, &[]);
    let fetch = file(&doc, "app/fetch.py");
    assert_eq!(fetch["l1"]["ok"], true, "{fetch}");
    assert_eq!(fetch["l1"]["unresolved_imports"], serde_json::json!([]));
    let dynamic = fetch["l1"]["dynamic_imports"].as_array().unwrap();
    let modules: Vec<&str> = dynamic
        .iter()
        .map(|d| d["module"].as_str().unwrap())
        .collect();
    assert_eq!(
        modules,
        ["app._vendor.six.moves.urllib.request", "._vendor.six.moves"]
    );
    assert_eq!(
        dynamic[0],
        serde_json::json!({"module": "app._vendor.six.moves.urllib.request", "line": 4, "created_by": "app/_vendor/six.py", "created_line": 9, "how": "module_object"})
    );
    assert_eq!(
        fetch["candidate"], true,
        "the flagged file stays a candidate"
    );
    assert_eq!(doc["candidates"][0]["path"], "app/fetch.py");
    let other = file(&doc, "app/other.py");
    assert_eq!(other["l1"]["ok"], false);
    let unresolved: Vec<&str> = other["l1"]["unresolved_imports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["module"].as_str().unwrap())
        .collect();
    assert_eq!(unresolved, [".datum", "app._vendor.six.shelved"]);
    assert!(other["l1"].get("dynamic_imports").is_none(), "{other}");
    assert_eq!(doc["counts"]["l1_failed"], 1);

    let text = screen_run(&r, &[]).ok().stdout;
    for needle in [
        "L1: line 4: import app._vendor.six.moves.urllib.request is dynamic, not checked: app/_vendor/six.py:9 makes it at run time (a module object built under that name)",
        "L1: line 5: import ._vendor.six.moves is dynamic, not checked",
        "import .datum resolves nowhere",
        "app/fetch.py  ← candidate",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from\n{text}");
    }
    assert!(!text.contains(". data"), "{text}");
}

#[test]
fn repository_code_runs_only_when_asked() {
    let r = range();
    // a test command that leaves a mark: nothing runs by default
    let run = screen_json(&r, &[]);
    assert_eq!(run["tests"]["status"], "not run");
    let ok = screen_json(&r, &["--run-tests", "test -f app/views.py"]);
    assert_eq!(ok["tests"]["status"], "passed", "{}", ok["tests"]);
    assert_eq!(file(&ok, "app/views.py")["candidate"], true);
    let failing = screen_json(&r, &["--run-tests", "echo one; echo two >&2; exit 3"]);
    assert_eq!(failing["tests"]["status"], "failed");
    assert!(
        failing["tests"]["detail"]
            .as_str()
            .unwrap()
            .contains("exited with 3: one | two"),
        "{}",
        failing["tests"]
    );
    assert_eq!(file(&failing, "app/views.py")["l1"]["tests_failed"], true);
    assert_eq!(
        failing["counts"]["candidates"], 0,
        "failing tests fail L1 for the range"
    );
    // the checkout is the tip's, not the worktree's
    std::fs::remove_file(r.path().join("app/views.py")).unwrap();
    let tip = screen_json(&r, &["--run-tests", "test -f app/views.py"]);
    assert_eq!(tip["tests"]["status"], "passed");
    // a suite that prints more than a pipe holds finishes as it exits, and its last lines
    // are kept (it used to block on the full pipe until the timeout)
    let started = std::time::Instant::now();
    let loud = screen_json(
        &r,
        &[
            "--run-tests",
            "yes 'a line of test output' | head -n 200000; echo last line",
            "--tests-timeout",
            "60",
        ],
    );
    assert_eq!(loud["tests"]["status"], "passed", "{}", loud["tests"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    // a suite that hangs is stopped; what it started in the background holds no pipe of ours
    let slow = screen_json(
        &r,
        &["--run-tests", "sleep 3 & sleep 20", "--tests-timeout", "1"],
    );
    assert_eq!(slow["tests"]["status"], "failed", "{}", slow["tests"]);
    assert!(
        slow["tests"]["detail"]
            .as_str()
            .unwrap()
            .contains("did not finish within 1s"),
        "{}",
        slow["tests"]
    );
}

#[test]
fn bandit_missing_or_crashing_is_a_note() {
    let r = range();
    // no bandit, no python3 on PATH
    let empty = tempfile::tempdir().unwrap();
    let run = r
        .sage_env(
            r.path(),
            &["screen", "HEAD", "--base", "HEAD~1", "--format", "json"],
            &[("PATH", empty.path().to_str().unwrap())],
        )
        .ok()
        .json();
    assert_eq!(run["bandit"]["status"], "missing", "{}", run["bandit"]);
    assert!(
        run["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("python3 was not found"))
    );
    // a bandit that crashes
    let fake = tempfile::tempdir().unwrap();
    let script = fake.path().join("bandit");
    std::fs::write(&script, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'bandit 0.0'; exit 0; fi\necho 'Traceback: boom' >&2\nexit 2\n").unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        fake.path().display(),
        std::env::var("PATH").unwrap()
    );
    let run = r
        .sage_env(
            r.path(),
            &["screen", "HEAD", "--base", "HEAD~1", "--format", "json"],
            &[("PATH", &path)],
        )
        .ok()
        .json();
    assert_eq!(run["bandit"]["status"], "failed");
    assert!(
        run["bandit"]["detail"]
            .as_str()
            .unwrap()
            .contains("Traceback: boom"),
        "{}",
        run["bandit"]
    );
    assert_eq!(run["counts"]["candidates"], 1, "L3 still works");
}

#[test]
fn bandit_findings_flag_files() {
    if !bandit_installed() {
        crate::common::skip("Bandit is not installed (python3 -m pip install bandit)");
        return;
    }
    let r = range();
    let doc = r
        .sage(&["screen", "HEAD", "--base", "HEAD~1", "--format", "json"])
        .ok()
        .json();
    assert_eq!(doc["bandit"]["status"], "ran");
    let views = file(&doc, "app/views.py");
    assert_eq!(views["l2"]["flagged"], true, "{views}");
    let f = &views["l2"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["severity"] == "HIGH")
        .unwrap()
        .clone();
    assert_eq!(
        (f["test_id"].as_str(), f["cwe"].as_u64()),
        (Some("B602"), Some(78))
    );
    assert!(doc["candidates"][0]["by_l2"].as_bool().unwrap());
}

#[test]
fn find_anchor_screen_feeds_blame_origin() {
    let r = range();
    let report = r
        .sage(&[
            "blame-origin",
            "HEAD",
            "--base",
            "HEAD~1",
            "--find-anchor",
            "screen",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(report["unconfirmed"], true);
    assert_eq!(report["finding"]["file"], "app/views.py");
    assert_eq!(report["provenance"]["status"], "introduced");
}

/// SecurityEval: each sample's prompt at the base, its insecure code at the tip (and, in a
/// second repository, this repository's own secure rewrites); screened with the task's CWE.
#[test]
fn securityeval_measurement() {
    let Some(dir) = real_fixtures("securityeval") else {
        return;
    };
    let samples: Vec<Value> = std::fs::read_to_string(dir.join("dataset.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let secure_dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/screen/secure");
    let mut secure_ids: Vec<String> = std::fs::read_dir(&secure_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    secure_ids.sort();
    assert_eq!(secure_ids.len(), 20);
    let build = |pick: &dyn Fn(&Value) -> Option<String>| {
        let r = Repo::new();
        for s in &samples {
            if pick(s).is_some() {
                r.write(
                    &format!("samples/{}", s["ID"].as_str().unwrap()),
                    &format!("{}\n", s["Prompt"].as_str().unwrap()),
                );
            }
        }
        r.commit_as(HUMAN, "prompts");
        for s in &samples {
            if let Some(code) = pick(s) {
                r.write(&format!("samples/{}", s["ID"].as_str().unwrap()), &code);
            }
        }
        r.commit_as(AGENT, "code");
        r
    };
    // L2 once over everything, L3 per CWE (as each task would be screened)
    let rate = |r: &Repo| -> (usize, usize) {
        let all = r
            .sage(&["screen", "HEAD", "--base", "HEAD~1", "--format", "json"])
            .ok()
            .json();
        let mut flagged: std::collections::BTreeSet<String> = all["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["l2"]["flagged"] == true)
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        let mut cwes: Vec<String> = all["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                f["path"].as_str().unwrap()[8..]
                    .split('_')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        cwes.dedup();
        for c in cwes {
            let spec = format!("samples/{c}_*");
            let d = screen_json(r, &["--cwe", &c, "--", &spec]);
            flagged.extend(
                d["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|f| f["l3"]["flagged"] == true)
                    .map(|f| f["path"].as_str().unwrap().to_string()),
            );
        }
        (
            flagged.len(),
            all["counts"]["files"].as_u64().unwrap() as usize,
        )
    };
    let insecure = build(&|s| Some(format!("{}\n", s["Insecure_code"].as_str().unwrap())));
    let (k, n) = rate(&insecure);
    assert_eq!(n, 121);
    eprintln!("SecurityEval insecure: L2 ∪ L3 flag {k}/{n}");
    assert!(k * 100 >= 75 * n, "L2 ∪ L3 flag {k}/{n}, below 75%");
    let secure = build(&|s| {
        let id = s["ID"].as_str().unwrap();
        secure_ids
            .iter()
            .any(|x| x == id)
            .then(|| std::fs::read_to_string(secure_dir.join(id)).unwrap())
    });
    let (k, n) = rate(&secure);
    assert_eq!(n, 20);
    eprintln!("secure rewrites: L2 ∪ L3 flag {k}/{n}");
    assert!(
        k * 100 <= 15 * n,
        "L2 ∪ L3 flag {k}/{n} of the secure rewrites, above 15%"
    );
}

/// `--check-tables` runs the tables' own examples: the embedded tables hold; a user's table
/// whose example no longer holds fails with the file and entry named, and a table that does
/// not parse is bad input.
#[test]
fn check_tables_runs_each_entrys_examples() {
    let r = Repo::new();
    let out = r.sage(&["screen", "--check-tables"]).ok();
    assert!(out.stdout.contains(" 0 did not hold"), "{}", out.stdout);

    let dir = r.home().join("tables/screen/python");
    std::fs::create_dir_all(&dir).unwrap();
    let embedded = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/screen/python/sinks.yaml"),
    )
    .unwrap();
    // an edit that breaks the entry: `eval` of a constant is now "dynamic" too, so its miss fails
    let edited = embedded.replacen(
        "  when: {first_arg: dynamic}\n  high_risk_when: {first_arg: tainted}\n  weight: 12\n  cwe: [95, 94]",
        "  high_risk_when: {first_arg: tainted}\n  weight: 12\n  cwe: [95, 94]",
        1,
    );
    assert_ne!(edited, embedded, "the dynamic-code entry moved");
    std::fs::write(dir.join("sinks.yaml"), edited).unwrap();
    let tables = r.home().join("tables");
    let t = tables.to_str().unwrap();
    let run = r.sage(&["screen", "--check-tables", "--templates", t]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stdout.lines().any(|l| l.starts_with("FAILED")
            && l.contains("screen/python/sinks.yaml dynamic-code: miss 1 is found")),
        "{}",
        run.stdout
    );

    // a high-risk condition dropped without its examples: with no scheme-only alternative the
    // demo's SSRF is a hint again, and its `flag` example says so
    let lighter = embedded.replacen(
        "\n    - {any_arg: tainted, function_matches:",
        "\n    # - {any_arg: tainted, function_matches:",
        1,
    );
    assert_ne!(lighter, embedded, "the url-from-input entry moved");
    std::fs::write(dir.join("sinks.yaml"), lighter).unwrap();
    let run = r.sage(&["screen", "--check-tables", "--templates", t]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stdout.lines().any(|l| l.starts_with("FAILED")
            && l.contains("url-from-input: flag 1 is not flagged without a CWE")),
        "{}",
        run.stdout
    );

    std::fs::write(dir.join("sinks.yaml"), "- id: [\n").unwrap();
    r.sage(&["screen", "--check-tables", "--templates", t])
        .bad_input("sinks.yaml");
}

/// Without a task CWE, the demo's own SSRF is a candidate: `urlopen(url)` after a check of the
/// scheme alone. The candidate names the weakness (CWE and rule) and the lines to read, the
/// check that falls short among them; the anchors carry the same.
#[test]
fn the_demos_ssrf_is_a_candidate_without_a_cwe() {
    let r = Repo::new();
    let d = r.demo();
    let dir = d.to_str().unwrap();
    let doc = r
        .sage(&["-C", dir, "screen", "--no-bandit", "--format", "json"])
        .ok()
        .json();
    assert_eq!(doc["task_cwe"], Value::Null, "{doc}");
    let k = doc["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["path"] == "media/fetcher.py")
        .unwrap_or_else(|| panic!("no candidate in {doc}"));
    assert_eq!(k["cwe"], 918, "{k}");
    assert_eq!(k["rule"], "url-from-input", "{k}");
    assert!(k["weakness"].as_str().unwrap().contains("SSRF"), "{k}");
    let evidence: Vec<(u64, &str, &str)> = k["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["line"].as_u64().unwrap(),
                e["role"].as_str().unwrap(),
                e["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        evidence
            .iter()
            .any(|(_, role, text)| role.starts_with("what makes it")
                && text.contains("startswith(\"https://\")")),
        "{evidence:?}"
    );
    assert!(
        evidence
            .iter()
            .any(|(_, role, text)| *role == "sink url-from-input" && text.contains("urlopen(url")),
        "{evidence:?}"
    );
    let text = r.sage(&["-C", dir, "screen", "--no-bandit"]).ok().stdout;
    assert!(
        text.contains("CWE-918 server-side request forgery (SSRF) · rule url-from-input"),
        "{text}"
    );
    assert!(
        text.contains("│ if not url.startswith(\"https://\"):"),
        "{text}"
    );

    let anchors = r.home().join("anchors");
    r.sage(&[
        "-C",
        dir,
        "screen",
        "--no-bandit",
        "--emit-anchors",
        anchors.to_str().unwrap(),
    ])
    .ok();
    let written: Vec<_> = std::fs::read_dir(&anchors).unwrap().collect();
    assert_eq!(written.len(), 1);
    let y = std::fs::read_to_string(written[0].as_ref().unwrap().path()).unwrap();
    assert!(
        y.contains("cwe: 918") && y.contains("rule url-from-input"),
        "{y}"
    );
    assert!(y.contains("urlopen(url, timeout=10)"), "{y}");
}

/// Evidence lines come from the repository and may be committed as anchors: a key in one is
/// redacted there, as everywhere else the tool writes.
#[test]
fn evidence_lines_are_redacted() {
    let r = Repo::new();
    r.write("README.md", "x\n");
    r.commit_as(HUMAN, "base");
    let key = ["AKIA", "ZQ3DRW7TKXB5NP2Y"].concat();
    r.write(
        "app/settings.py",
        &format!("AWS_ACCESS_KEY_ID = \"{key}\"\n"),
    );
    r.commit_as(AGENT, "agent: settings");
    let doc = screen_json(&r, &[]);
    let k = &doc["candidates"][0];
    assert_eq!(k["path"], "app/settings.py", "{doc}");
    let shown = k["evidence"].to_string();
    assert!(
        shown.contains("AWS_ACCESS_KEY_ID") && !shown.contains(&key),
        "{shown}"
    );
    let anchors = r.home().join("anchors");
    screen_run(&r, &["--emit-anchors", anchors.to_str().unwrap()]).ok();
    for f in std::fs::read_dir(&anchors).unwrap() {
        let y = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(!y.contains(&key), "{y}");
    }
}

/// What the screen cannot read whole is scored on what it can, or said: a Python 2 file, mixed
/// tabs and spaces and a syntax slip fail L0 and are scored by L3 on tree-sitter's reading; a
/// 1 MB generated module is read; a notebook is named as not screened. Nothing crashes.
#[test]
fn files_it_cannot_read_whole_are_scored_or_said() {
    let r = Repo::new();
    r.write("README.md", "x\n");
    r.commit_as(HUMAN, "base");
    r.write(
        "py2.py",
        "import os\ndef run(cmd):\n    print \"running\", cmd\n    os.system(cmd)\n",
    );
    r.write(
        "tabs.py",
        "import subprocess\ndef f(x):\n    if x:\n\treturn subprocess.call(x, shell=True)\n    return 0\n",
    );
    r.write(
        "broken.py",
        "import pickle\ndef load(data):\n    return pickle.loads(data\n",
    );
    let rows: String = (0..40_000)
        .map(|i| format!("    ({i}, \"value{i}\"),\n"))
        .collect();
    r.write("generated.py", &format!("DATA = [\n{rows}]\n"));
    r.write(
        "analysis.ipynb",
        "{\"cells\": [{\"cell_type\": \"code\", \"metadata\": {}, \"outputs\": [], \"source\": [\"import os\\n\", \"os.system(input())\\n\"]}], \"metadata\": {}, \"nbformat\": 4, \"nbformat_minor\": 5}\n",
    );
    r.commit_as(AGENT, "agent: odd files");
    let doc = screen_json(&r, &[]);
    for p in ["py2.py", "tabs.py", "broken.py"] {
        let f = file(&doc, p);
        assert_eq!(f["l0"]["ok"], false, "{f}");
        assert!(f["l3"]["score"].as_f64().unwrap() > 0.0, "{f}");
    }
    assert_eq!(file(&doc, "py2.py")["l3"]["flagged"], true);
    assert!(
        file(&doc, "tabs.py")["l0"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("TabError"),
        "{doc}"
    );
    assert_eq!(file(&doc, "generated.py")["l0"]["ok"], true);
    assert_eq!(doc["counts"]["files"], 4, "{doc}");
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("not screened: analysis.ipynb") && notes.contains("nbconvert"),
        "{notes}"
    );
}
