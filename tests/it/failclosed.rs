//! Failing closed: a run whose judge could not score every turn exits 3 after writing what it
//! has — refused keys (at once, with the server's words), garbage answers, missing keys
//! (before any request), `--fail-on` and batches — unless `--allow-partial` says otherwise.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::{Repo, Run};
use crate::judge::{answer, asked_turn};

const SESSION: &str = r#"schema: sage.session/1
task: Fix the SSRF in the product photo download.
turns:
  - text: "Plan: we will check that the scheme is https before downloading."
  - text: Adding the check to fetcher.py now.
  - text: Tests are green; the SSRF fix is complete.
"#;

/// Retries of a transient failure wait 0.5 + 1 + 2 + 4 s: a refusal must come well before.
const RETRY_TIME: Duration = Duration::from_millis(7500);

/// What an OpenAI-compatible server answers: 401 with its own message, which echoes a key.
const REFUSAL: &str = r#"{"error": {"message": "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz0123.\nYou can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "code": "invalid_api_key"}}"#;

/// Counts requests; answers each from `reply` (status, body).
struct Counted {
    count: Arc<AtomicUsize>,
    reply: fn(&Request) -> ResponseTemplate,
}

impl Respond for Counted {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        self.count.fetch_add(1, Ordering::SeqCst);
        (self.reply)(req)
    }
}

async fn server(
    at: &str,
    reply: fn(&Request) -> ResponseTemplate,
) -> (MockServer, Arc<AtomicUsize>) {
    let server = MockServer::start().await;
    let count = Arc::new(AtomicUsize::new(0));
    Mock::given(method("POST"))
        .and(path(at))
        .respond_with(Counted {
            count: count.clone(),
            reply,
        })
        .mount(&server)
        .await;
    (server, count)
}

fn refuse(_: &Request) -> ResponseTemplate {
    ResponseTemplate::new(401).set_body_raw(REFUSAL, "application/json")
}

/// A well-behaved chat-completions answer for the turn asked.
fn answers(req: &Request) -> ResponseTemplate {
    let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
    let turn = asked_turn(body["messages"][1]["content"].as_str().unwrap());
    ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": answer(turn, "")}}]
    }))
}

fn session(r: &Repo) -> String {
    let p = r.path().join("s.yaml");
    std::fs::write(&p, SESSION).unwrap();
    p.to_string_lossy().into_owned()
}

