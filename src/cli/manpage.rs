//! `git sage install-man`: the man pages (so that `git sage --help`, which git turns into
//! `man git-sage`, works), and the top-level `-h` line, which says whether it does.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::{Arg, ArgAction, Args, CommandFactory};

use super::{Cli, Context};
use crate::error::{Error, Result};

/// Write the man pages (git-sage.1 and one per subcommand)
#[derive(Debug, Args)]
#[command(after_help = INSTALL_AFTER_HELP)]
pub(crate) struct InstallManArgs {
    /// Directory to write man1/ into [default: share/man beside the directory of git-sage,
    /// e.g. ~/.cargo/share/man; if that cannot be written, $XDG_DATA_HOME/man or
    /// ~/.local/share/man]
    #[arg(long = "dir", value_name = "DIR")]
    pub man_dir: Option<PathBuf>,
}

const INSTALL_AFTER_HELP: &str = "\
man looks in PREFIX/share/man for every PREFIX/bin on PATH, so the default needs no MANPATH: \
`git sage --help` (git's `man git-sage`) then shows the page. Another directory goes on \
MANPATH:
  export MANPATH=\"DIR:$MANPATH\"";

/// Where `install-man` writes without `--dir`, best first.
fn default_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    // man-db and macOS man derive their search path from PATH (PREFIX/bin -> PREFIX/share/man),
    // so beside the binary the pages are found with no MANPATH: ~/.cargo/bin/git-sage gives
    // ~/.cargo/share/man. current_exe resolves symbolic links on Linux; that is the directory
    // the user put on PATH in the usual installs (cargo, a copied binary).
    if let Some(prefix) = std::env::current_exe()
        .ok()
        .as_deref()
        .and_then(Path::parent)
        .and_then(Path::parent)
    {
        dirs.push(prefix.join("share/man"));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    if let Some(d) = data {
        dirs.push(d.join("man"));
    }
    dirs
}

/// The pages: git-sage.1 and one per visible subcommand at every depth (git-sage-blame-origin.1,
/// git-sage-guard-install.1, …): a page's SUBCOMMANDS section names the pages of its
/// subcommands, so each one named is written.
fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    let top = Cli::command().name("git-sage");
    let mut cmds = Vec::new();
    collect(top, "git-sage", "git sage", &mut cmds);
    cmds.into_iter()
        .map(|(name, c)| {
            let mut buf = Vec::new();
            clap_mangen::Man::new(c.clone())
                .render(&mut buf)
                .map_err(|e| Error::env(format!("cannot render {name}.1: {e}")))?;
            let page = with_synopsis(&String::from_utf8_lossy(&buf), &synopsis(c));
            Ok((format!("{name}.1"), page.into_bytes()))
        })
        .collect()
}

/// `cmd` as page `name` (`git-sage-guard`, typed `git sage guard`), then its visible
/// subcommands. `help` subcommands are left out: clap adds them, `-h` says the same.
fn collect(cmd: clap::Command, name: &str, typed: &str, out: &mut Vec<(String, clap::Command)>) {
    // clap's names are &'static str without its `string` feature; a few bytes, once.
    let leak = |s: String| -> &'static str { s.leak() };
    let cmd = cmd
        .name(leak(name.to_string()))
        .bin_name(typed)
        .version(env!("CARGO_PKG_VERSION"))
        .disable_help_subcommand(true);
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    out.push((name.to_string(), cmd));
    for sub in subs {
        let n = format!("{name}-{}", sub.get_name());
        let t = format!("{typed} {}", sub.get_name());
        collect(sub, &n, &t, out);
    }
}

/// `text` with roff's special characters escaped.
fn roff(text: &str) -> String {
    text.replace('\\', "\\\\").replace('-', "\\-")
}

/// The SYNOPSIS line of a page: every visible option with its value, the operands, the
/// subcommand. clap_mangen's shows no option's value, and for an option with only a short
/// name not even where it goes (`[-C ]`).
fn synopsis(mut cmd: clap::Command) -> String {
    cmd.build();
    let bold = |s: &str| format!("\\fB{}\\fR", roff(s));
    let value = |a: &Arg| {
        let names = a
            .get_value_names()
            .map(|v| v.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| a.get_id().as_str().to_uppercase());
        format!("\\fI{}\\fR", roff(&names))
    };
    let mut parts = vec![bold(cmd.get_bin_name().unwrap_or(cmd.get_name()))];
    let mut options: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .collect();
    options.sort_by_key(|a| a.get_display_order());
    for a in options {
        let mut s = match (a.get_short(), a.get_long()) {
            (Some(c), Some(l)) => format!("{}|{}", bold(&format!("-{c}")), bold(&format!("--{l}"))),
            (Some(c), None) => bold(&format!("-{c}")),
            (None, Some(l)) => bold(&format!("--{l}")),
            (None, None) => continue,
        };
        match a.get_num_args() {
            Some(n) if n.takes_values() && n.min_values() == 0 => {
                s = format!("{s} [{}]", value(a));
            }
            Some(n) if n.takes_values() => s = format!("{s} {}", value(a)),
            _ => {}
        }
        parts.push(match a.is_required_set() {
            true => s,
            false => format!("[{s}]"),
        });
    }
    for a in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let more = match a.get_num_args() {
            Some(n) if n.max_values() > 1 => "...",
            _ => "",
        };
        let v = format!("{}{more}", value(a));
        parts.push(match a.is_required_set() {
            true => v,
            false => format!("[{v}]"),
        });
    }
    if cmd.has_subcommands() {
        parts.push("\\fICOMMAND\\fR".to_string());
    }
    parts.join(" ")
}

