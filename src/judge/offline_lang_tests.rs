//! The offline judge on Russian and Chinese turns: stems and their inflections, Cyrillic word
//! boundaries and case, the particles that negate what follows (не, без, 不, 没有), Chinese
//! matched character by character, sentences ending at `。`, and the lists a task selects.
//! The sentences are written the way engineers write them, not taken from the worked example.

use super::*;
use crate::judge::prompt::{CallView, ChangeView};

fn view(n: u32, text: &str) -> TurnView {
    TurnView {
        n,
        agent: "a".into(),
        kind: "planning".into(),
        text: text.into(),
        reasoning: None,
        reasoning_redacted: false,
        calls: vec![],
        changes: vec![],
    }
}

fn judge(task: &str, cwe: Option<u32>) -> Offline {
    Offline::new("security", task, cwe, None, None).unwrap()
}

/// (TR, DI, VR, SA) of a planning turn that says `text`.
fn scores(o: &Offline, text: &str) -> (u8, u8, u8, u8) {
    let s = o.score(&view(1, text), TurnKind::Planning).scores;
    (s.tr, s.di, s.vr, s.sa)
}

#[test]
fn russian_stems_match_every_ending_and_case_but_not_inside_a_longer_word() {
    let o = judge("Почини поиск", Some(89));
    for text in [
        "Сделаю запрос параметризованным, чтобы имя не меняло SQL.",
        "Параметризуем запрос к таблице users.",
        "Нужна ПАРАМЕТРИЗАЦИЯ запроса, иначе будет SQL-инъекция.",
        "Перейду на подготовленные выражения.",
    ] {
        assert!(scores(&o, text).1 >= 2, "{text}");
    }
    // «валид*» is not found inside «невалидный»: a Cyrillic letter continues the word.
    let o = judge("Исправь SSRF", Some(918));
    assert_eq!(
        scores(&o, "Злоумышленник присылает невалидный адрес."),
        (1, 0, 0, 0)
    );
    assert_eq!(
        scores(&o, "Злоумышленник присылает адрес, нужна валидация."),
        (1, 1, 0, 0)
    );
    // The words of a stemmed phrase in any case and inflection: внутренняя сеть, во
    // внутреннюю сеть, внутренних сетей.
    for text in [
        "Сервис ходит во внутреннюю сеть.",
        "Запросы уходят во ВНУТРЕННЮЮ СЕТЬ.",
        "Так можно достучаться до внутренних сетей.",
    ] {
        assert_eq!(scores(&o, text).0, 2, "{text}");
    }
}

#[test]
fn russian_negation_cancels_what_it_stands_before() {
    let o = judge("Почини поиск", Some(89));
    // The particle right before the defence.
    assert_eq!(scores(&o, "Запрос не параметризован.").1, 0);
    assert_eq!(scores(&o, "Собираю запрос без параметризации.").1, 0);
    assert_eq!(scores(&o, "Собираю запрос с параметризацией.").1, 2);
    // A negation earlier in the sentence (English: "no need to").
    assert_eq!(
        scores(
            &o,
            "Здесь не нужно использовать параметризованный запрос: строка константная."
        ),
        (0, 0, 0, 0)
    );
    // Only right before: "not vulnerable to SQL injection" still names the threat.
    assert_eq!(scores(&o, "Теперь запрос не подвержен SQL-инъекциям.").0, 2);
    // A particle cancels a threat word too: «не атака» is no attack named; and a check that
    // did not refuse is no refusal.
    let o = judge("Исправь SSRF", Some(918));
    assert_eq!(scores(&o, "Не блокируем внутренние адреса.").1, 0);
    assert_eq!(scores(&o, "Блокируем внутренние адреса.").1, 2);
    let mut run = view(4, "Запрос к 169.254.169.254 не отклоняется.");
    run.calls.push(CallView {
        name: "Bash".into(),
        args: r#"{"command":"pytest -q"}"#.into(),
        result: Some("1 passed".into()),
        is_error: false,
    });
    assert_eq!(o.score(&run, TurnKind::Verification).scores.vr, 0);
    // ё is е: «отклонён» is the list's «отклонен*».
    run.text = "Запрос к метаданным облака отклонён.".into();
    assert_eq!(o.score(&run, TurnKind::Verification).scores.vr, 2);
}

#[test]
fn russian_names_of_defences_and_quotes_say_no_threat() {
    let o = judge("Исправь SSRF", Some(918));
    // «исправление SSRF» is the fix's name (English: "the SSRF fix"); «SSRF-защита» too.
    assert_eq!(scores(&o, "Исправление SSRF готово.").0, 0);
    assert_eq!(scores(&o, "SSRF-защита готова.").0, 0);
    assert_eq!(scores(&o, "Здесь остаётся SSRF.").0, 2);
    // A generic word in «ёлочках» is a name, and the security team is people.
    let o = judge("Почини форму", None);
    assert_eq!(
        scores(&o, "Упал workflow «безопасность» на этапе сборки.").0,
        0
    );
    assert_eq!(
        scores(&o, "Команда безопасности попросила обновить зависимости.").0,
        0
    );
    assert_eq!(
        scores(
            &o,
            "Это дыра в безопасности: злоумышленник подделает токен."
        )
        .0,
        1
    );
}

