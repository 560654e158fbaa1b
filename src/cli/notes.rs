//! `git sage notes show|push`: read and publish refs/notes/sage.

use clap::{Args, Subcommand};

use super::Context;
use crate::error::{Error, Result};
use crate::git::NOTES_REF;

/// Read or publish the origin notes (refs/notes/sage)
#[derive(Debug, Args)]
#[command(
    after_help = "Notes travel only when pushed and fetched explicitly:\n  git sage notes push origin\n  git config --add remote.origin.fetch '+refs/notes/sage:refs/notes/sage'   # then git fetch\n  git log --notes=sage                                                       # read them in the log"
)]
pub(crate) struct NotesArgs {
    #[command(subcommand)]
    pub cmd: NotesCmd,
}

#[derive(Debug, Subcommand)]
pub(crate) enum NotesCmd {
    /// Print the note on a commit [default: HEAD]
    Show {
        #[arg(value_name = "REV")]
        rev: Option<String>,
        /// Print the machine-readable part as JSON
        #[arg(long)]
        json: bool,
    },
    /// Push refs/notes/sage to a remote [default: origin]
    Push {
        #[arg(value_name = "REMOTE")]
        remote: Option<String>,
    },
}

pub(crate) fn run(ctx: &Context, args: &NotesArgs) -> Result<i32> {
    let repo = ctx.repo()?;
    match &args.cmd {
        NotesCmd::Show { rev, json } => {
            let rev = rev.as_deref().unwrap_or("HEAD");
            let mut id = repo.resolve_commit(rev)?;
            let mut note = repo.read_note(id)?;
            // A merge made with the hooks installed: the notes are on the branch it merged.
            if note.is_none() {
                for parent in repo.commit_info(id)?.parents.into_iter().skip(1) {
                    if let Some(text) = repo.read_note(parent)? {
                        crate::say!(
                            "git-sage: {rev} ({}) is a merge; the note is on the branch it merged, {}",
                            id.short(),
                            parent.short()
                        );
                        (id, note) = (parent, Some(text));
                        break;
                    }
                }
            }
            match note {
                None => {
                    crate::say!("no {NOTES_REF} note on {rev} ({})", id.short());
                    Ok(1)
                }
                Some(text) if *json => {
                    let data: Vec<serde_json::Value> = crate::notes::parse(&text)
                        .0
                        .into_iter()
                        .map(|s| s.data)
                        .collect();
                    ctx.print_json(&data)?;
                    Ok(0)
                }
                Some(text) => {
                    ctx.print_text(&text)?;
                    Ok(0)
                }
            }
        }
        NotesCmd::Push { remote } => {
            let remote = remote.as_deref().unwrap_or("origin");
            let dir = repo.workdir().unwrap_or_else(|| repo.git_dir());
            let status = std::process::Command::new("git")
                .current_dir(dir)
                .args(["push", remote, &format!("{NOTES_REF}:{NOTES_REF}")])
                .status()
                .map_err(|e| Error::env(format!("cannot run git push: {e}")))?;
            if status.success() {
                Ok(0)
            } else {
                Err(Error::env(format!("git push {remote} {NOTES_REF} failed ({status})")).hint("check the remote name and your access; fetch and merge the remote notes first if they diverged (git fetch REMOTE refs/notes/sage:refs/notes/sage-remote && git notes --ref=sage merge refs/notes/sage-remote)"))
            }
        }
    }
}
