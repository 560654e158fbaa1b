//! L3: the rule score R (docs/method.md#screening) over a file's facts, from editable tables
//! (sources, sinks, guards, weakness patterns). Pure: tables in, facts in, score and breakdown out.
//!
//! R = Σ source weights + Σ sink weights × 1.5 (the file also has a source of weight ≥ 3 and, for
//! a call, input reaches it) × 1.3 (the sink's CWE is the task's) + 10 (the task's weakness
//! pattern remains: a pattern of weaknesses.yaml for its CWE matches, or a sink of that CWE is
//! still there) − 2 per guard category (at most −10), clamped to 0–100; each source, sink and
//! guard counts once per file.

use std::collections::BTreeMap;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::facts::{Arg, ArgKind, Call, Facts, Import, Input};
use crate::error::{Error, Result};

/// A condition on a call's arguments; every given part must hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct When {
    /// Keyword arguments that must be given with one of these values (`*`: any value).
    #[serde(default)]
    pub kwarg: BTreeMap<String, Vec<String>>,
    /// The entry does not apply when one of these keywords has one of these values.
    #[serde(default)]
    pub unless_kwarg: BTreeMap<String, Vec<String>>,
    /// What the first positional argument must be.
    #[serde(default)]
    pub first_arg: Option<ArgIs>,
    /// What the second positional argument must be (`getattr(obj, NAME)`).
    #[serde(default)]
    pub second_arg: Option<ArgIs>,
    /// What at least one argument must be.
    #[serde(default)]
    pub any_arg: Option<ArgIs>,
    /// What the object a method is called on must be (`p` of `p.open()`).
    #[serde(default)]
    pub receiver: Option<ArgIs>,
    /// The call's value is for one of these (a word of a name it is assigned to, given as, or
    /// computed in: `reset_token = random.randint(…)`; or of where the name holding it goes:
    /// the call it is passed to, the object and key it is stored under); words compare whole,
    /// case-insensitive.
    #[serde(default)]
    pub context: Vec<String>,
    /// An argument's text has one of these words (`hashlib.md5(password)`).
    #[serde(default)]
    pub args_mention: Vec<String>,
    #[serde(default)]
    pub min_args: Option<usize>,
    #[serde(default)]
    pub max_args: Option<usize>,
    /// The file must import one of these modules (prefix match).
    #[serde(default)]
    pub requires_import: Vec<String>,
    /// The entry does not apply in a file with a guard of one of these categories (a
    /// confined path is not a traversal).
    #[serde(default)]
    pub unless_guard: Vec<String>,
    /// Regular expressions, one of which must match the code of the outermost function the
    /// call is in (docstrings blanked; the whole module for a call at module level): what the
    /// code around the call shows, such as a URL checked for its scheme alone before it is
    /// fetched.
    #[serde(default)]
    pub function_matches: Vec<String>,
}

/// `high_risk_when`: one set of conditions, or a list of which any one suffices.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum HighRisk {
    One(When),
    Any(Vec<When>),
}

impl HighRisk {
    fn alternatives(&self) -> &[When] {
        match self {
            HighRisk::One(w) => std::slice::from_ref(w),
            HighRisk::Any(ws) => ws,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ArgIs {
    /// Built at run time from pieces (f-string, `%`, `+`, `.format`).
    Formatted,
    /// Not a constant.
    Dynamic,
    /// Derived from a function parameter or an input source.
    Tainted,
    /// Derived from an input source (request data, `input()`, `sys.argv`), not only from a
    /// parameter.
    Input,
    /// A constant.
    Literal,
}

/// One table entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    pub id: String,
    /// Qualified names of calls or attribute chains: `a.b` exactly (or anything under it for
    /// attribute chains), `*.b` any object's member b, `a.*` anything under a.
    #[serde(default, rename = "match")]
    pub names: Vec<String>,
    /// Regular expressions over the file's text, as an alternative to names.
    #[serde(default)]
    pub pattern: Vec<String>,
    /// Names called bare, with no import or definition in the file to qualify them: a
    /// fragment whose imports are elsewhere (`randint(…)`, `check_output(…)`). Sources:
    /// attribute chains whose first name the file never binds (`request.args`).
    #[serde(default)]
    pub bare: Vec<String>,
    /// Sinks: calls of functions whose own name (the last part) has one of these words, for
    /// helpers a project names after what they do (`self._execute_interactive(command)` has
    /// `execute`); words compare whole, case-insensitive. A class (a name in CapWords:
    /// `ShellError(…)`) is made, not run, so it never matches this way. Only with conditions
    /// in `when` that say the rest.
    #[serde(default)]
    pub match_words: Vec<String>,
    /// Names that look alike but are not this entry (`re.search` is not an LDAP search).
    #[serde(default)]
    pub except: Vec<String>,
    /// Regular expressions: a `pattern` match that also matches one of these is not this
    /// entry (`password_prompt = "Password: "` is no credential).
    #[serde(default)]
    pub pattern_except: Vec<String>,
    #[serde(default)]
    pub when: When,
    /// Sinks: when a matching call also meets these conditions, the sink is high-risk on its
    /// own and weighs at least `HIGH_RISK_WEIGHT` (`shell=True` with input).
    #[serde(default)]
    pub high_risk_when: Option<HighRisk>,
    #[serde(default)]
    pub weight: f64,
    /// CWE(s) the entry stands for.
    #[serde(default)]
    pub cwe: Vec<u32>,
    /// Guard category (guards only).
    #[serde(default)]
    pub category: Option<String>,
    /// `parameter`: a function parameter (or a value derived from it) reaches a sink.
    #[serde(default)]
    pub kind: Option<String>,
    /// Guards only: what the call returns is clean (no longer tainted).
    #[serde(default)]
    pub sanitizes: bool,
    /// What the entry means; shown in documentation and explanations.
    pub why: String,
    /// Code the entry must find and code it must leave alone: the table's own tests, run
    /// over the embedded tables by `cargo test`.
    #[serde(default)]
    pub examples: Examples,
}

/// An entry's examples, each a whole Python file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Examples {
    /// Files in which the entry is found.
    #[serde(default)]
    pub hit: Vec<String>,
    /// Files in which it is not, though they look alike.
    #[serde(default)]
    pub miss: Vec<String>,
    /// Sinks: files the screen must flag with no task CWE at the default threshold, this entry
    /// among their sinks: what makes it high-risk on its own.
    #[serde(default)]
    pub flag: Vec<String>,
    /// Sinks: look-alikes in which the entry may be found but that must not be flagged with no
    /// task CWE (a library passing its caller's URL along).
    #[serde(default)]
    pub quiet: Vec<String>,
}

/// The weakness patterns of a CWE: when the task names it and one matches, +10.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Weakness {
    pub cwe: u32,
    pub pattern: Vec<String>,
    pub why: String,
}

/// The tables of one language, compiled.
#[derive(Debug)]
pub(crate) struct Tables {
    pub sources: Vec<Entry>,
    pub sinks: Vec<Entry>,
    pub guards: Vec<Entry>,
    pub weaknesses: Vec<Weakness>,
    patterns: BTreeMap<String, Regex>,
}

fn load<T: for<'de> Deserialize<'de>>(name: &str, text: &str) -> Result<Vec<T>> {
    crate::files::parse_yaml(text, name)
}

