//! Which turn made each write (docs/method.md#writes-and-turns), by, in order: a `Sage-Turn:`
//! trailer; the edit that wrote the anchored code — found by replaying the transcript's edits onto
//! the parent's file (`replay`), or, where replay diverges, the last edit whose new text holds the
//! anchored fragment (`fragment`); Aider's `> Commit <sha>` lines; replay of the commit's other
//! files; a `git commit` the agent ran; and timestamps, only inside the session's time span and
//! only for a session that touched the anchored file. A write nothing ties to a turn stays
//! unmapped, with the reason: a session about something else never receives it.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::Transcript;
use super::classify::shell_command;
use super::discover::trailer;
use super::replay::apply;
use super::turn::Edit;
use crate::error::Result;
use crate::git::{CommitInfo, Oid, Repo};

pub(crate) use crate::history::attribution::{MappedBy, Mapping, SubWrite, Unmapped, WriteMapping};

/// One write as mapping needs it.
pub(crate) struct WriteView<'a> {
    pub info: &'a CommitInfo,
    pub parent_tree: Oid,
    /// The anchored file's path in this write's snapshot.
    pub anchored_path: &'a str,
    /// The paths this write changed.
    pub changed: &'a [String],
}

/// What the finding says about the anchored code, for edit-level attribution.
pub(crate) struct Anchored<'a> {
    /// Whether the defect is present in a file's content (`None`: the file is absent).
    pub present: &'a dyn Fn(Option<&str>) -> bool,
    /// Whether a text holds the anchored fragment (for the fallback; `None` for a defence
    /// that is missing, which no edit's new text can show).
    pub holds: Option<&'a dyn Fn(&str) -> bool>,
}

pub(crate) fn same_file(transcript_path: &str, repo_path: &str) -> bool {
    // Called for every edit of every write: no allocation unless the log uses backslashes.
    let t: std::borrow::Cow<str> = if transcript_path.contains('\\') {
        transcript_path.replace('\\', "/").into()
    } else {
        transcript_path.into()
    };
    let t = t.trim_start_matches("./");
    // `a` is `b` or ends with `/b`.
    let under = |a: &str, b: &str| {
        a.len() > b.len() && a.ends_with(b) && a.as_bytes()[a.len() - b.len() - 1] == b'/'
    };
    t == repo_path || under(t, repo_path) || under(repo_path, t)
}

/// The text an edit leaves in the file: what an edit-level fallback can look for.
pub(crate) fn new_text(e: &Edit) -> String {
    match e {
        Edit::Replace { new, .. } => new.clone(),
        Edit::Write { content } => content.clone(),
        Edit::Lines { text, .. } => text.clone(),
        Edit::Fragment { text } => text.clone(),
        Edit::Patch { patch } => patch
            .lines()
            .filter(|l| !l.starts_with("+++"))
            .filter_map(|l| l.strip_prefix('+'))
            .collect::<Vec<_>>()
            .join("\n"),
        Edit::Delete | Edit::Opaque => String::new(),
    }
}

/// Seconds since the epoch of an RFC 3339 / ISO 8601 timestamp (naive ones taken as UTC).
pub(crate) fn parse_time(s: &str) -> Option<f64> {
    let s = s.trim();
    let ts = s.parse::<jiff::Timestamp>().ok().or_else(|| {
        // No offset: the logs that write such times write UTC.
        let dt = s.parse::<jiff::civil::DateTime>().ok()?;
        jiff::tz::Offset::UTC.to_timestamp(dt).ok()
    })?;
    Some(ts.as_nanosecond() as f64 / 1e9)
}

/// The trailer naming the turn that made a commit.
pub(crate) const TURN_TRAILER: &str = "Sage-Turn";

/// How far outside a session's first and last turn a commit may fall and still be mapped by
/// its time (the agent commits a little after its last edit; clocks differ a little).
const TIME_SLACK: f64 = 15.0 * 60.0;

/// What replaying the session's edits says of one write, before its turn is chosen.
#[derive(Debug, Clone, Default)]
struct Replayed {
    /// The turn of the commit's last edit replay needed (any of its files).
    replay_turn: Option<u32>,
    /// The turn of the edit that wrote the anchored code.
    anchor_turn: Option<(u32, MappedBy)>,
    /// The session's edits landed in the anchored file, but none on the anchored code:
    /// something else wrote it (a command, a generator, a person).
    not_written: bool,
    /// The write changed the anchored file and left the anchored code in it.
    holds_code: bool,
}

