//! No secret survives: generated secrets of every kind, in every place a session log can hold
//! them — escaped, nested or cut over lines — must be gone from every channel the product
//! writes to: what `record` commits, the judge's prompts (a command's stdin and an HTTP
//! provider's requests), its stored answers and cache, a failing judge's stderr, the manual
//! judge's files, every report format, origin notes, Agent Trace records and the guard's log.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

use crate::common::Repo;

/// One generated secret: how it appears in the log, and the parts that must never come out.
#[derive(Debug, Clone)]
struct Secret {
    kind: &'static str,
    text: String,
    cores: Vec<String>,
}

fn chars(set: &'static str, len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<String> {
    let set: Vec<char> = set.chars().collect();
    prop::collection::vec(prop::sample::select(set), len)
        .prop_map(|v| v.into_iter().collect())
        .boxed()
}

const UPPER_DIGIT: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn simple(
    kind: &'static str,
    prefix: &'static str,
    body: BoxedStrategy<String>,
) -> BoxedStrategy<Secret> {
    body.prop_map(move |b| {
        let t = format!("{prefix}{b}");
        Secret {
            kind,
            text: t.clone(),
            cores: vec![t],
        }
    })
    .boxed()
}

/// A value that has a digit and a letter, as generated passwords and keys do.
fn password(len: std::ops::RangeInclusive<usize>) -> BoxedStrategy<String> {
    (
        chars(
            "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789!#%+@^~*",
            len,
        ),
        0..10u8,
        "[a-z]",
    )
        .prop_map(|(s, d, l)| format!("{s}{d}{l}"))
        .boxed()
}

fn secret() -> BoxedStrategy<Secret> {
    prop_oneof![
        (chars(UPPER_DIGIT, 16..=16), chars(B64, 40..=40)).prop_map(|(id, key)| Secret {
            kind: "aws key pair",
            text: format!("AWS_ACCESS_KEY_ID=AKIA{id}\nAWS_SECRET_ACCESS_KEY={key}"),
            cores: vec![format!("AKIA{id}"), key],
        }),
        simple("github token", "ghp_", chars(ALNUM, 36..=36)),
        simple(
            "github fine-grained token",
            "github_pat_",
            chars(ALNUM, 82..=82)
        ),
        simple("gitlab token", "glpat-", chars(URLSAFE, 20..=26)),
        (chars("0123456789", 10..=12), chars(ALNUM, 24..=24)).prop_map(|(a, b)| {
            let t = format!("xoxb-{a}-{a}-{b}");
            Secret {
                kind: "slack token",
                text: t.clone(),
                cores: vec![t],
            }
        }),
        simple("stripe key", "sk_live_", chars(ALNUM, 24..=32)),
        simple("openai key", "sk-proj-", chars(URLSAFE, 40..=64)),
        simple("anthropic key", "sk-ant-api03-", chars(URLSAFE, 40..=64)),
        prop::collection::vec(chars(B64, 64..=64), 2..4).prop_map(|lines| Secret {
            kind: "PEM private key",
            text: format!(
                "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
                lines.join("\n")
            ),
            cores: lines,
        }),
        (
            chars(URLSAFE, 12..=30),
            chars(URLSAFE, 12..=40),
            chars(URLSAFE, 20..=43)
        )
            .prop_map(|(a, b, c)| {
                let t = format!("eyJ{a}.eyJ{b}.{c}");
                Secret {
                    kind: "JWT",
                    text: t.clone(),
                    cores: vec![t],
                }
            }),
        password(8..=20).prop_map(|pw| Secret {
            kind: "URL credentials",
            text: format!("postgres://app:{pw}@db.internal:5432/shop"),
            cores: vec![pw],
        }),
        (
            prop::sample::select(vec![
                "DB_PASSWORD",
                "SECRET_KEY",
                "API_TOKEN",
                "STRIPE_SECRET",
                "MY_APP_API_KEY",
                "CLIENT_SECRET",
                "REDIS_PASSWORD",
            ]),
            password(12..=32)
        )
            .prop_map(|(name, v)| Secret {
                kind: ".env assignment",
                text: format!("{name}={v}"),
                cores: vec![v],
            }),
    ]
    .boxed()
}

/// Places a session log holds a secret in.
const PLACES: usize = 8;