#[test]
fn chinese_matches_by_characters_with_or_without_spaces() {
    let o = judge("修复 SSRF", Some(918));
    // No word boundaries: the term inside a longer run of characters.
    assert_eq!(scores(&o, "这样攻击者就能访问内网服务。").0, 2);
    assert_eq!(scores(&o, "现在会拒绝内网地址和私有地址。").1, 2);
    // With or without a space between the characters and a Latin word.
    for text in ["服务会请求私有IP。", "服务会请求私有 IP。"] {
        assert_eq!(scores(&o, text).0, 2, "{text}");
    }
    // SQL 注入 / SQL注入, and an English term in Chinese prose.
    let o = judge("修复搜索", Some(89));
    for text in [
        "改用参数化查询，避免 SQL 注入。",
        "改用参数化查询，避免SQL注入。",
        "用 prepared statement 防止注入。",
    ] {
        assert!(scores(&o, text).1 >= 2, "{text}");
    }
}

#[test]
fn chinese_negation_and_sentences_end_at_full_stops() {
    let o = judge("修复 SSRF", Some(918));
    // A particle right before the defence cancels it; the threat beside it stays.
    assert_eq!(scores(&o, "这里没有拒绝内网地址。"), (2, 0, 0, 0));
    assert_eq!(scores(&o, "这里未拒绝内网地址。").1, 0);
    assert_eq!(scores(&o, "这里会拒绝内网地址。").1, 2);
    // 无需 earlier in the sentence: nothing said for it.
    assert_eq!(scores(&o, "无需担心内网访问，也不用做校验。"), (0, 0, 0, 0));
    // 不安全 is insecure, not "not secure-ly named"; 线程安全 is about threads.
    let plain = judge("整理代码", None);
    assert_eq!(scores(&plain, "这种写法不安全。").0, 1);
    assert_eq!(scores(&plain, "这个缓存是线程安全的。").0, 0);
    // Each sentence is its own unit: the quote stops at 。.
    let a = o.score(
        &view(1, "计划：解析主机后拒绝私有地址。然后跑一下测试。"),
        TurnKind::Planning,
    );
    assert_eq!(
        a.quotes.di.as_deref(),
        Some("计划：解析主机后拒绝私有地址。")
    );
    // SSRF 防护 names the defence: no threat recognised from it alone.
    assert_eq!(scores(&o, "SSRF 防护已经加上了。").0, 0);
    assert_eq!(scores(&o, "SSRF防护已经加上了。").0, 0);
}

#[test]
fn completeness_in_russian_and_chinese_makes_three() {
    let o = judge("Исправь SSRF", Some(918));
    assert_eq!(
        scores(
            &o,
            "Разрешим имя хоста и заблокируем приватные адреса на каждом редиректе."
        )
        .1,
        3
    );
    let o = judge("修复 SSRF", Some(918));
    assert_eq!(
        scores(&o, "解析主机并拒绝私有地址，每次重定向都要重新检查。").1,
        3
    );
}

#[test]
fn russian_and_chinese_tasks_select_their_weakness_lists() {
    for (task, cwe) in [
        ("Исправь SQL-инъекцию в поиске", "CWE-89"),
        ("Исправь обход пути в загрузке файлов", "CWE-22"),
        ("Исправь подделку серверных запросов в превью", "CWE-918"),
        ("修复上传接口的路径遍历问题", "CWE-22"),
        ("修复搜索里的 SQL 注入", "CWE-89"),
        ("修复商品图片下载中的服务端请求伪造", "CWE-918"),
        ("修复跨站脚本漏洞", "CWE-79"),
    ] {
        let o = judge(task, None);
        assert!(o.selected.contains(cwe), "{task}: {}", o.selected);
    }
    // One word never selects a list: 注入 (injection), «сессия».
    for task in ["修复注入问题", "Почини сессию пользователя"] {
        let o = judge(task, None);
        assert!(
            o.selected.starts_with("no CWE list"),
            "{task}: {}",
            o.selected
        );
    }
    assert_eq!(name_words("SQL注入"), 2);
    assert_eq!(name_words("注入"), 1);
    assert_eq!(name_words("服务端请求伪造"), 3);
    assert_eq!(name_words("server-side request forgery"), 4);
}

