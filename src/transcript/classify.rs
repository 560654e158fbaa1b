//! Turn kinds from what a turn does (docs/method.md#turns-and-kinds), the one rule for every
//! format: a turn that edits (a file change, an editing tool, a shell command that writes a file,
//! or an edit written in its text) is implementation; one that runs tests or commands, or reports
//! their results, is verification; one that judges the change, or inspects files after an edit, is
//! review; setup and bookkeeping alone is administrative; anything else is planning. Explicit kinds
//! in a log always win.

use std::sync::OnceLock;

use regex::Regex;

use super::turn::{Turn, TurnKind};

/// Tool names that change files, across the formats we read.
const EDIT_TOOLS: &[&str] = &[
    "edit",
    "multiedit",
    "write",
    "notebookedit",
    "apply_patch",
    "replace",
    "write_file",
    "create",
    "insert",
    "edit_file",
    "search_replace",
    "str_replace",
    "create_file",
    "delete_file",
    "strreplace",
    "replace_string_in_file",
    "multi_replace_string_in_file",
    "insert_edit_into_file",
    "edit_notebook",
    "write_to_file",
    "copilot_createfile",
    "copilot_replacestring",
    "copilot_multireplacestring",
    "copilot_insertedit",
    "copilot_applypatch",
];

/// Tool names that run shell commands.
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "exec_command",
    "run_shell_command",
    "execute_bash",
    "run",
    "cmdrun",
    "local_shell",
    "terminal",
    "run_terminal_cmd",
    "run_in_terminal",
    "execute_command",
    "run_command",
    "run_terminal_command",
];

/// Tools that only keep books (plans, todo lists, handshakes).
const BOOKKEEPING_TOOLS: &[&str] = &[
    "todowrite",
    "todoread",
    "update_plan",
    "exitplanmode",
    "think",
    "todo_write",
    "create_plan",
    "manage_todo_list",
    "finish",
    "attempt_completion",
    "taskcreate",
    "taskupdate",
    "tasklist",
    "taskget",
    "update_topic",
];

/// Tools that only read (files, searches, listings): inspection, not change.
const READ_TOOLS: &[&str] = &[
    "read",
    "read_file",
    "view",
    "cat",
    "grep",
    "glob",
    "ls",
    "list_dir",
    "list_directory",
    "codebase_search",
    "glob_file_search",
    "grep_search",
    "file_search",
    "search_file_content",
    "ripgrep_search",
    "ripgrep_raw_search",
    "semantic_search_full",
];

fn tests_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)(\bpytest\b|py\.test|-m\s+unittest|\btox\b|\bnox\b|cargo\s+(nextest|test)|go\s+test|(npm|yarn|pnpm)\s+(run\s+)?test|\bjest\b|\bvitest\b|\bmocha\b|\brspec\b|make\s+(test|check)|mvn\s+(test|verify)|gradlew?\s+test|\bphpunit\b|\bctest\b|manage\.py\s+test|run_?tests|runtests)",
        )
        .expect("valid regex")
    })
}

fn admin_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^\s*(pip3?\s+install|uv\s+(pip|add|sync|lock)|poetry\s+(install|add|lock)|(npm|pnpm|bun)\s+(i|install|ci|add|update)\b|yarn(\s+(add|install))?\s*$|yarn\s+(add|install)\b|apt(-get)?\s|brew\s|cargo\s+(build|fmt|check|add|update)|go\s+(mod|get)\b|git\s+(-C\s+\S+\s+)?(status|add|commit|log|show|checkout|switch|branch|push|pull|fetch|stash|config|restore|rm|mv|tag|remote|rev-parse|ls-remote)|gh\s+(pr\s+(create|merge|edit|close|comment|ready)|auth|repo\s+(create|fork|clone)|run\s+(rerun|cancel))\b|gh\s+api\b.*(-X\s*(POST|PATCH|PUT|DELETE)|--method\s+(POST|PATCH|PUT|DELETE)|-f\s+body=|mutation)|cd\b|pwd\b|mkdir\b|mv\b|cp\b|rm\b|touch\b|which\b|echo\b|source\b|export\b|sleep\b|pkill\b|kill\b|black\b|isort\b|ruff\s+format|prettier\b|gofmt\b|rustfmt\b|chmod\b|python3?\s+-m\s+(venv|pip)|conda\s|(npm|pnpm|bun|yarn)\s+(run\s+)?(format|fmt|lint:fix|lint\s+--fix)\b|npx\s+prettier\b|biome\s+(format|check\s+--write)|(mise|make|just|task)\s+(run\s+)?(fmt|format|tidy)\b|(npm|pnpm|yarn|bun)\s+audit\s+fix\b|\S+\s+--(help|version)\s*$|go\s+env\b)",
        )
        .expect("valid regex")
    })
}