/// Maps every write of a range to the turn that made it.
pub(crate) fn map(
    repo: &Repo,
    writes: &[WriteView],
    t: &Transcript,
    anchored: &Anchored,
) -> Result<Mapping> {
    let n = writes.len();
    let mut out = Mapping {
        writes: vec![WriteMapping::default(); n],
        notes: Vec::new(),
    };
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
    let turn_time: HashMap<u32, f64> = t
        .turns
        .iter()
        .filter_map(|turn| Some((turn.turn, parse_time(turn.timestamp.as_deref()?)?)))
        .collect();
    let mut cursor: HashMap<String, usize> = HashMap::new();
    let mut reaches: HashMap<String, bool> = HashMap::new();
    let mut facts = vec![Replayed::default(); n];
    let mut replay_failures = 0usize;
    let text =
        |b: Option<std::rc::Rc<Vec<u8>>>| b.map(|b| String::from_utf8_lossy(&b).into_owned());
    for (i, w) in writes.iter().enumerate() {
        for path in w.changed.iter().cloned() {
            let start = *cursor.get(&path).unwrap_or(&0);
            let candidates: Vec<usize> = (start..edits.len())
                .filter(|&k| same_file(edits[k].1, &path))
                .collect();
            let is_anchored = path == w.anchored_path;
            // The committed file matters to a path some edit may have written (by name, or an
            // edit without one): replay, the fragment's holder and the time rule look nowhere
            // else. A session about other files skips the anchored file's every version.
            let reachable = !candidates.is_empty()
                || (is_anchored
                    && *reaches.entry(path.clone()).or_insert_with(|| {
                        edits
                            .iter()
                            .any(|(_, p, _)| p.is_empty() || same_file(p, &path))
                    }));
            let target = if !reachable {
                continue;
            } else {
                text(repo.file_in_tree(w.info.tree, &path)?)
            };
            if is_anchored && (anchored.present)(target.as_deref()) {
                facts[i].holds_code = true;
            }
            let Replay {
                matched,
                states,
                replayed,
                refused,
            } = if candidates.is_empty() {
                Replay::default()
            } else {
                let state = text(repo.file_in_tree(w.parent_tree, &path)?);
                // Made before the commit (by its author time: a rebase moves the other).
                let cutoff = w.info.author_time.min(w.info.time) as f64 + 1.0;
                let before_commit =
                    |k: usize| turn_time.get(&edits[k].0).is_some_and(|&at| at <= cutoff);
                replay(
                    &edits,
                    &candidates,
                    state,
                    target.as_deref(),
                    &before_commit,
                )
            };
            match matched {
                Some(k) => {
                    cursor.insert(path.clone(), k + 1);
                    facts[i].replay_turn = Some(
                        facts[i]
                            .replay_turn
                            .map_or(edits[k].0, |t: u32| t.max(edits[k].0)),
                    );
                    if is_anchored {
                        // The edit after which the defect is there for good is the write.
                        let present: Vec<bool> = states
                            .iter()
                            .map(|(_, c)| (anchored.present)(c.as_deref()))
                            .collect();
                        let from = (0..present.len()).rev().take_while(|&j| present[j]).last();
                        let turn = from.map_or(edits[k].0, |j| states[j].0);
                        facts[i].anchor_turn = Some((turn, MappedBy::Replay));
                        out.writes[i].sub_writes = states
                            .into_iter()
                            .map(|(turn, content)| SubWrite { turn, content })
                            .collect();
                    }
                }
                None => {
                    if !candidates.is_empty() {
                        replay_failures += 1;
                    }
                    if is_anchored && !candidates.is_empty() {
                        let why = match (&refused, &replayed) {
                            (Some((turn, e)), _) => {
                                format!("the edit of turn {turn} does not apply: {e}")
                            }
                            (None, Some(state)) => divergence(
                                state.as_deref().unwrap_or(""),
                                target.as_deref().unwrap_or(""),
                            ),
                            (None, None) => String::new(),
                        };
                        if !why.is_empty() {
                            out.notes.push(format!(
                                "replaying the session's edits of {path} did not give {}'s file: {why}",
                                w.info.id.short()
                            ));
                        }
                    }
                    if is_anchored && (anchored.present)(target.as_deref()) {
                        out.writes[i].final_only = candidates.len() >= 2;
                        if let Some(k) =
                            fragment_holder(&edits, &path, start, w, &turn_time, anchored)
                        {
                            facts[i].anchor_turn = Some((edits[k].0, MappedBy::Fragment));
                            cursor.insert(path.clone(), k + 1);
                        } else if let (Some(target), Some(holds)) =
                            (target.as_deref(), anchored.holds)
                            && elsewhere(&edits, start, w, &turn_time, target, holds)
                        {
                            facts[i].not_written = true;
                        }
                    }
                }
            }
        }
    }
    if replay_failures > 0 {
        out.notes.push(format!(
            "replaying the transcript's edits did not reproduce {replay_failures} file change(s); those writes are known at commit granularity only, or by the edit that holds the anchored fragment"
        ));
    }
    choose_turns(writes, t, &edits, &turn_time, anchored, &facts, &mut out);
    Ok(out)
}

