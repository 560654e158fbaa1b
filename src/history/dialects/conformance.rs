//! Conformance of the note readers against real notes: each fixture under
//! tests/fixtures/dialects/<dialect>/ describes a tiny repository rebuilt from a public one
//! (SOURCES.md beside it says which commits, and what was reduced). The test builds it with
//! git in a temporary directory, attaches the real notes byte for byte, and pins what the
//! reader finds. The pins are values a wrong parser gets wrong: ranges as written, keys routed
//! to the right map, the fallback refs, skipped records and their reasons, and for the
//! dialects that store the lines' content or hash, that content matches the file at the
//! commit (so that the line numbers are read as the tools meant them).

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use serde::Deserialize;
    use sha2::{Digest, Sha256};

    use super::super::{
        Author, Claim, Dialect, Evidence, Lines, Transcript, agentblame, git_ai, whogitit,
    };
    use crate::git::{Oid, Repo};

    /// A fixture's description (its `repository` and each commit's `real` id are for the reader;
    /// SOURCES.md says more).
    #[derive(Deserialize)]
    struct Fixture {
        commits: Vec<FixtureCommit>,
    }

    #[derive(Deserialize)]
    struct FixtureCommit {
        label: String,
        date: String,
        message: String,
        /// Repository path → fixture file holding its content at this commit.
        files: BTreeMap<String, String>,
        /// Notes ref → fixture file holding the note's exact bytes.
        #[serde(default)]
        notes: BTreeMap<String, String>,
        #[serde(default = "yes")]
        in_range: bool,
    }

    fn yes() -> bool {
        true
    }

    /// A fixture repository, built.
    struct Built {
        dir: tempfile::TempDir,
        repo: Repo,
        by_label: HashMap<String, Oid>,
        /// The commits marked in range, oldest first.
        range: Vec<Oid>,
    }

    impl Built {
        fn at(&self, label: &str) -> Oid {
            self.by_label[label]
        }

        fn git(&self, args: &[&str]) -> String {
            git(self.dir.path(), args, "2026-01-01T00:00:00Z")
        }

        /// Line `n` (1-based) of `path` at `commit`.
        fn line(&self, commit: Oid, path: &str, n: u32) -> String {
            let text = self
                .repo
                .file_at_rev(&commit.hex(), path)
                .unwrap()
                .unwrap_or_else(|| panic!("{path} is not in {}", commit.short()));
            let text = String::from_utf8(text).unwrap();
            text.split('\n')
                .nth(n as usize - 1)
                .unwrap_or_else(|| panic!("{path} at {} has no line {n}", commit.short()))
                .to_string()
        }

        /// How many lines `path` has at `commit`.
        fn line_count(&self, commit: Oid, path: &str) -> u32 {
            let text = self.repo.file_at_rev(&commit.hex(), path).unwrap().unwrap();
            let n = text.iter().filter(|&&b| b == b'\n').count();
            (n + usize::from(!text.ends_with(b"\n") && !text.is_empty())) as u32
        }
    }

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dialects")
    }

    fn git(dir: &Path, args: &[&str], date: &str) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("HOME", dir)
            .env("GIT_AUTHOR_NAME", "Fixture")
            .env("GIT_AUTHOR_EMAIL", "fixture@example.com")
            .env("GIT_COMMITTER_NAME", "Fixture")
            .env("GIT_COMMITTER_EMAIL", "fixture@example.com")
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Builds `tests/fixtures/dialects/<dialect>/<name>.yaml`: its commits one after another
    /// (each writing its files over the last one's), then its notes, each checked to read back
    /// byte for byte.
    fn build(dialect: &str, name: &str) -> Built {
        let base = fixtures().join(dialect);
        let text = std::fs::read_to_string(base.join(format!("{name}.yaml"))).unwrap();
        let fixture: Fixture = serde_yaml::from_str(&text).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(
            d,
            &["init", "-q", "-b", "main", "."],
            "2026-01-01T00:00:00Z",
        );
        let mut hexes = Vec::new();
        for c in &fixture.commits {
            for (path, from) in &c.files {
                let to = d.join(path);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(base.join(from), &to).unwrap();
            }
            git(d, &["add", "-A"], &c.date);
            git(
                d,
                &["commit", "-q", "--allow-empty", "-m", &c.message],
                &c.date,
            );
            hexes.push(git(d, &["rev-parse", "HEAD"], &c.date));
        }
        for (c, hex) in fixture.commits.iter().zip(&hexes) {
            for (notes_ref, from) in &c.notes {
                let file = base.join(from);
                // `-C <blob>` keeps the note's bytes as they are (`-m`/`-F` would clean them up).
                let blob = git(
                    d,
                    &["hash-object", "-w", file.to_str().unwrap()],
                    "2026-01-01T00:00:00Z",
                );
                git(
                    d,
                    &["notes", "--ref", notes_ref, "add", "-C", &blob, hex],
                    &c.date,
                );
            }
        }
        let repo = Repo::discover(d).unwrap();
        let mut by_label = HashMap::new();
        let mut range = Vec::new();
        for (c, hex) in fixture.commits.iter().zip(&hexes) {
            let id = repo.resolve_commit(hex).unwrap();
            for (notes_ref, from) in &c.notes {
                assert_eq!(
                    repo.foreign_note(notes_ref, id).unwrap().unwrap(),
                    std::fs::read(base.join(from)).unwrap(),
                    "the {notes_ref} note on {} reads back as written",
                    c.label
                );
            }
            by_label.insert(c.label.clone(), id);
            if c.in_range {
                range.push(id);
            }
        }
        Built {
            dir,
            repo,
            by_label,
            range,
        }
    }

    fn l(start: u32, end: u32) -> Lines {
        Lines { start, end }
    }

    /// The claims on `commit`, in the order read.
    fn on(ev: &Evidence, commit: Oid) -> Vec<&Claim> {
        ev.claims.iter().filter(|c| c.commit == commit).collect()
    }

    fn why(ev: &Evidence) -> Vec<(String, String)> {
        ev.skipped
            .iter()
            .map(|s| (s.at.clone(), s.why.clone()))
            .collect()
    }

    /// Every claim's lines lie inside its file at its commit: the fixture kept them valid.
    fn lines_exist(b: &Built, ev: &Evidence) {
        for c in &ev.claims {
            let path = c.path.as_deref().unwrap();
            let n = b.line_count(c.commit, path);
            for r in &c.lines {
                assert!(
                    r.end <= n,
                    "{}: {path} has {n} lines, the claim names {}-{}",
                    c.source,
                    r.start,
                    r.end
                );
            }
        }
    }

    #[test]
    fn git_ai_real_notes() {
        let b = build("git-ai", "git-ai");
        let mut ev = Evidence::default();
        git_ai::read(&b.repo, &b.range, &mut ev).unwrap();
        lines_exist(&b, &ev);
        assert_eq!(ev.claims.len(), 12);
        assert!(ev.claims.iter().all(|c| c.dialect == Dialect::GitAi));
        assert_eq!(
            why(&ev),
            [(
                "refs/notes/ai".to_string(),
                "1 note on commits outside the range".to_string()
            )]
        );

        // 5dba92c: the bare word `human`, and a 7-hex legacy key (35eb637) the prompts map does
        // not have (it holds dea3b6d): still the agent's lines, nothing more known. The same note
        // is in refs/notes/ai-remote/origin: read once, from the local ref.
        let c = on(&ev, b.at("5dba92c"));
        assert_eq!(c.len(), 3);
        assert_eq!(
            c[0].source,
            format!("git-ai note on {}", b.at("5dba92c").short())
        );
        assert_eq!(
            (c[0].path.as_deref(), c[0].author, &c[0].lines[..]),
            (
                Some("src/commands/hooks/push_hooks.rs"),
                Author::Human,
                &[l(7, 7)][..]
            )
        );
        assert_eq!(
            (c[1].author, &c[1].lines[..], c[1].agent.as_deref()),
            (Author::Agent, &[l(3, 3), l(18, 18)][..], None)
        );
        assert_eq!(c[2].path.as_deref(), Some("src/commands/git_handlers.rs"));
        assert_eq!(c[2].lines, [l(177, 177)]);

        // 0030990: a resolved 7-hex key whose prompt inlined its transcript (removed from the
        // fixture; the reader keeps none of it either).
        let c = on(&ev, b.at("0030990"));
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].path.as_deref(), Some("docs/reference.mdx"));
        assert_eq!(c[0].lines, [l(43, 48), l(52, 52), l(57, 57)]);
        assert_eq!(
            (
                c[1].agent.as_deref(),
                c[1].model.as_deref(),
                c[1].session.as_deref()
            ),
            (
                Some("cursor"),
                Some("gpt-5.1"),
                Some("d13537e7-a8cd-49ba-82f3-3b4c2eeb0f71")
            )
        );
        assert_eq!(
            c[1].lines,
            [
                l(67, 67),
                l(131, 148),
                l(150, 150),
                l(152, 193),
                l(195, 195),
                l(197, 207)
            ]
        );
        assert_eq!(
            (c[2].author, &c[2].lines[..]),
            (Author::Human, &[l(68, 68), l(151, 151), l(196, 196)][..])
        );
        assert_eq!(
            (c[1].transcript.as_ref(), c[1].trace.as_ref()),
            (None, None)
        );

        // 9edb8c1: a 16-hex legacy prompt with its transcript's URL, and an `h_` human.
        let c = on(&ev, b.at("9edb8c1"));
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].lines, [l(152, 152), l(156, 158)]);
        assert_eq!(c[0].model.as_deref(), Some("claude-opus-4-7"));
        assert_eq!(
            c[0].transcript,
            Some(Transcript::Url(
                "https://usegitai.com/cas/2578c2888cca21451a6cf183571e96ed67f5ba1f82681f3ac97de424dee3389a"
                    .into()
            ))
        );
        assert_eq!(
            (c[1].author, &c[1].lines[..]),
            (Author::Human, &[l(88, 88), l(154, 154)][..])
        );

        // a467fc6 is outside the range: nothing read from it.
        assert!(on(&ev, b.at("a467fc6")).is_empty());

        // 02be748: the bare word `ai_agent`, and a session key with its trace.
        let c = on(&ev, b.at("02be748"));
        assert_eq!(
            (
                c[0].path.as_deref(),
                c[0].author,
                c[0].agent.as_deref(),
                &c[0].lines[..]
            ),
            (
                Some("agent-support/vscode/package-lock.json"),
                Author::Agent,
                None,
                &[l(3, 3), l(9, 9)][..]
            )
        );
        assert_eq!(
            (
                c[1].agent.as_deref(),
                c[1].model.as_deref(),
                c[1].session.as_deref(),
                c[1].trace.as_deref()
            ),
            (
                Some("claude"),
                Some("claude-opus-4-6"),
                Some("518eacf9-30f9-4849-b452-42cf98d706e5"),
                Some("t_a1f7a658162ab1")
            )
        );

        // 4d42f5d: a known human's line inside the agent's session.
        let c = on(&ev, b.at("4d42f5d"));
        assert_eq!(
            (c[0].author, &c[0].lines[..]),
            (Author::Human, &[l(5, 5)][..])
        );
        assert_eq!(
            (c[1].author, &c[1].lines[..], c[1].trace.as_deref()),
            (
                Author::Agent,
                &[l(1, 4), l(6, 16)][..],
                Some("t_d53cd1b8820cec")
            )
        );
        assert_eq!(
            c[1].session.as_deref(),
            Some("52faaf7a-10cf-40f8-98a8-fcc7f4f083b2")
        );

        // What the claims say of 4d42f5d's AGENTS.md line 5, as a caller asks it.
        let about = ev.about(b.at("4d42f5d"), "AGENTS.md", 5);
        assert_eq!(about.len(), 1);
        assert_eq!(about[0].author, Author::Human);
    }

    #[test]
    fn git_ai_reads_the_remote_copy_when_the_local_ref_lacks_the_note() {
        let b = build("git-ai", "git-ai");
        b.git(&["notes", "--ref", "ai", "remove", &b.at("5dba92c").hex()]);
        let mut ev = Evidence::default();
        git_ai::read(&b.repo, &b.range, &mut ev).unwrap();
        let c = on(&ev, b.at("5dba92c"));
        assert_eq!(c.len(), 3);
        assert_eq!(
            c[0].source,
            format!(
                "git-ai note on {} (refs/notes/ai-remote/origin)",
                b.at("5dba92c").short()
            )
        );
        assert_eq!(ev.claims.len(), 12);
    }

    #[test]
    fn git_ai_notes_over_the_cap_are_skipped_not_read() {
        let b = build("git-ai", "git-ai");
        let mut ev = Evidence::default();
        git_ai::read_capped(&b.repo, &b.range, &mut ev, 700).unwrap();
        // 9edb8c1's note is 774 bytes; 5dba92c's 695, 0030990's 702, 02be748's 558, 4d42f5d's 606.
        assert!(on(&ev, b.at("9edb8c1")).is_empty());
        assert!(on(&ev, b.at("0030990")).is_empty());
        assert_eq!(ev.claims.len(), 7);
        let w = why(&ev);
        assert_eq!(w.len(), 3);
        assert_eq!(
            w[0],
            (
                format!("git-ai note on {}", b.at("0030990").short()),
                "the note is 702 bytes, over the 700 bytes a note may take; not read".to_string()
            )
        );
        assert_eq!(
            w[1].0,
            format!("git-ai note on {}", b.at("9edb8c1").short())
        );
    }

    #[test]
    fn git_ai_third_party_notes() {
        let b = build("git-ai", "git-notes-bot");
        let mut ev = Evidence::default();
        git_ai::read(&b.repo, &b.range, &mut ev).unwrap();
        lines_exist(&b, &ev);
        // 72b0531 carries another tool's prose in refs/notes/ai; 679c9ba an empty log.
        assert_eq!(
            why(&ev),
            [(
                format!("git-ai note on {}", b.at("72b0531").short()),
                "not a git-ai note (no `---` line before the metadata)".to_string()
            )]
        );
        assert_eq!(ev.claims.len(), 1);
        let c = &ev.claims[0];
        assert_eq!(c.commit, b.at("2842a56"));
        assert_eq!(c.path.as_deref(), Some("amir.txt"));
        assert_eq!(c.lines, [l(1, 8), l(10, 11)]);
        assert_eq!(
            (c.agent.as_deref(), c.model.as_deref(), c.session.as_deref()),
            (
                Some("cursor"),
                Some("claude-4.5-sonnet-thinking"),
                Some("f9dc1657-d8be-46ec-991e-50f33af4cc48")
            )
        );
    }

    #[test]
    fn whogitit_real_notes() {
        let b = build("whogitit", "whogitit");
        let mut ev = Evidence::default();
        whogitit::read(&b.repo, &b.range, &mut ev).unwrap();
        lines_exist(&b, &ev);
        assert_eq!(
            why(&ev),
            [(
                "refs/notes/ai-blame".to_string(),
                "1 note on commits outside the range".to_string()
            )]
        );
        assert_eq!(ev.claims.len(), 8);

        // 00ac835 (under the earlier name, refs/notes/ai-blame; version 2): 177 Original lines
        // claim nothing; the agent's, the person's and the person-changed agent's runs do.
        let c = on(&ev, b.at("00ac835"));
        assert_eq!(c.len(), 3);
        assert_eq!(
            c[0].source,
            format!(
                "whogitit note on {} (refs/notes/ai-blame)",
                b.at("00ac835").short()
            )
        );
        let edit = Some("371773dc-ddff-4b51-9230-cc0ea33f74aa");
        assert_eq!((c[0].author, c[0].trace.as_deref()), (Author::Agent, edit));
        assert_eq!(
            c[0].lines,
            [
                l(143, 143),
                l(154, 162),
                l(183, 183),
                l(186, 187),
                l(190, 191),
                l(196, 199),
                l(201, 206),
                l(208, 216),
                l(218, 218),
                l(221, 226),
                l(228, 234),
                l(236, 236)
            ]
        );
        assert_eq!(
            (c[1].author, c[1].trace.as_deref(), &c[1].lines[..]),
            (
                Author::Human,
                None,
                &[
                    l(188, 188),
                    l(192, 195),
                    l(200, 200),
                    l(207, 207),
                    l(219, 220),
                    l(237, 238),
                    l(240, 240)
                ][..]
            )
        );
        assert_eq!(
            (c[2].author, c[2].trace.as_deref(), &c[2].lines[..]),
            (Author::AgentModified, edit, &[l(217, 217), l(235, 235)][..])
        );
        assert_eq!(
            (c[0].session.as_deref(), c[0].model.as_deref()),
            (
                Some("55f1ee61-f0b2-4536-913d-5a9528c07033"),
                Some("claude-opus-4-5-20251101")
            )
        );

        // b9b3213: a real note with no files.
        assert!(on(&ev, b.at("b9b3213")).is_empty());

        // a006b8c (version 3, two of its files kept).
        let c = on(&ev, b.at("a006b8c"));
        assert_eq!(c.len(), 4);
        assert_eq!(
            c[0].source,
            format!("whogitit note on {}", b.at("a006b8c").short())
        );
        assert_eq!(c[0].path.as_deref(), Some("src/cli/retention.rs"));
        assert_eq!(
            c[0].lines,
            [l(1, 77), l(80, 122), l(125, 179), l(182, 250), l(253, 323)]
        );
        assert_eq!(
            c[1].lines,
            [l(78, 78), l(123, 124), l(180, 180), l(251, 252)]
        );
        assert_eq!(
            (c[2].author, &c[2].lines[..]),
            (Author::AgentModified, &[l(79, 79), l(181, 181)][..])
        );
        assert_eq!(
            (c[3].path.as_deref(), c[3].trace.as_deref(), &c[3].lines[..]),
            (
                Some("src/storage/mod.rs"),
                Some("25819fb8-cf68-4662-94d9-14618795bead"),
                &[l(1, 1), l(5, 5)][..]
            )
        );

        // 4cde281 (version 2): one AI line among 70 Original ones.
        let c = on(&ev, b.at("4cde281"));
        assert_eq!(
            (c.len(), &c[0].lines[..], c[0].session.as_deref()),
            (
                1,
                &[l(16, 16)][..],
                Some("e300e6a2-32eb-46d2-a1e4-9de1c2647aab")
            )
        );

        // The notes store each line's content: it is the file's line at the commit, so the line
        // numbers are read as whogitit meant them.
        for (label, notes_ref) in [
            ("00ac835", "refs/notes/ai-blame"),
            ("a006b8c", "refs/notes/whogitit"),
            ("4cde281", "refs/notes/whogitit"),
        ] {
            let id = b.at(label);
            let note: serde_json::Value =
                serde_json::from_slice(&b.repo.foreign_note(notes_ref, id).unwrap().unwrap())
                    .unwrap();
            for f in note["files"].as_array().unwrap() {
                let path = f["path"].as_str().unwrap();
                for line in f["lines"].as_array().unwrap() {
                    let n = line["line_number"].as_u64().unwrap() as u32;
                    assert_eq!(
                        b.line(id, path, n),
                        line["content"].as_str().unwrap(),
                        "{label} {path}:{n}"
                    );
                }
            }
        }
        // And none of it, nor any prompt, is in a claim.
        let all = serde_json::to_string(&ev).unwrap();
        assert!(!all.contains("prompt text removed"));
        assert!(!all.contains("pub fn"));
    }

    #[test]
    fn agentblame_real_notes_v1_v2() {
        let b = build("agentblame", "agentblame");
        let mut ev = Evidence::default();
        agentblame::read(&b.repo, &b.range, &mut ev).unwrap();
        lines_exist(&b, &ev);
        // The analytics note on the root commit (refs/notes/agentblame-analytics) is not read.
        assert!(on(&ev, b.at("59e53c5")).is_empty());
        assert_eq!(
            why(&ev),
            [(
                "refs/notes/agentblame".to_string(),
                "1 note on commits outside the range".to_string()
            )]
        );
        assert_eq!(ev.claims.len(), 10);
        assert!(ev.claims.iter().all(|c| c.author == Author::Agent));

        // 2df914f, version 1 (snake_case).
        let c = on(&ev, b.at("2df914f"));
        assert_eq!(c.len(), 2);
        assert_eq!(
            (
                c[0].path.as_deref(),
                &c[0].lines[..],
                c[0].agent.as_deref(),
                c[0].model.as_deref()
            ),
            (
                Some("packages/cli/package.json"),
                &[l(3, 3)][..],
                Some("claude_code"),
                Some("claude")
            )
        );
        assert_eq!(
            (c[1].path.as_deref(), &c[1].lines[..]),
            (Some("README.md"), &[l(163, 163)][..])
        );

        // bea1727, version 2 (camelCase).
        let c = on(&ev, b.at("bea1727"));
        assert_eq!(c.len(), 8);
        assert_eq!(
            c[0].path.as_deref(),
            Some(".github/workflows/agentblame.yml")
        );
        assert_eq!(c[0].lines, [l(26, 29)]);
        assert_eq!(c[0].agent.as_deref(), Some("claudeCode"));
        assert_eq!(c[6].lines, [l(122, 130)]);
        // hooks.ts 405-408 starts with the same line as agentblame.yml 26-29: the same hash.
        assert_eq!(c[7].path.as_deref(), Some("packages/cli/src/lib/hooks.ts"));
        assert_eq!(c[7].content_hash, c[0].content_hash);
        assert!(
            c[0].content_hash
                .as_deref()
                .unwrap()
                .starts_with("sha256:0c1badd2cf2e8")
        );

        // Each range's `contentHash` is the SHA-256 of its first line as it is at the commit:
        // the line numbers are read as AgentBlame meant them.
        for c in &ev.claims {
            let path = c.path.as_deref().unwrap();
            let first = b.line(c.commit, path, c.lines[0].start);
            let digest: String = Sha256::digest(first.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let hash = format!("sha256:{digest}");
            assert_eq!(
                c.content_hash.as_deref(),
                Some(hash.as_str()),
                "{} {path}:{}",
                c.source,
                c.lines[0].start
            );
        }
    }

    #[test]
    fn agentblame_real_notes_v3() {
        let b = build("agentblame", "pytest-in-docker");
        let mut ev = Evidence::default();
        agentblame::read(&b.repo, &b.range, &mut ev).unwrap();
        lines_exist(&b, &ev);
        assert_eq!(why(&ev), []);
        assert_eq!(ev.claims.len(), 12);

        let c = on(&ev, b.at("04d344a"));
        assert_eq!(c.len(), 1);
        assert_eq!(
            (
                c[0].path.as_deref(),
                &c[0].lines[..],
                c[0].agent.as_deref(),
                c[0].model.as_deref(),
                c[0].session.as_deref()
            ),
            (
                Some("README.md"),
                &[l(123, 157), l(212, 221)][..],
                Some("claude"),
                Some("claude-opus-4-6"),
                Some("16408bad7abecf14")
            )
        );

        // 1568f20, a squash merge carrying four sessions' lines, written out of order and with
        // repeats (`39,6,52,54-63,53,65,70,52,83`): read sorted and joined.
        let c = on(&ev, b.at("1568f20"));
        assert_eq!(c.len(), 11);
        let find = |path: &str, session: &str| {
            c.iter()
                .find(|x| x.path.as_deref() == Some(path) && x.session.as_deref() == Some(session))
                .unwrap_or_else(|| panic!("{path} {session}"))
        };
        assert_eq!(
            find("pytest_in_docker/_types.py", "16408bad7abecf14").lines,
            [
                l(6, 6),
                l(39, 39),
                l(52, 63),
                l(65, 65),
                l(70, 70),
                l(83, 83)
            ]
        );
        assert_eq!(
            find("pytest_in_docker/_container.py", "16408bad7abecf14").lines,
            [
                l(13, 14),
                l(18, 18),
                l(53, 58),
                l(64, 69),
                l(71, 74),
                l(78, 79),
                l(103, 103)
            ]
        );
        assert_eq!(
            find("README.md", "16408bad7abecf14").lines,
            [l(16, 16), l(214, 214)]
        );
        assert_eq!(
            find("tests/test_decorator_factory.py", "f4b2f0035aa77229").lines,
            [l(2, 2), l(5, 5)]
        );
        assert_eq!(
            find("tests/test_decorator_factory.py", "17e4cd412803da84").lines,
            [l(1, 1)]
        );
        let all = serde_json::to_string(&ev).unwrap();
        assert!(!all.contains("prompt text removed"));
    }

    /// The figures for whole real repositories, run by hand:
    /// `SAGE_DIALECT_MIRRORS=/path/a.git:/path/b.git cargo test --lib real_mirrors -- --ignored --nocapture`.
    /// For each repository and reader, twice: over every commit the repository has
    /// (`git rev-list --all`), and over every commit its notes refs name (some snapshots have
    /// notes on commits they lack; the notes are read all the same).
    #[test]
    #[ignore = "needs real repositories: set SAGE_DIALECT_MIRRORS"]
    fn real_mirrors() {
        type Reader = fn(&Repo, &[Oid], &mut Evidence) -> crate::error::Result<()>;
        let readers: [(&str, Reader, &[&str]); 3] = [
            (
                "git-ai",
                git_ai::read,
                &[git_ai::REF, "refs/notes/ai-remote/origin"],
            ),
            (
                "whogitit",
                whogitit::read,
                &[whogitit::REF, whogitit::OLD_REF],
            ),
            ("agentblame", agentblame::read, &[agentblame::REF]),
        ];
        let digits = regex::Regex::new(r"[0-9a-f]{7}\b|\d+(\.\d+)?").unwrap();
        let Ok(list) = std::env::var("SAGE_DIALECT_MIRRORS") else {
            return;
        };
        for dir in list.split(':').filter(|d| !d.is_empty()) {
            let repo = Repo::discover(Path::new(dir)).unwrap();
            let all = git(
                Path::new(dir),
                &["rev-list", "--all"],
                "2026-01-01T00:00:00Z",
            );
            let reachable: Vec<Oid> = all
                .lines()
                .map(|h| repo.resolve_commit(h).unwrap())
                .collect();
            for (name, read, refs) in readers {
                let mut noted: Vec<Oid> = Vec::new();
                for r in refs {
                    noted.extend(repo.foreign_notes(r).unwrap().into_iter().map(|(c, _)| c));
                }
                noted.sort();
                noted.dedup();
                if noted.is_empty() {
                    continue;
                }
                for (what, range) in [("reachable commits", &reachable), ("noted commits", &noted)]
                {
                    let mut ev = Evidence::default();
                    let start = std::time::Instant::now();
                    read(&repo, range, &mut ev).unwrap();
                    let took = start.elapsed();
                    let set: std::collections::HashSet<&Oid> = range.iter().collect();
                    let in_range = noted.iter().filter(|c| set.contains(c)).count();
                    let mut authors: BTreeMap<String, usize> = BTreeMap::new();
                    for c in &ev.claims {
                        *authors.entry(format!("{:?}", c.author)).or_default() += 1;
                    }
                    let mut whys: BTreeMap<String, (usize, String)> = BTreeMap::new();
                    for s in &ev.skipped {
                        let key = digits.replace_all(&s.why, "N").into_owned();
                        let e = whys.entry(key).or_insert((0, s.why.clone()));
                        e.0 += 1;
                    }
                    let with_transcript =
                        ev.claims.iter().filter(|c| c.transcript.is_some()).count();
                    println!(
                        "{dir} {name} over {} {what} ({:.2?}): {in_range} notes in range, {} claims {authors:?}, {with_transcript} with a transcript link, {} skipped",
                        range.len(),
                        took,
                        ev.claims.len(),
                        ev.skipped.len()
                    );
                    for (why, (n, example)) in whys {
                        println!("    {n} × {why}   (e.g. {example})");
                    }
                }
            }
        }
    }
}
