//! The provenance engine: snapshots of the anchored file per write, then the pure rule.
//!
//! Cost: one root-tree read per commit, one read per distinct subtree and blob on the
//! anchored path, spread over threads; commit objects are read only when an agent pattern
//! needs their authors, or for the few writes a report names.

use super::attribution::{MappedBy, Mapping};
use super::matching::{self, Matcher};
use super::parallel::map_chunks;
use super::range::{AgentMatcher, Range};
use super::rule::{self, Fact, NotLocated, Verdict};
use crate::anchor::{Anchor, AnchorKind, Locator};
use crate::error::{Error, Result};
use crate::finding::paths;
use crate::git::idhash::IdMap;
use crate::git::{Oid, PathLookup, Repo};
use crate::history::{ProvenanceStatus, Reconstruction};
use crate::timing::stage;

/// The anchored file in one snapshot.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub path: String,
    pub blob: Option<Oid>,
    pub present: bool,
}

/// One write of the range (one commit on the first-parent chain).
#[derive(Debug, Clone)]
pub(crate) struct WriteRecord {
    pub commit: Oid,
    pub agent: bool,
    pub merge: bool,
    /// Author and subject line, when the commit was read (see `describe`).
    pub author: Option<String>,
    pub summary: Option<String>,
    pub snapshot: Snapshot,
    /// Whether this write changed the anchored file (content, existence or path).
    pub changed: bool,
    /// The transcript turn that made the write, once mapped.
    pub turn: Option<u32>,
    pub mapped_by: Option<MappedBy>,
    /// For writes rebuilt inside a commit by replay: the edit's 1-based position there.
    pub edit: Option<usize>,
    /// The transcript edited the anchored file several times in this commit, and replay could
    /// not reproduce them: only the committed state is known.
    pub final_only: bool,
    /// A commit of a branch merged into the range: the first-parent merge that brought it.
    pub via_merge: Option<Oid>,
    /// Why no turn could be given to this write, when a session was read.
    pub unmapped_reason: Option<crate::history::attribution::Unmapped>,
    /// For a write rebuilt by replay: the anchored file's text after it (it has no blob, and
    /// the report shows what it changed).
    pub replayed: Option<String>,
}

/// Provenance of one anchor over one range.
#[derive(Debug, Clone)]
pub(crate) struct Provenance {
    pub status: ProvenanceStatus,
    /// Index into `writes` of the introducing write.
    pub introducing: Option<usize>,
    /// For `no_code_location`: why (docs/method.md#provenance).
    pub reason: Option<crate::history::status::Unlocated>,
    pub base: Snapshot,
    pub writes: Vec<WriteRecord>,
    pub reconstruction: Reconstruction,
    /// The path of the anchored file at the tip, after normalisation.
    pub file: String,
    /// The fragments actually matched (scanner line ranges turned into text).
    pub fragments: Vec<String>,
    pub pattern: Option<String>,
    /// Distinct blobs read: one per distinct content of the anchored file.
    pub blobs_read: usize,
    /// Things the user should know: path resolution, renames, fallbacks.
    pub notes: Vec<String>,
    /// The anchor's kind, to judge rebuilt snapshots the same way.
    pub kind: AnchorKind,
    /// The first line of the located code in the tip's file (for SARIF and links).
    pub tip_line: Option<u32>,
    /// The lines a line-range anchor names in the tip's file: at the tip, the anchored
    /// lines are these, not every line with the same text.
    pub tip_span: Option<(u32, u32)>,
    /// What other attribution tools recorded about the writes that changed the file
    /// (docs/dialects.md), and what it decided.
    pub evidence: crate::history::dialects::Evidence,
    pub decisions: Vec<crate::history::dialects::weigh::Decision>,
}

