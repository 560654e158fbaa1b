//! `--estimate`: what the judge calls would cost, with nothing sent — checked against the
//! requests a real run then sends to a local server, the answer cache, the price table and
//! its overrides, and `blame-origin` and `batch` on the demo.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::{DEMO_FINDING, Repo};
use crate::judge::{answer, asked_turn};

const SESSION: &str = r#"schema: sage.session/1
task: Fix the SSRF in the product photo download.
turns:
  - text: "Plan: we will check that the scheme is https before downloading."
    tool_calls:
      - {name: Read, arguments: {path: fetcher.py}, result: "def fetch(url):\n    return requests.get(url)\n"}
  - text: Adding the check to fetcher.py now.
  - text: "pip install -r requirements.txt"
    kind: administrative
  - text: Tests are green; the SSRF fix is complete.
"#;

/// An OpenAI-compatible server that keeps every request body.
struct Keeping(Arc<Mutex<Vec<Value>>>);

impl Respond for Keeping {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap().to_string();
        self.0.lock().unwrap().push(body);
        let turn = asked_turn(&user);
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "choices": [{"message": {"role": "assistant", "content": answer(turn, "")}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}
        }))
    }
}

async fn keeping_server() -> (MockServer, Arc<Mutex<Vec<Value>>>) {
    let server = MockServer::start().await;
    let bodies = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Keeping(bodies.clone()))
        .mount(&server)
        .await;
    (server, bodies)
}

/// The o200k_base tokens of what a request carries: both messages' text, the answer schema,
/// and the estimate's own allowance for message framing.
fn counted(body: &Value) -> u64 {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let n = |s: &str| bpe.encode_ordinary(s).len() as u64;
    let text: u64 = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| n(m["content"].as_str().unwrap()))
        .sum();
    let schema = &body["response_format"]["json_schema"]["schema"];
    text + n(&serde_json::to_string(schema).unwrap()) + 8
}

