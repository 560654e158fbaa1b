//! `git sage pr-comment` against a local mock of GitHub's REST API: one comment per category,
//! created once and then updated, never two; the job summary when there is no token, when
//! GitHub refuses, fails or does not answer.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common::{Repo, Run};

/// What the mock does with the n-th request of a method (from 0): `None` serves it.
pub(crate) type Plan = fn(&str, usize) -> Option<ResponseTemplate>;

/// A pull request's comments, kept as GitHub would.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) comments: Vec<(u64, String)>,
    next: u64,
    pub(crate) seen: Vec<String>,
}

struct GitHub {
    state: Arc<Mutex<State>>,
    plan: Plan,
}

impl Respond for GitHub {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let mut s = self.state.lock().unwrap();
        let method = req.method.as_str().to_string();
        let n = s.seen.iter().filter(|m| **m == method).count();
        s.seen.push(method.clone());
        assert_eq!(
            req.headers.get("authorization").unwrap().to_str().unwrap(),
            "Bearer tok",
            "the token is sent"
        );
        let planned = (self.plan)(&method, n);
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let comment = |id: u64, text: &str| {
            json!({"id": id, "body": text,
                "html_url": format!("https://github.example/o/r/pull/7#issuecomment-{id}")})
        };
        let path = req.url.path().to_string();
        let write = |s: &mut State| -> Value {
            match method.as_str() {
                "POST" => {
                    s.next += 1;
                    let id = 100 + s.next;
                    let text = body["body"].as_str().unwrap().to_string();
                    s.comments.push((id, text.clone()));
                    comment(id, &text)
                }
                "PATCH" => {
                    let id: u64 = path.rsplit('/').next().unwrap().parse().unwrap();
                    let text = body["body"].as_str().unwrap().to_string();
                    let c = s.comments.iter_mut().find(|c| c.0 == id).unwrap();
                    c.1 = text.clone();
                    comment(id, &text)
                }
                _ => Value::Array(s.comments.iter().map(|(id, t)| comment(*id, t)).collect()),
            }
        };
        if let Some(r) = planned {
            return r;
        }
        let v = write(&mut s);
        let status = if method == "POST" { 201 } else { 200 };
        ResponseTemplate::new(status).set_body_json(v)
    }
}

pub(crate) async fn github(plan: Plan, existing: &[&str]) -> (MockServer, Arc<Mutex<State>>) {
    let server = MockServer::start().await;
    let state = Arc::new(Mutex::new(State::default()));
    {
        let mut s = state.lock().unwrap();
        for (i, text) in existing.iter().enumerate() {
            s.comments.push((10 + i as u64, text.to_string()));
        }
    }
    Mock::given(wiremock::matchers::path_regex("^/repos/o/r/issues/"))
        .respond_with(GitHub {
            state: state.clone(),
            plan,
        })
        .mount(&server)
        .await;
    (server, state)
}

pub(crate) fn serve(_: &str, _: usize) -> Option<ResponseTemplate> {
    None
}

