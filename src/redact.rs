//! Secrets out before anything leaves the machine or is committed: API keys, tokens, private
//! keys, cloud credentials, URL credentials and secret-looking assignments become
//! `[REDACTED:kind]`. The judge sees (and quotes are checked against) the redacted text.
//! Ours, not a crate's: secret scanners are programs (gitleaks, detect-secrets), not libraries
//! that rewrite text in place, decode JSON strings first and join tokens split over lines.
//!
//! Text is redacted as it reads to a person: a session file's JSON strings are decoded first
//! (`\n`, `\u0041`), redacted, and written back encoded, so an escape sequence can neither hide
//! a secret nor glue two assignments into one.

use std::sync::OnceLock;

use regex::{Captures, Regex};

struct Rule {
    kind: &'static str,
    re: Regex,
    /// Capture groups that may hold the secret, first match wins (0: the whole match).
    groups: &'static [usize],
    /// What the value must look like to be taken out.
    check: Check,
}

/// How a matched value is judged before it is taken out.
#[derive(Clone, Copy, PartialEq)]
enum Check {
    /// The pattern says it all.
    None,
    /// Names that merely suggest a secret: the value must look like one (entropy).
    Entropy,
    /// Names that say it is a secret: any value but code, a placeholder or a keyword.
    Plain,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let r = |kind, pat: &str, groups, check| Rule {
            kind,
            re: Regex::new(pat).expect("valid redaction regex"),
            groups,
            check,
        };
        // Specific formats first: they name the kind; the assignment rule then skips values
        // already redacted. Word boundaries are ASCII ones: "éAKIA…" still starts a key.
        vec![
            r("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----", &[0], Check::None),
            // a key cut off before its END line (a clipped tool output)
            r("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[A-Za-z0-9+/=\s:,\-]*", &[0], Check::None),
            r("aws-access-key", r"(?-u:\b)(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}", &[0], Check::None),
            r("aws-secret-key", r#"(?i)aws[_\-.]?secret[_\-.]?(?:access[_\-.]?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})"#, &[1], Check::None),
            r("github-token", r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})", &[0], Check::None),
            r("gitlab-token", r"(?-u:\b)gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_\-]{20,}", &[0], Check::None),
            r("anthropic-key", r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}", &[0], Check::None),
            r("openai-key", r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", &[0], Check::None),
            r("slack-token", r"(?-u:\b)xox[abposre]-[A-Za-z0-9\-]{10,}", &[0], Check::None),
            r("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}", &[0], Check::None),
            r("google-api-key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}", &[0], Check::None),
            r("stripe-key", r"(?-u:\b)(?:[rs]k|whsec)_(?:live_|test_)?[0-9A-Za-z]{16,}", &[0], Check::None),
            r("jwt", r"(?-u:\b)eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", &[0], Check::None),
            r("bearer-token", r"(?i)(?-u:\b)(?:authorization\s*:\s*)?bearer\s+([A-Za-z0-9_\-.=~+/]{16,})", &[1], Check::None),
            // the password runs to the last `@` before the host: an unencoded `@` in it is common
            r("url-credentials", r"(?-u:\b)[a-z][a-z0-9+.\-]*://[^\s:/@]+:([^\s/]{3,})@", &[1], Check::None),
            // SQL: `CREATE USER u WITH PASSWORD '…'`, `IDENTIFIED BY '…'` (found in a real
            // session by bench/redaction_real.py).
            r(
                "sql-password",
                r#"(?i)(?-u:\b)(?:PASSWORD|IDENTIFIED\s+BY)\s+'([^'\n]{4,})'"#,
                &[1],
                Check::Plain,
            ),
            // A value given to a name that says it is a password, a secret, a token or a key
            // is one, however plain (`SIMPLE_PASSWORD=hunter2`): no entropy asked.
            r(
                "secret-assignment",
                r#"(?i)(?-u:\b)[A-Z0-9_.\-]*(PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|[_\-]KEY)["']?\s*(?::=|[:=])\s*(?:"([^"\n]{4,})"|'([^'\n]{4,})'|([^\s"'\\,;)\]}]{4,}))"#,
                &[2, 3, 4],
                Check::Plain,
            ),
            r(
                "secret-assignment",
                r#"(?i)[A-Z0-9_.\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API[_\-]?KEY|PRIVATE[_\-]?KEY|ACCESS[_\-]?KEY|AUTH[_\-]?KEY|CREDENTIALS?)[A-Z0-9_.\-]*["']?\s*(?::=|[:=])\s*(?:"([^"\n]{8,})"|'([^'\n]{8,})'|([^\s"'\\]{8,}))"#,
                &[1, 2, 3],
                Check::Entropy,
            ),
        ]
    })
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// A value that reads the environment (`os.environ`, `getenv`, `process.env`), lowercased.
fn reads_environment(lower: &str) -> bool {
    ["environ", "getenv", "process.env"]
        .iter()
        .any(|w| lower.contains(w))
}

