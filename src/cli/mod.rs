//! The command line: global options, one file per subcommand, output helpers.

pub(crate) mod agree;
pub(crate) mod args;
pub(crate) mod batch;
pub(crate) mod blame_origin;
pub(crate) mod checkpoint;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod demo;
#[cfg(test)]
mod documented;
pub(crate) mod gate;
pub(crate) mod guard;
pub(crate) mod hooks;
pub(crate) mod judge;
pub(crate) mod manpage;
pub(crate) mod markers;
pub(crate) mod notes;
pub(crate) mod origin;
pub(crate) mod output;
pub(crate) mod pr_comment;
pub(crate) mod provenance;
pub(crate) mod record;
pub(crate) mod screen;
pub(crate) mod turns;
pub(crate) mod util;

use std::io::Write;
use std::path::PathBuf;

use clap::{FromArgMatches, Parser, Subcommand};

use crate::error::{Error, Result};
use crate::git::Repo;
use crate::settings::Settings;

const ABOUT: &str = "Find where an AI coding agent's security repair first went wrong";

const LONG_ABOUT: &str = "\
git sage implements SAGE (Security Awareness Gap Evaluation). After a security finding shows \
that an agent's patch is still vulnerable although its tests are green, it answers, from git \
history alone, whether the vulnerable code was inherited or introduced and by which commit; \
and, from the agent's session, at which turn the repair first went wrong.";

const AFTER_HELP: &str = "\
Exit status:
  0  done
  1  the command worked and found what it gates on (hooks, --fail-on)
  2  bad usage or bad input (one line naming the file or revision)
  3  internal or environment failure, or turns the judge could not score (--allow-partial)

Settings come from git config sage.* (`git sage config` lists them); flags override them.
See README.md for a tour, docs/method.md for the method, and docs/ for the rest (anchors,
sessions, judges, git integration, CI).";

#[derive(Debug, Parser)]
#[command(
    name = "git-sage",
    bin_name = "git sage",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
    propagate_version = true,
    disable_help_subcommand = true
)]
pub(crate) struct Cli {
    /// Run as if git sage was started in DIR (like git -C)
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

    /// Only the result: no notes, warnings or progress on stderr (errors still)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Say more on stderr: how long each stage took
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// Colour on terminals: auto honours NO_COLOR and CLICOLOR_FORCE
    #[arg(long, value_enum, value_name = "WHEN", global = true, default_value_t = crate::term::ColorChoice::Auto)]
    pub color: crate::term::ColorChoice,

    /// The language of reports, recommendations and hook messages: en, ru or zh (default:
    /// sage.lang, then LC_ALL / LC_MESSAGES / LANG); JSON, notes and SARIF stay language-neutral
    #[arg(long, value_enum, value_name = "LANG", global = true)]
    pub lang: Option<crate::i18n::Lang>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    BlameOrigin(Box<blame_origin::BlameOriginArgs>),
    Provenance(Box<provenance::ProvenanceArgs>),
    Turns(turns::TurnsArgs),
    Judge(Box<judge::JudgeCmd>),
    Origin(origin::OriginArgs),
    Batch(Box<batch::BatchArgs>),
    Screen(Box<screen::ScreenArgs>),
    Agree(agree::AgreeArgs),
    Demo(demo::DemoArgs),
    Checkpoint(checkpoint::CheckpointArgs),
    Guard(guard::GuardArgs),
    Notes(notes::NotesArgs),
    PrComment(pr_comment::PrCommentArgs),
    Hooks(hooks::HooksArgs),
    Record(record::RecordArgs),
    Config(config::ConfigArgs),
    InstallMan(manpage::InstallManArgs),
    Completions(completions::CompletionsArgs),
    #[command(hide = true)]
    Hook(hooks::HookArgs),
}

/// The text report's headings in the report's language, for colouring them.
/// What every subcommand needs: where to run, the settings, and how to print.
pub(crate) struct Context {
    pub cwd: PathBuf,
    /// The environment, read once here at the edge.
    pub env: crate::env::Env,
    /// The strings of the run's language (`--lang`, `sage.lang`, the locale).
    pub tr: crate::i18n::Tr,
    settings: std::cell::OnceCell<Settings>,
    color: crate::term::ColorChoice,
}

impl Context {
    pub(crate) fn new(cwd: PathBuf, env: crate::env::Env) -> Context {
        Context {
            cwd,
            env,
            tr: crate::i18n::Tr::english().clone(),
            settings: std::cell::OnceCell::new(),
            color: crate::term::ColorChoice::Auto,
        }
    }

    /// A text report on stdout: on a terminal (or with `--color always`) coloured where its
    /// writer marked it, and wrapped to the terminal's width; into a pipe or a file, as it is.
    /// Controls from the repository or a transcript are shown, never obeyed.
    pub(crate) fn print_report(&self, s: &crate::term::Styled) -> Result<()> {
        use std::io::IsTerminal;
        let tty = std::io::stdout().is_terminal();
        let text = s.to_terminal(self.color.enabled(tty, &self.env.term));
        match tty
            .then(|| crate::term::stdout_width(&self.env.term))
            .flatten()
        {
            Some(w) => self.print_raw(&crate::term::wrap(&text, w)),
            None => self.print_raw(&text),
        }
    }