/// The secret as a terminal shows it, wrapped at 20 columns, for the kinds whose format has
/// a prefix (`ghp_`, `AKIA`, …); `None` for the others.
fn wrapped(s: &Secret) -> Option<String> {
    let prefixed = [
        "aws key pair",
        "github token",
        "github fine-grained token",
        "gitlab token",
        "stripe key",
        "openai key",
        "anthropic key",
    ];
    if !prefixed.contains(&s.kind) {
        return None;
    }
    let token = &s.cores[0];
    let lines: Vec<&str> = token
        .as_bytes()
        .chunks(20)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    Some(s.text.replace(token.as_str(), &lines.join("\n")))
}

/// A Claude Code log with `s[i]` in place i: the task, a message, reasoning, a tool call's
/// input, its output, a JSON document inside the output, a `\u`-escaped copy, and a tool's
/// output that wraps the secret over lines (or shows it whole when its kind has no prefix).
fn session(s: &[Secret; PLACES]) -> String {
    let line = |v: Value| serde_json::to_string(&v).unwrap();
    let nested = serde_json::to_string(&json!({"config": {"env": s[5].text}})).unwrap();
    let mut lines = vec![
        line(
            json!({"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": format!("Fix the SSRF. Creds for staging: {}", s[0].text)}}),
        ),
        line(
            json!({"type": "assistant", "sessionId": "s", "uuid": "u2", "timestamp": "2026-01-01T00:00:01Z",
            "message": {"id": "m1", "model": "claude-x", "content": [
                {"type": "thinking", "thinking": format!("The config has {} in it.", s[2].text), "signature": "ErAEClkIDRgC"},
                {"type": "text", "text": format!("I will check the host. Using {}.", s[1].text)}]}}),
        ),
        line(
            json!({"type": "assistant", "sessionId": "s", "uuid": "u3", "timestamp": "2026-01-01T00:00:02Z",
            "message": {"id": "m1", "model": "claude-x", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": format!("export {}; pytest", s[3].text)}}]}}),
        ),
        line(
            json!({"type": "user", "sessionId": "s", "uuid": "u4", "timestamp": "2026-01-01T00:00:03Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                "content": format!("loaded {}\n{nested}", s[4].text)}]}}),
        ),
    ];
    // The escaped copy: every character of the secret as \uXXXX inside a message.
    let escaped: String = s[6]
        .text
        .chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect();
    lines.push(format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"s\",\"uuid\":\"u5\",\"timestamp\":\"2026-01-01T00:00:04Z\",\"message\":{{\"id\":\"m2\",\"model\":\"claude-x\",\"content\":[{{\"type\":\"text\",\"text\":\"Tests are green with {escaped}.\"}}]}}}}"
    ));
    let shown = wrapped(&s[7]).unwrap_or_else(|| s[7].text.clone());
    lines.push(line(
        json!({"type": "user", "sessionId": "s", "uuid": "u6", "timestamp": "2026-01-01T00:00:05Z",
        "message": {"role": "user", "content": format!("Terminal:\n{shown}\nDone.")}}),
    ));
    lines.join("\n") + "\n"
}

/// Every string a text holds: itself, and the strings of any JSON inside it, to any depth.
fn all_strings(text: &str, out: &mut Vec<String>) {
    out.push(text.to_string());
    let mut values: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        values.push(v);
    }
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => all_strings(s, out),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.iter().for_each(|(k, x)| {
                all_strings(k, out);
                walk(x, out)
            }),
            _ => {}
        }
    }
    for v in &values {
        walk(v, out);
    }
}

/// How many secrets each output channel was checked for, over all cases.
type Tally = BTreeMap<&'static str, usize>;

fn assert_clean(tally: &mut Tally, channel: &'static str, text: &str, secrets: &[Secret]) {
    let mut strings = Vec::new();
    all_strings(text, &mut strings);
    for s in secrets {
        for core in &s.cores {
            for t in &strings {
                assert!(
                    !t.contains(core.as_str()),
                    "{channel} still holds a {} ({core}):\n{}",
                    s.kind,
                    &t[..t.len().min(3000)]
                );
            }
        }
    }
    *tally.entry(channel).or_default() += secrets.len();
}

/// Every file under `dir`, as text.
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                out.push((p.display().to_string(), text));
            }
        }
    }
    out
}

