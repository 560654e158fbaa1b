//! Other tools' records through the binary (docs/dialects.md): a git-ai note that says the
//! anchored lines are the agent's makes a person's squash commit the agent's write, a whogitit
//! note that says a person edited them makes an agent's commit not the agent's, and an
//! unreadable note is skipped and said. Notes a squash left on the commits it replaced are
//! matched to the squash by content: all the anchored lines decide, half of them do not. They
//! are not carried to lines the write did not change, from a note on later work built on the
//! write, or over the write's own whogitit note saying the lines were there before its session.

use crate::common::{AGENT, HUMAN, Repo};

const FETCHER: &str = "import urllib.request\n\n\ndef download(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return urllib.request.urlopen(url).read()\n";

fn repo() -> (Repo, String) {
    let r = Repo::new();
    r.write(
        "media/fetcher.py",
        "import urllib.request\n\n\ndef download(url):\n    return urllib.request.urlopen(url).read()\n",
    );
    r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    let f = r.finding(
        "ssrf.yaml",
        "id: ssrf\ncwe: 918\nfile: media/fetcher.py\nfragments:\n  - 'if not url.startswith(\"https://\"):'\n",
    );
    (r, f)
}

fn prov(r: &Repo, f: &str) -> serde_json::Value {
    r.sage(&[
        "provenance",
        "--finding",
        f,
        "--agent",
        "Claude Agent",
        "--format",
        "json",
    ])
    .ok()
    .json()
}

#[test]
fn a_git_ai_note_makes_a_squash_of_the_agents_lines_the_agents_write() {
    let (r, f) = repo();
    r.write("media/fetcher.py", FETCHER);
    // Committed by a person (a squash of the agent's work): without other evidence, someone
    // else introduced it.
    let c = r.commit_as(HUMAN, "Squash: SSRF fix");
    let v = prov(&r, &f);
    assert_eq!(v["provenance"]["status"], "introduced_by_other", "{v}");
    assert!(v["provenance"].get("evidence").is_none());
    let note = "media/fetcher.py\n  s_c9883b05a2487d::t_9f8e7d6c5b4a32 5-6\n---\n{\"schema_version\":\"authorship/3.0.0\",\"git_ai_version\":\"1.4.5\",\"base_commit_sha\":\"0000000000000000000000000000000000000000\",\"prompts\":{},\"sessions\":{\"s_c9883b05a2487d\":{\"agent_id\":{\"tool\":\"claude\",\"id\":\"6ef2299e-1111-2222-3333-444455556666\",\"model\":\"claude-sonnet-4-5\"}}}}\n";
    r.git(&["notes", "--ref=ai", "add", "-m", note, &c]);
    let v = prov(&r, &f);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced", "{v}");
    let d = &p["evidence"]["decisions"][0];
    assert_eq!(
        (
            d["write"].as_u64(),
            d["agent"].as_bool(),
            d["changed"].as_bool()
        ),
        (Some(1), Some(true), Some(true)),
        "{d}"
    );
    let claim = &p["evidence"]["claims"][0];
    assert_eq!(claim["dialect"], "git-ai");
    assert_eq!(claim["author"], "agent");
    assert_eq!(claim["session"], "6ef2299e-1111-2222-3333-444455556666");
    assert_eq!(claim["lines"][0]["start"], 5);
    // The blame-origin report says what decided it.
    let text = r
        .sage(&["blame-origin", "--finding", &f, "--agent", "Claude Agent"])
        .ok()
        .stdout;
    assert!(
        text.contains("EVIDENCE    write 1: the anchored lines are the agent's (git-ai note on"),
        "{text}"
    );
    assert!(
        text.contains("(the commit's authorship said otherwise)"),
        "{text}"
    );
    // git sage never wrote the other tool's ref: it holds the one note added above.
    assert_eq!(r.git(&["notes", "--ref=ai", "list"]).lines().count(), 1);
}