impl Provenance {
    /// For each write: whether a JSON document lists it when it lists only the writes that
    /// touched the anchored file. Besides those, the writes the verdict names are kept, so a
    /// reader of the pruned list finds everything the document points at: the introducing
    /// write, the writes other tools' records decided, the last write after which a defect
    /// gone by the tip was still there, and the agent's last mapped write (the delivered repair
    /// the origin rule may be bounded by, which `origin --provenance` reads back).
    pub(crate) fn touched_or_named(&self) -> Vec<bool> {
        let mut keep: Vec<bool> = self.writes.iter().map(|w| w.changed).collect();
        let mut mark = |i: usize| {
            if let Some(k) = keep.get_mut(i) {
                *k = true;
            }
        };
        if let Some(i) = self.introducing {
            mark(i);
        }
        for d in &self.decisions {
            if let Some(i) = d.write.checked_sub(1) {
                mark(i);
            }
        }
        // The reason names it only while the tip still has the file (`not_located_reason`).
        let tip_has_file = self
            .writes
            .last()
            .is_some_and(|w| w.snapshot.blob.is_some());
        if self.status == ProvenanceStatus::NoCodeLocation
            && tip_has_file
            && let Some(i) = self.writes.iter().rposition(|w| w.snapshot.present)
        {
            mark(i);
        }
        let delivered = self
            .writes
            .iter()
            .filter(|w| w.agent)
            .filter_map(|w| w.turn)
            .max();
        if let Some(t) = delivered
            && let Some(i) = self
                .writes
                .iter()
                .rposition(|w| w.agent && w.turn == Some(t))
        {
            mark(i);
        }
        keep
    }
}

/// The 1-based line of the tip's file where the located code starts.
fn locate_line(
    content: &[u8],
    locator: &Locator,
    fragments: &[String],
    pattern: Option<&str>,
) -> Option<u32> {
    if let Locator::Lines { start, .. } = locator {
        return Some(*start);
    }
    let text = String::from_utf8_lossy(content);
    if let Some(p) = pattern {
        let re = regex::Regex::new(p).ok()?;
        let at = re.find(&text)?.start();
        return Some(text[..at].matches('\n').count() as u32 + 1);
    }
    let first = fragments
        .first()?
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    let want = squash(first);
    text.lines()
        .position(|l| squash(l).contains(&want))
        .map(|i| i as u32 + 1)
}

/// Applies the provenance rule (docs/method.md#provenance) to the writes as they stand, and names
/// the reconstruction.
fn decide(prov: &mut Provenance) {
    let facts: Vec<Fact> = prov
        .writes
        .iter()
        .map(|w| Fact {
            agent: w.agent,
            present: w.snapshot.present,
        })
        .collect();
    let (status, introducing, reason) = match rule::decide(prov.base.present, &facts) {
        Verdict::Inherited => (ProvenanceStatus::Inherited, None, None),
        Verdict::Introduced { write } => (ProvenanceStatus::Introduced, Some(write), None),
        Verdict::IntroducedByOther { write } => {
            (ProvenanceStatus::IntroducedByOther, Some(write), None)
        }
        Verdict::NoCodeLocation(why) => (
            ProvenanceStatus::NoCodeLocation,
            None,
            Some(not_located_reason(why, &prov.writes, &prov.file)),
        ),
    };
    prov.status = status;
    prov.introducing = introducing;
    prov.reason = reason;
    let touched = prov.writes.iter().filter(|w| w.changed).count();
    prov.reconstruction = if prov.writes.iter().any(|w| w.final_only) {
        Reconstruction::FinalOnly
    } else if touched <= 1 {
        Reconstruction::SingleWrite
    } else {
        Reconstruction::PerWrite
    };
}