impl Tables {
    /// `texts`: (file name for messages, content) of sources, sinks, guards, weaknesses.
    pub(crate) fn parse(
        sources: (&str, &str),
        sinks: (&str, &str),
        guards: (&str, &str),
        weaknesses: (&str, &str),
    ) -> Result<Tables> {
        let sources: Vec<Entry> = load(sources.0, sources.1)?;
        let sinks: Vec<Entry> = load(sinks.0, sinks.1)?;
        let guards: Vec<Entry> = load(guards.0, guards.1)?;
        let weaknesses: Vec<Weakness> = load(weaknesses.0, weaknesses.1)?;
        let mut patterns = BTreeMap::new();
        let all_patterns = sources
            .iter()
            .chain(&sinks)
            .chain(&guards)
            .flat_map(|e| {
                let around = std::iter::once(&e.when)
                    .chain(e.high_risk_when.iter().flat_map(|h| h.alternatives()))
                    .flat_map(|w| &w.function_matches);
                e.pattern
                    .iter()
                    .chain(&e.pattern_except)
                    .chain(around)
                    .map(move |p| (e.id.clone(), p.clone()))
            })
            .chain(weaknesses.iter().flat_map(|w| {
                w.pattern
                    .iter()
                    .map(move |p| (format!("CWE-{}", w.cwe), p.clone()))
            }));
        for (id, p) in all_patterns {
            let re = Regex::new(&format!("(?m){p}")).map_err(|e| {
                Error::input(format!(
                    "screen table entry {id}: pattern {p:?} is not a valid regex: {}",
                    e.to_string().lines().last().unwrap_or("")
                ))
            })?;
            patterns.insert(p, re);
        }
        for g in &guards {
            if g.category.is_none() {
                return Err(Error::input(format!(
                    "{}: guard {} has no category",
                    guards_name(),
                    g.id
                )));
            }
        }
        Ok(Tables {
            sources,
            sinks,
            guards,
            weaknesses,
            patterns,
        })
    }

    /// Whether a call cleans its value (a guard marked `sanitizes`).
    pub(crate) fn is_sanitizer(&self, name: &str) -> bool {
        self.guards
            .iter()
            .any(|e| e.sanitizes && e.names.iter().any(|p| call_matches(p, name)))
    }

    /// Whether a qualified name is an input source (for the taint of the facts); `free`: its
    /// first name is bound nowhere in the file, so the entries' `bare` chains apply too.
    /// A source an outsider controls (weight ≥ `AMPLIFYING_SOURCE`) is `Outside`; a lighter
    /// one (the environment) is `Local`, so that a setting of whoever starts the process does
    /// not make a sink high-risk as request data does.
    pub(crate) fn is_source(&self, name: &str, free: bool, imports: &[Import]) -> Option<Input> {
        self.sources
            .iter()
            .filter(|e| source_matches(e, name, free) && source_applies(e, imports))
            .map(|e| {
                if e.weight >= AMPLIFYING_SOURCE {
                    Input::Outside
                } else {
                    Input::Local
                }
            })
            // an outsider's source wins over a local one of the same name
            .min_by_key(|i| *i != Input::Outside)
    }
}

/// A source entry's names, or its `bare` chains for a free name (`request.args` in a fragment).
fn source_matches(e: &Entry, name: &str, free: bool) -> bool {
    (e.names.iter().any(|p| ref_matches(p, name))
        || (free && e.bare.iter().any(|p| ref_matches(p, name))))
        && !e.except.iter().any(|x| ref_matches(x, name))
}

fn guards_name() -> &'static str {
    "guards.yaml"
}

/// `a.b` matches `a.b` and, for chains, `a.b.c`; `*.b` matches any `x.b`; `a.*` anything under a.
pub(crate) fn ref_matches(pattern: &str, name: &str) -> bool {
    if let Some(member) = pattern.strip_prefix("*.") {
        return name == member
            || name.ends_with(&format!(".{member}"))
            || name.contains(&format!(".{member}."));
    }
    if let Some(prefix) = pattern.strip_suffix(".*") {
        return name.starts_with(&format!("{prefix}."));
    }
    name == pattern || name.starts_with(&format!("{pattern}."))
}

/// Sources at least this heavy (request data, the console, the command line, the network)
/// multiply the file's sinks by 1.5; lighter ones only add their weight.
pub(crate) const AMPLIFYING_SOURCE: f64 = 3.0;

/// A sink this heavy reaches the default threshold by itself: the calibration that lets one
/// sink flag a file without the task's CWE. Only entries whose conditions show the danger
/// itself get it (input reaching a shell, a credential's own format, randomness for a secret).
pub(crate) const HIGH_RISK_WEIGHT: f64 = 15.0;

/// The lower-case words of a name: `resetToken`, `RESET_TOKEN` and `reset-token` are
/// `reset`, `token`.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in name.chars() {
        if !ch.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
        cur.extend(ch.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn mentions(names: &[String], wanted: &[String]) -> bool {
    names.iter().any(|n| has_word(n, wanted))
}

/// Whether one of a name's words is one of `wanted` (whole words, case-insensitive).
fn has_word(name: &str, wanted: &[String]) -> bool {
    words(name)
        .iter()
        .any(|w| wanted.iter().any(|x| x.eq_ignore_ascii_case(w)))
}

/// Calls match exactly (`a.b`), by member (`*.b`) or under a prefix (`a.*`).
pub(crate) fn call_matches(pattern: &str, name: &str) -> bool {
    if let Some(member) = pattern.strip_prefix("*.") {
        return name == member || name.ends_with(&format!(".{member}"));
    }
    if let Some(prefix) = pattern.strip_suffix(".*") {
        return name.starts_with(&format!("{prefix}."));
    }
    name == pattern
}

fn arg_is(a: &Arg, what: ArgIs) -> bool {
    match what {
        ArgIs::Formatted => a.kind == ArgKind::Formatted,
        ArgIs::Dynamic => !matches!(a.kind, ArgKind::Literal | ArgKind::Code),
        ArgIs::Tainted => a.tainted,
        ArgIs::Input => a.from_input,
        ArgIs::Literal => a.kind == ArgKind::Literal,
    }
}

/// A keyword's value against the table's: `*` any, else the same text (quotes ignored) or a
/// qualified form of it (`yaml.SafeLoader` for `SafeLoader`).
fn value_matches(values: &[String], text: &str) -> bool {
    let bare = text.trim().trim_matches(|c| c == '"' || c == '\'');
    values
        .iter()
        .any(|v| v == "*" || v == text || v == bare || text.ends_with(&format!(".{v}")))
}

/// What a condition may read besides the call: the file's facts, its code (docstrings blanked)
/// and the tables' compiled expressions.
struct Around<'a> {
    facts: &'a Facts,
    text: &'a str,
    patterns: &'a BTreeMap<String, Regex>,
    /// Byte offsets where the text's lines start, made the first time a condition needs them.
    line_starts: std::cell::OnceCell<Vec<usize>>,
}

impl Around<'_> {
    /// `function_matches`: the code of the outermost function holding `line` (the module's at
    /// module level) matches one of the expressions; none asked, true.
    fn function_matches(&self, line: u32, expressions: &[String]) -> bool {
        expressions.is_empty() || self.function_match_line(line, expressions).is_some()
    }

    /// The first line of that function one of the expressions matches (None: none asked, or
    /// none matches).
    fn function_match_line(&self, line: u32, expressions: &[String]) -> Option<u32> {
        if expressions.is_empty() {
            return None;
        }
        let (first, last) = self.facts.function_at(line).unwrap_or((1, u32::MAX));
        // the function's lines as one slice of the text, found by their starts, not copied
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        let at = |l: u32| starts.get(l.saturating_sub(1) as usize).copied();
        let from = at(first)?;
        let to = at(last.saturating_add(1)).unwrap_or(self.text.len());
        let code = &self.text[from..to];
        expressions
            .iter()
            .filter_map(|p| self.patterns.get(p)?.find(code))
            .map(|m| first + code[..m.start()].matches('\n').count() as u32)
            .min()
    }
}

