//! `git sage turns SESSION`: the canonical turns of a transcript.

use clap::Args;

use super::Context;
use super::output::{DATA, OutputArgs, emit};
use crate::error::Result;
use crate::report::clip;
use crate::transcript::{self, Format, Transcript};

/// The canonical turns of an agent session transcript
#[derive(Debug, Args)]
#[command(
    after_help = "SESSION is a file; REV:path for a file in git (e.g. HEAD:.sage/sessions/fix.jsonl); REV^{commit}\nfor the conversation old Aider versions wrote into a commit message; or a conversation folder\nwith events/*.json (OpenHands V1).\n\nFormats (auto-detected): claude-code, codex, gemini-cli, cursor (stream-json, stored and text\ntranscripts), aider (every edit format; commit bodies), openhands (V0 trajectories, V1 events),\nswe-agent, mini-swe-agent, specstory, markdown (\"Turn N\" / \"Ход N\" / \"轮次 N\" headings),\nsage (docs/session-format.md).\n\nExamples:\n  git sage turns ~/.claude/projects/-home-me-shop/4606c3cc.jsonl\n  git sage turns HEAD:.aider.chat.history.md --format json\n  git sage turns 1a2b3c4^{commit}"
)]
#[command(mut_arg("format", |a| super::output::only(a, &DATA)))]
pub(crate) struct TurnsArgs {
    /// The transcript: a path, or REV:path in the repository
    #[arg(value_name = "SESSION")]
    pub session: String,

    /// Force the transcript format instead of detecting it
    #[arg(long = "from", value_enum, value_name = "FORMAT")]
    pub from: Option<Format>,

    #[command(flatten)]
    pub output: OutputArgs,
}

pub(crate) fn run(ctx: &Context, args: &TurnsArgs) -> Result<i32> {
    let targets = args.output.targets("turns", &DATA)?;
    let input = super::util::open_session(ctx, &args.session)?;
    let t = transcript::parse(input, args.from)?;
    emit(ctx, &targets, &t, |_| Ok(render(&t)))?;
    Ok(0)
}

/// A compact numbered list, one line per turn, with context messages where they fall.
pub(crate) fn render(t: &Transcript) -> String {
    let mut out = String::new();
    let with_calls = t.turns.iter().filter(|x| !x.tool_calls.is_empty()).count();
    let changes: usize = t.turns.iter().map(|x| x.file_changes.len()).sum();
    let mut head = vec![
        t.format.name().to_string(),
        format!("{} turns", t.turns.len()),
        format!("{with_calls} with tool calls"),
        format!("{changes} file changes"),
    ];
    if let Some(m) = &t.model {
        head.push(format!("model {m}"));
    }
    out.push_str(&format!("{}  {}\n", t.source, head.join(" · ")));
    let mut ctx = t.context.iter().peekable();
    for turn in &t.turns {
        while let Some(m) = ctx.next_if(|m| m.before_turn <= turn.turn) {
            out.push_str(&format!("     {:<14}  {}\n", m.role, clip(&m.text, 90)));
        }
        let mut extras = Vec::new();
        if !turn.tool_calls.is_empty() {
            let mut names: Vec<(String, usize)> = Vec::new();
            for c in &turn.tool_calls {
                match names.iter_mut().find(|(n, _)| *n == c.name) {
                    Some((_, k)) => *k += 1,
                    None => names.push((c.name.clone(), 1)),
                }
            }
            let list: Vec<String> = names
                .into_iter()
                .map(|(n, k)| if k > 1 { format!("{n}×{k}") } else { n })
                .collect();
            extras.push(format!("[{}]", list.join(" ")));
        }
        for c in &turn.file_changes {
            extras.push(format!("✎ {}", c.path));
        }
        if turn.reasoning_available {
            extras.push("(reasoning)".into());
        } else if turn.reasoning_redacted {
            extras.push("(reasoning redacted)".into());
        }
        let text = if turn.text.trim().is_empty() {
            "—".to_string()
        } else {
            clip(&turn.text, 70)
        };
        let row = format!(
            "{:>4} {:<14}  {}  {}",
            turn.turn,
            turn.kind.as_str(),
            text,
            extras.join(" ")
        );
        out.push_str(row.trim_end());
        out.push('\n');
    }
    for m in ctx {
        out.push_str(&format!("     {:<14}  {}\n", m.role, clip(&m.text, 90)));
    }
    if !t.compactions.is_empty() {
        let list: Vec<String> = t.compactions.iter().map(|c| c.to_string()).collect();
        out.push_str(&format!(
            "context compacted after turn {}\n",
            list.join(", ")
        ));
    }
    if !t.skipped.is_empty() {
        let first: Vec<String> = t
            .skipped
            .iter()
            .take(3)
            .map(|s| format!("line {}: {}", s.line, s.reason))
            .collect();
        out.push_str(&format!(
            "skipped {} line(s): {}\n",
            t.skipped.len(),
            first.join("; ")
        ));
    }
    if !t.skipped_records.is_empty() {
        let list: Vec<String> = t
            .skipped_records
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        out.push_str(&format!("left out: {}\n", list.join(", ")));
    }
    for w in &t.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}