/// Ties writes to turns and splits commits into the writes replay rebuilt
/// (docs/method.md#writes-and-turns), then applies the rule again on the finer history: the
/// provenance comes in by value and the attributed one goes back.
pub(crate) fn attribute(
    repo: &Repo,
    mut prov: Provenance,
    mapping: &Mapping,
) -> Result<Provenance> {
    let matcher = match &prov.pattern {
        Some(p) => Matcher::pattern(p, prov.kind, "anchor")?,
        None => Matcher::fragments(&prov.fragments, prov.kind, "anchor")?,
    };
    let mut writes = Vec::with_capacity(prov.writes.len());
    // Where each commit's write lands once replay put its earlier edits before it.
    let mut moved = Vec::with_capacity(prov.writes.len());
    for (i, mut w) in std::mem::take(&mut prov.writes).into_iter().enumerate() {
        let m = mapping.writes.get(i).cloned().unwrap_or_default();
        if let Some((turn, by)) = m.turn {
            w.turn = Some(turn);
            w.mapped_by = Some(by);
        }
        w.unmapped_reason = m.unmapped;
        w.final_only = m.final_only && w.changed;
        let subs = m.sub_writes.as_slice();
        if subs.len() >= 2 {
            // Edits before the last one become writes of their own, inside this commit.
            // Code the commit holds in several places is there once the file holds it as
            // often as the commit does.
            let count = |c: &Option<String>| {
                c.as_deref()
                    .map_or(0, |c| matcher.occurrences(c.as_bytes()))
            };
            let full = count(&subs[subs.len() - 1].content);
            for (k, sub) in subs[..subs.len() - 1].iter().enumerate() {
                let present = matcher.defect_present(sub.content.as_deref().map(str::as_bytes))
                    && (!matcher.is_present_kind() || count(&sub.content) >= full);
                writes.push(WriteRecord {
                    commit: w.commit,
                    agent: w.agent,
                    merge: false,
                    author: w.author.clone(),
                    summary: w.summary.clone(),
                    snapshot: Snapshot {
                        path: w.snapshot.path.clone(),
                        blob: None,
                        present,
                    },
                    changed: true,
                    turn: Some(sub.turn),
                    mapped_by: Some(MappedBy::Replay),
                    edit: Some(k + 1),
                    final_only: false,
                    via_merge: w.via_merge,
                    unmapped_reason: None,
                    replayed: sub.content.clone(),
                });
            }
            w.turn = Some(subs[subs.len() - 1].turn);
            w.mapped_by = Some(MappedBy::Replay);
            w.edit = Some(subs.len());
        }
        moved.push(writes.len());
        writes.push(w);
    }
    prov.writes = writes;
    for d in &mut prov.decisions {
        if let Some(&at) = moved.get(d.write - 1) {
            d.write = at + 1;
        }
    }
    session_agrees(&mut prov);
    prov.notes.extend(mapping.notes.iter().cloned());
    decide(&mut prov);
    if let Some(i) = prov.introducing {
        describe(repo, &mut prov, &[i])?;
    }
    Ok(prov)
}

/// Where a write was judged by matching notes left on rewritten commits and the session's
/// edits, compared by content too, tie the write to a turn, the decision says so: two
/// independent matches of the same lines.
fn session_agrees(prov: &mut Provenance) {
    for d in &mut prov.decisions {
        let carried = d.claims.iter().any(|&k| {
            prov.evidence
                .claims
                .get(k)
                .is_some_and(|c| c.matched.is_some())
        });
        let Some(w) = prov.writes.get(d.write - 1) else {
            continue;
        };
        if let (true, Some(turn), Some(by @ (MappedBy::Replay | MappedBy::Fragment))) =
            (carried, w.turn, w.mapped_by)
        {
            d.why.session = Some((turn, by));
        }
    }
}

/// From how many commits a range is long enough for the hint that suggests changed-path
/// filters (ansible's 46k commits: 1.0 s without, 0.28 s with).
const FILTERS_HINT_AT: usize = 10_000;

/// Blob ids at `path` in `trees`: from the lookups made during the range's walk when it
/// watched `path`, else spread over threads.
fn blobs_at(repo: &Repo, range: &Range, trees: &[Oid], path: &str) -> Result<Vec<Option<Oid>>> {
    if let Some(looked) = range.looked.as_ref().filter(|l| l.is_for(path)) {
        // Mostly answers from memory; trees the walk did not see (a merged side's) are read.
        let mut look = looked.clone();
        return trees.iter().map(|&t| repo.blob_at(&mut look, t)).collect();
    }
    map_chunks(repo, trees.len(), |repo, r| {
        let mut look = PathLookup::new(path);
        trees[r]
            .iter()
            .map(|&t| repo.blob_at(&mut look, t))
            .collect()
    })
}

/// Whether commit `i` of the range has the commit before it (or the base) as first parent:
/// what a changed-path filter, made against the first parent, speaks of.
fn follows(range: &Range, i: usize) -> bool {
    let before = match i {
        0 => range.base,
        _ => range.commits[i - 1].id,
    };
    range.commits[i].first_parent == Some(before)
}

/// For each of the first `upto` commits of the range: whether git's changed-path filters
/// say it left `path` as the commit before it had it (all false without filters).
pub(crate) fn filtered_out(repo: &Repo, range: &Range, upto: usize, path: &str) -> Vec<bool> {
    let ids: Vec<Oid> = range.commits[..upto].iter().map(|c| c.id).collect();
    match repo.path_filters(&ids, path) {
        Some(f) => (0..upto)
            .map(|i| f[i] == Some(false) && follows(range, i))
            .collect(),
        None => vec![false; upto],
    }
}