/// A value that stands for a secret to fill in (`changeme`, `your_key`, `xxxx`), lowercased.
fn placeholder(lower: &str) -> bool {
    [
        "changeme",
        "placeholder",
        "your_",
        "your-",
        "xxxx",
        "****",
        "....",
    ]
    .iter()
    .any(|p| lower.contains(p))
}

/// Whether the value of a secret-named assignment looks like a secret rather than code, a
/// number, a placeholder or a word (`API_KEY_HEADER = "X-API-Key"` is not a secret).
fn looks_secret(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let code = v.contains('(')
        || v.starts_with('$')
        || v.contains("${")
        || v.starts_with("{{")
        || v.starts_with('<')
        || reads_environment(&lower);
    let placeholder = placeholder(&lower);
    let number = v
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '_');
    let word = !v.chars().any(|c| c.is_ascii_digit()) && v.len() < 16;
    !(code || placeholder || number || word) && entropy(v) >= 2.5
}

/// Whether the value of an assignment to a password, secret, token or key is one: anything
/// but code (`os.environ["X"]`, `get_token()`, `self.token`), a variable named bare, a
/// keyword or type (`None`, `str`) or a placeholder. Plain words count when quoted.
fn plain_secret(v: &str, quoted: bool) -> bool {
    let lower = v.to_ascii_lowercase();
    let keyword = [
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "str",
        "string",
        "bytes",
        "int",
        "bool",
        "optional",
        "required",
    ]
    .contains(&lower.as_str());
    let code = v.contains(['(', '[', '{', '<', '$', '`']) || reads_environment(&lower);
    let placeholder = placeholder(&lower);
    let identifier = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    // `password = user_password`, `token: self.token`: a name, not a value.
    let name = !quoted && !v.chars().any(|c| c.is_ascii_digit()) && v.split('.').all(identifier);
    let dotted = !quoted && v.contains('.') && v.split('.').all(identifier);
    !(keyword || code || placeholder || name || dotted)
}

/// Redacts plain text; returns the new text and how many secrets were taken out.
pub(crate) fn redact(text: &str) -> (String, usize) {
    let (text, wrapped) = redact_base64(text);
    // One pass says whether any rule or a cut token may be there: most text holds neither.
    let any = any_rule();
    if !any.is_match(&text) {
        return (text.into_owned(), wrapped);
    }
    let hits = any.matches(&text);
    let (text, split) = match hits.matched(rules().len()) {
        true => redact_split(&text),
        false => (text, 0),
    };
    let (out, n) = apply_rules(&text, &hits);
    (out, n + wrapped + split)
}

/// All rules' patterns, then the start of a cut token, as one set.
fn any_rule() -> &'static regex::RegexSet {
    static ANY: OnceLock<regex::RegexSet> = OnceLock::new();
    ANY.get_or_init(|| {
        let split = split_res().0.as_str();
        regex::RegexSet::new(rules().iter().map(|r| r.re.as_str()).chain([split]))
            .expect("valid redaction regexes")
    })
}