/// What replaying a file's edits inside one commit gave.
#[derive(Debug, Default)]
struct Replay {
    /// The edit after which the file was as the commit has it.
    matched: Option<usize>,
    /// The file after each edit up to that one (from the last whole-file write on): the
    /// commit's sub-writes.
    states: Vec<(u32, Option<String>)>,
    /// Where replay left the file.
    replayed: Option<Option<String>>,
    /// The edit that would not apply, and why.
    refused: Option<(u32, String)>,
}

/// Replays the edits `candidates` (indexes into `edits`) onto `state`, looking for `target`.
/// Past the first match it goes on only through edits made before the commit
/// (`before_commit`): a later one that leaves the file as committed is the commit's.
fn replay(
    edits: &[(u32, &str, &Edit)],
    candidates: &[usize],
    mut state: Option<String>,
    target: Option<&str>,
    before_commit: &dyn Fn(usize) -> bool,
) -> Replay {
    let mut out = Replay::default();
    let mut kept = 0usize;
    for &k in candidates {
        if out.matched.is_some() && !before_commit(k) {
            break;
        }
        match apply(state.as_deref(), edits[k].2) {
            Ok(next) => {
                state = next;
                out.states.push((edits[k].0, state.clone()));
                if state.as_deref() == target {
                    out.matched = Some(k);
                    kept = out.states.len();
                    if !before_commit(k) {
                        break;
                    }
                }
            }
            Err(e) => {
                out.refused = Some((edits[k].0, e.to_string()));
                break;
            }
        }
    }
    out.replayed = Some(state);
    if out.matched.is_some() {
        out.states.truncate(kept);
        // A whole-file write does not depend on what came before it: the commit's content
        // starts there, and so do its edits.
        if let Some(j) = candidates[..kept]
            .iter()
            .rposition(|&c| matches!(edits[c].2, Edit::Write { .. }))
        {
            out.states.drain(..j);
        }
    }
    out
}