/// The page `page` with `line` as its SYNOPSIS.
fn with_synopsis(page: &str, line: &str) -> String {
    const HEAD: &str = ".SH SYNOPSIS\n";
    let Some(at) = page.find(HEAD).map(|i| i + HEAD.len()) else {
        return page.to_string();
    };
    let end = page[at..].find("\n.SH ").map_or(page.len(), |i| at + i + 1);
    format!("{}{line}\n{}", &page[..at], &page[end..])
}

fn write_pages(base: &Path, pages: &[(String, Vec<u8>)]) -> std::result::Result<PathBuf, String> {
    let dir = base.join("man1");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (file, text) in pages {
        let p = dir.join(file);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    Ok(dir)
}

pub(crate) fn install(ctx: &Context, args: &InstallManArgs) -> Result<i32> {
    let pages = pages()?;
    let (base, dir) = match &args.man_dir {
        Some(d) => (d.clone(), write_pages(d, &pages).map_err(Error::env)?),
        None => {
            let mut failed = Vec::new();
            let mut done = None;
            for base in default_dirs() {
                match write_pages(&base, &pages) {
                    Ok(dir) => {
                        done = Some((base, dir));
                        break;
                    }
                    Err(e) => failed.push(e),
                }
            }
            match done {
                Some(d) => d,
                None if failed.is_empty() => {
                    return Err(Error::input(
                        "cannot tell where to install: set HOME or pass --dir",
                    ));
                }
                None => return Err(Error::env(failed.join("; ")).hint("pass --dir DIR")),
            }
        }
    };
    ctx.print(&format!("{}\n", dir.display()))?;
    let wrote = format!(
        "git-sage: wrote {} man pages to {}",
        pages.len(),
        dir.display()
    );
    let ours = dir.join("git-sage.1");
    match man_page() {
        Lookup::Found(p) if same_file(&p, &ours) => {
            crate::say!("{wrote}; `git sage --help` now shows them")
        }
        Lookup::Found(p) => crate::say!(
            "{wrote}; but man finds {} first: remove it, or put {} first on MANPATH",
            p.display(),
            base.display()
        ),
        Lookup::NotFound => crate::say!(
            "{wrote}; man does not look there: export MANPATH=\"{}:$MANPATH\" (or install beside a bin directory on PATH)",
            base.display()
        ),
        Lookup::NoMan => crate::say!(
            "{wrote}; there is no `man` here to show them: `git-sage --help` prints the same help"
        ),
    }
    Ok(0)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// What `man -w git-sage` says: which page `git sage --help` would show.
enum Lookup {
    Found(PathBuf),
    NotFound,
    NoMan,
}

fn man_page() -> Lookup {
    let out = Command::new("man")
        .args(["-w", "git-sage"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    match out {
        Err(_) => Lookup::NoMan,
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .filter(|l| !l.trim().is_empty())
            .map_or(Lookup::NotFound, |l| Lookup::Found(PathBuf::from(l.trim()))),
        Ok(_) => Lookup::NotFound,
    }
}

/// The command line as `main` parses it. git turns `git sage --help` into `man git-sage`, so
/// clap's "see more with '--help'" on the top-level `-h` line is only true once the page is
/// installed: there the line says where the full help is. clap's help flag setting is global,
/// so the flag is replaced only when the top level's help is what was asked for (a `-h` before
/// the subcommand), and subcommands keep theirs.
pub(crate) fn command() -> clap::Command {
    let cmd = Cli::command();
    if !asks_top_help(&cmd, std::env::args_os().skip(1)) {
        return cmd;
    }
    let hint = match man_page() {
        Lookup::Found(_) => "Print help (see more with 'git sage --help')",
        Lookup::NotFound | Lookup::NoMan => {
            "Print help (see more with 'git-sage --help'; 'git sage --help' needs 'git sage install-man')"
        }
    };
    cmd.disable_help_flag(true).arg(
        Arg::new("help")
            .short('h')
            .long("help")
            .action(ArgAction::Help)
            .help(hint),
    )
}

/// Whether `-h` comes before the subcommand: among the top level's options, as clap reads
/// them (`-C DIR`, `-CDIR`, `--color WHEN`, `--color=WHEN`, `-qh`).
fn asks_top_help(cmd: &clap::Command, mut args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let takes_value = |arg: Option<&Arg>| arg.is_some_and(|a| a.get_action().takes_values());
    while let Some(a) = args.next() {
        let Some(a) = a.to_str() else { return false };
        if let Some(long) = a.strip_prefix("--") {
            if long.is_empty() || long == "help" {
                return false;
            }
            let arg = cmd.get_arguments().find(|x| x.get_long() == Some(long));
            if !long.contains('=') && takes_value(arg) {
                args.next();
            }
        } else if let Some(shorts) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
            for (i, c) in shorts.char_indices() {
                if c == 'h' {
                    return true;
                }
                let arg = cmd.get_arguments().find(|x| x.get_short() == Some(c));
                if takes_value(arg) {
                    // The rest is the value, or the value is the next argument.
                    if i + c.len_utf8() == shorts.len() {
                        args.next();
                    }
                    break;
                }
            }
        } else {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_top_level_help_request_is_seen() {
        let cmd = Cli::command();
        let asks = |a: &[&str]| asks_top_help(&cmd, a.iter().map(std::ffi::OsString::from));
        assert!(asks(&["-h"]));
        assert!(asks(&["-C", "dir", "-h"]));
        assert!(asks(&["-Cdir", "-h", "provenance"]));
        assert!(asks(&["--color", "never", "-qh"]));
        assert!(asks(&["--color=never", "-h"]));
        assert!(!asks(&["provenance", "-h"]));
        assert!(!asks(&["--help"]));
        assert!(!asks(&["-C", "-h"]));
        assert!(!asks(&["-Ch"]));
        assert!(!asks(&["--color", "-h"]));
        assert!(!asks(&[]));
    }
}
