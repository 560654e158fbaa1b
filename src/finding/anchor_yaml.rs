//! Hand-written failure anchors (docs/anchors.md#anchor-yaml): one mapping, a list, or `anchors:
//! [...]`.

use serde::Deserialize;

use super::{parse_cwe, paths};
use crate::anchor::{Anchor, AnchorKind, AnchorSource, DefectClass, Locator, parse_lines};
use crate::error::{Error, Result};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    id: Option<String>,
    cwe: Option<serde_yaml::Value>,
    class: Option<String>,
    file: String,
    fragments: Option<Vec<String>>,
    fragment: Option<String>,
    lines: Option<serde_yaml::Value>,
    pattern: Option<String>,
    kind: Option<String>,
    description: Option<String>,
    /// Accepted for the reports of later stages; not used by provenance.
    #[allow(dead_code)]
    task: Option<String>,
    unconfirmed: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wrapped {
    anchors: Vec<Raw>,
}

/// Parses anchors; `shown` names the file in errors (with the line where YAML tells it).
pub(crate) fn parse(text: &str, shown: &str) -> Result<Vec<Anchor>> {
    // Look at the shape first, then parse typed from the text so errors keep their line.
    let shape: serde_yaml::Value = crate::files::parse_yaml(text, shown)
        .map_err(|e| e.hint("see docs/anchors.md for the anchor fields"))?;
    let items: Vec<Raw> = match &shape {
        serde_yaml::Value::Sequence(_) => serde_yaml::from_str(text),
        serde_yaml::Value::Mapping(m) if m.contains_key("anchors") => {
            serde_yaml::from_str::<Wrapped>(text).map(|w| w.anchors)
        }
        serde_yaml::Value::Mapping(_) => serde_yaml::from_str::<Raw>(text).map(|r| vec![r]),
        _ => {
            return Err(Error::input(format!(
                "{shown}: an anchor file holds a mapping or a list of them"
            ))
            .hint("see docs/anchors.md for the anchor fields"));
        }
    }
    .map_err(|e| yaml_error(shown, &e))?;
    let stem = std::path::Path::new(shown)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "anchor".into());
    let many = items.len() > 1;
    items
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let default_id = if many {
                format!("{stem}-{}", i + 1)
            } else {
                stem.clone()
            };
            convert(raw, shown, i, default_id)
        })
        .collect()
}

fn yaml_error(shown: &str, e: &serde_yaml::Error) -> Error {
    crate::files::yaml_error(shown, e).hint("see docs/anchors.md for the anchor fields")
}