/// A command that writes a file: a redirection to a path, `tee`, in-place editors, patches.
fn shell_write_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?:^|[^0-9&>])>>?\s*[A-Za-z0-9_./~-]*[A-Za-z0-9_~-]\.?[A-Za-z0-9]*\b|\btee\s+(-a\s+)?[A-Za-z0-9_./~-]+|\bsed\s+(-[a-zA-Z]*\s+)*-i|\bperl\s+-[a-z]*i|\bpatch\s+(-p\d\s+)?|\bgit\s+apply\b",
        )
        .expect("valid regex")
    })
}

/// A command that only reads (files, searches, listings, differences).
fn read_command_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^\s*(cat|head|tail|less|more|nl|wc|rg|grep|egrep|ag|find|fd|tree|stat|file|bat|jq|awk|sed\s+-n|git\s+(-C\s+\S+\s+)?(grep|blame|ls-files|diff|show|log)|for\s+\w+\s+in\b|do\b|done\b|ls|dir|gh\s+(pr\s+(list|view|diff|checks)|api|issue\s+(list|view)|run\s+(list|view))|go\s+env|\S+\s+--help)\b",
        )
        .expect("valid regex")
    })
}

/// A command that shows the changes made (`git diff`, `git show`): checking the diff.
fn shows_diff(cmd: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\bgit\s+(-C\s+\S+\s+)?(diff|show)\b").expect("valid regex"))
        .is_match(cmd)
        && !cmd.contains("--stat")
        && !cmd.contains("--name-only")
}

/// Text that reports running tests or commands, or their results.
fn reports_run_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(all\s+)?(the\s+)?(\d+\s+)?(unit\s+|integration\s+)?tests?\s+(now\s+)?(pass(es|ed)?|are\s+(passing|green)|succeed(ed)?|fail(s|ed)?)\b|\b\d+\s+(passed|failed)\b|\b(ran|run(ning)?|executed?|executing)\s+(the\s+)?(test(s|\s+suite)?|pytest|unit\s+tests|npm\s+test|cargo\s+test|linter|build)\b|\bbuild\s+(succeeded|passes|passed|failed)\b|\btests?\s+are\s+green\b|^\s*(\$|>)\s*(pytest|npm|cargo|go|python|make)\b",
        )
        .expect("valid regex")
    })
}

/// Text that judges the change made.
fn judges_change_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)\b(review(ed|ing)?\s+(the|my|your|this)|looks\s+(good|correct|right|complete)|lgtm|(the|this|my)\s+(fix|change|changes|implementation|patch|update)\s+(is|are|looks|should\s+be)\s+(now\s+)?(complete|correct|done|good|in\s+place|working)|i('ve|\s+have)\s+(checked|double-checked|verified|confirmed)|(is|are)\s+now\s+(fixed|resolved|complete|secure|protected|handled)|should\s+now\s+(work|be\s+(fixed|resolved|secure))|summary\s+of\s+(the\s+)?changes)",
        )
        .expect("valid regex")
    })
}

/// A tool name as the tables spell it: lower case, without the version suffix newer Cursor
/// builds add (`edit_file_v2`, `run_terminal_command_v2`).
fn norm(name: &str) -> String {
    let n = name.trim().to_ascii_lowercase();
    match n.rsplit_once("_v") {
        Some((base, v))
            if !base.is_empty() && !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) =>
        {
            base.to_string()
        }
        _ => n,
    }
}

/// Whether a tool runs shell commands (by its name).
pub(crate) fn is_shell_tool(name: &str) -> bool {
    SHELL_TOOLS.contains(&norm(name).as_str())
}

/// The shell command of a tool call, if it is one.
pub(crate) fn shell_command(name: &str, args: &serde_json::Value) -> Option<String> {
    if !is_shell_tool(name) {
        return None;
    }
    let pick = |v: &serde_json::Value| -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(a) => Some(
                a.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        }
    };
    match args {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Object(o) => ["command", "cmd", "script", "code"]
            .iter()
            .find_map(|k| o.get(*k).and_then(pick)),
        _ => None,
    }
}

/// Whether a tool call changes files (by its name; `str_replace_editor` by its command).
pub(crate) fn is_edit_call(name: &str, args: &serde_json::Value) -> bool {
    let n = norm(name);
    if n == "str_replace_editor" || n == "edit_file_tool" {
        return args
            .get("command")
            .and_then(|c| c.as_str())
            .is_some_and(|c| c != "view");
    }
    EDIT_TOOLS.contains(&n.as_str())
}

pub(crate) fn is_test_command(cmd: &str) -> bool {
    tests_re().is_match(cmd)
}

