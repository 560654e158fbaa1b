//! Commit-level signals (docs/dialects.md#trailers): the Linux kernel's
//! `Assisted-by: AGENT_NAME:MODEL_VERSION [TOOL…]` trailer, the `Co-authored-by:` lines and
//! authorship agents leave (Claude Code, Codex, Cursor, Aider, GitHub Copilot), and the links
//! to a session some of them add (`Claude-Session:`, `Agent-Logs-Url:`). Weak evidence: they
//! say an agent helped with a commit, never which lines it wrote.

use super::{Author, Claim, Dialect, Evidence, Transcript};
use crate::error::Result;
use crate::git::{CommitInfo, Oid, Repo};

/// The values of the `key:` lines of a commit message (case-insensitive key, trimmed, empty
/// values left out), wherever they stand: squash merges repeat trailers inside the body.
pub(crate) fn trailer<'a>(message: &'a str, key: &str) -> Vec<&'a str> {
    // Most messages of a long range hold no such key: one search, no line splitting.
    if !mentions(message, key) {
        return Vec::new();
    }
    message
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(key).then(|| v.trim())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// Whether `text` holds `key`, ASCII case ignored.
fn mentions(text: &str, key: &str) -> bool {
    crate::git::mentions(text.as_bytes(), key)
}

/// An agent a commit names, as read from one line of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    /// The agent: `Claude Code`, `Codex`, `Cursor`, `Aider`, `GitHub Copilot`, … or, for
    /// `Assisted-by:`, the AGENT_NAME as written.
    pub agent: String,
    pub model: Option<String>,
    /// `Assisted-by:`'s analysis tools (`coccinelle`, `sparse`).
    pub tools: Vec<String>,
}

/// Parses an `Assisted-by:` value. The kernel's form is `AGENT_NAME:MODEL_VERSION [TOOL…]`;
/// real commits also write only the agent (`Claude Opus 5`), names with spaces (`Claude
/// Code:claude-opus-5`) and co-author style `Name <email>`, which reads as that agent's
/// co-author line would. `None` for an empty value.
pub(crate) fn assisted_by(value: &str) -> Option<Named> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if let Some((name, email)) = person(value)
        && let Some(known) = agent_of(name, email)
    {
        return Some(known);
    }
    let value = match person(value) {
        Some((name, _)) => name,
        None => value,
    };
    let Some((agent, rest)) = value.split_once(':') else {
        return Some(Named {
            agent: value.to_string(),
            model: None,
            tools: Vec::new(),
        });
    };
    let mut words = rest
        .split_whitespace()
        .map(|w| w.trim_start_matches('[').trim_end_matches(']'))
        .filter(|w| !w.is_empty());
    let model = words.next().map(str::to_string);
    Some(Named {
        agent: agent.trim().to_string(),
        model,
        tools: words.map(str::to_string).collect(),
    })
}

/// `Name <email>` split, when the value has that shape.
fn person(value: &str) -> Option<(&str, &str)> {
    let lt = value.find('<')?;
    let gt = lt + value[lt..].find('>')?;
    Some((value[..lt].trim(), value[lt + 1..gt].trim()))
}

/// The agent a name and email belong to, by the identities agents commit or co-author as.
pub(crate) fn agent_of(name: &str, email: &str) -> Option<Named> {
    let email = email.to_ascii_lowercase();
    let model_from = |generic: &[&str]| {
        (!name.is_empty() && !generic.iter().any(|g| name.eq_ignore_ascii_case(g)))
            .then(|| name.to_string())
    };
    let named = |agent: &str, model: Option<String>| {
        Some(Named {
            agent: agent.to_string(),
            model,
            tools: Vec::new(),
        })
    };
    match email.as_str() {
        // Claude Code writes the model's display name (`Claude Opus 4.8 (1M context)`).
        "noreply@anthropic.com" | "claude@anthropic.com" => {
            named("Claude Code", model_from(&["Claude", "Claude Code"]))
        }
        "noreply@openai.com" | "codex@openai.com" => named("Codex", model_from(&["Codex"])),
        "cursoragent@cursor.com" => named("Cursor", None),
        "223556219+copilot@users.noreply.github.com" => named("GitHub Copilot", None),
        "198982749+copilot@users.noreply.github.com" => named("GitHub Copilot coding agent", None),
        "175728472+copilot@users.noreply.github.com" => named("GitHub Copilot suggestion", None),
        // `aider (<model>) <aider@aider.chat>`
        e if e.ends_with("@aider.chat") => {
            let model = name
                .strip_prefix("aider (")
                .and_then(|m| m.strip_suffix(')'))
                .map(str::to_string);
            named("Aider", model)
        }
        _ if name == "copilot-swe-agent[bot]" => named("GitHub Copilot coding agent", None),
        // Aider commits as `<user.name> (aider)`.
        _ if name.ends_with("(aider)") => named("Aider", None),
        _ => None,
    }
}

/// Reads the trailers and authorship of the commits.
pub(crate) fn read(repo: &Repo, commits: &[Oid], ev: &mut Evidence) -> Result<()> {
    for &commit in commits {
        let info = repo.commit_info(commit)?;
        assisted(&info, ev);
        co_authored(&info, ev);
    }
    Ok(())
}

fn claim(dialect: Dialect, commit: Oid, author: Author, named: Named, source: String) -> Claim {
    Claim {
        dialect,
        commit,
        path: None,
        lines: Vec::new(),
        author,
        agent: Some(named.agent),
        model: named.model,
        session: None,
        transcript: None,
        trace: None,
        content_hash: None,
        source,
        matched: None,
    }
}

