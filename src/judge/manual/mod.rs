//! The manual judge (`--judge manual:DIR`, `judge --export/--import DIR`): the very prompts an
//! API judge is sent, written to a directory for a person to paste into a chat, and the replies
//! they save beside them read back as that judge's answers. Nothing is asked of anyone: a turn
//! without a reply yet is pending (deferred, never a zero), and a later run picks up the
//! replies saved since.

mod export;
mod manifest;
mod reply;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::cache::hex;
use super::jobs::{Job, JobError, JobResult};
use super::prompt::{Prompt, TurnView};
use crate::error::{Error, Result};

pub(crate) use manifest::MANIFEST;

/// What the prompts of a run are made from, as the manifest keeps it.
pub(crate) struct Session<'a> {
    /// The session as the command names it (shown, not compared).
    pub source: &'a str,
    /// `digest()` of the redacted task and turns.
    pub digest: String,
    /// The turns in scope, `N-M`.
    pub turns: String,
    pub criterion: &'a str,
    pub protocol: &'a str,
    pub templates: &'a str,
}

/// A hash of the task and turns exactly as the judge sees them (redacted): the same session
/// read from a path or from git is the same session.
pub(crate) fn digest(task: &str, views: &[TurnView]) -> String {
    let mut h = Sha256::new();
    let mut part = |s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    part(task);
    for v in views {
        part(&v.n.to_string());
        part(&v.quotable());
        for c in &v.calls {
            part(c.result.as_deref().unwrap_or(""));
        }
    }
    hex(&h.finalize())
}

/// The SHA-256 of a prompt as a command judge is sent it (system, then user part).
fn digest_of(p: &Prompt) -> String {
    hex(&Sha256::digest(p.text().as_bytes()))
}

fn stem(turn: Option<u32>) -> String {
    match turn {
        Some(t) => format!("turn-{t:03}"),
        None => "all-turns".into(),
    }
}

/// `turn-007.md`.
fn prompt_name(turn: Option<u32>) -> String {
    format!("{}.md", stem(turn))
}

/// `turn-007.answer.md`, the name the files ask for.
fn answer_name(turn: Option<u32>) -> String {
    format!("{}.answer.md", stem(turn))
}

/// Every name an answer is read from: the one asked for, and the same saved as text or JSON.
fn answer_paths(dir: &Path, turn: Option<u32>) -> Vec<PathBuf> {
    ["md", "txt", "json"]
        .iter()
        .map(|ext| dir.join(format!("{}.answer.{ext}", stem(turn))))
        .collect()
}

/// A pasted reply is a few kilobytes; a file far larger is not one.
const ANSWER_CAP: u64 = 4 << 20;

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::files::write_atomic(path, bytes)
        .map_err(|e| Error::env(format!("cannot write {}: {e}", path.display())))
}

/// What `judge --export` wrote.
#[derive(Debug)]
pub(crate) struct Exported {
    pub dir: PathBuf,
    /// Each prompt file and the answer file it asks for.
    pub files: Vec<(PathBuf, PathBuf)>,
    /// Answers already saved in the directory (a repeated export keeps them).
    pub answered: usize,
}

impl Exported {
    /// What was written and what to do next, for stdout.
    pub(crate) fn render(&self, source: &str) -> String {
        let d = self.dir.display();
        let mut out = format!(
            "wrote {} prompt(s) to {d} ({d}/README.md says what to do){}\n",
            self.files.len(),
            match self.answered {
                0 => String::new(),
                n => format!("; the {n} answer(s) already there are kept"),
            }
        );
        for (p, a) in &self.files {
            out.push_str(&format!("  {} → {}\n", p.display(), a.display()));
        }
        out.push_str(&format!(
            "next: paste each prompt into a new chat, save the reply under the name after its arrow, then run the same command with --import in place of --export, its other options unchanged:\n  git sage judge {source} --import {d}\n"
        ));
        out
    }
}

/// Writes the prompts, the README and the manifest into `dir`: a new or empty directory, or
/// one this session's prompts were exported to before (its answers are kept).
pub(super) fn export(dir: &Path, session: &Session, jobs: &[Job]) -> Result<Exported> {
    match manifest::load(dir)? {
        Some(m) => m.check(dir, session, jobs)?,
        None => {
            let busy = std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some());
            if busy {
                return Err(Error::input(format!(
                    "{}: the directory is not empty and holds no {MANIFEST} of git sage",
                    dir.display()
                ))
                .hint("export the prompts into a new or empty directory"));
            }
        }
    }
    for j in jobs {
        let md = export::prompt_file(session, dir, j.turn, &j.prompt);
        write(&dir.join(prompt_name(j.turn)), md.as_bytes())?;
    }
    write(
        &dir.join("README.md"),
        export::readme(session, dir, jobs).as_bytes(),
    )?;
    manifest::Manifest::new(session, jobs).save(dir)?;
    let answered = jobs
        .iter()
        .filter(|j| answer_paths(dir, j.turn).iter().any(|p| p.exists()))
        .count();
    Ok(Exported {
        dir: dir.to_path_buf(),
        files: jobs
            .iter()
            .map(|j| (dir.join(prompt_name(j.turn)), dir.join(answer_name(j.turn))))
            .collect(),
        answered,
    })
}