/// The blob at `path` after each of the first `upto` commits of the range, `before` being the
/// blob the base has there. A commit whose changed-path filter (git's commit-graph) says it
/// left the path as its first parent had it, or whose tree is its parent's, keeps the blob
/// before it: only the other commits' trees are read, so the cost follows the file's
/// history, not the repository's.
fn snapshots(
    repo: &Repo,
    range: &Range,
    upto: usize,
    path: &str,
    before: Option<Oid>,
) -> Result<Vec<Option<Oid>>> {
    let commits = &range.commits[..upto];
    let untouched = filtered_out(repo, range, upto, path);
    let mut prev_tree = None;
    let mut need = Vec::with_capacity(upto);
    for (i, c) in commits.iter().enumerate() {
        let same_tree = prev_tree == Some(c.tree) && follows(range, i);
        need.push(!(untouched[i] || same_tree));
        prev_tree = Some(c.tree);
    }
    let wanted: Vec<Oid> = commits
        .iter()
        .zip(&need)
        .filter(|(_, n)| **n)
        .map(|(c, _)| c.tree)
        .collect();
    let mut found = blobs_at(repo, range, &wanted, path)?.into_iter();
    let mut out = Vec::with_capacity(upto);
    let mut last = before;
    for n in need {
        if n {
            last = found.next().flatten();
        }
        out.push(last);
    }
    Ok(out)
}

/// Computes the provenance of `anchor` over `range`. When the code came in with a first-parent
/// merge, the merged side is walked too (docs/method.md#writes-and-turns): its commits join the
/// range before the merge, so the side's own commit — its author, its session — is the introducing
/// write.
pub(crate) fn analyse(
    repo: &Repo,
    range: &Range,
    anchor: &Anchor,
    agents: &AgentMatcher,
) -> Result<(Range, Provenance)> {
    let mut range = range.clone();
    let mut walked: Vec<Oid> = Vec::new();
    let mut notes = Vec::new();
    loop {
        let mut prov = analyse_range(repo, &range, anchor, agents)?;
        let merge = prov
            .introducing
            .map(|i| &prov.writes[i])
            .filter(|w| w.merge && !walked.contains(&w.commit))
            .map(|w| w.commit);
        let Some(merge) = merge else {
            prov.notes.splice(0..0, notes);
            return Ok((range, prov));
        };
        walked.push(merge);
        let side = repo.merged_side(merge, range.base)?;
        let Some(at) = range.commits.iter().position(|c| c.id == merge) else {
            return Ok((range, prov));
        };
        if side.is_empty() {
            return Ok((range, prov));
        }
        notes.push(format!(
            "the code came in with merge {}: its merged side ({} commit(s)) was walked too",
            merge.short(),
            side.len()
        ));
        range.commits.splice(at..at, side);
    }
}

/// How a finding is named in errors: its file, and its result when a file holds several
/// (under `--all` it is one of many).
fn finding_name(anchor: &Anchor) -> String {
    match (&anchor.source.path, anchor.source.index) {
        (Some(p), Some(i)) if i > 1 || anchor.source.format != "anchor-yaml" => {
            format!("{p} (result {i})")
        }
        (Some(p), _) => p.clone(),
        (None, _) => format!("anchor {}", anchor.id),
    }
}

/// The anchored file through the range: its path and blob at each commit and at the base,
/// renames and copies followed back from the tip.
struct Followed {
    paths: Vec<String>,
    blobs: Vec<Option<Oid>>,
    base_blob: Option<Oid>,
    base_path: String,
}