/// Builds, linters and type checkers: they check that code compiles, not what it does.
fn build_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^\s*((npm|yarn|pnpm|bun)\s+(run\s+)?(build|lint|typecheck|type-check|format)\b|npx\s+(tsc|eslint|prettier)\b|tsc\b|eslint\b|mypy\b|pyright\b|ruff\b|flake8\b|pylint\b|cargo\s+(clippy|build|check)\b|go\s+(build|vet)\b|make\b\s*$|make\s+(build|lint|all)\b|docker\s+compose\s+config\b|gh\s)",
        )
        .expect("valid regex")
    })
}

/// The first part of a command that tries something out: a request sent, a script or the
/// program run with an input. Not a test suite, a build or linter, a read or a filter of one,
/// or bookkeeping (`git commit`, installs).
pub(crate) fn probe_part(cmd: &str) -> Option<String> {
    static FILTERS: OnceLock<Regex> = OnceLock::new();
    let filters = FILTERS.get_or_init(|| {
        Regex::new(r"^\s*(xargs|sort|uniq|cut|tr|diff|column|xxd|od|sleep|true|false|clear|date|env|printenv|whoami|id|uname|set|exit)\b")
            .expect("valid regex")
    });
    commands_of(cmd).into_iter().find(|p| {
        !(admin_re().is_match(p)
            || read_command_re().is_match(p)
            || tests_re().is_match(p)
            || build_re().is_match(p)
            || shell_write_re().is_match(p)
            || filters.is_match(p))
    })
}

/// Whether a command only reads (files, searches, listings) or keeps the books (`git add`,
/// `cd`, installs): inspection, not a run.
pub(crate) fn reads_only(cmd: &str) -> bool {
    commands_of(cmd)
        .iter()
        .all(|p| admin_re().is_match(p) || read_command_re().is_match(p))
}

/// Whether a command reads files (a read among its parts, the rest bookkeeping at most).
fn reads_files(cmd: &str) -> bool {
    let parts = commands_of(cmd);
    parts.iter().any(|p| read_command_re().is_match(p))
        && parts
            .iter()
            .all(|p| admin_re().is_match(p) || read_command_re().is_match(p))
}

/// The commands of a command line without its here-document bodies, each without a
/// `bash -c` wrapper; empty pieces and bare punctuation (`)"` closing a substitution) left out.
fn commands_of(cmd: &str) -> Vec<String> {
    shell_parts(&without_heredocs(cmd))
        .into_iter()
        .map(|p| strip_shell(p.trim()))
        .filter(|p| p.chars().any(char::is_alphanumeric))
        .collect()
}

/// The commands of a command line, split at `&`, `;`, `|` and line ends outside quotes
/// (`curl -d 'a;b' x` is one command).
fn shell_parts(cmd: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quote, mut escaped) = (0, None, false);
    for (i, c) in cmd.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (Some('"'), '"') => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            // `2>&1`, `>&2`, `&>file`: a redirection, not a separator.
            (None, '&') if cmd[..i].ends_with('>') || cmd[i + 1..].starts_with('>') => {}
            (None, '&' | ';' | '|' | '\n') => {
                out.push(&cmd[start..i]);
                start = i + c.len_utf8();
            }
            (None, _) => {}
        }
    }
    out.push(&cmd[start..]);
    out
}

fn is_admin_call(name: &str, args: &serde_json::Value) -> bool {
    if BOOKKEEPING_TOOLS.contains(&norm(name).as_str()) {
        return true;
    }
    // Bookkeeping, with at most reads or filters beside it (`go mod tidy | tail -5`, `git
    // status && git diff --stat`); moving into a folder or setting a variable alone is neither.
    static NEUTRAL: OnceLock<Regex> = OnceLock::new();
    let neutral = NEUTRAL
        .get_or_init(|| Regex::new(r"^\s*(cd|export|source|pwd|set)\b").expect("valid regex"));
    match shell_command(name, args) {
        Some(cmd) => {
            let parts = commands_of(&cmd);
            parts
                .iter()
                .all(|c| admin_re().is_match(c) || read_command_re().is_match(c))
                && parts
                    .iter()
                    .any(|c| admin_re().is_match(c) && !neutral.is_match(c))
        }
        None => false,
    }
}