/// A judge that keeps every prompt it is sent and scores nothing.
fn dump_judge(dir: &Path) -> String {
    let script = dir.join("judge.py");
    std::fs::write(
        &script,
        format!(
            "import re, sys, json\np = sys.stdin.read()\nopen({:?}, 'a').write(p + '\\n=====\\n')\nn = int(re.findall(r'Score turn (\\d+)', p)[-1])\nprint(json.dumps({{'turn': n, 'applicable': True, 'opportunity': True, 'kind': 'planning', 'scores': {{'tr': 0, 'di': 0, 'vr': 0, 'sa': 0}}, 'quotes': {{'tr': None, 'di': None, 'vr': None, 'sa': None}}}}))\n",
            dir.join("prompts.txt").display().to_string()
        ),
    )
    .unwrap();
    format!("command:python3 {}", script.display())
}

/// A judge that fails saying the secrets on its stderr, as a provider's error that echoes a
/// header or a config would.
fn failing_judge(dir: &Path, secrets: &[Secret]) -> String {
    let said = dir.join("said.txt");
    let text: Vec<&str> = secrets.iter().map(|s| s.text.as_str()).collect();
    std::fs::write(&said, text.join("\n")).unwrap();
    let script = dir.join("fail.sh");
    std::fs::write(
        &script,
        format!("cat > /dev/null\ncat '{}' >&2\nexit 1\n", said.display()),
    )
    .unwrap();
    format!("command:sh {}", script.display())
}

/// An OpenAI-compatible provider whose model quotes a secret it was never shown: the quote
/// is rejected, and kept only redacted.
struct Provider {
    quote: String,
}

impl wiremock::Respond for Provider {
    fn respond(&self, req: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let turn = crate::judge::asked_turn(user);
        wiremock::ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"role": "assistant", "content": crate::judge::answer(turn, &self.quote)}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}
        }))
    }
}