/// Snapshots at the tip's path, then renames followed back from the tip (each said in
/// `notes`).
fn follow_file(
    repo: &Repo,
    range: &Range,
    trees: &[Oid],
    base_tree: Oid,
    file: &str,
    notes: &mut Vec<String>,
) -> Result<Followed> {
    let n = trees.len();
    let mut base_path = file.to_string();
    let mut base_blob = repo.blob_at(&mut PathLookup::new(file), base_tree)?;
    let mut blobs = snapshots(repo, range, n, file, base_blob)?;
    if n >= FILTERS_HINT_AT && !repo.has_path_filters() {
        notes.push(format!(
            "{n} commits walked without changed-path filters; `git commit-graph write --reachable --changed-paths` makes this several times faster"
        ));
    }
    let mut paths = vec![file.to_string(); n];
    for i in (0..n).rev() {
        let (prev_tree, prev_blob) = if i == 0 {
            (base_tree, base_blob)
        } else {
            (trees[i - 1], blobs[i - 1])
        };
        if blobs[i].is_some()
            && prev_blob.is_none()
            && prev_tree != trees[i]
            && let Some(origin) = repo.origin_of(prev_tree, trees[i], &paths[i])?
        {
            let old = origin.from;
            let (new, at) = (
                &paths[i],
                format!("write {} ({})", i + 1, range.commits[i].id.short()),
            );
            let same = match origin.similarity {
                100 => String::new(),
                n => format!(", {n}% of its lines the same"),
            };
            notes.push(match origin.copy {
                false => format!("{old} was renamed to {new} by {at}{same}"),
                true => format!(
                    "{new} was copied from {old} by {at}{same}: before it, {old}'s history is followed"
                ),
            });
            base_blob = repo.blob_at(&mut PathLookup::new(&old), base_tree)?;
            let earlier = snapshots(repo, range, i, &old, base_blob)?;
            blobs[..i].copy_from_slice(&earlier);
            paths[..i].fill(old.clone());
            base_path = old;
        }
    }
    Ok(Followed {
        paths,
        blobs,
        base_blob,
        base_path,
    })
}

/// Why the finding's file is nowhere in the range: a folder, or absent.
fn not_in_range(
    repo: &Repo,
    range: &Range,
    tip_tree: Oid,
    what: &str,
    file: &str,
) -> Result<Error> {
    if repo.dir_id(tip_tree, file)?.is_some() {
        return Ok(Error::input(format!(
            "{what}: {file} is a folder at {}; a finding names a file in it",
            range.tip_name
        ))
        .hint(format!(
            "give the file the weakness is in, e.g. {file}/<file>"
        )));
    }
    Ok(Error::input(format!(
        "{what}: {file} is not in the repository at any commit of {}..{}",
        range.base.short(),
        range.tip_name
    ))
    .hint("paths in a finding are relative to the repository root; check the path and the branch"))
}

/// Whether each distinct blob of the file (and the base's) holds the defect, and how many
/// blobs were read: one read per distinct blob, spread over threads.
fn match_blobs(
    repo: &Repo,
    blobs: &[Option<Oid>],
    base_blob: Option<Oid>,
    matcher: &Matcher,
) -> Result<(IdMap<Oid, bool>, usize)> {
    // Newest first: packs store the newest version whole and older ones as deltas against
    // it, so this order finds each delta's base already in the pack's base cache.
    let mut seen_blob =
        std::collections::HashSet::with_hasher(crate::git::idhash::IdBuildHasher::default());
    let distinct: Vec<Oid> = blobs
        .iter()
        .rev()
        .chain(std::iter::once(&base_blob))
        .flatten()
        .copied()
        .filter(|b| seen_blob.insert(*b))
        .collect();
    let verdicts = map_chunks(repo, distinct.len(), |repo, r| {
        let mut scratch = Vec::new();
        distinct[r]
            .iter()
            .map(|&b| Ok(matcher.defect_present_with(Some(&repo.read_blob(b)?), &mut scratch)))
            .collect()
    })?;
    let present: IdMap<Oid, bool> = distinct.iter().copied().zip(verdicts).collect();
    Ok((present, distinct.len()))
}