/// Fails unless `dir` holds exported prompts (`judge --import DIR`, which never exports).
pub(crate) fn check_exported(dir: &Path) -> Result<()> {
    if manifest::path(dir).exists() {
        return Ok(());
    }
    Err(Error::input(format!(
        "--import {}: no {MANIFEST} there: no prompts were exported to it",
        dir.display()
    ))
    .hint(format!(
        "export them first: git sage judge SESSION --export {}",
        dir.display()
    )))
}

/// Every job's answer from `dir`: exported there first when it holds no prompts yet (then
/// every turn is pending); otherwise checked against the manifest and read, file by file.
pub(super) fn collect(
    dir: &Path,
    session: &Session,
    jobs: &[Job],
) -> Result<Vec<(Option<u32>, JobResult)>> {
    let results: Vec<(Option<u32>, JobResult)> = match manifest::load(dir)? {
        None => {
            let wrote = export(dir, session, jobs)?;
            crate::say!(
                "git-sage: manual judge: wrote {} prompt(s) to {}; paste each into a new chat, save the reply beside it as turn-NNN.answer.md, and run this command again ({}/README.md says how)",
                wrote.files.len(),
                dir.display(),
                dir.display()
            );
            jobs.iter()
                .map(|j| (j.turn, JobResult::Failed(pending(dir, j.turn, None))))
                .collect()
        }
        Some(m) => {
            m.check(dir, session, jobs)?;
            let results: Vec<_> = jobs.iter().map(|j| (j.turn, read(dir, j))).collect();
            note(dir, &results);
            results
        }
    };
    Ok(results)
}

/// A turn still waiting for its reply, in words naming both files.
fn pending(dir: &Path, turn: Option<u32>, empty: Option<&Path>) -> JobError {
    let prompt = dir.join(prompt_name(turn));
    JobError::Pending(match empty {
        Some(p) => format!(
            "no answer yet: {} is empty; paste the chat's reply to {} into it",
            p.display(),
            prompt.display()
        ),
        None => format!(
            "no answer yet: paste {} into a chat and save the reply as {}",
            prompt.display(),
            dir.join(answer_name(turn)).display()
        ),
    })
}

/// One job's answer: its file read and checked, or why there is none to use.
fn read(dir: &Path, job: &Job) -> JobResult {
    let present: Vec<PathBuf> = answer_paths(dir, job.turn)
        .into_iter()
        .filter(|p| p.exists())
        .collect();
    let unusable = |m: String| JobResult::Failed(JobError::Unusable(m));
    let path = match present.as_slice() {
        [] => return JobResult::Failed(pending(dir, job.turn, None)),
        [one] => one,
        several => {
            let names: Vec<String> = several.iter().map(|p| p.display().to_string()).collect();
            return unusable(format!(
                "{} answers for the same prompt: {}; keep one",
                several.len(),
                names.join(", ")
            ));
        }
    };
    let text = match crate::files::read_text(path, "answer", ANSWER_CAP) {
        Ok(t) => t,
        Err(e) => return unusable(e.message().to_string()),
    };
    if text.trim().is_empty() {
        return JobResult::Failed(pending(dir, job.turn, Some(path)));
    }
    match reply::read(&text, job.turn) {
        Ok(answers) => JobResult::Answers(answers),
        Err(e) => unusable(match e.line {
            Some(line) => format!("{}:{line}: {}", path.display(), e.message),
            None => format!("{}: {}", path.display(), e.message),
        }),
    }
}

/// The prompts shown by name on the note; the rest are counted.
const LISTED: usize = 12;

