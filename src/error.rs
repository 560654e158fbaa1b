//! The one error type of git-sage: a kind that decides the exit code, a message and a hint.

use std::fmt;

/// What went wrong, in the terms of the exit codes of CONTRACT.md.
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

    pub fn is_missing_object(&self) -> bool {
        self.missing_object
    }

    /// Adds what the user can do about it.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

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
}
