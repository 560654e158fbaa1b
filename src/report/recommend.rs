//! What to change in the agent's instructions, by origin type (docs/method.md#recommendations),
//! with the CWE's defence checklist; and the security-plan checkpoint block. Templates in
//! templates/ (embedded; a user directory may override them).

use crate::i18n::Tr;
use std::collections::BTreeMap;
use std::path::Path;

use minijinja::value::Serde;

use crate::error::{Error, Result};
use crate::origin::{Missed, Origin, OriginType, Status};

use crate::i18n::{Lang, localized};

/// The embedded templates, by language and name.
const EMBEDDED: &[(Lang, &str, &str)] = &[
    (
        Lang::En,
        "checklists.yaml",
        include_str!("../../templates/checklists.yaml"),
    ),
    (
        Lang::Ru,
        "checklists.yaml",
        include_str!("../../templates/checklists.ru.yaml"),
    ),
    (
        Lang::Zh,
        "checklists.yaml",
        include_str!("../../templates/checklists.zh.yaml"),
    ),
    (
        Lang::En,
        "checkpoint.md",
        include_str!("../../templates/checkpoint.md"),
    ),
    (
        Lang::Ru,
        "checkpoint.md",
        include_str!("../../templates/checkpoint.ru.md"),
    ),
    (
        Lang::Zh,
        "checkpoint.md",
        include_str!("../../templates/checkpoint.zh.md"),
    ),
    (
        Lang::Ru,
        "inadequate_defence",
        include_str!("../../templates/recommendations/inadequate_defence.ru.md.j2"),
    ),
    (
        Lang::Zh,
        "inadequate_defence",
        include_str!("../../templates/recommendations/inadequate_defence.zh.md.j2"),
    ),
    (
        Lang::Ru,
        "unaddressed_requirement",
        include_str!("../../templates/recommendations/unaddressed_requirement.ru.md.j2"),
    ),
    (
        Lang::Zh,
        "unaddressed_requirement",
        include_str!("../../templates/recommendations/unaddressed_requirement.zh.md.j2"),
    ),
    (
        Lang::Ru,
        "defect_in_change",
        include_str!("../../templates/recommendations/defect_in_change.ru.md.j2"),
    ),
    (
        Lang::Zh,
        "defect_in_change",
        include_str!("../../templates/recommendations/defect_in_change.zh.md.j2"),
    ),
    (
        Lang::Ru,
        "undetermined",
        include_str!("../../templates/recommendations/undetermined.ru.md.j2"),
    ),
    (
        Lang::Zh,
        "undetermined",
        include_str!("../../templates/recommendations/undetermined.zh.md.j2"),
    ),
    (
        Lang::Ru,
        "missed",
        include_str!("../../templates/recommendations/missed.ru.md.j2"),
    ),
    (
        Lang::Zh,
        "missed",
        include_str!("../../templates/recommendations/missed.zh.md.j2"),
    ),
];

fn embedded(lang: Lang, name: &str) -> String {
    EMBEDDED
        .iter()
        .find(|(l, n, _)| *l == lang && *n == name)
        .map(|(_, _, s)| s.to_string())
        .or_else(|| {
            (lang == Lang::En)
                .then(|| RECOMMENDATIONS.iter().find(|(n, _)| *n == name))
                .flatten()
                .map(|(_, s)| s.to_string())
        })
        .unwrap_or_default()
}

const RECOMMENDATIONS: &[(&str, &str)] = &[
    (
        "inadequate_defence",
        include_str!("../../templates/recommendations/inadequate_defence.md.j2"),
    ),
    (
        "unaddressed_requirement",
        include_str!("../../templates/recommendations/unaddressed_requirement.md.j2"),
    ),
    (
        "defect_in_change",
        include_str!("../../templates/recommendations/defect_in_change.md.j2"),
    ),
    (
        "undetermined",
        include_str!("../../templates/recommendations/undetermined.md.j2"),
    ),
    (
        "missed",
        include_str!("../../templates/recommendations/missed.md.j2"),
    ),
];

fn read_override(dir: Option<&Path>, rel: &str) -> Result<Option<String>> {
    let Some(p) = dir.map(|d| d.join(rel)).filter(|p| p.exists()) else {
        return Ok(None);
    };
    crate::files::read_text(&p, "template", crate::files::DOC_CAP).map(Some)
}

/// The defence checklist of a CWE in `lang`, if there is one.
fn checklist_in(lang: Lang, cwe: Option<u32>, dir: Option<&Path>) -> Result<Vec<String>> {
    let Some(cwe) = cwe else {
        return Ok(Vec::new());
    };
    let text = read_override(dir, &localized("checklists.yaml", lang))?
        .unwrap_or_else(|| embedded(lang, "checklists.yaml"));
    let all: BTreeMap<u32, Vec<String>> = crate::files::parse_yaml(&text, "checklists.yaml")?;
    // 287 and 306 share the authentication list when only one is present.
    Ok(all.get(&cwe).cloned().unwrap_or_default())
}

