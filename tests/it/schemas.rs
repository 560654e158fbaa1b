//! The JSON Schemas of docs/schema/ against the binary: every schema is valid draft 2020-12,
//! docs/json.md links each one, and every document git sage writes — on the demo, and in the
//! repositories the other tests build (`Run::json` checks what it parses) — matches its schema
//! with the objects that are open for additive fields closed, so a field the schema does not
//! list fails here before it reaches a user.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::common::{DEMO_FINDING, Repo};

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Where the schema files are registered. Nothing is read from it: the validators resolve
/// `defs.json#/…` among the files registered there and fetch nothing (offline, no file refs).
const BASE: &str = "file:///git-sage/docs/schema/";

/// The documents git sage writes (and the manifest it reads), each with its schema file.
const KINDS: [&str; 17] = [
    "sage.report/1",
    "sage.reports/1",
    "sage.provenance/1",
    "sage.turns/1",
    "sage.scores/1",
    "sage.origin/1",
    "sage.note/1",
    "sage.batch/1",
    "sage.batch-summary/1",
    "sage.agreement/1",
    "sage.screen/1",
    "sage.judge-batches/1",
    "sage.guard-log/1",
    "sage.manual-judge/1",
    "sage.trace/1",
    "sage.manifest/1",
    "sage.estimate/1",
];

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

/// `sage.batch-summary/1` → `sage.batch-summary-1.json`.
fn file_of(kind: &str) -> String {
    format!("{}.json", kind.replace('/', "-"))
}

/// Every schema file, by name.
fn files() -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(schema_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).unwrap();
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", p.display()));
            out.insert(p.file_name().unwrap().to_string_lossy().into_owned(), v);
        }
    }
    out
}

/// The schema with every `additionalProperties: true` made `false`. `true` marks an object
/// that later `/1` documents may extend (docs/json.md#stability); what this build writes must
/// be listed all the same. Maps (`additionalProperties` holding a schema) stay as they are.
fn closed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let x = if k == "additionalProperties" && *x == Value::Bool(true) {
                        Value::Bool(false)
                    } else {
                        closed(x)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(closed).collect()),
        other => other.clone(),
    }
}

/// A schema file that is not a draft 2020-12 schema, in words.
fn not_draft_2020_12(name: &str, schema: &Value) -> Option<String> {
    if schema["$schema"] != DRAFT_2020_12 {
        return Some(format!(
            "{name}: $schema is {}, not {DRAFT_2020_12}",
            schema["$schema"]
        ));
    }
    let errors: Vec<String> = jsonschema::draft202012::meta::validator()
        .iter_errors(schema)
        .map(|e| format!("{name}: at {}: {e}", e.instance_path()))
        .collect();
    (!errors.is_empty()).then(|| errors.join("\n"))
}

/// Validators for every schema file, built against the registry of all of them.
fn build(
    files: &BTreeMap<String, Value>,
) -> Result<BTreeMap<String, jsonschema::Validator>, String> {
    let registry = jsonschema::Registry::new()
        .extend(files.iter().map(|(n, v)| (format!("{BASE}{n}"), v.clone())))
        .and_then(|b| b.prepare())
        .map_err(|e| format!("registry: {e}"))?;
    let mut out = BTreeMap::new();
    for (name, schema) in files {
        let v = jsonschema::draft202012::options()
            .offline()
            .with_registry(&registry)
            .with_base_uri(format!("{BASE}{name}"))
            .build(schema)
            .map_err(|e| format!("{name}: does not compile: {e}"))?;
        out.insert(name.clone(), v);
    }
    Ok(out)
}

