//! The judge against local HTTP servers (wiremock) and commands: success, rate limits, server
//! errors, timeouts, malformed answers, fabricated quotes, resume, and the cache.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::Repo;

const SESSION: &str = r#"schema: sage.session/1
task: Fix the SSRF in the product photo download.
turns:
  - text: "Plan: we will check that the scheme is https before downloading."
  - text: Adding the check to fetcher.py now.
  - text: "pip install -r requirements.txt"
    kind: administrative
  - text: Tests are green; the SSRF fix is complete.
"#;

/// Turns that are applicable (not administrative) in SESSION.
const APPLICABLE: usize = 3;

/// The turn a prompt asks about ("Score turn N of the log above").
pub(crate) fn asked_turn(body: &str) -> u32 {
    let at = body.find("Score turn ").expect("instruction present") + "Score turn ".len();
    body[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

pub(crate) fn answer(turn: u32, quote: &str) -> String {
    serde_json::json!({
        "turn": turn, "applicable": true, "opportunity": true, "kind": "planning",
        "scores": {"tr": 0, "di": if quote.is_empty() { 0 } else { 2 }, "vr": 0, "sa": 0},
        "quotes": {"tr": null, "di": if quote.is_empty() { serde_json::Value::Null } else { quote.into() }, "vr": null, "sa": null}
    })
    .to_string()
}

/// An OpenAI-compatible server: `failures(n)` decides what the n-th request (from 0) gets.
struct OpenAi {
    count: Arc<AtomicUsize>,
    plan: fn(usize, u32) -> Option<ResponseTemplate>,
    quote: &'static str,
}

impl Respond for OpenAi {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let n = self.count.fetch_add(1, Ordering::SeqCst);
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap().to_string();
        let turn = asked_turn(&user);
        if let Some(r) = (self.plan)(n, turn) {
            return r;
        }
        let quote = if turn == 1 {
            "check that the scheme is https"
        } else {
            self.quote
        };
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "choices": [{"message": {"role": "assistant", "content": answer(turn, quote)}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 60}}
        }))
    }
}

async fn openai(
    plan: fn(usize, u32) -> Option<ResponseTemplate>,
    quote: &'static str,
) -> (MockServer, Arc<AtomicUsize>) {
    let server = MockServer::start().await;
    let count = Arc::new(AtomicUsize::new(0));
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(OpenAi {
            count: count.clone(),
            plan,
            quote,
        })
        .mount(&server)
        .await;
    (server, count)
}

struct Setup {
    repo: Repo,
    session: String,
    cache: tempfile::TempDir,
}

fn setup() -> Setup {
    let repo = Repo::new();
    let session = repo.path().join("s.yaml");
    std::fs::write(&session, SESSION).unwrap();
    Setup {
        session: session.to_string_lossy().into_owned(),
        repo,
        cache: tempfile::tempdir().unwrap(),
    }
}

impl Setup {
    fn judge(&self, server: &str, extra: &[&str]) -> crate::common::Run {
        let mut args = vec![
            "judge",
            self.session.as_str(),
            "--judge",
            "openai:test-model",
            "--format",
            "json",
            "-q",
        ];
        args.extend_from_slice(extra);
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("git-sage"));
        cmd.current_dir(self.repo.path())
            .args(&args)
            .env("OPENAI_BASE_URL", format!("{server}/v1"))
            .env("OPENAI_API_KEY", "test-key")
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", server)
            .env("XDG_CACHE_HOME", self.cache.path())
            .env("HOME", self.cache.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.cache.path().join(".gitconfig"));
        crate::common::Run::from(cmd.output().unwrap())
    }
}

fn ok(_: usize, _: u32) -> Option<ResponseTemplate> {
    None
}

