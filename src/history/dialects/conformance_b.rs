//! Conformance of the Entire, Agent Trace and trailer readers against real samples: each
//! fixture under tests/fixtures/dialects/{entire,agent-trace,trailers}/ (SOURCES.md there says
//! where it comes from and what was reduced) describes a tiny repository — commits, other refs,
//! notes — that is built with the git CLI in a temporary directory and read; the expected
//! claims and skipped records are pinned per sample. `measure_real_mirrors` (ignored) runs the
//! readers over whole mirrored repositories and prints what they find.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use super::{Author, Claim, Dialect, Evidence, Lines, Transcript, agent_trace, entire, trailers};
use crate::git::{Oid, Repo};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    #[allow(dead_code)]
    description: String,
    /// The branch `main`, oldest commit first; each commit's files change the previous tree.
    main: Vec<FixtureCommit>,
    /// Other refs, each an orphan chain whose commits list their whole tree.
    #[serde(default)]
    refs: BTreeMap<String, Vec<FixtureCommit>>,
    /// Notes refs: commit label → note.
    #[serde(default)]
    notes: BTreeMap<String, BTreeMap<String, Content>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureCommit {
    #[serde(default)]
    label: Option<String>,
    /// `Name <email>`, author and committer.
    author: String,
    date: String,
    message: String,
    #[serde(default)]
    files: BTreeMap<String, Content>,
    #[serde(default)]
    remove: Vec<String>,
}

/// A file's content: given inline, or read from a file next to the fixture. `{{commit:LABEL}}`
/// in it becomes that commit's id.
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    From { from: String },
}

/// A fixture repository, built.
pub(crate) struct Built {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub repo: Repo,
    pub labels: BTreeMap<String, Oid>,
}

impl Built {
    pub(crate) fn id(&self, label: &str) -> Oid {
        self.labels[label]
    }

    pub(crate) fn ids(&self, labels: &[&str]) -> Vec<Oid> {
        labels.iter().map(|l| self.id(l)).collect()
    }

    pub(crate) fn short(&self, label: &str) -> String {
        self.id(label).short()
    }

    pub(crate) fn git(&self, args: &[&str]) -> String {
        git(&self.path, args, None, &[])
    }

