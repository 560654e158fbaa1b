//! Which turn made each write (SPEC §4), by, in order: a `Sage-Turn:` trailer, Aider's
//! `> Commit <sha>` lines, replaying the transcript's edits onto the parent's files until
//! they reproduce the commit, a `git commit` the agent ran, and timestamps. Replay also
//! yields the snapshots between commits; when it cannot reproduce a commit whose file the
//! transcript edited several times, only the final state is known (`final-only`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::Transcript;
use super::classify::shell_command;
use super::discover::trailer;
use super::model::Edit;
use super::replay::apply;
use crate::error::Result;
use crate::git::{CommitInfo, Oid, Repo};

/// How a write was tied to a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MappedBy {
    Trailer,
    AiderCommit,
    Replay,
    CommitCommand,
    Timestamp,
}

impl MappedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            MappedBy::Trailer => "trailer",
            MappedBy::AiderCommit => "aider-commit",
            MappedBy::Replay => "replay",
            MappedBy::CommitCommand => "commit-command",
            MappedBy::Timestamp => "timestamp",
        }
    }
}

/// A snapshot of the anchored file inside a commit, rebuilt by replay.
#[derive(Debug, Clone, PartialEq)]
pub struct SubWrite {
    pub turn: u32,
    /// The file after this edit (`None`: deleted).
    pub content: Option<String>,
}

/// The mapping of one range to one transcript.
#[derive(Debug, Clone, Default)]
pub struct Mapping {
    /// Per write: the turn and how it was found.
    pub turns: Vec<Option<(u32, MappedBy)>>,
    /// Per write: the anchored file's states after each transcript edit inside that commit,
    /// when there were several and replay reproduced the commit (the last is the commit's).
    pub sub_writes: Vec<Vec<SubWrite>>,
    /// Per write: the transcript edited the anchored file several times in this commit but
    /// replay could not reproduce it, so only the committed state is known.
    pub final_only: Vec<bool>,
    pub notes: Vec<String>,
}

/// One write as mapping needs it.
pub struct WriteView<'a> {
    pub info: &'a CommitInfo,
    pub parent_tree: Oid,
    /// The anchored file's path in this write's snapshot.
    pub anchored_path: &'a str,
    /// The paths this write changed.
    pub changed: &'a [String],
}

fn same_file(transcript_path: &str, repo_path: &str) -> bool {
    let t = transcript_path.trim_start_matches("./");
    t == repo_path || t.ends_with(&format!("/{repo_path}")) || repo_path.ends_with(&format!("/{t}"))
}

