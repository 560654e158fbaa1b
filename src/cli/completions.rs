//! `git sage completions`: clap's completion scripts for `git-sage`, plus what each shell needs
//! so that `git sage <TAB>`, completed by git's own completion, gives the same words.

use clap::{Args, CommandFactory, ValueEnum};

use super::{Cli, Context};
use crate::error::Result;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Print shell completions (for both `git sage` and `git-sage`)
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: Shell,
}

const AFTER_HELP: &str = "\
Examples:
  git sage completions bash \\
      > ~/.local/share/bash-completion/completions/git-sage
  git sage completions zsh > ~/.zfunc/_git-sage
  git sage completions fish > ~/.config/fish/conf.d/git-sage.fish

bash: through the bash-completion package, which also lets git's own completion load the \
file for `git sage`. zsh: put ~/.zfunc on fpath before compinit (fpath=(~/.zfunc $fpath) in \
~/.zshrc). fish: conf.d is read at start-up, so `git sage` completes before `git-sage` has \
been. Then start a new shell.";

/// git-completion.bash completes `git sage …` by calling `_git_sage` with the command line in
/// `words`, the cursor's index in `cword` and the index of `sage` in `__git_cmd_idx` (older
/// git sets none and means 1). clap's function reads COMP_WORDS and COMP_CWORD instead:
/// hand it the same line as if `git-sage …` had been typed.
const BASH_GIT: &str = r#"
# `git sage <TAB>`, called by git's completion (which loads this file as git-sage).
_git_sage() {
    local at=${__git_cmd_idx:-1}
    local COMP_WORDS=(git-sage "${words[@]:at+1}")
    local COMP_CWORD=$((cword - at))
    CLAP_FUNCTION git-sage "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    # git registers its completion with -o nospace and adds the space itself; let readline
    # add it here (bash 3 has no compopt: add it to the words).
    compopt +o nospace 2>/dev/null && return
    local i
    for i in "${!COMPREPLY[@]}"; do
        COMPREPLY[i]+=" "
    done
}
"#;

/// fish completes `git sage …` through git's completion, which hands a `git-*` command's words
/// to that command's completions only in newer fish (3.6 registers them under the wrong name):
/// do it here, for every version. fish shows a candidate offered twice once. This file is
/// loaded at start-up from conf.d (`git sage completions -h`): fish would load a completions/
/// file only when `git-sage` itself is completed.
const FISH_GIT: &str = r#"
# `git sage <TAB>`: the words after `sage`, completed as `git-sage` would complete them.
function __fish_git_sage_from_git
    set -l words (commandline -opc)
    set -l at (contains -i -- sage $words)
    or return
    set -e words[1..$at]
    complete -C "git-sage "(string join ' ' -- (string escape -- $words) (commandline -ct))
end
complete -c git -f -n '__fish_git_using_command sage' -a '(__fish_git_sage_from_git)'
complete -c git -f -n __fish_git_needs_command -a sage -d 'Find where an AI coding agent\'s security repair first went wrong'
"#;

/// zsh's `_git` lists `git-*` completion functions found on fpath as git commands, with the
/// description on the file's second line, and calls `_git-sage` for `git sage …` with the
/// words from `sage` on: clap's `_git-sage` needs nothing else.
const ZSH_DESCRIPTION: &str =
    "#description find where an AI coding agent's security repair first went wrong\n";

pub(crate) fn run(ctx: &Context, args: &CompletionsArgs) -> Result<i32> {
    let mut cmd = without_hidden(&Cli::command());
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "git-sage", &mut buf);
    let script = String::from_utf8_lossy(&buf);
    let out = match args.shell {
        Shell::Bash => {
            // clap_complete spells the states of a hyphenated name one way in its dispatch loop
            // (git__sage__subcmd__X) and another in its case arms (git__subcmd__sage__subcmd__X),
            // so no arm matched and no subcommand's option completed (clap issue #6421): spell
            // the arms as the loop does. Once clap agrees with itself this replaces nothing.
            let script = script.replace("git__subcmd__sage__subcmd__", "git__sage__subcmd__");
            // clap names its function after the binary in its own way (`_git__sage`): take
            // the name from the `complete -F` line it registers.
            let function = script
                .split("complete -F ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or("_git__sage");
            format!("{script}{}", BASH_GIT.replace("CLAP_FUNCTION", function))
        }
        Shell::Zsh => match script.split_once('\n') {
            Some((compdef, rest)) => format!("{compdef}\n{ZSH_DESCRIPTION}{rest}"),
            None => script.into_owned(),
        },
        Shell::Fish => format!("{}{FISH_GIT}", fish_quote_help(&script)),
    };
    ctx.print(&out)?;
    Ok(0)
}

/// clap_complete writes a possible value's help as `value\t'help'` inside a double-quoted
/// `-a "…"`, escaping only `'` and `\`: a `"` in the help (`turns --from markdown`) ends the
/// string and fish rejects the line, and a `$` would expand. Escape both for the double quotes.
fn fish_quote_help(script: &str) -> String {
    let mut out = String::with_capacity(script.len() + 64);
    for line in script.lines() {
        match line.split_once("\\t'") {
            Some((value, help)) => {
                let (body, end) = if let Some(b) = help.strip_suffix("'\"") {
                    (b, "'\"")
                } else if let Some(b) = help.strip_suffix('\'') {
                    (b, "'")
                } else {
                    (help, "")
                };
                let body = body.replace('"', "\\\"").replace('$', "\\$");
                out.push_str(&format!("{value}\\t'{body}{end}"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The command line without its hidden subcommands (`hook`), which clap's generators would
/// offer. clap cannot remove a subcommand, so the top level is rebuilt from what the generators
/// read: its arguments, visible subcommands, texts, version and help settings. Only the top
/// level has hidden subcommands (a unit test checks).
fn without_hidden(cmd: &clap::Command) -> clap::Command {
    let mut out = clap::Command::new("git-sage")
        .version(env!("CARGO_PKG_VERSION"))
        .args(cmd.get_arguments().cloned())
        .subcommands(cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned())
        .disable_help_flag(cmd.is_disable_help_flag_set())
        .disable_version_flag(cmd.is_disable_version_flag_set())
        .disable_help_subcommand(cmd.is_disable_help_subcommand_set())
        .propagate_version(cmd.is_propagate_version_set())
        .subcommand_required(cmd.is_subcommand_required_set());
    if let Some(a) = cmd.get_about() {
        out = out.about(a.clone());
    }
    if let Some(a) = cmd.get_long_about() {
        out = out.long_about(a.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden(cmd: &clap::Command) -> Vec<String> {
        cmd.get_subcommands()
            .flat_map(|s| {
                let mut v = hidden(s);
                if s.is_hide_set() {
                    v.push(s.get_name().to_string());
                }
                v
            })
            .collect()
    }

    #[test]
    fn completions_offer_no_hidden_command() {
        let cli = Cli::command();
        assert!(hidden(&cli).contains(&"hook".to_string()));
        // without_hidden rebuilds the top level only.
        assert!(cli.get_subcommands().all(|s| hidden(s).is_empty()));
        let cmd = without_hidden(&cli);
        assert!(hidden(&cmd).is_empty());
        assert_eq!(
            cmd.get_subcommands().count() + hidden(&cli).len(),
            cli.get_subcommands().count()
        );
        assert_eq!(cmd.get_version(), cli.get_version());
    }
}
