//! The verdict benchmark's dataset (docs/dataset.md) as committed: its cases and every label
//! file match their JSON Schemas, each labeller labelled every case of a split once and every
//! turn of a case at most once, and each stated verdict follows from the labeller's own turn
//! labels by docs/method.md's rule where the rule alone decides (the bound comes from git sage
//! at run time, so here: an origin is a labelled turn, missed turns come after it, and an
//! undetermined verdict lists none).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

fn read(p: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(p);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn validator(p: &str) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .offline()
        .build(&read(p))
        .unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn the_dataset_matches_its_schemas_and_labels_every_case_once() {
    let cases = read("bench/verdict/cases.json");
    let v = validator("bench/verdict/schema/verdict-cases.json");
    let errs: Vec<String> = v.iter_errors(&cases).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "cases.json: {errs:?}");
    let split_of: BTreeMap<String, String> = cases
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["split"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        split_of.len(),
        cases.as_array().unwrap().len(),
        "ids are unique"
    );
    let labels = validator("bench/verdict/schema/sage.verdict-labels-1.json");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/verdict/labels");
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let doc = read(&format!("bench/verdict/labels/{name}"));
        let errs: Vec<String> = labels.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errs.is_empty(), "{name}: {errs:?}");
        files += 1;
        let split = doc["split"].as_str().unwrap();
        let mut seen = BTreeSet::new();
        for c in doc["cases"].as_array().unwrap() {
            let id = c["case"].as_str().unwrap();
            assert_eq!(
                split_of.get(id).map(String::as_str),
                Some(split),
                "{name}: {id}"
            );
            assert!(seen.insert(id.to_string()), "{name}: {id} twice");
            let turns: Vec<u64> = c["turns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["turn"].as_u64().unwrap())
                .collect();
            let set: BTreeSet<u64> = turns.iter().copied().collect();
            assert_eq!(
                set.len(),
                turns.len(),
                "{name}: {id}: a turn labelled twice"
            );
            let verdict = &c["verdict"];
            let missed: Vec<u64> = verdict["missed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_u64().unwrap())
                .collect();
            match verdict["origin_turn"].as_u64() {
                Some(o) => {
                    assert!(
                        set.contains(&o),
                        "{name}: {id}: origin {o} is no labelled turn"
                    );
                    assert!(
                        missed.iter().all(|m| *m > o && set.contains(m)),
                        "{name}: {id}"
                    );
                    assert_ne!(verdict["type"], "undetermined", "{name}: {id}");
                }
                None => {
                    assert_eq!(verdict["type"], "undetermined", "{name}: {id}");
                    assert!(missed.is_empty(), "{name}: {id}");
                }
            }
        }
        let want: BTreeSet<&String> = split_of
            .iter()
            .filter(|(_, s)| s.as_str() == split)
            .map(|(id, _)| id)
            .collect();
        assert_eq!(
            seen.iter().collect::<BTreeSet<_>>(),
            want,
            "{name}: every case of the {split} split, once"
        );
    }
    assert_eq!(files, 4, "two labellers × two splits");
}
