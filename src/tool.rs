//! The `tool` object every JSON document carries next to its `schema`: the program and version
//! that wrote it (docs/json.md#the-tool-object).

use serde::{Deserialize, Serialize};

/// Which program wrote a document. Readers take documents without it (written before it
/// existed), so documents hold it as `Option<Tool>` and keep what they were read with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    /// This build: `git-sage` and the crate's version.
    pub(crate) fn current() -> Tool {
        Tool {
            name: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// As a JSON value, for documents built with `json!`.
    pub(crate) fn json() -> serde_json::Value {
        serde_json::json!({"name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION")})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_git_sage_and_reads_back() {
        let t = Tool::current();
        assert_eq!(t.name, "git-sage");
        assert_eq!(serde_json::to_value(&t).unwrap(), Tool::json());
        let back: Tool = serde_json::from_value(Tool::json()).unwrap();
        assert_eq!(back, t);
    }
}
