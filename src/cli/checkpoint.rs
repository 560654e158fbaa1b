//! `git sage checkpoint`: the preventive security-plan block, printed or kept in the agent's
//! instructions file between markers (idempotent: a second run changes nothing).

use std::path::PathBuf;

use clap::Args;

use super::Context;
use crate::error::{Error, Result};

const START: &str = "<!-- git-sage checkpoint: start (managed by `git sage checkpoint`; edits inside are replaced) -->";
/// The start marker in a file that `git sage checkpoint` created: taking the block out of such
/// a file leaves nothing of the user's, so the file goes too.
const START_CREATED: &str = "<!-- git-sage checkpoint: start (managed by `git sage checkpoint`, which created this file; edits inside are replaced) -->";
const END: &str = "<!-- git-sage checkpoint: end -->";

/// Print the security-plan checkpoint, or insert it into AGENTS.md / CLAUDE.md
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  git sage checkpoint --cwe 918\n  git sage checkpoint --agent-file AGENTS.md\n  git sage checkpoint --agent-file CLAUDE.md --remove"
)]
pub(crate) struct CheckpointArgs {
    /// Insert the block into this file (created if missing) between markers
    #[arg(long, value_name = "FILE")]
    pub agent_file: Option<PathBuf>,

    /// Add the defence checklist of this CWE
    #[arg(long, value_name = "N")]
    pub cwe: Option<u32>,

    /// Take the block out of --agent-file again
    #[arg(long, requires = "agent_file")]
    pub remove: bool,

    /// A directory whose checkpoint.md / checklists.yaml override the embedded ones
    /// [default: git config sage.templates]
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
}

/// `text` with the managed block replaced by `block` (or removed when `None`); the block keeps
/// the start marker it has (a new one gets `START`).
pub(crate) fn splice(text: &str, block: Option<&str>) -> String {
    let start = if text.contains(START_CREATED) {
        START_CREATED
    } else {
        START
    };
    let managed = block.map(|b| format!("{start}\n{}\n{END}\n", b.trim_end()));
    if let Some(out) = super::markers::replace_between(text, start, END, managed.as_deref()) {
        return out;
    }
    match managed {
        None => text.to_string(),
        Some(m) => {
            let mut out = text.to_string();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&m);
            out
        }
    }
}

pub(crate) fn run(ctx: &Context, args: &CheckpointArgs) -> Result<i32> {
    // The same folder the guard reads the checkpoint from (docs/guard.md).
    let templates = super::util::templates_dir(args.templates.as_deref(), ctx.settings()?)?;
    let block = crate::report::recommend::checkpoint(&ctx.tr, args.cwe, templates.as_deref())?;
    let Some(path) = &args.agent_file else {
        ctx.print(&block)?;
        return Ok(0);
    };
    // An agent file the repository commits as a link out of the worktree (CLAUDE.md →
    // ~/.bashrc) is not written through; a link inside (CLAUDE.md → AGENTS.md) is.
    if let Some(worktree) = ctx.repo().ok().and_then(|r| r.workdir()) {
        let full = std::env::current_dir().map_or_else(|_| path.clone(), |d| d.join(path));
        crate::files::refuse_link_out(&worktree, &full, "checkpoint")?;
    }
    let existing = crate::files::read_text_if_exists(path, "agent file", crate::files::DOC_CAP)?;
    let created = existing.is_none();
    let old = existing.unwrap_or_else(|| {
        // Marked as ours, so that `--remove` knows the file held nothing of the user's.
        format!("{START_CREATED}\n{END}\n")
    });
    let new = splice(&old, (!args.remove).then_some(block.as_str()));
    if created && args.remove {
        crate::say!("{}: no such file; nothing to remove", path.display());
        return Ok(0);
    }
    if new == old && !created {
        crate::say!("{}: already up to date", path.display());
        return Ok(0);
    }
    if args.remove && old.contains(START_CREATED) && new.trim().is_empty() {
        std::fs::remove_file(path)
            .map_err(|e| Error::env(format!("cannot remove {}: {e}", path.display())))?;
        crate::say!(
            "{}: security-plan checkpoint removed, and the file it had created",
            path.display()
        );
        return Ok(0);
    }
    crate::files::write_output(path, new.as_bytes())
        .map_err(|e| Error::env(format!("cannot write {}: {e}", path.display())))?;
    crate::say!(
        "{}: security-plan checkpoint {}",
        path.display(),
        if args.remove { "removed" } else { "written" }
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotent_insert_replace_remove() {
        let doc = "# Agents\n\nBe careful.\n";
        let once = splice(doc, Some("PLAN v1"));
        assert!(
            once.starts_with(doc)
                && once.contains("PLAN v1")
                && once.ends_with(&format!("{END}\n"))
        );
        assert_eq!(splice(&once, Some("PLAN v1")), once);
        let twice = splice(&once, Some("PLAN v2"));
        assert!(twice.contains("PLAN v2") && !twice.contains("PLAN v1"));
        assert_eq!(twice.matches(START).count(), 1);
        assert_eq!(splice(&twice, None), doc);
        assert_eq!(splice("", Some("P")), format!("{START}\nP\n{END}\n"));
    }

    #[test]
    fn a_created_file_keeps_its_marker() {
        let made = splice(&format!("{START_CREATED}\n{END}\n"), Some("PLAN"));
        assert_eq!(made, format!("{START_CREATED}\nPLAN\n{END}\n"));
        let edited = format!("# Mine\n\n{made}");
        assert_eq!(
            splice(&edited, Some("PLAN 2"))
                .matches(START_CREATED)
                .count(),
            1
        );
        assert_eq!(splice(&made, None), "");
        assert_eq!(splice(&edited, None), "# Mine\n");
    }
}
