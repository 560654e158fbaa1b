//! What other attribution tools recorded about who wrote which lines (docs/dialects.md): one
//! reader per dialect, each written from the format's own published spec, every record turned
//! into the same plain claims. Readers never fail a run: what they cannot read they skip, and
//! say why.

pub(crate) mod agent_trace;
pub(crate) mod agentblame;
#[cfg(test)]
mod conformance;
#[cfg(test)]
pub(crate) mod conformance_b;
pub(crate) mod entire;
pub(crate) mod git_ai;
mod noted;
pub(crate) mod orphans;
pub(crate) mod trailers;
pub(crate) mod whogitit;

use serde::Serialize;

pub(crate) mod weigh;

use crate::git::Oid;

/// The tools and conventions whose records are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Dialect {
    /// git-ai's authorship logs in `refs/notes/ai` ("Git AI Standard" v3).
    GitAi,
    /// Entire's `Entire-Checkpoint:` trailers and checkpoint stores.
    Entire,
    /// whogitit's per-line notes in `refs/notes/whogitit`.
    Whogitit,
    /// AgentBlame's notes in `refs/notes/agentblame`.
    #[serde(rename = "agentblame")]
    AgentBlame,
    /// Agent Trace records (cursor/agent-trace), in notes or committed files.
    AgentTrace,
    /// The Linux kernel's `Assisted-by: AGENT:MODEL` trailer.
    AssistedBy,
    /// An agent's `Co-authored-by:` trailer or authorship.
    CoAuthoredBy,
}

impl Dialect {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Dialect::GitAi => "git-ai",
            Dialect::Entire => "entire",
            Dialect::Whogitit => "whogitit",
            Dialect::AgentBlame => "agentblame",
            Dialect::AgentTrace => "agent-trace",
            Dialect::AssistedBy => "assisted-by",
            Dialect::CoAuthoredBy => "co-authored-by",
        }
    }

    #[cfg(test)]
    /// Whether the dialect speaks of lines (strong evidence) or only of whole commits (a weak
    /// signal: a trailer says an agent helped, not which lines it wrote).
    pub(crate) fn line_level(self) -> bool {
        !matches!(self, Dialect::AssistedBy | Dialect::CoAuthoredBy)
    }
}

/// Who a record says wrote the lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Author {
    /// An agent wrote them.
    Agent,
    /// An agent wrote them and a person changed them after (whogitit's `AIModified`).
    AgentModified,
    /// A person wrote them.
    Human,
    /// Both, without saying which line is whose (Agent Trace `mixed`).
    Mixed,
    /// The record cannot tell (whogitit's `Unknown`, Agent Trace `unknown`).
    #[default]
    Unknown,
}

/// Lines `start..=end`, numbered from 1, in the file as of the claim's commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Lines {
    pub start: u32,
    pub end: u32,
}

impl Lines {
    pub(crate) fn contains(&self, line: u32) -> bool {
        self.start <= line && line <= self.end
    }
}

/// Where a record says the agent's conversation is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "at")]
pub(crate) enum Transcript {
    /// A URL (git-ai's `messages_url`, Agent Trace's conversation `url`).
    Url(String),
    /// A blob in this repository: `REV:path` (Entire's checkpoint `full.jsonl`).
    Blob(String),
}

/// One thing a dialect's record says about a commit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Claim {
    pub dialect: Dialect,
    /// The commit the record belongs to (the one a note is attached to, or that names it).
    #[serde(serialize_with = "hex")]
    pub commit: Oid,
    /// The file it speaks of; `None` for the whole commit (trailers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The lines it speaks of; empty for the whole file or commit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<Lines>,
    pub author: Author,
    /// The agent (`claude`, `cursor`, `Claude Code`) and model, as the record names them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The record's session or conversation id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Transcript>,
    /// The record's id for the edit or tool call that made the lines (git-ai trace, whogitit
    /// edit, Agent Trace record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// A hash of the lines' content as the record gives it (`sha256:…`, `murmur3:…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    /// Where the claim was read, for the report: `git-ai note on 3f2a9c1`.
    pub source: String,
    /// For a claim not recorded on its commit but found by matching (the note was left on a
    /// commit a squash or rebase rewrote): how, and how well it matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<Matched>,
}

/// How a claim was carried over to a write from a record on another commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Matched {
    pub by: MatchedBy,
    /// The anchored lines that could match: those the write added or changed (blank and
    /// punctuation-only lines do not count).
    pub of: u32,
    /// How many of them the record's lines hold.
    pub matched: u32,
    pub confidence: Confidence,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MatchedBy {
    /// Line texts compared, white space at either end ignored.
    Content,
}

/// How far a match can be trusted (docs/dialects.md#squashes-and-rebases); only `High` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

fn hex<S: serde::Serializer>(id: &Oid, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&id.hex())
}

/// A record a reader could not use, and why (a newer version, malformed JSON, a note on a
/// commit outside the range).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Skipped {
    pub dialect: Dialect,
    pub at: String,
    pub why: String,
}