/// The start of a token of a known format followed by a seam, and a seam alone.
fn split_res() -> &'static (Regex, Regex) {
    static RES: OnceLock<(Regex, Regex)> = OnceLock::new();
    RES.get_or_init(|| {
        let prefixes = r"(?:AKIA|ASIA|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt)-|sk-ant-|sk-(?:proj-|svcacct-|admin-)?|[rs]k_(?:live|test)_|whsec_|xox[abposre]-|AIza)";
        (
            Regex::new(&format!(
                r"(?-u:\b){prefixes}[A-Za-z0-9_\-]{{2,}}{SEAM}[A-Za-z0-9_\-]"
            ))
            .expect("valid split regex"),
            Regex::new(&format!("^{SEAM}")).expect("valid seam regex"),
        )
    })
}

/// The characters of the tokens that have a known prefix.
fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Where a token may be cut: a line break (a terminal's wrap, a shell's `\` continuation) or
/// the seam of a literal split for line length (`"…"\n    "…"`, `"…" + "…"`, `'…' '…'`).
const SEAM: &str = r#"(?:["'][ \t]*\+?[ \t]*\\?\r?\n?[ \t]*["']|\\?\r?\n[ \t]*)"#;

/// A token of a known format cut in pieces (`ghp_Ab…⏎Cd…`) goes whole when its pieces, put
/// together, make one: each piece alone is too short for its rule. Pieces are joined until
/// the token is whole, so the line after a wrapped token keeps its words.
fn redact_split(text: &str) -> (std::borrow::Cow<'_, str>, usize) {
    let (start, seam) = split_res();
    let t = text.as_bytes();
    let run_end = |mut i: usize| {
        while i < t.len() && token_byte(t[i]) {
            i += 1;
        }
        i
    };
    // `sk-` also starts words (`sk-learn-compatible⏎estimators`): a token after it has a
    // digit or mixes cases. The other prefixes are formats of their own.
    let tokenish = |s: &str| {
        let Some(tail) = s.strip_prefix("sk-") else {
            return true;
        };
        let has = |f: fn(&u8) -> bool| tail.bytes().any(|b| f(&b));
        has(u8::is_ascii_digit) || (has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase))
    };
    let mut spans = Vec::new();
    let mut covered = 0;
    for m in start.find_iter(text) {
        if m.start() < covered {
            continue;
        }
        let first = run_end(m.start());
        let mut joined = text[m.start()..first].to_string();
        if redact_plain(&joined).1 > 0 {
            continue;
        }
        let mut pos = first;
        // A token is cut in a few pieces at most: a 93-character token at 20 columns is five.
        for _ in 0..6 {
            let Some(s) = seam.find(&text[pos..]) else {
                break;
            };
            let piece_start = pos + s.end();
            let piece_end = run_end(piece_start);
            if piece_end == piece_start {
                break;
            }
            joined.push_str(&text[piece_start..piece_end]);
            pos = piece_end;
            if tokenish(&joined) && redact_plain(&joined).1 > 0 {
                spans.push((m.start(), pos, redact_kind(&joined)));
                covered = pos;
                break;
            }
        }
    }
    if spans.is_empty() {
        return (std::borrow::Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (a, b, kind) in &spans {
        out.push_str(&text[last..*a]);
        out.push_str(&format!("[REDACTED:{kind}]"));
        last = *b;
    }
    out.push_str(&text[last..]);
    (std::borrow::Cow::Owned(out), spans.len())
}

/// The kind of the first rule that takes out `token`.
fn redact_kind(token: &str) -> &'static str {
    rules()
        .iter()
        .find(|r| r.check == Check::None && r.re.is_match(token))
        .map_or("token", |r| r.kind)
}

/// Base64 whose decoded text holds a secret (`echo QUtJQV… | base64 -d`, a basic-auth header
/// built by hand) goes whole: the secret cannot be cut out of the encoding.
fn redact_base64(text: &str) -> (std::borrow::Cow<'_, str>, usize) {
    use base64::Engine;
    // Most text has no padded run and says nothing of base64: found at memchr speed, without
    // looking at every byte.
    let t = text.as_bytes();
    let said = |w: &[u8]| memchr::memmem::find(t, w).is_some();
    if memchr::memchr(b'=', t).is_none() && !said(b"ase64") && !said(b"asic ") && !said(b"ASE64") {
        return (std::borrow::Cow::Borrowed(text), 0);
    }
    // Built once: an engine holds its decoding tables.
    static ENGINES: OnceLock<[base64::engine::GeneralPurpose; 2]> = OnceLock::new();
    let [standard, url] = ENGINES.get_or_init(|| {
        let engine = |alphabet| {
            base64::engine::GeneralPurpose::new(
                alphabet,
                base64::engine::GeneralPurposeConfig::new()
                    .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
            )
        };
        [
            engine(&base64::alphabet::STANDARD),
            engine(&base64::alphabet::URL_SAFE),
        ]
    });
    let mut out = String::new();
    let mut last = 0;
    let mut count = 0;
    for (start, end) in base64_runs(text.as_bytes()) {
        let s = &text[start..end];
        // Encoded text comes in whole quanta; it is decoded when padded (`base64` pads unless
        // the text's length is a multiple of 3) or said to be base64 (`… | base64 -d`, `Basic …`).
        if !s.len().is_multiple_of(4) || !(s.ends_with('=') || hinted(text, start, end)) {
            continue;
        }
        let decoded = standard.decode(s).or_else(|_| url.decode(s));
        // Only text: random bytes (hashes, keys of other kinds) say nothing here.
        let Some(plain) = decoded
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .filter(|p| p.chars().all(|c| !c.is_control() || c.is_whitespace()))
        else {
            continue;
        };
        if redact_plain(&plain).1 > 0 {
            out.push_str(&text[last..start]);
            out.push_str("[REDACTED:base64]");
            last = end;
            count += 1;
        }
    }
    if count == 0 {
        return (std::borrow::Cow::Borrowed(text), 0);
    }
    out.push_str(&text[last..]);
    (std::borrow::Cow::Owned(out), count)
}

/// Whether the 16 bytes around the run from `start` to `end` say it is base64 (`Basic …`,
/// `base64 -d <<< …`, `echo … | base64 -d`).
fn hinted(text: &str, start: usize, end: usize) -> bool {
    let t = text.as_bytes();
    let near = |a: usize, b: usize| String::from_utf8_lossy(&t[a..b]).to_ascii_lowercase();
    let (before, after) = (
        near(start.saturating_sub(16), start),
        near(end, (end + 16).min(t.len())),
    );
    before.contains("basic ") || before.contains("base64") || after.contains("base64")
}

/// The runs of 24 or more base64 characters (with their `=` padding) that stand as words. A
/// byte loop: this looks at every byte of every session, and a regex per call costs more.
fn base64_runs(t: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-');
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < t.len() {
            if !b64(t[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < t.len() && b64(t[i]) {
                i += 1;
            }
            let mut end = i;
            while end < t.len() && end - i < 2 && t[end] == b'=' {
                end += 1;
            }
            // A word of its own: not the tail of a longer run of other word bytes.
            if end - start >= 24 && (start == 0 || !t[start - 1].is_ascii_alphanumeric()) {
                i = end;
                return Some((start, end));
            }
        }
        None
    })
}

/// The rules over plain text.
fn redact_plain(text: &str) -> (String, usize) {
    // One pass of all patterns together first: most text holds no secret at all. A yes/no
    // search stops at the first hit and skips the overlapping search that says which rules
    // match: most text answers no.
    let any = any_rule();
    if !any.is_match(text) {
        return (text.to_string(), 0);
    }
    apply_rules(text, &any.matches(text))
}

/// The rules that `hits` says may match, in order, over `text`.
fn apply_rules(text: &str, hits: &regex::SetMatches) -> (String, usize) {
    let mut out = std::borrow::Cow::Borrowed(text);
    let mut count = 0;
    for (i, rule) in rules().iter().enumerate() {
        // A rule that matched nothing before cannot match after earlier rules redacted.
        if !hits.matched(i) || !rule.re.is_match(&out) {
            continue;
        }
        let mut result = String::with_capacity(out.len());
        let mut last = 0;
        for c in rule.re.captures_iter(&out) {
            let Some(m) = secret_group(&c, rule.groups) else {
                continue;
            };
            if m.as_str().starts_with("[REDACTED") || m.start() < last {
                continue;
            }
            let quoted = m.start() > 0 && matches!(out.as_bytes()[m.start() - 1], b'"' | b'\'');
            match rule.check {
                Check::Entropy if !looks_secret(m.as_str()) => continue,
                Check::Plain if !plain_secret(m.as_str(), quoted) => continue,
                _ => {}
            }
            result.push_str(&out[last..m.start()]);
            result.push_str(&format!("[REDACTED:{}]", rule.kind));
            last = m.end();
            count += 1;
        }
        result.push_str(&out[last..]);
        out = std::borrow::Cow::Owned(result);
    }
    (out.into_owned(), count)
}

fn secret_group<'h>(c: &Captures<'h>, groups: &[usize]) -> Option<regex::Match<'h>> {
    groups.iter().find_map(|&g| c.get(g))
}

/// Redacts a file that may hold JSON (a JSONL session, a JSON chat, or Markdown quoting some):
/// every string literal, keys included, is decoded, redacted and re-encoded when it changed;
/// then the whole text is redacted as plain text. Everything without a secret stays byte for
/// byte.
pub(crate) fn redact_document(text: &str) -> (String, usize) {
    redact_nested(text, 0)
}

/// How deep JSON-in-a-JSON-string is followed. Each level at least doubles the backslashes
/// of the one inside, so a real document cannot nest much past 30 in the sizes git sage
/// reads; this bound only keeps the stack safe.
const NESTING: usize = 64;

/// Redacts every string of a JSON value (keys included) as decoded text — JSON inside a string
/// too — before the value is encoded again: a secret right after `\n` in a tool's arguments
/// starts its own word once decoded.
pub(crate) fn redact_value(v: &serde_json::Value) -> (serde_json::Value, usize) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            let (out, n) = redact_nested(s, 0);
            (Value::String(out), n)
        }
        Value::Array(items) => {
            let mut count = 0;
            let out = items
                .iter()
                .map(|x| {
                    let (y, n) = redact_value(x);
                    count += n;
                    y
                })
                .collect();
            (Value::Array(out), count)
        }
        Value::Object(map) => {
            let mut count = 0;
            let out = map
                .iter()
                .map(|(k, x)| {
                    let (k, a) = redact_nested(k, 0);
                    let (y, b) = redact_value(x);
                    count += a + b;
                    (k, y)
                })
                .collect();
            (Value::Object(out), count)
        }
        other => (other.clone(), 0),
    }
}

fn redact_nested(text: &str, depth: usize) -> (String, usize) {
    // Built only once a literal changes: most text is copied once, by `redact`, or not at all.
    let mut out = String::new();
    let mut count = 0;
    let bytes = text.as_bytes();
    let mut last = 0;
    let mut i = 0;
    // memchr jumps from quote to quote: this loop sees every byte of every session.
    while let Some(q) = memchr::memchr(b'"', &bytes[i..]) {
        i += q;
        let Some(end) = literal_end(bytes, i) else {
            i += 1;
            continue;
        };
        let literal = &text[i..=end];
        if literal.contains('\\')
            && let Ok(decoded) = serde_json::from_str::<String>(literal)
        {
            let (red, n) = match depth < NESTING {
                true => redact_nested(&decoded, depth + 1),
                false => redact(&decoded),
            };
            if n > 0 {
                out.push_str(&text[last..i]);
                out.push_str(&serde_json::to_string(&red).expect("a string encodes"));
                last = end + 1;
                count += n;
            }
        }
        i = end + 1;
    }
    if count == 0 {
        return redact(text);
    }
    out.push_str(&text[last..]);
    let (out, n) = redact(&out);
    (out, count + n)
}

/// The index of the closing quote of a JSON string literal opening at `start`, if the literal
/// is one (no raw line break inside).
fn literal_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while let Some(k) = bytes
        .get(i..)
        .and_then(|b| memchr::memchr3(b'"', b'\\', b'\n', b))
    {
        i += k;
        match bytes[i] {
            b'"' => return Some(i),
            b'\\' => i += 2,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_go_plain_text_stays() {
        let cases = [
            (
                "key AKIAIOSFODNN7EXAMPLE here",
                "key [REDACTED:aws-access-key] here",
            ),
            (
                "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx123",
                "export OPENAI_API_KEY=[REDACTED:openai-key]",
            ),
            (
                "curl -H 'Authorization: Bearer abcdefghijklmnop1234'",
                "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'",
            ),
            (
                "DB_PASSWORD=Xk9#mQ2$vL7!pR4z",
                "DB_PASSWORD=[REDACTED:secret-assignment]",
            ),
            (
                "git clone https://bob:hunter2hunter2@github.com/x/y",
                "git clone https://bob:[REDACTED:url-credentials]@github.com/x/y",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
                "[REDACTED:private-key]",
            ),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]",
            ),
            (
                r#"{"password": "correct horse battery staple"}"#,
                r#"{"password": "[REDACTED:secret-assignment]"}"#,
            ),
            (
                "token: glpat-abcdefghij0123456789xy",
                "token: [REDACTED:gitlab-token]",
            ),
            // a non-ASCII letter is not part of the key (ASCII word boundaries)
            ("éAKIAIOSFODNN7EXAMPLE", "é[REDACTED:aws-access-key]"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input).0, want, "{input}");
            assert_eq!(redact(input).1, 1, "{input}");
        }
        // low-entropy values, words and ordinary code are left alone
        for plain in [
            "PASSWORD_MIN_LENGTH = 123456789012",
            "if not url.startswith(\"https://\"):",
            "token = get_token()",
            "API_KEY_HEADER = \"X-API-Key\"",
            "password = os.environ['DB_PASSWORD']",
            "SECRET_KEY = \"${SECRET_KEY}\"",
        ] {
            assert_eq!(redact(plain), (plain.to_string(), 0));
        }
        // idempotent
        let (once, _) = redact("AKIAIOSFODNN7EXAMPLE");
        assert_eq!(redact(&once), (once.clone(), 0));
    }

    #[test]
    fn escapes_neither_hide_secrets_nor_glue_assignments() {
        // the adversarial run's tool result: an escaped newline between two assignments
        let line = r#"{"type":"tool_result","content":"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nDB_PASSWORD=Xk9#mQ2vL7pR4zW8"}"#;
        let (out, n) = redact_document(line);
        assert_eq!(n, 3, "{out}");
        assert!(!out.contains("wJalr") && !out.contains("Xk9#") && !out.contains("AKIAIOS"));
        serde_json::from_str::<serde_json::Value>(&out).expect("still JSON");
        // \u-escaped and under any key, "data" included
        let line = r#"{"data":"\u0073k-ant-api03-abcdefghijklmnopqrstuvwxyz","sk-proj-abcdefghijklmnopqrstuvwx123":1}"#;
        let (out, n) = redact_document(line);
        assert_eq!(n, 2, "{out}");
        assert!(!out.contains("abcdefghijklmnopqrstuvw"), "{out}");
        // lines without secrets are untouched, escapes and all
        let plain = r#"{"a":"caf\u00e9\n\"q\"","signature":"ErAEClkIDRgCsk-proj-abcdefghijklmnopqrstuvwxyzABCD"}"#;
        assert_eq!(redact_document(plain), (plain.to_string(), 0));
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        /// A secret (by its format) and its core.
        fn secret() -> impl Strategy<Value = String> {
            prop_oneof![
                "AKIA[A-Z2-7]{16}",
                "gh[pousr]_[A-Za-z0-9]{36}",
                "glpat-[A-Za-z0-9_-]{20}",
                "xoxb-[0-9]{11}-[A-Za-z0-9]{24}",
                "sk_live_[A-Za-z0-9]{24}",
                "sk-proj-[A-Za-z0-9_-]{40}",
                "sk-ant-api03-[A-Za-z0-9_-]{40}",
                "eyJ[A-Za-z0-9_-]{12}\\.eyJ[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{24}",
                "AIza[0-9A-Za-z_-]{35}",
            ]
        }

        /// Text a secret can sit in: prose, code, shell, JSON punctuation.
        fn around() -> impl Strategy<Value = String> {
            prop::collection::vec(
                prop::sample::select(vec![
                    " ",
                    "\n",
                    "\t",
                    "=",
                    ":",
                    "\"",
                    "'",
                    "(",
                    ")",
                    ",",
                    ";",
                    "export KEY=",
                    "Authorization: ",
                    "token ",
                    "{\"k\": ",
                    "https://x/?key=",
                    "`",
                    "<",
                    ">",
                    "é",
                    "日本",
                    "key is ",
                ]),
                0..6,
            )
            .prop_map(|v| v.concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(500))]
            #[test]
            fn a_secret_never_survives_whatever_surrounds_it(
                s in secret(), before in around(), after in around(), escape in 0usize..3,
            ) {
                let plain = format!("{before}{s}{after}");
                let (out, n) = redact(&plain);
                prop_assert!(n >= 1 && !out.contains(&s), "{plain:?} -> {out:?}");
                // the same text as a JSON string, plain or with the secret \u-escaped
                let literal = match escape {
                    0 => serde_json::to_string(&plain).unwrap(),
                    1 => serde_json::to_string(&plain).unwrap().replacen(&s[..1], &format!("\\u{:04x}", s.as_bytes()[0]), 1),
                    _ => serde_json::to_string(&serde_json::to_string(&plain).unwrap()).unwrap(),
                };
                let doc = format!("{{\"content\":{literal}}}");
                let (out, _) = redact_document(&doc);
                let decoded: serde_json::Value = serde_json::from_str(&out).unwrap();
                let mut text = decoded["content"].as_str().unwrap().to_string();
                if escape == 2 {
                    text = serde_json::from_str(&text).unwrap();
                }
                prop_assert!(!text.contains(&s) && !out.contains(&s), "{doc} -> {out}");
            }
        }
    }

    #[test]
    fn a_named_password_token_or_key_goes_however_plain_and_code_stays() {
        for (text, want) in [
            (
                "SIMPLE_PASSWORD=hunter2",
                "SIMPLE_PASSWORD=[REDACTED:secret-assignment]",
            ),
            (
                "db_password: 'letmein'",
                "db_password: '[REDACTED:secret-assignment]'",
            ),
            (
                "SECRET_KEY = \"dev-key-1\"",
                "SECRET_KEY = \"[REDACTED:secret-assignment]\"",
            ),
            (
                "K='x'\nAKIAQWERTYUIOPASDFGH",
                "K='x'\n[REDACTED:aws-access-key]",
            ),
            (
                "CREATE USER app WITH PASSWORD 'app_dev_password_123';",
                "CREATE USER app WITH PASSWORD '[REDACTED:sql-password]';",
            ),
            (
                "CREATE USER 'u'@'%' IDENTIFIED BY 'S3cret!x';",
                "CREATE USER 'u'@'%' IDENTIFIED BY '[REDACTED:sql-password]';",
            ),
        ] {
            assert_eq!(redact(text).0, want, "{text}");
        }
        for code in [
            "password = os.environ[\"DB_PASSWORD\"]",
            "token = get_token()",
            "password = user_password",
            "token: self.token",
            "password: str",
            "SECRET_KEY = None",
            "API_TOKEN=${API_TOKEN}",
            "password = \"changeme\"",
        ] {
            assert_eq!(redact(code).0, code, "{code}");
        }
    }

    #[test]
    fn a_token_cut_over_lines_or_literals_goes_whole_and_the_next_line_stays() {
        let gh = "ghp_Zq8Xw2Ve4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Mn2";
        let (a, b) = gh.split_at(18);
        let aws = "AKIAQWERTYUIOPASDFG7";
        let (c, d) = aws.split_at(9);
        for (text, kind) in [
            // a terminal's wrap, with and without the next line's indent
            (format!("token: {a}\n{b}\nThe next line"), "github-token"),
            (format!("  {a}\n  {b}"), "github-token"),
            // a shell continuation
            (format!("export T={a}\\\n{b}"), "github-token"),
            // literals split for line length, Python and JavaScript
            (format!("T = (\"{a}\"\n     \"{b}\")"), "github-token"),
            (format!("const t = '{c}' + '{d}';"), "aws-access-key"),
            (format!("key = \"{c}\" \"{d}\""), "aws-access-key"),
            // three pieces
            (
                format!("{}\n{}\n{}", &gh[..12], &gh[12..26], &gh[26..]),
                "github-token",
            ),
        ] {
            let (out, n) = redact(&text);
            assert_eq!(n, 1, "{text:?} -> {out:?}");
            assert!(out.contains(&format!("[REDACTED:{kind}]")), "{out}");
            for piece in [&a[4..], b, &c[4..], d] {
                assert!(!out.contains(piece), "{piece} in {out:?}");
            }
        }
        // Only what makes the token: the next line's words stay.
        let (out, _) = redact(&format!("{a}\n{b}\nThe next line"));
        assert_eq!(out, "[REDACTED:github-token]\nThe next line");
        // Words that start like a token but are not one stay.
        for text in [
            "pip install sk-learn\nscikit-learn-extra",
            "use sk-\nlearn",
            "gh_pages\nbranch",
            "AKIA\nprefix",
            "sk-proj-alpha\nbeta-gamma-delta-epsilon-zeta",
        ] {
            assert_eq!(redact(text), (text.to_string(), 0), "{text:?}");
        }
    }

    #[test]
    fn base64_holding_a_secret_goes_whole_and_other_base64_stays() {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        // Unpadded (27 characters encode to 36), said to be base64 after it.
        let unpadded = b64("key AKIAQWERTYUIOPASDFGH xy");
        assert!(!unpadded.ends_with('='));
        assert_eq!(redact(&format!("echo {unpadded} | base64 -d")).1, 1);
        let key = b64("aws_key=AKIAQWERTYUIOPASDFGH");
        let (out, n) = redact(&format!("echo {key} | base64 -d"));
        assert_eq!((out.as_str(), n), ("echo [REDACTED:base64] | base64 -d", 1));
        let auth = b64("admin:ghp_Zq8Xw2Ve4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Mn2");
        assert_eq!(redact(&format!("Authorization: Basic {auth}")).1, 1);
        for plain in [
            b64("just an ordinary sentence here"),
            "3f786850e387550fdab836ed7e6dc881de23001b".to_string(),
        ] {
            assert_eq!(redact(&plain).0, plain);
        }
    }

    #[test]
    fn tool_arguments_are_redacted_decoded_at_any_depth() {
        let v = serde_json::json!({"content": "K='x'\nAKIAQWERTYUIOPASDFGH", "ghp_Zq8Xw2Ve4Rt6Yu8Io0Pa2Sd4Fg6Hj8Kl0Mn2": [1, "y\tsk_live_abcdefghijklmnop1234"]});
        let (out, n) = redact_value(&v);
        let text = out.to_string();
        assert_eq!(n, 3, "{text}");
        assert!(
            !text.contains("AKIA") && !text.contains("ghp_") && !text.contains("sk_live"),
            "{text}"
        );
        // JSON in a string in a string ... six levels down, \u-escaped.
        let mut doc = serde_json::json!({"k": "\u{41}KIAQWERTYUIOPASDFGH"}).to_string();
        for _ in 0..6 {
            doc = serde_json::json!({"inner": doc}).to_string();
        }
        let (red, n) = redact_document(&doc);
        assert_eq!(n, 1, "{red}");
        assert!(!red.contains("QWERTYUIOPASDFGH"), "{red}");
    }
}