/// `Assisted-by:` trailers: a person submitted the commit with an agent's help.
fn assisted(info: &CommitInfo, ev: &mut Evidence) {
    for value in trailer(&info.message, "Assisted-by") {
        let Some(named) = assisted_by(value) else {
            continue;
        };
        let mut source = format!("Assisted-by trailer on {}", info.id.short());
        if !named.tools.is_empty() {
            source.push_str(&format!(" (tools: {})", named.tools.join(", ")));
        }
        ev.claims.push(claim(
            Dialect::AssistedBy,
            info.id,
            Author::Mixed,
            named,
            source,
        ));
    }
}

/// An agent as the commit's author (it wrote the commit) or co-author (it helped), once per
/// agent and model; and the session links Claude Code and Copilot's coding agent leave.
fn co_authored(info: &CommitInfo, ev: &mut Evidence) {
    let short = info.id.short();
    let mut found: Vec<Claim> = Vec::new();
    let mut add = |c: Claim| {
        if !found
            .iter()
            .any(|f| f.agent == c.agent && f.model == c.model)
        {
            found.push(c);
        }
    };
    if let Some(named) = agent_of(&info.author_name, &info.author_email) {
        let source = format!(
            "author of {short} ({} <{}>)",
            info.author_name, info.author_email
        );
        add(claim(
            Dialect::CoAuthoredBy,
            info.id,
            Author::Agent,
            named,
            source,
        ));
    }
    for line in info.co_authors() {
        let Some((name, email)) = person(&line) else {
            continue;
        };
        if let Some(named) = agent_of(name, email) {
            let source = format!("Co-authored-by trailer on {short} ({line})");
            add(claim(
                Dialect::CoAuthoredBy,
                info.id,
                Author::Mixed,
                named,
                source,
            ));
        }
    }
    for (key, agent) in [
        ("Claude-Session", "Claude Code"),
        ("Agent-Logs-Url", "GitHub Copilot coding agent"),
    ] {
        for url in trailer(&info.message, key) {
            let session = url
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|s| !s.is_empty() && *s != url)
                .map(str::to_string);
            let link = Transcript::Url(url.to_string());
            match found
                .iter_mut()
                .find(|c| c.agent.as_deref() == Some(agent) && c.transcript.is_none())
            {
                Some(c) => {
                    c.transcript = Some(link);
                    c.session = session;
                    c.source.push_str(&format!(", {key} trailer"));
                }
                None => found.push(Claim {
                    session,
                    transcript: Some(link),
                    ..claim(
                        Dialect::CoAuthoredBy,
                        info.id,
                        Author::Mixed,
                        Named {
                            agent: agent.to_string(),
                            model: None,
                            tools: Vec::new(),
                        },
                        format!("{key} trailer on {short}"),
                    )
                }),
            }
        }
    }
    ev.claims.extend(found);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(agent: &str, model: Option<&str>, tools: &[&str]) -> Named {
        Named {
            agent: agent.into(),
            model: model.map(Into::into),
            tools: tools.iter().map(|t| t.to_string()).collect(),
        }
    }

    /// The quick search before the line split finds the key in any case, at either end.
    #[test]
    fn trailers_in_any_case_and_place() {
        let m = "fix\n\nbody\nsage-TURN : 3\nSAGE-turn:4";
        assert_eq!(trailer(m, "Sage-Turn"), ["3", "4"]);
        assert_eq!(trailer("Sage-Turn: 5", "Sage-Turn"), ["5"]);
        assert!(trailer("fix\n\nSage-Tur", "Sage-Turn").is_empty());
        assert!(trailer("fix\n\nSage-Turn:", "Sage-Turn").is_empty());
        assert!(mentions("aSAGE-turnb", "Sage-Turn"));
        assert!(!mentions("Sage-Tur", "Sage-Turn"));
    }

    #[test]
    fn assisted_by_as_the_kernel_writes_it_and_as_people_do() {
        assert_eq!(
            assisted_by("Claude:claude-3-opus coccinelle sparse"),
            Some(named(
                "Claude",
                Some("claude-3-opus"),
                &["coccinelle", "sparse"]
            ))
        );
        assert_eq!(
            assisted_by("Claude Code:claude-opus-5"),
            Some(named("Claude Code", Some("claude-opus-5"), &[]))
        );
        assert_eq!(
            assisted_by("Claude (Anthropic) (JMO's friend)"),
            Some(named("Claude (Anthropic) (JMO's friend)", None, &[]))
        );
        assert_eq!(
            assisted_by("Claude Opus 4.7 <noreply@anthropic.com>"),
            Some(named("Claude Code", Some("Claude Opus 4.7"), &[]))
        );
        assert_eq!(
            assisted_by("Someone <someone@example.com>"),
            Some(named("Someone", None, &[]))
        );
        assert_eq!(
            assisted_by("Claude:opus [sparse]"),
            Some(named("Claude", Some("opus"), &["sparse"]))
        );
        assert_eq!(assisted_by("  "), None);
    }

    #[test]
    fn agents_by_identity() {
        let a = |n: &str, e: &str| agent_of(n, e).map(|x| (x.agent, x.model));
        assert_eq!(
            a("Claude", "noreply@anthropic.com"),
            Some(("Claude Code".into(), None))
        );
        assert_eq!(
            a("GPT 5.4", "noreply@openai.com"),
            Some(("Codex".into(), Some("GPT 5.4".into())))
        );
        assert_eq!(
            a("aider (gpt-4o)", "aider@aider.chat"),
            Some(("Aider".into(), Some("gpt-4o".into())))
        );
        assert_eq!(
            a("Shun Kakinoki (aider)", "shun@example.com"),
            Some(("Aider".into(), None))
        );
        assert_eq!(
            a("Copilot", "223556219+Copilot@users.noreply.github.com"),
            Some(("GitHub Copilot".into(), None))
        );
        assert_eq!(a("Jane", "jane@example.com"), None);
    }
}
