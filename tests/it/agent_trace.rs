//! `blame-origin --agent-trace` through the binary (docs/dialects.md#what-git-sage-writes):
//! records that follow the Agent Trace schema, the result under `metadata["dev.git-sage"]`
//! and in SARIF `properties`, a rerun that replaces its own records and keeps others, the
//! setting, and git sage never reading its own records back as evidence.

use serde_json::Value;

use crate::common::Repo;

/// The Agent Trace README's schema, formats checked.
fn validator() -> jsonschema::Validator {
    let text = include_str!("../fixtures/dialects/agent-trace/trace-record.schema.json");
    let schema: Value = serde_json::from_str(text).unwrap();
    jsonschema::draft202012::options()
        .offline()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

fn records(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_demo_writes_one_conforming_record_for_the_introducing_write() {
    let r = Repo::new();
    let dir = r.demo();
    let run = r
        .blame_demo(&dir, &["--agent-trace", "--format", "json"])
        .ok();
    let report = run.json();
    assert!(
        run.stderr.contains("wrote 1 Agent Trace record(s) to "),
        "{}",
        run.stderr
    );
    let file = dir.join(".agent-trace/git-sage.jsonl");
    let recs = records(&file);
    assert_eq!(
        recs.len(),
        1,
        "only the write that changed the file: {recs:#?}"
    );
    let v = validator();
    let errors: Vec<String> = v.iter_errors(&recs[0]).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let rec = &recs[0];
    let intro = &report["provenance"]["introducing_write"];
    assert_eq!(rec["vcs"]["revision"], intro["commit"]);
    let conv = &rec["files"][0]["conversations"][0];
    assert_eq!(rec["files"][0]["path"], "media/fetcher.py");
    assert_eq!(conv["contributor"]["type"], "ai");
    assert_eq!(conv["contributor"]["model_id"], "openai/gpt-4.1");
    // The lines the commit added: the https check, where the finding's fragment is.
    assert_eq!(
        conv["ranges"],
        serde_json::json!([{"start_line": 9, "end_line": 10}])
    );
    let meta = &rec["metadata"]["dev.git-sage"];
    assert_eq!(crate::schemas::check(meta), "sage.trace/1");
    assert_eq!(meta["finding"]["id"], report["finding"]["id"]);
    assert_eq!(meta["origin"]["turn"], report["origin"]["turn"]);
    assert_eq!(meta["origin"]["type"], report["origin"]["type"]);
    assert_eq!(meta["provenance"]["status"], "introduced");
    assert_eq!(meta["write"]["introducing"], true);
    assert_eq!(meta["write"]["turns"], serde_json::json!([intro["turn"]]));

    // SARIF carries the same object, less the write.
    let sarif = r.blame_demo(&dir, &["--format", "sarif"]).ok();
    let s: Value = serde_json::from_str(&sarif.stdout).unwrap();
    let mut props = s["runs"][0]["results"][0]["properties"]["dev.git-sage"].clone();
    let mut same = meta.clone();
    same.as_object_mut().unwrap().remove("write");
    props.as_object_mut().unwrap().remove("write");
    assert_eq!(props, same);
    crate::schemas::check(&props);
}

#[test]
fn a_rerun_replaces_its_records_and_keeps_other_lines() {
    let r = Repo::new();
    let dir = r.demo();
    let file = dir.join("traces/mixed.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let theirs = r#"{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z","files":[]}"#;
    std::fs::write(&file, format!("{theirs}\n")).unwrap();
    let arg = "--agent-trace=traces/mixed.jsonl";
    r.blame_demo(&dir, &[arg]).ok();
    let once = std::fs::read_to_string(&file).unwrap();
    r.blame_demo(&dir, &[arg]).ok();
    let twice = std::fs::read_to_string(&file).unwrap();
    assert_eq!(once, twice, "the same result, the same records");
    let lines: Vec<&str> = twice.lines().collect();
    assert_eq!(lines.len(), 2, "{twice}");
    assert_eq!(lines[0], theirs, "another tool's record kept byte for byte");
}

#[test]
fn the_setting_turns_it_on_and_a_bare_repository_needs_a_file() {
    let r = Repo::new();
    let dir = r.demo();
    let dir_s = dir.to_str().unwrap();
    r.git(&["-C", dir_s, "config", "sage.agentTrace", "out/sage.jsonl"]);
    r.blame_demo(&dir, &[]).ok();
    assert_eq!(records(&dir.join("out/sage.jsonl")).len(), 1);
    assert!(!dir.join(".agent-trace").exists());

    let bare = r.path().join("bare.git");
    r.git(&["clone", "-q", "--bare", dir_s, bare.to_str().unwrap()]);
    r.sage(&[
        "-C",
        bare.to_str().unwrap(),
        "blame-origin",
        "agent/fix-ssrf",
        "--base",
        "main",
        "--anchor-file",
        "media/fetcher.py",
        "--anchor-snippet",
        "urlopen",
        "--agent-trace",
    ])
    .bad_input("bare repository");
}

#[test]
fn its_own_committed_records_are_not_evidence() {
    let r = Repo::new();
    let dir = r.demo();
    let dir_s = dir.to_str().unwrap();
    let before = r
        .blame_demo(&dir, &["--agent-trace", "--format", "json"])
        .ok()
        .json();
    let git = |args: &[&str]| {
        let mut a = vec!["-C", dir_s];
        a.extend_from_slice(args);
        r.git(&a)
    };
    // Copied where Agent Trace notes live, on the commit it speaks of, as a tool might.
    let intro = before["provenance"]["introducing_write"]["commit"]
        .as_str()
        .unwrap();
    let file = dir.join(".agent-trace/git-sage.jsonl");
    git(&[
        "notes",
        "--ref=agent-trace",
        "add",
        "-F",
        file.to_str().unwrap(),
        intro,
    ]);
    let after = r.blame_demo(&dir, &["--format", "json"]).ok().json();
    let skipped = &after["provenance"]["evidence"]["skipped"];
    assert!(
        skipped.as_array().is_some_and(|s| s.iter().any(|x| x["why"]
            .as_str()
            .is_some_and(|w| w.contains("written by git sage")))),
        "{after:#}"
    );
    assert!(
        after["provenance"]["evidence"]["claims"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );
    assert_eq!(after["origin"], before["origin"]);
}
