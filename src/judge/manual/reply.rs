//! Reading a reply pasted back from a chat: the one answer among the chat's prose and code
//! fences, forgiving only what cannot change a score (trailing commas, odd spaces between
//! tokens, a reply whose every quote mark the chat made typographic), and saying on which line
//! what it cannot read starts. Two different answers in one reply are refused, never picked.

use serde_json::Value;

use crate::judge::answer::{self, Answer, bracket_end};

/// Why a reply cannot be used, and its 1-based line when one is to blame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ReplyError {
    pub line: Option<usize>,
    pub message: String,
}

impl ReplyError {
    fn at(line: usize, message: impl Into<String>) -> ReplyError {
        ReplyError {
            line: Some(line),
            message: message.into(),
        }
    }
}

/// The answers in a reply: the one for `turn`, or every turn's (the single protocol, `None`).
pub(super) fn read(text: &str, turn: Option<u32>) -> Result<Vec<Answer>, ReplyError> {
    let text = text.trim_start_matches('\u{feff}');
    let (found, syntax) = values(text);
    let mut answers: Vec<(usize, Value)> = Vec::new();
    for (at, v) in &found {
        if let Some(a) = answer_like(v.clone(), turn.is_none())
            && !answers.iter().any(|(_, b)| *b == a)
        {
            answers.push((*at, a));
        }
    }
    let (at, v) = match answers.as_slice() {
        [] => return Err(nothing(text, &found, syntax)),
        [one] => one.clone(),
        several => {
            let lines: Vec<String> = several
                .iter()
                .map(|(at, _)| line_of(text, *at).to_string())
                .collect();
            return Err(ReplyError::at(
                line_of(text, several[1].0),
                format!(
                    "the reply holds {} different answers (lines {}): keep only the one meant",
                    several.len(),
                    lines.join(", ")
                ),
            ));
        }
    };
    let line = line_of(text, at);
    let fail = |m: String| ReplyError::at(line, m);
    match turn {
        Some(t) => {
            if let Some(n) = v.get("turn").and_then(Value::as_u64)
                && n != u64::from(t)
            {
                return Err(fail(format!(
                    "this is an answer for turn {n}, not turn {t}: was it saved in the wrong file?"
                )));
            }
            answer::validate(&v, Some(t)).map(|a| vec![a]).map_err(fail)
        }
        None => answer::items_of(v)
            .map_err(&fail)?
            .iter()
            .map(|i| answer::validate(i, None).map_err(&fail))
            .collect(),
    }
}

/// The answer object (or, for `single`, the list) a parsed value holds, if it holds one.
fn answer_like(v: Value, single: bool) -> Option<Value> {
    let has_turn = |x: &Value| x.as_object().is_some_and(|o| o.contains_key("turn"));
    if single {
        let items = answer::items_of(v.clone()).ok()?;
        return (!items.is_empty() && items.iter().all(has_turn)).then_some(v);
    }
    let v = answer::unwrap_one(v);
    has_turn(&v).then_some(v)
}

/// Why a reply with no answer in it cannot be used: the syntax error of what looks like the
/// answer, else what the JSON there is, else that there is none.
fn nothing(text: &str, found: &[(usize, Value)], syntax: Option<ReplyError>) -> ReplyError {
    if let Some(e) = syntax {
        return e;
    }
    match found.first() {
        Some((at, _)) => ReplyError::at(
            line_of(text, *at),
            "the JSON here is not an answer: it has no `turn`",
        ),
        None => ReplyError {
            line: None,
            message: "no JSON object found in the reply".into(),
        },
    }
}