/// Everything the readers found for a range.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Evidence {
    pub claims: Vec<Claim>,
    pub skipped: Vec<Skipped>,
    /// The notes on commits outside the range, not read: kept so that those a squash or
    /// rebase left behind can be read when a write has no record of its own ([`orphans`]).
    #[serde(skip)]
    pub outside: Vec<noted::Outside>,
    /// Lines the records on the range's commits speak of without a claim (whogitit's
    /// `Original`): the commit's own record covers them, so none is carried over from a
    /// rewritten commit's note ([`weigh::has_own_claims`]).
    #[serde(skip)]
    pub covered: Vec<Covered>,
}

/// Lines of a file that a record on a commit speaks of and says are not the commit's work:
/// whogitit's `Original` lines, there before the session. No claim: it does not say who wrote
/// them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Covered {
    pub commit: Oid,
    pub path: String,
    pub lines: Vec<Lines>,
}

impl Evidence {
    pub(crate) fn skip(&mut self, dialect: Dialect, at: impl Into<String>, why: impl Into<String>) {
        self.skipped.push(Skipped {
            dialect,
            at: at.into(),
            why: why.into(),
        });
    }

    /// The claims on `commit` about line `line` of `path` (or the whole file), and the
    /// commit-level ones (trailers).
    #[cfg(test)]
    pub(crate) fn about(&self, commit: Oid, path: &str, line: u32) -> Vec<&Claim> {
        self.claims
            .iter()
            .filter(|c| c.commit == commit)
            .filter(|c| match c.path.as_deref() {
                None => true,
                Some(p) => {
                    p == path && (c.lines.is_empty() || c.lines.iter().any(|l| l.contains(line)))
                }
            })
            .collect()
    }
}

/// Everything the readers find about `commits`, each dialect in turn (in the order their
/// claims are listed, with the name `SAGE_TIMING` shows); `files` are the anchored file's
/// paths at those commits, for readers that can limit their search to them. A reader that
/// meets a record it cannot use says so in `skipped` and goes on.
pub(crate) fn read_all(
    repo: &crate::git::Repo,
    commits: &[Oid],
    files: &[&str],
) -> crate::error::Result<Evidence> {
    type Reader<'a> = &'a dyn Fn(&mut Evidence) -> crate::error::Result<()>;
    let readers: [(&str, Reader); 6] = [
        ("records: git-ai", &|ev| git_ai::read(repo, commits, ev)),
        ("records: whogitit", &|ev| whogitit::read(repo, commits, ev)),
        ("records: agentblame", &|ev| {
            agentblame::read(repo, commits, ev)
        }),
        ("records: entire", &|ev| entire::read(repo, commits, ev)),
        ("records: agent-trace", &|ev| {
            agent_trace::read(repo, commits, files, ev)
        }),
        ("records: trailers", &|ev| trailers::read(repo, commits, ev)),
    ];
    let mut ev = Evidence::default();
    for (name, read) in readers {
        let _t = crate::timing::stage(name);
        read(&mut ev)?;
    }
    Ok(ev)
}

/// The lines of `new` (from 1) that are not `old`'s: inserted or replacing others (what a
/// commit wrote, `old` being its first parent's version of the file).
pub(crate) fn added_lines(old: &str, new: &str) -> Vec<Lines> {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out: Vec<Lines> = Vec::new();
    for op in diff.ops() {
        let (start, len) = match *op {
            similar::DiffOp::Insert {
                new_index, new_len, ..
            }
            | similar::DiffOp::Replace {
                new_index, new_len, ..
            } => (new_index, new_len),
            _ => continue,
        };
        if len == 0 {
            continue;
        }
        let (start, end) = (start as u32 + 1, (start + len) as u32);
        match out.last_mut() {
            Some(l) if l.end + 1 >= start => l.end = end,
            _ => out.push(Lines { start, end }),
        }
    }
    out
}

/// `1,2,19-222,300` (git-ai's and AgentBlame v3's ranges) as line ranges; `None` when any
/// part is not a number or a range runs backwards.
pub(crate) fn parse_ranges(s: &str) -> Option<Vec<Lines>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let n = part.parse().ok()?;
                (n, n)
            }
        };
        if a == 0 || b < a {
            return None;
        }
        out.push(Lines { start: a, end: b });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_are_the_new_sides_of_inserts_and_replacements() {
        let l = |start, end| Lines { start, end };
        assert_eq!(added_lines("", "a\nb\n"), [l(1, 2)]);
        assert_eq!(added_lines("a\nb\nc\n", "a\nB\nc\nd\n"), [l(2, 2), l(4, 4)]);
        assert_eq!(added_lines("a\nb\n", "a\n"), []);
        assert_eq!(added_lines("a\nc\n", "a\nb1\nb2\nc\n"), [l(2, 3)]);
    }

    #[test]
    fn ranges_as_the_dialects_write_them() {
        assert_eq!(
            parse_ranges("1,2,19-222,300").unwrap(),
            [
                Lines { start: 1, end: 1 },
                Lines { start: 2, end: 2 },
                Lines {
                    start: 19,
                    end: 222
                },
                Lines {
                    start: 300,
                    end: 300
                }
            ]
        );
        assert_eq!(parse_ranges("123-157, 212-221").unwrap().len(), 2);
        assert!(parse_ranges("5-3").is_none());
        assert!(parse_ranges("0").is_none());
        assert!(parse_ranges("a-b").is_none());
        assert_eq!(parse_ranges("").unwrap(), []);
    }
}