fn analyse_range(
    repo: &Repo,
    range: &Range,
    anchor: &Anchor,
    agents: &AgentMatcher,
) -> Result<Provenance> {
    let mut notes = Vec::new();
    let base_tree = repo.tree_of(range.base)?;
    let trees: Vec<Oid> = range.commits.iter().map(|c| c.tree).collect();
    let n = trees.len();
    let tip_tree = trees.last().copied().unwrap_or(base_tree);

    let what = finding_name(anchor);
    let t = stage("locate file");
    let file = locate_file(repo, &anchor.file, tip_tree, base_tree, &mut notes)
        .map_err(|e| e.prefix(&what))?;
    drop(t);

    let t = stage("tree lookups");
    let Followed {
        paths,
        blobs,
        base_blob,
        base_path,
    } = follow_file(repo, range, &trees, base_tree, &file, &mut notes)?;
    drop(t);

    if base_blob.is_none() && blobs.iter().all(Option::is_none) {
        return Err(not_in_range(repo, range, tip_tree, &what, &file)?);
    }

    let tip_blob = blobs.last().copied().flatten();
    let (matcher, fragments, pattern) = build_matcher(
        repo,
        anchor,
        &what,
        &file,
        tip_blob,
        &range.tip_name,
        &mut notes,
    )?;

    let t = stage("blobs and matching");
    let (present, blobs_read) = match_blobs(repo, &blobs, base_blob, &matcher)?;
    let present_in =
        |b: Option<Oid>| b.map_or_else(|| matcher.defect_present(None), |b| present[&b]);
    drop(t);

    // Who wrote what: commit objects only when the agent pattern needs them.
    let t = stage("commit info");
    let infos = if agents.needs_commit_info() {
        let ids: Vec<Oid> = range.commits.iter().map(|c| c.id).collect();
        Some(map_chunks(repo, n, |repo, r| {
            ids[r].iter().map(|&id| repo.commit_info(id)).collect()
        })?)
    } else {
        None
    };
    drop(t);

    let base = Snapshot {
        present: present_in(base_blob),
        path: base_path,
        blob: base_blob,
    };
    let mut writes = Vec::with_capacity(n);
    let mut prev = (base.path.as_str(), base.blob);
    for (i, c) in range.commits.iter().enumerate() {
        let blob = blobs[i];
        let changed = prev.1 != blob || (blob.is_some() && prev.0 != paths[i]);
        prev = (paths[i].as_str(), blob);
        let info = infos.as_ref().map(|v| &v[i]);
        writes.push(WriteRecord {
            commit: c.id,
            agent: match info {
                Some(info) => agents.is_agent(info),
                None => !c.merge,
            },
            merge: c.merge,
            author: info.map(|i| i.author_name.clone()),
            // Commit subjects go into reports and notes: a token pasted in one does not.
            summary: info.map(|i| crate::redact::redact(&i.summary).0),
            snapshot: Snapshot {
                path: paths[i].clone(),
                blob,
                present: present_in(blob),
            },
            changed,
            turn: None,
            mapped_by: None,
            edit: None,
            final_only: false,
            via_merge: c.via_merge,
            unmapped_reason: None,
            replayed: None,
        });
    }

    let mut prov = Provenance {
        status: ProvenanceStatus::NoCodeLocation,
        introducing: None,
        reason: None,
        base,
        writes,
        reconstruction: Reconstruction::SingleWrite,
        file,
        fragments,
        pattern,
        blobs_read,
        notes,
        kind: anchor.kind,
        tip_line: None,
        tip_span: match anchor.locator {
            Locator::Lines { start, end, .. } => Some((start, end)),
            _ => None,
        },
        evidence: Default::default(),
        decisions: Vec::new(),
    };
    if let Some(b) = tip_blob {
        let content = repo.read_blob(b)?;
        prov.tip_line = locate_line(
            &content,
            &anchor.locator,
            &prov.fragments,
            prov.pattern.as_deref(),
        );
    }
    let t = stage("other tools' records");
    weigh_evidence(repo, &mut prov)?;
    drop(t);
    decide(&mut prov);
    let introducing = prov.introducing;
    if let Some(i) = introducing {
        describe(repo, &mut prov, &[i])?;
    }
    Ok(prov)
}