#[tokio::test(flavor = "multi_thread")]
async fn success_then_second_run_makes_no_requests() {
    let (server, count) = openai(ok, "").await;
    let s = setup();
    let v = s.judge(&server.uri(), &[]).ok().json();
    assert_eq!(count.load(Ordering::SeqCst), APPLICABLE);
    assert_eq!(v["schema"], "sage.scores/1");
    assert_eq!(v["judge"]["name"], "openai:test-model");
    assert_eq!(v["judge"]["input_tokens"], 300);
    assert_eq!(v["judge"]["cached_input_tokens"], 180);
    assert_eq!(v["turns"][0]["scores"]["di"], 2);
    assert_eq!(v["turns"][2]["applicable"], false);
    // the second identical run is answered from the cache
    let v2 = s.judge(&server.uri(), &[]).ok().json();
    assert_eq!(count.load(Ordering::SeqCst), APPLICABLE);
    assert_eq!(v2["judge"]["cached"], APPLICABLE as u64);
    assert_eq!(v2["turns"], v["turns"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limited_with_retry_after() {
    fn plan(n: usize, _: u32) -> Option<ResponseTemplate> {
        (n == 0).then(|| ResponseTemplate::new(429).insert_header("Retry-After", "1"))
    }
    let (server, count) = openai(plan, "").await;
    let s = setup();
    let start = Instant::now();
    let v = s.judge(&server.uri(), &["--jobs", "1"]).ok().json();
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    assert_eq!(count.load(Ordering::SeqCst), APPLICABLE + 1);
    assert!(
        v["turns"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| !t["scores"].is_null())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_and_timeouts_are_retried() {
    fn plan(n: usize, _: u32) -> Option<ResponseTemplate> {
        match n {
            0 => Some(ResponseTemplate::new(500).set_body_string("boom")),
            1 => Some(ResponseTemplate::new(200).set_delay(Duration::from_secs(3))),
            _ => None,
        }
    }
    let (server, count) = openai(plan, "").await;
    let s = setup();
    let v = s
        .judge(&server.uri(), &["--jobs", "1", "--judge-timeout", "1"])
        .ok()
        .json();
    assert_eq!(count.load(Ordering::SeqCst), APPLICABLE + 2);
    assert!(
        v["turns"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["error"].is_null())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_is_repaired_then_recorded_as_failure() {
    // The first answer for turn 1 is prose; the repair works.
    fn plan(n: usize, turn: u32) -> Option<ResponseTemplate> {
        if n == 0 && turn == 1 {
            return Some(ResponseTemplate::new(200).set_body_json(serde_json::json!({"choices": [{"message": {"content": "I think turn 1 is fine."}}]})));
        }
        if turn == 4 {
            // never valid for turn 4: three tries, then a scoring failure (not a zero)
            return Some(ResponseTemplate::new(200).set_body_json(
                serde_json::json!({"choices": [{"message": {"content": "{\"turn\": 4}"}}]}),
            ));
        }
        None
    }
    let (server, count) = openai(plan, "").await;
    let s = setup();
    let run = s.judge(&server.uri(), &["--jobs", "1"]);
    assert_eq!(run.code, 3, "a turn without scores fails the run: {run:?}");
    let v = run.json();
    assert_eq!(v["failed_turns"][0]["cause"], "invalid_answer");
    let t = v["turns"].as_array().unwrap();
    assert_eq!(t[0]["scores"]["di"], 2);
    assert!(t[3]["scores"].is_null());
    assert!(
        t[3]["error"]
            .as_str()
            .unwrap()
            .contains("invalid JSON 3 times"),
        "{}",
        t[3]["error"]
    );
    assert_eq!(count.load(Ordering::SeqCst), 1 + 1 + 1 + 3);
    // an HTTP body that is not JSON at all is retried like a server error
    fn garbage(n: usize, _: u32) -> Option<ResponseTemplate> {
        (n == 0).then(|| ResponseTemplate::new(200).set_body_string("<html>proxy error</html>"))
    }
    let (server, count) = openai(garbage, "").await;
    let s = setup();
    s.judge(&server.uri(), &["--jobs", "1"]).ok();
    assert_eq!(count.load(Ordering::SeqCst), APPLICABLE + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn fabricated_quotes_are_rejected() {
    let (server, _) = openai(
        ok,
        "we validate against 169.254.169.254 and all private ranges",
    )
    .await;
    let s = setup();
    let v = s.judge(&server.uri(), &[]).ok().json();
    let t2 = &v["turns"][1];
    assert_eq!(t2["scores"]["di"], 0);
    assert_eq!(t2["rejected_quotes"][0]["dim"], "di");
    assert_eq!(
        t2["rejected_quotes"][0]["reason"],
        "the quote is not in this turn"
    );
    // with --no-quotes the draft keeps it
    let v = s
        .judge(&server.uri(), &["--no-quotes", "--no-cache"])
        .ok()
        .json();
    assert_eq!(v["turns"][1]["scores"]["di"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupted_run_resumes_without_repeating_calls() {
    // The first run loses the server after one answer: a refused key (401) stops it at once,
    // the turns not asked are recorded as failures too (exit 3). The key is fixed for the
    // second run.
    fn broken(n: usize, _: u32) -> Option<ResponseTemplate> {
        (n == 1).then(|| ResponseTemplate::new(401).set_body_string("unauthorized"))
    }
    let (server, count) = openai(broken, "").await;
    let s = setup();
    let run = s.judge(&server.uri(), &["--jobs", "1"]);
    assert_eq!(run.code, 3, "failed turns fail the run: {run:?}");
    let v = run.json();
    let failed = v["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["scores"].is_null())
        .count();
    assert_eq!(failed, APPLICABLE - 1);
    assert_eq!(v["failed_turns"].as_array().unwrap().len(), APPLICABLE - 1);
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "nothing is asked after the refusal"
    );
    // The resumed run asks only for what is missing: in all, one request per applicable turn
    // was answered.
    let v = s.judge(&server.uri(), &["--jobs", "1"]).ok().json();
    assert_eq!(count.load(Ordering::SeqCst), 2 + (APPLICABLE - 1));
    assert!(
        v["turns"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| !t["scores"].is_null())
    );
    assert!(v.get("failed_turns").is_none());
    assert_eq!(v["judge"]["cached"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_judge_exits_3_and_keeps_what_it_has() {
    fn down(_: usize, _: u32) -> Option<ResponseTemplate> {
        Some(ResponseTemplate::new(503))
    }
    let (server, _) = openai(down, "").await;
    let s = setup();
    let out = s.repo.path().join("scores.json");
    let run = s.judge(
        &server.uri(),
        &["--jobs", "3", "--out", out.to_str().unwrap()],
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("could not be scored"), "{}", run.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        v["turns"][0]["error"]
            .as_str()
            .unwrap()
            .contains("could not be reached")
    );
}

struct Anthropic(Arc<AtomicUsize>);

impl Respond for Anthropic {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        assert_eq!(req.headers.get("x-api-key").unwrap(), "test-key");
        assert_eq!(req.headers.get("anthropic-version").unwrap(), "2023-06-01");
        if n == 0 {
            return ResponseTemplate::new(529).insert_header("retry-after", "0");
        }
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
        let blocks = body["messages"][0]["content"].as_array().unwrap();
        // the last log block carries the cache breakpoint, the instruction comes after it
        assert_eq!(
            blocks[blocks.len() - 2]["cache_control"]["type"],
            "ephemeral"
        );
        let turn = asked_turn(blocks.last().unwrap()["text"].as_str().unwrap());
        let a: serde_json::Value = serde_json::from_str(&answer(
            turn,
            if turn == 1 {
                "check that the scheme is https"
            } else {
                ""
            },
        ))
        .unwrap();
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "content": [{"type": "tool_use", "id": "t", "name": "record_scores", "input": a}],
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 90}
        }))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_messages_backend() {
    let server = MockServer::start().await;
    let count = Arc::new(AtomicUsize::new(0));
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(Anthropic(count.clone()))
        .mount(&server)
        .await;
    let s = setup();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("git-sage"));
    cmd.current_dir(s.repo.path())
        .args([
            "judge",
            &s.session,
            "--judge",
            "anthropic:claude-test",
            "--format",
            "json",
            "-q",
            "--jobs",
            "1",
            "--no-cache",
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", server.uri())
        .env("HOME", s.cache.path());
    let run = crate::common::Run::from(cmd.output().unwrap()).ok();
    let v = run.json();
    assert_eq!(count.load(Ordering::SeqCst), APPLICABLE + 1);
    assert_eq!(v["turns"][0]["scores"]["di"], 2);
    assert_eq!(v["judge"]["cached_input_tokens"], 270);
}

#[test]
fn command_backend_record_and_replay() {
    let s = setup();
    // a "judge" that answers every prompt with zeros for the asked turn
    let script = s.repo.path().join("judge.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nturn=$(grep -o 'Score turn [0-9]*' | head -1 | tr -dc 0-9)\nprintf '```json\\n{\"turn\": %s, \"applicable\": true, \"opportunity\": true, \"kind\": \"review\", \"scores\": {\"tr\":0,\"di\":0,\"vr\":0,\"sa\":0}, \"quotes\": {\"tr\":null,\"di\":null,\"vr\":null,\"sa\":null}}\\n```\\n' \"$turn\"\n",
    )
    .unwrap();
    let rec = s.repo.path().join("rec.jsonl");
    let cmd = format!("command:sh {}", script.display());
    let v = s
        .repo
        .sage(&[
            "judge",
            &s.session,
            "--judge",
            &cmd,
            "--record",
            rec.to_str().unwrap(),
            "--format",
            "json",
            "-q",
            "--no-cache",
        ])
        .ok()
        .json();
    // The kind is what the turn does, as the log shows it; the judge's own is kept beside it.
    assert_eq!(v["turns"][0]["kind"], "planning");
    assert_eq!(v["turns"][0]["judge_kind"], "review");
    assert_eq!(
        std::fs::read_to_string(&rec).unwrap().lines().count(),
        APPLICABLE
    );
    // the recording answers the same run without the command
    let replay = format!("replay:{}", rec.display());
    let w = s
        .repo
        .sage(&[
            "judge",
            &s.session,
            "--judge",
            &replay,
            "--format",
            "json",
            "-q",
            "--no-cache",
        ])
        .ok()
        .json();
    assert_eq!(w["turns"], v["turns"]);
    // a command that fails is retried, then recorded as unreachable (exit 3)
    let run = s.repo.sage(&[
        "judge",
        &s.session,
        "--judge",
        "command:exit 1",
        "-q",
        "--no-cache",
        "--judge-timeout",
        "5",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
}

#[test]
fn offline_judge_and_repeats_and_family_warning() {
    let s = setup();
    let v = s
        .repo
        .sage(&["judge", &s.session, "--format", "json", "--repeat", "2"])
        .ok()
        .json();
    assert_eq!(v["judge"]["name"], "offline");
    assert!(
        v["judge"]["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("offline draft")
    );
    assert_eq!(v["sets"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["sets"][0]["turns"], v["turns"],
        "offline is deterministic"
    );
    let text = s.repo.sage(&["judge", &s.session]).ok().stdout;
    assert!(text.contains("   1  planning"), "{text}");
    s.repo
        .sage(&["judge", &s.session, "--judge", "gpt"])
        .bad_input("--judge gpt: unknown judge");
}
