//! Secrets out before anything leaves the machine: API keys, bearer tokens, private keys,
//! cloud credentials and `.env`-style assignments with high-entropy values become
//! `[REDACTED:kind]`. The judge sees (and quotes are checked against) the redacted text.

use std::sync::OnceLock;

use regex::Regex;

struct Rule {
    kind: &'static str,
    re: Regex,
    /// Capture group holding the secret (0: the whole match).
    group: usize,
    /// Only when the secret looks random (assignments whose names merely suggest a secret).
    entropy: bool,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let r = |kind, pat: &str, group, entropy| Rule {
            kind,
            re: Regex::new(pat).expect("valid redaction regex"),
            group,
            entropy,
        };
        vec![
            r("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----", 0, false),
            r("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0, false),
            r("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b", 0, false),
            r("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0, false),
            r("openai-key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}", 0, false),
            r("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", 0, false),
            r("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b", 0, false),
            r("stripe-key", r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}\b", 0, false),
            r("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", 0, false),
            r("bearer-token", r"(?i)\b(?:authorization\s*:\s*)?bearer\s+([A-Za-z0-9_\-.=~+/]{16,})", 1, false),
            r("url-credentials", r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:([^\s@/]{6,})@", 1, false),
            r(
                "secret-assignment",
                r#"(?i)\b[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIALS?)[A-Z0-9_]*\s*[:=]\s*["']?([^\s"']{12,})"#,
                1,
                true,
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

/// Redacts `text`; returns the new text and how many secrets were taken out.
pub fn redact(text: &str) -> (String, usize) {
    let mut out = text.to_string();
    let mut count = 0;
    for rule in rules() {
        if !rule.re.is_match(&out) {
            continue;
        }
        let mut result = String::with_capacity(out.len());
        let mut last = 0;
        for c in rule.re.captures_iter(&out) {
            let Some(m) = c.get(rule.group) else { continue };
            if rule.entropy && entropy(m.as_str()) < 3.5 {
                continue;
            }
            if m.as_str().starts_with("[REDACTED") {
                continue;
            }
            result.push_str(&out[last..m.start()]);
            result.push_str(&format!("[REDACTED:{}]", rule.kind));
            last = m.end();
            count += 1;
        }
        result.push_str(&out[last..]);
        out = result;
    }
    (out, count)
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
        ];
        for (input, want) in cases {
            assert_eq!(redact(input).0, want, "{input}");
            assert_eq!(redact(input).1, 1, "{input}");
        }
        // low-entropy values and ordinary code are left alone
        for plain in [
            "PASSWORD_MIN_LENGTH = 123456789012",
            "if not url.startswith(\"https://\"):",
            "token = get_token()",
        ] {
            assert_eq!(redact(plain), (plain.to_string(), 0));
        }
        // idempotent
        let (once, _) = redact("AKIAIOSFODNN7EXAMPLE");
        assert_eq!(redact(&once), (once.clone(), 0));
    }
}
