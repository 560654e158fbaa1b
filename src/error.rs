//! The one error type of git-sage: a kind that decides the exit code, a message and a hint.

use std::fmt;

/// What went wrong, in the terms of the exit codes (`git sage --help`, README.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad usage or bad input (exit 2): the user can fix it.
    Input,
    /// The environment failed us (exit 3): unreadable repository, I/O, unreachable service.
    Environment,
}

/// An error meant for a person: one line, naming the file or revision, plus what to do.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    hint: Option<String>,
    /// An object the repository should hold is absent (partial clone, damaged mirror): callers
    /// that can do without that one object note it and go on.
    missing_object: bool,
}

/// The result of everything that can fail for a person to read.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Bad input: exit 2.
    pub fn input(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Input,
            message: message.into(),
            hint: None,
            missing_object: false,
        }
    }

    /// Environment or internal failure: exit 3.
    pub fn env(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Environment,
            message: message.into(),
            hint: None,
            missing_object: false,
        }
    }

    /// An object missing from the repository: exit 3 unless the caller can go on without it.
    pub fn missing(message: impl Into<String>) -> Self {
        Error {
            missing_object: true,
            ..Error::env(message)
        }
    }

    /// Whether an object the repository should hold is missing.
    pub fn is_missing_object(&self) -> bool {
        self.missing_object
    }

    /// Adds what the user can do about it, unless the error already says.
    pub fn or_hint(self, hint: impl Into<String>) -> Self {
        match self.hint {
            Some(_) => self,
            None => self.hint(hint),
        }
    }

    /// Adds what the user can do about it.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Names what the error is about in front of its message (`f.sarif (result 3): …`).
    pub fn prefix(mut self, what: &str) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// What went wrong, as the exit code sees it.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the hint.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// 2 for bad input, 3 for the environment.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::Input => 2,
            ErrorKind::Environment => 3,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line, always: scripts grep it and hooks print it verbatim.
        let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        write!(f, "{}", one_line(&self.message))?;
        if let Some(hint) = &self.hint {
            write!(f, "; hint: {}", one_line(hint))?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// A context chain built with anyhow at the CLI edge ("installing the pre-push hook: cannot
/// move aside .git/hooks/pre-push: Permission denied"), as one of our errors: the kind and
/// hint of an error of ours inside the chain are kept, anything else is the environment's.
impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Self {
        let ours = e.chain().find_map(|c| c.downcast_ref::<Error>());
        let message = e
            .chain()
            .map(|c| match c.downcast_ref::<Error>() {
                Some(o) => o.message.clone(),
                None => c.to_string(),
            })
            .collect::<Vec<_>>()
            .join(": ");
        Error {
            kind: ours.map_or(ErrorKind::Environment, |o| o.kind),
            message,
            hint: ours.and_then(|o| o.hint.clone()),
            missing_object: ours.is_some_and(|o| o.missing_object),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::env(format!("I/O error: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_line_with_hint() {
        let e = Error::input("bad\nfile x.sarif:\n  no results").hint("run the scanner");
        assert_eq!(
            e.to_string(),
            "bad file x.sarif: no results; hint: run the scanner"
        );
        assert_eq!(e.exit_code(), 2);
        assert_eq!(Error::env("x").exit_code(), 3);
    }

    #[test]
    fn anyhow_chains_keep_our_kind_and_hint() {
        use anyhow::Context as _;
        let inner: anyhow::Result<()> = Err(Error::input("a.yaml exists").hint("move it").into());
        let e: Error = inner.context("installing the hook").unwrap_err().into();
        assert_eq!(
            e.to_string(),
            "installing the hook: a.yaml exists; hint: move it"
        );
        assert_eq!(e.exit_code(), 2);
        let io: std::result::Result<(), std::io::Error> =
            Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        let e: Error = io.context("cannot write x").unwrap_err().into();
        assert_eq!(e.exit_code(), 3);
        assert!(e.to_string().starts_with("cannot write x: "), "{e}");
        assert!(e.or_hint("check").to_string().ends_with("; hint: check"));
    }
}