fn holds(w: &When, call: &Call, around: &Around) -> bool {
    let facts = around.facts;
    let positional: Vec<&Arg> = call.args.iter().filter(|a| a.name.is_none()).collect();
    let kw = |k: &str| call.args.iter().find(|a| a.name.as_deref() == Some(k));
    w.kwarg
        .iter()
        .all(|(k, vals)| kw(k).is_some_and(|a| value_matches(vals, &a.text)))
        && !w
            .unless_kwarg
            .iter()
            .any(|(k, vals)| kw(k).is_some_and(|a| value_matches(vals, &a.text)))
        && w.first_arg
            .is_none_or(|what| positional.first().is_some_and(|a| arg_is(a, what)))
        && w.second_arg
            .is_none_or(|what| positional.get(1).is_some_and(|a| arg_is(a, what)))
        && w.any_arg
            .is_none_or(|what| call.args.iter().any(|a| arg_is(a, what)))
        && w.receiver
            .is_none_or(|what| call.receiver.as_ref().is_some_and(|a| arg_is(a, what)))
        && (w.context.is_empty() || mentions(&call.context, &w.context))
        && (w.args_mention.is_empty()
            || call
                .args
                .iter()
                .any(|a| mentions(std::slice::from_ref(&a.text), &w.args_mention)))
        && w.min_args.is_none_or(|n| call.args.len() >= n)
        && w.max_args.is_none_or(|n| positional.len() <= n)
        && imports_one_of(facts, &w.requires_import)
        && around.function_matches(call.line, &w.function_matches)
}

/// `requires_import`: the file imports one of the modules (or a submodule); none asked, true.
fn imports_one_of(facts: &Facts, modules: &[String]) -> bool {
    imported(&facts.imports, modules)
}

/// `from a import b` may import the submodule `a.b`, so it counts as importing `a.b` too
/// (`from aiohttp import web` is `aiohttp.web`).
fn imported(imports: &[Import], modules: &[String]) -> bool {
    // `module` is `m` or below it; `module.name` (a name, no dots) is below `m` only when it
    // is `m` itself or `module` already is
    let under = |module: &str, m: &str| {
        module
            .strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    };
    let is_member = |module: &str, name: &str, m: &str| {
        m.strip_prefix(module)
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|rest| rest == name)
    };
    modules.is_empty()
        || modules.iter().any(|m| {
            imports
                .iter()
                .any(|i| under(&i.module, m) || i.names.iter().any(|n| is_member(&i.module, n, m)))
        })
}

/// A source's `requires_import` holds where the file imports one of them, or imports nothing
/// at all: a view cut out of its module (`def get(self): … self.request.body`) has its
/// imports elsewhere, while a module importing an HTTP client and no framework is a client.
fn source_applies(e: &Entry, imports: &[Import]) -> bool {
    imports.is_empty() || imported(imports, &e.when.requires_import)
}

/// Where an entry matched in a file.
#[derive(Debug, Default)]
struct Found {
    /// 1-based, sorted, once each.
    lines: Vec<u32>,
    /// A parameter's value reached it.
    tainted: bool,
    /// A matching call also met `high_risk_when`.
    high_risk: bool,
    /// Where the code around such a call showed it (`function_matches`).
    shown_at: Vec<u32>,
    /// It matched calls (not only names or patterns), and whether input reached one of them.
    by_call: bool,
    input_reached: bool,
}

/// Whether a call is the entry's: by qualified name, or bare where nothing in the file says
/// what the name is.
fn call_is(e: &Entry, c: &Call, facts: &Facts) -> bool {
    let named = e.names.iter().any(|p| call_matches(p, &c.name))
        || (!c.name.contains('.') && e.bare.contains(&c.name) && !facts.defs.contains(&c.name))
        || (!e.match_words.is_empty()
            && c.name.rsplit('.').next().is_some_and(|own| {
                !own.starts_with(|c: char| c.is_ascii_uppercase()) && has_word(own, &e.match_words)
            }));
    named && !e.except.iter().any(|x| call_matches(x, &c.name))
}