/// Runs one case through the real binary, every channel.
fn check_case(r: &Repo, demo: &Path, n: usize, secrets: &[Secret; PLACES], tally: &mut Tally) {
    let dir = r.home().join(format!("case{n}"));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("session.jsonl");
    std::fs::write(&log, session(secrets)).unwrap();
    let logs = log.to_str().unwrap();
    let ds = demo.to_str().unwrap();
    // the original log must still carry them, or the test proves nothing
    let original = std::fs::read_to_string(&log).unwrap();
    assert!(original.contains(&secrets[0].cores[0]));
    *tally.entry("(cut over lines)").or_default() += usize::from(wrapped(&secrets[7]).is_some());

    let rec = r
        .sage(&[
            "-C",
            ds,
            "record",
            "--agent",
            "claude-code",
            "--session",
            logs,
        ])
        .ok();
    let recorded = demo.join(rec.stdout.trim());
    let text = std::fs::read_to_string(&recorded).unwrap();
    assert_clean(tally, "record: the committed session", &text, secrets);
    std::fs::remove_file(&recorded).unwrap();

    let scores = dir.join("scores.json");
    let judge = dump_judge(&dir);
    let run = r
        .sage(&[
            "-C",
            ds,
            "judge",
            logs,
            "--judge",
            &judge,
            "--jobs",
            "1",
            "--format",
            "json",
            "--out",
            scores.to_str().unwrap(),
        ])
        .ok();
    assert_clean(tally, "judge: stdout", &run.stdout, secrets);
    let text = std::fs::read_to_string(&scores).unwrap();
    assert_clean(tally, "judge: --out scores", &text, secrets);
    let prompts = std::fs::read_to_string(dir.join("prompts.txt")).unwrap();
    assert!(prompts.contains("Score turn"), "the judge was called");
    assert_clean(tally, "judge: a command's prompts", &prompts, secrets);

    // A provider over HTTP: its requests, and what is kept of its answers (scores, cache).
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(wiremock::MockServer::start());
    rt.block_on(
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(Provider {
                quote: secrets[n % PLACES].text.clone(),
            })
            .mount(&server),
    );
    let cache = dir.join("cache");
    let http_scores = dir.join("http.json");
    let run = r.sage_env(
        demo,
        &[
            "judge",
            logs,
            "--judge",
            "openai:test-model",
            "--format",
            "json",
            "--out",
            http_scores.to_str().unwrap(),
        ],
        &[
            ("OPENAI_BASE_URL", &format!("{}/v1", server.uri())),
            ("OPENAI_API_KEY", "test-key"),
            ("XDG_CACHE_HOME", cache.to_str().unwrap()),
        ],
    );
    let requests = rt.block_on(server.received_requests()).unwrap_or_default();
    assert!(!requests.is_empty(), "the provider was asked: {run:?}");
    for q in &requests {
        let body = String::from_utf8_lossy(&q.body);
        assert_clean(tally, "judge: an HTTP provider's requests", &body, secrets);
    }
    let text = std::fs::read_to_string(&http_scores).unwrap_or_default();
    assert!(text.contains("rejected"), "the quote was rejected: {text}");
    assert_clean(tally, "judge: rejected quotes kept", &text, secrets);
    assert_clean(tally, "judge: stderr", &run.stderr, secrets);
    let cached = files_under(&cache);
    assert!(!cached.is_empty(), "answers were cached");
    for (_, text) in &cached {
        assert_clean(tally, "judge: the answer cache", text, secrets);
    }

    // A provider that refuses, saying the secrets back in its error.
    let refusing = rt.block_on(wiremock::MockServer::start());
    let said: Vec<&str> = secrets.iter().map(|s| s.text.as_str()).collect();
    rt.block_on(
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(wiremock::ResponseTemplate::new(401).set_body_json(
                json!({"error": {"message": format!("invalid key; request had {}", said.join(" "))}}),
            ))
            .mount(&refusing),
    );
    let refused = dir.join("refused.json");
    let run = r.sage_env(
        demo,
        &[
            "judge",
            logs,
            "--judge",
            "openai:test-model",
            "--format",
            "json",
            "--out",
            refused.to_str().unwrap(),
        ],
        &[
            ("OPENAI_BASE_URL", &format!("{}/v1", refusing.uri())),
            ("OPENAI_API_KEY", "test-key"),
            ("XDG_CACHE_HOME", dir.join("cache2").to_str().unwrap()),
        ],
    );
    assert_ne!(run.code, 0, "the provider refused");
    assert!(run.stderr.contains("401"), "{run:?}");
    assert_clean(tally, "judge: a provider's error", &run.stderr, secrets);
    let text = std::fs::read_to_string(&refused).unwrap_or_default();
    assert_clean(tally, "judge: a provider's error recorded", &text, secrets);

    // A judge that fails, saying secrets: each try waits longer, so two cases, which
    // together hold every kind.
    if !n.is_multiple_of(6) {
        return check_rest(r, demo, n, secrets, tally, &dir, logs);
    }
    let failed = dir.join("failed.json");
    let run = r.sage(&[
        "-C",
        ds,
        "judge",
        logs,
        "--judge",
        &failing_judge(&dir, secrets),
        "--turns",
        "1",
        "--format",
        "json",
        "--out",
        failed.to_str().unwrap(),
    ]);
    assert_ne!(run.code, 0, "the judge failed");
    assert_clean(
        tally,
        "judge: a failing judge's stderr",
        &run.stderr,
        secrets,
    );
    let text = std::fs::read_to_string(&failed).unwrap_or_default();
    assert_clean(
        tally,
        "judge: a failing judge's recorded error",
        &text,
        secrets,
    );

    check_rest(r, demo, n, secrets, tally, &dir, logs);
}

