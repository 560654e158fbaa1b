//! `git sage turns`: output, bad input, and conformance over real third-party transcripts.

use crate::common::{Repo, real_fixtures};

const CLAUDE_LINE: &str = "{\"type\":\"assistant\",\"sessionId\":\"s\",\"uuid\":\"u\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\",\"text\":\"I will check the scheme.\"}]}}";

fn write(r: &Repo, name: &str, bytes: &[u8]) -> String {
    let p = r.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn json_and_text_and_rev_path() {
    let r = Repo::new();
    let f = write(&r, "s.jsonl", format!("{CLAUDE_LINE}\n").as_bytes());
    let v = r.sage(&["turns", &f, "--format", "json"]).ok().json();
    assert_eq!(v["schema"], "sage.turns/1");
    assert_eq!(v["format"], "claude-code");
    let t = &v["turns"][0];
    for key in [
        "turn",
        "agent",
        "kind",
        "text",
        "reasoning_available",
        "tool_calls",
        "file_changes",
        "source",
    ] {
        assert!(t.get(key).is_some(), "turn lacks {key}: {t}");
    }
    assert_eq!(t["source"]["line"], 1);
    let text = r.sage(&["turns", &f]).ok().stdout;
    assert!(
        text.contains("   1 planning        I will check the scheme."),
        "{text}"
    );
    // REV:path reads the committed file
    r.git(&["add", "s.jsonl"]);
    r.commit("session");
    let v = r
        .sage(&["turns", "HEAD:s.jsonl", "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["turns"].as_array().unwrap().len(), 1);
    r.sage(&["turns", "HEAD:nope.jsonl"])
        .bad_input("nope.jsonl does not exist at HEAD");
}

#[test]
fn damaged_files_keep_what_they_can() {
    let r = Repo::new();
    // truncated last line, invalid UTF-8, unknown record types
    let mut bytes =
        format!("{CLAUDE_LINE}\n{{\"type\":\"mystery\",\"sessionId\":\"s\"}}\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"assistant\",\"sessionId\":\"s\",\"message\":{\"id\":\"m2\",\"content\":[{\"type\":\"text\",\"text\":\"caf\xe9 ok\"}]}}\n");
    bytes.extend_from_slice(&CLAUDE_LINE.as_bytes()[..60]);
    let f = write(&r, "d.jsonl", &bytes);
    let v = r.sage(&["turns", &f, "--format", "json"]).ok().json();
    assert_eq!(v["turns"].as_array().unwrap().len(), 2);
    assert_eq!(v["turns"][1]["text"], "caf\u{fffd} ok");
    assert_eq!(v["skipped"][0]["line"], 4);
    assert_eq!(v["skipped_records"]["mystery"], 1);
    // the text view says what was skipped, with line numbers
    let text = r.sage(&["turns", &f]).ok().stdout;
    assert!(
        text.contains("skipped 1 line(s): line 4: truncated JSON line"),
        "{text}"
    );
}

#[test]
fn a_50mb_single_line_is_read() {
    let r = Repo::new();
    let big = "x".repeat(50 << 20);
    let line = format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"s\",\"message\":{{\"id\":\"m\",\"content\":[{{\"type\":\"text\",\"text\":\"{big}\"}}]}}}}\n"
    );
    let f = write(&r, "big.jsonl", line.as_bytes());
    let out = r.sage(&["turns", &f]).ok().stdout;
    assert!(out.contains("1 turns"), "{}", &out[..200.min(out.len())]);
}

#[test]
fn nothing_usable_is_bad_input_naming_the_file() {
    let r = Repo::new();
    let f = write(&r, "empty.jsonl", b"");
    r.sage(&["turns", &f])
        .bad_input("empty.jsonl: not a transcript format");
    let f = write(
        &r,
        "junk.jsonl",
        b"{\"type\":\"progress\",\"sessionId\":\"s\"}\n{broken\n",
    );
    r.sage(&["turns", &f]).bad_input("junk.jsonl: no agent turns found in this claude-code transcript (1 line skipped; first problem at line 2");
    let f = write(&r, "notes.md", b"# Meeting notes\n\nnothing here\n");
    r.sage(&["turns", &f])
        .bad_input("notes.md: not a transcript format");
    // a file of another format, forced
    let f = write(&r, "c.jsonl", format!("{CLAUDE_LINE}\n").as_bytes());
    r.sage(&["turns", &f, "--from", "openhands"])
        .bad_input("c.jsonl");
    r.sage(&["turns", "/no/such/file"])
        .bad_input("cannot read session /no/such/file");
}

/// (folder, file, turns, tool calls, file changes) for each real transcript.
const EXPECT: &[(&str, &str, usize, usize, usize)] = &[
    ("claude-code", "external-agents-2444cdc4a359.jsonl", 3, 2, 1),
    (
        "claude-code",
        "external-agents-be84e84641f3-0.jsonl",
        7,
        6,
        0,
    ),
    (
        "claude-code",
        "external-agents-be84e84641f3-1.jsonl",
        4,
        4,
        1,
    ),
    ("codex", "external-agents-fc9a115d0155.jsonl", 34, 61, 9),
    ("codex", "external-agents-96791b232a45.jsonl", 36, 71, 11),
];

#[test]
fn every_real_transcript_parses() {
    let Some(root) = real_fixtures("") else {
        return;
    };
    let r = Repo::new();
    let mut table = String::from("format          turns  calls  changes  reasoning  file\n");
    let mut files = 0;
    for dir in [
        "claude-code",
        "codex",
        "gemini-cli",
        "aider",
        "openhands",
        "swe-agent",
        "mini-swe-agent",
        "specstory",
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for p in paths {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let run = r.sage(&["turns", p.to_str().unwrap(), "--format", "json"]);
            if name == "2025-05-21_improve-mcp-error-handling.md" {
                // SOURCES.md: a hand-written summary, not an export: rejected, clearly.
                assert_eq!(run.code, 2, "{run:?}");
                assert!(
                    run.stderr.contains("hand-written summary"),
                    "{}",
                    run.stderr
                );
                table.push_str(&format!(
                    "{:<15} rejected (not an export)            {name}\n",
                    "specstory"
                ));
                continue;
            }
            files += 1;
            let v = run.ok().json();
            let turns = v["turns"].as_array().unwrap();
            let calls: usize = turns
                .iter()
                .map(|t| t["tool_calls"].as_array().unwrap().len())
                .sum();
            let changes: usize = turns
                .iter()
                .map(|t| t["file_changes"].as_array().unwrap().len())
                .sum();
            let reasoning = turns
                .iter()
                .filter(|t| t["reasoning_available"] == true)
                .count();
            assert!(!turns.is_empty(), "{name}");
            assert_eq!(
                v["format"],
                if dir == "specstory" { "specstory" } else { dir },
                "{name}"
            );
            if let Some((_, _, et, ec, ef)) =
                EXPECT.iter().find(|(d, f, ..)| *d == dir && *f == name)
            {
                assert_eq!((turns.len(), calls, changes), (*et, *ec, *ef), "{name}");
            }
            table.push_str(&format!(
                "{:<15} {:>5}  {:>5}  {:>7}  {:>9}  {name}\n",
                v["format"].as_str().unwrap(),
                turns.len(),
                calls,
                changes,
                reasoning
            ));
        }
    }
    eprintln!("{table}");
    assert!(files >= 20, "only {files} transcripts found");
}