fn convert(raw: Raw, shown: &str, index: usize, default_id: String) -> Result<Anchor> {
    let at = |field: &str| format!("{shown}: {field}");
    let mut fragments = raw.fragments.unwrap_or_default();
    if let Some(f) = raw.fragment {
        fragments.push(f);
    }
    let given = [
        !fragments.is_empty(),
        raw.lines.is_some(),
        raw.pattern.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if given != 1 {
        return Err(Error::input(format!(
            "{shown}: an anchor needs exactly one of fragments:, lines:, pattern: (found {given})"
        )));
    }
    let locator = if let Some(l) = raw.lines {
        let text = match &l {
            serde_yaml::Value::Number(n) => n.to_string(),
            serde_yaml::Value::String(s) => s.clone(),
            _ => String::new(),
        };
        let (start, end) = parse_lines(&text).ok_or_else(|| {
            Error::input(format!("{}: expected N or N-M, got {text:?}", at("lines")))
        })?;
        Locator::Lines {
            start,
            end,
            snippet: None,
        }
    } else if let Some(p) = raw.pattern {
        Locator::Pattern(p)
    } else {
        Locator::Fragments(fragments)
    };
    let cwe = match raw.cwe {
        None => None,
        Some(v) => {
            let text = match &v {
                serde_yaml::Value::Number(n) => n.to_string(),
                serde_yaml::Value::String(s) => s.clone(),
                _ => String::new(),
            };
            Some(parse_cwe(&text).ok_or_else(|| {
                Error::input(format!(
                    "{}: expected a number such as 918, got {text:?}",
                    at("cwe")
                ))
            })?)
        }
    };
    let class = match raw.class {
        None => None,
        Some(c) => Some(DefectClass::parse(&c).ok_or_else(|| {
            Error::input(format!(
                "{}: {c:?} is not one of {}",
                at("class"),
                DefectClass::ALL.join(", ")
            ))
        })?),
    };
    let kind = match raw.kind.as_deref().map(str::trim) {
        None | Some("present") => AnchorKind::Present,
        Some("absent") => AnchorKind::Absent,
        Some(other) => {
            return Err(Error::input(format!(
                "{}: {other:?} is not present or absent",
                at("kind")
            )));
        }
    };
    let file = paths::normalise(&raw.file);
    if file.is_empty() {
        return Err(Error::input(format!("{}: empty path", at("file"))));
    }
    Ok(Anchor {
        id: raw
            .id
            .filter(|s| !s.trim().is_empty())
            .unwrap_or(default_id),
        cwe,
        class,
        file,
        locator,
        kind,
        description: raw.description,
        source: AnchorSource {
            format: "anchor-yaml",
            tool: None,
            rule: None,
            path: Some(shown.to_string()),
            index: Some(index + 1),
            said: None,
            security_severity: None,
        },
        unconfirmed: raw.unconfirmed.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SSRF_YAML: &str = r#"
id: ssrf-preview            # stable id
cwe: 918
class: insufficient_defence
file: media/fetcher.py
fragments:
  - 'if not url.startswith("https://"):'
description: only the scheme is checked
"#;

    #[test]
    fn parses_the_spec_example() {
        let a = parse(SSRF_YAML, "ssrf.yaml").unwrap();
        assert_eq!(a.len(), 1);
        let a = &a[0];
        assert_eq!(a.id, "ssrf-preview");
        assert_eq!(a.cwe, Some(918));
        assert_eq!(a.class, Some(DefectClass::InsufficientDefence));
        assert_eq!(a.file, "media/fetcher.py");
        assert_eq!(
            a.locator,
            Locator::Fragments(vec![r#"if not url.startswith("https://"):"#.into()])
        );
        assert_eq!(a.kind, AnchorKind::Present);
    }

    #[test]
    fn lines_pattern_absent_and_lists() {
        let a = parse("file: a.py\nlines: 12-14\n", "x.yaml").unwrap();
        assert_eq!(
            a[0].locator,
            Locator::Lines {
                start: 12,
                end: 14,
                snippet: None
            }
        );
        assert_eq!(a[0].id, "x");
        let a = parse(
            "file: a.py\nlines: 7\nkind: absent\ncwe: CWE-22\n",
            "x.yaml",
        )
        .unwrap();
        assert_eq!(
            a[0].locator,
            Locator::Lines {
                start: 7,
                end: 7,
                snippet: None
            }
        );
        assert_eq!(a[0].kind, AnchorKind::Absent);
        assert_eq!(a[0].cwe, Some(22));
        let a = parse(
            "- {file: a.py, pattern: 'x+'}\n- {id: k, file: b.py, fragment: y}\n",
            "l.yaml",
        )
        .unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].id, "l-1");
        assert_eq!(a[1].id, "k");
        let a = parse("anchors:\n  - {file: a.py, pattern: 'x+'}\n", "w.yaml").unwrap();
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let e = parse("id: x\nfile: a.py\nfragmnts: [x]\n", "bad.yaml").unwrap_err();
        assert!(e.to_string().starts_with("bad.yaml"), "{e}");
        assert!(e.to_string().contains("fragmnts"), "{e}");
        let e = parse("file: a.py\n", "b.yaml").unwrap_err();
        assert!(e.to_string().contains("exactly one of"), "{e}");
        let e = parse("file: a.py\nlines: 9-3\n", "c.yaml").unwrap_err();
        assert!(e.to_string().contains("lines"), "{e}");
        let e = parse("file: a.py\nfragment: x\nkind: gone\n", "d.yaml").unwrap_err();
        assert!(e.to_string().contains("kind"), "{e}");
        let e = parse("id: x\nfile: a.py\nfragmnts: [x]\n", "bad.yaml").unwrap_err();
        assert!(e.to_string().starts_with("bad.yaml:3:"), "{e}");
        let e = parse("file: [a\n", "e.yaml").unwrap_err();
        assert!(e.to_string().starts_with("e.yaml:"), "{e}");
        assert_eq!(parse_lines("3"), Some((3, 3)));
        assert_eq!(parse_lines("0-2"), None);
    }
}
