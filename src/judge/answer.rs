//! Reading the judge's answer: strict JSON where the backend enforces the schema, a tolerant
//! reader otherwise (code fences, prose around the object), then validation against the schema.

use serde_json::Value;

use super::scores::{Dim, Quotes, Scores};
use crate::transcript::TurnKind;

/// A valid answer for one turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    pub turn: u32,
    pub applicable: bool,
    pub opportunity: bool,
    pub kind: TurnKind,
    pub scores: Scores,
    pub quotes: Quotes,
    /// What the judge was unsure of (the offline judge's model says; a model judge's answer
    /// carries none).
    pub doubt: Option<super::scores::Doubt>,
}

/// The JSON schema of one answer (also in templates/judge/schema.json for prompts).
pub(crate) fn schema() -> Value {
    let score = serde_json::json!({"type": "integer", "minimum": 0, "maximum": 3});
    let quote = serde_json::json!({"type": ["string", "null"]});
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["turn", "applicable", "opportunity", "kind", "scores", "quotes"],
        "properties": {
            "turn": {"type": "integer"},
            "applicable": {"type": "boolean"},
            "opportunity": {"type": "boolean"},
            "kind": {"type": "string", "enum": TurnKind::ALL},
            "scores": {"type": "object", "additionalProperties": false, "required": ["tr", "di", "vr", "sa"],
                       "properties": {"tr": score, "di": score, "vr": score, "sa": score}},
            "quotes": {"type": "object", "additionalProperties": false, "required": ["tr", "di", "vr", "sa"],
                       "properties": {"tr": quote, "di": quote, "vr": quote, "sa": quote}}
        }
    })
}

/// The first balanced JSON object or array in `text` (after code fences and prose).
pub(crate) fn extract_json(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
        return Some(v);
    }
    let bytes = text.as_bytes();
    for (start, &b) in bytes.iter().enumerate() {
        if b != b'{' && b != b'[' {
            continue;
        }
        if let Some(end) = bracket_end(bytes, start)
            && let Ok(v) = serde_json::from_str(&text[start..end])
        {
            return Some(v);
        }
    }
    None
}

/// The end (exclusive) of the bracketed span opening at `start`, minding strings: where a
/// JSON object or array in a chat's prose would close.
pub(crate) fn bracket_end(b: &[u8], start: usize) -> Option<usize> {
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    for (i, &c) in b.iter().enumerate().skip(start) {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Validates one answer object; `expect_turn` is the turn asked about.
pub(crate) fn validate(v: &Value, expect_turn: Option<u32>) -> Result<Answer, String> {
    let o = v.as_object().ok_or("the answer is not a JSON object")?;
    let turn = o
        .get("turn")
        .and_then(Value::as_u64)
        .ok_or("`turn` is missing or not an integer")? as u32;
    if let Some(t) = expect_turn
        && t != turn
    {
        return Err(format!("`turn` is {turn}, but turn {t} was asked about"));
    }
    let flag = |k: &str| {
        o.get(k)
            .and_then(Value::as_bool)
            .ok_or(format!("`{k}` is missing or not true/false"))
    };
    let applicable = flag("applicable")?;
    let opportunity = flag("opportunity")?;
    let kind = o
        .get("kind")
        .and_then(Value::as_str)
        .and_then(TurnKind::parse)
        .ok_or(format!(
            "`kind` must be one of {}",
            TurnKind::ALL.join(", ")
        ))?;
    let so = o
        .get("scores")
        .and_then(Value::as_object)
        .ok_or("`scores` is missing or not an object")?;
    let qo = o
        .get("quotes")
        .and_then(Value::as_object)
        .ok_or("`quotes` is missing or not an object")?;
    let mut scores = Scores::default();
    let mut quotes = Quotes::default();
    for d in Dim::ALL {
        let s = so
            .get(d.key())
            .and_then(Value::as_u64)
            .filter(|&s| s <= 3)
            .ok_or(format!(
                "`scores.{}` must be an integer from 0 to 3",
                d.key()
            ))?;
        scores.set(d, s as u8);
        let q = match qo.get(d.key()) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(format!("`quotes.{}` must be a string or null", d.key())),
        };
        quotes.set(d, q);
    }
    Ok(Answer {
        turn,
        applicable,
        opportunity,
        kind,
        scores,
        quotes,
        doubt: None,
    })
}

/// Parses a free-text answer for one turn.
pub(crate) fn parse_one(text: &str, expect_turn: u32) -> Result<Answer, String> {
    let v = extract_json(text).ok_or("no JSON object found in the answer")?;
    validate(&unwrap_one(v), Some(expect_turn))
}

/// The answer object inside the wrappers some models put around it: `{"answer": {...}}` or
/// `[ {...} ]`.
pub(crate) fn unwrap_one(v: Value) -> Value {
    match v {
        Value::Array(mut a) if a.len() == 1 => a.remove(0),
        Value::Object(ref o)
            if o.len() == 1
                && o.values().next().is_some_and(Value::is_object)
                && !o.contains_key("turn") =>
        {
            o.values().next().cloned().unwrap_or(Value::Null)
        }
        v => v,
    }
}

/// The per-turn objects of a single-protocol answer: an array, or `{"turns": [...]}`.
pub(crate) fn items_of(v: Value) -> Result<Vec<Value>, String> {
    match v {
        Value::Array(a) => Ok(a),
        Value::Object(mut o) => match o.remove("turns") {
            Some(Value::Array(a)) => Ok(a),
            _ => Err("expected a JSON array of per-turn objects".into()),
        },
        _ => Err("expected a JSON array of per-turn objects".into()),
    }
}

/// Parses a single-protocol answer: an array (or `{"turns": [...]}`) of per-turn objects.
pub(crate) fn parse_many(text: &str) -> Result<Vec<Answer>, String> {
    let v = extract_json(text).ok_or("no JSON found in the answer")?;
    items_of(v)?.iter().map(|i| validate(i, None)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"turn": 4, "applicable": true, "opportunity": true, "kind": "planning",
        "scores": {"tr": 2, "di": 1, "vr": 0, "sa": 0}, "quotes": {"tr": "x", "di": "y", "vr": null, "sa": null}}"#;

    #[test]
    fn tolerant_reading() {
        assert_eq!(parse_one(OK, 4).unwrap().scores.tr, 2);
        let fenced = format!("Here is my assessment:\n```json\n{OK}\n```\nThanks.");
        assert_eq!(
            parse_one(&fenced, 4).unwrap().quotes.di.as_deref(),
            Some("y")
        );
        let braces_in_strings = r#"note {not json} {"turn": 1, "applicable": false, "opportunity": false, "kind": "administrative", "scores": {"tr": 0, "di": 0, "vr": 0, "sa": 0}, "quotes": {"tr": "a } b", "di": null, "vr": null, "sa": null}}"#;
        assert_eq!(
            parse_one(braces_in_strings, 1)
                .unwrap()
                .quotes
                .tr
                .as_deref(),
            Some("a } b")
        );
        assert!(parse_one(OK, 5).unwrap_err().contains("turn 5"));
        assert!(parse_one("no json here", 1).is_err());
        assert!(
            parse_one(&OK.replace("\"tr\": 2", "\"tr\": 7"), 4)
                .unwrap_err()
                .contains("scores.tr")
        );
        assert!(
            parse_one(&OK.replace("planning", "thinking"), 4)
                .unwrap_err()
                .contains("kind")
        );
        let many = format!("[{OK}, {}]", OK.replace("\"turn\": 4", "\"turn\": 5"));
        assert_eq!(parse_many(&many).unwrap().len(), 2);
    }
}
