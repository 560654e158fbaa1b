//! Turns the judge could not score, in words: one line saying how many and why, and a hint
//! that fits the cause — a rerun helps a judge that was out of reach (its finished answers are
//! cached), never a key the server refused.

use super::scores::{FailedTurn, FailureCause};
use crate::error::Error;

/// The reasons named on the line; the rest are counted.
const SHOWN: usize = 2;

/// The turn numbers listed per reason; the rest are counted.
const TURNS_SHOWN: usize = 12;

/// The error a run with failed turns ends with (exit 3), or `None` when every turn was scored.
/// `--allow-partial` prints the same words as a warning instead.
pub(crate) fn error(failed: &[FailedTurn]) -> Option<Error> {
    let (message, hint) = describe(failed)?;
    // A reply pasted by hand that cannot be read is the user's to fix, like any bad file:
    // exit 2. Replies not pasted yet leave the judgement incomplete, as any deferred turn: 3.
    let bad_file = failed
        .iter()
        .any(|f| f.cause == FailureCause::InvalidAnswer && manual_dir(f).is_some());
    Some(match bad_file {
        true => Error::input(message).hint(hint),
        false => Error::env(message).hint(hint),
    })
}

/// The directory of a manual judge's failure (`manual:DIR`).
fn manual_dir(f: &FailedTurn) -> Option<&str> {
    f.judge.strip_prefix("manual:")
}

/// The line reports print: how many turns failed and why, without the hint.
pub(crate) fn summary(failed: &[FailedTurn]) -> Option<String> {
    describe(failed).map(|(message, _)| message)
}

/// The line and its hint.
fn describe(failed: &[FailedTurn]) -> Option<(String, String)> {
    let groups = groups(failed);
    let (first, _) = groups.first()?;
    let reasons: Vec<String> = groups
        .iter()
        .take(SHOWN)
        .map(|(f, turns)| {
            // Each pending turn's error names its own files; the group's line cannot.
            let said = match (f.cause, manual_dir(f)) {
                (FailureCause::Deferred, Some(_)) => "no answer pasted yet",
                _ => f.error.as_str(),
            };
            format!("{}: {said} ({})", f.judge, turn_list(turns))
        })
        .collect();
    let more = match groups.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!("; and {n} other reason(s) (the report lists every failed turn)"),
    };
    Some((
        format!(
            "{} turn(s) could not be scored: {}{more}",
            failed.len(),
            reasons.join("; ")
        ),
        hint(first),
    ))
}

/// Failures by judge and cause, the causes a rerun cannot fix first; each group keeps its
/// first failure (the message shown) and its turns.
fn groups(failed: &[FailedTurn]) -> Vec<(&FailedTurn, Vec<u32>)> {
    let mut groups: Vec<(&FailedTurn, Vec<u32>)> = Vec::new();
    for f in failed {
        match groups
            .iter_mut()
            .find(|(g, _)| g.cause == f.cause && g.judge == f.judge)
        {
            Some((_, turns)) => turns.push(f.turn),
            None => groups.push((f, vec![f.turn])),
        }
    }
    // Stable: among equal causes, the order the judges ran in.
    groups.sort_by_key(|(f, _)| f.cause);
    for (_, turns) in &mut groups {
        turns.sort_unstable();
        turns.dedup();
    }
    groups
}

/// `turns 1-3, 7`, runs joined, a long list cut with the count of the rest.
fn turn_list(turns: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &t in turns {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == t => *end = t,
            _ => runs.push((t, t)),
        }
    }
    let shown: Vec<String> = runs
        .iter()
        .take(TURNS_SHOWN)
        .map(|&(a, b)| match a == b {
            true => a.to_string(),
            false => format!("{a}-{b}"),
        })
        .collect();
    let rest = match runs.len().saturating_sub(TURNS_SHOWN) {
        0 => String::new(),
        _ => format!(", … ({} turns in all)", turns.len()),
    };
    let word = if turns.len() == 1 { "turn" } else { "turns" };
    format!("{word} {}{rest}", shown.join(", "))
}