fn find(e: &Entry, facts: &Facts, text: &str, patterns: &BTreeMap<String, Regex>) -> Found {
    let mut f = Found::default();
    let around = Around {
        facts,
        text,
        patterns,
        line_starts: std::cell::OnceCell::new(),
    };
    if !e.names.is_empty() || !e.bare.is_empty() || !e.match_words.is_empty() {
        for c in &facts.calls {
            if call_is(e, c, facts) && holds(&e.when, c, &around) {
                f.lines.push(c.line);
                f.tainted |= c.args.iter().any(|a| a.from_parameter);
                f.by_call = true;
                f.input_reached |= c.args.iter().chain(&c.receiver).any(|a| a.from_input);
                for w in e.high_risk_when.iter().flat_map(HighRisk::alternatives) {
                    if holds(w, c, &around) {
                        f.shown_at
                            .extend(around.function_match_line(c.line, &w.function_matches));
                        f.high_risk = true;
                    }
                }
            }
        }
        let has_call_conditions = !e.when.kwarg.is_empty()
            || !e.when.unless_kwarg.is_empty()
            || e.when.first_arg.is_some()
            || e.when.second_arg.is_some()
            || e.when.any_arg.is_some()
            || e.when.receiver.is_some()
            || !e.when.context.is_empty()
            || !e.when.args_mention.is_empty()
            || e.when.min_args.is_some()
            || e.when.max_args.is_some()
            || !e.when.function_matches.is_empty();
        if !has_call_conditions {
            for r in &facts.refs {
                if source_matches(e, &r.name, r.free)
                    && (e.when.requires_import.is_empty()
                        || holds(
                            &e.when,
                            &Call {
                                name: String::new(),
                                line: 0,
                                end_line: 0,
                                args: Vec::new(),
                                receiver: None,
                                context: Vec::new(),
                            },
                            &around,
                        ))
                {
                    f.lines.push(r.line);
                }
            }
        }
    }
    let excepted = |m: &str| {
        e.pattern_except
            .iter()
            .any(|x| patterns.get(x).is_some_and(|re| re.is_match(m)))
    };
    // `requires_import` holds for an entry's patterns too: `verify=False` is a JWT's only in a
    // file that uses a JWT library
    let imported = imports_one_of(facts, &e.when.requires_import);
    for p in e.pattern.iter().filter(|_| imported) {
        if let Some(re) = patterns.get(p) {
            for m in re.find_iter(text) {
                if !excepted(m.as_str()) {
                    f.lines
                        .push(text[..m.start()].matches('\n').count() as u32 + 1);
                }
            }
        }
    }
    f.lines.sort_unstable();
    f.lines.dedup();
    f
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Hit {
    pub id: String,
    pub weight: f64,
    pub lines: Vec<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cwe: Vec<u32>,
    /// Sinks: weight × factors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contribution: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub factors: Vec<String>,
    /// Sinks: lines of the code around a call that made it high-risk (a scheme-only check).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shown_at: Vec<u32>,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct GuardHit {
    pub category: String,
    pub ids: Vec<String>,
    pub lines: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct WeaknessHit {
    pub cwe: u32,
    pub line: u32,
    pub why: String,
}

/// R and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Score {
    pub score: f64,
    pub flagged: bool,
    pub sources: Vec<Hit>,
    pub sinks: Vec<Hit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weakness: Option<WeaknessHit>,
    pub guards: Vec<GuardHit>,
    pub guard_deduction: f64,
    /// Scored on what tree-sitter's error recovery could read of a file with a syntax error.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// R reached the threshold, but on hints only: no sink is high-risk, reached by outside
    /// input or of the task's CWE, so the file is not flagged.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hints_only: bool,
}

/// Scores one file.
pub(crate) fn score(
    t: &Tables,
    facts: &Facts,
    text: &str,
    task_cwe: Option<u32>,
    threshold: f64,
) -> Score {
    // the patterns read code: a docstring's example (`SECRET_KEY = 'dev'`) is not
    let code = facts.code_text(text);
    let text = code.as_ref();
    let guards = guard_hits(t, facts, text);
    let SinkHits {
        hits: mut sinks,
        tainted,
        amplifiable,
    } = sink_hits(t, facts, text, &guards);
    let sources = source_hits(t, facts, text, &sinks, tainted);
    // Only input an outsider controls amplifies the sinks: a weak source (a parameter, the
    // environment: weight below 3) adds its weight, but ordinary library code passes its
    // callers' values to files and processes all the time.
    let outside: Vec<&Hit> = sources
        .iter()
        .filter(|s| s.weight >= AMPLIFYING_SOURCE)
        .collect();
    let has_source = !outside.is_empty();
    let amplified = amplified(facts, &outside, &sinks, amplifiable);
    let mut total: f64 = sources.iter().map(|s| s.weight).sum();
    for c in weigh_sinks(&mut sinks, &amplified, has_source, task_cwe) {
        total += c;
    }
    let weakness = remaining_weakness(t, text, &sinks, task_cwe);
    if weakness.is_some() {
        total += 10.0;
    }
    let guard_deduction = (2.0 * guards.len() as f64).min(10.0);
    total -= guard_deduction;
    // + 0.0 turns a -0.0 into 0.0 for the reports
    let score = (total.clamp(0.0, 100.0) * 10.0).round() / 10.0 + 0.0;
    // Hints alone never flag: R may pass the threshold on sources and sinks none of which is a
    // finding by itself (a server module reading the command line, looping on a socket and
    // logging errors), so a flag needs one sink that is high-risk, reached by outside input,
    // or of the task's weakness.
    let grounded = weakness.is_some()
        || sinks.iter().zip(&amplified).any(|(s, &reached)| {
            reached || s.weight >= HIGH_RISK_WEIGHT || task_cwe.is_some_and(|w| s.cwe.contains(&w))
        });
    Score {
        score,
        flagged: score >= threshold && grounded,
        hints_only: score >= threshold && !grounded,
        sources,
        sinks,
        weakness,
        guards,
        guard_deduction,
        partial: false,
    }
}

/// The file's guards, one hit per category with the lines of all its entries.
fn guard_hits(t: &Tables, facts: &Facts, text: &str) -> Vec<GuardHit> {
    let mut by_cat: BTreeMap<String, GuardHit> = BTreeMap::new();
    for g in &t.guards {
        let lines = find(g, facts, text, &t.patterns).lines;
        if !lines.is_empty() {
            let cat = g.category.clone().unwrap_or_default();
            let h = by_cat.entry(cat.clone()).or_insert_with(|| GuardHit {
                category: cat,
                ids: Vec::new(),
                lines: Vec::new(),
            });
            h.ids.push(g.id.clone());
            h.lines.extend(lines);
        }
    }
    by_cat
        .into_values()
        .map(|mut g| {
            g.lines.sort_unstable();
            g.lines.dedup();
            g
        })
        .collect()
}

/// The sinks found in a file, with what the sources and the ×1.5 need to know of them.
struct SinkHits {
    hits: Vec<Hit>,
    /// A parameter's value reached one of them.
    tainted: bool,
    /// Per sink: whether a source in the file can multiply it (see `amplified`).
    amplifiable: Vec<Option<bool>>,
}

/// The table's sinks found in the file, less those a guard of theirs rules out; a sink
/// high-risk as used here weighs at least `HIGH_RISK_WEIGHT`.
fn sink_hits(t: &Tables, facts: &Facts, text: &str, guards: &[GuardHit]) -> SinkHits {
    let mut sinks = Vec::new();
    let mut any_tainted_sink = false;
    let mut amplifiable = Vec::new();
    for e in &t.sinks {
        if e.when
            .unless_guard
            .iter()
            .any(|c| guards.iter().any(|g| &g.category == c))
        {
            continue;
        }
        let found = find(e, facts, text, &t.patterns);
        if !found.lines.is_empty() {
            any_tainted_sink |= found.tainted;
            amplifiable.push(found.by_call.then_some(found.input_reached));
            let (weight, factors) = if found.high_risk && e.weight < HIGH_RISK_WEIGHT {
                (
                    HIGH_RISK_WEIGHT,
                    vec![format!(
                        "weight {HIGH_RISK_WEIGHT} (not {}): high-risk as used here",
                        e.weight
                    )],
                )
            } else {
                (e.weight, Vec::new())
            };
            sinks.push(Hit {
                id: e.id.clone(),
                weight,
                lines: found.lines,
                cwe: e.cwe.clone(),
                contribution: None,
                factors,
                shown_at: {
                    let mut at = found.shown_at;
                    at.sort_unstable();
                    at.dedup();
                    at
                },
                why: e.why.clone(),
            });
        }
    }
    SinkHits {
        hits: sinks,
        tainted: any_tainted_sink,
        amplifiable,
    }
}

/// The table's sources found in the file; a parameter counts where it reached a sink.
fn source_hits(
    t: &Tables,
    facts: &Facts,
    text: &str,
    sinks: &[Hit],
    any_tainted_sink: bool,
) -> Vec<Hit> {
    let mut sources = Vec::new();
    for e in &t.sources {
        let lines = if e.kind.as_deref() == Some("parameter") {
            // a parameter reaching a sink: the sinks' lines where that happened
            if any_tainted_sink {
                sinks
                    .iter()
                    .flat_map(|s| s.lines.iter().copied())
                    .take(1)
                    .collect()
            } else {
                Vec::new()
            }
        } else if !source_applies(e, &facts.imports) {
            Vec::new()
        } else if facts.imports.is_empty() && !e.when.requires_import.is_empty() {
            // a fragment: its imports are elsewhere (see `source_applies`)
            let mut open = e.clone();
            open.when.requires_import.clear();
            find(&open, facts, text, &t.patterns).lines
        } else {
            find(e, facts, text, &t.patterns).lines
        };
        if !lines.is_empty() {
            sources.push(Hit {
                id: e.id.clone(),
                weight: e.weight,
                lines,
                cwe: Vec::new(),
                contribution: None,
                factors: Vec::new(),
                shown_at: Vec::new(),
                why: e.why.clone(),
            });
        }
    }
    sources
}

/// Per sink: whether outside input reaches it (the ×1.5). `amplifiable` is, per sink, whether
/// input reached one of its calls, or `None` when it matched no call.
fn amplified(
    facts: &Facts,
    outside: &[&Hit],
    sinks: &[Hit],
    amplifiable: Vec<Option<bool>>,
) -> Vec<bool> {
    let has_source = !outside.is_empty();
    // A pattern says nothing of where values come from: it counts ×1.5 when such a source is
    // in the same function (or both are at module level), not anywhere in a long module.
    let near_source = |lines: &[u32]| {
        lines.iter().any(|&l| {
            let f = facts.function_at(l);
            outside
                .iter()
                .any(|s| s.lines.iter().any(|&m| facts.function_at(m) == f))
        })
    };
    sinks
        .iter()
        .zip(amplifiable)
        .map(|(s, by_call)| has_source && by_call.unwrap_or_else(|| near_source(&s.lines)))
        .collect()
}

/// What each sink adds to R, heaviest first (the order they are added in); each sink's
/// contribution and factors are written on it.
fn weigh_sinks(
    sinks: &mut [Hit],
    amplified: &[bool],
    has_source: bool,
    task_cwe: Option<u32>,
) -> Vec<f64> {
    // A call the taint can follow counts ×1.5 only when input reaches it: a CLI reading
    // stdin somewhere does not make each `open(path)` in it a path from input.
    let mut contributions: Vec<f64> = Vec::with_capacity(sinks.len());
    for (s, &amplify) in sinks.iter_mut().zip(amplified) {
        let mut c = s.weight;
        if amplify {
            c *= 1.5;
            s.factors.push("×1.5 a source in the file".into());
        } else if has_source {
            s.factors
                .push("no ×1.5: the file's input does not reach it".into());
        }
        if task_cwe.is_some_and(|w| s.cwe.contains(&w)) {
            c *= 1.3;
            s.factors.push("×1.3 the task's CWE".into());
        }
        contributions.push(c);
    }
    // Each weakness counts once: a sink sharing a CWE with a heavier one already counted is a
    // second view of the same risk (`os.path.join(base, name)` then `open(path)`) and adds
    // half. Heaviest first; ties keep the table's order.
    let mut order: Vec<usize> = (0..sinks.len()).collect();
    order.sort_by(|&a, &b| contributions[b].total_cmp(&contributions[a]));
    // A sink no outside input reaches (no ×1.5) and not high-risk is a hint; beside a heavier
    // sink it is not as much again: large modules use many risky APIs, on their callers'
    // values, safely.
    let mut counted: Vec<u32> = Vec::new();
    let mut added = Vec::with_capacity(sinks.len());
    for (rank, i) in order.into_iter().enumerate() {
        let s = &mut sinks[i];
        let mut c = contributions[i];
        if let Some(cwe) = s.cwe.iter().find(|w| counted.contains(w)) {
            c *= 0.5;
            s.factors
                .push(format!("×0.5 CWE-{cwe} counted already by a heavier sink"));
        } else if rank > 0 && s.weight < HIGH_RISK_WEIGHT && !amplified[i] {
            c *= 0.5;
            s.factors
                .push("×0.5 no input reaches it, beside a heavier sink".into());
        }
        counted.extend(s.cwe.iter().copied());
        s.contribution = Some((c * 10.0).round() / 10.0);
        added.push(c);
    }
    added
}

/// The task's weakness where it remains: one of its patterns matches, or a sink of that CWE
/// is still there (the sink tables are the weakness patterns of their CWEs).
fn remaining_weakness(
    t: &Tables,
    text: &str,
    sinks: &[Hit],
    task_cwe: Option<u32>,
) -> Option<WeaknessHit> {
    task_cwe.and_then(|cwe| {
        t.weaknesses
            .iter()
            .filter(|w| w.cwe == cwe)
            .find_map(|w| {
                w.pattern
                    .iter()
                    .find_map(|p| t.patterns.get(p).and_then(|re| re.find(text)))
                    .map(|m| WeaknessHit {
                        cwe,
                        line: text[..m.start()].matches('\n').count() as u32 + 1,
                        why: w.why.clone(),
                    })
            })
            .or_else(|| {
                sinks
                    .iter()
                    .find(|s| s.cwe.contains(&cwe))
                    .map(|s| WeaknessHit {
                        cwe,
                        line: s.lines[0],
                        why: format!("a sink of CWE-{cwe} remains ({})", s.id),
                    })
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> Tables {
        Tables::parse(
            ("sources.yaml", "- {id: flask-request, match: [flask.request.args], weight: 4, why: request}\n- {id: parameter, kind: parameter, weight: 2, why: param}\n"),
            ("sinks.yaml", "- {id: eval, match: [eval], weight: 12, cwe: [95], why: eval}\n- {id: shell, match: [subprocess.run], when: {kwarg: {shell: [\"True\"]}}, weight: 12, cwe: [78], why: shell}\n"),
            ("guards.yaml", "- {id: literal-eval, match: [ast.literal_eval], category: safe-parsing, why: x}\n- {id: escape, match: [html.escape], category: escaping, why: x}\n"),
            ("weaknesses.yaml", "- {cwe: 95, pattern: ['eval\\('], why: eval remains}\n"),
        )
        .unwrap()
    }

    fn facts(src: &str, t: &Tables) -> Facts {
        super::super::python::parse_with(
            src,
            &|q, free, imports| t.is_source(q, free, imports),
            &|q| t.is_sanitizer(q),
        )
        .unwrap()
    }

    #[test]
    fn the_rule_of_spec_8() {
        let t = tables();
        let src = "from flask import request\n\ndef f():\n    return eval(request.args.get('x'))\n";
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        // source 4 + eval 12 × 1.5; no parameter reaches it
        assert_eq!(
            s.sources.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
            ["flask-request"]
        );
        assert_eq!(s.score, 4.0 + 18.0);
        assert!(s.flagged);
        let with_cwe = score(&t, &facts(src, &t), src, Some(95), 15.0);
        assert!(
            (with_cwe.score - (4.0 + 12.0 * 1.5 * 1.3 + 10.0)).abs() < 0.05,
            "{}",
            with_cwe.score
        );
        // a parameter reaching the sink is a weak source: its weight, no ×1.5
        let src = "def f(code):\n    return eval(code)\n";
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        assert_eq!(
            s.sources.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
            ["parameter"]
        );
        assert_eq!((s.score, s.flagged), (2.0 + 12.0, false));
        let with_cwe = score(&t, &facts(src, &t), src, Some(95), 15.0);
        assert!((with_cwe.score - (2.0 + 12.0 * 1.3 + 10.0)).abs() < 0.05);
        // shell=False is not the sink; guards take 2 each
        let src = "import subprocess, ast, html\n\ndef g(x):\n    subprocess.run(['ls', x], shell=False)\n    html.escape(x)\n    return ast.literal_eval(x)\n";
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        assert!(
            s.sinks.is_empty() && s.guards.len() == 2 && s.guard_deduction == 4.0 && s.score == 0.0,
            "{s:?}"
        );
        // input in the file that does not reach the call: no ×1.5, and then no sink grounds
        // the score (this table's eval is never high-risk), so it is hints only
        let src = "from flask import request\n\ndef f(code):\n    x = request.args\n    return eval(code)\n";
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        assert_eq!(
            (s.score, s.flagged, s.hints_only),
            (4.0 + 2.0 + 12.0, false, true)
        );
        assert_eq!(
            s.sinks[0].factors,
            ["no ×1.5: the file's input does not reach it"]
        );
        // a lone sink without a source stays under the threshold
        let src = "def h():\n    return eval('1+1')\n";
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        assert_eq!((s.score, s.flagged), (12.0, false));
    }

    /// One case per entry of the calibration and the closed gaps: (source, the sink it must
    /// show, whether it flags without a task CWE).
    const WITHOUT_A_CWE: &[(&str, &str, bool)] = &[
        // shell=True with input, qualified or bare (the import elsewhere)
        (
            "import subprocess\ndef run(cmd):\n    subprocess.call(cmd, shell=True)\n",
            "subprocess-shell",
            true,
        ),
        (
            "def run(cmd):\n    return check_output(cmd, shell=True)\n",
            "subprocess-shell",
            true,
        ),
        (
            "import subprocess\nsubprocess.call('ls -l', shell=True)\n",
            "subprocess-shell",
            false,
        ),
        ("def run(c):\n    system('ls ' + c)\n", "os-command", true),
        (
            "def usage(args):\n    cmd = 'df -' + args\n    return __salt__['cmd.run'](cmd)\n",
            "os-command",
            true,
        ),
        // weak randomness for a secret: by the name it goes to, or the function it is in
        (
            "import random\ndef reset():\n    reset_token = random.randint(100000, 999999)\n    return reset_token\n",
            "insecure-random",
            true,
        ),
        (
            "def new_session_id():\n    return randint(0, 2 ** 64)\n",
            "insecure-random",
            true,
        ),
        (
            "import random\ndef deal(cards):\n    random.shuffle(cards)\n",
            "insecure-random",
            false,
        ),
        // … or by where the value goes next: a cookie, a store keyed by a cookie's name
        (
            "import random\ndef remember(resp, store, cookie):\n    value = str(random.normalvariate(0, 1))[2:]\n    store[cookie] = value\n",
            "insecure-random",
            true,
        ),
        (
            "import random\ndef remember(resp):\n    v = random.getrandbits(32)\n    w = v\n    resp.set_cookie('id', w)\n",
            "insecure-random",
            true,
        ),
        (
            "import random\ndef sample(xs):\n    v = random.random()\n    print(v)\n    v = 0\n    token_count(v)\n",
            "insecure-random",
            false,
        ),
        // credentials: prefixed names, spaces, header dicts, private keys, provider formats
        (
            "google_api_key = 'AIzaSyD-1234567890abcdefghijklmnopqrstu'\n",
            "credential-literal",
            true,
        ),
        (
            "google_api_key = 'AIzaSyD-1234567890abcdefghijklmnopqrstu'\n",
            "hardcoded-secret",
            true,
        ),
        (
            "DB_PASSWORD = 'correct horse battery'\n",
            "hardcoded-secret",
            true,
        ),
        (
            "conn = connect(host='db', password='s3cr3t-pw')\n",
            "hardcoded-secret",
            true,
        ),
        (
            "HEADERS = {'Authorization': 'Bearer abcdef1234567890'}\n",
            "credential-literal",
            true,
        ),
        (
            "KEY = '''-----BEGIN RSA PRIVATE KEY-----\nMIIEow'''\n",
            "credential-literal",
            true,
        ),
        ("key = 'k3Y9fA0qLx7Zp2Rw5TbV'\n", "hardcoded-secret", true),
        // a weak hash of a password
        (
            "import hashlib\ndef h(password):\n    return hashlib.md5(password.encode()).hexdigest()\n",
            "weak-hash",
            true,
        ),
        (
            "import hashlib\ndef etag(body):\n    return hashlib.md5(body).hexdigest()\n",
            "weak-hash",
            false,
        ),
        // input naming the attribute
        (
            "from flask import request\ndef v(obj):\n    return getattr(obj, request.args['name'])\n",
            "attribute-from-input",
            true,
        ),
        // a query built in a variable, then run; `request` a free global of a cut-out view
        (
            "def stats(self):\n    start = request.args.get('start')\n    q = \"SELECT * FROM s WHERE d > '\" + start + \"'\"\n    self.db.cursor().execute(q)\n",
            "sql-built-from-strings",
            true,
        ),
        // SQL text formatted in one place and run through a helper
        (
            "def tag(self, n):\n    q = \"SELECT tag FROM tags WHERE rowid = '\" + str(n) + \"'\"\n    self.query(q)\n",
            "sql-text-formatted",
            false,
        ),
        (
            "from flask import request\ndef tag(db):\n    rows = db.sql(f\"SELECT * FROM t WHERE n = '{request.args['n']}'\")\n",
            "sql-text-formatted",
            true,
        ),
        // a view returning text built from request data; stored into the session
        (
            "from flask import request\ndef view():\n    out = ''\n    name = request.form.get('n')\n    out += f'Hello {name}'\n    return out\n",
            "html-from-input",
            true,
        ),
        (
            "import flask\nfrom flask import request\ndef view():\n    items = []\n    items.append(request.form['n'])\n    flask.session['user'] = items[0]\n",
            "session-from-input",
            true,
        ),
        (
            "import markdown\ndef page(self):\n    return markdown.markdown(self.object.content)\n",
            "markdown-unsanitised",
            false,
        ),
        // input in an LDAP filter or an XPath query: injection, as with SQL
        (
            "import ldap3\nfrom flask import request\ndef find(conn):\n    f = '(uid=' + request.form['u'] + ')'\n    conn.search('ou=users', f)\n",
            "ldap-filter",
            true,
        ),
        (
            "import ldap3\ndef find(conn, u):\n    conn.search('ou=users', '(uid=' + u + ')')\n",
            "ldap-filter",
            false,
        ),
        (
            "from lxml import etree\nfrom flask import request\ndef find(doc):\n    return doc.xpath(\"//user[@name='\" + request.args['n'] + \"']\")\n",
            "xpath-query",
            true,
        ),
        (
            "def view(resp):\n    resp.set_cookie('sid', 'x', secure=False)\n",
            "cookie-not-secure",
            false,
        ),
        (
            "import jwt\ndef read(t):\n    return jwt.decode(t, 'k', verify=False)\n",
            "jwt-unverified",
            true,
        ),
        (
            "import socket\ndef serve(s):\n    while True:\n        s.recv(1024)\n",
            "unbounded-network-loop",
            false,
        ),
        (
            "import pathlib\nfrom flask import request\ndef read():\n    p = pathlib.Path('/srv') / request.args['f']\n    return p.read_text()\n",
            "path-object-from-input",
            true,
        ),
        // a command line formatted and handed to a helper that runs it
        (
            "def hook(name):\n    cmd = 'git show :%s' % name\n    return get_output(cmd)\n",
            "command-line-formatted",
            false,
        ),
        (
            "def ls(self, path):\n    command = (\n        'rclone lsjson '\n        'remote:{p}'\n    ).format(p=path)\n    return self._execute(command)\n",
            "command-line-formatted",
            false,
        ),
        // joined under a base and never confined; from input it is high-risk
        (
            "import os\ndef cut(self, key):\n    self.etcd.delete(os.path.join(self.ns, key))\n",
            "path-join-unconfined",
            false,
        ),
        (
            "import os\nfrom flask import request\ndef view():\n    return open(os.path.join('/srv', request.args['f']))\n",
            "path-join-unconfined",
            true,
        ),
        (
            "import os\nfrom flask import request\ndef view():\n    return str(os.path.exists(request.args['f']))\n",
            "path-probe-from-input",
            false,
        ),
        (
            "from django.utils.safestring import mark_safe\ndef view(request):\n    return mark_safe('<b>%s</b>' % request.GET['n'])\n",
            "html-marked-safe",
            true,
        ),
        (
            "def get(self, name):\n    self.response.write('build %s not found' % name)\n",
            "response-write",
            false,
        ),
        // the counterparts of ORDINARY's code objects, namespaces and token kinds
        (
            "def run(src):\n    code = compile(src, '<s>', 'exec')\n    exec(code, {})\n",
            "dynamic-code",
            true,
        ),
        (
            "import requests\nrequests.get('http://api.internal.corp/v1/users')\n",
            "cleartext-protocol",
            false,
        ),
        ("AUTH = {'token': 'f3a9c2e17b'}\n", "hardcoded-secret", true),
        // a project's own runner, named for what it does, given a formatted command line
        (
            "def copy(self, src, dst):\n    command = 'rclone copy {} {}'.format(src, dst)\n    self._execute_interactive(command)\n",
            "command-line-formatted",
            false,
        ),
        // a path from the command line is input; the same from the environment (below) is not
        (
            "import sys\nfrom pathlib import Path\np = Path(sys.argv[1])\n",
            "path-from-input",
            true,
        ),
        (
            "def check(token):\n    return token == 'x9Fq2-live'\n",
            "hardcoded-secret",
            true,
        ),
    ];

    /// Ordinary code the same entries must leave alone: (source, the sink it must not show).
    const ORDINARY: &[(&str, &str)] = &[
        // placeholders repeated by a count hold none of the values
        (
            "def ids(con, ids):\n    q = 'SELECT x FROM t WHERE ' + ' or '.join(['id = ?'] * len(ids))\n    con.execute(q, ids)\n",
            "sql-built-from-strings",
        ),
        // a helper named for running, given a message rather than a command line
        (
            "def go(self, name):\n    self.run_later('retry %s' % name)\n",
            "command-line-formatted",
        ),
        // an exception that names the command line it could not run
        (
            "def go(self, command_line):\n    raise ShellCommandFailure(' '.join(command_line))\n",
            "command-line-formatted",
        ),
        (
            "class Cmd:\n    def dispatch(self, name):\n        return getattr(self, 'do_' + name)()\n",
            "attribute-from-input",
        ),
        (
            "class Cmd:\n    def dispatch(self, name):\n        return getattr(self, 'do_' + name)()\n",
            "dynamic-import",
        ),
        ("password_prompt = 'Password: '\n", "hardcoded-secret"),
        ("TOKEN_ENV = 'PIP_TOKEN'\n", "hardcoded-secret"),
        (
            "token_url = 'https://example.com/oauth/token'\n",
            "hardcoded-secret",
        ),
        ("PASSWORD_FIELD = 'password'\n", "hardcoded-secret"),
        (
            "auth_header = 'Basic {}'.format(creds)\n",
            "hardcoded-secret",
        ),
        ("key = 'content-type'\n", "hardcoded-secret"),
        (
            "HEADERS = {'Authorization': 'Bearer ' + token}\n",
            "credential-literal",
        ),
        ("def system(x):\n    pass\nsystem(y)\n", "os-command"),
        (
            "import logging\ndef f(path):\n    logging.info('reading %s', path)\n",
            "log-from-input",
        ),
        (
            "def randint(a, b):\n    return a\ntoken = randint(1, 2)\n",
            "insecure-random",
        ),
        // escaped, a parameter not input, JSON, no web framework
        (
            "from flask import request\nimport html\ndef view():\n    return f'Hello {html.escape(request.args[\"n\"])}'\n",
            "html-from-input",
        ),
        (
            "import flask\ndef greet(name):\n    return f'Hello {name}'\n",
            "html-from-input",
        ),
        (
            "from flask import request, jsonify\ndef view():\n    return jsonify(request.args)\n",
            "html-from-input",
        ),
        (
            "def ask():\n    name = input()\n    return f'Hello {name}'\n",
            "html-from-input",
        ),
        (
            "import flask\ndef login(user):\n    flask.session['uid'] = 7\n",
            "session-from-input",
        ),
        (
            "import markdown, bleach\ndef page(t):\n    return bleach.clean(markdown.markdown(t))\n",
            "markdown-unsanitised",
        ),
        (
            "def view(resp):\n    resp.set_cookie('sid', 'x', secure=True, httponly=True)\n",
            "cookie-not-secure",
        ),
        (
            "def ask(opts):\n    print(\"select a file from the list: \" + opts)\n    db.execute('SELECT * FROM t WHERE n = %s', (opts,))\n",
            "sql-text-formatted",
        ),
        // a docstring's example is prose, not code; a helper storing its caller's value
        (
            "def from_object(obj):\n    \"\"\"Load it::\n\n        SECRET_KEY = 'development key'\n    \"\"\"\n",
            "hardcoded-secret",
        ),
        (
            "from flask import session\ndef flash(message):\n    session['_flashes'] = [message]\n",
            "session-from-input",
        ),
        // patterns of entries that require an import: not in files without it
        (
            "import requests\ndef get(u):\n    return requests.get(u, verify=False)\n",
            "jwt-unverified",
        ),
        (
            "def poll(q):\n    while True:\n        q.get()\n",
            "unbounded-network-loop",
        ),
        (
            "import pathlib\nfrom flask import request\ndef read():\n    p = (pathlib.Path('/srv') / request.args['f']).resolve()\n    if not p.is_relative_to('/srv'):\n        return ''\n    return p.read_text()\n",
            "path-object-from-input",
        ),
        (
            "import pathlib\ndef tidy(name):\n    return name.replace('/', '_').strip()\n",
            "path-object-from-input",
        ),
        // a list of arguments is no command line; logging one is not running it
        (
            "def run(self, ref):\n    self.run_command(['git', 'show', ref])\n",
            "command-line-formatted",
        ),
        (
            "def run(cmd):\n    log.info('running %s' % cmd)\n",
            "command-line-formatted",
        ),
        // confined after the join; a caller's value only as the base
        (
            "import os\ndef read(base, name):\n    p = os.path.realpath(os.path.join(base, name))\n    if not p.startswith(os.path.realpath(base) + os.sep):\n        raise ValueError(name)\n    return open(p)\n",
            "path-join-unconfined",
        ),
        (
            "import os\ndef setup_py(project):\n    return os.path.join(project, 'setup.py')\n",
            "path-join-unconfined",
        ),
        (
            "import os\ndef has(path):\n    return os.path.exists(path)\n",
            "path-probe-from-input",
        ),
        (
            "from django.utils.safestring import mark_safe\nBR = mark_safe('<br>')\n",
            "html-marked-safe",
        ),
        (
            "def get(self):\n    self.response.write('ok')\n",
            "response-write",
        ),
        // running a code object: compile() was where text became code
        (
            "from types import CodeType\ndef runcode(self, code: CodeType):\n    exec(code, self.locals)\n",
            "dynamic-code",
        ),
        // constant text repeated (to pad line numbers) holds nothing a caller wrote
        (
            "def rethrow(lineno, name):\n    code = compile('\\n' * (lineno - 1) + 'raise E', name, 'exec')\n    code = code.replace(co_name='x')\n    exec(code, {})\n",
            "dynamic-code",
        ),
        (
            "from string import Template\ndef url(rule, ctx):\n    return Template(rule).substitute(ctx)\n",
            "template-from-data",
        ),
        (
            "NS = {'openid.ns': 'http://specs.openid.net/auth/2.0', 'x': 'http://www.w3.org/2000/svg'}\n",
            "cleartext-protocol",
        ),
        (
            "NAMES = {\n    TOKEN_EOF: 'end of template',\n}\n",
            "hardcoded-secret",
        ),
        (
            "def lex(token):\n    if token == 'keyword':\n        pass\n",
            "hardcoded-secret",
        ),
        // what a server sends to ask for a credential
        (
            "class SMTP:\n    AuthLoginPasswordChallenge = \"Password\\x00\"\n    prompt = 'x'\n",
            "hardcoded-secret",
        ),
        ("PASSWORD_ASK = 'Password: '\n", "hardcoded-secret"),
    ];

    #[test]
    fn a_source_that_needs_a_framework_holds_in_its_files_and_in_fragments_only() {
        let t = super::super::python_tables(None).unwrap();
        let has_body = |src: &str| {
            score(&t, &facts(src, &t), src, None, 15.0)
                .sources
                .iter()
                .any(|h| h.id == "request-body")
        };
        assert!(has_body(
            "from django.http import HttpResponse\ndef post(request):\n    return eval(request.body)\n"
        ));
        assert!(has_body(
            "def post(self, request):\n    return eval(request.body)\n"
        ));
        assert!(has_body(
            "from aiohttp import web\ndef post(self):\n    return eval(self.request.body)\n"
        ));
        // a response's body is the server's answer, not the sender's data
        assert!(!has_body(
            "from tornado.web import RequestHandler\ndef got(self, response):\n    return eval(response.body)\n"
        ));
        // a framework's client, not its server
        assert!(!has_body(
            "from tornado.httpclient import HTTPRequest\ndef send(self):\n    return eval(self.request.body)\n"
        ));
        // an HTTP client's own message: no source, and no input reaches the sink
        let src = "import requests\ndef resend(r):\n    return eval(r.request.body)\n";
        assert!(!has_body(src));
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        assert!(
            !s.sinks[0].factors.iter().any(|f| f.contains("×1.5")),
            "{s:?}"
        );
    }

    #[test]
    fn the_environment_taints_but_is_not_input() {
        let t = super::super::python_tables(None).unwrap();
        let src = "import os\nfrom pathlib import Path\np = Path(os.environ['NETRC'])\n";
        let f = facts(src, &t);
        let call = f.calls.iter().find(|c| c.name == "pathlib.Path").unwrap();
        assert!(call.args[0].tainted && !call.args[0].from_input, "{call:?}");
        let s = score(&t, &f, src, None, 15.0);
        assert!(!s.flagged, "{s:?}");
        assert!(
            s.sinks
                .iter()
                .all(|h| !h.factors.iter().any(|x| x.contains("high-risk"))),
            "{s:?}"
        );
    }

    #[test]
    fn hints_alone_never_flag() {
        let t = super::super::python_tables(None).unwrap();
        // a query concatenated from a value read back from the database: R reaches 15 on
        // hints, none reached by input or high-risk
        let src = "import hashlib, sqlite3\ncur = sqlite3.connect('v.db').cursor()\ncur.execute('SELECT id FROM h')\nfor row in cur.fetchall():\n    pid = row[0]\n    cur.execute(\"SELECT a FROM h WHERE id='\" + pid + \"'\")\n    print(hashlib.md5(pid.encode()).hexdigest())\n";
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        assert!(s.score >= 15.0 && !s.flagged && s.hints_only, "{s:?}");
        // the task's CWE grounds the same sinks
        let s = score(&t, &facts(src, &t), src, Some(89), 15.0);
        assert!(s.flagged && !s.hints_only, "{s:?}");
        // below the threshold nothing is said
        let s = score(&t, &facts(src, &t), src, None, 99.0);
        assert!(!s.flagged && !s.hints_only, "{s:?}");
    }

    #[test]
    fn a_weakness_counts_once_and_sinks_input_does_not_reach_count_half() {
        let t = super::super::python_tables(None).unwrap();
        // the join and the open are one traversal: the lighter counts half
        let src =
            "import os\ndef cut(base, key):\n    p = os.path.join(base, key)\n    return open(p)\n";
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        let join = s
            .sinks
            .iter()
            .find(|h| h.id == "path-join-unconfined")
            .unwrap();
        assert_eq!(join.contribution, Some(3.0), "{s:?}");
        assert!(
            join.factors
                .iter()
                .any(|f| f.contains("CWE-22 counted already"))
        );
        // sinks no input reaches, beside a heavier one, are hints, not more evidence
        let src = "import os, tempfile, hashlib\nos.chmod('/srv/x', 0o777)\nt = tempfile.mktemp()\ndef dump(code):\n    return eval(code)\n";
        let s = score(&t, &facts(src, &t), src, None, 15.0);
        let light: Vec<_> = s.sinks.iter().filter(|h| h.id != "dynamic-code").collect();
        assert!(!light.is_empty(), "{s:?}");
        for h in light {
            assert_eq!(h.contribution, Some(h.weight / 2.0), "{h:?}");
        }
    }

    #[test]
    fn one_high_risk_sink_flags_without_a_cwe() {
        let t = super::super::python_tables(None).unwrap();
        for (src, sink, flags) in WITHOUT_A_CWE {
            let s = score(&t, &facts(src, &t), src, None, 15.0);
            assert!(
                s.sinks.iter().any(|h| h.id == *sink),
                "{sink} not found in {src:?}: {:?}",
                s.sinks
            );
            assert_eq!(s.flagged, *flags, "{src:?}: {s:?}");
        }
        for (src, sink) in ORDINARY {
            let s = score(&t, &facts(src, &t), src, None, 15.0);
            assert!(
                !s.sinks.iter().any(|h| h.id == *sink),
                "{sink} found in {src:?}: {:?}",
                s.sinks
            );
        }
    }

    #[test]
    fn words_split_names_as_people_read_them() {
        assert_eq!(words("resetToken"), ["reset", "token"]);
        assert_eq!(words("RESET_TOKEN"), ["reset", "token"]);
        assert_eq!(words("self.api-key2"), ["self", "api", "key2"]);
        assert!(!mentions(&["footprint".into()], &["otp".into()]));
    }

    #[test]
    fn name_patterns() {
        assert!(
            call_matches("*.execute", "db.cursor.execute")
                && call_matches("*.execute", "execute")
                && !call_matches("*.execute", "executemany")
        );
        assert!(call_matches("yaml.*", "yaml.load") && !call_matches("yaml.*", "yaml"));
        assert!(
            ref_matches("flask.request.args", "flask.request.args.get")
                && !ref_matches("flask.request.args", "flask.request.argsx")
        );
        assert!(ref_matches("*.GET", "request.GET.get"));
    }

    #[test]
    fn bad_tables_name_their_file_and_line() {
        let e = Tables::parse(
            ("s.yaml", "- {id: x, weight: 2, why: y, typo: 1}\n"),
            ("k.yaml", "[]"),
            ("g.yaml", "[]"),
            ("w.yaml", "[]"),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("s.yaml:1"), "{e}");
        let e = Tables::parse(
            ("s.yaml", "[]"),
            ("k.yaml", "- {id: x, pattern: ['('], weight: 2, why: y}\n"),
            ("g.yaml", "[]"),
            ("w.yaml", "[]"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("entry x"), "{e}");
    }
}
