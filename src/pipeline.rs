//! The stages wired together: range → provenance → session → mapping, shared by the commands.

use crate::error::Result;
use crate::git::{CommitInfo, Oid, Repo};
use crate::history::provenance::{self, Provenance};
use crate::history::range::Range;
use crate::report::clip;
use crate::report::json::SessionJson;
use crate::transcript::Transcript;
use crate::transcript::choose;
use crate::transcript::discover::{self, Found};
use crate::transcript::mapping::{self, Mapping, Scope, WriteView};
use crate::warning::Warning;

/// How hard to look for a session when none is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Discovery {
    /// Every place docs/session-format.md#which-session lists (trailers need every commit's
    /// message).
    Full,
    /// Only places whose change shows between base and tip trees (no commit reads):
    /// `.sage/sessions/`, `.aider.chat.history.md`, `.specstory/history/`; everything for
    /// ranges of at most `FULL_DISCOVERY_MAX` commits.
    Cheap,
}

/// Ranges up to this many commits get full discovery even in cheap mode (it costs a diff and
/// a commit read per commit).
pub(crate) const FULL_DISCOVERY_MAX: usize = 500;

/// A session mapped onto a range.
pub(crate) struct Session {
    pub found: Found,
    pub transcript: Transcript,
    pub mapping: Mapping,
    pub scope: Scope,
    /// Why this session was chosen among those found.
    pub why: choose::Because,
    /// Other sessions that were found but not used, with what they hold.
    pub others: Vec<choose::Other>,
}

impl Session {
    pub(crate) fn json(&self) -> SessionJson {
        SessionJson {
            source: self.found.name.clone(),
            found_by: self.found.found_by.clone(),
            format: self.transcript.format.name().to_string(),
            turns: self.transcript.turns.len(),
            scope: self.scope.clone(),
            skipped_lines: self.transcript.skipped.clone(),
            chosen_because: Some(self.why.clone()),
            considered: self.others.clone(),
            agent: self.transcript.agent.clone(),
            model: self.transcript.model.clone(),
        }
    }

    /// What the report must say about lines of the session it could not use.
    fn read_warnings(&self) -> Vec<Warning> {
        let t = &self.transcript;
        let mut out = Vec::new();
        if !t.skipped.is_empty() {
            out.push(Warning::SkippedLines {
                session: self.found.name.clone(),
                count: t.skipped.len(),
                shown: t
                    .skipped
                    .iter()
                    .take(3)
                    .map(|s| (s.line, s.reason.clone()))
                    .collect(),
            });
        }
        out.extend(t.warnings.iter().map(|w| Warning::Session {
            session: self.found.name.clone(),
            said: w.clone(),
        }));
        out
    }
}

/// What discovery and mapping look for in a range's commit messages: a message that mentions
/// none of these is not kept (`Repo::commit_brief`).
const MESSAGE_KEYS: [&str; 4] = [
    discover::SESSION_TRAILER,
    discover::CHECKPOINT_TRAILER,
    discover::AIDER_CONVERSATION,
    mapping::TURN_TRAILER,
];

