//! `git sage install-man` and `git sage completions`: the man page (so that `git sage --help`,
//! which git turns into `man git-sage`, works) and shell completions, from the CLI definition.

use std::path::PathBuf;

use clap::{Args, CommandFactory, ValueEnum};

use super::{Cli, Context};
use crate::error::{Error, Result};

/// Write the man pages (git-sage.1 and one per subcommand)
#[derive(Debug, Args)]
#[command(
    after_help = "Then `git sage --help` (git's `man git-sage`) shows it. If the directory is not on MANPATH:\n  export MANPATH=\"$HOME/.local/share/man:$MANPATH\""
)]
pub(crate) struct InstallManArgs {
    /// Directory to write man1/ into [default: $XDG_DATA_HOME/man or ~/.local/share/man]
    #[arg(long = "dir", value_name = "DIR")]
    pub man_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Print shell completions
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
git sage completions bash \\\n      \
> ~/.local/share/bash-completion/completions/git-sage\n  \
git sage completions zsh > ~/.zfunc/_git-sage\n  \
git sage completions fish > ~/.config/fish/completions/git-sage.fish")]
pub(crate) struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: Shell,
}

fn render(cmd: clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    clap_mangen::Man::new(cmd).render(out)
}

pub(crate) fn install(ctx: &Context, args: &InstallManArgs) -> Result<i32> {
    let base = match &args.man_dir {
        Some(d) => d.clone(),
        None => std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .ok_or_else(|| Error::input("cannot tell where to install: set HOME or pass --dir"))?
            .join("man"),
    };
    let dir = base.join("man1");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::env(format!("cannot create {}: {e}", dir.display())))?;
    let cmd = Cli::command().name("git-sage");
    let mut pages = vec![("git-sage.1".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("git-sage-{}", sub.get_name());
        pages.push((format!("{name}.1"), sub.clone().name(&*name.clone().leak())));
    }
    for (file, c) in &pages {
        let mut buf = Vec::new();
        render(c.clone(), &mut buf)
            .map_err(|e| Error::env(format!("cannot render {file}: {e}")))?;
        let p = dir.join(file);
        std::fs::write(&p, buf)
            .map_err(|e| Error::env(format!("cannot write {}: {e}", p.display())))?;
    }
    ctx.print(&format!("{}\n", dir.display()))?;
    crate::say!(
        "git-sage: wrote {} man pages to {}; `git sage --help` now opens them (add {} to MANPATH if needed)",
        pages.len(),
        dir.display(),
        base.display()
    );
    Ok(0)
}

pub(crate) fn completions(ctx: &Context, args: &CompletionsArgs) -> Result<i32> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(shell, &mut cmd, "git-sage", &mut buf);
    ctx.print(&String::from_utf8_lossy(&buf))?;
    Ok(0)
}
