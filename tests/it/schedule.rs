//! Rule-aware scheduling through the binary: `blame-origin` with a model judge asks only about
//! turns whose scores can change the origin or the missed opportunities, and gives what
//! `--score-all` gives, with fewer requests.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::Repo;
use crate::judge::asked_turn;

/// An OpenAI-compatible judge: `plan(turn)` gives the answer object for a turn, or `None` for
/// an HTTP 400 (a failure no retry fixes). Keeps the turns it was asked about.
struct Judge {
    asked: Arc<Mutex<Vec<u32>>>,
    plan: fn(u32) -> Option<Value>,
}

impl Respond for Judge {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let turn = asked_turn(body["messages"][1]["content"].as_str().unwrap());
        self.asked.lock().unwrap().push(turn);
        match (self.plan)(turn) {
            Some(a) => ResponseTemplate::new(200).set_body_json(json!({
                "choices": [{"message": {"role": "assistant", "content": a.to_string()}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20}
            })),
            None => ResponseTemplate::new(400).set_body_string("bad request"),
        }
    }
}

fn zeros(turn: u32, opportunity: bool) -> Value {
    json!({"turn": turn, "applicable": true, "opportunity": opportunity, "kind": "implementation",
           "scores": {"tr": 0, "di": 0, "vr": 0, "sa": 0},
           "quotes": {"tr": null, "di": null, "vr": null, "sa": null}})
}

/// Runs `blame-origin --format json` on the demo against the judge, with `extra` flags;
/// returns the report, the exit code and the turns asked, in order.
async fn blame(plan: fn(u32) -> Option<Value>, extra: &[&str]) -> (Value, i32, Vec<u32>) {
    let server = MockServer::start().await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Judge {
            asked: asked.clone(),
            plan,
        })
        .mount(&server)
        .await;
    let r = Repo::new();
    let d = r.demo();
    let base = format!("{}/v1", server.uri());
    let mut args = vec![
        "blame-origin",
        "--judge",
        "openai:gpt-4.1",
        "--no-cache",
        "--jobs",
        "1",
    ];
    args.extend_from_slice(extra);
    if !extra.contains(&"--format") {
        args.extend(["--format", "json"]);
    }
    let run = r.sage_env(
        &d,
        &args,
        &[("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "k")],
    );
    let doc = match args.contains(&"text") {
        true => Value::String(run.stdout.clone()),
        false => run.json(),
    };
    let asked = asked.lock().unwrap().clone();
    (doc, run.code, asked)
}

/// What must not change: the origin and the missed opportunities.
fn result(doc: &Value) -> (Value, Value) {
    (doc["origin"].clone(), doc["missed_opportunities"].clone())
}

fn skipped(doc: &Value) -> Vec<(u64, String)> {
    doc["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["skipped"].is_null())
        .map(|t| {
            assert!(t["scores"].is_null() && t["error"].is_null(), "{t}");
            (
                t["turn"].as_u64().unwrap(),
                t["skipped"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The demo's turns: 1 planning, 2–3 implementation, 4 verification, 5 review, 6
/// implementation; the introducing write is turn 3.
#[tokio::test(flavor = "multi_thread")]
async fn after_the_origin_only_implementation_and_review_turns_are_asked() {
    // Silent on the threat with an opportunity: the origin is turn 1, (ii).
    let plan = |t| Some(zeros(t, true));
    let (all, code_all, asked_all) = blame(plan, &["--score-all"]).await;
    let (some, code, asked) = blame(plan, &[]).await;
    assert_eq!(asked_all, [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        asked,
        [1, 2, 3, 5, 6],
        "the verification turn 4 is not asked"
    );
    assert_eq!(result(&some), result(&all));
    assert_eq!(some["origin"]["turn"], 1);
    assert_eq!(code, code_all);
    assert_eq!(skipped(&some), [(4, "after_origin".to_string())]);
    assert!(skipped(&all).is_empty());
    assert_eq!(some["judge"]["skipped"], 1);
    assert_eq!(some["judge"]["calls"], 5);
    assert!(all["judge"].get("skipped").is_none());
    // The text report says so: on the turn, and in the judge's line.
    let (text, _, _) = blame(plan, &["--format", "text"]).await;
    let text = text.as_str().unwrap();
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("4 ") && l.contains("not asked")),
        "{text}"
    );
    assert!(text.contains("turns not asked: 1"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_origin_up_to_the_bound_the_turns_past_it_are_not_asked() {
    // No opportunity, nothing said: no candidate up to the introducing write (turn 3).
    let plan = |t| Some(zeros(t, false));
    let (all, _, asked_all) = blame(plan, &["--score-all"]).await;
    let (some, _, asked) = blame(plan, &[]).await;
    assert_eq!(asked_all.len(), 6);
    assert_eq!(asked, [1, 2, 3]);
    assert_eq!(result(&some), result(&all));
    assert_eq!(some["origin"]["reason"], "no_candidate");
    assert_eq!(
        skipped(&some),
        [4, 5, 6].map(|t| (t, "past_bound".to_string()))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_failure_before_any_candidate_nothing_more_is_asked() {
    let plan = |t| (t != 2).then(|| zeros(t, false));
    let (all, code_all, _) = blame(plan, &["--score-all"]).await;
    let (some, code, asked) = blame(plan, &[]).await;
    assert_eq!(asked, [1, 2]);
    assert_eq!(result(&some), result(&all));
    assert_eq!(some["origin"]["reason"], "scoring_failed");
    // Still a failed run (exit 3): the skipped turns are not failures of their own.
    assert_eq!((code, code_all), (3, 3));
    assert_eq!(some["failed_turns"].as_array().unwrap().len(), 1);
    assert_eq!(
        skipped(&some),
        [3, 4, 5, 6].map(|t| (t, "after_failure".to_string()))
    );
}