    /// Reopens the repository after the git CLI changed its refs.
    fn reopen(&mut self) {
        self.repo = Repo::discover(&self.path).unwrap();
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dialects")
}

fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", dir)
        .env("GIT_COMMITTER_NAME", "fixture")
        .env("GIT_COMMITTER_EMAIL", "fixture@example.com")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_AUTHOR_NAME", "fixture")
        .env("GIT_AUTHOR_EMAIL", "fixture@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("git runs");
    if let Some(input) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Builds the fixture `tests/fixtures/dialects/<name>/fixture.yaml`.
pub(crate) fn build(name: &str) -> Built {
    let root = fixtures().join(name);
    let text = std::fs::read_to_string(root.join("fixture.yaml")).unwrap();
    let fx: Fixture = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repo");
    std::fs::create_dir(&path).unwrap();
    git(&path, &["init", "-q", "-b", "main"], None, &[]);
    let mut labels: BTreeMap<String, Oid> = BTreeMap::new();
    let mut hexes: BTreeMap<String, String> = BTreeMap::new();
    let content = |c: &Content, hexes: &BTreeMap<String, String>| -> Vec<u8> {
        let mut s = match c {
            Content::Text(t) => t.clone(),
            Content::From { from } => std::fs::read_to_string(root.join(from))
                .unwrap_or_else(|e| panic!("{name}/{from}: {e}")),
        };
        for (label, hex) in hexes {
            s = s.replace(&format!("{{{{commit:{label}}}}}"), hex);
        }
        s.into_bytes()
    };
    // One chain of commits under `refname`, through its own index.
    let chain = |refname: &str,
                 commits: &[FixtureCommit],
                 whole_trees: bool,
                 hexes: &mut BTreeMap<String, String>| {
        let index = path
            .join(".git")
            .join(format!("fixture-{}.index", refname.replace('/', "-")));
        let index = index.to_str().unwrap().to_string();
        let env_index = [("GIT_INDEX_FILE", index.as_str())];
        let mut parent: Option<String> = None;
        for c in commits {
            if whole_trees || parent.is_none() {
                git(&path, &["read-tree", "--empty"], None, &env_index);
            }
            for (file, body) in &c.files {
                let blob = git(
                    &path,
                    &["hash-object", "-w", "--stdin"],
                    Some(&content(body, hexes)),
                    &[],
                );
                git(
                    &path,
                    &[
                        "update-index",
                        "--add",
                        "--cacheinfo",
                        &format!("100644,{blob},{file}"),
                    ],
                    None,
                    &env_index,
                );
            }
            for file in &c.remove {
                git(
                    &path,
                    &["update-index", "--force-remove", file],
                    None,
                    &env_index,
                );
            }
            let tree = git(&path, &["write-tree"], None, &env_index);
            let (an, ae) = c.author.split_once(" <").expect("Name <email>");
            let ae = ae.trim_end_matches('>');
            let mut args = vec!["commit-tree", tree.as_str(), "-F", "-"];
            if let Some(p) = &parent {
                args.extend(["-p", p.as_str()]);
            }
            let id = git(
                &path,
                &args,
                Some(c.message.as_bytes()),
                &[
                    ("GIT_AUTHOR_NAME", an),
                    ("GIT_AUTHOR_EMAIL", ae),
                    ("GIT_AUTHOR_DATE", &c.date),
                    ("GIT_COMMITTER_NAME", an),
                    ("GIT_COMMITTER_EMAIL", ae),
                    ("GIT_COMMITTER_DATE", &c.date),
                ],
            );
            if let Some(l) = &c.label {
                hexes.insert(l.clone(), id.clone());
            }
            parent = Some(id);
        }
        if let Some(tip) = parent {
            git(&path, &["update-ref", refname, &tip], None, &[]);
        }
    };
    chain("refs/heads/main", &fx.main, false, &mut hexes);
    for (refname, commits) in &fx.refs {
        chain(refname, commits, true, &mut hexes);
    }
    for (notes_ref, by_label) in &fx.notes {
        for (label, body) in by_label {
            let target = hexes[label].clone();
            git(
                &path,
                &["notes", "--ref", notes_ref, "add", "-f", "-F", "-", &target],
                Some(&content(body, &hexes)),
                &[],
            );
        }
    }
    let repo = Repo::discover(&path).unwrap();
    for (label, hex) in &hexes {
        labels.insert(label.clone(), repo.resolve_commit(hex).unwrap());
    }
    Built {
        _dir: dir,
        path,
        repo,
        labels,
    }
}

fn read_with(
    f: fn(&Repo, &[Oid], &mut Evidence) -> crate::error::Result<()>,
    b: &Built,
    labels: &[&str],
) -> Evidence {
    let mut ev = Evidence::default();
    f(&b.repo, &b.ids(labels), &mut ev).unwrap();
    ev
}

// Entire ---------------------------------------------------------------------------------------

const FITCHECK_ID: &str = "01M0B0AWQYB1J85CGAE6C7QEDB";
pub(crate) const FITCHECK_REF: &str = "refs/entire/checkpoints/DB/01M0B0AWQYB1J85CGAE6C7QEDB";

#[test]
fn entire_per_checkpoint_ref_fitcheck() {
    let b = build("entire/fitcheck-refs");
    let ev = read_with(entire::read, &b, &["before", "stats", "nav"]);
    assert_eq!(ev.claims.len(), 1, "{ev:#?}");
    let c = &ev.claims[0];
    assert_eq!(
        c,
        &Claim {
            dialect: Dialect::Entire,
            commit: b.id("stats"),
            path: None,
            lines: Vec::new(),
            author: Author::Agent,
            agent: Some("Claude Code".into()),
            model: Some("claude-opus-5".into()),
            session: Some("903d62f8-76c6-4d8e-aaef-442496fb144e".into()),
            transcript: Some(Transcript::Blob(format!("{FITCHECK_REF}:0/full.jsonl"))),
            trace: Some(FITCHECK_ID.into()),
            content_hash: None,
            source: format!(
                "Entire checkpoint {FITCHECK_ID} ({FITCHECK_REF}) on {}: agent 233 of 233 committed lines, a person added 0 and changed 0 (Entire: 97.9% agent)",
                b.short("stats")
            ),
            matched: None,
        }
    );
    // the dangling trailer (dangling in the real snapshot too), with what to fetch
    assert_eq!(ev.skipped.len(), 1, "{:#?}", ev.skipped);
    let s = &ev.skipped[0];
    assert_eq!(s.dialect, Dialect::Entire);
    assert_eq!(
        s.at,
        format!(
            "Entire-Checkpoint 01M0HP2NDC5WN02GVHY1TA28CR on {}",
            b.short("nav")
        )
    );
    assert!(
        s.why.starts_with("no checkpoint store holds it: git fetch origin 'refs/entire/checkpoints/*:refs/entire/checkpoints/*'"),
        "{}",
        s.why
    );
    // the imported checkpoint no trailer names is not read; a range without trailers reads nothing
    assert_eq!(
        read_with(entire::read, &b, &["before"]),
        Evidence::default()
    );
}

#[test]
fn entire_remote_tracking_checkpoint_ref() {
    let mut b = build("entire/fitcheck-refs");
    let tip = b.git(&["rev-parse", FITCHECK_REF]);
    let remote = format!("refs/remotes/origin/entire/checkpoints/DB/{FITCHECK_ID}");
    b.git(&["update-ref", &remote, &tip]);
    b.git(&["update-ref", "-d", FITCHECK_REF]);
    b.reopen();
    let ev = read_with(entire::read, &b, &["stats"]);
    assert_eq!(
        ev.claims[0].transcript,
        Some(Transcript::Blob(format!("{remote}:0/full.jsonl")))
    );
    assert!(ev.claims[0].source.contains(&format!("({remote})")));
}

#[test]
fn entire_checkpoint_branch_eagerminds() {
    let b = build("entire/eagerminds-v1");
    let ev = read_with(entire::read, &b, &["plan", "scaffold"]);
    assert!(ev.skipped.is_empty(), "{:#?}", ev.skipped);
    assert_eq!(
        ev.claims,
        [Claim {
            dialect: Dialect::Entire,
            commit: b.id("scaffold"),
            path: None,
            lines: Vec::new(),
            author: Author::Mixed,
            agent: Some("Claude Code".into()),
            model: Some("claude-opus-4-8[1m]".into()),
            session: Some("eb3e9a24-5b5b-4fcb-99f7-10c2c1deb708".into()),
            transcript: Some(Transcript::Blob(
                "entire/checkpoints/v1:0b/907c12affb/0/full.jsonl".into()
            )),
            trace: Some("0b907c12affb".into()),
            content_hash: None,
            source: format!(
                "Entire checkpoint 0b907c12affb (entire/checkpoints/v1) on {}: agent 64 of 6877 committed lines, a person added 6813 and changed 0 (Entire: 0.9% agent)",
                b.short("scaffold")
            ),
            matched: None,
        }]
    );
    // the same commit's co-author line, read by the trailer reader
    let ev = read_with(trailers::read, &b, &["scaffold"]);
    assert_eq!(ev.claims.len(), 1);
    assert_eq!(
        (
            ev.claims[0].dialect,
            ev.claims[0].agent.as_deref(),
            ev.claims[0].model.as_deref(),
            ev.claims[0].author
        ),
        (
            Dialect::CoAuthoredBy,
            Some("Claude Code"),
            Some("Claude Opus 4.8 (1M context)"),
            Author::Mixed
        )
    );
}

/// After a plain clone the branch is only remote-tracking; a checkpoint that also has a ref of
/// its own is read from the ref (refs first, branch fallback).
#[test]
fn entire_remote_branch_and_refs_first() {
    let mut b = build("entire/eagerminds-v1");
    let tip = b.git(&["rev-parse", "refs/heads/entire/checkpoints/v1"]);
    b.git(&[
        "update-ref",
        "refs/remotes/origin/entire/checkpoints/v1",
        &tip,
    ]);
    b.git(&["update-ref", "-d", "refs/heads/entire/checkpoints/v1"]);
    b.reopen();
    let ev = read_with(entire::read, &b, &["scaffold"]);
    assert_eq!(
        ev.claims[0].transcript,
        Some(Transcript::Blob(
            "origin/entire/checkpoints/v1:0b/907c12affb/0/full.jsonl".into()
        ))
    );
    // the checkpoint's subtree as a ref of its own: shard = the last two characters
    let sub = b.git(&["rev-parse", &format!("{tip}:0b/907c12affb")]);
    let commit = git(
        &b.path,
        &["commit-tree", &sub, "-m", "Checkpoint: 0b907c12affb"],
        None,
        &[],
    );
    b.git(&[
        "update-ref",
        "refs/entire/checkpoints/fb/0b907c12affb",
        &commit,
    ]);
    // names Entire keeps for its other stores are never taken for checkpoints
    b.git(&["update-ref", "refs/entire/checkpoints/v2/main", &commit]);
    b.reopen();
    let ev = read_with(entire::read, &b, &["scaffold"]);
    assert_eq!(ev.claims.len(), 1);
    assert_eq!(
        ev.claims[0].transcript,
        Some(Transcript::Blob(
            "refs/entire/checkpoints/fb/0b907c12affb:0/full.jsonl".into()
        ))
    );
}

// Agent Trace ----------------------------------------------------------------------------------

const FINTRACK_URL: &str = r"file://c:\Users\pratibal\.cursor\projects\c-private-tech-react-fintrack\agent-transcripts\be6cecdd-a75a-4363-b49d-3f7850807d1d\be6cecdd-a75a-4363-b49d-3f7850807d1d.jsonl";

/// The fintrack records as provenance reads them for the anchored file `src/lib/data.ts`.
fn trace_about_data(r: &Repo, c: &[Oid], e: &mut Evidence) -> crate::error::Result<()> {
    agent_trace::read(r, c, &["src/lib/data.ts"], e)
}

#[test]
fn agent_trace_committed_records_fintrack() {
    let b = build("agent-trace/fintrack");
    let ev = read_with(trace_about_data, &b, &["report"]);
    let at = |file: &str| format!(".agent-trace/{file} at {}", b.short("report"));
    let source = |id: &str| {
        format!(
            "Agent Trace record {id} in .agent-trace/traces.jsonl at {} (recorded on its parent {})",
            b.short("report"),
            b.short("budgets")
        )
    };
    let claim = |path: &str, lines: Lines, hash: &str, id: &str| Claim {
        dialect: Dialect::AgentTrace,
        commit: b.id("report"),
        path: Some(path.into()),
        lines: vec![lines],
        author: Author::Agent,
        agent: Some("cursor".into()),
        model: Some("anthropic/claude-opus-4-8".into()),
        session: None,
        transcript: Some(Transcript::Url(FINTRACK_URL.into())),
        trace: Some(id.into()),
        content_hash: Some(hash.into()),
        source: source(id),
        matched: None,
    };
    assert_eq!(
        ev.claims,
        [
            claim(
                "src/components/reports/reports-view.tsx",
                Lines { start: 1, end: 116 },
                "sha256:bb5ed2670e4ca164",
                "44489cd9-5d53-442e-9d6e-3f7e93d0d079"
            ),
            claim(
                "src/lib/data.ts",
                Lines { start: 13, end: 13 },
                "sha256:04d0f61674b1aec6",
                "43e38150-702f-48a5-a00c-16703c78f959"
            ),
            claim(
                "src/lib/data.ts",
                Lines { start: 18, end: 18 },
                "sha256:3911258ab5e5aadd",
                "43e38150-702f-48a5-a00c-16703c78f959"
            ),
        ]
    );
    let skipped: Vec<(String, String)> = ev
        .skipped
        .iter()
        .map(|s| (s.at.clone(), s.why.clone()))
        .collect();
    assert_eq!(
        skipped,
        [
            (
                at("prompts.jsonl"),
                "not an Agent Trace record: missing files (line 1)".to_string()
            ),
            (
                at("traces.jsonl"),
                "names a vcs.revision outside the range (line 2: 1a0c18c75bc1)".to_string()
            ),
        ]
    );
    // the parent in the range too: the same claims; the parent alone added no record
    assert_eq!(
        read_with(trace_about_data, &b, &["budgets", "report"]).claims,
        ev.claims
    );
    assert_eq!(
        read_with(trace_about_data, &b, &["budgets"]),
        Evidence::default()
    );
    // what the report asks of the evidence: line 13 of data.ts at the commit, not line 14
    assert_eq!(ev.about(b.id("report"), "src/lib/data.ts", 13).len(), 1);
    assert!(ev.about(b.id("report"), "src/lib/data.ts", 14).is_empty());
    assert!(ev.about(b.id("budgets"), "src/lib/data.ts", 13).is_empty());
}

#[test]
fn agent_trace_nonconforming_lazyusage() {
    let b = build("agent-trace/lazyusage");
    let ev = read_with(
        |r, c, e| agent_trace::read(r, c, &["src/main.ts"], e),
        &b,
        &["before", "biome"],
    );
    assert!(ev.claims.is_empty());
    assert_eq!(ev.skipped.len(), 1);
    assert_eq!(
        ev.skipped[0].at,
        format!(".agent-trace/traces.jsonl at {}", b.short("biome"))
    );
    assert_eq!(
        ev.skipped[0].why,
        "not an Agent Trace record: missing version, id, files (2 records, the first on line 1)"
    );
}

#[test]
fn agent_trace_notes_readme_examples() {
    let b = build("agent-trace/notes-readme-example");
    let ev = read_with(
        |r, c, e| agent_trace::read(r, c, &["src/parser.ts"], e),
        &b,
        &["parser", "app"],
    );
    type Seen<'a> = (
        Oid,
        &'a str,
        Vec<Lines>,
        Author,
        Option<&'a str>,
        Option<&'a str>,
    );
    let summary: Vec<Seen> = ev
        .claims
        .iter()
        .map(|c| {
            (
                c.commit,
                c.path.as_deref().unwrap(),
                c.lines.clone(),
                c.author,
                c.model.as_deref(),
                c.content_hash.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                b.id("parser"),
                "src/utils/parser.ts",
                vec![Lines { start: 42, end: 67 }],
                Author::Agent,
                Some("anthropic/claude-opus-4-5-20251101"),
                Some("murmur3:9f2e8a1b")
            ),
            (
                b.id("parser"),
                "src/utils/helpers.ts",
                vec![Lines { start: 10, end: 25 }],
                Author::Agent,
                Some("openai/gpt-4o"),
                None
            ),
            (
                b.id("app"),
                "src/app.ts",
                vec![Lines { start: 1, end: 50 }],
                Author::Agent,
                None,
                None
            ),
        ]
    );
    assert_eq!(
        ev.claims[0].transcript,
        Some(Transcript::Url(
            "https://api.cursor.com/v1/conversations/12345".into()
        ))
    );
    assert_eq!(
        ev.claims[0].source,
        format!(
            "Agent Trace record 550e8400-e29b-41d4-a716-446655440000 in refs/notes/agent-trace on {}",
            b.short("parser")
        )
    );
    assert_eq!(ev.claims[2].agent, None, "the minimal record names no tool");
    assert_eq!(ev.skipped.len(), 1);
    assert_eq!(
        ev.skipped[0].at,
        format!("refs/notes/agent-trace on {}", b.short("app"))
    );
    assert_eq!(
        ev.skipped[0].why,
        "Agent Trace version 1.0.0: this reader knows major version 0 only (line 2)"
    );
}

// Trailers -------------------------------------------------------------------------------------

/// (commit, dialect, agent, model, author) of each claim.
type Row = (String, Dialect, String, Option<String>, Author);

fn rows(b: &Built, ev: &Evidence) -> Vec<Row> {
    let label = |id: Oid| {
        b.labels
            .iter()
            .find(|(_, v)| **v == id)
            .map(|(k, _)| k.clone())
            .unwrap()
    };
    ev.claims
        .iter()
        .map(|c| {
            assert!(
                c.path.is_none() && c.lines.is_empty(),
                "commit-level: {c:?}"
            );
            (
                label(c.commit),
                c.dialect,
                c.agent.clone().unwrap(),
                c.model.clone(),
                c.author,
            )
        })
        .collect()
}

fn row(l: &str, d: Dialect, agent: &str, model: Option<&str>, a: Author) -> Row {
    (l.into(), d, agent.into(), model.map(Into::into), a)
}

#[test]
fn assisted_by_brush() {
    use Dialect::{AssistedBy as A, CoAuthoredBy as C};
    let b = build("trailers/brush");
    let all = ["seq", "export", "interceptor", "build", "windows", "append"];
    let ev = read_with(trailers::read, &b, &all);
    assert!(ev.skipped.is_empty());
    assert_eq!(
        rows(&b, &ev),
        [
            row(
                "seq",
                A,
                "Claude Code",
                Some("claude-opus-5"),
                Author::Mixed
            ),
            row(
                "export",
                A,
                "Claude (Anthropic) (JMO's friend)",
                None,
                Author::Mixed
            ),
            row(
                "interceptor",
                A,
                "Claude Code",
                Some("Claude Opus 4.8 (1M context)"),
                Author::Mixed
            ),
            row(
                "interceptor",
                C,
                "Claude Code",
                Some("Claude Opus 4.8 (1M context)"),
                Author::Mixed
            ),
            row("build", A, "GitHub Copilot", None, Author::Mixed),
            row(
                "build",
                C,
                "GitHub Copilot coding agent",
                None,
                Author::Agent
            ),
            row(
                "windows",
                A,
                "GitHub Copilot CLI",
                Some("claude-opus-5"),
                Author::Mixed
            ),
            row("windows", C, "GitHub Copilot", None, Author::Mixed),
            row("append", A, "Claude", Some("opus-4.8"), Author::Mixed),
        ]
    );
    assert_eq!(
        ev.claims[0].source,
        format!("Assisted-by trailer on {}", b.short("seq"))
    );
    assert_eq!(
        ev.claims[5].source,
        format!(
            "author of {} (Copilot <198982749+Copilot@users.noreply.github.com>)",
            b.short("build")
        )
    );
    // commit-level claims answer for every line of every file of their commit
    assert_eq!(ev.about(b.id("seq"), "any/file.rs", 7).len(), 1);
}

#[test]
fn agent_co_authors_and_session_links() {
    use Dialect::CoAuthoredBy as C;
    let b = build("trailers/coauthors");
    let all = ["logs", "session", "cursor", "aider", "codex", "squash"];
    let ev = read_with(trailers::read, &b, &all);
    assert_eq!(
        rows(&b, &ev),
        [
            row(
                "logs",
                C,
                "GitHub Copilot coding agent",
                None,
                Author::Agent
            ),
            row(
                "session",
                C,
                "Claude Code",
                Some("Claude Sonnet 5"),
                Author::Mixed
            ),
            row("cursor", C, "Cursor", None, Author::Mixed),
            row("aider", C, "Aider", None, Author::Agent),
            row("codex", C, "Codex", Some("GPT 5.4"), Author::Mixed),
            // copilot-swe-agent[bot] and Copilot <198982749+…>, repeated: one agent
            row(
                "squash",
                C,
                "GitHub Copilot coding agent",
                None,
                Author::Mixed
            ),
        ]
    );
    let logs = &ev.claims[0];
    assert_eq!(
        logs.transcript,
        Some(Transcript::Url(
            "https://github.com/Esdeveniments/esdeveniments-frontend/sessions/3b4b5b2a-d81b-41b4-ad86-49142e813e0c".into()
        ))
    );
    assert_eq!(
        logs.session.as_deref(),
        Some("3b4b5b2a-d81b-41b4-ad86-49142e813e0c")
    );
    assert_eq!(
        logs.source,
        format!(
            "author of {} (copilot-swe-agent[bot] <198982749+Copilot@users.noreply.github.com>), Agent-Logs-Url trailer",
            b.short("logs")
        )
    );
    let session = &ev.claims[1];
    assert_eq!(
        session.transcript,
        Some(Transcript::Url(
            "https://claude.ai/code/session_01AhM1tKX7JLESsABc45RCbB".into()
        ))
    );
    assert_eq!(
        session.session.as_deref(),
        Some("session_01AhM1tKX7JLESsABc45RCbB")
    );
    assert_eq!(
        ev.claims[3].source,
        format!(
            "author of {} (Shun Kakinoki (aider) <shunkakinoki@gmail.com>)",
            b.short("aider")
        )
    );
}

#[test]
fn dialect_names_and_levels() {
    let all = [
        Dialect::GitAi,
        Dialect::Entire,
        Dialect::Whogitit,
        Dialect::AgentBlame,
        Dialect::AgentTrace,
        Dialect::AssistedBy,
        Dialect::CoAuthoredBy,
    ];
    let names: Vec<&str> = all.iter().map(|d| d.name()).collect();
    assert_eq!(
        names,
        [
            "git-ai",
            "entire",
            "whogitit",
            "agentblame",
            "agent-trace",
            "assisted-by",
            "co-authored-by"
        ]
    );
    let weak: Vec<Dialect> = all.into_iter().filter(|d| !d.line_level()).collect();
    assert_eq!(weak, [Dialect::AssistedBy, Dialect::CoAuthoredBy]);
    let _ = Author::AgentModified;
}

// The real mirrors -----------------------------------------------------------------------------

/// Runs the three readers over every commit of each mirrored repository (`git rev-list --all`)
/// and prints what they find. By hand: `cargo test --locked measure_real_mirrors -- --ignored
/// --nocapture`; `SAGE_MIRRORS` names the mirrors' folder (default /work/.mirror),
/// `SAGE_MIRROR_NAMES` other mirrors (`owner+name,…`).
#[test]
#[ignore = "needs the mirrored repositories"]
fn measure_real_mirrors() {
    let root = std::env::var("SAGE_MIRRORS").unwrap_or_else(|_| "/work/.mirror".into());
    let extra = std::env::var("SAGE_MIRROR_NAMES").unwrap_or_default();
    let mut names = vec![
        "1curafu+Fitcheck",
        "Esdeveniments+esdeveniments-frontend",
        "Nishanth-sebastin+eagerminds-bookmarks",
        "ClusterCockpit+cc-backend",
        "PratikBali+fintrack",
        "JayFarei+lazyusage",
        "reubeno+brush",
    ];
    if !extra.is_empty() {
        names = extra.split(',').collect();
    }
    for name in names {
        let path = Path::new(&root).join(name).join("repo");
        if !path.exists() {
            println!("{name}: mirror missing");
            continue;
        }
        let repo = Repo::discover(&path).unwrap();
        let list = git(&path, &["rev-list", "--all"], None, &[]);
        let commits: Vec<Oid> = list
            .lines()
            .map(|h| repo.resolve_commit(h).unwrap())
            .collect();
        let started = std::time::Instant::now();
        let mut ev = Evidence::default();
        entire::read(&repo, &commits, &mut ev).unwrap();
        agent_trace::read(&repo, &commits, &[""], &mut ev).unwrap();
        trailers::read(&repo, &commits, &mut ev).unwrap();
        let took = started.elapsed();
        let mut trailer_pairs = 0;
        let mut trailer_commits = 0;
        for c in &commits {
            let msg = repo.commit_info(*c).unwrap().message;
            let n = trailers::trailer(&msg, "Entire-Checkpoint").len();
            trailer_pairs += n;
            trailer_commits += usize::from(n > 0);
        }
        let of = |d: Dialect| ev.claims.iter().filter(move |c| c.dialect == d);
        let in_ref = of(Dialect::Entire)
            .filter(|c| c.source.contains("(refs/"))
            .count();
        let on_branch = of(Dialect::Entire).count() - in_ref;
        let skipped = |d: Dialect| ev.skipped.iter().filter(move |s| s.dialect == d);
        let dangling = skipped(Dialect::Entire)
            .filter(|s| s.why.starts_with("no checkpoint store"))
            .count();
        let records: std::collections::BTreeSet<&str> = of(Dialect::AgentTrace)
            .filter_map(|c| c.trace.as_deref())
            .collect();
        let at_skipped: Vec<String> = skipped(Dialect::AgentTrace)
            .map(|s| format!("{} — {}", s.at, s.why))
            .collect();
        let assisted: Vec<&Claim> = of(Dialect::AssistedBy).collect();
        let with_model = assisted.iter().filter(|c| c.model.is_some()).count();
        let mut co: BTreeMap<&str, usize> = BTreeMap::new();
        for c in of(Dialect::CoAuthoredBy) {
            *co.entry(c.agent.as_deref().unwrap_or("?")).or_default() += 1;
        }
        let links = of(Dialect::CoAuthoredBy)
            .filter(|c| c.transcript.is_some())
            .count();
        println!(
            "{name}: {} commits in {:.1}s\n  Entire: {trailer_commits} commits with trailers, {trailer_pairs} trailer ids; session claims {} (per-checkpoint ref {in_ref}, branch {on_branch}); dangling {dangling}; other skipped {}\n  Agent Trace: {} records read ({} claims), {} skipped entries{}\n  Assisted-by: {} parsed ({with_model} with a model)\n  agents as author/co-author: {co:?}, with a session link {links}",
            commits.len(),
            took.as_secs_f64(),
            of(Dialect::Entire).count(),
            skipped(Dialect::Entire).count() - dangling,
            records.len(),
            of(Dialect::AgentTrace).count(),
            at_skipped.len(),
            at_skipped
                .iter()
                .map(|s| format!("\n    {s}"))
                .collect::<String>(),
            assisted.len(),
        );
        let unique = |in_ref: bool| {
            of(Dialect::Entire)
                .filter(|c| c.source.contains("(refs/") == in_ref)
                .filter_map(|c| c.trace.as_deref())
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        };
        let dangling_ids = skipped(Dialect::Entire)
            .filter(|s| s.why.starts_with("no checkpoint store"))
            .filter_map(|s| s.at.split_whitespace().nth(1))
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        println!(
            "  Entire unique checkpoints: {} in their own ref, {} on the branch, {dangling_ids} dangling",
            unique(true),
            unique(false)
        );
        let mut values: BTreeMap<String, usize> = BTreeMap::new();
        for c in &assisted {
            let v = format!(
                "{} / {}",
                c.agent.as_deref().unwrap_or(""),
                c.model.as_deref().unwrap_or("-")
            );
            *values.entry(v).or_default() += 1;
        }
        for (v, n) in values {
            println!("    Assisted-by {n:>3}  {v}");
        }
    }
}
