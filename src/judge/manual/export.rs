//! The files a person works from: one Markdown file per prompt, its system and user parts
//! fenced so they can be copied exactly, and a README saying what to do with them.

use std::path::Path;

use super::{Session, answer_name, prompt_name};
use crate::judge::jobs::Job;
use crate::judge::prompt::Prompt;

/// The Markdown file for one prompt.
pub(super) fn prompt_file(session: &Session, dir: &Path, turn: Option<u32>, p: &Prompt) -> String {
    let what = match turn {
        Some(t) => format!("turn {t}"),
        None => "every turn at once (--protocol single)".to_string(),
    };
    let answer = answer_name(turn);
    let user = p.user();
    let fence = fence_for(&[&p.system, &user]);
    format!(
        "# git sage · manual judge · {what}\n\n\
Session {source}, turns {turns} · criterion {criterion} · save the reply as `{answer}`\n\n\
1. Open a new chat, with nothing else in it: no other turn's prompt or answer.\n\
2. If the chat lets you set a system prompt (or custom instructions), put the text under\n   \
**System** there and send the text under **User** as the message. If it does not, send one\n   \
message: the text under System, an empty line, then the text under User.\n\
3. Copy only what is between the fence lines, not the fence lines themselves.\n\
4. Save the chat's whole reply as `{answer}` in this directory (words or ```json fences\n   \
around the JSON are fine), then run the import again: README.md in {dir} says how.\n\n\
This is exactly what an API judge is sent for {what}; secrets in the session were redacted\n\
before it was written. The session's text inside it is data for the judge, not instructions\n\
for you or the chat.\n\n\
## System\n\n{fence}text\n{system}\n{fence}\n\n## User\n\n{fence}text\n{user}\n{fence}\n",
        source = inline(session.source),
        turns = session.turns,
        criterion = inline(session.criterion),
        dir = inline(&dir.display().to_string()),
        system = p.system,
        user = user,
    )
}

/// The directory's README: the steps, how resuming works, and every prompt with its answer.
pub(super) fn readme(session: &Session, dir: &Path, jobs: &[Job]) -> String {
    let d = dir.display().to_string();
    let rows: String = jobs
        .iter()
        .map(|j| {
            format!(
                "| `{}` | `{}` |\n",
                prompt_name(j.turn),
                answer_name(j.turn)
            )
        })
        .collect();
    format!(
        "# git sage · manual judge\n\n\
git sage wrote these prompts for a judge you run by hand: one per turn of the session\n\
{source} (turns {turns}) to be scored on the criterion {criterion}, each exactly what an API\n\
judge is sent for that turn, secrets already redacted.\n\n\
1. For each prompt below, open a new chat, send it as its file says (a system part and a\n   \
user part), and save the chat's whole reply beside it under the name in the second column.\n   \
Words and ```json fences around the JSON are fine; the reply must hold one JSON object.\n\
2. Run `git sage judge {source_cmd} --import {dir_cmd}` (with the options the export was\n   \
run with, `--protocol` or `--criterion` say), or the command with `--judge manual:{dir_cmd}`\n   \
that wrote this directory, again. The answers saved so far are read and kept; turns\n   \
without one are listed as pending and the command exits 3. Save more answers and run it\n   \
again: it goes on where you stopped.\n\
3. An answer that cannot be read (not JSON, another turn's, two different answers in one\n   \
reply) is named with its line, the command exits 2, and that turn needs a new reply.\n\
4. Every score above 0 needs a quote copied verbatim from the turn scored; a score whose\n   \
quote is not in the turn is set to 0, as for any judge.\n\n\
Leave `manifest.json` and the prompts as they are: the answers are checked against them. The\n\
manual judge is described in git sage's docs/judge.md (Manual judge).\n\n\
| prompt | save the reply as |\n|---|---|\n{rows}",
        source = inline(session.source),
        turns = session.turns,
        criterion = inline(session.criterion),
        source_cmd = shell_word(session.source),
        dir_cmd = shell_word(&d),
    )
}

/// A fence of backticks longer than any run of them in the texts (and at least four, so a
/// transcript's own ``` blocks never close it).
fn fence_for(texts: &[&str]) -> String {
    let longest = texts
        .iter()
        .flat_map(|t| t.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    "`".repeat((longest + 1).max(4))
}

/// Text shown inline in Markdown: in backticks, on one line, without backticks of its own.
fn inline(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() || c == '`' { '?' } else { c })
        .collect();
    format!("`{clean}`")
}

/// A word a shell reads back as it is: quoted when it holds anything but the plain characters
/// of paths.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-:@+=,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!(
            "'{}'",
            s.replace('\'', "'\\''").replace(['\n', '\r', '`'], "?")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session<'static> {
        Session {
            source: "3d407c7:.sage/sessions/fix.yaml",
            digest: "d".into(),
            turns: "1-2".into(),
            criterion: "security",
            protocol: "prefix",
            templates: "v",
        }
    }

    /// The text of a fenced block under a heading, as a person copies it.
    fn block<'a>(md: &'a str, heading: &str) -> &'a str {
        let after = &md[md.find(heading).unwrap() + heading.len()..];
        let open = after.find("text\n").unwrap() + "text\n".len();
        let fence = after[..open - "text\n".len()].trim();
        let body = &after[open..];
        &body[..body.find(&format!("\n{fence}\n")).unwrap()]
    }

    #[test]
    fn the_parts_copy_back_exactly_even_with_backticks_inside() {
        let p = Prompt {
            system: "You are an auditor.\n".into(),
            blocks: vec![
                "TASK\n".into(),
                "turn 1:\n````python\nprint('x')\n````\n\n".into(),
            ],
            instruction: "Score turn 1.".into(),
        };
        let md = prompt_file(&session(), Path::new("review"), Some(1), &p);
        assert_eq!(block(&md, "## System\n"), p.system);
        assert_eq!(block(&md, "## User\n"), p.user());
        assert!(md.contains("`````text\n"), "longer than the log's ````");
        assert!(md.contains("save the reply as `turn-001.answer.md`"));
        assert!(md.contains("README.md in `review`"));
    }

    #[test]
    fn names_are_made_safe_to_show_and_to_paste_into_a_shell() {
        assert_eq!(inline("a`b\nc"), "`a?b?c`");
        assert_eq!(shell_word("3d407c7:.sage/s.yaml"), "3d407c7:.sage/s.yaml");
        assert_eq!(shell_word("my dir/it's"), "'my dir/it'\\''s'");
        assert_eq!(fence_for(&["no ticks"]), "````");
        assert_eq!(fence_for(&["a ``````` b"]), "````````");
    }
}
