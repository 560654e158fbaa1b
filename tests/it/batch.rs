//! Corpora: `git sage batch` over generated repositories (resume, failures, shards, tables),
//! `git sage agree` on runs whose agreement is known, and `--batch-api` against local
//! OpenAI Batch and Anthropic Message Batches servers.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::Repo;
use crate::judge::{answer, asked_turn};

/// `n` copies of the demo repository under `r`, and a manifest naming them.
fn corpus(r: &Repo, n: usize, extra: &str) -> std::path::PathBuf {
    let mut cases = String::new();
    for i in 1..=n {
        let dir = r.path().join(format!("r{i}"));
        r.sage(&["demo", "--keep", dir.to_str().unwrap(), "--format", "json"])
            .ok();
        let model = if i % 2 == 0 { "m-even" } else { "m-odd" };
        cases.push_str(&format!("  - {{id: case{i}, repo: r{i}, finding: .sage/findings/ssrf-preview.yaml, labels: {{model: {model}, task: t{}}}}}\n", i.div_ceil(2)));
    }
    cases.push_str(extra);
    let m = r.path().join("corpus.yaml");
    std::fs::write(&m, format!("schema: sage.manifest/1\ndefaults:\n  tip: agent/fix-ssrf\n  base: main\n  labels: {{framework: cursor, provenance: introduced}}\ncases:\n{cases}")).unwrap();
    m
}

/// The results lines, each checked against docs/schema/sage.batch-1.json.
fn lines(p: &std::path::Path) -> Vec<Value> {
    crate::schemas::check_lines(p)
}