/// Each write's turn, from the strongest evidence there is (docs/method.md#writes-and-turns):
/// a `Sage-Turn:` trailer, the edit that wrote the anchored code, Aider's commit, replay, the
/// session's `git commit` call, then the time; or why none could be given.
fn choose_turns(
    writes: &[WriteView],
    t: &Transcript,
    edits: &[(u32, &str, &Edit)],
    turn_time: &HashMap<u32, f64>,
    anchored: &Anchored,
    facts: &[Replayed],
    out: &mut Mapping,
) {
    let last_turn = t.turns.len() as u32;
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
    let mut times: Vec<(u32, f64)> = turn_time.iter().map(|(&t, &at)| (t, at)).collect();
    times.sort_by_key(|(turn, _)| *turn);
    let span =
        times
            .iter()
            .map(|(_, at)| *at)
            .fold(None, |acc: Option<(f64, f64)>, at| match acc {
                None => Some((at, at)),
                Some((lo, hi)) => Some((lo.min(at), hi.max(at))),
            });
    let touches = |path: &str| edits.iter().any(|(_, p, _)| same_file(p, path));
    let mut floor = 0u32;
    for (i, w) in writes.iter().enumerate() {
        let by_trailer = trailer(&w.info.message, TURN_TRAILER)
            .first()
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|&v| v >= 1 && v <= last_turn)
            .map(|v| (v, MappedBy::Trailer));
        let by_aider = t
            .commits
            .iter()
            .find(|c| c.sha.len() >= 7 && w.info.id.hex().starts_with(&c.sha))
            .map(|c| (c.turn, MappedBy::AiderCommit));
        let touched = touches(w.anchored_path);
        let by_replay = facts[i].replay_turn.map(|v| (v, MappedBy::Replay));
        let summary = w.info.summary.trim();
        let by_command = (summary.chars().count() >= 8)
            .then(|| {
                commit_calls
                    .iter()
                    .find(|(turn, cmd)| *turn >= floor && cmd.contains(summary))
            })
            .flatten()
            .map(|(turn, _)| (*turn, MappedBy::CommitCommand));
        let at = commit_time(w, span);
        let in_span = span.is_some_and(|(lo, hi)| at >= lo - TIME_SLACK && at <= hi + TIME_SLACK);
        // When the commit left the anchored code in the file and every edit of that file
        // shows its text and none holds the code, the log says the session did not write it:
        // a time proves nothing then.
        let text_unknown = !facts[i].holds_code
            || anchored.holds.is_none()
            || edits.iter().any(|(_, p, e)| {
                (p.is_empty() || same_file(p, w.anchored_path)) && matches!(e, Edit::Opaque)
            });
        let by_time = (in_span && touched && text_unknown)
            .then(|| {
                times
                    .iter()
                    .rfind(|(turn, t)| *turn >= floor && *t <= at + 1.0)
                    .map(|(turn, _)| (*turn, MappedBy::Timestamp))
            })
            .flatten();
        let (by_replay, by_command, by_time) = if facts[i].not_written {
            (None, None, None)
        } else {
            (by_replay, by_command, by_time)
        };
        let m = by_trailer
            .or(facts[i].anchor_turn)
            .or(by_aider)
            .or(by_replay)
            .or(by_command)
            .or(by_time);
        if let Some((turn, _)) = m {
            floor = floor.max(turn);
        } else {
            out.writes[i].unmapped = Some(if facts[i].not_written {
                Unmapped::OtherLines {
                    path: w.anchored_path.to_string(),
                }
            } else {
                unmapped_reason(w, edits, span, touched)
            });
        }
        out.writes[i].turn = m;
    }
}

/// Where replay diverged (an edit changed before it was accepted, a failed edit, a human
/// touch) or could not start: the edit whose new text holds the anchored fragment wrote it —
/// an edit of that file, or one whose file the log does not name. With timestamps, the last
/// such edit before the commit; without, the first after the edits earlier commits used.
fn fragment_holder(
    edits: &[(u32, &str, &Edit)],
    path: &str,
    start: usize,
    w: &WriteView,
    turn_time: &HashMap<u32, f64>,
    anchored: &Anchored,
) -> Option<usize> {
    let holds = anchored.holds?;
    let holders: Vec<usize> = (start..edits.len())
        .filter(|&k| edits[k].1.is_empty() || same_file(edits[k].1, path))
        .filter(|&k| holds(&new_text(edits[k].2)))
        .collect();
    let timed = holders.iter().any(|k| turn_time.contains_key(&edits[*k].0));
    if !timed {
        return holders.first().copied();
    }
    // The last holder before the commit. A rebased or amended commit's committer time is
    // later than the work: its author time is tried first, the committer time after.
    let before = |cutoff: i64| {
        holders.iter().copied().rfind(|&k| {
            turn_time
                .get(&edits[k].0)
                .is_none_or(|&at| at <= cutoff as f64 + TIME_SLACK)
        })
    };
    before(w.info.author_time.min(w.info.time)).or_else(|| before(w.info.time))
}

