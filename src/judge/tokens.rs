//! How a model's tokens are counted, and what a request adds to its text.

use serde::{Deserialize, Serialize};

/// How a model's tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Tokenizer {
    /// OpenAI's o200k_base (GPT-4o, 4.1, 5, o-series): exact.
    #[serde(rename = "o200k_base")]
    O200k,
    /// OpenAI's cl100k_base (GPT-4, GPT-3.5): exact.
    #[serde(rename = "cl100k_base")]
    Cl100k,
    /// o200k_base counts standing in for a tokenizer nobody publishes (Anthropic's).
    Approx,
}

impl Tokenizer {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Tokenizer::O200k => "o200k_base",
            Tokenizer::Cl100k => "cl100k_base",
            Tokenizer::Approx => "approx (o200k_base counts)",
        }
    }

    /// The tokens of `text`.
    pub(crate) fn count(self, text: &str) -> u64 {
        let bpe = match self {
            Tokenizer::Cl100k => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::O200k | Tokenizer::Approx => tiktoken_rs::o200k_base_singleton(),
        };
        bpe.encode_ordinary(text).len() as u64
    }
}

/// Tokens per request beyond the text: message framing, and the answer schema a provider
/// is sent beside the prompt (its size as text, counted once per call).
pub(crate) fn overhead(schema_tokens: u64) -> u64 {
    // Two messages' role and separator tokens, as OpenAI's chat format counts them.
    const FRAMING: u64 = 8;
    FRAMING + schema_tokens
}