/// The validators as shipped (`strict == false`) or closed (see `closed`), built once.
fn validators(strict: bool) -> &'static BTreeMap<String, jsonschema::Validator> {
    static LOOSE: OnceLock<BTreeMap<String, jsonschema::Validator>> = OnceLock::new();
    static STRICT: OnceLock<BTreeMap<String, jsonschema::Validator>> = OnceLock::new();
    let cell = if strict { &STRICT } else { &LOOSE };
    cell.get_or_init(|| {
        let mut files = files();
        if strict {
            for v in files.values_mut() {
                *v = closed(v);
            }
        }
        build(&files).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The errors of `doc` against the schema of `kind`, in words.
fn errors(kind: &str, doc: &Value, strict: bool) -> Vec<String> {
    let name = file_of(kind);
    let v = validators(strict)
        .get(&name)
        .unwrap_or_else(|| panic!("{kind}: no docs/schema/{name}"));
    v.iter_errors(doc)
        .map(|e| format!("at {}: {e}", e.instance_path()))
        .collect()
}

/// Panics unless `doc`, a document this build wrote, is a `kind` document that names this
/// build in `tool` and lists no field its schema does not.
pub fn check_as(kind: &str, doc: &Value) {
    let errs = errors(kind, doc, true);
    assert!(
        errs.is_empty(),
        "{kind} does not match docs/schema/{}:\n{}\n{}",
        file_of(kind),
        errs.join("\n"),
        serde_json::to_string_pretty(doc).unwrap()
    );
    if kind != "sage.manifest/1" {
        assert_eq!(
            doc["tool"],
            json!({"name": "git-sage", "version": env!("CARGO_PKG_VERSION")}),
            "{kind}: tool names this build"
        );
    }
}

/// `check_as` for a document that says what it is; the kind it checked.
pub fn check(doc: &Value) -> String {
    let kind = doc["schema"]
        .as_str()
        .unwrap_or_else(|| panic!("no schema field: {doc}"))
        .to_string();
    check_as(&kind, doc);
    kind
}

/// What `Run::json` parsed, checked when it is one of our documents or a list of them
/// (`notes show --json`); anything else (SARIF, plain data) is left alone.
pub fn check_output(v: &Value) {
    let ours = |x: &Value| x["schema"].as_str().is_some_and(|s| s.starts_with("sage."));
    match v {
        Value::Object(_) if ours(v) => {
            check(v);
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(ours) => {
            for x in items {
                check(x);
            }
        }
        _ => {}
    }
}

/// Every JSON line of a JSONL file, each checked.
pub fn check_lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            check(&v);
            v
        })
        .collect()
}