/// Finds the range's session (or reads the named one), maps writes to turns, and returns the
/// provenance refined by the mapping (given by value, returned as a new value). A discovered session that cannot be parsed becomes a note;
/// a named one that cannot is an error.
pub(crate) fn attach_session(
    repo: &Repo,
    range: &Range,
    mut prov: Provenance,
    named: Option<&str>,
    discovery: Discovery,
    early: Option<Vec<CommitInfo>>,
) -> Result<(Provenance, Option<Session>)> {
    if named.is_none()
        && discovery == Discovery::Cheap
        && range.commits.len() > FULL_DISCOVERY_MAX
        && !cheap_paths_changed(repo, range)?
    {
        return Ok((prov, None));
    }
    let t = crate::timing::stage("commit infos");
    let infos = briefs(repo, range, early)?;
    drop(t);
    let t = crate::timing::stage("discover sessions");
    let parent_trees = parent_trees(repo, range)?;
    // Discovery looks at what every commit changed in the places sessions are kept; a named
    // session needs only the paths it edits (below, once it is read).
    let known = match named {
        Some(_) => None,
        None => {
            let _t = crate::timing::stage("discover: known places");
            Some(known_changes(repo, range, &parent_trees)?)
        }
    };
    let (candidates, found_notes) = match (named, &known) {
        (Some(s), _) => (vec![discover::explicit(Some(repo), s)?], Vec::new()),
        (None, Some(known)) => discover::discover(repo, &infos, known)?,
        (None, None) => (Vec::new(), Vec::new()),
    };
    prov.notes.extend(found_notes);
    if candidates.is_empty() {
        return Ok((prov, None));
    }
    drop(t);
    let t = crate::timing::stage("parse session");
    let (present, holds) = anchored_checks(&prov)?;
    let holds_fn = |text: &str| {
        holds
            .as_ref()
            .is_some_and(|m| m.defect_present(Some(text.as_bytes())))
    };
    let holds_dyn = holds.as_ref().map(|_| &holds_fn as &dyn Fn(&str) -> bool);
    let earlier = || -> Result<(Vec<Found>, Vec<String>)> {
        let mut infos = Vec::new();
        let mut at = Some(range.base);
        while let Some(id) = at.filter(|_| infos.len() < EARLIER_COMMITS) {
            let info = repo.commit_info(id)?;
            at = info.parents.first().copied();
            infos.push(info);
        }
        discover::earlier_checkpoints(repo, &infos)
    };
    let question = choose::Question {
        introducing: prov.introducing.map(|i| prov.writes[i].commit),
        paths: prov
            .writes
            .iter()
            .map(|w| w.snapshot.path.clone())
            .chain(std::iter::once(prov.file.clone()))
            .collect(),
        file: &prov.file,
        named: named.is_some(),
        holds: holds_dyn,
    };
    let (chosen, notes) = choose::choose(&question, candidates, earlier)?;
    prov.notes.extend(notes);
    let Some(choose::Chosen {
        found,
        transcript,
        why,
        others,
    }) = chosen
    else {
        return Ok((prov, None));
    };
    let changed = session_changes(repo, range, &prov, &parent_trees, &transcript)?;
    let views: Vec<WriteView> = infos
        .iter()
        .enumerate()
        .map(|(i, info)| WriteView {
            info,
            parent_tree: parent_trees[i],
            anchored_path: prov.writes[i].snapshot.path.as_str(),
            changed: &changed[i],
        })
        .collect();
    drop(t);
    let t = crate::timing::stage("map writes to turns");
    let anchored = mapping::Anchored {
        present: &|c: Option<&str>| present.defect_present(c.map(str::as_bytes)),
        holds: holds_dyn,
    };
    let mapping = mapping::map(repo, &views, &transcript, &anchored)?;
    drop(t);
    let prov = provenance::attribute(repo, prov, &mapping)?;
    // The task is the one that wrote the code: scoped around the introducing write's turn
    // (else the delivered repair's), not the commit's last edit.
    let focus = prov
        .introducing
        .and_then(|i| prov.writes[i].turn)
        .or_else(|| {
            prov.writes
                .iter()
                .filter(|w| w.agent)
                .filter_map(|w| w.turn)
                .max()
        });
    let scope = mapping::scope(&transcript, &mapping, focus);
    let session = Session {
        found,
        transcript,
        mapping,
        scope,
        why,
        others,
    };
    Ok((prov, Some(session)))
}

/// What discovery and mapping need of each of `range`'s commits (`Repo::commit_brief`), in
/// order; those read `early` (while provenance walked the history) are taken as they are.
fn briefs(repo: &Repo, range: &Range, early: Option<Vec<CommitInfo>>) -> Result<Vec<CommitInfo>> {
    let same = |e: &[CommitInfo]| {
        e.len() == range.commits.len() && e.iter().zip(&range.commits).all(|(i, c)| i.id == c.id)
    };
    let mut known: std::collections::HashMap<Oid, CommitInfo> = match early {
        Some(e) if same(&e) => return Ok(e),
        Some(e) => e.into_iter().map(|i| (i.id, i)).collect(),
        None => Default::default(),
    };
    // The walk grew the range by a merged side, or nothing was read early.
    let missing: Vec<Oid> = range
        .commits
        .iter()
        .map(|c| c.id)
        .filter(|id| !known.contains_key(id))
        .collect();
    let read = crate::history::parallel::map_chunks(repo, missing.len(), |repo, r| {
        read_briefs(repo, &missing[r])
    })?;
    known.extend(read.into_iter().map(|i| (i.id, i)));
    range
        .commits
        .iter()
        .map(|c| {
            known.remove(&c.id).ok_or_else(|| {
                crate::error::Error::env(format!("commit {} was not read", c.id.short()))
            })
        })
        .collect()
}

/// [`Repo::commit_brief`] of each commit.
fn read_briefs(repo: &Repo, ids: &[Oid]) -> Result<Vec<CommitInfo>> {
    ids.iter()
        .map(|&id| repo.commit_brief(id, &MESSAGE_KEYS))
        .collect()
}

