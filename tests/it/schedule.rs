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
/// The verdict and missed opportunities; of the margin, which single changes move the verdict
/// (what one of them would lead to may rest on turns a scheduled run did not judge, and the
/// margin then says so: `unscored`).
fn result(doc: &Value) -> (Value, Value) {
    let mut origin = doc["origin"].clone();
    if let Some(flips) = origin["margin"]["flips"].as_array_mut() {
        for f in flips {
            let f = f.as_object_mut().unwrap();
            for k in ["origin_turn", "type", "unscored"] {
                f.remove(k);
            }
        }
    }
    (origin, doc["missed_opportunities"].clone())
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

/// A judge whose answers come from a seed: scores 0–3 with real, bogus or missing quotes (so
/// the quote check changes some), opportunities at random, and a delay of 0–40 ms per answer,
/// so that with `--jobs 4` answers come back out of order while later turns are decided.
struct Seeded {
    seed: u64,
    texts: Arc<Vec<String>>,
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
    x ^ (x >> 33)
}

impl Respond for Seeded {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let turn = asked_turn(body["messages"][1]["content"].as_str().unwrap());
        let r = |k: u64| mix(self.seed * 1_000_003 + u64::from(turn) * 97 + k);
        let score = |k: u64| if r(k) % 3 == 0 { r(k + 10) % 4 } else { 0 };
        let text = &self.texts[turn as usize - 1];
        let quote = |k: u64, s: u64| match (s, r(k + 20) % 4) {
            (0, _) => Value::Null,
            (_, 0) => Value::from("words the turn never said"),
            _ => Value::from(text.as_str()),
        };
        let (tr, di, vr, sa) = (score(1), score(2), score(3), score(4));
        let a = json!({"turn": turn, "applicable": r(5) % 7 != 0, "opportunity": r(6) % 8 == 0,
            "kind": "review",
            "scores": {"tr": tr, "di": di, "vr": vr, "sa": sa},
            "quotes": {"tr": quote(1, tr), "di": quote(2, di), "vr": quote(3, vr), "sa": quote(4, sa)}});
        ResponseTemplate::new(200)
            .set_delay(std::time::Duration::from_millis(r(7) % 40))
            .set_body_json(json!({
                "choices": [{"message": {"role": "assistant", "content": a.to_string()}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20}
            }))
    }
}

/// Seeded judges on a 24-turn session of every kind, several answers out at once: each
/// seed's origin and missed opportunities are the same scheduled as with `--score-all`, and
/// the seeds together do skip turns (else the comparison would prove nothing).
#[tokio::test(flavor = "multi_thread")]
async fn with_answers_out_of_order_the_result_is_the_same() {
    let kinds = ["planning", "implementation", "verification", "review"];
    let texts: Vec<String> = (1..=24)
        .map(|n| format!("Turn {n}: working on the handler in app.py, step {n}."))
        .collect();
    let mut session = String::from(
        "schema: sage.session/1\ntask: Fix the command injection in app.py.\nturns:\n",
    );
    for (i, t) in texts.iter().enumerate() {
        session.push_str(&format!("  - kind: {}\n    text: \"{t}\"\n", kinds[i % 4]));
    }
    let r = Repo::new();
    r.write("app.py", "import os\n\n\ndef run(cmd):\n    return 0\n");
    r.commit("base");
    r.write(
        "app.py",
        "import os\n\n\ndef run(cmd):\n    return os.system(cmd)\n",
    );
    r.commit("run the command");
    r.write("../session.yaml", &session);
    let session_path = r.path().join("../session.yaml");
    let texts = Arc::new(texts);
    let mut skipped_total = 0;
    for seed in 1..=8u64 {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Seeded {
                seed,
                texts: texts.clone(),
            })
            .mount(&server)
            .await;
        let base = format!("{}/v1", server.uri());
        let run = |extra: &[&str]| {
            let mut args = vec![
                "blame-origin",
                "--base",
                "HEAD~1",
                "--session",
                session_path.to_str().unwrap(),
                "--anchor-file",
                "app.py",
                "--anchor-snippet",
                "os.system(cmd)",
                "--judge",
                "openai:gpt-4.1",
                "--no-cache",
                "--jobs",
                "4",
                "--format",
                "json",
            ];
            args.extend_from_slice(extra);
            r.sage_env(
                r.path(),
                &args,
                &[("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "k")],
            )
            .json()
        };
        let all = run(&["--score-all"]);
        let some = run(&[]);
        assert_eq!(result(&some), result(&all), "seed {seed}");
        skipped_total += skipped(&some).len();
    }
    assert!(skipped_total > 0, "no seed skipped a turn");
}