/// The commit's time for placing it in a session: its committer time, unless only its
/// author time falls in the session's span (a commit rebased or cherry-picked later).
fn commit_time(w: &WriteView, span: Option<(f64, f64)>) -> f64 {
    let near =
        |at: f64| span.is_some_and(|(lo, hi)| at >= lo - TIME_SLACK && at <= hi + TIME_SLACK);
    let (committed, authored) = (w.info.time as f64, w.info.author_time as f64);
    if !near(committed) && near(authored) {
        authored
    } else {
        committed
    }
}

/// Where the replayed file first differs from the committed one, in a line: the line number
/// and both sides, clipped.
fn divergence(replayed: &str, committed: &str) -> String {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(replayed, committed);
    let clip = |s: &str| {
        let s = s.trim_end_matches(['\n', '\r']).trim();
        match s.char_indices().nth(80) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s.to_string(),
        }
    };
    let mut line = 1usize;
    let (mut gone, mut came) = (None, None);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Equal if gone.is_none() && came.is_none() => line += 1,
            ChangeTag::Equal => break,
            ChangeTag::Delete if gone.is_none() => gone = Some(clip(change.value())),
            ChangeTag::Insert if came.is_none() => came = Some(clip(change.value())),
            _ => {}
        }
    }
    match (gone, came) {
        (Some(g), Some(c)) if g == c => format!("at line {line} the line endings differ"),
        (Some(g), Some(c)) => format!("at line {line} the edits give `{g}`, the commit has `{c}`"),
        (Some(g), None) => format!("at line {line} the edits give `{g}`, which the commit lacks"),
        (None, Some(c)) => format!("at line {line} the commit has `{c}`, which no edit wrote"),
        (None, None) => "they differ only in line endings".into(),
    }
}

/// Whether the session's edits of the anchored file (or ones that name no file) demonstrably
/// landed in it — their new text, two lines or more, is in the committed file — and none of
/// them covers a line of the anchored code: then something else wrote that code (a command, a
/// generator, a person) and the commit's other edits say nothing about it.
fn elsewhere(
    edits: &[(u32, &str, &Edit)],
    start: usize,
    w: &WriteView,
    turn_time: &HashMap<u32, f64>,
    target: &str,
    holds: &dyn Fn(&str) -> bool,
) -> bool {
    let commit_time = w.info.time as f64;
    // Byte spans of the committed file's lines that hold the anchored code.
    let mut spans = Vec::new();
    let mut at = 0;
    for line in target.split_inclusive('\n') {
        if holds(line) {
            spans.push((at, at + line.len()));
        }
        at += line.len();
    }
    if spans.is_empty() {
        return false;
    }
    let mut landed = false;
    for &(turn, path, e) in &edits[start..] {
        if !(path.is_empty() || same_file(path, w.anchored_path)) {
            continue;
        }
        if turn_time
            .get(&turn)
            .is_some_and(|&t| t > commit_time + TIME_SLACK)
        {
            continue;
        }
        let text = new_text(e);
        // Too short to say where it landed.
        if !text.trim().contains('\n') || text.split_whitespace().map(str::len).sum::<usize>() < 20
        {
            continue;
        }
        for (p, _) in target.match_indices(text.as_str()) {
            landed = true;
            if spans.iter().any(|&(a, b)| p < b && a < p + text.len()) {
                return false;
            }
        }
    }
    landed
}

/// Why a write stays unmapped, in a line a reader can act on.
fn unmapped_reason(
    w: &WriteView,
    edits: &[(u32, &str, &Edit)],
    span: Option<(f64, f64)>,
    touched: bool,
) -> Unmapped {
    let edits_here = w
        .changed
        .iter()
        .any(|p| edits.iter().any(|(_, q, _)| same_file(q, p)));
    let at = commit_time(w, span);
    if edits.is_empty() {
        return Unmapped::NoEdits;
    }
    if !edits_here {
        return Unmapped::NoEditHere;
    }
    match span {
        Some((lo, _)) if at < lo - TIME_SLACK => Unmapped::BeforeSession { secs: lo - at },
        Some((_, hi)) if at > hi + TIME_SLACK => Unmapped::AfterSession { secs: at - hi },
        _ if !touched => Unmapped::NeverEdited {
            path: w.anchored_path.to_string(),
        },
        _ => Unmapped::NotReproduced,
    }
}