/// Reads what other attribution tools recorded about the writes that changed the anchored
/// file, and lets their line-level claims about the anchored lines say whose each write is
/// (docs/dialects.md#how-claims-are-used). A write with no record of its own may take the
/// claims of notes a squash or rebase left on the commits it replaced, matched by content
/// (docs/dialects.md#squashes-and-rebases).
fn weigh_evidence(repo: &Repo, prov: &mut Provenance) -> Result<()> {
    use crate::history::dialects::{self, orphans, weigh};
    let commits: Vec<Oid> = prov
        .writes
        .iter()
        .filter(|w| w.changed && !w.merge)
        .map(|w| w.commit)
        .collect();
    if commits.is_empty() {
        return Ok(());
    }
    let mut files: Vec<&str> = Vec::new();
    for w in prov.writes.iter().filter(|w| w.changed && !w.merge) {
        if !files.contains(&w.snapshot.path.as_str()) {
            files.push(&w.snapshot.path);
        }
    }
    let mut ev = dialects::read_all(repo, &commits, &files)?;
    if ev.claims.is_empty() && ev.outside.is_empty() {
        prov.evidence = ev;
        return Ok(());
    }
    let texts = anchored_texts(repo, prov, &ev)?;
    let facts: Vec<weigh::WriteFacts> = prov
        .writes
        .iter()
        .zip(&texts)
        .map(|(w, t)| weigh::WriteFacts {
            commit: w.commit,
            path: &w.snapshot.path,
            anchored: t.as_ref().map(|(_, a)| a.clone()).unwrap_or_default(),
            agent: w.agent,
            changed: w.changed,
        })
        .collect();
    // The file's path before each write: the previous write's, or the baseline's.
    let before: Vec<&str> = std::iter::once(prov.base.path.as_str())
        .chain(prov.writes.iter().map(|w| w.snapshot.path.as_str()))
        .collect();
    let unclaimed: Vec<orphans::Unclaimed> = facts
        .iter()
        .zip(&texts)
        .zip(&before)
        .filter(|((f, _), _)| f.changed && !weigh::has_own_claims(f, &ev))
        .filter_map(|((f, t), before)| unclaimed(f, before, t.as_ref()?))
        .collect();
    if !unclaimed.is_empty() && !ev.outside.is_empty() {
        let tip = prov.writes.last().map_or(commits[0], |w| w.commit);
        orphans::match_rewritten(repo, tip, &unclaimed, &mut ev)?;
    }
    let decisions = weigh::weigh(&facts, &ev);
    for d in &decisions {
        if let Some(a) = d.agent {
            prov.writes[d.write - 1].agent = a;
        }
    }
    prov.evidence = ev;
    prov.decisions = decisions;
    Ok(())
}

/// A write's version of the anchored file, and the lines of the anchored code in it.
type AnchoredText = (String, Vec<u32>);

/// For each write (not a merge) that changed the anchored file and holds the anchored code,
/// when a claim may speak of it (one on its commit, or a note outside the range that a rewrite
/// may have left): the file's text there and the lines of the anchored code in it.
fn anchored_texts(
    repo: &Repo,
    prov: &Provenance,
    ev: &crate::history::dialects::Evidence,
) -> Result<Vec<Option<AnchoredText>>> {
    use crate::history::dialects::weigh;
    let tip_blob = prov.writes.last().and_then(|w| w.snapshot.blob);
    let mut out = Vec::with_capacity(prov.writes.len());
    for w in &prov.writes {
        let spoken_of = !ev.outside.is_empty() || ev.claims.iter().any(|c| c.commit == w.commit);
        out.push(match w.snapshot.blob {
            // Merges are not read for records (their lines come from the merged side).
            Some(b) if w.changed && !w.merge && w.snapshot.present && spoken_of => {
                let text = String::from_utf8_lossy(&repo.read_blob(b)?).into_owned();
                let lines = match prov.tip_span {
                    // The tip's file is the one the line range was read from.
                    Some((start, end)) if Some(b) == tip_blob => (start..=end).collect(),
                    Some(_) => weigh::lines_equal_to(&text, &prov.fragments, prov.tip_line),
                    None => weigh::anchored_lines(&text, &prov.fragments, prov.pattern.as_deref()),
                };
                Some((text, lines))
            }
            _ => None,
        });
    }
    Ok(out)
}

/// A write without a record of its own, with the text of its anchored lines, for matching.
fn unclaimed<'a>(
    f: &crate::history::dialects::weigh::WriteFacts<'a>,
    before: &'a str,
    (text, anchored): &AnchoredText,
) -> Option<crate::history::dialects::orphans::Unclaimed<'a>> {
    if anchored.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    Some(crate::history::dialects::orphans::Unclaimed {
        commit: f.commit,
        path: f.path,
        before,
        anchored: anchored
            .iter()
            .filter_map(|&n| Some((n, lines.get((n as usize).checked_sub(1)?)?.to_string())))
            .collect(),
    })
}

/// Reads author and subject of the given writes (indexes) where not known yet.
pub(crate) fn describe(repo: &Repo, prov: &mut Provenance, which: &[usize]) -> Result<()> {
    for &i in which {
        if let Some(w) = prov.writes.get_mut(i)
            && w.summary.is_none()
        {
            let info = repo.commit_info(w.commit)?;
            w.author = Some(info.author_name);
            w.summary = Some(crate::redact::redact(&info.summary).0);
        }
    }
    Ok(())
}