/// Runs `pr-comment` as a GitHub Actions step would, with `extra` flags and environment.
fn comment(r: &Repo, api: &str, extra: &[&str], token: Option<&str>) -> (Run, String) {
    let summary = r.home().join("summary.md");
    let _ = std::fs::remove_file(&summary);
    let event = r.home().join("event.json");
    std::fs::write(
        &event,
        r#"{"action": "synchronize", "pull_request": {"number": 7}}"#,
    )
    .unwrap();
    let mut args = vec!["pr-comment", "--body-file", "origin.md"];
    args.extend_from_slice(extra);
    let mut env = vec![
        ("GITHUB_API_URL", api.to_string()),
        ("GITHUB_REPOSITORY", "o/r".to_string()),
        ("GITHUB_EVENT_PATH", event.display().to_string()),
        ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
        ("GITHUB_ACTIONS", "true".to_string()),
    ];
    if let Some(t) = token {
        env.push(("GITHUB_TOKEN", t.to_string()));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let run = r.sage_env(r.path(), &args, &env);
    (run, std::fs::read_to_string(&summary).unwrap_or_default())
}

fn repo(report: &str) -> Repo {
    let r = Repo::new();
    r.write("origin.md", report);
    r
}

fn posts(state: &Arc<Mutex<State>>) -> usize {
    state
        .lock()
        .unwrap()
        .seen
        .iter()
        .filter(|m| *m == "POST")
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_comment_is_created_once_then_updated_never_duplicated() {
    let (server, state) = github(serve, &["LGTM", "<!-- git-sage:pr-comment other -->\nx"]).await;
    let r = repo("# Origin\n\nturn 1, first report\n");
    let (run, summary) = comment(&r, &server.uri(), &[], Some("tok"));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(
            "pull-request comment created: https://github.example/o/r/pull/7#issuecomment-101"
        ),
        "{run:?}"
    );
    assert!(summary.is_empty(), "{summary}");
    r.write("origin.md", "# Origin\n\nturn 2, second report\n");
    let (run, _) = comment(&r, &server.uri(), &[], Some("tok"));
    assert!(
        run.stderr.contains("pull-request comment updated"),
        "{run:?}"
    );
    // a third run, and a run of another category: still one comment each
    comment(&r, &server.uri(), &[], Some("tok"));
    comment(&r, &server.uri(), &["--category", "screen"], Some("tok"));
    let s = state.lock().unwrap();
    let ours: Vec<&String> = s
        .comments
        .iter()
        .map(|c| &c.1)
        .filter(|b| b.starts_with("<!-- git-sage:pr-comment git-sage -->"))
        .collect();
    assert_eq!(ours.len(), 1, "{:?}", s.comments);
    assert!(ours[0].contains("second report"));
    assert_eq!(
        s.comments.len(),
        4,
        "the user's, another tool's, ours, the screen's"
    );
    assert_eq!(s.seen.iter().filter(|m| *m == "POST").count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_token_or_a_refusal_puts_the_report_in_the_job_summary() {
    let (server, state) = github(serve, &[]).await;
    let r = repo("# Origin\n\nthe report\n");
    let (run, summary) = comment(&r, &server.uri(), &[], None);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(
            "no pull-request comment: no GITHUB_TOKEN: a pull request from a fork gets no token"
        ),
        "{run:?}"
    );
    assert!(
        run.stdout.starts_with("::warning title=git-sage::"),
        "{run:?}"
    );
    assert!(summary.contains("the report"), "{summary}");
    assert!(state.lock().unwrap().seen.is_empty(), "nothing sent");

    fn forbidden(_: &str, _: usize) -> Option<ResponseTemplate> {
        Some(
            ResponseTemplate::new(403)
                .set_body_json(json!({"message": "Resource not accessible by integration"})),
        )
    }
    let (server, state) = github(forbidden, &[]).await;
    let (run, summary) = comment(&r, &server.uri(), &[], Some("tok"));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("cannot list the comments: HTTP 403: Resource not accessible by integration; the report is in the job summary"),
        "{run:?}"
    );
    assert_eq!(run.stderr.lines().count(), 1, "{run:?}");
    assert!(summary.contains("the report"));
    assert_eq!(posts(&state), 0);
    let (run, _) = comment(&r, &server.uri(), &["--strict"], Some("tok"));
    assert_eq!(run.code, 3, "{run:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn server_errors_are_retried_and_a_lost_answer_is_not_a_second_comment() {
    // The listing fails twice, then works.
    fn flaky(method: &str, n: usize) -> Option<ResponseTemplate> {
        (method == "GET" && n < 2).then(|| ResponseTemplate::new(502))
    }
    let (server, state) = github(flaky, &[]).await;
    let r = repo("# Origin\n");
    let (run, _) = comment(&r, &server.uri(), &[], Some("tok"));
    assert!(run.stderr.contains("comment created"), "{run:?}");
    assert_eq!(posts(&state), 1);

    // Always failing: given up after three tries, into the summary; nothing created.
    fn down(_: &str, _: usize) -> Option<ResponseTemplate> {
        Some(ResponseTemplate::new(503))
    }
    let (server, state) = github(down, &[]).await;
    let (run, summary) = comment(&r, &server.uri(), &[], Some("tok"));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("cannot list the comments: HTTP 503"),
        "{run:?}"
    );
    assert!(summary.contains("# Origin"));
    assert_eq!(posts(&state), 0);
    assert_eq!(state.lock().unwrap().seen.len(), 3, "three tries");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_creation_whose_answer_was_lost_is_looked_for_before_trying_again() {
    let server = MockServer::start().await;
    let state = Arc::new(Mutex::new(State::default()));
    // The first POST is carried out, but its answer is a 502.
    struct Lost(Arc<Mutex<State>>);
    impl Respond for Lost {
        fn respond(&self, req: &Request) -> ResponseTemplate {
            let mut s = self.0.lock().unwrap();
            let method = req.method.as_str().to_string();
            s.seen.push(method.clone());
            match method.as_str() {
                "POST" => {
                    let body: Value = serde_json::from_slice(&req.body).unwrap();
                    s.comments.push((101, body["body"].as_str().unwrap().to_string()));
                    ResponseTemplate::new(502)
                }
                _ => ResponseTemplate::new(200).set_body_json(Value::Array(
                    s.comments
                        .iter()
                        .map(|(id, t)| json!({"id": id, "body": t, "html_url": format!("https://github.example/c/{id}")}))
                        .collect(),
                )),
            }
        }
    }
    Mock::given(wiremock::matchers::path_regex("^/repos/o/r/issues/"))
        .respond_with(Lost(state.clone()))
        .mount(&server)
        .await;
    let r = repo("# Origin\n");
    let (run, _) = comment(&r, &server.uri(), &[], Some("tok"));
    assert!(
        run.stderr
            .contains("comment created: https://github.example/c/101"),
        "{run:?}"
    );
    assert_eq!(posts(&state), 1, "no second POST");
    assert_eq!(state.lock().unwrap().comments.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_github_that_does_not_answer_costs_the_timeout_only() {
    fn slow(_: &str, _: usize) -> Option<ResponseTemplate> {
        Some(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(5)))
    }
    let (server, _) = github(slow, &[]).await;
    let r = repo("# Origin\n");
    let t = std::time::Instant::now();
    let (run, summary) = comment(&r, &server.uri(), &["--timeout", "0.3"], Some("tok"));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("no answer within 0.3 s"), "{run:?}");
    assert!(summary.contains("# Origin"));
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
}

#[test]
fn bad_input_is_one_line() {
    let r = Repo::new();
    r.sage(&["pr-comment", "--body-file", "nope.md"])
        .bad_input("cannot read nope.md: no such file");
    r.write("origin.md", "x");
    r.sage(&["pr-comment", "--body-file", "origin.md", "--timeout", "0"])
        .bad_input("--timeout 0: expected seconds");
    r.sage(&[
        "pr-comment",
        "--body-file",
        "origin.md",
        "--repo",
        "nope",
        "--pr",
        "1",
    ])
    .bad_input("--repo nope: expected owner/name");
}

#[test]
fn outside_a_pull_request_the_report_goes_to_the_summary() {
    let r = repo("# Origin\n");
    let summary = r.home().join("s.md");
    let run = r.sage_env(
        r.path(),
        &["pr-comment", "--body-file", "origin.md"],
        &[
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_TOKEN", "tok"),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("not a pull request"), "{run:?}");
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("# Origin")
    );
}
