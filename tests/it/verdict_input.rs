//! The verdict on awkward sessions, through the real binary: Russian and Chinese turns,
//! turns that are only code, a 1 MB turn, 2,000 turns, a session with no edits. Every turn
//! gets a kind and scores, the verdict says undetermined with its reason where it must, and
//! nothing crashes or takes long.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Repo;

/// A `sage.session/1` JSONL log: a header with the task, then one record per turn.
fn session(r: &Repo, name: &str, task: &str, turns: &[Value]) -> String {
    let mut out = json!({"schema": "sage.session/1", "task": task}).to_string();
    for t in turns {
        out.push('\n');
        out.push_str(&t.to_string());
    }
    out.push('\n');
    let p = r.home().join(name);
    std::fs::write(&p, out).unwrap();
    p.to_str().unwrap().to_string()
}

/// Every turn of a scores or report document has a kind and scores, and the turns run 1..=n.
fn every_turn_judged(v: &Value, n: usize) {
    let turns = v["turns"].as_array().unwrap();
    assert_eq!(turns.len(), n);
    for (i, t) in turns.iter().enumerate() {
        assert_eq!(t["turn"], i as u64 + 1);
        assert!(t["kind"].is_string(), "{t}");
        for d in ["tr", "di", "vr", "sa"] {
            assert!(t["scores"][d].is_u64(), "turn {}: {t}", i + 1);
        }
    }
}

#[test]
fn long_large_foreign_and_code_only_sessions_are_all_judged_in_time() {
    let r = Repo::new();
    let code = "```python\ndef download_preview(url):\n    return urlopen(url).read()\n```";
    let big = "The downloader fetches the URL the seller gives. ".repeat(22_000);
    let mut turns = Vec::new();
    for i in 0..2_000 {
        turns.push(match i % 8 {
            0 => json!({"text": "Проверим, что хост не внутренний: запретим приватные адреса."}),
            1 => json!({"text": "计划：解析主机并拒绝私有地址。"}),
            2 => json!({"text": code}),
            3 => json!({"text": "", "tool_calls": [{"name": "Bash", "arguments": {"command": "pytest -q"}, "result": "1 passed"}]}),
            4 => json!({"text": "Reading the fetcher.", "tool_calls": [{"name": "Read", "arguments": {"file_path": "media/fetcher.py"}}]}),
            5 => json!({"text": "Updating the check.", "file_changes": [{"path": "media/fetcher.py", "old": "", "new": format!("# {i}\n")}]}),
            6 => json!({"text": "", "tool_calls": [{"name": "TodoWrite", "arguments": {"todos": []}}]}),
            _ => json!({"text": "Looks good to me."}),
        });
    }
    turns[1_000] = json!({"text": big});
    assert!(turns[1_000]["text"].as_str().unwrap().len() > 1 << 20);
    let f = session(
        &r,
        "long.jsonl",
        "Fix the SSRF in the preview downloader.",
        &turns,
    );
    let started = Instant::now();
    let v = r
        .sage(&[
            "judge",
            &f,
            "--cwe",
            "918",
            "--anchor-file",
            "media/fetcher.py",
            "--format",
            "json",
            "-q",
        ])
        .ok()
        .json();
    // A debug build on a shared machine: this guards against a blow-up, bench/offline_judge.sh
    // holds the real bound (0.2 s per 1,000 turns, release build).
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    every_turn_judged(&v, 2_000);
    let kinds: std::collections::BTreeSet<&str> = v["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.len() >= 4, "{kinds:?}");
}

#[test]
fn the_verdict_is_undetermined_with_its_reason_where_it_must_be() {
    let r = Repo::new();
    let d = r.demo();
    // No edits and nothing but bookkeeping: no turn is applicable, no candidate.
    let idle = session(
        &r,
        "idle.jsonl",
        "Fix the SSRF in the preview downloader.",
        &[
            json!({"text": "", "tool_calls": [{"name": "TodoWrite", "arguments": {"todos": []}}]}),
            json!({"text": "", "tool_calls": [{"name": "Bash", "arguments": {"command": "git status"}}]}),
        ],
    );
    let v = r
        .blame_demo(&d, &["--session", &idle, "--format", "json"])
        .ok()
        .json();
    every_turn_judged(&v, 2);
    assert_eq!(v["origin"]["status"], "undetermined", "{}", v["origin"]);
    assert_eq!(v["origin"]["reason"], "no_candidate");
    assert!(
        v["origin"]["detail"]
            .as_str()
            .unwrap()
            .contains("no turn up to")
    );
    // Turns in Russian and Chinese that only plan, and a turn of code alone: judged, with a
    // verdict (or its reason), no crash.
    let foreign = session(
        &r,
        "foreign.jsonl",
        "Исправь SSRF в загрузке превью",
        &[
            json!({"text": "Проверим схему https перед загрузкой."}),
            json!({"text": "计划：下载前检查协议。"}),
            json!({"text": "```python\nif not url.startswith('https://'):\n    raise ValueError(url)\n```"}),
        ],
    );
    let v = r
        .blame_demo(&d, &["--session", &foreign, "--format", "json"])
        .ok()
        .json();
    every_turn_judged(&v, 3);
    let o = &v["origin"];
    assert!(o["status"] == "localized" || o["reason"].is_string(), "{o}");
}