#[test]
fn batch_records_failures_resumes_and_summarises() {
    let r = Repo::new();
    corpus(
        &r,
        3,
        "  - {id: broken, repo: r1, tip: no-such-branch, finding: .sage/findings/ssrf-preview.yaml}\n",
    );
    let run = r.sage(&["batch", "corpus.yaml", "--cases", "2"]);
    assert_eq!(run.code, 2, "a bad case fails alone: {run:?}");
    assert!(
        run.stdout.contains("4 case(s): 3 analysed, 1 failed"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("broken: unknown revision no-such-branch"),
        "{}",
        run.stdout
    );
    let results = r.path().join("corpus.results.jsonl");
    let v = lines(&results);
    assert_eq!(
        v.iter()
            .map(|l| l["case"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["case1", "case2", "case3", "broken"],
        "manifest order"
    );
    assert_eq!(v[0]["schema"], "sage.batch/1");
    assert_eq!(v[0]["report"]["schema"], "sage.report/1");
    assert_eq!(v[0]["labels"]["model"], "m-odd");
    assert_eq!(v[3]["status"], "failed");
    // tables: overall and by framework, model and reconstruction; agreement with labels
    let s = r.sage(&["batch", "corpus.yaml", "--format", "json", "-q"]);
    assert_eq!(s.code, 2);
    let j = s.json();
    assert_eq!(j["schema"], "sage.batch-summary/1");
    assert_eq!(
        (j["cases"].as_u64(), j["ok"].as_u64(), j["failed"].as_u64()),
        (Some(4), Some(3), Some(1))
    );
    assert_eq!(j["overall"]["provenance"]["introduced"], 3);
    assert_eq!(
        j["overall"]["provenance"]["inherited"], 0,
        "the full domain, zeros included"
    );
    assert_eq!(j["overall"]["origin_types"]["inadequate_defence"], 3);
    assert_eq!(j["overall"]["origin_before_write"], json!({"k": 3, "n": 3}));
    assert_eq!(
        j["overall"]["with_missed_opportunities"],
        json!({"k": 3, "n": 3})
    );
    assert_eq!(j["by"]["model"]["m-odd"]["n"], 2);
    assert_eq!(j["by"]["model"]["m-even"]["n"], 1);
    assert_eq!(j["by"]["reconstruction"]["single-write"]["n"], 3);
    assert_eq!(
        j["human"]["provenance"],
        json!({"n": 3, "agree": 3}),
        "κ is undefined when every label is the same"
    );
    // the second run did nothing but the failed case
    assert!(
        s.stderr.is_empty() || !s.stderr.contains("3 to run"),
        "{}",
        s.stderr
    );
    let before = std::fs::read_to_string(&results).unwrap();
    let again = r.sage(&["batch", "corpus.yaml"]);
    assert!(
        again.stderr.contains("3 already done, 1 to run"),
        "{}",
        again.stderr
    );
    let first_line = |t: &str| t.lines().next().unwrap().to_string();
    assert_eq!(
        first_line(&before),
        first_line(&std::fs::read_to_string(&results).unwrap()),
        "finished cases are not redone"
    );
    // fixing the case and running again completes the corpus
    let m = std::fs::read_to_string(r.path().join("corpus.yaml"))
        .unwrap()
        .replace("tip: no-such-branch", "tip: agent/fix-ssrf");
    std::fs::write(r.path().join("corpus.yaml"), m).unwrap();
    let done = r.sage(&["batch", "corpus.yaml", "--format", "md"]).ok();
    assert!(
        done.stdout.contains("4 case(s): 4 analysed, 0 failed")
            && done.stdout.contains("| all | 4 |"),
        "{}",
        done.stdout
    );
    assert_eq!(
        lines(&results).len(),
        4,
        "one line per case after compaction"
    );
    // an interrupted write: the last line torn in half; resuming cuts the fragment off,
    // runs that case again and every later run reads the file
    let text = std::fs::read_to_string(&results).unwrap();
    let last = text.trim_end().rfind('\n').unwrap() + 1;
    let torn = &text[..last + (text.len() - last) / 2];
    std::fs::write(&results, torn).unwrap();
    let resumed = r.sage(&["batch", "corpus.yaml", "--format", "json"]).ok();
    assert!(
        resumed.stderr.contains("unfinished last line was dropped"),
        "{}",
        resumed.stderr
    );
    assert!(
        resumed.stderr.contains("3 already done, 1 to run"),
        "{}",
        resumed.stderr
    );
    assert_eq!(resumed.json()["ok"], 4);
    assert_eq!(lines(&results).len(), 4, "nothing glued, nothing lost");
    r.sage(&["batch", "corpus.yaml", "--format", "json"]).ok();
}

#[test]
fn a_case_whose_finding_is_missing_fails_alone() {
    let r = Repo::new();
    corpus(
        &r,
        1,
        "  - {id: lost, repo: r1, finding: .sage/findings/gone.yaml}\n",
    );
    let run = r.sage(&["batch", "corpus.yaml", "--cases", "1"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stdout.contains("2 case(s): 1 analysed, 1 failed"),
        "{}",
        run.stdout
    );
    let v = lines(&r.path().join("corpus.results.jsonl"));
    assert_eq!(v[1]["case"], "lost");
    assert_eq!(v[1]["status"], "failed");
    assert!(
        v[1]["error"]
            .as_str()
            .unwrap()
            .contains("gone.yaml: no such file"),
        "{}",
        v[1]
    );
}

#[test]
fn shards_add_up_to_the_whole() {
    let r = Repo::new();
    corpus(&r, 3, "");
    r.sage(&["batch", "corpus.yaml", "--shard", "1/2", "-q"])
        .ok();
    r.sage(&["batch", "corpus.yaml", "--shard", "2/2", "-q"])
        .ok();
    let s1 = lines(&r.path().join("corpus.shard-1-of-2.jsonl"));
    let s2 = lines(&r.path().join("corpus.shard-2-of-2.jsonl"));
    assert_eq!((s1.len(), s2.len()), (2, 1));
    let merged = r
        .sage(&[
            "batch",
            "--summarize",
            "corpus.shard-1-of-2.jsonl",
            "corpus.shard-2-of-2.jsonl",
            "--format",
            "json",
        ])
        .ok()
        .json();
    let whole = r
        .sage(&["batch", "corpus.yaml", "--format", "json", "-q"])
        .ok()
        .json();
    assert_eq!(merged["overall"], whole["overall"]);
    assert_eq!(merged["by"], whole["by"]);
}

#[test]
fn bad_manifests_name_file_and_line() {
    let r = Repo::new();
    std::fs::write(
        r.path().join("m.yaml"),
        "cases:\n  - repo: .\n    finding: f.yaml\n    sesion: x\n",
    )
    .unwrap();
    r.sage(&["batch", "m.yaml"]).bad_input("m.yaml:4");
    // a misspelt label is named, not left to never agree
    std::fs::write(
        r.path().join("m.yaml"),
        "cases:\n  - repo: .\n    finding: f.yaml\n    labels: {origin_type: inadequate_defense}\n",
    )
    .unwrap();
    r.sage(&["batch", "m.yaml"])
        .bad_input("origin_type \"inadequate_defense\" is none of inadequate_defence");
    std::fs::write(
        r.path().join("m.yaml"),
        "cases:\n  - {repo: ., finding: nothere.yaml}\n",
    )
    .unwrap();
    // a missing finding fails its case, not the manifest
    let run = r.sage(&["batch", "m.yaml"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("1 case(s) failed"), "{run:?}");
    r.sage(&["batch", "missing.yaml"])
        .bad_input("cannot read manifest missing.yaml");
    r.sage(&["batch", "m.yaml", "--shard", "3/2"]);
    let run = r.sage(&["batch", "m.yaml", "--shard", "3/2"]);
    assert_eq!(run.code, 2, "{run:?}");
    r.sage(&["agree", "nothere.jsonl"])
        .bad_input("nothere.jsonl");
}

/// A results line for `case` whose report says origin `kind` at `turn` (None: undetermined).
fn result(
    template: &Value,
    case: &str,
    task: &str,
    kind: Option<&str>,
    turn: Option<u32>,
) -> String {
    let mut rep = template.clone();
    rep["origin"]["status"] = json!(if kind.is_some() {
        "localized"
    } else {
        "undetermined"
    });
    rep["origin"]["type"] = json!(kind);
    rep["origin"]["turn"] = json!(turn);
    json!({"schema": "sage.batch/1", "case": case, "labels": {"task": task}, "status": "ok", "seconds": 0.1, "report": rep}).to_string()
}

#[test]
fn agree_reproduces_a_known_kappa_through_the_binary() {
    let r = Repo::new();
    let dir = r.path().join("demo");
    let template = r
        .sage(&["demo", "--keep", dir.to_str().unwrap(), "--format", "json"])
        .ok()
        .json();
    // The 2×2 vector (VECTORS.md, "Cohen 2×2"): 20 agree on A, 5 A/B, 10 B/A, 15 agree on B → κ 0.4.
    let (a, b) = ("inadequate_defence", "unaddressed_requirement");
    let mut run1 = String::new();
    let mut run2 = String::new();
    let plan = [(a, a, 20), (a, b, 5), (b, a, 10), (b, b, 15)];
    let mut i = 0;
    for (x, y, count) in plan {
        for _ in 0..count {
            i += 1;
            let task = format!("task{}", i % 10);
            // turns: the same when the types agree, one apart otherwise
            let (t1, t2) = if x == y { (2, 2) } else { (2, 3) };
            run1.push_str(&result(
                &template,
                &format!("c{i}"),
                &task,
                Some(x),
                Some(t1),
            ));
            run1.push('\n');
            run2.push_str(&result(
                &template,
                &format!("c{i}"),
                &task,
                Some(y),
                Some(t2),
            ));
            run2.push('\n');
        }
    }
    // one case the second run could not localise: no origin is its own outcome
    run1.push_str(&result(&template, "c51", "task1", Some(a), Some(1)));
    run1.push('\n');
    run2.push_str(&result(&template, "c51", "task1", None, None));
    run2.push('\n');
    std::fs::write(r.path().join("run1.jsonl"), run1).unwrap();
    std::fs::write(r.path().join("run2.jsonl"), run2).unwrap();
    let j = r
        .sage(&[
            "agree",
            "run1.jsonl",
            "run2.jsonl",
            "--format",
            "json",
            "--splits",
            "200",
        ])
        .ok()
        .json();
    assert_eq!(j["schema"], "sage.agreement/1");
    assert_eq!(j["cases"], 51);
    let t = &j["origin_type"];
    assert_eq!(
        t["domain"],
        json!([
            "inadequate_defence",
            "unaddressed_requirement",
            "defect_in_change",
            "undetermined"
        ])
    );
    // with c51 (A vs undetermined) added: 50 paired cases of the 2×2 plus one disagreement
    assert_eq!(
        (t["n_all"].as_u64(), t["all_agree"].as_u64()),
        (Some(51), Some(35))
    );
    let kappa = t["pairs"][0]["kappa"].as_f64().unwrap();
    // po = 35/51; pe from marginals (run1: A 26, B 25; run2: A 30, B 20, und 1)
    let po = 35.0 / 51.0;
    let pe = (26.0 * 30.0 + 25.0 * 20.0) / (51.0 * 51.0);
    assert!((kappa - (po - pe) / (1.0 - pe)).abs() < 1e-9, "{kappa}");
    assert!(t["alpha_nominal"].is_number() && t["ac1"]["value"].is_number());
    let halves = &t["resampled"]["task_halves"];
    assert_eq!(halves["n"], 200);
    assert!(
        halves["lo"].as_f64().unwrap() <= halves["median"].as_f64().unwrap()
            && halves["median"].as_f64().unwrap() <= halves["hi"].as_f64().unwrap()
    );
    assert_eq!(t["resampled"]["leave_one_task_out"][2], 10, "ten tasks");
    // turns over the cases both localised: 35 exact, all 50 within ±1
    let o = &j["origin_turn"];
    assert_eq!(
        (
            o["localised_by_all"].as_u64(),
            o["exact"].as_u64(),
            o["within_one"].as_u64()
        ),
        (Some(50), Some(35), Some(50))
    );
    assert_eq!(
        o["pairs"][0]["with_none"],
        json!({"n": 51, "exact": 35, "within_one": 50})
    );
    assert!(
        j["disagreements"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "c51")
    );
    // the same seed gives the same figures; the text form names the counts
    let again = r
        .sage(&[
            "agree",
            "run1.jsonl",
            "run2.jsonl",
            "--format",
            "json",
            "--splits",
            "200",
        ])
        .ok()
        .json();
    assert_eq!(again, j);
    let text = r
        .sage(&["agree", "run1.jsonl", "run2.jsonl", "--splits", "50"])
        .ok()
        .stdout;
    assert!(
        text.contains("exact 35/50 (70.0%), within ±1 50/50 (100.0%)"),
        "{text}"
    );
}

/// A provider's batch endpoints, answering every request of the uploaded batch.
#[derive(Clone, Default)]
struct Batches {
    uploaded: Arc<Mutex<Vec<Value>>>,
    creates: Arc<Mutex<usize>>,
    polls: Arc<Mutex<usize>>,
}

fn requests_of_upload(body: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(body)
        .lines()
        .filter(|l| l.starts_with("{\"custom_id\"") || l.starts_with("{\"body\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

struct Upload(Batches);
impl Respond for Upload {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let ct = req
            .headers
            .get("content-type")
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(ct.starts_with("multipart/form-data; boundary="), "{ct}");
        assert!(String::from_utf8_lossy(&req.body).contains("name=\"purpose\"\r\n\r\nbatch"));
        *self.0.uploaded.lock().unwrap() = requests_of_upload(&req.body);
        ResponseTemplate::new(200)
            .set_body_json(json!({"id": "file-in", "object": "file", "purpose": "batch"}))
    }
}

struct Create(Batches, Value);
impl Respond for Create {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        *self.0.creates.lock().unwrap() += 1;
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        if let Some(reqs) = body.get("requests") {
            *self.0.uploaded.lock().unwrap() = reqs.as_array().unwrap().clone();
        } else {
            assert_eq!(body["input_file_id"], "file-in");
            assert_eq!(body["endpoint"], "/v1/chat/completions");
        }
        ResponseTemplate::new(200).set_body_json(self.1.clone())
    }
}

/// The first poll says running; later ones say done.
struct Poll(Batches, Value, Value);
impl Respond for Poll {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let mut n = self.0.polls.lock().unwrap();
        *n += 1;
        ResponseTemplate::new(200).set_body_json(if *n == 1 {
            self.1.clone()
        } else {
            self.2.clone()
        })
    }
}

struct OpenAiOutput(Batches);
impl Respond for OpenAiOutput {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let mut out = String::new();
        for r in self.0.uploaded.lock().unwrap().iter() {
            assert_eq!(r["url"], "/v1/chat/completions");
            let turn = asked_turn(r["body"]["messages"][1]["content"].as_str().unwrap());
            let line = json!({"id": "r", "custom_id": r["custom_id"], "response": {"status_code": 200, "body": {
                "choices": [{"message": {"role": "assistant", "content": answer(turn, "")}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10}}}, "error": null});
            out.push_str(&format!("{line}\n"));
        }
        ResponseTemplate::new(200).set_body_string(out)
    }
}

struct AnthropicResults(Batches);
impl Respond for AnthropicResults {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        assert_eq!(req.headers.get("x-api-key").unwrap(), "test-key");
        let mut out = String::new();
        for r in self.0.uploaded.lock().unwrap().iter() {
            let blocks = r["params"]["messages"][0]["content"].as_array().unwrap();
            let turn = asked_turn(blocks.last().unwrap()["text"].as_str().unwrap());
            let a: Value = serde_json::from_str(&answer(turn, "")).unwrap();
            let line = json!({"custom_id": r["custom_id"], "result": {"type": "succeeded", "message": {
                "content": [{"type": "tool_use", "id": "t", "name": "record_scores", "input": a}],
                "usage": {"input_tokens": 10, "output_tokens": 5}}}});
            out.push_str(&format!("{line}\n"));
        }
        ResponseTemplate::new(200).set_body_string(out)
    }
}

/// Live calls must not happen when the batch answered everything.
async fn forbid_live(server: &MockServer, p: &str) -> Arc<Mutex<usize>> {
    let live = Arc::new(Mutex::new(0));
    struct Count(Arc<Mutex<usize>>);
    impl Respond for Count {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            *self.0.lock().unwrap() += 1;
            ResponseTemplate::new(500)
        }
    }
    Mock::given(method("POST"))
        .and(path(p))
        .respond_with(Count(live.clone()))
        .mount(server)
        .await;
    live
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_batch_api_submits_once_resumes_and_fills_the_cache() {
    let server = MockServer::start().await;
    let b = Batches::default();
    Mock::given(method("POST"))
        .and(path("/v1/files"))
        .respond_with(Upload(b.clone()))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/batches"))
        .respond_with(Create(
            b.clone(),
            json!({"id": "batch_1", "status": "validating"}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET")).and(path("/v1/batches/batch_1")).respond_with(Poll(
        b.clone(),
        json!({"id": "batch_1", "status": "in_progress", "request_counts": {"total": 12, "completed": 3, "failed": 0}}),
        json!({"id": "batch_1", "status": "completed", "output_file_id": "file-out", "request_counts": {"total": 12, "completed": 12, "failed": 0}}),
    )).mount(&server).await;
    Mock::given(method("GET"))
        .and(path("/v1/files/file-out/content"))
        .respond_with(OpenAiOutput(b.clone()))
        .mount(&server)
        .await;
    let live = forbid_live(&server, "/v1/chat/completions").await;

    let r = Repo::new();
    corpus(&r, 2, "");
    let base = format!("{}/v1", server.uri());
    let env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("OPENAI_API_KEY", "test-key"),
    ];
    let args = [
        "batch",
        "corpus.yaml",
        "--judge",
        "openai:test-model",
        "--batch-api",
        "--poll-interval",
        "1",
    ];
    // first run: submit and stop
    let mut first = args.to_vec();
    first.push("--no-wait");
    let run = r.sage_env(r.path(), &first, &env).ok();
    assert!(
        run.stderr.contains("as batch batch_1") && run.stderr.contains("still running"),
        "{}",
        run.stderr
    );
    let state = r.path().join("corpus.results.jsonl.judge-batches.json");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(state).unwrap()).unwrap();
    assert_eq!(crate::schemas::check(&state), "sage.judge-batches/1");
    let asked = b.uploaded.lock().unwrap().len();
    assert_eq!(
        asked, 6,
        "the two cases are the same story: each distinct prompt is asked once"
    );
    // second run: collects the same batch (no new submission) and analyses every case
    let run = r.sage_env(r.path(), &args, &env);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(*b.creates.lock().unwrap(), 1);
    assert_eq!(*live.lock().unwrap(), 0, "no live calls");
    let v = lines(&r.path().join("corpus.results.jsonl"));
    assert!(v.iter().all(|l| l["status"] == "ok"), "{v:?}");
    assert_eq!(v[0]["report"]["judge"]["name"], "openai:test-model");
    assert_eq!(v[0]["report"]["judge"]["cached"], 6);
    // a third run has nothing to do
    let run = r.sage_env(r.path(), &args, &env).ok();
    assert!(
        run.stderr.contains("2 already done, 0 to run"),
        "{}",
        run.stderr
    );
    assert_eq!(*b.creates.lock().unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_message_batches() {
    let server = MockServer::start().await;
    let b = Batches::default();
    let results_url = format!("{}/v1/messages/batches/msgbatch_1/results", server.uri());
    Mock::given(method("POST"))
        .and(path("/v1/messages/batches"))
        .respond_with(Create(
            b.clone(),
            json!({"id": "msgbatch_1", "processing_status": "in_progress"}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET")).and(path("/v1/messages/batches/msgbatch_1")).respond_with(Poll(
        b.clone(),
        json!({"id": "msgbatch_1", "processing_status": "in_progress", "request_counts": {"processing": 6}}),
        json!({"id": "msgbatch_1", "processing_status": "ended", "results_url": results_url, "request_counts": {"succeeded": 6}}),
    )).mount(&server).await;
    Mock::given(method("GET"))
        .and(path_regex("/results$"))
        .respond_with(AnthropicResults(b.clone()))
        .mount(&server)
        .await;
    let live = forbid_live(&server, "/v1/messages").await;

    let r = Repo::new();
    corpus(&r, 1, "");
    let uri = server.uri();
    let env = [
        ("ANTHROPIC_BASE_URL", uri.as_str()),
        ("ANTHROPIC_API_KEY", "test-key"),
    ];
    let run = r.sage_env(
        r.path(),
        &[
            "batch",
            "corpus.yaml",
            "--judge",
            "anthropic:claude-test",
            "--batch-api",
            "--poll-interval",
            "1",
        ],
        &env,
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("msgbatch_1"), "{}", run.stderr);
    assert_eq!(*live.lock().unwrap(), 0);
    assert_eq!(b.uploaded.lock().unwrap().len(), 6);
    let v = lines(&r.path().join("corpus.results.jsonl"));
    assert_eq!(v[0]["status"], "ok", "{v:?}");
    // a judge that cannot batch is refused up front
    let run = r.sage(&[
        "batch",
        "corpus.yaml",
        "--judge",
        "offline",
        "--batch-api",
        "--results",
        "other.jsonl",
    ]);
    run.bad_input("--batch-api works with openai:MODEL and anthropic:MODEL judges");
}