#[test]
fn a_person_editing_the_agents_lines_is_not_the_agents_write_and_bad_notes_are_skipped() {
    let (r, f) = repo();
    r.write("media/fetcher.py", FETCHER);
    let c = r.commit_as(AGENT, "fix SSRF");
    assert_eq!(prov(&r, &f)["provenance"]["status"], "introduced");
    let note = serde_json::json!({
        "version": 3,
        "session": {"session_id": "sess-1", "model": {"id": "claude-x", "provider": "anthropic"},
            "started_at": "2026-01-01T00:00:00Z", "prompt_count": 1},
        "prompts": [{"index": 0, "text": "[prompt]", "timestamp": "2026-01-01T00:00:00Z", "affected_files": ["media/fetcher.py"]}],
        "files": [{"path": "media/fetcher.py", "summary": {"total_lines": 7, "ai_lines": 0, "ai_modified_lines": 1, "human_lines": 0, "original_lines": 6, "unknown_lines": 0},
            "lines": (1..=7).map(|n| serde_json::json!({
                "line_number": n,
                "content": FETCHER.lines().nth(n - 1).unwrap(),
                "source": if n == 5 { serde_json::json!({"type": "AIModified", "edit_id": "e1", "similarity": 0.8}) } else { serde_json::json!({"type": "Original"}) },
                "edit_id": if n == 5 { serde_json::json!("e1") } else { serde_json::Value::Null },
                "prompt_index": 0, "confidence": 1.0
            })).collect::<Vec<_>>()}]
    });
    r.git(&[
        "notes",
        "--ref=whogitit",
        "add",
        "-m",
        &note.to_string(),
        &c,
    ]);
    r.git(&["notes", "--ref=agentblame", "add", "-m", "{not json", &c]);
    let v = prov(&r, &f);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced_by_other", "{v}");
    assert_eq!(p["evidence"]["decisions"][0]["agent"], false);
    assert_eq!(p["evidence"]["claims"][0]["author"], "agent_modified");
    let skipped = p["evidence"]["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["dialect"] == "agentblame"),
        "{skipped:?}"
    );
    // The prompt's text is never copied.
    assert!(!v.to_string().contains("[prompt]"));
}

/// The anchored lines the agent wrote, before and after the squash.
const CHECKED: &str = "import urllib.request\n\n\ndef download(url):\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return urllib.request.urlopen(url).read()\n";
const DOCUMENTED: &str = "import urllib.request\n\n\ndef download(url):\n    \"\"\"Fetch over TLS only.\"\"\"\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n    return urllib.request.urlopen(url).read()\n";

/// The agent's session: one edit that makes the squashed file.
const SESSION: &str = r#"schema: sage.session/1
task: fetch over TLS only
turns:
  - text: "Plan: check the scheme."
  - text: Checking the scheme.
    file_changes:
      - path: media/fetcher.py
        old: "def download(url):\n"
        new: "def download(url):\n    \"\"\"Fetch over TLS only.\"\"\"\n    if not url.startswith(\"https://\"):\n        raise ValueError(url)\n"
"#;

/// A git-ai note saying the agent wrote `lines` of media/fetcher.py.
fn git_ai_note(lines: &str) -> String {
    format!(
        "media/fetcher.py\n  s_c9883b05a2487d::t_9f8e7d6c5b4a32 {lines}\n---\n{{\"schema_version\":\"authorship/3.0.0\",\"git_ai_version\":\"1.4.5\",\"base_commit_sha\":\"0000000000000000000000000000000000000000\",\"prompts\":{{}},\"sessions\":{{\"s_c9883b05a2487d\":{{\"agent_id\":{{\"tool\":\"claude\",\"id\":\"sess-squashed\",\"model\":\"claude-sonnet-4-5\"}}}}}}}}\n"
    )
}