/// Turns the anchor's locator into a matcher; scanner line ranges read the tip's text.
fn build_matcher(
    repo: &Repo,
    anchor: &Anchor,
    what: &str,
    file: &str,
    tip_blob: Option<Oid>,
    tip_name: &str,
    notes: &mut Vec<String>,
) -> Result<(Matcher, Vec<String>, Option<String>)> {
    match &anchor.locator {
        Locator::Fragments(f) => Ok((Matcher::fragments(f, anchor.kind, what)?, f.clone(), None)),
        Locator::Pattern(p) => Ok((
            Matcher::pattern(p, anchor.kind, what)?,
            Vec::new(),
            Some(p.clone()),
        )),
        Locator::Lines {
            start,
            end,
            snippet,
        } => {
            let text = match tip_blob {
                Some(b) => {
                    let content = repo.read_blob(b)?;
                    if matching::is_binary(&content) {
                        return Err(Error::input(format!(
                            "{what}: {file} is binary at the tip; a line range cannot locate code in it"
                        ))
                        .hint("give fragments: or a pattern: in an anchor YAML"));
                    }
                    matching::lines_of(&content, *start, *end).ok_or_else(|| {
                        Error::input(format!(
                            "{what}: lines {start}-{end} are outside {file} at {tip_name} ({} lines)",
                            String::from_utf8_lossy(&content).lines().count()
                        ))
                        .hint("the finding was made on another version of the file; rescan the tip or name the branch it was made on")
                    })?
                }
                None => match snippet {
                    Some(s) => {
                        notes.push(format!(
                            "{file} is not in the tip's tree; matched the scanner's snippet instead of lines {start}-{end}"
                        ));
                        s.clone()
                    }
                    None => {
                        return Err(Error::input(format!(
                            "{what}: {file} does not exist at {tip_name}, so lines {start}-{end} cannot be read"
                        ))
                        .hint("write an anchor YAML with fragments: for the defect"));
                    }
                },
            };
            if text.trim().is_empty() {
                return Err(Error::input(format!(
                    "{what}: lines {start}-{end} of {file} are blank at {tip_name}"
                ))
                .hint("the finding was made on another version of the file; rescan the tip"));
            }
            let frags = vec![text];
            Ok((Matcher::fragments(&frags, anchor.kind, what)?, frags, None))
        }
    }
}

fn not_located_reason(
    why: NotLocated,
    writes: &[WriteRecord],
    file: &str,
) -> crate::history::status::Unlocated {
    use crate::history::status::Unlocated;
    let tip_missing = writes.last().is_some_and(|w| w.snapshot.blob.is_none());
    if tip_missing {
        let by = writes
            .iter()
            .rposition(|w| w.changed && w.snapshot.blob.is_none())
            .map(|i| (i + 1, writes[i].commit.short()));
        return Unlocated::Deleted {
            file: file.to_string(),
            by,
        };
    }
    match why {
        NotLocated::Never => Unlocated::Never {
            file: file.to_string(),
        },
        NotLocated::Gone { last: Some(i) } => Unlocated::Gone {
            write: i + 1,
            commit: writes[i].commit.short(),
        },
        NotLocated::Gone { last: None } => Unlocated::GoneFromBase,
    }
}

/// Finds the repository path a finding means (see `paths::resolve`), or keeps it as given.
fn locate_file(
    repo: &Repo,
    raw: &str,
    tip_tree: Oid,
    base_tree: Oid,
    notes: &mut Vec<String>,
) -> Result<String> {
    let path = paths::normalise(raw);
    if paths::escapes(&path) {
        return Err(
            Error::input(format!("the path {raw} leads out of the repository"))
                .hint("paths in a finding are relative to the repository's top directory"),
        );
    }
    if !paths::is_absolute(&path)
        && (repo.entry_at(tip_tree, &path)?.is_some() || repo.entry_at(base_tree, &path)?.is_some())
    {
        return Ok(path);
    }
    let workdir = repo.workdir().map(|w| w.to_string_lossy().into_owned());
    for tree in [tip_tree, base_tree] {
        let files = repo.file_paths(tree)?;
        if let Some(found) =
            paths::resolve(&path, workdir.as_deref(), files.iter().map(String::as_str))
        {
            if found != path {
                notes.push(format!("finding path {raw} taken as {found}"));
            }
            return Ok(found);
        }
    }
    // Keep the path: the history walk may still find it in the middle of the range,
    // and otherwise reports that it is in no commit.
    Ok(path)
}