/// Seconds since the epoch of an RFC 3339 / ISO 8601 timestamp (naive ones taken as UTC).
pub fn parse_time(s: &str) -> Option<f64> {
    let s = s.trim();
    let (date, rest) = s.split_at(s.find(['T', ' '])?);
    let mut d = date.split('-');
    let (y, m, day): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    let rest = &rest[1..];
    let tz_at = rest.rfind(['Z', 'z', '+', '-']).filter(|&i| i >= 8);
    let (clock, tz) = match tz_at {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let mut c = clock.split(':');
    let hh: f64 = c.next()?.parse().ok()?;
    let mm: f64 = c.next()?.parse().ok()?;
    let ss: f64 = c.next().unwrap_or("0").parse().ok()?;
    let offset = match tz {
        "" | "Z" | "z" => 0.0,
        t => {
            let sign = if t.starts_with('-') { -1.0 } else { 1.0 };
            let digits: String = t[1..].chars().filter(|ch| ch.is_ascii_digit()).collect();
            let h: f64 = digits.get(..2)?.parse().ok()?;
            let mi: f64 = digits.get(2..4).unwrap_or("0").parse().ok()?;
            sign * (h * 3600.0 + mi * 60.0)
        }
    };
    // Days from civil (Howard Hinnant).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + hh * 3600.0 + mm * 60.0 + ss - offset)
}

/// Maps every write of a range to the turn that made it.
pub fn map(repo: &Repo, writes: &[WriteView], t: &Transcript) -> Result<Mapping> {
    let n = writes.len();
    let mut out = Mapping {
        turns: vec![None; n],
        sub_writes: vec![Vec::new(); n],
        final_only: vec![false; n],
        notes: Vec::new(),
    };
    let last_turn = t.turns.len() as u32;
    // Every edit of the transcript, in order.
    let edits: Vec<(u32, &str, &Edit)> = t
        .turns
        .iter()
        .flat_map(|turn| {
            turn.file_changes
                .iter()
                .map(move |c| (turn.turn, c.path.as_str(), &c.edit))
        })
        .collect();
    let mut cursor: HashMap<String, usize> = HashMap::new();
    let mut replay_turn: Vec<Option<u32>> = vec![None; n];
    let mut replay_failures = 0usize;
    for (i, w) in writes.iter().enumerate() {
        for path in w.changed.iter().cloned() {
            let start = *cursor.get(&path).unwrap_or(&0);
            let candidates: Vec<usize> = (start..edits.len())
                .filter(|&k| same_file(edits[k].1, &path))
                .collect();
            if candidates.is_empty() {
                continue;
            }
            let text = |b: Option<std::rc::Rc<Vec<u8>>>| {
                b.map(|b| String::from_utf8_lossy(&b).into_owned())
            };
            let mut state = text(repo.file_in_tree(w.parent_tree, &path)?);
            let target = text(repo.file_in_tree(w.info.tree, &path)?);
            let mut states: Vec<(u32, Option<String>)> = Vec::new();
            let mut matched: Option<usize> = None;
            for &k in &candidates {
                match apply(state.as_deref(), edits[k].2) {
                    Ok(next) => {
                        state = next;
                        states.push((edits[k].0, state.clone()));
                        if state == target {
                            matched = Some(k);
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
            let anchored = path == w.anchored_path;
            match matched {
                Some(k) => {
                    cursor.insert(path.clone(), k + 1);
                    replay_turn[i] =
                        Some(replay_turn[i].map_or(edits[k].0, |t: u32| t.max(edits[k].0)));
                    if anchored && states.len() >= 2 {
                        out.sub_writes[i] = states
                            .into_iter()
                            .map(|(turn, content)| SubWrite { turn, content })
                            .collect();
                    }
                }
                None => {
                    replay_failures += 1;
                    if anchored && candidates.len() >= 2 {
                        out.final_only[i] = true;
                    }
                }
            }
        }
    }
    if replay_failures > 0 {
        out.notes.push(format!(
            "replaying the transcript's edits did not reproduce {replay_failures} file change(s); those writes are known at commit granularity only"
        ));
    }
    // Shell `git commit` calls, with the text they ran.
    let commit_calls: Vec<(u32, String)> = t
        .turns
        .iter()
        .flat_map(|turn| {
            turn.tool_calls.iter().filter_map(move |c| {
                let cmd = shell_command(&c.name, &c.arguments)?;
                cmd.contains("git commit").then_some((turn.turn, cmd))
            })
        })
        .collect();
    let turn_times: Vec<(u32, f64)> = t
        .turns
        .iter()
        .filter_map(|turn| Some((turn.turn, parse_time(turn.timestamp.as_deref()?)?)))
        .collect();
    let mut floor = 0u32;
    for (i, w) in writes.iter().enumerate() {
        let by_trailer = trailer(&w.info.message, "Sage-Turn")
            .first()
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|&v| v >= 1 && v <= last_turn)
            .map(|v| (v, MappedBy::Trailer));
        let by_aider = t
            .commits
            .iter()
            .find(|c| c.sha.len() >= 7 && w.info.id.hex().starts_with(&c.sha))
            .map(|c| (c.turn, MappedBy::AiderCommit));
        let by_replay = replay_turn[i].map(|v| (v, MappedBy::Replay));
        let summary = w.info.summary.trim();
        let by_command = (summary.chars().count() >= 8)
            .then(|| {
                commit_calls
                    .iter()
                    .find(|(turn, cmd)| *turn >= floor && cmd.contains(summary))
            })
            .flatten()
            .map(|(turn, _)| (*turn, MappedBy::CommitCommand));
        let by_time = turn_times
            .iter()
            .rfind(|(turn, at)| *turn >= floor && *at <= w.info.time as f64 + 1.0)
            .map(|(turn, _)| (*turn, MappedBy::Timestamp));
        let m = by_trailer
            .or(by_aider)
            .or(by_replay)
            .or(by_command)
            .or(by_time);
        if let Some((turn, _)) = m {
            floor = floor.max(turn);
        }
        out.turns[i] = m;
    }
    Ok(out)
}

/// The turns that count for the range (SPEC §3): from the user message that opened the task
/// of the first mapped write to the last turn before the next user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    pub first: u32,
    pub last: u32,
    /// The user message that opened the task (the default task text), secrets redacted.
    pub task: Option<String>,
    pub reason: String,
}

pub fn scope(t: &Transcript, mapping: &Mapping) -> Scope {
    let last_turn = t.turns.len() as u32;
    let users: Vec<&super::ContextMessage> =
        t.context.iter().filter(|m| m.role == "user").collect();
    let Some(first_write) = mapping.turns.iter().flatten().map(|(turn, _)| *turn).min() else {
        return Scope {
            first: 1,
            last: last_turn,
            task: users.first().map(|m| crate::redact::redact(&m.text).0),
            reason: "no write maps to a turn: every turn is in scope".into(),
        };
    };
    let opener = users.iter().rev().find(|m| m.before_turn <= first_write);
    let first = opener.map_or(1, |m| m.before_turn.max(1));
    let last_write = mapping
        .turns
        .iter()
        .flatten()
        .map(|(turn, _)| *turn)
        .max()
        .unwrap_or(first_write);
    let next_user = users
        .iter()
        .find(|m| m.before_turn > last_write)
        .map(|m| m.before_turn - 1);
    let last = next_user.unwrap_or(last_turn).max(last_write);
    let reason = match opener {
        Some(m) => format!(
            "turns {first}-{last}: from the user message before turn {} (the task of the first mapped write, turn {first_write}) to {}",
            m.before_turn,
            if next_user.is_some() {
                "the next user message"
            } else {
                "the end of the log"
            }
        ),
        None => format!(
            "turns {first}-{last}: no user message before the first mapped write (turn {first_write})"
        ),
    };
    Scope {
        first,
        last,
        task: opener.map(|m| crate::redact::redact(&m.text).0),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            parse_time("2026-03-23T13:26:37.614Z"),
            Some(1_774_272_397.614)
        );
        assert_eq!(
            parse_time("2026-03-23T15:26:37.614+02:00"),
            Some(1_774_272_397.614)
        );
        assert_eq!(
            parse_time("2025-01-27T22:44:56.900854").map(|v| v.floor()),
            Some(1_738_017_896.0)
        );
        assert_eq!(parse_time("nonsense"), None);
        assert!(same_file(
            "/home/me/shop/media/fetcher.py",
            "media/fetcher.py"
        ));
        assert!(same_file("./media/fetcher.py", "media/fetcher.py"));
        assert!(!same_file("media/other.py", "media/fetcher.py"));
    }
}