/// The agent's two commits on a branch, each with a git-ai note on the anchored lines, then
/// squashed by a person into one commit holding `squashed`: the notes stay on the two commits,
/// which the branch no longer has. The finding anchors two lines: the check and the raise.
fn squashed(squashed: &str, second_note: &str) -> (Repo, String) {
    let r = Repo::new();
    r.write(
        "media/fetcher.py",
        "import urllib.request\n\n\ndef download(url):\n    return urllib.request.urlopen(url).read()\n",
    );
    let base = r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("media/fetcher.py", CHECKED);
    let first = r.commit_as(AGENT, "check the scheme");
    r.git(&[
        "notes",
        "--ref=ai",
        "add",
        "-m",
        &git_ai_note("5-6"),
        &first,
    ]);
    r.write("media/fetcher.py", DOCUMENTED);
    let second = r.commit_as(AGENT, "document it");
    r.git(&["notes", "--ref=ai", "add", "-m", second_note, &second]);
    r.git(&["reset", "-q", "--soft", &base]);
    r.write("media/fetcher.py", squashed);
    r.git(&["add", "media/fetcher.py"]);
    r.commit_as(HUMAN, "Squash: TLS only");
    let f = r.finding(
        "ssrf.yaml",
        "id: ssrf\ncwe: 918\nfile: media/fetcher.py\nfragments:\n  - 'startswith(\"https://\")'\n  - 'raise ValueError('\n",
    );
    (r, f)
}

#[test]
fn notes_left_behind_by_a_squash_make_the_squash_the_agents_write_by_content() {
    let (r, f) = squashed(DOCUMENTED, &git_ai_note("6-7"));
    let v = prov(&r, &f);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced", "{v}");
    let d = &p["evidence"]["decisions"][0];
    assert_eq!(
        (d["write"].as_u64(), d["agent"].as_bool()),
        (Some(1), Some(true)),
        "{d}"
    );
    let why = d["why"].as_str().unwrap();
    assert!(
        why.starts_with("matched by content to notes left on rewritten commits, high confidence: the anchored lines are the agent's"),
        "{why}"
    );
    let claims = p["evidence"]["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{claims:?}");
    let c = &claims[0];
    assert_eq!(
        c["matched"],
        serde_json::json!({"by": "content", "of": 2, "matched": 2, "confidence": "high"})
    );
    assert_eq!(c["session"], "sess-squashed");
    assert_eq!(c["lines"], serde_json::json!([{"start": 6, "end": 7}]));
    let source = c["source"].as_str().unwrap();
    assert!(
        source.contains("(not in the branch: rewritten by a squash or rebase?)"),
        "{source}"
    );
    assert!(
        source.ends_with("matched by content: 2 of 2 anchored lines"),
        "{source}"
    );
    // The session, committed after, made the same lines: the decision says so.
    r.write(".sage/sessions/fix.yaml", SESSION);
    r.commit_as(HUMAN, "the agent's session");
    let v = prov(&r, &f);
    let d = &v["provenance"]["evidence"]["decisions"][0];
    assert!(
        d["why"]
            .as_str()
            .unwrap()
            .ends_with("; the session's edits match too: turn 2 made the write (mapped by replay)"),
        "{d}"
    );
    let p = &v["provenance"];
    // The count of notes outside the range says the two were read for it.
    let skipped = p["evidence"]["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["why"]
            .as_str()
            .unwrap()
            .starts_with("2 notes on commits outside the range; 2 notes on commits the branch no longer has (rewritten by a squash or rebase?)")),
        "{skipped:?}"
    );
}

#[test]
fn a_person_rewriting_the_lines_in_the_squash_keeps_it_theirs_and_a_bad_note_left_behind_is_skipped()
 {
    let rewritten = DOCUMENTED
        .replace("if not url.startswith", "if not url.lower().startswith")
        .replace("ValueError(url)", "ValueError(\"refusing \" + url)");
    let (r, f) = squashed(&rewritten, "{not a git-ai note");
    let v = prov(&r, &f);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced_by_other", "{v}");
    assert!(
        p["evidence"]["decisions"]
            .as_array()
            .is_none_or(|d| d.is_empty()),
        "{v}"
    );
    let skipped = p["evidence"]["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["at"]
            .as_str()
            .unwrap()
            .contains("(not in the branch: rewritten by a squash or rebase?)")
            && s["why"].as_str().unwrap().starts_with("not a git-ai note")),
        "{skipped:?}"
    );
}