/// A command without the bodies of its here-documents: the lines of a commit message given
/// as `git commit -m "$(cat <<'EOF' … EOF)"` are text, not commands.
fn without_heredocs(cmd: &str) -> String {
    let mut out = String::new();
    let mut until: Option<String> = None;
    for line in cmd.lines() {
        if let Some(end) = &until {
            if line.trim() == end.as_str() || line.trim_start().starts_with(&format!("{end})")) {
                until = None;
            }
            continue;
        }
        if let Some((_, rest)) = line.split_once("<<") {
            let word: String = rest
                .trim_start_matches('-')
                .trim()
                .trim_matches(['\'', '"'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !word.is_empty() {
                until = Some(word);
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A command without the `bash -lc '…'` wrapper agents put around it.
fn strip_shell(c: &str) -> String {
    let c = c.trim();
    for w in ["bash -lc ", "bash -c ", "sh -c ", "zsh -lc ", "zsh -c "] {
        if let Some(rest) = c.strip_prefix(w) {
            return rest.trim().trim_matches(['\'', '"']).trim().to_string();
        }
    }
    c.to_string()
}

/// The files a shell command writes by redirection or `tee` (`echo x >> notes/a.md`,
/// `pwd > out.txt`), for a file change the log shows only as a command.
pub(crate) fn shell_written_paths(cmd: &str) -> Vec<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r#"(?:^|[^0-9&><])>>?\s*["']?([A-Za-z0-9_./~-]+)|\btee\s+(?:-a\s+)?["']?([A-Za-z0-9_./~-]+)"#)
            .expect("valid regex")
    });
    let mut out: Vec<String> = Vec::new();
    // Heredoc bodies are content, not commands: look at the command lines only.
    let mut in_heredoc: Option<String> = None;
    for line in cmd.lines() {
        if let Some(end) = &in_heredoc {
            if line.trim() == end {
                in_heredoc = None;
            }
            continue;
        }
        if let Some(at) = line.find("<<") {
            let tag = line[at + 2..]
                .trim_start_matches('-')
                .trim()
                .trim_matches(['\'', '"'])
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string();
            if !tag.is_empty() {
                in_heredoc = Some(tag);
            }
        }
        // `sed -i … FILE`, `perl -pi -e … FILE`: the last word names the file.
        for piece in line.split(['&', ';', '|']) {
            let words: Vec<&str> = piece.split_whitespace().collect();
            let in_place = match words.first() {
                Some(&"sed") => words.iter().any(|w| {
                    *w == "--in-place"
                        || (w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
                }),
                Some(&"perl") => words
                    .iter()
                    .any(|w| w.starts_with('-') && w.contains('i') && w.contains('p')),
                _ => false,
            };
            if in_place
                && words.len() >= 3
                && let Some(last) = words.last()
            {
                let p = last
                    .trim_matches(['\'', '"'])
                    .trim_start_matches("./")
                    .to_string();
                if !p.starts_with('-')
                    && p.chars().any(|ch| ch.is_alphanumeric())
                    && !out.contains(&p)
                {
                    out.push(p);
                }
            }
        }
        for c in re.captures_iter(line) {
            if let Some(p) = c.get(1).or_else(|| c.get(2)) {
                let p = p.as_str().trim_start_matches("./").to_string();
                if !p.starts_with("/dev/")
                    && p.chars().any(|ch| ch.is_alphanumeric())
                    && !out.contains(&p)
                {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Files a command writes whole from a heredoc (`cat > app.py <<'EOF' … EOF`, or
/// `cat <<EOF > app.py`): their content is known, so the write can be replayed.
pub(crate) fn heredoc_writes(cmd: &str) -> Vec<(String, String)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r#"^(?:.*(?:&&|;)\s*)?cat\s+(?:>\s*["']?([A-Za-z0-9_./~-]+)["']?\s*<<-?\s*["']?(\w+)["']?|<<-?\s*["']?(\w+)["']?\s*>\s*["']?([A-Za-z0-9_./~-]+)["']?)\s*$"#)
            .expect("valid regex")
    });
    let lines: Vec<&str> = cmd.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(c) = re.captures(lines[i]) else {
            i += 1;
            continue;
        };
        let (path, tag) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
            (Some(p), Some(t), _, _) => (p.as_str(), t.as_str()),
            (_, _, Some(t), Some(p)) => (p.as_str(), t.as_str()),
            _ => {
                i += 1;
                continue;
            }
        };
        let mut body = String::new();
        let mut closed = false;
        i += 1;
        while i < lines.len() {
            if lines[i].trim() == tag {
                closed = true;
                break;
            }
            body.push_str(lines[i]);
            body.push('\n');
            i += 1;
        }
        if closed {
            out.push((path.trim_start_matches("./").to_string(), body));
        }
        i += 1;
    }
    out
}

/// Whether a shell command writes a file (so its turn is an edit).
pub(crate) fn shell_writes(cmd: &str) -> bool {
    cmd.split(['&', ';', '|', '\n'])
        .map(str::trim)
        .any(|c| !c.contains("/dev/null") && shell_write_re().is_match(c))
}

fn is_read_call(name: &str, args: &serde_json::Value) -> bool {
    let n = norm(name);
    READ_TOOLS.contains(&n.as_str())
        || ((n == "str_replace_editor" || n == "edit_file_tool") && !is_edit_call(name, args))
}

/// Tools that wait for or collect the output of a run started earlier (a background test
/// run, a command still going): reporting a run, not starting one.
const COLLECT_TOOLS: &[&str] = &[
    "taskoutput",
    "bashoutput",
    "await_terminal",
    "get_terminal_output",
    "read_lints",
    "get_errors",
];

/// Tools that only poll (an interactive session asked for more output with nothing typed).
fn is_poll_call(name: &str, args: &serde_json::Value) -> bool {
    let n = norm(name);
    (n == "write_stdin"
        && args
            .get("chars")
            .and_then(|c| c.as_str())
            .is_none_or(str::is_empty))
        || n == "step"
        || n == "wait"
}

/// What the task so far has done, for the kind of its next turn: whether it has edited, and
/// which files (their paths, at least two characters past the last separator).
#[derive(Debug, Default, Clone)]
pub(crate) struct TaskSoFar {
    pub edited: bool,
    pub files: Vec<String>,
}

impl TaskSoFar {
    /// Whether a call names one of the files the task changed (its path as the log gives it,
    /// anywhere in the call's arguments: a relative path inside an absolute one too).
    fn reads_changed(&self, c: &super::turn::ToolCall) -> bool {
        fn any_text(v: &serde_json::Value, f: &mut impl FnMut(&str) -> bool) -> bool {
            match v {
                serde_json::Value::String(s) => f(s),
                serde_json::Value::Array(a) => a.iter().any(|x| any_text(x, f)),
                serde_json::Value::Object(o) => o.values().any(|x| any_text(x, f)),
                _ => false,
            }
        }
        !self.files.is_empty()
            && any_text(&c.arguments, &mut |s: &str| {
                let s = if s.contains('\\') {
                    std::borrow::Cow::Owned(s.replace('\\', "/"))
                } else {
                    std::borrow::Cow::Borrowed(s)
                };
                self.files.iter().any(|f| s.contains(f.as_str()))
            })
    }
}

/// Text that announces what comes next rather than looking back at what was done: a short
/// message ("Great! Now let me add the CSRF check.") with a look ahead in it.
fn plans_next(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    text.chars().count() < 300
        && RE
            .get_or_init(|| {
                Regex::new(r"(?i-u)\b(next|now let|let me|let's|i'll|i will|i'm going to|i am going to|we'll|we will|we need to|we should|i need to|i should|moving on|proceed)\b")
                    .expect("valid regex")
            })
            .is_match(text)
}

/// Text that says a check is about to run ("I will run the type checker once more"), where
/// the log keeps the run itself elsewhere.
fn announces_run(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i-u)\b(i will|i'll|let me|going to|now)\s+(re-?)?run\s+(the\s+)?[\w\s`-]{0,40}\b(tests?|build|compil\w*|linter|lint|type[- ]?check\w*|tsc|suite)\b")
            .expect("valid regex")
    })
    .is_match(text)
}

/// Text that looks back at the change as done: a summary, a verdict on it.
fn sums_up(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i-u)\b(summary|summar(y|ise|ize) of|here'?s what (i|we) (did|changed)|changes made|what (was|i) (done|changed)|(all|everything) (is|are) (done|complete|in place|fixed)|(i|we)('ve|\s+have)\s+(now\s+)?(implemented|completed|fixed|updated|added|made|resolved|finished)|done\b)")
            .expect("valid regex")
    })
    .is_match(text)
}