    pub(crate) fn repo(&self) -> Result<Repo> {
        Repo::discover(&self.cwd)
    }

    /// The `sage.*` settings, read once (defaults outside a repository); a bad value is an
    /// error naming its key.
    pub(crate) fn settings(&self) -> Result<&Settings> {
        if let Some(s) = self.settings.get() {
            return Ok(s);
        }
        let s = Settings::load(Repo::discover_config_only(&self.cwd).as_ref(), &self.env)?;
        Ok(self.settings.get_or_init(|| s))
    }

    /// Writes to stdout; a closed pipe (`| head`) is not an error. On a terminal, control
    /// characters from the repository or a transcript are shown, not obeyed.
    pub(crate) fn print(&self, s: &str) -> Result<()> {
        use std::io::IsTerminal;
        let s = match std::io::stdout().is_terminal() {
            true => crate::term::clean(s),
            false => std::borrow::Cow::Borrowed(s),
        };
        self.print_raw(&s)
    }

    /// Writes text this tool made safe itself (cleaned, then coloured) to stdout.
    fn print_raw(&self, s: &str) -> Result<()> {
        let mut out = std::io::stdout().lock();
        match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes text meant for people (the `text` formats): control characters are always
    /// shown, not obeyed, wherever the text goes (`| less -R` obeys them too).
    pub(crate) fn print_text(&self, s: &str) -> Result<()> {
        self.print(&crate::term::clean(s))
    }

    /// Streams JSON to stdout; a closed pipe is not an error.
    pub(crate) fn print_json<T: serde::Serialize>(&self, v: &T) -> Result<()> {
        let mut out = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
        let done = crate::report::jsonfmt::to_writer(&mut out, v)
            .map_err(std::io::Error::from)
            .and_then(|_| out.flush());
        match done {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Parses the command line, runs it and returns the exit code; an error is one line on stderr
/// (exit 2 for bad input, 3 for the environment).
pub fn main() -> i32 {
    let mut cmd = manpage::command();
    let cli = match Cli::from_arg_matches(&cmd.get_matches_mut()) {
        Ok(cli) => cli,
        Err(e) => e.format(&mut cmd).exit(),
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            crate::term::error_line(&format!("git-sage: error: {e}"));
            e.exit_code()
        }
    }
}

/// Runs the parsed command line; returns the exit code.
pub(crate) fn run(cli: Cli) -> Result<i32> {
    let cwd = match &cli.dir {
        Some(dir) => {
            // Like git -C: relative paths of the other arguments are taken from DIR.
            std::env::set_current_dir(dir).map_err(|e| {
                Error::input(format!("-C {}: {}", dir.display(), e.kind()))
                    .hint("pass an existing directory")
            })?;
            std::env::current_dir()?
        }
        None => std::env::current_dir()?,
    };
    crate::term::set_quiet(cli.quiet);
    // The environment is read here, once; what lies below gets values.
    let env = crate::env::Env::from_process();
    crate::timing::enable(cli.verbose || env.timing);
    crate::history::parallel::set_threads(env.threads);
    crate::judge::offline::set_trace(env.offline_trace);
    crate::scanners::set_semgrep_config(env.semgrep_config.clone());
    {
        use std::io::IsTerminal;
        crate::term::set_color_stderr(
            cli.color
                .enabled(std::io::stderr().is_terminal(), &env.term),
        );
    }
    let mut ctx = Context::new(cwd, env);
    ctx.color = cli.color;
    // A bad setting elsewhere must not stop the commands that fix it (`git sage config`).
    let (lang_setting, templates) = match ctx.settings() {
        Ok(s) => (s.lang, s.templates.clone()),
        Err(_) => (None, None),
    };
    ctx.tr = crate::i18n::Tr::load(
        crate::i18n::choose(cli.lang, lang_setting, ctx.env.locale),
        templates.as_deref(),
    )?;
    match &cli.command {
        Command::BlameOrigin(a) => blame_origin::run(&ctx, a),
        Command::Provenance(a) => provenance::run(&ctx, a),
        Command::Turns(a) => turns::run(&ctx, a),
        Command::Judge(a) => judge::run(&ctx, a),
        Command::Origin(a) => origin::run(&ctx, a),
        Command::Batch(a) => batch::run(&ctx, a),
        Command::Screen(a) => screen::run(&ctx, a),
        Command::Agree(a) => agree::run(&ctx, a),
        Command::Demo(a) => demo::run(&ctx, a),
        Command::Checkpoint(a) => checkpoint::run(&ctx, a),
        Command::Guard(a) => guard::run(&ctx, a),
        Command::Notes(a) => notes::run(&ctx, a),
        Command::PrComment(a) => pr_comment::run(&ctx, a),
        Command::Hooks(a) => hooks::run(&ctx, a),
        Command::Hook(a) => hooks::run_hook(&ctx, a),
        Command::Record(a) => record::run(&ctx, a),
        Command::Config(a) => config::run(&ctx, a),
        Command::InstallMan(a) => manpage::install(&ctx, a),
        Command::Completions(a) => completions::run(&ctx, a),
    }
}
