//! Reports: the same results rendered as JSON (the contract) or text for people.

pub mod json;
pub mod jsonfmt;
pub mod text;
