//! Russian and Chinese logs through the real binary: the worked example in both languages (our
//! translations, tests/fixtures/lang/) finds the English one's origin with the offline judge,
//! with the same kinds and every turn scored; and the judge's prompts are in the log's language unless `--judge-lang` or
//! `sage.judgeLang` says otherwise, which the scores document records.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::Repo;

fn fixture(lang: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/lang/fix-ssrf.{lang}.yaml"))
}

/// (turn, kind, TR, DI, VR, SA, opportunity) of every judged turn.
fn table(v: &Value) -> Vec<(u64, String, [u64; 4], bool)> {
    v["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let s = &t["scores"];
            (
                t["turn"].as_u64().unwrap(),
                t["kind"].as_str().unwrap().to_string(),
                ["tr", "di", "vr", "sa"].map(|d| s[d].as_u64().unwrap()),
                t["opportunity"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_worked_example_in_russian_and_chinese_scores_like_the_english_one() {
    let repo = Repo::new();
    let dir = repo.demo();
    let en = repo
        .blame_demo(&dir, &["--format", "json", "-q"])
        .ok()
        .json();
    assert_eq!(en["origin"]["turn"], 1);
    assert_eq!(en["origin"]["type"], "inadequate_defence");
    for lang in ["ru", "zh"] {
        let session = fixture(lang);
        let text = std::fs::read_to_string(&session).unwrap();
        let v = repo
            .blame_demo(
                &dir,
                &[
                    "--session",
                    session.to_str().unwrap(),
                    "--format",
                    "json",
                    "-q",
                ],
            )
            .ok()
            .json();
        // The same write at the same turn, the same origin turn and type, the same bound.
        assert_eq!(v["provenance"]["status"], "introduced", "{lang}");
        assert_eq!(v["provenance"]["introducing_write"]["turn"], 3, "{lang}");
        assert_eq!(v["provenance"]["introducing_write"]["mapped_by"], "replay");
        for key in ["status", "turn", "type", "bound", "bound_by"] {
            assert_eq!(v["origin"][key], en["origin"][key], "{lang} origin {key}");
        }
        // Every turn's kind as in English, and every turn scored. The scores themselves may
        // differ: the phrase lists carry Russian and Chinese words, but the model's words are
        // those of its (English) training sessions (docs/languages.md).
        let kinds = |t: &[(u64, String, [u64; 4], bool)]| -> Vec<(u64, String)> {
            t.iter().map(|(n, k, ..)| (*n, k.clone())).collect()
        };
        assert_eq!(kinds(&table(&v)), kinds(&table(&en)), "{lang}");
        let missed = |d: &Value| -> Vec<Value> {
            d["missed_opportunities"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["turn"].clone())
                .collect()
        };
        assert_eq!(missed(&v), missed(&en), "{lang}");
        // The origin's quote is the plan in the log's own words, verbatim.
        let quote = v["origin"]["quote"].as_str().unwrap();
        let plan = match lang {
            "ru" => "План: перед загрузкой проверим, что схема — https",
            _ => "计划：下载前先检查协议是否为 https",
        };
        assert!(quote.starts_with(plan), "{lang}: {quote}");
        assert!(
            text.replace("\n      ", " ").contains(quote),
            "{lang}: the quote is in the fixture"
        );
        // The offline judge sends no prompt: no prompt language.
        assert!(v["judge"].get("lang").is_none(), "{lang}");
    }
}

#[test]
fn judge_then_origin_on_the_translations_gives_the_same_answer() {
    let repo = Repo::new();
    let dir = repo.demo();
    let prov = dir.join("prov.json");
    repo.sage_in(&dir, &["provenance", "--out", prov.to_str().unwrap(), "-q"])
        .ok();
    for lang in ["ru", "zh"] {
        let scores = dir.join(format!("scores.{lang}.json"));
        let session = fixture(lang);
        // The task names the weakness (SSRF / 服务端请求伪造): its list applies without --cwe.
        let run = repo
            .sage_in(
                &dir,
                &[
                    "judge",
                    session.to_str().unwrap(),
                    "--anchor-file",
                    "media/fetcher.py",
                    "--format",
                    "json",
                    "-q",
                ],
            )
            .ok();
        let judged = run.json();
        std::fs::write(&scores, &run.stdout).unwrap();
        let warnings = judged["judge"]["warnings"].to_string();
        assert!(warnings.contains("CWE-918"), "{lang}: {warnings}");
        let o = repo
            .sage_in(
                &dir,
                &[
                    "origin",
                    "--scores",
                    scores.to_str().unwrap(),
                    "--provenance",
                    prov.to_str().unwrap(),
                    "--format",
                    "json",
                ],
            )
            .ok()
            .json();
        assert_eq!(o["origin"]["turn"], 1, "{lang}");
        assert_eq!(o["origin"]["type"], "inadequate_defence", "{lang}");
        assert_eq!(o["origin"]["bound"], 3, "{lang}");
    }
}

/// A `command:` judge that keeps each prompt it is sent in `dir` and answers zeros for the turn
/// of the last turn block (the instruction's wording depends on the language).
fn recording_judge(dir: &Path) -> String {
    let script = dir.join("judge.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nf=$(mktemp {}/prompt.XXXXXX)\ncat > \"$f\"\nturn=$(grep -o ' n=\"[0-9]*\"' \"$f\" | tail -1 | tr -dc 0-9)\nprintf '{{\"turn\": %s, \"applicable\": true, \"opportunity\": true, \"kind\": \"planning\", \"scores\": {{\"tr\":0,\"di\":0,\"vr\":0,\"sa\":0}}, \"quotes\": {{\"tr\":null,\"di\":null,\"vr\":null,\"sa\":null}}}}\\n' \"$turn\"\n",
            dir.display()
        ),
    )
    .unwrap();
    format!("command:sh {}", script.display())
}

/// The prompts the recording judge kept, and empties the record.
fn prompts(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("prompt.")
        {
            out.push(std::fs::read_to_string(&p).unwrap());
            std::fs::remove_file(p).unwrap();
        }
    }
    out
}

#[test]
fn prompts_follow_the_logs_language_unless_told() {
    let repo = Repo::new();
    let kept = tempfile::tempdir().unwrap();
    let judge = recording_judge(kept.path());
    let run = |session: &Path, extra: &[&str]| -> Value {
        let mut args = vec![
            "judge",
            session.to_str().unwrap(),
            "--judge",
            judge.as_str(),
            "--no-cache",
            "--format",
            "json",
            "-q",
        ];
        args.extend_from_slice(extra);
        repo.sage(&args).ok().json()
    };
    // A Russian log: the Russian rubric, the log as written.
    let v = run(&fixture("ru"), &[]);
    assert_eq!(v["judge"]["lang"], "ru");
    let ps = prompts(kept.path());
    assert_eq!(ps.len(), 6, "one prompt per turn");
    for p in &ps {
        assert!(p.contains("Ты — независимый аудитор лога сессии"), "{p}");
        assert!(p.contains("TR — распознавание угрозы"));
        assert!(p.contains("КРИТЕРИЙ: безопасность"));
        assert!(
            p.contains("Загрузчик превью скачивает любой URL"),
            "the log as written"
        );
        assert!(!p.contains("You are an independent auditor"));
    }
    // --judge-lang wins over the log's language.
    let v = run(&fixture("ru"), &["--judge-lang", "en"]);
    assert_eq!(v["judge"]["lang"], "en");
    for p in prompts(kept.path()) {
        assert!(p.contains("You are an independent auditor"), "{p}");
        assert!(p.contains("Загрузчик превью скачивает любой URL"));
    }
    // A Chinese log: the Chinese rubric.
    let v = run(&fixture("zh"), &[]);
    assert_eq!(v["judge"]["lang"], "zh");
    for p in prompts(kept.path()) {
        assert!(p.contains("你是一名独立审计员"), "{p}");
        assert!(p.contains("请为上面日志的第"));
    }
    // The English worked example stays English; sage.judgeLang sets it, the flag still wins.
    let en = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/demo/session.yaml");
    assert_eq!(run(&en, &[])["judge"]["lang"], "en");
    assert!(
        prompts(kept.path())
            .iter()
            .all(|p| p.contains("You are an independent auditor"))
    );
    repo.git(&["config", "sage.judgeLang", "zh"]);
    assert_eq!(run(&en, &[])["judge"]["lang"], "zh");
    assert!(
        prompts(kept.path())
            .iter()
            .all(|p| p.contains("你是一名独立审计员"))
    );
    assert_eq!(run(&en, &["--judge-lang", "ru"])["judge"]["lang"], "ru");
    repo.git(&["config", "sage.judgeLang", "auto"]);
    assert_eq!(run(&fixture("ru"), &[])["judge"]["lang"], "ru");
    prompts(kept.path());
    // A language the prompts are not written in is bad input, from the flag and the setting.
    let flag = repo.sage(&["judge", en.to_str().unwrap(), "--judge-lang", "fr"]);
    assert_eq!(flag.code, 2, "{flag:?}");
    assert!(
        flag.stderr.contains("[possible values: en, ru, zh]"),
        "{}",
        flag.stderr
    );
    repo.git(&["config", "sage.judgeLang", "fr"]);
    repo.sage(&["judge", en.to_str().unwrap()])
        .bad_input("sage.judgeLang");
}