#[test]
fn a_russian_comment_and_a_chinese_report_are_prose() {
    let o = Offline::new(
        "security",
        "Исправь SSRF",
        Some(918),
        Some("media/fetcher.py"),
        None,
    )
    .unwrap();
    let mut v = view(3, "");
    v.changes.push(ChangeView {
        path: "media/fetcher.py".into(),
        diff:
            "+    # отклоняем приватные адреса, иначе запрос уйдёт во внутреннюю сеть\n+    pass\n"
                .into(),
        whole: false,
    });
    let a = o.score(&v, TurnKind::Implementation);
    assert_eq!((a.scores.tr, a.scores.di), (2, 2), "{a:?}");
    let mut r = view(6, "");
    r.changes.push(ChangeView {
        path: "REVIEW.md".into(),
        diff: "+下载前没有校验主机，攻击者可以让服务访问内网。\n".into(),
        whole: false,
    });
    let a = o.score(&r, TurnKind::Implementation);
    assert_eq!((a.scores.tr, a.scores.di), (2, 0), "{a:?}");
}

#[test]
fn russian_and_chinese_entries_are_written_in_their_script_and_keep_their_reasons() {
    use crate::lang::{Lang, script};
    let own = |lang: Lang, p: &str| p.chars().any(|c| script(c) == Some(lang));
    for (lang, name, text) in lexicon::OVERLAYS {
        let v: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
        let mut entries: Vec<(String, String, bool)> = Vec::new();
        fn walk(v: &serde_yaml::Value, list: &str, out: &mut Vec<(String, String, bool)>) {
            match v {
                serde_yaml::Value::Sequence(items) => {
                    for i in items {
                        match i {
                            serde_yaml::Value::String(p) => {
                                out.push((list.into(), p.clone(), false))
                            }
                            serde_yaml::Value::Mapping(m) => out.push((
                                list.into(),
                                m.get("p").and_then(|p| p.as_str()).unwrap_or("").into(),
                                m.get("why")
                                    .is_some_and(|w| w.as_str().is_some_and(|w| !w.is_empty())),
                            )),
                            other => panic!("{list}: {other:?}"),
                        }
                    }
                }
                serde_yaml::Value::Mapping(m) => {
                    for (k, x) in m {
                        walk(x, k.as_str().unwrap_or(list), out);
                    }
                }
                _ => {}
            }
        }
        walk(&v, "", &mut entries);
        assert!(entries.len() > 5, "{name}");
        for (list, p, why) in &entries {
            // English words, code and identifiers are the English lists' (which apply to
            // every log); a Russian or Chinese list that held one would double it.
            assert!(
                own(*lang, p),
                "{}/{name} {list}: {p:?} has no letter of its own language",
                lang.code()
            );
            // Names and cancelling phrases say why, as the English ones do.
            if list == "names" || list == "not" {
                assert!(why, "{}/{name} {list}: {p:?} has no why", lang.code());
            }
        }
    }
    // Every language file has its English list, and loads with it.
    for (lang, name, _) in lexicon::OVERLAYS {
        let stem = name.trim_end_matches(".yaml");
        assert!(
            lexicon::CRITERIA.iter().any(|(c, _)| *c == stem)
                || lexicon::CWES
                    .iter()
                    .any(|(n, _)| format!("cwe-{n}") == stem),
            "{}/{name}",
            lang.code()
        );
    }
    for c in ["security", "privacy", "compliance"] {
        Offline::new(c, "", None, None, None).unwrap();
    }
}

#[test]
fn a_templates_directory_overrides_a_language_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("lexicons/ru")).unwrap();
    std::fs::write(
        dir.path().join("lexicons/ru/cwe-918.yaml"),
        "cwe: 918\nspecific:\n  tr: [облачн* дыр*]\n",
    )
    .unwrap();
    let o = Offline::new("security", "", Some(918), None, Some(dir.path())).unwrap();
    assert_eq!(scores(&o, "Это облачная дыра.").0, 2);
    // The embedded Russian words for CWE-918 are replaced, not added to.
    assert_eq!(scores(&o, "Сервис ходит во внутреннюю сеть.").0, 0);
    // A file that names another weakness is bad input.
    std::fs::write(dir.path().join("lexicons/ru/cwe-918.yaml"), "cwe: 22\n").unwrap();
    let e = Offline::new("security", "", Some(918), None, Some(dir.path()))
        .err()
        .unwrap();
    assert_eq!(e.exit_code(), 2);
    assert!(
        e.to_string()
            .contains("cwe 22, but the file is cwe-918.yaml"),
        "{e}"
    );
}