/// Whether a long range changed any of the places sessions are usually committed to: when it
/// did not, the cheap discovery of `provenance` looks no further.
fn cheap_paths_changed(repo: &Repo, range: &Range) -> Result<bool> {
    let base_tree = repo.tree_of(range.base)?;
    let tip_tree = range.commits.last().map_or(base_tree, |c| c.tree);
    use crate::transcript::discover::{AIDER_HISTORY, SESSION_DIRS};
    for p in SESSION_DIRS.iter().chain([&AIDER_HISTORY]) {
        if repo.path_id(base_tree, p)? != repo.path_id(tip_tree, p)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The tree each write is compared against: its own first parent's, so a merged side's
/// commits follow their branch, not the first-parent commit listed before them.
fn parent_trees(repo: &Repo, range: &Range) -> Result<Vec<crate::git::Oid>> {
    let base_tree = repo.tree_of(range.base)?;
    let mut trees = Vec::with_capacity(range.commits.len());
    for (i, c) in range.commits.iter().enumerate() {
        let t = match c.first_parent {
            Some(p) if i > 0 && range.commits[i - 1].id == p => range.commits[i - 1].tree,
            Some(p) if p == range.base => base_tree,
            Some(p) => repo.tree_of(p)?,
            None => base_tree,
        };
        trees.push(t);
    }
    Ok(trees)
}

/// What a path named in a commit's first parent and in the commit (`None`: nothing there).
type Change = (Option<crate::git::Oid>, Option<crate::git::Oid>);

/// The commits of the range that changed what `place` names (a file, or with `dir` a folder's
/// tree), with its id before and after: git's changed-path filters rule most commits out,
/// the rest cost a remembered path lookup in their tree and their first parent's.
fn changes_at(
    repo: &Repo,
    range: &Range,
    parent_trees: &[crate::git::Oid],
    place: &str,
    dir: bool,
) -> Result<Vec<(usize, Change)>> {
    use crate::git::PathLookup;
    let lookup = || match dir {
        true => PathLookup::dir(place),
        false => PathLookup::new(place),
    };
    let n = range.commits.len();
    let untouched = provenance::filtered_out(repo, range, n, place);
    let untouched = |i: usize| untouched.get(i).copied().unwrap_or(false);
    let maybe: Vec<usize> = (0..n).filter(|&i| !untouched(i)).collect();
    // Only what the filters cannot rule out is looked up, in its own tree alone: a parent
    // holds what the commit before it left (looked up, or carried past commits the filters
    // rule out). Looking up both sides cost twice the trees where a top-level name's filter
    // says "maybe" for half of all commits (ansible's `.aider.chat.history.md`).
    let own = crate::history::parallel::map_chunks(repo, maybe.len(), |repo, r| {
        let mut look = lookup();
        r.map(|k| repo.blob_at(&mut look, range.commits[maybe[k]].tree))
            .collect()
    })?;
    let mut own = own.into_iter();
    let mut look = lookup();
    let mut held: Vec<Option<crate::git::Oid>> = Vec::with_capacity(n);
    let mut out = Vec::new();
    for (i, c) in range.commits.iter().enumerate() {
        let before = match c.first_parent {
            Some(p) if i > 0 && range.commits[i - 1].id == p => held[i - 1],
            _ => repo.blob_at(&mut look, parent_trees[i])?,
        };
        let now = match untouched(i) {
            true => before,
            false => own.next().unwrap_or(before),
        };
        if now != before {
            out.push((i, (before, now)));
        }
        held.push(now);
    }
    Ok(out)
}

/// What each commit of the range changed in the places sessions are committed to: files under
/// `SESSION_DIRS`, and Aider histories. Only those places are looked at, not every path of
/// every commit: git's changed-path filters rule most commits out, the rest cost a lookup of
/// each place, and a folder that changed is compared with its parent's version alone.
fn known_changes(
    repo: &Repo,
    range: &Range,
    parent_trees: &[crate::git::Oid],
) -> Result<Vec<Vec<String>>> {
    use crate::transcript::discover::{AIDER_HISTORY, SESSION_DIRS};
    let n = range.commits.len();
    let base_tree = repo.tree_of(range.base)?;
    let tip_tree = range.commits.last().map_or(base_tree, |c| c.tree);
    let mut places: Vec<(String, bool)> =
        SESSION_DIRS.iter().map(|d| (d.to_string(), true)).collect();
    places.push((AIDER_HISTORY.to_string(), false));
    let nested = format!("/{AIDER_HISTORY}");
    for tree in [tip_tree, base_tree] {
        for f in repo.file_paths(tree)? {
            if f.ends_with(&nested) && !places.iter().any(|(p, _)| *p == f) {
                places.push((f, false));
            }
        }
    }
    let mut out = vec![Vec::new(); n];
    for (place, dir) in &places {
        for (i, (old, new)) in changes_at(repo, range, parent_trees, place, *dir)? {
            match dir {
                true => out[i].extend(repo.changed_files_in(old, new, &format!("{place}/"))?),
                false => out[i].push(place.clone()),
            }
        }
    }
    // In git's order within a commit, as a diff of the whole tree would list them.
    for paths in &mut out {
        paths.sort();
    }
    Ok(out)
}

/// What each commit changed that mapping a named session can use: the anchored file where
/// the write changed it, and the files of the tip or the base that the session edits. The
/// other paths a commit changed match no edit, so they are not listed, and a long range costs
/// a lookup of those few paths per commit (none where git's changed-path filters rule a
/// commit out) instead of a diff of every commit.
fn session_changes(
    repo: &Repo,
    range: &Range,
    prov: &Provenance,
    parent_trees: &[crate::git::Oid],
    transcript: &Transcript,
) -> Result<Vec<Vec<String>>> {
    let edited: std::collections::BTreeSet<&str> = transcript
        .turns
        .iter()
        .flat_map(|t| &t.file_changes)
        .map(|c| c.path.as_str())
        .filter(|p| !p.is_empty())
        .collect();
    let mut files: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    if !edited.is_empty() {
        let base_tree = repo.tree_of(range.base)?;
        let tip_tree = range.commits.last().map_or(base_tree, |c| c.tree);
        for tree in [tip_tree, base_tree] {
            for f in repo.file_paths(tree)? {
                if edited.iter().any(|e| mapping::same_file(e, &f)) {
                    files.insert(f);
                }
            }
        }
    }
    let mut out: Vec<Vec<String>> = prov
        .writes
        .iter()
        .map(|w| match w.changed {
            true => vec![w.snapshot.path.clone()],
            false => Vec::new(),
        })
        .collect();
    for f in files {
        for (i, _) in changes_at(repo, range, parent_trees, &f, false)? {
            if !out[i].contains(&f) {
                out[i].push(f.clone());
            }
        }
    }
    Ok(out)
}

/// How many commits before the range are searched for a checkpoint whose session wrote the
/// anchored code, when none of the range's does.
const EARLIER_COMMITS: usize = 10;

/// The finding as mapping needs it: whether a file holds the defect, and (for code that is
/// there, not a defence that is missing) whether an edit's new text holds the fragment.
fn anchored_checks(
    prov: &Provenance,
) -> Result<(
    crate::history::matching::Matcher,
    Option<crate::history::matching::Matcher>,
)> {
    use crate::anchor::AnchorKind;
    use crate::history::matching::Matcher;
    let (present, holds) = match &prov.pattern {
        Some(p) => (
            Matcher::pattern(p, prov.kind, "anchor")?,
            Matcher::pattern(p, AnchorKind::Present, "anchor")?,
        ),
        None => (
            Matcher::fragments(&prov.fragments, prov.kind, "anchor")?,
            Matcher::fragments(&prov.fragments, AnchorKind::Present, "anchor")?,
        ),
    };
    Ok((present, (prov.kind == AnchorKind::Present).then_some(holds)))
}

/// Turns that touched the anchored file, or code that uses it: they edited it, or their
/// message, tool calls or edits name it or import its module.
fn touches_anchor(t: &Transcript, anchored: &str) -> std::collections::HashSet<u32> {
    let base = anchored.rsplit('/').next().unwrap_or(anchored);
    let stem = base.split('.').next().unwrap_or(base);
    let module = anchored.trim_end_matches(".py").replace('/', ".");
    let mentions = |s: &str| {
        s.contains(base)
            || (!module.is_empty() && s.contains(&module))
            || (stem.len() > 3
                && (s.contains(&format!("import {stem}")) || s.contains(&format!("{stem}."))))
    };
    t.turns
        .iter()
        .filter(|turn| {
            turn.file_changes.iter().any(|c| {
                c.path == anchored || c.path.ends_with(&format!("/{anchored}")) || {
                    let diff = serde_json::to_string(&c.edit).unwrap_or_default();
                    mentions(&diff)
                }
            }) || mentions(&turn.text)
                || turn
                    .tool_calls
                    .iter()
                    .any(|c| mentions(&c.arguments.to_string()))
        })
        .map(|turn| turn.turn)
        .collect()
}

/// What `blame-origin` needs beyond the range.
pub(crate) struct BlameRequest<'a> {
    pub anchor: &'a crate::anchor::Anchor,
    pub session: Option<&'a str>,
    pub judge: crate::judge::run::Options,
    pub levers: crate::origin::Levers,
    pub judge_sees_anchor: bool,
    pub unconfirmed: bool,
    pub templates_dir: Option<std::path::PathBuf>,
    /// List every write in `provenance.writes[]`, not only those that touched the file.
    pub all_writes: bool,
    /// `--confirm-with`: a judge that re-scores the turns a close call depends on.
    pub confirm_with: Option<crate::judge::backends::Spec>,
    /// The user named the CWE (`--cwe`): it stands, whatever the task says.
    pub cwe_given: bool,
    /// The language the report is read in: its recommendation is written in it too.
    pub lang: crate::lang::Lang,
}

/// The finding as the judge may see it with `--judge-sees-anchor`.
fn anchor_for_judge(a: &crate::anchor::Anchor, fragments: &[String]) -> String {
    let mut s = a.file.clone();
    if let Some(c) = a.cwe {
        s.push_str(&format!(" (CWE-{c})"));
    }
    if let Some(d) = &a.description {
        s.push_str(&format!(": {}", d.trim()));
    }
    if !fragments.is_empty() {
        s.push_str(&format!("; code: {}", fragments.join(" … ")));
    }
    s
}

/// What `blame-origin` knows before the judge: the range (grown by a merged side), the
/// provenance, the session, the report's warnings so far, and the judge's options for it.
struct Prepared {
    /// The origin rule's input but the judged turns.
    frame: crate::origin::Input,
    range: Range,
    prov: Provenance,
    session: Option<Session>,
    warnings: Vec<Warning>,
    judge_opts: crate::judge::run::Options,
    /// The task's CWE where it overrules an unconfirmed finding's (a scanner's guess).
    task_cwe: Option<u32>,
}

/// What the origin rule knows from provenance and the session before any turn is judged.
fn frame(prov: &Provenance, session: Option<&Session>) -> crate::origin::Input {
    let introducing_turn = prov
        .introducing
        .filter(|_| prov.status == crate::history::ProvenanceStatus::Introduced)
        .and_then(|i| prov.writes[i].turn);
    let delivered_turn = prov
        .writes
        .iter()
        .filter(|w| w.agent)
        .filter_map(|w| w.turn)
        .max();
    crate::origin::Input {
        status: prov.status,
        introducing_turn,
        delivered_turn,
        last_turn: session.map_or(0, |s| s.scope.last),
        turns: Vec::new(),
        no_session: session.is_none(),
    }
}

fn prepare(
    repo: &Repo,
    range: &Range,
    agents: &crate::history::range::AgentMatcher,
    req: &BlameRequest,
) -> Result<Prepared> {
    // Session discovery and mapping read every commit of the range: they are read on the
    // other cores while provenance walks the history, which needs none of them. The range may
    // grow by a merged side: provenance::analyse returns the range it walked.
    let ids: Vec<Oid> = range.commits.iter().map(|c| c.id).collect();
    let (analysed, early) = crate::history::parallel::map_chunks_beside(
        repo,
        ids.len(),
        |repo, r| read_briefs(repo, &ids[r]),
        || provenance::analyse(repo, range, req.anchor, agents),
    );
    let (range, prov) = analysed?;
    let (prov, mut session) = attach_session(
        repo,
        &range,
        prov,
        req.session,
        Discovery::Full,
        Some(early?),
    )?;
    // The report shows the task the judge was given: `--task` / `sage.task` over the message
    // that opened the session's task (redacted, as in the prompts).
    if let (Some(s), Some(task)) = (session.as_mut(), req.judge.task.as_deref()) {
        s.scope.task = Some(crate::redact::redact(task).0);
    }
    let mut warnings = Vec::new();
    let task_cwe = overruling_cwe(req, session.as_ref(), &mut warnings)?;
    let mut judge_opts = req.judge.clone();
    judge_opts.cwe_hint = task_cwe.or(req.anchor.cwe);
    judge_opts.anchor_file = Some(req.anchor.file.clone());
    if req.judge_sees_anchor {
        judge_opts.anchor_for_judge = Some(anchor_for_judge(req.anchor, &prov.fragments));
        warnings.push(Warning::JudgeSeesAnchor);
    }
    if let Some(s) = &session {
        warnings.extend(s.read_warnings());
    }
    let frame = frame(&prov, session.as_ref());
    if !judge_opts.score_all {
        judge_opts.schedule = Some(std::sync::Arc::new(crate::origin::Scheduler(frame.clone())));
    }
    Ok(Prepared {
        frame,
        range,
        prov,
        session,
        warnings,
        judge_opts,
        task_cwe,
    })
}

/// The CWE the task names, when the finding is a scanner's unconfirmed claim of another one:
/// Bandit files `urlopen` under CWE-22, and an SSRF fix must not get the path-traversal
/// checklist. The task's number (`CWE-918`) counts first, else the weakness its words name.
fn overruling_cwe(
    req: &BlameRequest,
    session: Option<&Session>,
    warnings: &mut Vec<Warning>,
) -> Result<Option<u32>> {
    let Some(said) = req.anchor.cwe.filter(|_| req.unconfirmed && !req.cwe_given) else {
        return Ok(None);
    };
    let Some(task) = req
        .judge
        .task
        .as_deref()
        .or(session.and_then(|s| s.scope.task.as_deref()))
    else {
        return Ok(None);
    };
    let named = match crate::finding::cwe_named_in(task) {
        Some(n) => Some(n),
        None => crate::judge::offline::Offline::in_langs(
            "security",
            task,
            None,
            None,
            req.judge.templates_dir.as_deref(),
            &crate::lang::written_in([task]),
        )?
        .first_cwe(),
    };
    Ok(match named {
        Some(n) if n != said => {
            warnings.push(Warning::CweOverruled {
                scanner: said,
                task: n,
            });
            Some(n)
        }
        _ => None,
    })
}

/// `blame-origin --estimate`: what judging the case's session would cost, from the same
/// provenance and session the report would use, with no judge called.
pub(crate) fn estimate(
    repo: &Repo,
    range: &Range,
    agents: &crate::history::range::AgentMatcher,
    req: BlameRequest,
) -> Result<crate::judge::cost::EstimateDoc> {
    let p = prepare(repo, range, agents, &req)?;
    let mut doc = match &p.session {
        Some(s) => crate::judge::run::estimate(&s.transcript, &s.scope, &p.judge_opts)?,
        None => crate::judge::run::estimate_nothing(&p.judge_opts)?,
    };
    if p.session.is_none() {
        doc.notes
            .push("no session was found for the range: there is nothing to judge".into());
    } else if p.judge_opts.schedule.is_some()
        && p.judge_opts.protocol == crate::judge::run::Protocol::Prefix
        && p.judge_opts
            .judges
            .iter()
            .any(|j| *j != crate::judge::backends::Spec::Offline)
    {
        // Which turns a run skips depends on the judge's answers: the estimate is the most.
        doc.notes.push("a model judge is not asked about turns whose scores cannot change the result (docs/judge.md#scheduling): this is the most the run sends; --score-all asks them all".into());
    }
    doc.notes.extend(p.warnings.iter().map(Warning::english));
    Ok(doc)
}

/// The origin each other judge or repeat of the scores gives, by the same rule (`locate`).
fn other_origins(
    d: &crate::judge::scores::ScoresDoc,
    locate: impl Fn(&[crate::judge::scores::TurnScore]) -> crate::origin::Origin,
) -> Vec<crate::report::doc::AltOrigin> {
    d.sets
        .iter()
        .map(|set| crate::report::doc::AltOrigin {
            judge: set.judge.name.clone(),
            repeat: set.judge.repeat,
            origin: locate(&set.turns),
        })
        .collect()
}

/// Provenance, session, judge, origin rule and recommendation: the whole of `blame-origin`.
/// Returns the report and how many turns could not be scored (listed in its `failed_turns`).
pub(crate) fn blame(
    repo: &Repo,
    range: &Range,
    agents: &crate::history::range::AgentMatcher,
    req: BlameRequest,
) -> Result<(crate::report::doc::ReportDoc, usize)> {
    use crate::origin::{self, Input, TurnFacts};
    use crate::report::doc::{REPORT_SCHEMA, ReportDoc};
    use crate::report::json as rj;

    let Prepared {
        frame,
        range,
        prov,
        session,
        mut warnings,
        judge_opts,
        task_cwe,
    } = prepare(repo, range, agents, &req)?;
    // The finding as reported: the task's CWE over a scanner's guess, the guess kept as said.
    let overruled;
    let anchor = match task_cwe {
        Some(cwe) => {
            let mut a = req.anchor.clone();
            a.source.said.get_or_insert_default().cwe = a.cwe;
            a.cwe = Some(cwe);
            overruled = a;
            &overruled
        }
        None => req.anchor,
    };
    let range = &range;
    let mut scores = match &session {
        Some(s) => {
            if s.mapping.writes.iter().all(|w| w.turn.is_none()) {
                warnings.push(Warning::NoWriteMapped {
                    session: s.found.name.clone(),
                });
            }
            let t = crate::timing::stage("judge");
            let doc = crate::judge::run::judge(&s.transcript, &s.scope, &judge_opts)?;
            drop(t);
            Some(doc)
        }
        None => None,
    };
    let anchored = prov.file.clone();
    let touching: std::collections::HashSet<u32> = session
        .as_ref()
        .map(|s| touches_anchor(&s.transcript, &anchored))
        .unwrap_or_default();
    let facts = |turns: &[crate::judge::scores::TurnScore]| -> Vec<TurnFacts> {
        turns
            .iter()
            .map(|t| TurnFacts::of(t, touching.contains(&t.turn)))
            .collect()
    };
    let input_for = |turns: &[crate::judge::scores::TurnScore]| Input {
        turns: facts(turns),
        ..frame.clone()
    };
    let primary: &[crate::judge::scores::TurnScore] = scores.as_ref().map_or(&[], |d| &d.turns);
    let (mut origin, mut missed) = origin::locate(&input_for(primary), &req.levers);
    let mut confirmation = None;
    let mut confirmed_turns: Option<Vec<crate::judge::scores::TurnScore>> = None;
    if let (Some(spec), Some(s)) = (&req.confirm_with, &session) {
        let (turns, c) = confirm(spec, s, &judge_opts, primary, &origin, |ts| {
            origin::locate(&input_for(ts), &req.levers)
        })?;
        if let Some(c) = c {
            (origin, missed) = origin::locate(&input_for(&turns), &req.levers);
            confirmation = Some(c);
            confirmed_turns = Some(turns);
        }
    }
    if let (Some(d), Some(turns)) = (scores.as_mut(), confirmed_turns) {
        d.turns = turns;
    }
    let other_origins = scores.as_ref().map_or_else(Vec::new, |d| {
        other_origins(d, |turns| origin::locate(&input_for(turns), &req.levers).0)
    });
    let manual_review = other_origins.iter().any(|a| a.origin.kind != origin.kind);
    if manual_review {
        warnings.push(Warning::ManualReview);
    }
    // In English always (the JSON's), and in the run's language when it is another.
    let recommend = |lang| {
        crate::report::recommend::recommendation(
            &origin,
            &missed,
            anchor.cwe,
            req.templates_dir.as_deref(),
            lang,
        )
    };
    let recommendation = recommend(crate::i18n::Lang::En)?;
    let recommendation_shown = match req.lang {
        crate::i18n::Lang::En => None,
        lang => Some(recommend(lang)?),
    };
    let turns = match (&scores, &session) {
        (Some(d), Some(s)) => report_turns(&d.turns, s),
        _ => Vec::new(),
    };
    let judge = match &scores {
        Some(d) => {
            warnings.extend(d.judge.warnings.iter().cloned());
            d.judge.clone()
        }
        None => unjudged(&judge_opts),
    };
    if session.is_none() {
        warnings.push(Warning::NoSession);
    }
    if req.unconfirmed {
        warnings.push(Warning::Unconfirmed);
    }
    let mut doc = ReportDoc {
        schema: REPORT_SCHEMA.into(),
        tool: Some(crate::tool::Tool::current()),
        repository: None,
        finding: rj::finding(anchor, &prov),
        unconfirmed: req.unconfirmed,
        range: rj::range(range),
        provenance: rj::provenance(range, &prov, req.all_writes),
        session: session.as_ref().map(Session::json),
        turns,
        origin,
        missed_opportunities: missed,
        recommendation,
        recommendation_shown,
        judge,
        other_origins,
        manual_review,
        warnings,
        failed_turns: scores.map(|d| d.failed_turns).unwrap_or_default(),
        confirmation,
    };
    add_context(repo, range, &prov, &mut doc)?;
    let failed = doc.failed_turns.len();
    Ok((doc, failed))
}

/// Each judged turn with who spoke and an excerpt of what it said, redacted like the judge's
/// view; a turn that said nothing shows its first tool call.
fn report_turns(
    scored: &[crate::judge::scores::TurnScore],
    s: &Session,
) -> Vec<crate::report::doc::ReportTurn> {
    scored
        .iter()
        .map(|ts| {
            let t = s.transcript.turns.iter().find(|t| t.turn == ts.turn);
            let text = t
                .map(|t| {
                    if t.text.trim().is_empty() {
                        t.tool_calls
                            .first()
                            .map(|c| format!("[{}]", c.name))
                            .unwrap_or_default()
                    } else {
                        t.text.clone()
                    }
                })
                .unwrap_or_default();
            crate::report::doc::ReportTurn {
                score: ts.clone(),
                agent: t.map(|t| t.agent.clone()).unwrap_or_default(),
                excerpt: clip(&crate::redact::redact(&text).0, 200),
            }
        })
        .collect()
}

/// The judge a run without a session would have asked: named, with nothing asked of it.
fn unjudged(judge_opts: &crate::judge::run::Options) -> crate::judge::scores::JudgeInfo {
    crate::judge::scores::JudgeInfo {
        name: judge_opts
            .judges
            .first()
            .map(|j| j.name())
            .unwrap_or_default(),
        protocol: "prefix".into(),
        ..Default::default()
    }
}

/// How many times a close call is sent back to the confirming judge: a re-scored turn can
/// make the verdict rest on another turn, which is then asked in the next round.
const CONFIRM_ROUNDS: usize = 3;

/// `--confirm-with`: while the verdict is a close call, the confirming judge re-scores the
/// turns it depends on (through the scheduler, so it is asked nothing else), and its answers
/// replace the first judge's for those turns, taken as settled (no doubt left). Returns the
/// turns as they then stand and what was done, `None` when the verdict was already firm.
fn confirm(
    spec: &crate::judge::backends::Spec,
    s: &Session,
    opts: &crate::judge::run::Options,
    primary: &[crate::judge::scores::TurnScore],
    origin: &crate::origin::Origin,
    locate: impl Fn(
        &[crate::judge::scores::TurnScore],
    ) -> (crate::origin::Origin, Vec<crate::origin::Missed>),
) -> Result<(
    Vec<crate::judge::scores::TurnScore>,
    Option<crate::report::doc::Confirmation>,
)> {
    let mut turns = primary.to_vec();
    let Some(m) = origin.margin.as_ref().filter(|m| !m.firm) else {
        return Ok((turns, None));
    };
    let before = (origin.turn, origin.kind);
    let mut asked = std::collections::BTreeSet::new();
    let mut failed = Vec::new();
    let mut info = None::<crate::judge::scores::JudgeInfo>;
    let mut want: std::collections::BTreeSet<u32> = m.turns().into_iter().collect();
    for _ in 0..CONFIRM_ROUNDS {
        want.retain(|t| !asked.contains(t));
        if want.is_empty() {
            break;
        }
        let mut o = opts.clone();
        o.judges = vec![spec.clone()];
        o.repeat = 1;
        o.schedule = Some(std::sync::Arc::new(crate::judge::schedule::Only(
            want.clone(),
        )));
        let doc = crate::judge::run::judge(&s.transcript, &s.scope, &o)?;
        for t in doc.turns.iter().filter(|t| want.contains(&t.turn)) {
            if t.scores.is_none() {
                failed.push(t.turn);
                continue;
            }
            if let Some(slot) = turns.iter_mut().find(|x| x.turn == t.turn) {
                *slot = crate::judge::scores::TurnScore {
                    doubt: Some(Default::default()),
                    ..t.clone()
                };
            }
        }
        asked.extend(want.iter().copied());
        info = Some(match info {
            None => doc.judge,
            Some(mut i) => {
                i.calls += doc.judge.calls;
                i.cached += doc.judge.cached;
                i.input_tokens += doc.judge.input_tokens;
                i.output_tokens += doc.judge.output_tokens;
                i.cached_input_tokens += doc.judge.cached_input_tokens;
                i.cost_usd = match (i.cost_usd, doc.judge.cost_usd) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
                i
            }
        });
        let (o, _) = locate(&turns);
        want = match o.margin.as_ref().filter(|m| !m.firm) {
            Some(m) => m.turns().into_iter().collect(),
            None => break,
        };
    }
    let (after, _) = locate(&turns);
    Ok((
        turns,
        Some(crate::report::doc::Confirmation {
            judge: info.expect("at least one round ran"),
            turns: asked.into_iter().collect(),
            failed,
            before_turn: before.0,
            before_type: before.1,
            changed: (after.turn, after.kind) != before,
        }),
    ))
}

/// Lines of context shown around the located code at the tip.
const TIP_CONTEXT: u32 = 2;
/// At most this many located lines are shown (a scanner may flag a whole function).
const TIP_MAX: u32 = 20;

/// What a report's header shows beyond the analysis — the repository's name, the branch, the
/// tip's date, the CWE's name, the located code at the tip and what the introducing write
/// changed — read here, so that renderers get owned data and never touch git.
fn add_context(
    repo: &Repo,
    range: &Range,
    prov: &Provenance,
    doc: &mut crate::report::doc::ReportDoc,
) -> Result<()> {
    doc.repository = repository_name(repo)?;
    doc.range.branch = if range.tip_name == "HEAD" {
        repo.head_branch()
    } else {
        Some(range.tip_name.clone())
    };
    let tip = repo.commit_info(range.tip)?;
    doc.range.tip_date = Some(
        crate::transcript::detect::iso_from_millis(tip.time.saturating_mul(1000))
            .replace(".000Z", "Z"),
    );
    doc.finding.cwe_name = doc.finding.cwe.and_then(crate::judge::offline::cwe_name);
    let holds = line_holds(prov);
    if let (Some(start), Some(text)) = (prov.tip_line, repo.file_in_tree(tip.tree, &prov.file)?) {
        let text = String::from_utf8_lossy(&text);
        let span = located_span(prov, &text).clamp(1, TIP_MAX);
        let end = start + span - 1;
        let first = start.saturating_sub(TIP_CONTEXT).max(1);
        doc.finding.tip_lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i as u32 + 1, l))
            .skip_while(|(n, _)| *n < first)
            .take_while(|(n, _)| *n <= end + TIP_CONTEXT)
            .map(|(n, l)| crate::report::json::TipLine {
                line: n,
                text: crate::redact::redact(l).0,
                anchored: (start..=end).contains(&n),
            })
            .collect();
    }
    if let (Some(i), Some(w)) = (prov.introducing, doc.provenance.introducing_write.as_mut()) {
        let before = match i.checked_sub(1) {
            Some(p) => write_text(repo, &prov.writes[p])?,
            None => match prov.base.blob {
                Some(b) => String::from_utf8_lossy(&repo.read_blob(b)?).into_owned(),
                None => String::new(),
            },
        };
        let after = write_text(repo, &prov.writes[i])?;
        w.diff = crate::report::hunks::hunks(&before, &after, &holds)
            .map(|d| crate::redact::redact(&d).0);
    }
    Ok(())
}