#[test]
fn a_squash_that_kept_half_the_agents_lines_is_shown_but_does_not_decide() {
    let half = DOCUMENTED.replace("ValueError(url)", "ValueError(\"refusing \" + url)");
    let (r, f) = squashed(&half, &git_ai_note("6-7"));
    let v = prov(&r, &f);
    let p = &v["provenance"];
    assert_eq!(p["status"], "introduced_by_other", "{v}");
    let d = &p["evidence"]["decisions"][0];
    assert_eq!(d["agent"], serde_json::Value::Null, "{d}");
    assert!(
        d["why"]
            .as_str()
            .unwrap()
            .contains("medium confidence, too weak to decide"),
        "{d}"
    );
    assert_eq!(
        p["evidence"]["claims"][0]["matched"]["confidence"],
        "medium"
    );
}

fn prov_range(r: &Repo, f: &str, base: &str, tip: &str) -> serde_json::Value {
    r.sage(&[
        "provenance",
        "--finding",
        f,
        "--base",
        base,
        tip,
        "--agent",
        "Claude Agent",
        "--format",
        "json",
    ])
    .ok()
    .json()
}

/// The claims on `commit` carried over by content.
fn carried_to<'v>(p: &'v serde_json::Value, commit: &str) -> Vec<&'v serde_json::Value> {
    p["evidence"]["claims"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| c["commit"] == commit && c.get("matched").is_some())
                .collect()
        })
        .unwrap_or_default()
}

const TWO_LINES: &str = "id: ssrf\ncwe: 918\nfile: media/fetcher.py\nfragments:\n  - 'startswith(\"https://\")'\n  - 'raise ValueError('\n";

const UNCHECKED: &str = "import urllib.request\n\n\ndef download(url):\n    return urllib.request.urlopen(url).read()\n";

#[test]
fn a_note_on_later_work_built_on_the_tip_is_no_rewrite_and_is_not_carried() {
    let r = Repo::new();
    r.write("media/fetcher.py", UNCHECKED);
    r.commit_as(HUMAN, "base");
    r.write("media/fetcher.py", CHECKED);
    let c = r.commit_as(HUMAN, "check the scheme");
    // The agent's later commit on the same branch keeps the lines and has a note on them:
    // the range ending at `c` does not reach it, but it is built on `c`, not a rewrite of it.
    r.write("media/fetcher.py", DOCUMENTED);
    let d = r.commit_as(AGENT, "document it");
    r.git(&["notes", "--ref=ai", "add", "-m", &git_ai_note("6-7"), &d]);
    let f = r.finding("ssrf.yaml", TWO_LINES);
    let v = prov_range(&r, &f, &format!("{c}^"), &c);
    let p = &v["provenance"];
    assert!(carried_to(p, &c).is_empty(), "{v}");
    assert!(
        p["evidence"]["decisions"]
            .as_array()
            .is_none_or(|d| d.is_empty()),
        "{v}"
    );
    let skipped = p["evidence"]["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["why"].as_str().unwrap().contains(
            "1 note on a commit built on the tip (later work, not a rewrite of it), not read"
        )),
        "{skipped:?}"
    );
}

/// The agent's commit with a git-ai note on the anchored lines, squashed by a person into
/// `squash`; then a person's commit `later` that changes the file but not those lines.
fn squash_then_edit() -> (Repo, String, String, String) {
    let r = Repo::new();
    r.write("media/fetcher.py", UNCHECKED);
    let base = r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("media/fetcher.py", CHECKED);
    let x = r.commit_as(AGENT, "check the scheme");
    r.git(&["notes", "--ref=ai", "add", "-m", &git_ai_note("5-6"), &x]);
    r.git(&["reset", "-q", "--soft", &base]);
    let squash = r.commit_as(HUMAN, "Squash: TLS only");
    r.write(
        "media/fetcher.py",
        &CHECKED.replace(
            "import urllib.request\n",
            "import urllib.request  # stdlib\n",
        ),
    );
    let later = r.commit_as(HUMAN, "comment the import");
    let f = r.finding("ssrf.yaml", TWO_LINES);
    (r, f, squash, later)
}