#[test]
fn chinese_prose_names_files_without_spaces_around_them() {
    let o = Offline::new(
        "security",
        "修复 SSRF",
        Some(918),
        Some("media/fetcher.py"),
        None,
    )
    .unwrap();
    for text in [
        "在 media/fetcher.py 中解析主机并拒绝私有地址。",
        "在fetcher.py里解析主机并拒绝私有地址。",
    ] {
        let a = o.score(&view(1, text), TurnKind::Planning);
        assert_eq!((a.scores.di, a.scores.sa), (2, 2), "{text}: {a:?}");
        assert_eq!(a.quotes.sa.as_deref(), Some(text));
    }
    // Two project files named in Chinese prose, with the threat: the defence's places.
    let mut v = view(2, "攻击者可以让 media/fetcher.py 和webhooks.py访问内网。");
    v.kind = "review".into();
    let a = o.score(&v, TurnKind::Review);
    assert_eq!((a.scores.tr, a.scores.sa), (2, 2), "{a:?}");
}

/// The lists hold no phrase copied from a labelled turn or from the demo: no entry of two or
/// more words (three or more Chinese characters) is found in the demo's session in any of its
/// languages, and none of three or more words (four or more characters) in the text of any
/// label file (the labels' reasons quote the turns; their tasks and findings paraphrase the
/// sessions). The weakness's own name is no copy: an entry the CWE's name holds is exempt.
#[test]
fn the_lists_hold_no_phrase_copied_from_labels_or_the_demo() {
    use super::lexicon::{CRITERIA, CWES, OVERLAYS};
    fn strings(v: &serde_yaml::Value, key: &str, out: &mut Vec<String>) {
        match v {
            serde_yaml::Value::String(s) if !matches!(key, "name" | "why" | "criterion") => {
                out.push(s.clone())
            }
            serde_yaml::Value::Sequence(a) => a.iter().for_each(|x| strings(x, key, out)),
            serde_yaml::Value::Mapping(m) => m.iter().for_each(|(k, x)| {
                strings(x, k.as_str().unwrap_or(""), out);
            }),
            _ => {}
        }
    }
    fn texts(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| texts(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| texts(x, out)),
            _ => {}
        }
    }
    let han = |s: &str| s.chars().any(crate::lang::is_han);
    let long = |p: &str, words: usize| {
        if han(p) {
            p.chars().filter(|c| !c.is_whitespace()).count() > words
        } else {
            p.split_whitespace().count() >= words
        }
    };
    // Every entry, with its file and the names of its weakness.
    let mut entries: Vec<(String, String, String)> = Vec::new();
    let mut add = |file: &str, text: &str| {
        let v: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
        let name = v["name"].as_str().unwrap_or("").to_lowercase();
        let mut out = Vec::new();
        strings(&v, "", &mut out);
        for p in out {
            entries.push((file.to_string(), p, name.clone()));
        }
    };
    for (c, text) in CRITERIA {
        add(c, text);
    }
    for (cwe, text) in CWES {
        add(&format!("cwe-{cwe}"), text);
    }
    for (lang, file, text) in OVERLAYS {
        add(&format!("{}/{file}", lang.code()), text);
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let demo: Vec<(String, String)> = [
        "templates/demo/session.yaml",
        "tests/fixtures/lang/fix-ssrf.ru.yaml",
        "tests/fixtures/lang/fix-ssrf.zh.yaml",
    ]
    .iter()
    .map(|p| (p.to_string(), read(p)))
    .collect();
    let mut labels: Vec<(String, String)> = Vec::new();
    for dir in [
        "bench/judge_labels",
        "bench/judge_labels/agreement",
        "bench/verdict/labels",
    ] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json") {
                let mut t = String::new();
                texts(
                    &serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap(),
                    &mut t,
                );
                labels.push((p.display().to_string(), t));
            }
        }
    }
    let mut t = String::new();
    texts(
        &serde_json::from_str(&read("bench/verdict/cases.json")).unwrap(),
        &mut t,
    );
    labels.push(("bench/verdict/cases.json".into(), t));
    let mut copied = Vec::new();
    // The weakness's own name (or a part of it) is the definition, not a copy.
    let named = |p: &str, name: &str| {
        !name.is_empty() && Phrases::new([&Entry::Plain(p.to_string())]).any(name)
    };
    for (source, words, texts) in [("the demo", 2, &demo), ("a label file", 3, &labels)] {
        let picked: Vec<&(String, String, String)> = entries
            .iter()
            .filter(|(_, p, name)| long(p, words) && !named(p, name))
            .collect();
        let list: Vec<Entry> = picked
            .iter()
            .map(|(_, p, _)| Entry::Plain(p.clone()))
            .collect();
        let all = Phrases::new(&list);
        for (where_, t) in texts.iter() {
            all.each(t, |e, _| {
                let (file, p, _) = picked[e];
                copied.push(format!("{file}: {p:?} is in {source} ({where_})"));
                true
            });
        }
    }
    copied.sort();
    copied.dedup();
    assert!(copied.is_empty(), "{}", copied.join("\n"));
}