/// The turns that count for the range (docs/method.md#task-scope): from the user message that
/// opened the task of the first mapped write to the last turn before the next user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Scope {
    pub first: u32,
    pub last: u32,
    /// The user message that opened the task (the default task text), secrets redacted.
    pub task: Option<String>,
    pub reason: String,
}

/// `focus` is the turn that wrote the code (the introducing write's, else the delivered
/// repair's): the task is the one that holds it; without it, the first mapped write's.
pub(crate) fn scope(t: &Transcript, mapping: &Mapping, focus: Option<u32>) -> Scope {
    let last_turn = t.turns.len() as u32;
    let users: Vec<&super::ContextMessage> =
        t.context.iter().filter(|m| m.role == "user").collect();
    let mapped_first = mapping
        .writes
        .iter()
        .filter_map(|w| w.turn)
        .map(|(turn, _)| turn)
        .min();
    let Some(first_write) = focus.or(mapped_first) else {
        return Scope {
            first: 1,
            last: last_turn,
            task: users.first().map(|m| crate::redact::redact(&m.text).0),
            reason: "no write maps to a turn: every turn is in scope".into(),
        };
    };
    let opener = users.iter().rev().find(|m| m.before_turn <= first_write);
    let first = opener.map_or(1, |m| m.before_turn.max(1));
    // The task's last turn: its writes end before the next user message after the focus.
    let task_end = users
        .iter()
        .find(|m| m.before_turn > first_write)
        .map(|m| m.before_turn);
    let last_write = mapping
        .writes
        .iter()
        .filter_map(|w| w.turn)
        .map(|(turn, _)| turn)
        .filter(|&turn| turn >= first && task_end.is_none_or(|end| turn < end))
        .max()
        .unwrap_or(first_write)
        .max(first_write);
    let next_user = users
        .iter()
        .find(|m| m.before_turn > last_write)
        .map(|m| m.before_turn - 1);
    let last = next_user.unwrap_or(last_turn).max(last_write);
    let reason = match opener {
        Some(m) => format!(
            "turns {first}-{last}: from the user message before turn {} (the task of {}, turn {first_write}) to {}",
            m.before_turn,
            if focus.is_some() {
                "the write that made the anchored code"
            } else {
                "the first mapped write"
            },
            if next_user.is_some() {
                "the next user message"
            } else {
                "the end of the log"
            }
        ),
        None => {
            format!("turns {first}-{last}: no user message before the write (turn {first_write})")
        }
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
        // The shapes logs write: a space for T, no seconds, a lower-case z, an offset
        // without colon, a negative one.
        for (s, want) in [
            ("2026-03-23 13:26:37Z", 1_774_272_397.0),
            ("2026-03-23T13:26Z", 1_774_272_360.0),
            ("2026-03-23t13:26:37z", 1_774_272_397.0),
            ("2026-03-23T18:56:37+0530", 1_774_272_397.0),
            ("2026-03-23T09:26:37-04:00", 1_774_272_397.0),
            ("  2026-03-23T13:26:37Z\n", 1_774_272_397.0),
        ] {
            assert_eq!(parse_time(s), Some(want), "{s}");
        }
        assert!(same_file(
            "/home/me/shop/media/fetcher.py",
            "media/fetcher.py"
        ));
        assert!(same_file("./media/fetcher.py", "media/fetcher.py"));
        assert!(!same_file("media/other.py", "media/fetcher.py"));
        assert!(same_file("C:\\shop\\media\\fetcher.py", "media/fetcher.py"));
        assert!(same_file("fetcher.py", "media/fetcher.py"));
        assert!(!same_file("xmedia/fetcher.py", "media/fetcher.py"));
        assert!(!same_file("etcher.py", "media/fetcher.py"));
        assert!(!same_file("", "media/fetcher.py"));
        assert_eq!(
            divergence("a\nb\nc\n", "a\nB\nc\n"),
            "at line 2 the edits give `b`, the commit has `B`"
        );
        assert_eq!(
            divergence("a\n", "a\nlog(x)\n"),
            "at line 2 the commit has `log(x)`, which no edit wrote"
        );
        assert_eq!(
            divergence("a\nb\n", "a\n"),
            "at line 2 the edits give `b`, which the commit lacks"
        );
    }
}