/// The channels after the judge's: the manual judge's files, reports, notes, Agent Trace
/// records and the guard.
fn check_rest(
    r: &Repo,
    demo: &Path,
    n: usize,
    secrets: &[Secret; PLACES],
    tally: &mut Tally,
    dir: &Path,
    logs: &str,
) {
    let ds = demo.to_str().unwrap();
    // The manual judge's files leave the machine too, pasted into a chat.
    let manual = dir.join("manual");
    r.sage(&[
        "-C",
        ds,
        "judge",
        logs,
        "--export",
        manual.to_str().unwrap(),
    ])
    .ok();
    let exported = files_under(&manual);
    assert!(exported.iter().any(|(_, t)| t.contains("Score turn")));
    for (_, text) in &exported {
        assert_clean(tally, "judge: the manual judge's files", text, secrets);
    }

    // Every report format, origin notes and Agent Trace records, written by one run.
    let trace = demo.join(".agent-trace/git-sage.jsonl");
    let _ = std::fs::remove_file(&trace);
    let formats = [
        ("json", "report: JSON"),
        ("md", "report: Markdown"),
        ("html", "report: HTML"),
        ("sarif", "report: SARIF"),
        ("txt", "report: text"),
    ];
    let reports: Vec<String> = formats
        .iter()
        .map(|(ext, _)| dir.join(format!("report.{ext}")).display().to_string())
        .collect();
    let mut args = vec!["-q", "--session", logs, "--notes", "--agent-trace"];
    for p in &reports {
        args.extend(["--out", p.as_str()]);
    }
    let run = r.blame_demo(demo, &args).ok();
    assert_clean(
        tally,
        "report: stdout and stderr",
        &(run.stdout + &run.stderr),
        secrets,
    );
    for ((_, channel), p) in formats.iter().zip(&reports) {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(text.len() > 200, "{p} was written");
        assert_clean(tally, channel, &text, secrets);
    }
    let notes = r.git(&["-C", ds, "log", "-p", "refs/notes/sage"]);
    assert!(notes.contains("sage"), "notes were written");
    assert_clean(tally, "notes: refs/notes/sage", &notes, secrets);
    let text = std::fs::read_to_string(&trace).unwrap();
    assert_clean(tally, "Agent Trace records", &text, secrets);

    // The guard's log: a write whose session id, file path and content carry the secrets.
    let guard_log = demo.join(".sage/guard.log");
    let _ = std::fs::remove_file(&guard_log);
    let call = json!({"session_id": secrets[n % PLACES].text, "transcript_path": logs,
        "cwd": demo, "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_use_id": "toolu_1",
        "tool_input": {"file_path": format!("{}/media/{}.py", demo.display(), secrets[(n + 1) % PLACES].text),
            "content": secrets[(n + 2) % PLACES].text}});
    let cmd = r.sage_command(demo, &["guard", "check", "--agent", "claude-code"]);
    let out = crate::common::feed(cmd, call.to_string().as_bytes());
    let text = std::fs::read_to_string(&guard_log).unwrap_or_default();
    assert!(!text.is_empty(), "the guard logged: {out:?}");
    assert_clean(tally, "guard: .sage/guard.log", &text, secrets);
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_clean(tally, "guard: its answer", &said, secrets);
}

#[test]
fn no_generated_secret_survives_any_output_channel() {
    let r = Repo::new();
    let demo = r.demo();
    let mut runner = TestRunner::new(Config::with_cases(1));
    // Every kind in every place: case j puts kind (j + p) mod 12 in place p, with values drawn
    // afresh for each case.
    let draws: Vec<Vec<Secret>> = (0..PLACES).map(|_| secret_per_kind(&mut runner)).collect();
    let kinds = draws[0].len();
    let mut tally = Tally::new();
    for j in 0..kinds {
        let case: [Secret; PLACES] = std::array::from_fn(|p| draws[p][(j + p) % kinds].clone());
        check_case(&r, &demo, j, &case, &mut tally);
    }
    // The counts docs/reliability.md gives: secrets checked per channel.
    eprintln!("secrets checked per output channel ({kinds} cases of {PLACES} secrets):");
    for (channel, n) in &tally {
        eprintln!("  {n:>4}  {channel}");
    }
}

/// One secret of each kind.
fn secret_per_kind(runner: &mut TestRunner) -> Vec<Secret> {
    let mut by_kind: std::collections::BTreeMap<&str, Secret> = Default::default();
    let strategy = secret();
    for _ in 0..2000 {
        let s = strategy.new_tree(runner).unwrap().current();
        by_kind.entry(s.kind).or_insert(s);
        if by_kind.len() == 12 {
            break;
        }
    }
    assert_eq!(by_kind.len(), 12, "{:?}", by_kind.keys());
    by_kind.into_values().collect()
}