/// The security-plan block (for AGENTS.md / CLAUDE.md), with the CWE's checklist when known.
pub(crate) fn checkpoint(tr: &Tr, cwe: Option<u32>, dir: Option<&Path>) -> Result<String> {
    let lang = tr.lang();
    let mut block = read_override(dir, &localized("checkpoint.md", lang))?
        .unwrap_or_else(|| embedded(lang, "checkpoint.md"));
    let list = checklist_in(lang, cwe, dir)?;
    if !list.is_empty() {
        block.push('\n');
        block.push_str(&tr.tf("rec.checklist", &[("cwe", &cwe.unwrap_or(0))]));
        block.push('\n');
        for item in list {
            block.push_str(&format!("- {item}\n"));
        }
    }
    Ok(block)
}

/// The recommendation that ends a report, in `lang` (the JSON report's is English).
pub(crate) fn recommendation(
    origin: &Origin,
    missed: &[Missed],
    cwe: Option<u32>,
    dir: Option<&Path>,
    lang: Lang,
) -> Result<String> {
    let name = match (origin.status, origin.kind) {
        (
            Status::Localized,
            Some(OriginType::InadequateDefence | OriginType::NoticedChosePoorly),
        ) => {
            // Two-type output folds (iii) in; the turn's relation to the bound tells them apart.
            if origin.kind == Some(OriginType::NoticedChosePoorly) && origin.turn == origin.bound {
                "defect_in_change"
            } else {
                "inadequate_defence"
            }
        }
        (Status::Localized, Some(OriginType::UnaddressedRequirement | OriginType::NotNoticed)) => {
            "unaddressed_requirement"
        }
        (Status::Localized, Some(OriginType::DefectInChange)) => "defect_in_change",
        _ => "undetermined",
    };
    let list = checklist_in(lang, cwe, dir)?;
    let mut out = String::new();
    for part in [name, "missed"] {
        let rel = localized(&format!("recommendations/{part}.md.j2"), lang);
        let src = match read_override(dir, &rel)? {
            Some(s) => s,
            None => embedded(lang, part),
        };
        let mut env = minijinja::Environment::new();
        env.add_template("t", &src)
            .map_err(|e| Error::input(format!("template {rel}: {e}")))?;
        let text = env
            .get_template("t")
            .and_then(|t| t.render(minijinja::context! { origin => Serde(origin), missed => Serde(missed), checklist => list.clone(), cwe => cwe }))
            .map_err(|e| Error::input(format!("template {rel}: {e}")))?;
        if !text.trim().is_empty() {
            out.push_str(text.trim());
            out.push_str("\n\n");
        }
    }
    Ok(out.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Reason;

    #[test]
    fn ssrf_inadequate_defence_names_the_checklist() {
        let o = Origin {
            status: Status::Localized,
            turn: Some(1),
            kind: Some(OriginType::InadequateDefence),
            quote: None,
            reason: None,
            bound: Some(3),
            bound_by: None,
            detail: None,
            margin: None,
        };
        let missed = vec![Missed {
            turn: 5,
            kind: crate::transcript::TurnKind::Review,
            vr: 1,
            sa: 0,
            touches_anchor: false,
        }];
        let r = recommendation(&o, &missed, Some(918), None, Lang::En).unwrap();
        assert!(r.contains("bypass"), "{r}");
        assert!(
            r.contains("resolve the host name and reject private"),
            "{r}"
        );
        assert!(
            r.contains("loopback") && r.contains("link-local") && r.contains("metadata"),
            "{r}"
        );
        assert!(r.contains("Missed opportunities at turn 5"), "{r}");
        let u = Origin {
            status: Status::Undetermined,
            turn: None,
            kind: None,
            quote: None,
            reason: Some(Reason::NoSession),
            bound: None,
            bound_by: None,
            detail: Some("no session".into()),
            margin: None,
        };
        assert!(
            recommendation(&u, &[], None, None, Lang::En)
                .unwrap()
                .contains("git sage record")
        );
        assert!(
            checkpoint(Tr::english(), Some(918), None)
                .unwrap()
                .contains("Defence checklist for CWE-918")
        );
        for cwe in [
            918, 22, 78, 89, 79, 94, 502, 611, 327, 798, 200, 287, 306, 352, 601,
        ] {
            for lang in crate::i18n::Lang::ALL {
                assert_eq!(
                    checklist_in(lang, Some(cwe), None).unwrap().len(),
                    checklist_in(Lang::En, Some(cwe), None).unwrap().len(),
                    "{cwe} {lang:?}"
                );
            }
            assert!(
                !checklist_in(Lang::En, Some(cwe), None).unwrap().is_empty(),
                "{cwe}"
            );
        }
    }
}