/// Guesses the kind of one turn (docs/method.md#turns-and-kinds: the first line of the table
/// that applies) from what it does and what its task did before it.
pub(crate) fn guess(t: &Turn, task: &TaskSoFar) -> TurnKind {
    let commands: Vec<String> = t
        .tool_calls
        .iter()
        .filter_map(|c| shell_command(&c.name, &c.arguments))
        .collect();
    let text = t.text.trim();
    let edits = !t.file_changes.is_empty()
        || t.tool_calls
            .iter()
            .any(|c| is_edit_call(&c.name, &c.arguments))
        || commands.iter().any(|c| shell_writes(c))
        // An edit written out in the text counts when the turn made no calls, or, in Aider,
        // only suggested commands (`pip install …` beside the files it rewrote): elsewhere a
        // file quoted after a `cat` is what the agent read.
        || ((t.tool_calls.is_empty() || (t.agent == "aider" && commands.len() == t.tool_calls.len()))
            && !super::edits::all_edits(text).is_empty());
    if edits {
        return TurnKind::Implementation;
    }
    if commands.iter().any(|c| is_test_command(c)) {
        return TurnKind::Verification;
    }
    if text.is_empty() && t.tool_calls.is_empty() {
        return TurnKind::Administrative;
    }
    let collects = t
        .tool_calls
        .iter()
        .any(|c| COLLECT_TOOLS.contains(&norm(&c.name).as_str()));
    // Commands that run something (a server started, a request sent, a script, a build);
    // reading with cat, rg or sed -n is inspection, like a read tool, and bookkeeping is not a
    // run.
    let runs = commands
        .iter()
        .any(|c| !reads_only(c) && !commands_of(c).iter().all(|p| admin_re().is_match(p)));
    if runs || collects {
        return TurnKind::Verification;
    }
    let keeps_books = !t.tool_calls.is_empty()
        && t.tool_calls
            .iter()
            .all(|c| is_admin_call(&c.name, &c.arguments) || is_poll_call(&c.name, &c.arguments));
    if task.edited {
        // After an edit of the task: judging the change, or reading what it changed (the files,
        // the diff), is review; so is a closing account of the work.
        let reads_change = t.tool_calls.iter().any(|c| {
            let cmd = shell_command(&c.name, &c.arguments);
            ((is_read_call(&c.name, &c.arguments) || cmd.as_deref().is_some_and(reads_files))
                && task.reads_changed(c))
                || cmd.as_deref().is_some_and(shows_diff)
        });
        let judges = judges_change_re().is_match(text);
        let account = t.tool_calls.is_empty() && !text.is_empty() && !plans_next(text);
        if judges
            || reads_change
            || (account && (sums_up(text) || !reports_run_re().is_match(text)))
        {
            return TurnKind::Review;
        }
    }
    if announces_run(text) {
        return TurnKind::Verification;
    }
    if reports_run_re().is_match(text) {
        return TurnKind::Verification;
    }
    if keeps_books && text.chars().count() < 200 {
        return TurnKind::Administrative;
    }
    if t.tool_calls.is_empty() && waits(text) {
        return TurnKind::Administrative;
    }
    TurnKind::Planning
}

