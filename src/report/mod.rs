//! Reports: the same results rendered as JSON (the contract) or text for people.

pub mod doc;
pub mod html;
pub mod json;
pub mod jsonfmt;
pub mod markdown;
pub mod recommend;
pub mod sarif;
pub mod text;