/// The run's stderr lines that are errors.
fn errors(run: &Run) -> Vec<&str> {
    run.stderr
        .lines()
        .filter(|l| l.starts_with("git-sage: error:"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_exits_3_at_once_with_the_servers_message() {
    let (server, count) = server("/v1/chat/completions", refuse).await;
    let r = Repo::new();
    let s = session(&r);
    let out = r.path().join("scores.json");
    let base = format!("{}/v1", server.uri());
    let start = Instant::now();
    let run = r.sage_env(
        r.path(),
        &[
            "judge",
            &s,
            "--judge",
            "openai:m",
            "--jobs",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--out",
            "-",
        ],
        &[
            ("OPENAI_BASE_URL", &base),
            ("OPENAI_API_KEY", "sk-test-key"),
        ],
    );
    let took = start.elapsed();
    assert_eq!(run.code, 3, "{run:?}");
    assert!(took < RETRY_TIME / 3, "no retries: {took:?}");
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "the other turns are not sent"
    );
    let errs = errors(&run);
    assert_eq!(errs.len(), 1, "{}", run.stderr);
    assert!(
        errs[0].starts_with(
            "git-sage: error: 3 turn(s) could not be scored: openai:m: refused: HTTP 401: Incorrect API key provided: [REDACTED:openai-key]. You can find your API key at"
        ),
        "{}",
        errs[0]
    );
    assert!(
        errs[0].contains("(turns 1-3); hint: the server refused the key: check OPENAI_API_KEY"),
        "{}",
        errs[0]
    );
    assert!(
        !errs[0].contains("again") && !errs[0].contains("abcdefghijklmnop"),
        "{}",
        errs[0]
    );
    // everything it has is written, the failures as data
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let failed = v["failed_turns"].as_array().unwrap();
    assert_eq!(failed.len(), 3);
    assert_eq!(failed[0]["turn"], 1);
    assert_eq!(failed[0]["judge"], "openai:m");
    assert_eq!(failed[0]["cause"], "refused");
    assert!(
        failed[2]["error"]
            .as_str()
            .unwrap()
            .starts_with("refused: HTTP 401: Incorrect API key")
    );
    assert!(v["turns"][0]["scores"].is_null());
    // the text says which turns failed and why
    assert!(
        run.stdout.contains("failed: 3 turn(s) could not be scored"),
        "{}",
        run.stdout
    );

    // --allow-partial: the same failures are a warning, and the exit is the rest's
    let run = r.sage_env(
        r.path(),
        &[
            "judge",
            &s,
            "--judge",
            "openai:m",
            "--jobs",
            "1",
            "--allow-partial",
        ],
        &[
            ("OPENAI_BASE_URL", &base),
            ("OPENAI_API_KEY", "sk-test-key"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(errors(&run).is_empty(), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "git-sage: warning: 3 turn(s) could not be scored: openai:m: refused: HTTP 401"
        ),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forbidden_anthropic_key_is_refused_at_once_too() {
    fn forbid(_: &Request) -> ResponseTemplate {
        ResponseTemplate::new(403).set_body_raw(
            r#"{"type": "error", "error": {"type": "permission_error", "message": "Your API key does not have permission to use the specified resource."}}"#,
            "application/json",
        )
    }
    let (server, count) = server("/v1/messages", forbid).await;
    let r = Repo::new();
    let s = session(&r);
    let start = Instant::now();
    let run = r.sage_env(
        r.path(),
        &[
            "judge",
            &s,
            "--judge",
            "anthropic:c",
            "--jobs",
            "1",
            "-q",
            "--no-cache",
        ],
        &[
            ("ANTHROPIC_BASE_URL", &server.uri()),
            ("ANTHROPIC_API_KEY", "test-key"),
        ],
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert!(start.elapsed() < RETRY_TIME / 3);
    assert_eq!(count.load(Ordering::SeqCst), 1);
    let errs = errors(&run);
    assert_eq!(errs.len(), 1, "{}", run.stderr);
    assert!(
        errs[0].contains("refused: HTTP 403: Your API key does not have permission to use the specified resource.")
            && errs[0].contains("check ANTHROPIC_API_KEY"),
        "{}",
        errs[0]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_key_fails_before_any_request() {
    // Two judges: the second one's missing key stops the run before the first asks anything.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    let r = Repo::new();
    let s = session(&r);
    let start = Instant::now();
    let run = r.sage_env(
        r.path(),
        &[
            "judge",
            &s,
            "--judge",
            "anthropic:c",
            "--judge",
            "openai:m",
            "-q",
        ],
        &[
            ("ANTHROPIC_BASE_URL", &server.uri()),
            ("ANTHROPIC_API_KEY", "test-key"),
            // not this machine: a key is needed
            ("OPENAI_BASE_URL", "http://192.0.2.1/v1"),
        ],
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("git-sage: error: openai:m judge: OPENAI_API_KEY is not set; hint: export OPENAI_API_KEY="),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("again"));

    // blame-origin checks before the history walk, with the anthropic key missing
    let demo = r.demo();
    let run = r.sage_env(
        r.path(),
        &[
            "-C",
            demo.to_str().unwrap(),
            "blame-origin",
            "--finding",
            crate::common::DEMO_FINDING,
            "--judge",
            "anthropic:c",
        ],
        &[("ANTHROPIC_BASE_URL", &server.uri())],
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("anthropic:c judge: ANTHROPIC_API_KEY is not set"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
    server.verify().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_openai_compatible_server_needs_no_key() {
    let (server, count) = server("/v1/chat/completions", answers).await;
    let r = Repo::new();
    let s = session(&r);
    // localhost by name: the wiremock server listens on 127.0.0.1
    let port = server.address().port();
    for base in [
        format!("{}/v1", server.uri()),
        format!("http://localhost:{port}/v1"),
    ] {
        let run = r.sage_env(
            r.path(),
            &[
                "judge",
                &s,
                "--judge",
                "openai:local",
                "--format",
                "json",
                "-q",
                "--no-cache",
            ],
            &[("OPENAI_BASE_URL", &base)],
        );
        let v = run.ok().json();
        assert!(v.get("failed_turns").is_none(), "{v}");
        assert_eq!(v["turns"][1]["scores"]["di"], 0);
    }
    assert_eq!(count.load(Ordering::SeqCst), 6);
    let requests = server.received_requests().await.unwrap();
    assert!(
        requests
            .iter()
            .all(|q| !q.headers.contains_key("authorization"))
    );
}

/// A `command:` judge that prints no JSON.
fn garbage_judge(dir: &Path) -> String {
    let script = dir.join("garbage.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat >/dev/null\necho 'I think this turn is fine.'\n",
    )
    .unwrap();
    format!("command:sh {}", script.display())
}

#[test]
fn garbage_answers_fail_blame_origin_after_the_report_is_written() {
    let r = Repo::new();
    let demo = r.demo();
    let judge = garbage_judge(r.home());
    let report = r.path().join("origin.txt");
    let blame = |extra: &[&str]| {
        let mut args = vec!["--judge", judge.as_str(), "--no-cache"];
        args.extend_from_slice(extra);
        r.blame_demo(&demo, &args)
    };
    let run = blame(&["--out", report.to_str().unwrap()]);
    assert_eq!(run.code, 3, "{run:?}");
    let errs = errors(&run);
    assert_eq!(errs.len(), 1, "{}", run.stderr);
    assert!(
        errs[0].contains("turn(s) could not be scored: command:sh ")
            && errs[0].contains("the judge answered invalid JSON 3 times")
            && errs[0].contains("must print the answer JSON on stdout"),
        "{}",
        errs[0]
    );
    let text = std::fs::read_to_string(&report).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("FAILED      "))
        .unwrap_or_else(|| panic!("no FAILED line:\n{text}"));
    assert!(
        line.contains("turn(s) could not be scored") && line.contains("(turns 1-"),
        "{line}"
    );
    assert!(text.contains("RECOMMENDATION"), "the whole report: {text}");

    // JSON: the failed turns as data
    let v = blame(&["--format", "json"]);
    assert_eq!(v.code, 3);
    let v = v.json();
    let failed = v["failed_turns"].as_array().unwrap();
    assert!(!failed.is_empty());
    assert!(
        failed.iter().all(|f| f["cause"] == "invalid_answer"),
        "{failed:?}"
    );

    // a gate never passes on turns nobody judged
    for gate in ["origin", "introduced"] {
        let run = blame(&["--fail-on", gate]);
        assert_eq!(run.code, 3, "--fail-on {gate}: {run:?}");
    }

    // --allow-partial (or sage.allowPartial): a warning, and the exit is the gate's
    let run = blame(&["--allow-partial", "--fail-on", "introduced"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(errors(&run).is_empty(), "{}", run.stderr);
    assert!(run.stderr.contains("git-sage: warning: "), "{}", run.stderr);
    assert!(run.stdout.contains("FAILED      "), "{}", run.stdout);
    let run = blame(&["--allow-partial"]);
    assert_eq!(run.code, 0, "{run:?}");
    r.git(&[
        "-C",
        demo.to_str().unwrap(),
        "config",
        "sage.allowPartial",
        "true",
    ]);
    let run = blame(&[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("(--allow-partial: the exit is decided without them)"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_batch_case_with_failed_turns_fails_alone_and_the_run_exits_3() {
    let r = Repo::new();
    for i in 1..=2 {
        let dir = r.path().join(format!("r{i}"));
        r.sage(&["demo", "--keep", dir.to_str().unwrap(), "--format", "json"])
            .ok();
    }
    std::fs::write(
        r.path().join("corpus.yaml"),
        "schema: sage.manifest/1\ndefaults:\n  tip: agent/fix-ssrf\n  base: main\ncases:\n  - {id: good, repo: r1, finding: .sage/findings/ssrf-preview.yaml}\n  - {id: broken, repo: r2, finding: .sage/findings/ssrf-preview.yaml, task: BROKEN fix the SSRF}\n",
    )
    .unwrap();
    // answers every turn, except for the case whose task says BROKEN
    let script = r.path().join("judge.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\np=$(cat)\ncase \"$p\" in *BROKEN*) echo 'no idea'; exit 0;; esac\nturn=$(printf '%s' \"$p\" | grep -o 'Score turn [0-9]*' | head -1 | tr -dc 0-9)\nprintf '{\"turn\": %s, \"applicable\": true, \"opportunity\": true, \"kind\": \"review\", \"scores\": {\"tr\":0,\"di\":0,\"vr\":0,\"sa\":0}, \"quotes\": {\"tr\":null,\"di\":null,\"vr\":null,\"sa\":null}}\\n' \"$turn\"\n",
    )
    .unwrap();
    let judge = format!("command:sh {}", script.display());
    let run = r.sage(&["batch", "corpus.yaml", "--judge", &judge, "--cases", "2"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr.contains("case broken failed: "),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("case good failed"), "{}", run.stderr);
    let results = std::fs::read_to_string(r.path().join("corpus.results.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        (lines[0]["case"].as_str(), lines[0]["status"].as_str()),
        (Some("good"), Some("ok"))
    );
    assert_eq!(
        (lines[1]["case"].as_str(), lines[1]["status"].as_str()),
        (Some("broken"), Some("failed"))
    );
    assert_eq!(lines[1]["exit_code"], 3);
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("could not be scored"),
        "{}",
        lines[1]
    );

    // allowed: the broken case is counted, its failures in its report, and the run exits 0
    let run = r.sage(&["batch", "corpus.yaml", "--judge", &judge, "--allow-partial"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("git-sage: warning: 1 case(s) counted with turns the judge could not score"),
        "{}",
        run.stderr
    );
    let results = std::fs::read_to_string(r.path().join("corpus.results.jsonl")).unwrap();
    let broken: serde_json::Value = serde_json::from_str(results.lines().nth(1).unwrap()).unwrap();
    assert_eq!(broken["status"], "ok");
    assert!(
        !broken["report"]["failed_turns"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn origin_on_saved_scores_with_failed_turns_fails_closed_too() {
    let r = Repo::new();
    let demo = r.demo();
    let d = demo.to_str().unwrap();
    let judge = garbage_judge(r.home());
    r.sage(&[
        "-C",
        d,
        "judge",
        ".sage/sessions/fix-ssrf.yaml",
        "--judge",
        &judge,
        "--allow-partial",
        "--out",
        "s.json",
    ])
    .ok();
    r.sage(&["-C", d, "provenance", "--out", "p.json"]).ok();
    let run = r.sage(&[
        "-C",
        d,
        "origin",
        "--scores",
        "s.json",
        "--provenance",
        "p.json",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("could not be scored"), "{}", run.stderr);
    assert!(!run.stdout.is_empty(), "the output is still written");
    r.sage(&[
        "-C",
        d,
        "origin",
        "--scores",
        "s.json",
        "--provenance",
        "p.json",
        "--allow-partial",
    ])
    .ok();
}