/// Issue 43 (1): a secret right after `\n` in a tool's arguments (a `Write`'s content, an
/// `Edit`'s new_string) reached the prompt, since the arguments were redacted after JSON
/// encoding; a judge's quote of it was then kept in the scores; a low-entropy assignment to a
/// password survived. The judge here quotes the secret back on purpose.
#[test]
fn a_secret_after_an_escape_in_tool_arguments_and_a_plain_password_never_leave() {
    let r = Repo::new();
    let demo = r.demo();
    let dir = r.home().join("esc");
    std::fs::create_dir_all(&dir).unwrap();
    let aws = "AKIAQWERTYUIOPASDFGH";
    let gh = "ghp_Zq8Xw2Ve4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Mn2";
    let plain = "hunter2";
    let line = |v: Value| serde_json::to_string(&v).unwrap();
    let log = [
        line(json!({"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "Fix the SSRF in the fetcher."}})),
        line(json!({"type": "assistant", "sessionId": "s", "uuid": "u2", "timestamp": "2026-01-01T00:00:01Z",
            "message": {"id": "m1", "model": "claude-x", "content": [
                {"type": "text", "text": format!("Setting SIMPLE_PASSWORD={plain} for the test.")},
                {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/p/conf.py", "content": format!("K='x'\n{aws}\n")}},
                {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "/p/conf.py", "old_string": "x", "new_string": format!("y\n{gh}")}}]}})),
    ]
    .join("\n")
        + "\n";
    let logf = dir.join("s.jsonl");
    std::fs::write(&logf, log).unwrap();
    let script = dir.join("judge.py");
    std::fs::write(
        &script,
        format!(
            "import re, sys, json\np = sys.stdin.read()\nopen({:?}, 'a').write(p)\nn = int(re.findall(r'Score turn (\\d+)', p)[-1])\nprint(json.dumps({{'turn': n, 'applicable': True, 'opportunity': True, 'kind': 'implementation', 'scores': {{'tr': 2, 'di': 2, 'vr': 0, 'sa': 1}}, 'quotes': {{'tr': {aws:?}, 'di': {gh:?}, 'vr': None, 'sa': 'SIMPLE_PASSWORD={plain}'}}}}))\n",
            dir.join("prompts.txt").display().to_string()
        ),
    )
    .unwrap();
    let scores = dir.join("scores.json");
    let run = r
        .sage(&[
            "-C",
            demo.to_str().unwrap(),
            "judge",
            logf.to_str().unwrap(),
            "--judge",
            &format!("command:python3 {}", script.display()),
            "--format",
            "json",
            "--out",
            scores.to_str().unwrap(),
        ])
        .ok();
    let prompts = std::fs::read_to_string(dir.join("prompts.txt")).unwrap();
    assert!(prompts.contains("Score turn"), "the judge was called");
    let stored = std::fs::read_to_string(&scores).unwrap();
    for (what, text) in [
        ("prompt", &prompts),
        ("scores", &stored),
        ("stdout", &run.stdout),
    ] {
        for s in [aws, gh, "SIMPLE_PASSWORD=hunter2"] {
            assert!(!text.contains(s), "{s} in the {what}");
        }
        // Encoded as JSON too: `\nAKIA…`.
        assert!(!text.contains(&format!("\\n{aws}")), "{what}");
    }
    assert!(prompts.contains("[REDACTED:aws-access-key]"), "{prompts}");
    assert!(prompts.contains("[REDACTED:github-token]"), "{prompts}");
}

/// Issue 43 (2): a `command:` judge's stderr reached our stderr and `turns[].error` as it was.
#[test]
fn a_command_judges_stderr_is_redacted_wherever_it_is_shown() {
    let r = Repo::new();
    let demo = r.demo();
    let dir = r.home().join("stderr");
    std::fs::create_dir_all(&dir).unwrap();
    let key = "ghp_Zq8Xw2Ve4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Mn2";
    let script = dir.join("judge.sh");
    std::fs::write(
        &script,
        format!("cat > /dev/null\necho 'Authorization failed for token {key}' >&2\nexit 1\n"),
    )
    .unwrap();
    let scores = dir.join("scores.json");
    let run = r.sage(&[
        "-C",
        demo.to_str().unwrap(),
        "judge",
        ".sage/sessions/fix-ssrf.yaml",
        "--judge",
        &format!("command:sh {}", script.display()),
        "--turns",
        "1",
        "--format",
        "json",
        "--out",
        scores.to_str().unwrap(),
    ]);
    assert_ne!(run.code, 0, "the judge failed: {run:?}");
    let stored = std::fs::read_to_string(&scores).unwrap_or_default();
    for (what, text) in [
        ("stderr", &run.stderr),
        ("stdout", &run.stdout),
        ("scores", &stored),
    ] {
        assert!(!text.contains(key), "the key in {what}: {text}");
    }
    assert!(
        format!("{}{stored}", run.stderr).contains("[REDACTED:github-token]"),
        "the message is still shown: {}",
        run.stderr
    );
}