/// What to do about the most pressing cause.
fn hint(f: &FailedTurn) -> String {
    let key = match f.judge.split_once(':').map(|(kind, _)| kind) {
        Some("openai") => Some(("OPENAI_API_KEY", "OPENAI_BASE_URL")),
        Some("anthropic") => Some(("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")),
        _ => None,
    };
    let command = f.judge.strip_prefix("command:");
    if let Some(dir) = manual_dir(f) {
        return match f.cause {
            FailureCause::InvalidAnswer => format!(
                "replace that file with the chat's whole reply to its prompt (one JSON object for that turn), or delete it to answer later; {dir}/README.md says how"
            ),
            _ => format!(
                "paste each waiting {dir}/turn-NNN.md into a new chat, save the reply beside it as turn-NNN.answer.md, and run the same command again: the answers already there are kept ({dir}/README.md)"
            ),
        };
    }
    match f.cause {
        FailureCause::Refused => match key {
            Some((key, base)) => format!(
                "the server refused the key: check {key} (and {base}) and that the key may use this model"
            ),
            None => "the judge refused the credentials: check them".into(),
        },
        FailureCause::Fatal => match (command, f.judge.strip_prefix("replay:")) {
            (Some(cmd), _) => format!("check that `{cmd}` runs in this directory"),
            (_, Some(_)) => {
                "the recording lacks these requests: record them again with --record FILE".into()
            }
            _ => "the judge rejected the request: check the model name and the base URL".into(),
        },
        FailureCause::InvalidAnswer => match command {
            Some(cmd) => format!(
                "`{cmd}` must print the answer JSON on stdout (docs/judge.md): try it by hand with a prompt on stdin"
            ),
            None => "the model did not keep to the answer schema: try another model".into(),
        },
        FailureCause::Unreachable => {
            "run the same command again: finished judge calls are cached and are not repeated"
                .into()
        }
        FailureCause::Deferred => {
            "run the same command again to collect the provider's batch".into()
        }
        FailureCause::OverBudget => {
            "raise --max-cost (or git config sage.maxCost) and run the same command again: the answers so far are cached and are not paid for again; --estimate says what the rest costs".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(turn: u32, judge: &str, cause: FailureCause, error: &str) -> FailedTurn {
        FailedTurn {
            turn,
            judge: judge.into(),
            repeat: None,
            cause,
            error: error.into(),
        }
    }

    #[test]
    fn nothing_failed_is_no_error() {
        assert!(error(&[]).is_none());
    }

    #[test]
    fn a_refused_key_names_the_variable_and_never_suggests_a_rerun() {
        let all: Vec<FailedTurn> = (1..=3)
            .map(|t| {
                failed(
                    t,
                    "openai:gpt-x",
                    FailureCause::Refused,
                    "refused: HTTP 401: Incorrect API key provided",
                )
            })
            .collect();
        let e = error(&all).unwrap();
        assert_eq!(e.exit_code(), 3);
        assert_eq!(
            e.to_string(),
            "3 turn(s) could not be scored: openai:gpt-x: refused: HTTP 401: Incorrect API key provided (turns 1-3); \
hint: the server refused the key: check OPENAI_API_KEY (and OPENAI_BASE_URL) and that the key may use this model"
        );
        assert!(!e.to_string().contains("again"));
    }

    #[test]
    fn an_unreachable_judge_suggests_a_rerun() {
        let e = error(&[failed(
            2,
            "anthropic:c",
            FailureCause::Unreachable,
            "the judge could not be reached after 5 tries: the request timed out",
        )])
        .unwrap()
        .to_string();
        assert!(e.starts_with("1 turn(s) could not be scored: anthropic:c: the judge could not be reached after 5 tries: the request timed out (turn 2); hint: run the same command again"), "{e}");
    }

    #[test]
    fn the_cause_a_rerun_cannot_fix_comes_first_and_the_rest_are_counted() {
        let list = [
            failed(1, "openai:m", FailureCause::Unreachable, "unreachable a"),
            failed(2, "command:./j", FailureCause::InvalidAnswer, "invalid b"),
            failed(3, "openai:m", FailureCause::Unreachable, "unreachable c"),
            failed(4, "openai:m", FailureCause::Deferred, "deferred"),
        ];
        let (message, hint) = describe(&list).unwrap();
        assert_eq!(
            message,
            "4 turn(s) could not be scored: command:./j: invalid b (turn 2); openai:m: unreachable a (turns 1, 3); \
and 1 other reason(s) (the report lists every failed turn)"
        );
        assert!(
            hint.starts_with("`./j` must print the answer JSON on stdout"),
            "{hint}"
        );
    }

    #[test]
    fn a_manual_judges_waiting_turns_are_incomplete_and_an_unreadable_reply_is_bad_input() {
        let waiting: Vec<FailedTurn> = (2..=3)
            .map(|t| {
                failed(
                    t,
                    "manual:rev",
                    FailureCause::Deferred,
                    &format!("no answer yet: paste rev/turn-00{t}.md into a chat"),
                )
            })
            .collect();
        let e = error(&waiting).unwrap();
        assert_eq!(e.exit_code(), 3);
        assert!(
            e.to_string().starts_with(
                "2 turn(s) could not be scored: manual:rev: no answer pasted yet (turns 2-3); hint: paste each waiting rev/turn-NNN.md"
            ),
            "{e}"
        );
        let mut both = waiting.clone();
        both.push(failed(
            4,
            "manual:rev",
            FailureCause::InvalidAnswer,
            "rev/turn-004.answer.md:3: not valid JSON (column 9): expected value",
        ));
        let e = error(&both).unwrap();
        assert_eq!(e.exit_code(), 2);
        let line = e.to_string();
        assert!(
            line.starts_with("3 turn(s) could not be scored: manual:rev: rev/turn-004.answer.md:3: not valid JSON (column 9): expected value (turn 4); manual:rev: no answer pasted yet (turns 2-3); hint: replace that file"),
            "{line}"
        );
        // Any other judge's answers that never parse stay an environment failure.
        let other = [failed(1, "command:j", FailureCause::InvalidAnswer, "x")];
        assert_eq!(error(&other).unwrap().exit_code(), 3);
    }

    #[test]
    fn turn_lists_join_runs_and_cut_long_ones() {
        assert_eq!(turn_list(&[4]), "turn 4");
        assert_eq!(turn_list(&[1, 2, 3, 5, 7, 8]), "turns 1-3, 5, 7-8");
        let every_other: Vec<u32> = (1..=40).map(|t| t * 2).collect();
        assert_eq!(
            turn_list(&every_other),
            "turns 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, … (40 turns in all)"
        );
    }
}