/// Every top-level JSON value in the text with its byte offset, and the first syntax error
/// among the bracketed spans that look like an answer. A span that does not parse is searched
/// inside (prose such as "{see below}" may open before the object); one that parses is not.
fn values(text: &str) -> (Vec<(usize, Value)>, Option<ReplyError>) {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut syntax = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'{' && b[i] != b'[' {
            i += 1;
            continue;
        }
        match bracket_end(b, i) {
            Some(end) => match parse(&text[i..end]) {
                Ok(v) => {
                    found.push((i, v));
                    i = end;
                    continue;
                }
                Err(e) if syntax.is_none() && text[i..end].contains("turn") => {
                    syntax = Some(syntax_error(text, i, &e));
                }
                Err(_) => {}
            },
            None if syntax.is_none() && text[i..].contains("turn") => {
                syntax = Some(ReplyError::at(
                    line_of(text, i),
                    "the JSON object that starts here is never closed: was the reply cut short?",
                ));
            }
            None => {}
        }
        i += 1;
    }
    (found, syntax)
}

/// A span as JSON: strictly, else with what chats do to JSON undone where it cannot change a
/// value. The strict error is the one reported.
fn parse(raw: &str) -> Result<Value, serde_json::Error> {
    let strict = serde_json::from_str(raw);
    if strict.is_ok() {
        return strict;
    }
    if let Some(v) = relaxed(raw).and_then(|r| serde_json::from_str(&r).ok()) {
        return Ok(v);
    }
    // Typographic quotes are the JSON's own quote marks only when it has no plain ones: then
    // none of them can be a character inside a string.
    if !raw.contains('"') && raw.contains(['\u{201c}', '\u{201d}']) {
        let plain = raw.replace(['\u{201c}', '\u{201d}'], "\"");
        let plain = relaxed(&plain).unwrap_or(plain);
        if let Ok(v) = serde_json::from_str(&plain) {
            return Ok(v);
        }
    }
    strict
}

/// The span without commas before a closing bracket and with Unicode spaces between tokens
/// made plain; `None` when there is neither. Strings are left as they are.
fn relaxed(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let (mut in_str, mut esc, mut changed) = (false, false, false);
    let chars: Vec<char> = raw.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            ',' if chars[i + 1..]
                .iter()
                .find(|n| !n.is_whitespace())
                .is_some_and(|n| *n == '}' || *n == ']') =>
            {
                changed = true;
            }
            c if c.is_whitespace() && !c.is_ascii() => {
                out.push(' ');
                changed = true;
            }
            c => out.push(c),
        }
    }
    changed.then_some(out)
}