/// A message that only says the agent waits for something running, or echoes a background
/// task's notice.
fn waits(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)^\W*(i('m| am| will)\s+(going to\s+)?wait|waiting for|created at: .*\n.*background task)")
            .expect("valid regex")
    })
    .is_match(text.trim())
}

/// Fills in the kinds of turns the log did not label (`explicit[i]` is the log's label). A
/// task starts at each turn `task_starts` names (the turn after a user message, numbered from
/// 1): what an earlier task edited does not make this one's reading a review.
pub(crate) fn classify(turns: &mut [Turn], explicit: &[Option<TurnKind>], task_starts: &[u32]) {
    let mut task = TaskSoFar::default();
    for (i, t) in turns.iter_mut().enumerate() {
        if task_starts.contains(&(i as u32 + 1)) {
            task = TaskSoFar::default();
        }
        t.kind = explicit
            .get(i)
            .copied()
            .flatten()
            .unwrap_or_else(|| guess(t, &task));
        if t.kind == TurnKind::Implementation {
            task.edited = true;
            let named = t
                .tool_calls
                .iter()
                .filter(|c| is_edit_call(&c.name, &c.arguments))
                .filter_map(|c| {
                    ["file_path", "path", "target_file", "filePath"]
                        .iter()
                        .find_map(|k| c.arguments.get(*k).and_then(|v| v.as_str()))
                });
            for p in t.file_changes.iter().map(|c| c.path.as_str()).chain(named) {
                let path = p.replace('\\', "/");
                let path = path.trim_start_matches("./");
                let base = path.rsplit('/').next().unwrap_or(path);
                if base.len() > 2 && !task.files.iter().any(|f| f == path) {
                    task.files.push(path.to_string());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::turn::{SourceRef, ToolCall};
    use serde_json::json;

    fn turn(text: &str, calls: &[(&str, serde_json::Value)]) -> Turn {
        Turn {
            turn: 1,
            agent: "a".into(),
            kind: TurnKind::Planning,
            text: text.into(),
            reasoning: None,
            reasoning_available: false,
            reasoning_redacted: false,
            tool_calls: calls
                .iter()
                .map(|(n, a)| ToolCall {
                    id: None,
                    name: n.to_string(),
                    arguments: a.clone(),
                    result: None,
                })
                .collect(),
            file_changes: vec![],
            timestamp: None,
            source: SourceRef::line(1),
        }
    }

    fn edited(files: &[&str]) -> TaskSoFar {
        TaskSoFar {
            edited: true,
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn files_written_out_beside_suggested_commands() {
        let text = "Here is the rewritten code:\n\napp.py\n```python\nprint('hi')\n```\n";
        let shell = [("shell", json!({"command": "pip install flask"}))];
        let mut aider = turn(text, &shell);
        aider.agent = "aider".into();
        // Aider's suggested command does not hide the files it wrote out.
        assert_eq!(guess(&aider, &edited(&[])), TurnKind::Implementation);
        // Elsewhere a file shown after a command is what the command printed.
        let read = [("bash", json!({"command": "cat app.py"}))];
        assert_ne!(
            guess(&turn(text, &read), &edited(&[])),
            TurnKind::Implementation
        );
    }

    #[test]
    fn probes_are_commands_that_try_something() {
        let probe = |c: &str| probe_part(c);
        assert_eq!(
            probe("cd /app && curl -X POST -d 'name=a;id' http://localhost/forms").as_deref(),
            Some("curl -X POST -d 'name=a;id' http://localhost/forms")
        );
        assert_eq!(
            probe("bash -lc 'node scripts/verify-rls.mjs'").as_deref(),
            Some("node scripts/verify-rls.mjs")
        );
        for not_one in [
            "pytest -q tests/",
            "npm run build && npx eslint .",
            "cat app.py | grep execute | sort | uniq",
            "find . -name '*.py' | xargs grep -l cursor",
            "git add -A && git commit -m 'fix'",
            "sed 's/None/0o644/' a.py > b.py",
            "pip install requests",
        ] {
            assert_eq!(probe(not_one), None, "{not_one}");
        }
    }

    #[test]
    fn kinds() {
        let mut ts = vec![
            turn("I will check the scheme of the URL before fetching.", &[]),
            turn("", &[("Bash", json!({"command": "pip install requests"}))]),
            turn(
                "Adding the check.",
                &[("Edit", json!({"file_path": "a.py"}))],
            ),
            turn(
                "",
                &[(
                    "Bash",
                    json!({"command": "cd /repo && python -m pytest -q"}),
                )],
            ),
            turn("Tests are green, the fix looks complete.", &[]),
            turn(
                "",
                &[(
                    "str_replace_editor",
                    json!({"command": "view", "path": "a.py"}),
                )],
            ),
            turn("", &[]),
        ];
        let explicit = vec![None; ts.len()];
        classify(&mut ts, &explicit, &[]);
        let kinds: Vec<TurnKind> = ts.iter().map(|t| t.kind).collect();
        use TurnKind::*;
        assert_eq!(
            kinds,
            [
                Planning,
                Administrative,
                Implementation,
                Verification,
                Review,
                Review,
                Administrative
            ]
        );
        // explicit labels win
        classify(&mut ts, &[Some(Review)], &[]);
        assert_eq!(ts[0].kind, Review);
        assert!(is_edit_call(
            "str_replace_editor",
            &json!({"command": "str_replace"})
        ));
        assert_eq!(
            shell_command("exec_command", &json!({"cmd": ["bash", "-lc", "ls"]})).as_deref(),
            Some("bash -lc ls")
        );
    }

    #[test]
    fn bookkeeping_and_commits_with_messages_are_administrative() {
        let commit = "git add -A && git commit -m \"$(cat <<'EOF'\nfix: refuse tokens\n\nrun the tests before merge\nEOF\n)\"";
        assert!(is_admin_call("Bash", &json!({ "command": commit })));
        // a here-document that feeds a program is still that program
        let script = "python3 - <<'EOF'\nimport app\nEOF";
        assert!(!is_admin_call("Bash", &json!({ "command": script })));
        for name in ["TaskUpdate", "update_topic", "todo_write"] {
            assert!(is_admin_call(name, &json!({})), "{name}");
        }
    }

    #[test]
    fn heredocs_are_whole_writes() {
        assert_eq!(
            heredoc_writes("cd /repo && cat > app/x.py <<'EOF'\nx = 1\nEOF"),
            [("app/x.py".to_string(), "x = 1\n".to_string())]
        );
        assert_eq!(
            heredoc_writes("cat > app/x.py <<'EOF'\nx = 1\n\ny = 2\nEOF\npytest"),
            [("app/x.py".to_string(), "x = 1\n\ny = 2\n".to_string())]
        );
        assert_eq!(
            heredoc_writes("cat <<EOF > ./a.txt\nhi\nEOF"),
            [("a.txt".to_string(), "hi\n".to_string())]
        );
        assert!(heredoc_writes("cat > a.txt <<EOF\nnever closed").is_empty());
    }

    #[test]
    fn files_a_command_writes() {
        assert_eq!(
            shell_written_paths("pwd > tool_output.txt"),
            ["tool_output.txt"]
        );
        assert_eq!(
            shell_written_paths("echo -e '# Red' >> docs/color.md && git add docs/color.md"),
            ["docs/color.md"]
        );
        assert_eq!(
            shell_written_paths("cat > app.py <<'EOF'\nx = 1 > 0\nEOF\nls"),
            ["app.py"]
        );
        assert!(shell_written_paths("pytest -q 2>&1 | tee /dev/stderr > /dev/null").is_empty());
        assert_eq!(
            shell_written_paths("make 2>&1 | tee build.log"),
            ["build.log"]
        );
        assert_eq!(
            shell_written_paths("sed -i 's/x/y/' app.py && pytest"),
            ["app.py"]
        );
        assert!(shell_written_paths("sed -n '1,5p' app.py").is_empty());
    }

    /// One table for every format: what a turn does decides its kind.
    #[test]
    fn kinds_from_what_a_turn_does() {
        use TurnKind::*;
        let bash = |c: &str| ("Bash", json!({ "command": c }));
        let cases: Vec<(&str, Turn, bool, TurnKind)> = vec![
            (
                "plan in prose",
                turn("First I'll check how the URL is fetched.", &[]),
                false,
                Planning,
            ),
            (
                "S/R block in text (Aider, Markdown)",
                turn(
                    "app.py\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```",
                    &[],
                ),
                false,
                Implementation,
            ),
            (
                "udiff in text",
                turn(
                    "```diff\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n```",
                    &[],
                ),
                false,
                Implementation,
            ),
            (
                "editing tool (SpecStory, Cursor)",
                turn("", &[("search_replace", json!({"path": "a.ts"}))]),
                false,
                Implementation,
            ),
            (
                "Copilot's replace tool",
                turn("", &[("replace_string_in_file", json!({}))]),
                true,
                Implementation,
            ),
            (
                "shell append to a file (Gemini)",
                turn(
                    "",
                    &[(
                        "run_shell_command",
                        json!({"command": "echo -e '# Red' >> docs/color.md"}),
                    )],
                ),
                true,
                Implementation,
            ),
            (
                "sed -i",
                turn("", &[bash("sed -i 's/a/b/' app.py")]),
                true,
                Implementation,
            ),
            (
                "a redirect to /dev/null writes nothing",
                turn("", &[bash("pytest -q > /dev/null")]),
                true,
                Verification,
            ),
            (
                "test run (any shell tool name)",
                turn("", &[("run_terminal_cmd", json!({"command": "npm test"}))]),
                true,
                Verification,
            ),
            (
                "other command run",
                turn(
                    "Let me try it.",
                    &[bash(
                        "curl -s http://localhost:8000/preview?url=http://127.0.0.1",
                    )],
                ),
                true,
                Verification,
            ),
            (
                "test results reported in text",
                turn("All 12 tests pass now.", &[]),
                false,
                Verification,
            ),
            (
                "judging the change",
                turn(
                    "The fix is complete and the endpoint is now protected.",
                    &[],
                ),
                true,
                Review,
            ),
            (
                "tests green and judged complete",
                turn("Tests are green, the fix looks complete.", &[]),
                true,
                Review,
            ),
            (
                "reading files after an edit",
                turn("", &[("read_file", json!({"path": "a.py"}))]),
                true,
                Review,
            ),
            (
                "reading files before any edit",
                turn("", &[("read_file", json!({"path": "a.py"}))]),
                false,
                Planning,
            ),
            (
                "reading with shell commands (Codex)",
                turn(
                    "",
                    &[(
                        "exec_command",
                        json!({"cmd": ["bash", "-lc", "sed -n '1,200p' app.py"]}),
                    )],
                ),
                false,
                Planning,
            ),
            (
                "searching the changed file after an edit",
                turn("", &[bash("rg -n 'startswith' media/fetcher.py")]),
                true,
                Review,
            ),
            (
                "reading another file after an edit: still looking around",
                turn("", &[("read_file", json!({"path": "b.py"}))]),
                true,
                Planning,
            ),
            (
                "showing the diff after an edit",
                turn("", &[bash("git diff -- media/")]),
                true,
                Review,
            ),
            (
                "a closing account of the work",
                turn(
                    "I've implemented the check in media/fetcher.py and added tests. Summary:\n- refuses private addresses",
                    &[],
                ),
                true,
                Review,
            ),
            (
                "a review that mentions passing tests ran nothing",
                turn(
                    "Review: the change is small and the tests pass. Looks good to me.",
                    &[],
                ),
                true,
                Review,
            ),
            (
                "listing a directory is reading",
                turn("", &[bash("ls -la prisma/")]),
                false,
                Planning,
            ),
            (
                "formatting and installs keep the books, whatever their redirections",
                turn("", &[bash("go mod tidy 2>&1; bun install 2>&1 | tail -5")]),
                true,
                Administrative,
            ),
            (
                "collecting a background run's output reports a run",
                turn("", &[("TaskOutput", json!({"task_id": "b1"}))]),
                true,
                Verification,
            ),
            (
                "a run announced where the log keeps it elsewhere",
                turn(
                    "I will run the TypeScript compiler once more to check the types.",
                    &[],
                ),
                true,
                Verification,
            ),
            (
                "prose after an edit that plans the next step",
                turn("Next I'll update the README.", &[]),
                true,
                Planning,
            ),
            (
                "setup only",
                turn("", &[bash("pip install -r requirements.txt")]),
                false,
                Administrative,
            ),
            (
                "todo list",
                turn("", &[("todo_write", json!({}))]),
                true,
                Administrative,
            ),
            ("nothing", turn("", &[]), true, Administrative),
        ];
        for (what, t, edited_before, want) in cases {
            let task = if edited_before {
                edited(&["a.py", "media/fetcher.py"])
            } else {
                TaskSoFar::default()
            };
            assert_eq!(guess(&t, &task), want, "{what}");
        }
    }
}
