//! Edits of a user's JSON settings file as text splices: the byte spans of the members and
//! elements that change are found by skimming the text, and only those bytes are replaced.
//! Everything else stays as written — key order, spacing, numbers (`12345678901234567890123`,
//! `1e5`, `-0`), even duplicate keys — which a parse and re-serialisation would not keep.

/// A member of an object: its key (decoded), where the key's opening quote is, and the span
/// of its value.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: (usize, usize),
}

fn ws(t: &[u8], mut i: usize) -> usize {
    while i < t.len() && matches!(t[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string literal opening at `i`.
fn string_end(t: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < t.len() {
        match t[i] {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    None
}

/// The end (exclusive) of the value starting at `i` (after whitespace).
fn value_end(t: &[u8], i: usize) -> Option<usize> {
    match *t.get(i)? {
        b'"' => string_end(t, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < t.len() {
                match t[j] {
                    b'"' => {
                        j = string_end(t, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < t.len() && !matches!(t[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// The members of the object whose `{` is at `open`.
pub(crate) fn members(text: &str, open: usize) -> Option<Vec<Member>> {
    let t = text.as_bytes();
    let mut out = Vec::new();
    let mut i = ws(t, open + 1);
    if t.get(i) == Some(&b'}') {
        return Some(out);
    }
    loop {
        let key_start = i;
        let key_end = string_end(t, i)?;
        let key: String = serde_json::from_str(&text[key_start..key_end]).ok()?;
        i = ws(t, key_end);
        (t.get(i) == Some(&b':')).then_some(())?;
        let v = ws(t, i + 1);
        let e = value_end(t, v)?;
        out.push(Member {
            key,
            key_start,
            value: (v, e),
        });
        i = ws(t, e);
        match t.get(i)? {
            b',' => i = ws(t, i + 1),
            b'}' => return Some(out),
            _ => return None,
        }
    }
}

/// The spans of the elements of the array whose `[` is at `open`.
pub(crate) fn elements(text: &str, open: usize) -> Option<Vec<(usize, usize)>> {
    let t = text.as_bytes();
    let mut out = Vec::new();
    let mut i = ws(t, open + 1);
    if t.get(i) == Some(&b']') {
        return Some(out);
    }
    loop {
        let e = value_end(t, i)?;
        out.push((i, e));
        i = ws(t, e);
        match t.get(i)? {
            b',' => i = ws(t, i + 1),
            b']' => return Some(out),
            _ => return None,
        }
    }
}

/// The first non-blank byte of the document (its top value).
pub(crate) fn top(text: &str) -> usize {
    ws(text.as_bytes(), 0)
}

/// The indentation of the line `at` is on.
pub(crate) fn indent_at(text: &str, at: usize) -> String {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line..at]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The closing bracket of the container opened at `open`.
fn close_of(text: &str, open: usize) -> Option<usize> {
    value_end(text.as_bytes(), open).map(|e| e - 1)
}

/// `value` (JSON, pretty-printed) laid out for a place indented by `ind`, with `step` per level.
fn laid_out(value: &serde_json::Value, ind: &str, step: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    pretty
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let depth = l.len() - l.trim_start().len();
            let body = format!("{}{}", step.repeat(depth / 2), l.trim_start());
            if i == 0 { body } else { format!("{ind}{body}") }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One indentation step of the document: the first member's indentation, else two spaces.
fn step_of(text: &str, open: usize) -> String {
    match members(text, open).and_then(|m| m.first().cloned()) {
        Some(m) if !indent_at(text, m.key_start).is_empty() => {
            let outer = indent_at(text, open);
            let inner = indent_at(text, m.key_start);
            inner
                .strip_prefix(outer.as_str())
                .filter(|s| !s.is_empty())
                .unwrap_or("  ")
                .to_string()
        }
        _ => "  ".to_string(),
    }
}

/// `text` with `"key": value` added as the last member of the object opened at `open`.
pub(crate) fn add_member(
    text: &str,
    open: usize,
    key: &str,
    value: &serde_json::Value,
) -> Option<String> {
    let step = step_of(text, top(text));
    let close = close_of(text, open)?;
    let outer = indent_at(text, open);
    let ind = format!("{outer}{step}");
    let item = format!(
        "{}: {}",
        serde_json::to_string(key).ok()?,
        laid_out(value, &ind, &step)
    );
    Some(insert_last(
        text,
        open,
        close,
        &members(text, open)?.last().map(|m| m.value.1),
        &ind,
        &outer,
        &item,
    ))
}

/// `text` with `value` added as the last element of the array opened at `open`.
pub(crate) fn add_element(text: &str, open: usize, value: &serde_json::Value) -> Option<String> {
    let step = step_of(text, top(text));
    let close = close_of(text, open)?;
    let outer = indent_at(text, open);
    let ind = format!("{outer}{step}");
    let item = laid_out(value, &ind, &step);
    let last = elements(text, open)?.last().map(|e| e.1);
    Some(insert_last(text, open, close, &last, &ind, &outer, &item))
}

fn insert_last(
    text: &str,
    open: usize,
    close: usize,
    last: &Option<usize>,
    ind: &str,
    outer: &str,
    item: &str,
) -> String {
    match last {
        Some(end) => format!("{},\n{ind}{item}{}", &text[..*end], &text[*end..]),
        None => format!("{}\n{ind}{item}\n{outer}{}", &text[..=open], &text[close..]),
    }
}

/// `text` without sibling `k` of `spans` (members from their key, elements whole), and the
/// comma that joined it to its neighbours.
pub(crate) fn remove_sibling(text: &str, spans: &[(usize, usize)], k: usize) -> String {
    let (start, end) = spans[k];
    let (from, to) = if k > 0 {
        (spans[k - 1].1, end)
    } else if spans.len() > 1 {
        (start, spans[1].0)
    } else {
        // The only one: the container keeps its brackets.
        let t = text.as_bytes();
        let mut a = start;
        while a > 0 && matches!(t[a - 1], b' ' | b'\t' | b'\n' | b'\r') {
            a -= 1;
        }
        let b = ws(t, end);
        (a, b)
    };
    format!("{}{}", &text[..from], &text[to..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_and_an_element_go_in_and_everything_else_stays() {
        let text = "{\n    \"n\": 12345678901234567890123,\n    \"e\": 1e5, \"z\": -0,\n    \"d\": 1, \"d\": 2,\n    \"hooks\": {\n        \"A\": [ {\"x\": 1} ]\n    }\n}\n";
        let top = top(text);
        let hooks = members(text, top)
            .unwrap()
            .into_iter()
            .find(|m| m.key == "hooks")
            .unwrap();
        let a = members(text, hooks.value.0)
            .unwrap()
            .into_iter()
            .find(|m| m.key == "A")
            .unwrap();
        let out = add_element(text, a.value.0, &serde_json::json!({"y": [1]})).unwrap();
        for kept in ["12345678901234567890123", "1e5", "-0", "\"d\": 1, \"d\": 2"] {
            assert!(out.contains(kept), "{out}");
        }
        assert!(
            out.contains("{\"x\": 1},\n            {\n                \"y\": ["),
            "{out}"
        );
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
        let out = add_member(&out, top, "version", &serde_json::json!(1)).unwrap();
        assert!(out.trim_end().ends_with("\"version\": 1\n}"), "{out}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
    }

    #[test]
    fn a_sibling_goes_with_its_comma() {
        let text = "[1, 2, 3]";
        let spans = elements(text, 0).unwrap();
        assert_eq!(remove_sibling(text, &spans, 0), "[2, 3]");
        assert_eq!(remove_sibling(text, &spans, 1), "[1, 3]");
        assert_eq!(remove_sibling(text, &spans, 2), "[1, 2]");
        assert_eq!(
            remove_sibling("[ 7 ]", &elements("[ 7 ]", 0).unwrap(), 0),
            "[]"
        );
        assert_eq!(
            add_element("[]", 0, &serde_json::json!(5)).unwrap(),
            "[\n  5\n]"
        );
    }
}
