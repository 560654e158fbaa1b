//! Where an HTTP judge is and the key it sends, from the environment only — checked before
//! the first request, so a missing key is one clear line instead of a failure per turn.

use super::spec::Spec;
use crate::error::{Error, Result};

/// The base URL and API key of an HTTP judge, from the environment (keys only from there).
/// A judge that needs a key and has none is refused here, before any request is made:
/// otherwise every turn would fail on its own, after its retries, with the server's words.
/// An OpenAI-compatible server on this machine (vLLM, Ollama, llama.cpp) often needs none.
pub(crate) fn endpoint(spec: &Spec) -> Result<(String, Option<String>)> {
    endpoint_from(spec, |name| std::env::var(name).ok())
}

/// The base URL a judge's requests go to (empty for judges that make none); unlike
/// `endpoint`, no key is needed.
pub(crate) fn base_url(spec: &Spec) -> String {
    base_from(spec, &|name| std::env::var(name).ok())
        .trim_end_matches('/')
        .to_string()
}

/// A judge's base URL from its variable, else the provider's own.
fn base_from(spec: &Spec, env: &dyn Fn(&str) -> Option<String>) -> String {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    match spec {
        Spec::OpenAi { .. } => {
            var("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into())
        }
        Spec::Anthropic { .. } => {
            var("ANTHROPIC_BASE_URL").unwrap_or_else(|| "https://api.anthropic.com".into())
        }
        _ => String::new(),
    }
}

/// `endpoint` over any environment (the tests' own).
fn endpoint_from(
    spec: &Spec,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(String, Option<String>)> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let base_url = base_from(spec, &env);
    let (key, key_var, local_ok) = match spec {
        Spec::OpenAi { .. } => (
            var("OPENAI_API_KEY"),
            "OPENAI_API_KEY",
            is_loopback(&base_url),
        ),
        Spec::Anthropic { .. } => (var("ANTHROPIC_API_KEY"), "ANTHROPIC_API_KEY", false),
        _ => return Ok((String::new(), None)),
    };
    if key.is_none() && !local_ok {
        // The environment is what is wrong, as with a key the server refuses: exit 3.
        let local = match spec {
            Spec::OpenAi { .. } => {
                "; a server on this machine (OPENAI_BASE_URL on localhost, 127.0.0.1 or ::1) needs none"
            }
            _ => "",
        };
        return Err(
            Error::env(format!("{} judge: {key_var} is not set", spec.name())).hint(format!(
                "export {key_var}=…; API keys are read from the environment only{local}"
            )),
        );
    }
    Ok((base_url, key))
}

/// Checks, before any request, that every judge has the key it needs.
pub(crate) fn check_credentials(specs: &[Spec]) -> Result<()> {
    specs.iter().try_for_each(|s| endpoint(s).map(|_| ()))
}

/// Whether a base URL points at this machine: localhost, 127.0.0.0/8 or ::1 (also as
/// ::ffff:127.x). The URL parser has already normalised `127.1` and `2130706433`.
fn is_loopback(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") || host.eq_ignore_ascii_case("localhost.") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(a)) => a.is_loopback(),
        Ok(std::net::IpAddr::V6(a)) => {
            a.is_loopback() || a.to_ipv4_mapped().is_some_and(|v| v.is_loopback())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_base_urls_are_this_machine() {
        for url in [
            "http://localhost:8000/v1",
            "http://LOCALHOST/v1",
            "http://127.0.0.1:11434/v1",
            "http://127.8.9.10/v1",
            "http://127.1:8080/v1",
            "http://2130706433/v1",
            "http://[::1]:8000/v1",
            "http://[::ffff:127.0.0.1]/v1",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://10.0.0.5:8000/v1",
            "http://localhost.example.com/v1",
            "http://128.0.0.1/v1",
            "http://[::2]/v1",
            "not a url",
            "",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn a_missing_key_is_refused_unless_an_openai_server_is_local() {
        let openai = Spec::OpenAi { model: "m".into() };
        let anthropic = Spec::Anthropic { model: "c".into() };
        fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
            move |name| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        }
        let e = endpoint_from(&openai, env(&[])).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert!(
            e.to_string().starts_with(
                "openai:m judge: OPENAI_API_KEY is not set; hint: export OPENAI_API_KEY="
            ),
            "{e}"
        );
        let blank = endpoint_from(&openai, env(&[("OPENAI_API_KEY", " ")]));
        assert!(blank.is_err(), "a blank key is no key");
        let local = [("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")];
        assert_eq!(
            endpoint_from(&openai, env(&local)).unwrap(),
            ("http://127.0.0.1:9/v1".into(), None)
        );
        let keyed = [("OPENAI_API_KEY", "k")];
        assert_eq!(
            endpoint_from(&openai, env(&keyed)).unwrap(),
            ("https://api.openai.com/v1".into(), Some("k".into()))
        );
        let local_anthropic = [("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")];
        let e = endpoint_from(&anthropic, env(&local_anthropic)).unwrap_err();
        assert!(e.message().contains("ANTHROPIC_API_KEY is not set"), "{e}");
        let command = Spec::Command { cmd: "x".into() };
        assert_eq!(
            endpoint_from(&command, env(&[])).unwrap(),
            (String::new(), None)
        );
    }
}