#[tokio::test(flavor = "multi_thread")]
async fn the_estimate_sends_nothing_and_counts_what_a_run_sends() {
    let (server, bodies) = keeping_server().await;
    let r = Repo::new();
    r.write("s.yaml", SESSION);
    let s = "s.yaml".to_string();
    let base = format!("{}/v1", server.uri());
    let judge = |extra: &[&str], key: bool| {
        let mut args = vec!["judge", s.as_str(), "--judge", "openai:gpt-4.1", "-q"];
        args.extend_from_slice(extra);
        let mut env = vec![("OPENAI_BASE_URL", base.as_str())];
        if key {
            env.push(("OPENAI_API_KEY", "test-key"));
        }
        r.sage_env(r.path(), &args, &env)
    };
    // No key is needed, and nothing reaches the server.
    let e = judge(&["--estimate", "--format", "json"], false)
        .ok()
        .json();
    assert!(bodies.lock().unwrap().is_empty());
    assert_eq!(e["schema"], "sage.estimate/1");
    assert_eq!(
        (e["turns"].as_u64(), e["judged"].as_u64()),
        (Some(4), Some(3))
    );
    let est = &e["estimates"][0];
    assert_eq!(est["calls"], 3);
    assert_eq!(est["tokenizer"], "o200k_base");
    assert_eq!(est["price"]["model"], "gpt-4.1");
    assert_eq!(est["output_tokens"], 750);
    let input = est["input_tokens"].as_u64().unwrap();
    let cost = est["cost_usd"].as_f64().unwrap();
    let want = ((input - est["cached_input_tokens"].as_u64().unwrap()) as f64 * 2.0
        + est["cached_input_tokens"].as_f64().unwrap() * 0.5
        + 750.0 * 8.0)
        / 1e6;
    assert!((cost - want).abs() < 1e-9, "{cost} vs {want}");
    assert_eq!(est["batch_cost_usd"].as_f64().unwrap(), cost * 0.5);
    // The run then sends exactly the prompts estimated: the counts agree within 2 %.
    judge(&["--format", "json"], true).ok();
    let sent: Vec<Value> = bodies.lock().unwrap().clone();
    assert_eq!(sent.len(), 3);
    let total: u64 = sent.iter().map(counted).sum();
    let largest = sent.iter().map(counted).max().unwrap();
    let off = (input as f64 - total as f64).abs() / total as f64;
    assert!(off <= 0.02, "estimated {input}, sent {total}");
    let big = est["largest_prompt_tokens"].as_u64().unwrap();
    assert!((big as f64 - largest as f64).abs() / largest as f64 <= 0.02);
    // Answered prompts are free the next time.
    let again = judge(&["--estimate", "--format", "json"], false)
        .ok()
        .json();
    let est = &again["estimates"][0];
    assert_eq!(
        (est["calls"].as_u64(), est["cached_answers"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(est["cost_usd"].as_f64(), Some(0.0));
    // The text form says so too.
    let text = judge(&["--estimate"], false).ok().stdout;
    assert!(
        text.contains("nothing was sent") && text.contains("3 answered from the cache"),
        "{text}"
    );
}

#[test]
fn a_price_table_of_ones_own_is_read_and_its_mistakes_name_the_line() {
    let r = Repo::new();
    r.write("s.yaml", SESSION);
    let s = "s.yaml".to_string();
    std::fs::create_dir_all(r.path().join("tpl")).unwrap();
    r.write(
        "tpl/prices.yaml",
        "schema: sage.prices/1\nmodels:\n  - {model: house-model, input: 1, cached_input: 1, output: 1, context: 1000, tokenizer: cl100k_base}\n",
    );
    let args = |model: &str| {
        vec![
            "judge".to_string(),
            s.clone(),
            "--judge".into(),
            format!("openai:{model}"),
            "--templates".into(),
            "tpl".into(),
            "--estimate".into(),
            "--format".into(),
            "json".into(),
        ]
    };
    let run = |model: &str| {
        let a = args(model);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        r.sage(&a)
    };
    let v = run("house-model-7").ok().json();
    let est = &v["estimates"][0];
    assert_eq!(est["price"]["model"], "house-model");
    assert_eq!(est["tokenizer"], "cl100k_base");
    assert!(v["prices"].as_str().unwrap().ends_with("prices.yaml"));
    // The table replaces the embedded one whole: gpt-4.1 has no price there.
    let v = run("gpt-4.1").ok().json();
    assert!(v["estimates"][0]["cost_usd"].is_null() && v["total"]["cost_usd"].is_null());
    let w = v["estimates"][0]["warnings"].to_string();
    assert!(w.contains("no price for openai:gpt-4.1"), "{w}");
    r.write(
        "tpl/prices.yaml",
        "schema: sage.prices/1\nmodels:\n  - {model: m, input: 1, output: 1, context: 10, tokenizer: o200k_base}\n",
    );
    let bad = run("m");
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("prices.yaml:3") && bad.stderr.contains("cached_input"),
        "{}",
        bad.stderr
    );
}

#[test]
fn blame_origin_and_batch_estimate_their_cases() {
    let r = Repo::new();
    let d = r.demo();
    let ds = d.to_str().unwrap();
    let one = r
        .sage(&[
            "-C",
            ds,
            "blame-origin",
            "--judge",
            "anthropic:claude-sonnet-4-5",
            "--estimate",
            "--format",
            "json",
        ])
        .ok()
        .json();
    let est = &one["estimates"][0];
    assert!(est["calls"].as_u64().unwrap() > 0);
    assert_eq!(est["price"]["model"], "claude-sonnet-4-5");
    assert!(est["warnings"].to_string().contains("approximated"));
    assert!(est["cost_usd"].as_f64().unwrap() > 0.0);
    let md = r.sage(&["-C", ds, "blame-origin", "--estimate", "--format", "md"]);
    assert_eq!(md.code, 2, "{md:?}");
    assert!(
        md.stderr.contains("--estimate writes text or JSON"),
        "{}",
        md.stderr
    );
    // A corpus of the demo twice: one line per case, the totals twice one case's.
    let manifest = format!(
        "cases:\n  - {{id: first, repo: {ds}, tip: agent/fix-ssrf, base: main, finding: {DEMO_FINDING}}}\n  - {{id: second, repo: {ds}, tip: agent/fix-ssrf, base: main, finding: {DEMO_FINDING}}}\n"
    );
    r.write("corpus.yaml", &manifest);
    let all = r
        .sage(&[
            "batch",
            "corpus.yaml",
            "--judge",
            "anthropic:claude-sonnet-4-5",
            "--estimate",
            "--format",
            "json",
        ])
        .ok()
        .json();
    let cases: Vec<&str> = all["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["case"].as_str().unwrap())
        .collect();
    assert_eq!(cases, ["first", "second"]);
    assert_eq!(
        all["total"]["calls"].as_u64(),
        Some(2 * est["calls"].as_u64().unwrap())
    );
    assert_eq!(
        all["total"]["input_tokens"].as_u64(),
        Some(2 * est["input_tokens"].as_u64().unwrap())
    );
    assert!(
        !r.path().join("corpus.results.jsonl").exists(),
        "an estimate writes no results"
    );
}

/// `--max-cost`: nothing is sent past it, the turns left are failed turns of their own cause,
/// the run exits 3 with the figures; under a limit that holds, the cost is the usage's at the
/// table's prices.
#[tokio::test(flavor = "multi_thread")]
async fn max_cost_stops_before_the_call_that_would_pass_it() {
    let (server, bodies) = keeping_server().await;
    let r = Repo::new();
    r.write("s.yaml", SESSION);
    let base = format!("{}/v1", server.uri());
    let env = [("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "k")];
    let judge = |limit: &str| {
        r.sage_env(
            r.path(),
            &[
                "judge",
                "s.yaml",
                "--judge",
                "openai:gpt-4.1",
                "--jobs",
                "1",
                "--max-cost",
                limit,
                "--format",
                "json",
            ],
            &env,
        )
    };
    let none = judge("0");
    assert_eq!(none.code, 3, "{none:?}");
    assert!(bodies.lock().unwrap().is_empty(), "nothing is sent");
    let v = none.json();
    let failed = v["failed_turns"].as_array().unwrap();
    assert_eq!(failed.len(), 3);
    assert!(failed.iter().all(|f| f["cause"] == "over_budget"));
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("--max-cost $0.00")
    );
    assert!(none.stderr.contains("raise --max-cost"), "{}", none.stderr);
    let all = judge("1000");
    assert_eq!(all.code, 0, "{all:?}");
    assert_eq!(bodies.lock().unwrap().len(), 3);
    // The server reported 100 input and 20 output tokens a call: at gpt-4.1's prices.
    let cost = all.json()["judge"]["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - 3.0 * (100.0 * 2.0 + 20.0 * 8.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    assert!(
        all.stderr.contains("spent $0.00108 of --max-cost $1000.00"),
        "{}",
        all.stderr
    );
    // A model the table has no price for cannot be held to a limit.
    let unpriced = r.sage_env(
        r.path(),
        &[
            "judge",
            "s.yaml",
            "--judge",
            "openai:house-llm",
            "--max-cost",
            "1",
        ],
        &env,
    );
    assert_eq!(unpriced.code, 2, "{unpriced:?}");
    assert!(
        unpriced.stderr.contains("has no price"),
        "{}",
        unpriced.stderr
    );
}

/// The text report says what a model judge's calls took: calls, tokens and the cost at the
/// price table's prices (the provider reports none here).
#[tokio::test(flavor = "multi_thread")]
async fn the_report_shows_what_the_judge_calls_cost() {
    let (server, bodies) = keeping_server().await;
    let r = Repo::new();
    let d = r.demo();
    let base = format!("{}/v1", server.uri());
    let run = r.sage_env(
        &d,
        &["blame-origin", "--judge", "openai:gpt-4.1", "--no-cache"],
        &[("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "k")],
    );
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    let n = bodies.lock().unwrap().len();
    assert!(n > 0);
    let calls = 100.0 * 2.0 + 20.0 * 8.0;
    let want = format!(
        "judge calls {n} (0 answered from the cache) · {} input tokens, 0 of them from the provider's cache · {} output · ${:.4}",
        100 * n,
        20 * n,
        n as f64 * calls / 1e6
    );
    assert!(run.stdout.contains(&want), "{want}\n{}", run.stdout);
    // The Markdown report has the same line after the judge's name.
    let md = r.sage_env(
        &d,
        &[
            "blame-origin",
            "--judge",
            "openai:gpt-4.1",
            "--no-cache",
            "--format",
            "md",
        ],
        &[("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "k")],
    );
    assert!(
        md.stdout.contains(&format!("(prefix · {want})")),
        "{}",
        md.stdout
    );
}

/// An OpenAI-compatible server that answers each request after a second.
struct Slow;

impl Respond for Slow {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let turn = asked_turn(body["messages"][1]["content"].as_str().unwrap());
        ResponseTemplate::new(200)
            .set_delay(std::time::Duration::from_millis(1000))
            .set_body_json(serde_json::json!({
                "choices": [{"message": {"role": "assistant", "content": answer(turn, "")}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20}
            }))
    }
}

/// Issue 43 (17): a call refused under `--max-cost` while another was in flight said the
/// in-flight call's reservation was spent. Spent is what calls that are back cost.
#[tokio::test(flavor = "multi_thread")]
async fn max_cost_tells_spent_from_set_aside() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Slow)
        .mount(&server)
        .await;
    let r = Repo::new();
    r.write("s.yaml", SESSION);
    let base = format!("{}/v1", server.uri());
    let env = [("OPENAI_BASE_URL", base.as_str()), ("OPENAI_API_KEY", "k")];
    let judge = |limit: &str, jobs: &str| {
        r.sage_env(
            r.path(),
            &[
                "judge",
                "s.yaml",
                "--judge",
                "openai:gpt-4.1",
                "--jobs",
                jobs,
                "--max-cost",
                limit,
                "--format",
                "json",
            ],
            &env,
        )
    };
    // What each call is projected to cost, from the refusals of a zero limit.
    let about = |e: &Value| -> f64 {
        let e = e.as_str().unwrap();
        let at = e.find("(about $").unwrap() + "(about $".len();
        e[at..].split(')').next().unwrap().parse().unwrap()
    };
    let zero = judge("0", "1").json();
    let projected: Vec<f64> = zero["failed_turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| about(&f["error"]))
        .collect();
    let max = projected.iter().cloned().fold(0.0, f64::max);
    let min = projected.iter().cloned().fold(f64::MAX, f64::min);
    assert!(2.0 * min > 1.1 * max, "{projected:?}");
    // Room for one call at a time: the second of two workers is refused while the first is
    // in flight, with nothing spent yet.
    let run = judge(&format!("{:.6}", 1.1 * max), "2");
    let v = run.json();
    let errors: Vec<&str> = v["failed_turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["error"].as_str().unwrap())
        .collect();
    assert!(!errors.is_empty(), "{run:?}");
    let first = errors[0];
    assert!(
        first.contains("$0.00 spent, $") && first.contains("set aside for calls in flight"),
        "{first}"
    );
}