#[test]
fn a_squash_keeps_its_carried_claim_and_a_later_write_that_left_the_lines_gets_none() {
    let (r, f, squash, later) = squash_then_edit();
    // The squash wrote the lines: the rewritten commit's note is carried to it.
    let v = prov_range(&r, &f, &format!("{squash}^"), &squash);
    let p = &v["provenance"];
    let c = carried_to(p, &squash);
    assert_eq!(c.len(), 1, "{v}");
    assert_eq!(
        c[0]["matched"],
        serde_json::json!({"by": "content", "of": 2, "matched": 2, "confidence": "high"})
    );
    assert_eq!(c[0]["session"], "sess-squashed");
    assert_eq!(p["evidence"]["decisions"][0]["agent"], true, "{v}");
    // The later write changed the file, not the anchored lines: they are in its parent as
    // they are in it, so no note on another commit speaks of them as its work.
    let v = prov_range(&r, &f, &format!("{later}^"), &later);
    let p = &v["provenance"];
    assert!(carried_to(p, &later).is_empty(), "{v}");
    assert!(
        p["evidence"]["decisions"]
            .as_array()
            .is_none_or(|d| d.is_empty()),
        "{v}"
    );
}

/// A whogitit note on media/fetcher.py: each line with its source.
fn whogitit_note(lines: &[(u32, &str)]) -> String {
    let lines: Vec<String> = lines
        .iter()
        .map(|(n, src)| {
            let edit = if *src == "AI" { "\"e1\"" } else { "null" };
            format!(
                "{{\"line_number\":{n},\"content\":\"\",\"source\":{{\"type\":\"{src}\",\"edit_id\":{edit}}},\"edit_id\":{edit},\"prompt_index\":0,\"confidence\":1.0}}"
            )
        })
        .collect();
    format!(
        r#"{{"version":3,"session":{{"session_id":"sess-wg","model":{{"id":"claude-opus-4-5"}}}},"prompts":[],"files":[{{"path":"media/fetcher.py","lines":[{}]}}]}}"#,
        lines.join(",")
    )
}

#[test]
fn a_whogitit_note_on_the_write_saying_the_lines_are_original_outranks_a_rewritten_commits() {
    let r = Repo::new();
    r.write("media/fetcher.py", UNCHECKED);
    let base = r.commit_as(HUMAN, "base");
    r.git(&["checkout", "-q", "-b", "agent"]);
    r.write("media/fetcher.py", CHECKED);
    let x = r.commit_as(AGENT, "check the scheme");
    let ai = whogitit_note(&[(5, "AI"), (6, "AI")]);
    r.git(&["notes", "--ref=whogitit", "add", "-m", &ai, &x]);
    r.git(&["reset", "-q", "--soft", &base]);
    let s = r.commit_as(HUMAN, "Squash: TLS only");
    let f = r.finding("ssrf.yaml", TWO_LINES);
    // Without a note of its own, the squash takes the rewritten commit's claim.
    let v = prov_range(&r, &f, &format!("{s}^"), &s);
    assert_eq!(
        v["provenance"]["evidence"]["decisions"][0]["agent"], true,
        "{v}"
    );
    // Its own note covers the lines and says they were there before its session.
    let own = whogitit_note(&(1..=7).map(|n| (n, "Original")).collect::<Vec<_>>());
    r.git(&["notes", "--ref=whogitit", "add", "-m", &own, &s]);
    let v = prov_range(&r, &f, &format!("{s}^"), &s);
    let p = &v["provenance"];
    assert!(carried_to(p, &s).is_empty(), "{v}");
    assert!(
        p["evidence"]["decisions"]
            .as_array()
            .is_none_or(|d| d.iter().all(|d| d["agent"] != true)),
        "{v}"
    );
}