/// The anchored file's text after a write: its blob, or what replay rebuilt; empty when the
/// write left no such file.
fn write_text(repo: &Repo, w: &provenance::WriteRecord) -> Result<String> {
    Ok(match (w.snapshot.blob, &w.replayed) {
        (Some(b), _) => String::from_utf8_lossy(&repo.read_blob(b)?).into_owned(),
        (None, Some(t)) => t.clone(),
        (None, None) => String::new(),
    })
}

/// Whether a line holds (the start of) the located code: the pattern matches it, or it holds
/// the first line of a fragment, white space aside.
fn line_holds(prov: &Provenance) -> impl Fn(&str) -> bool + use<> {
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    let re = prov
        .pattern
        .as_deref()
        .and_then(|p| regex::Regex::new(p).ok());
    let firsts: Vec<String> = prov
        .fragments
        .iter()
        .filter_map(|f| f.lines().map(str::trim).find(|l| !l.is_empty()))
        .map(squash)
        .collect();
    move |line: &str| match &re {
        Some(re) => re.is_match(line),
        None => {
            let l = squash(line);
            firsts.iter().any(|f| l.contains(f.as_str()))
        }
    }
}

/// How many lines the located code spans in the tip's text: the first fragment's lines, or the
/// pattern's first match.
fn located_span(prov: &Provenance, text: &str) -> u32 {
    if let Some(p) = &prov.pattern {
        return regex::Regex::new(p)
            .ok()
            .and_then(|re| re.find(text))
            .map_or(1, |m| {
                m.as_str().trim_end_matches('\n').lines().count() as u32
            });
    }
    prov.fragments
        .first()
        .map_or(1, |f| f.trim().lines().count() as u32)
}

/// The repository's name for a report: the last path part of the `origin` remote's URL (no
/// credentials can be in it), else the work tree's directory name.
fn repository_name(repo: &Repo) -> Result<Option<String>> {
    let from_url = repo.config_string("remote.origin.url")?.and_then(|url| {
        let tail = url
            .trim_end_matches('/')
            .rsplit(['/', ':', '\\'])
            .next()
            .unwrap_or("");
        let name = tail.strip_suffix(".git").unwrap_or(tail);
        (!name.is_empty()).then(|| name.to_string())
    });
    Ok(from_url.or_else(|| {
        let dir = repo.workdir().unwrap_or_else(|| repo.git_dir());
        dir.file_name().map(|n| n.to_string_lossy().into_owned())
    }))
}