/// Schema objects that list `properties` without saying whether more may come. Conditions
/// (`if`, `then`, `else`, `not`) narrow an object defined beside them: they are not objects
/// of their own.
fn unstated(path: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if m.contains_key("properties") && !m.contains_key("additionalProperties") {
                out.push(path.to_string());
            }
            for (k, x) in m {
                if !["if", "then", "else", "not"].contains(&k.as_str()) {
                    unstated(&format!("{path}/{k}"), x, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                unstated(&format!("{path}/{i}"), x, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_schema_is_draft_2020_12_compiles_and_states_what_may_be_added() {
    let files = files();
    let expected: BTreeSet<String> = KINDS
        .iter()
        .map(|k| file_of(k))
        .chain(["defs.json".to_string()])
        .collect();
    assert_eq!(
        files.keys().cloned().collect::<BTreeSet<_>>(),
        expected,
        "docs/schema/ holds one schema per document and defs.json"
    );
    for (name, schema) in &files {
        if let Some(e) = not_draft_2020_12(name, schema) {
            panic!("{e}");
        }
        let mut open = Vec::new();
        unstated("#", schema, &mut open);
        assert!(
            open.is_empty(),
            "{name}: state additionalProperties (true: may grow within /1; false: closed; a schema: a map) at {open:?}"
        );
        if let Some(kind) = KINDS.iter().find(|k| file_of(k) == *name) {
            assert_eq!(schema["title"], *kind, "{name}: its title is its document");
            if *kind != "sage.manifest/1" {
                assert_eq!(
                    schema["properties"]["schema"]["const"], *kind,
                    "{name}: `schema` is the document's name"
                );
                assert_eq!(
                    schema["properties"]["tool"]["$ref"], "defs.json#/$defs/tool",
                    "{name}: `tool` is the shared object"
                );
            }
        }
    }
    // Both forms compile: as shipped, and closed for the checks of our own output.
    assert_eq!(validators(false).len(), files.len());
    assert_eq!(validators(true).len(), files.len());
}

#[test]
fn a_schema_that_is_not_draft_2020_12_fails_the_check() {
    let bad = [
        json!({"$schema": DRAFT_2020_12, "type": "integr"}),
        json!({"$schema": DRAFT_2020_12, "required": "schema"}),
        json!({"$schema": DRAFT_2020_12, "properties": {"score": {"minimum": "0"}}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
    ];
    for b in &bad {
        assert!(not_draft_2020_12("bad.json", b).is_some(), "{b} passed");
    }
    // A reference to a file nobody registered is an error, not a fetch.
    let mut files = files();
    files.insert(
        "dangling.json".into(),
        json!({"$schema": DRAFT_2020_12, "$ref": "nowhere.json"}),
    );
    let e = build(&files).expect_err("a dangling $ref does not compile");
    assert!(e.contains("dangling.json") || e.contains("nowhere"), "{e}");
}

#[test]
fn json_md_documents_and_links_every_schema() {
    let md = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .unwrap();
    for kind in KINDS {
        let link = format!("(schema/{})", file_of(kind));
        assert!(md.contains(&link), "docs/json.md does not link {link}");
        if kind != "sage.manifest/1" {
            assert!(
                md.contains(&format!("## `{kind}`")),
                "docs/json.md has no section for {kind}"
            );
        }
    }
}

/// The ```json block of each document's section of docs/json.md: every line that parses, or
/// the whole block.
fn examples(md: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut kind: Option<String> = None;
    let mut block: Option<String> = None;
    for line in md.lines() {
        if let Some(b) = block.as_mut() {
            if line.starts_with("```") {
                let text = block.take().unwrap();
                let k = kind.clone().expect("an example under a document's heading");
                match serde_json::from_str::<Value>(&text) {
                    Ok(v) => out.push((k, v)),
                    Err(_) => {
                        for l in text.lines().filter(|l| !l.trim().is_empty()) {
                            let v = serde_json::from_str(l)
                                .unwrap_or_else(|e| panic!("{k} example: {e}: {l}"));
                            out.push((k.clone(), v));
                        }
                    }
                }
            } else {
                b.push_str(line);
                b.push('\n');
            }
        } else if let Some(h) = line.strip_prefix("## `") {
            kind = h.split('`').next().map(str::to_string);
        } else if line.starts_with("## ") {
            kind = None;
        } else if line == "```json" && kind.is_some() {
            block = Some(String::new());
        }
    }
    out
}

#[test]
fn the_examples_of_json_md_and_batch_md_match_their_schemas() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let md = std::fs::read_to_string(root.join("docs/json.md")).unwrap();
    let found = examples(&md);
    let kinds: BTreeSet<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
    for kind in KINDS.iter().filter(|k| **k != "sage.manifest/1") {
        assert!(
            kinds.contains(kind),
            "docs/json.md has no example of {kind}"
        );
    }
    for (kind, doc) in &found {
        // Examples are real outputs, shortened: they pass the closed check too.
        let errs = errors(kind, doc, true);
        assert!(
            errs.is_empty(),
            "docs/json.md, {kind} example:\n{}",
            errs.join("\n")
        );
    }
    // The manifest of docs/batch.md, read as git sage reads it.
    let batch = std::fs::read_to_string(root.join("docs/batch.md")).unwrap();
    let start = batch
        .find("```yaml\nschema: sage.manifest/1")
        .expect("the manifest example")
        + 8;
    let end = start + batch[start..].find("```").unwrap();
    let manifest: Value = serde_yaml::from_str(&batch[start..end]).unwrap();
    let errs = errors("sage.manifest/1", &manifest, true);
    assert!(
        errs.is_empty(),
        "docs/batch.md manifest:\n{}",
        errs.join("\n")
    );
}

#[test]
fn what_stays_compatible_within_1_and_what_does_not() {
    let r = Repo::new();
    let d = r.demo();
    let report = r.blame_demo(&d, &["--format", "json"]).ok().json();
    // Documents written before `tool` existed, and documents of a later /1 with more fields,
    // match the shipped schema.
    let mut old = report.clone();
    old.as_object_mut().unwrap().remove("tool");
    assert!(errors("sage.report/1", &old, false).is_empty());
    let mut newer = report.clone();
    newer["reviewed_by"] = json!("dana");
    newer["finding"]["severity"] = json!("high");
    assert!(errors("sage.report/1", &newer, false).is_empty());
    // Our own documents are held to the list: an unlisted field is a schema to update.
    assert_eq!(errors("sage.report/1", &newer, true).len(), 2);
    // What never changes within /1: names, types, value sets and ranges.
    for (pointer, bad) in [
        ("/turns/0/scores/tr", json!(4)),
        ("/turns/0/kind", json!("testing")),
        ("/provenance/status", json!("inherited_maybe")),
        ("/origin/type", json!("bad_luck")),
        ("/tool/name", json!("git-blame")),
        ("/range/commits", json!(-1)),
        ("/schema", json!("sage.report/2")),
    ] {
        let mut doc = report.clone();
        *doc.pointer_mut(pointer).unwrap() = bad.clone();
        assert!(
            !errors("sage.report/1", &doc, false).is_empty(),
            "{pointer} = {bad} passed"
        );
    }
    let mut doc = report.clone();
    doc.as_object_mut().unwrap().remove("origin");
    assert!(
        !errors("sage.report/1", &doc, false).is_empty(),
        "a required field went missing"
    );
    // A score object is closed: the method has four dimensions.
    let mut doc = report;
    doc["turns"][0]["scores"]["xx"] = json!(1);
    assert!(!errors("sage.report/1", &doc, false).is_empty());
}

/// The demo's scores and provenance saved with `--out` (`judge`, `provenance`), for the
/// commands that read them back.
fn saved_scores_and_provenance(r: &Repo, d: &Path) -> (PathBuf, PathBuf) {
    let scores = d.join("scores.json");
    let prov = d.join("prov.json");
    r.sage_in(
        d,
        &[
            "judge",
            ".sage/sessions/fix-ssrf.yaml",
            "--out",
            scores.to_str().unwrap(),
        ],
    )
    .ok();
    r.sage_in(d, &["provenance", "--out", prov.to_str().unwrap()])
        .ok();
    (scores, prov)
}

#[test]
fn every_command_on_the_demo_writes_documents_that_match_their_schemas() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    // Each run's output is checked as `Run::json` parses it; `seen` keeps the kinds.
    let json_of = |args: &[&str]| {
        let mut full = vec!["-C", ds];
        full.extend_from_slice(args);
        let run = r.sage(&full);
        assert!(run.code == 0 || run.code == 1, "{args:?}: {run:?}");
        run.json()
    };
    let kind = |v: &Value| v["schema"].as_str().unwrap().to_string();
    let report = json_of(&["blame-origin", "--format", "json", "--agent-trace"]);
    seen.insert(kind(&report));
    // The result in each Agent Trace record written.
    let traces = std::fs::read_to_string(d.join(".agent-trace/git-sage.jsonl")).unwrap();
    for line in traces.lines() {
        let rec: Value = serde_json::from_str(line).unwrap();
        seen.insert(check(&rec["metadata"]["dev.git-sage"]));
    }
    seen.insert(kind(&json_of(&[
        "blame-origin",
        "--finding",
        "bandit.json",
        "--cwe",
        "918",
        "--format",
        "json",
    ])));
    seen.insert(kind(&json_of(&[
        "blame-origin",
        "--all",
        "--format",
        "json",
    ])));
    seen.insert(kind(&json_of(&["provenance", "--format", "json"])));
    seen.insert(kind(&json_of(&[
        "blame-origin",
        "--judge",
        "openai:gpt-4.1",
        "--judge",
        "offline",
        "--repeat",
        "2",
        "--estimate",
        "--format",
        "json",
    ])));
    seen.insert(kind(&json_of(&[
        "turns",
        ".sage/sessions/fix-ssrf.yaml",
        "--format",
        "json",
    ])));
    seen.insert(kind(&json_of(&[
        "judge",
        ".sage/sessions/fix-ssrf.yaml",
        "--format",
        "json",
        "--repeat",
        "2",
    ])));
    seen.insert(kind(&json_of(&[
        "screen", "--cwe", "918", "--format", "json",
    ])));
    // Files written with --out, and the command that reads them back.
    let (scores, prov) = saved_scores_and_provenance(&r, &d);
    for p in [&scores, &prov] {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        check(&v);
    }
    seen.insert(kind(&json_of(&[
        "origin",
        "--scores",
        scores.to_str().unwrap(),
        "--provenance",
        prov.to_str().unwrap(),
        "--format",
        "json",
    ])));
    // Notes: the machine line of each section, on the introducing write and on the tip.
    r.sage(&["-C", ds, "blame-origin", "--notes", "-q"]);
    let intro = report["provenance"]["introducing_write"]["commit"]
        .as_str()
        .unwrap();
    for rev in ["HEAD", intro] {
        let notes = r
            .sage(&["-C", ds, "notes", "show", rev, "--json"])
            .ok()
            .json();
        assert!(!notes.as_array().unwrap().is_empty(), "a note on {rev}");
        seen.insert("sage.note/1".into());
    }
    // A corpus of two demo copies and a case that fails: results lines, tables, agreement.
    for i in 1..=2 {
        let copy = r.path().join(format!("r{i}"));
        r.sage(&["demo", "--keep", copy.to_str().unwrap(), "--format", "json"])
            .ok();
    }
    let manifest = format!(
        "schema: sage.manifest/1\ndefaults:\n  tip: agent/fix-ssrf\n  base: main\n  labels: {{framework: cursor, provenance: introduced}}\ncases:\n  - {{id: c1, repo: r1, finding: {DEMO_FINDING}, labels: {{model: m1, task: t1, origin_type: inadequate_defence, origin_turn: 1, introducing_commit: none, reviewer: ana}}}}\n  - {{id: c2, repo: r2, finding: {DEMO_FINDING}, labels: {{model: m2, task: t2}}}}\n  - {{id: broken, repo: r1, tip: no-such-branch, finding: {DEMO_FINDING}}}\n"
    );
    std::fs::write(r.path().join("corpus.yaml"), &manifest).unwrap();
    check_as("sage.manifest/1", &serde_yaml::from_str(&manifest).unwrap());
    seen.insert("sage.manifest/1".into());
    let run = r.sage(&["batch", "corpus.yaml", "--format", "json", "--repeat", "2"]);
    assert_eq!(run.code, 2, "{run:?}");
    seen.insert(check(&run.json()));
    let lines = check_lines(&r.path().join("corpus.results.jsonl"));
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().any(|l| l["status"] == "failed"));
    seen.insert("sage.batch/1".into());
    let run = r.sage(&[
        "batch",
        "--summarize",
        "corpus.results.jsonl",
        "--format",
        "json",
    ]);
    check(&run.json());
    std::fs::copy(
        r.path().join("corpus.results.jsonl"),
        r.path().join("again.jsonl"),
    )
    .unwrap();
    for args in [
        &[
            "agree",
            "corpus.results.jsonl",
            "again.jsonl",
            "--format",
            "json",
            "--splits",
            "20",
        ][..],
        &[
            "agree",
            "corpus.results.jsonl",
            "--format",
            "json",
            "--splits",
            "20",
        ][..],
    ] {
        seen.insert(check(&r.sage(args).ok().json()));
    }
    // sage.judge-batches/1 needs a provider's batch interface: batch.rs checks it against a
    // local one. sage.guard-log/1 needs an agent's hook input on stdin: guard.rs checks it.
    // sage.manual-judge/1 is a file in the directory of a manual judge: manual.rs checks it.
    let all: BTreeSet<String> = KINDS
        .iter()
        .filter(|k| {
            ![
                "sage.judge-batches/1",
                "sage.guard-log/1",
                "sage.manual-judge/1",
            ]
            .contains(*k)
        })
        .map(|k| k.to_string())
        .collect();
    assert_eq!(seen, all, "every document kind is covered");
}

#[test]
fn documents_written_before_tool_existed_are_still_read() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let untooled = |p: &Path| {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        assert!(v.as_object_mut().unwrap().remove("tool").is_some());
        std::fs::write(p, v.to_string()).unwrap();
    };
    // Saved scores and provenance, as an earlier build wrote them: origin reads them.
    let (scores, prov) = saved_scores_and_provenance(&r, &d);
    untooled(&scores);
    untooled(&prov);
    let o = r
        .sage(&[
            "-C",
            ds,
            "origin",
            "--scores",
            scores.to_str().unwrap(),
            "--provenance",
            prov.to_str().unwrap(),
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(o["origin"]["turn"], 1);
    // A results file of an earlier build: resumed, summarised and compared; its lines keep
    // what they were written with (no tool), the new line names this build.
    std::fs::write(
        r.path().join("corpus.yaml"),
        format!(
            "cases:\n  - {{id: a, repo: demo, tip: agent/fix-ssrf, base: main, finding: {DEMO_FINDING}}}\n  - {{id: b, repo: demo, tip: agent/fix-ssrf, base: main, finding: {DEMO_FINDING}}}\n"
        ),
    )
    .unwrap();
    r.sage(&["batch", "corpus.yaml"]).ok();
    let results = r.path().join("corpus.results.jsonl");
    let old: Vec<String> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"case\":\"a\""))
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("tool");
            v["report"].as_object_mut().unwrap().remove("tool");
            v.to_string()
        })
        .collect();
    std::fs::write(&results, format!("{}\n", old.join("\n"))).unwrap();
    let run = r.sage(&["batch", "corpus.yaml"]).ok();
    assert!(
        run.stderr.contains("1 already done, 1 to run"),
        "{}",
        run.stderr
    );
    let lines: Vec<Value> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let by_case = |c: &str| lines.iter().find(|l| l["case"] == c).unwrap();
    assert!(
        by_case("a").get("tool").is_none(),
        "an earlier line keeps its (missing) tool"
    );
    assert!(errors("sage.batch/1", by_case("a"), false).is_empty());
    check(by_case("b"));
    let s = r
        .sage(&[
            "batch",
            "--summarize",
            "corpus.results.jsonl",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(s["ok"], 2);
    std::fs::copy(&results, r.path().join("again.jsonl")).unwrap();
    r.sage(&[
        "agree",
        "corpus.results.jsonl",
        "again.jsonl",
        "--format",
        "json",
        "--splits",
        "10",
    ])
    .ok()
    .json();
}