/// One line on stderr when some replies are missing or unusable: how many are in, and which
/// prompts still wait (their files, so the next step needs no looking up).
fn note(dir: &Path, results: &[(Option<u32>, JobResult)]) {
    let waiting: Vec<String> = results
        .iter()
        .filter(|(_, r)| matches!(r, JobResult::Failed(JobError::Pending(_))))
        .map(|(t, _)| dir.join(prompt_name(*t)).display().to_string())
        .collect();
    let redo = results
        .iter()
        .filter(|(_, r)| matches!(r, JobResult::Failed(JobError::Unusable(_))))
        .count();
    if waiting.is_empty() && redo == 0 {
        return;
    }
    let read = results.len() - waiting.len() - redo;
    let mut line = format!(
        "git-sage: manual judge: {read} of {} answer(s) read from {}",
        results.len(),
        dir.display()
    );
    if redo > 0 {
        line.push_str(&format!("; {redo} to answer again (named below)"));
    }
    if !waiting.is_empty() {
        let more = match waiting.len().saturating_sub(LISTED) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        let shown: Vec<&str> = waiting.iter().take(LISTED).map(String::as_str).collect();
        line.push_str(&format!(
            "; waiting for {}: {}{more} (save each reply beside its prompt as turn-NNN.answer.md)",
            waiting.len(),
            shown.join(", ")
        ));
    }
    crate::say!("{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(turn: u32) -> Job {
        Job {
            turn: Some(turn),
            prompt: Prompt {
                system: "system".into(),
                blocks: vec![format!("turn {turn}\n")],
                instruction: format!("Score turn {turn}."),
            },
            elided: false,
            request_key: turn.to_string(),
        }
    }

    fn session(digest: &str) -> Session<'static> {
        Session {
            source: "s.yaml",
            digest: digest.into(),
            turns: "1-2".into(),
            criterion: "security",
            protocol: "prefix",
            templates: "v1",
        }
    }

    fn reply(turn: u32) -> String {
        format!(
            "Sure!\n```json\n{{\"turn\": {turn}, \"applicable\": true, \"opportunity\": true, \"kind\": \"review\", \"scores\": {{\"tr\": 0, \"di\": 0, \"vr\": 0, \"sa\": 0}}, \"quotes\": {{\"tr\": null, \"di\": null, \"vr\": null, \"sa\": null}}}}\n```\n"
        )
    }

    fn outcome(r: &JobResult) -> String {
        match r {
            JobResult::Answers(a) => format!("answer {}", a[0].turn),
            JobResult::Failed(e) => format!("{:?}: {e}", e.cause()),
            JobResult::Skipped(why) => format!("skipped: {why:?}"),
        }
    }

    #[test]
    fn an_empty_directory_is_exported_to_and_answers_are_read_as_they_come() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("review");
        let jobs = [job(1), job(2)];
        let first = collect(&dir, &session("d"), &jobs).unwrap();
        assert!(
            first
                .iter()
                .all(|(_, r)| outcome(r).starts_with("Deferred: no answer yet: paste "))
        );
        for f in ["turn-001.md", "turn-002.md", "README.md", MANIFEST] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        std::fs::write(dir.join("turn-002.answer.md"), reply(2)).unwrap();
        std::fs::write(dir.join("turn-001.answer.txt"), "  \n").unwrap();
        let second = collect(&dir, &session("d"), &jobs).unwrap();
        let got: Vec<String> = second.iter().map(|(_, r)| outcome(r)).collect();
        assert!(got[0].contains("turn-001.answer.txt is empty"), "{got:?}");
        assert_eq!(got[1], "answer 2");
        std::fs::write(dir.join("turn-001.answer.txt"), reply(2)).unwrap();
        std::fs::write(dir.join("turn-002.answer.json"), reply(2)).unwrap();
        let third = collect(&dir, &session("d"), &jobs).unwrap();
        let got: Vec<String> = third.iter().map(|(_, r)| outcome(r)).collect();
        assert!(
            got[0].starts_with("InvalidAnswer: ")
                && got[0]
                    .contains("turn-001.answer.txt:3: this is an answer for turn 2, not turn 1"),
            "{got:?}"
        );
        assert!(got[1].contains("2 answers for the same prompt"), "{got:?}");
    }

    #[test]
    fn another_session_or_other_prompts_are_refused_before_any_answer_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let jobs = [job(1), job(2)];
        export(dir, &session("d"), &jobs).unwrap();
        let e = collect(dir, &session("other"), &jobs).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message().contains("another version of"), "{e}");
        let mut changed = [job(1), job(2)];
        changed[1].prompt.instruction.push_str(" Now.");
        let e = collect(dir, &session("d"), &changed).unwrap_err();
        assert!(
            e.message()
                .contains("the prompt turn-002.md is not the one"),
            "{e}"
        );
        let e = collect(dir, &session("d"), &jobs[..1]).unwrap_err();
        assert!(e.message().contains("for turns 1, 2, not 1"), "{e}");
        let strict = Session {
            criterion: "privacy",
            ..session("d")
        };
        let e = collect(dir, &strict, &jobs).unwrap_err();
        assert!(
            e.message().contains("criterion security, not privacy"),
            "{e}"
        );
        // Exporting again into the same directory is fine; into someone else's files, not.
        export(dir, &session("d"), &jobs).unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("notes.txt"), "mine").unwrap();
        let e = export(other.path(), &session("d"), &jobs).unwrap_err();
        assert!(e.message().contains("not empty"), "{e}");
        assert!(check_exported(other.path()).is_err());
        assert!(check_exported(dir).is_ok());
    }
}