/// A syntax error in the span starting at `start`, on the reply's own line and column.
fn syntax_error(text: &str, start: usize, e: &serde_json::Error) -> ReplyError {
    let first = line_of(text, start);
    let line = first + e.line().saturating_sub(1);
    let column = match e.line() {
        1 => {
            let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
            text[line_start..start].chars().count() + e.column()
        }
        _ => e.column(),
    };
    let said = e.to_string();
    let said = said.split(" at line ").next().unwrap_or(&said);
    ReplyError::at(line, format!("not valid JSON (column {column}): {said}"))
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(turn: u32, di: u8, quote: &str) -> String {
        serde_json::json!({"turn": turn, "applicable": true, "opportunity": true, "kind": "planning",
            "scores": {"tr": 0, "di": di, "vr": 0, "sa": 0},
            "quotes": {"tr": null, "di": quote, "vr": null, "sa": null}})
        .to_string()
    }

    fn di(text: &str, turn: u32) -> Result<(u8, Option<String>), ReplyError> {
        read(text, Some(turn)).map(|a| (a[0].scores.di, a[0].quotes.di.clone()))
    }

    #[test]
    fn chat_formatting_around_the_answer_is_read_through() {
        let a = answer(3, 2, "check the scheme");
        let want = Ok((2, Some("check the scheme".to_string())));
        assert_eq!(di(&a, 3), want);
        let chat = format!("Sure! Here are the scores:\n```json\n{a}\n```\nLet me know");
        assert_eq!(di(&chat, 3), want);
        let noted = format!("I read {{the log}} and [turn 3] first.\n\n{a}\n\nHope it helps.");
        assert_eq!(di(&noted, 3), want);
        let wrapped = format!("{{\"answer\": {a}}}");
        assert_eq!(di(&wrapped, 3), want);
        let twice = format!("{a}\n\nAgain, in short:\n{a}");
        assert_eq!(di(&twice, 3), want, "the same answer twice is one answer");
        let pretty =
            serde_json::to_string_pretty(&serde_json::from_str::<Value>(&a).unwrap()).unwrap();
        let commas = pretty
            .replace("\"vr\": 0\n", "\"vr\": 0,\n")
            .replace("\"vr\": null\n", "\"vr\": null,\n")
            .replace("\"turn\": 3\n", "\"turn\": 3 ,\n");
        assert_ne!(commas, pretty);
        assert_eq!(di(&commas, 3), want);
        let nbsp = pretty.replace("  \"", "\u{a0}\u{a0}\"");
        assert_eq!(di(&nbsp, 3), want);
        assert_eq!(di(&format!("\u{feff}{a}"), 3), want);
    }

    #[test]
    fn typographic_quotes_are_undone_only_when_the_json_has_no_plain_ones() {
        let a = answer(3, 2, "check the scheme");
        let smart = a
            .char_indices()
            .map(|(i, c)| match c {
                '"' if a[..i].matches('"').count().is_multiple_of(2) => '\u{201c}',
                '"' => '\u{201d}',
                c => c,
            })
            .collect::<String>();
        assert!(!smart.contains('"'));
        assert_eq!(di(&smart, 3), Ok((2, Some("check the scheme".into()))));
        // Inside a well-formed answer they are the quote's own characters.
        let quoted = answer(3, 2, "the \u{201c}https\u{201d} check");
        assert_eq!(
            di(&quoted, 3).unwrap().1.as_deref(),
            Some("the \u{201c}https\u{201d} check")
        );
        // A mixture is not guessed at.
        let mixed = smart.replacen('\u{201c}', "\"", 1);
        assert!(di(&mixed, 3).is_err());
    }

    #[test]
    fn what_cannot_be_read_says_where() {
        let e = di(
            "Sure!\n\n```json\n{\"turn\": 3, \"applicable\": tru}\n```\n",
            3,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.message.starts_with("not valid JSON (column "), "{e:?}");
        let e = di(
            "ok\n{\"turn\": 3,\n  \"applicable\": true,\n  \"kind\": ",
            3,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("never closed"), "{e:?}");
        let e = di("I could not score this turn, sorry.", 3).unwrap_err();
        assert_eq!(
            e,
            ReplyError {
                line: None,
                message: "no JSON object found in the reply".into()
            }
        );
        let e = di("Here:\n{\"tr\": 1}", 3).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("no `turn`"), "{e:?}");
        let bad_score = answer(3, 2, "x").replace("\"di\":2", "\"di\":5");
        let e = di(&format!("a\nb\n{bad_score}"), 3).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("scores.di"), "{e:?}");
    }

    #[test]
    fn an_answer_for_another_turn_or_two_answers_are_refused() {
        let e = di(&answer(4, 1, "x"), 3).unwrap_err();
        assert_eq!(
            e.message,
            "this is an answer for turn 4, not turn 3: was it saved in the wrong file?"
        );
        let two = format!("{}\n\nOr rather:\n{}", answer(3, 2, "a"), answer(3, 3, "a"));
        let e = di(&two, 3).unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(
            e.message.contains("2 different answers (lines 1, 4)"),
            "{e:?}"
        );
    }

    #[test]
    fn a_single_protocol_reply_is_a_list_of_turns() {
        let list = format!(
            "```json\n[{}, {}]\n```",
            answer(1, 0, ""),
            answer(2, 2, "q")
        );
        let got = read(&list, None).unwrap();
        assert_eq!(got.iter().map(|a| a.turn).collect::<Vec<_>>(), [1, 2]);
        let turns = format!("{{\"turns\": [{}]}}", answer(2, 2, "q"));
        assert_eq!(read(&turns, None).unwrap()[0].turn, 2);
        assert!(read(&answer(1, 0, ""), None).is_err());
    }
}
