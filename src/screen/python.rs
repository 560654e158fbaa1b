//! Python for `git sage screen`: parsing with tree-sitter-python (L0), the facts L1 and L3 use
//! (definitions, imports, calls, qualified names, a light parameter/source taint), and import
//! resolution by static lookup — the repository's files, the standard library, the packages
//! the repository declares and the packages installed — never by importing anything.
//!
//! Pure: it reads source text and tables. The installed packages come from `python_run.rs`,
//! the one part that starts a process.

use std::collections::{BTreeSet, HashMap, HashSet};

use tree_sitter::{Node, Parser};

use super::facts::{Arg, ArgKind, Call, Facts, Import, ParseError, Ref};

/// Parses a file; the first syntax error ends it (L0).
pub(crate) fn parse(src: &str, is_source: &dyn Fn(&str) -> bool) -> Result<Facts, ParseError> {
    parse_with(src, is_source, &|_| false)
}

/// As `parse`, with calls that clean a value (escaping, confinement): what they return is not
/// tainted.
pub(crate) fn parse_with(
    src: &str,
    is_source: &dyn Fn(&str) -> bool,
    is_sanitizer: &dyn Fn(&str) -> bool,
) -> Result<Facts, ParseError> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("the bundled grammar matches the tree-sitter version");
    let tree = parser.parse(src, None).ok_or_else(|| ParseError {
        line: 1,
        message: "the parser gave up".into(),
    })?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(first_error(root, src.as_bytes()));
    }
    let mut w = Walker {
        src: src.as_bytes(),
        aliases: HashMap::new(),
        facts: Facts::default(),
        is_source,
        is_sanitizer,
        scopes: vec![HashMap::new()],
    };
    w.collect_imports(root);
    w.defs(root);
    w.walk(root);
    Ok(w.facts)
}

fn line(n: Node) -> u32 {
    n.start_position().row as u32 + 1
}

fn first_error(root: Node, src: &[u8]) -> ParseError {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            let near: String = n.utf8_text(src).unwrap_or("").chars().take(40).collect();
            let message = if n.is_missing() {
                format!("missing `{}`", n.kind())
            } else if near.trim().is_empty() {
                "syntax error".to_string()
            } else {
                format!("syntax error near `{}`", near.trim())
            };
            return ParseError {
                line: line(n),
                message,
            };
        }
        let mut c = n.walk();
        let children: Vec<Node> = n
            .children(&mut c)
            .filter(|k| k.has_error() || k.is_error() || k.is_missing())
            .collect();
        stack.extend(children.into_iter().rev());
    }
    ParseError {
        line: line(root),
        message: "syntax error".into(),
    }
}

fn children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// Taint bits: from an input source, from a function parameter.
const SOURCE: u8 = 1;
const PARAM: u8 = 2;

struct Walker<'a> {
    src: &'a [u8],
    /// local name → qualified name, from the imports
    aliases: HashMap<String, String>,
    facts: Facts,
    is_source: &'a dyn Fn(&str) -> bool,
    is_sanitizer: &'a dyn Fn(&str) -> bool,
    /// Tainted names per function scope (innermost last), with where their taint comes from.
    scopes: Vec<HashMap<String, u8>>,
}

impl<'a> Walker<'a> {
    fn text(&self, n: Node) -> &'a str {
        n.utf8_text(self.src).unwrap_or("")
    }

    fn collect_imports(&mut self, root: Node) {
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "import_statement" => {
                    for c in children(n) {
                        let (module, alias) = match c.kind() {
                            "aliased_import" => (
                                c.child_by_field_name("name")
                                    .map(|x| self.text(x).to_string())
                                    .unwrap_or_default(),
                                c.child_by_field_name("alias")
                                    .map(|x| self.text(x).to_string()),
                            ),
                            _ => (self.text(c).to_string(), None),
                        };
                        match alias {
                            Some(a) => self.aliases.insert(a, module.clone()),
                            None => {
                                let head = module.split('.').next().unwrap_or("").to_string();
                                self.aliases.insert(head.clone(), head)
                            }
                        };
                        self.facts.imports.push(Import {
                            module,
                            names: Vec::new(),
                            line: line(n),
                            optional: optional(n, self.src),
                        });
                    }
                }
                "import_from_statement" => {
                    let module = n
                        .child_by_field_name("module_name")
                        .map(|x| self.text(x).to_string())
                        .unwrap_or_default();
                    let mut names = Vec::new();
                    let mut c = n.walk();
                    for name in n.children_by_field_name("name", &mut c) {
                        let (orig, local) = match name.kind() {
                            "aliased_import" => {
                                let o = name
                                    .child_by_field_name("name")
                                    .map(|x| self.text(x).to_string())
                                    .unwrap_or_default();
                                let l = name
                                    .child_by_field_name("alias")
                                    .map(|x| self.text(x).to_string())
                                    .unwrap_or_else(|| o.clone());
                                (o, l)
                            }
                            _ => (self.text(name).to_string(), self.text(name).to_string()),
                        };
                        let qualified = if module.ends_with('.') {
                            format!("{module}{orig}")
                        } else {
                            format!("{module}.{orig}")
                        };
                        self.aliases.insert(local, qualified);
                        names.push(orig);
                    }
                    self.facts.imports.push(Import {
                        module,
                        names,
                        line: line(n),
                        optional: optional(n, self.src),
                    });
                }
                _ => {
                    let mut c = n.walk();
                    let kids: Vec<Node> = n.named_children(&mut c).collect();
                    stack.extend(kids.into_iter().rev());
                }
            }
        }
        self.facts.imports.sort_by_key(|i| i.line);
    }

    fn defs(&mut self, root: Node) {
        for n in children(root) {
            let n = if n.kind() == "decorated_definition" {
                n.child_by_field_name("definition").unwrap_or(n)
            } else {
                n
            };
            match n.kind() {
                "function_definition" => {
                    if let Some(name) = n.child_by_field_name("name") {
                        self.facts.defs.push(self.text(name).to_string());
                    }
                }
                "class_definition" => {
                    let Some(name) = n.child_by_field_name("name") else {
                        continue;
                    };
                    let class = self.text(name).to_string();
                    self.facts.defs.push(class.clone());
                    if let Some(body) = n.child_by_field_name("body") {
                        for m in children(body) {
                            let m = if m.kind() == "decorated_definition" {
                                m.child_by_field_name("definition").unwrap_or(m)
                            } else {
                                m
                            };
                            if m.kind() == "function_definition"
                                && let Some(mn) = m.child_by_field_name("name")
                            {
                                self.facts.defs.push(format!("{class}.{}", self.text(mn)));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// The qualified name of a callee or attribute chain, if it is a plain chain.
    fn qualify(&self, n: Node) -> Option<String> {
        match n.kind() {
            "identifier" => {
                let t = self.text(n);
                Some(
                    self.aliases
                        .get(t)
                        .cloned()
                        .unwrap_or_else(|| t.to_string()),
                )
            }
            "attribute" => {
                let object = n.child_by_field_name("object")?;
                let attr = self.text(n.child_by_field_name("attribute")?);
                match self.qualify(object) {
                    Some(base) => Some(format!("{base}.{attr}")),
                    // `foo().bar`, `x[0].bar`: only the member is known
                    None => Some(format!("().{attr}")),
                }
            }
            _ => None,
        }
    }

    /// Identifiers an expression reads (not attribute members, not keyword names).
    fn idents(&self, n: Node, out: &mut Vec<String>) {
        if n.kind() == "identifier" {
            let parent_field_is_member = n.parent().is_some_and(|p| {
                (p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(n))
                    || (p.kind() == "keyword_argument" && p.child_by_field_name("name") == Some(n))
            });
            if !parent_field_is_member {
                out.push(self.text(n).to_string());
            }
            return;
        }
        for c in children(n) {
            self.idents(c, out);
        }
    }

    /// Where a value comes from: `SOURCE` (an input source), `PARAM` (a function parameter).
    fn taint(&self, n: Node) -> u8 {
        match n.kind() {
            "identifier" => {
                let is_member = n.parent().is_some_and(|p| {
                    (p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(n))
                        || (p.kind() == "keyword_argument"
                            && p.child_by_field_name("name") == Some(n))
                });
                if is_member {
                    return 0;
                }
                let t = self.text(n);
                let local = self
                    .scopes
                    .last()
                    .and_then(|s| s.get(t))
                    .copied()
                    .unwrap_or(0);
                local
                    | if self.aliases.get(t).is_some_and(|q| (self.is_source)(q)) {
                        SOURCE
                    } else {
                        0
                    }
            }
            "attribute" => {
                (if self.qualify(n).is_some_and(|q| (self.is_source)(&q)) {
                    SOURCE
                } else {
                    0
                }) | n.child_by_field_name("object").map_or(0, |o| self.taint(o))
            }
            "call" => {
                let callee = n
                    .child_by_field_name("function")
                    .and_then(|f| self.qualify(f));
                if callee.as_deref().is_some_and(|q| (self.is_sanitizer)(q)) {
                    return 0;
                }
                let own = if callee.as_deref().is_some_and(|q| (self.is_source)(q)) {
                    SOURCE
                } else {
                    0
                };
                children(n)
                    .into_iter()
                    .fold(own, |acc, c| acc | self.taint(c))
            }
            _ => children(n)
                .into_iter()
                .fold(0, |acc, c| acc | self.taint(c)),
        }
    }

    fn arg(&self, name: Option<String>, v: Node) -> Arg {
        let t = self.taint(v);
        Arg {
            name,
            text: self.text(v).to_string(),
            kind: self.arg_kind(v),
            tainted: t != 0,
            from_parameter: t & PARAM != 0,
        }
    }

    fn arg_kind(&self, n: Node) -> ArgKind {
        match n.kind() {
            "string" => {
                if children(n).iter().any(|c| c.kind() == "interpolation") {
                    ArgKind::Formatted
                } else {
                    ArgKind::Literal
                }
            }
            "concatenated_string" => {
                if children(n)
                    .iter()
                    .any(|c| self.arg_kind(*c) == ArgKind::Formatted)
                {
                    ArgKind::Formatted
                } else {
                    ArgKind::Literal
                }
            }
            "integer" | "float" | "true" | "false" | "none" => ArgKind::Literal,
            "parenthesized_expression" => children(n)
                .first()
                .map_or(ArgKind::Other, |c| self.arg_kind(*c)),
            "binary_operator" => {
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.text(o))
                    .unwrap_or("");
                let stringy = |side: Option<Node>| {
                    side.is_some_and(|s| {
                        matches!(s.kind(), "string" | "concatenated_string")
                            || self.arg_kind(s) == ArgKind::Formatted
                    })
                };
                if (op == "%" || op == "+")
                    && (stringy(n.child_by_field_name("left"))
                        || stringy(n.child_by_field_name("right")))
                {
                    ArgKind::Formatted
                } else {
                    ArgKind::Other
                }
            }
            "call" => {
                let f = n.child_by_field_name("function");
                let is_str_method = f.is_some_and(|f| {
                    f.kind() == "attribute"
                        && f.child_by_field_name("object")
                            .is_some_and(|o| matches!(o.kind(), "string" | "concatenated_string"))
                        && f.child_by_field_name("attribute")
                            .is_some_and(|a| matches!(self.text(a), "format" | "join"))
                });
                if is_str_method {
                    ArgKind::Formatted
                } else {
                    ArgKind::Other
                }
            }
            _ => ArgKind::Other,
        }
    }

    fn record_call(&mut self, n: Node) {
        let Some(f) = n.child_by_field_name("function") else {
            return;
        };
        let name = self
            .qualify(f)
            .unwrap_or_else(|| format!("({})", self.text(f).chars().take(40).collect::<String>()));
        let mut args = Vec::new();
        if let Some(list) = n.child_by_field_name("arguments") {
            for a in children(list) {
                match a.kind() {
                    "keyword_argument" => {
                        let key = a
                            .child_by_field_name("name")
                            .map(|k| self.text(k).to_string());
                        if let Some(v) = a.child_by_field_name("value") {
                            args.push(self.arg(key, v));
                        }
                    }
                    "comment" => {}
                    _ => args.push(self.arg(None, a)),
                }
            }
        }
        self.facts.calls.push(Call {
            name,
            line: line(n),
            end_line: n.end_position().row as u32 + 1,
            args,
        });
    }

    /// Marks the names an assignment binds as tainted when its value is.
    fn assign(&mut self, left: Node, right: Node) {
        let t = self.taint(right);
        if t == 0 {
            return;
        }
        let mut ids = Vec::new();
        match left.kind() {
            "identifier" => ids.push(self.text(left).to_string()),
            "pattern_list" | "tuple_pattern" | "list_pattern" => self.idents(left, &mut ids),
            _ => {}
        }
        let scope = self.scopes.last_mut().expect("a scope");
        for id in ids {
            *scope.entry(id).or_default() |= t;
        }
    }

    fn params_of(&self, f: Node) -> HashSet<String> {
        let mut out = HashSet::new();
        if let Some(ps) = f.child_by_field_name("parameters") {
            for p in children(ps) {
                let name = match p.kind() {
                    "identifier" => Some(p),
                    "default_parameter" | "typed_default_parameter" => {
                        p.child_by_field_name("name")
                    }
                    "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                        children(p).into_iter().find(|c| c.kind() == "identifier")
                    }
                    _ => None,
                };
                if let Some(n) = name {
                    let t = self.text(n);
                    if t != "self" && t != "cls" {
                        out.insert(t.to_string());
                    }
                }
            }
        }
        out
    }

    fn walk(&mut self, n: Node) {
        match n.kind() {
            "function_definition" | "lambda" => {
                let mut scope = self.scopes.last().cloned().unwrap_or_default();
                for p in self.params_of(n) {
                    *scope.entry(p).or_default() |= PARAM;
                }
                self.scopes.push(scope);
                for c in children(n) {
                    self.walk(c);
                }
                self.scopes.pop();
                return;
            }
            "assignment" | "augmented_assignment" => {
                if let (Some(l), Some(r)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) {
                    self.walk(r);
                    self.assign(l, r);
                    return;
                }
            }
            "for_statement" => {
                if let (Some(l), Some(r)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) {
                    self.assign(l, r);
                }
            }
            "with_item" | "as_pattern" => {
                // `with open(p) as f`: f carries p's taint
                let kids = children(n);
                if kids.len() >= 2 {
                    let (value, target) = (kids[0], kids[kids.len() - 1]);
                    if n.kind() == "as_pattern" {
                        self.assign(target, value);
                    }
                }
            }
            "call" => self.record_call(n),
            "attribute" => {
                let is_inner = n.parent().is_some_and(|p| {
                    p.kind() == "attribute" && p.child_by_field_name("object") == Some(n)
                });
                if !is_inner && let Some(q) = self.qualify(n) {
                    self.facts.refs.push(Ref {
                        name: q,
                        line: line(n),
                    });
                }
            }
            "identifier" => {
                let t = self.text(n);
                if let Some(q) = self.aliases.get(t) {
                    let in_import = n.parent().is_some_and(|p| {
                        p.kind().contains("import")
                            || p.kind() == "dotted_name"
                            || p.kind() == "aliased_import"
                    });
                    if !in_import {
                        self.facts.refs.push(Ref {
                            name: q.clone(),
                            line: line(n),
                        });
                    }
                }
            }
            _ => {}
        }
        for c in children(n) {
            self.walk(c);
        }
    }
}

/// Inside `try:` whose handlers catch ImportError (or everything): a missing module is handled.
fn optional(mut n: Node, src: &[u8]) -> bool {
    while let Some(p) = n.parent() {
        if p.kind() == "try_statement" {
            let handles = children(p).iter().any(|c| {
                c.kind() == "except_clause" && {
                    let t = c.utf8_text(src).unwrap_or("");
                    let head = t.split(':').next().unwrap_or("");
                    head.trim() == "except"
                        || head.contains("ImportError")
                        || head.contains("ModuleNotFoundError")
                        || head.contains("Exception")
                }
            });
            if handles {
                return true;
            }
        }
        n = p;
    }
    false
}

/// Where imports can come from, built once per run.
pub(crate) struct ImportEnv {
    /// Dotted module paths the repository provides, from every plausible root.
    repo_modules: HashSet<String>,
    /// Directories (as `/` paths) of the repository, for relative imports.
    repo_files: HashSet<String>,
    stdlib: HashSet<String>,
    declared: HashSet<String>,
    installed: Option<HashSet<String>>,
    /// Where `installed` comes from: `python_run` unless a test says otherwise.
    list_installed: fn() -> Option<HashSet<String>>,
    pub notes: Vec<String>,
}

/// Why an import does not resolve.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Unresolved {
    pub module: String,
    pub line: u32,
}

impl ImportEnv {
    /// `paths`: every file of the tip tree; `read`: a file's content at the tip (for the
    /// dependency declarations); tables from templates/screen/python/.
    pub(crate) fn new(
        paths: &[String],
        read: &dyn Fn(&str) -> Option<String>,
        stdlib_txt: &str,
        dist: &HashMap<String, Vec<String>>,
    ) -> ImportEnv {
        let mut repo_modules = HashSet::new();
        let mut repo_files = HashSet::new();
        for p in paths {
            repo_files.insert(p.clone());
            let module_path = match p.strip_suffix("/__init__.py") {
                Some(stem) => Some(stem.to_string()),
                None => p
                    .strip_suffix(".py")
                    .or_else(|| p.strip_suffix(".pyi"))
                    .or_else(|| p.strip_suffix(".so"))
                    .map(|stem| stem.split('.').next().unwrap_or(stem).to_string()),
            };
            let dir = p.rsplit_once('/').map(|(d, _)| d.to_string());
            for m in module_path
                .into_iter()
                .chain(dir.filter(|_| p.ends_with(".py")))
            {
                // Every suffix: `src/pkg/mod.py` is importable as pkg.mod when src/ is a root.
                let parts: Vec<&str> = m.split('/').collect();
                for i in 0..parts.len() {
                    repo_modules.insert(parts[i..].join("."));
                }
            }
        }
        let stdlib = stdlib_txt
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        let mut declared = HashSet::new();
        for p in paths {
            let name = p.rsplit('/').next().unwrap_or(p);
            let is_req = (name.starts_with("requirements") && name.ends_with(".txt"))
                || matches!(
                    name,
                    "pyproject.toml" | "setup.cfg" | "setup.py" | "Pipfile" | "environment.yml"
                );
            if !is_req {
                continue;
            }
            if let Some(text) = read(p) {
                for d in declared_distributions(name, &text) {
                    match dist.get(&d) {
                        Some(names) => declared.extend(names.iter().cloned()),
                        None => {
                            declared.insert(d.replace('-', "_"));
                        }
                    }
                }
            }
        }
        ImportEnv {
            repo_modules,
            repo_files,
            stdlib,
            declared,
            installed: None,
            list_installed: super::python_run::installed_modules,
            notes: Vec::new(),
        }
    }

    /// Lists installed packages with `list` instead of asking `python3` (tests, or a caller
    /// that knows better).
    #[cfg(test)]
    pub(crate) fn with_installed(mut self, list: fn() -> Option<HashSet<String>>) -> ImportEnv {
        self.list_installed = list;
        self
    }

    /// The installed packages' names, listed on first need: most imports resolve in the
    /// repository, the standard library or the declarations, and listing costs a process.
    fn installed(&mut self) -> &HashSet<String> {
        if self.installed.is_none() {
            let names = (self.list_installed)().unwrap_or_else(|| {
                self.notes.push("python3 was not found: imports of installed packages were not checked (only the repository, the standard library and declared dependencies)".into());
                HashSet::new()
            });
            self.installed = Some(names);
        }
        self.installed.as_ref().expect("set above")
    }

    /// The imports of a file (at `path`) that resolve nowhere.
    pub(crate) fn unresolved(&mut self, path: &str, imports: &[Import]) -> Vec<Unresolved> {
        let mut out = Vec::new();
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        for i in imports.iter().filter(|i| !i.optional) {
            if i.module.starts_with('.') {
                if !self.relative_ok(dir, i) {
                    out.push(Unresolved {
                        module: i.module.clone(),
                        line: i.line,
                    });
                }
                continue;
            }
            let top = i.module.split('.').next().unwrap_or("");
            if top == "__future__" || self.stdlib.contains(top) || self.declared.contains(top) {
                continue;
            }
            if self.repo_modules.contains(top) {
                // the repository's own package: the submodule (or a name in it) must exist
                let ok = self.repo_modules.contains(&i.module)
                    || (!i.names.is_empty()
                        && i.names
                            .iter()
                            .all(|n| self.repo_modules.contains(&format!("{}.{n}", i.module))));
                if !ok {
                    out.push(Unresolved {
                        module: i.module.clone(),
                        line: i.line,
                    });
                }
                continue;
            }
            if !self.installed().contains(top) {
                out.push(Unresolved {
                    module: i.module.clone(),
                    line: i.line,
                });
            }
        }
        out
    }

    fn relative_ok(&self, dir: &str, i: &Import) -> bool {
        let dots = i.module.chars().take_while(|c| *c == '.').count();
        let mut base: Vec<&str> = if dir.is_empty() {
            Vec::new()
        } else {
            dir.split('/').collect()
        };
        for _ in 1..dots {
            if base.pop().is_none() {
                return false;
            }
        }
        let rest = &i.module[dots..];
        let mut parts = base.clone();
        if !rest.is_empty() {
            parts.extend(rest.split('.'));
        }
        let p = parts.join("/");
        let exists = |p: &str| {
            self.repo_files.contains(&format!("{p}.py"))
                || self.repo_files.contains(&format!("{p}/__init__.py"))
                || self
                    .repo_files
                    .iter()
                    .any(|f| f.starts_with(&format!("{p}/")))
        };
        if rest.is_empty() {
            // `from . import x`: each x is a module of the package or a name in its __init__
            return i.names.iter().all(|n| {
                exists(&if p.is_empty() {
                    n.clone()
                } else {
                    format!("{p}/{n}")
                }) || exists(&p)
            });
        }
        exists(&p)
    }
}

/// Distribution names a dependency file declares (lower-case), read by line patterns.
pub(crate) fn declared_distributions(file: &str, text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let name_of = |s: &str| -> Option<String> {
        let s = s.trim().trim_matches(|c| c == '"' || c == '\'' || c == ',');
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
            .unwrap_or(s.len());
        let n = &s[..end];
        (!n.is_empty() && n.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
            .then(|| n.to_ascii_lowercase().replace('_', "-"))
    };
    match file {
        "pyproject.toml" | "Pipfile" => {
            // strings in dependency arrays, and `name = "…"` keys of dependency tables
            let mut in_deps_table = false;
            for l in text.lines() {
                let t = l.trim();
                if t.starts_with('[') {
                    in_deps_table =
                        t.contains("dependencies") || t == "[packages]" || t == "[dev-packages]";
                    continue;
                }
                if in_deps_table
                    && let Some((k, _)) = t.split_once('=')
                    && let Some(n) = name_of(k)
                    && n != "python"
                {
                    out.insert(n);
                }
                for part in t.split(['[', ']', ',']) {
                    let p = part.trim();
                    if (p.starts_with('"') || p.starts_with('\''))
                        && let Some(n) = name_of(p)
                    {
                        out.insert(n);
                    }
                }
            }
        }
        "setup.py" | "setup.cfg" => {
            for l in text.lines() {
                for part in l.split([',', '[', ']']) {
                    let p = part.trim();
                    if (p.starts_with('"') || p.starts_with('\''))
                        && p.len() > 2
                        && let Some(n) = name_of(p)
                    {
                        out.insert(n);
                    }
                }
                if file == "setup.cfg"
                    && l.starts_with(char::is_whitespace)
                    && let Some(n) = name_of(l)
                {
                    out.insert(n);
                }
            }
        }
        _ => {
            for l in text.lines() {
                let t = l.split('#').next().unwrap_or("").trim();
                if t.is_empty() || t.starts_with('-') {
                    continue;
                }
                let t = t.trim_start_matches("- ");
                if let Some(n) = name_of(t) {
                    out.insert(n);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(src: &str) -> Facts {
        parse(src, &|q: &str| q.starts_with("flask.request.")).unwrap()
    }

    #[test]
    fn syntax_errors_give_their_line() {
        let e = parse("def f(:\n    pass\n", &|_| false).unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("x = 1\n\nif x\n    y = 2\n", &|_| false).unwrap_err();
        assert_eq!(e.line, 3, "{e:?}");
    }

    #[test]
    fn names_are_qualified_through_imports() {
        let f = facts(
            "import xml.etree.ElementTree as ET\nfrom yaml import load as L\nimport subprocess\n\ndef parse(s):\n    ET.fromstring(s)\n    L(s)\n    subprocess.call(s, shell=True)\n    open(s).read()\n",
        );
        let names: Vec<&str> = f.calls.iter().map(|c| c.name.as_str()).collect();
        assert!(
            names.contains(&"xml.etree.ElementTree.fromstring")
                && names.contains(&"yaml.load")
                && names.contains(&"subprocess.call")
                && names.contains(&"().read"),
            "{names:?}"
        );
        let call = f
            .calls
            .iter()
            .find(|c| c.name == "subprocess.call")
            .unwrap();
        assert_eq!(call.args[1].name.as_deref(), Some("shell"));
        assert!(call.args[0].tainted, "a parameter reaches the call");
        assert_eq!(f.defs, ["parse"]);
    }

    #[test]
    fn argument_kinds_and_taint_through_assignments() {
        let f = facts(
            "from flask import request\nimport sqlite3\n\ndef q(db):\n    name = request.args.get('n')\n    sql = \"SELECT * FROM t WHERE n = '%s'\" % name\n    db.execute(sql)\n    db.execute(f\"SELECT {name}\")\n    db.execute('SELECT 1', (name,))\n",
        );
        let ex: Vec<&Call> = f.calls.iter().filter(|c| c.name == "db.execute").collect();
        assert_eq!(ex.len(), 3);
        assert_eq!(
            (ex[0].args[0].kind, ex[0].args[0].tainted),
            (ArgKind::Other, true)
        );
        assert_eq!(ex[1].args[0].kind, ArgKind::Formatted);
        assert_eq!(ex[2].args[0].kind, ArgKind::Literal);
        assert!(f.refs.iter().any(|r| r.name == "flask.request.args.get"));
    }

    #[test]
    fn defs_include_methods_and_imports_note_optional_ones() {
        let f = facts(
            "try:\n    import ujson as json\nexcept ImportError:\n    import json\n\nclass A:\n    def m(self):\n        pass\n    @property\n    def p(self):\n        return 1\n\n@dec\ndef g():\n    pass\n",
        );
        assert_eq!(f.defs, ["A", "A.m", "A.p", "g"]);
        assert!(f.imports.iter().all(|i| i.optional), "{:?}", f.imports);
    }

    #[test]
    fn imports_resolve_statically() {
        let paths: Vec<String> = [
            "src/shop/__init__.py",
            "src/shop/media.py",
            "src/shop/util/strings.py",
            "requirements.txt",
            "pyproject.toml",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let read = |p: &str| match p {
            "requirements.txt" => {
                Some("PyYAML>=6 # yaml\n-r other.txt\nrequests==2.31\n".to_string())
            }
            "pyproject.toml" => {
                Some("[project]\ndependencies = [\"Flask>=3\", 'beautifulsoup4']\n".to_string())
            }
            _ => None,
        };
        let dist: HashMap<String, Vec<String>> =
            serde_yaml::from_str("pyyaml: [yaml]\nbeautifulsoup4: [bs4]\n").unwrap();
        let mut env = ImportEnv::new(&paths, &read, "os\nsys\njson\n", &dist);
        let src = "import os\nimport yaml\nimport bs4\nimport requests\nimport flask\nfrom shop import media\nfrom shop.util import strings\nfrom shop.nothere import x\nfrom . import media\nfrom .util import strings\nfrom .missing import y\nimport totally_made_up_pkg_xyz\n";
        let f = parse(src, &|_| false).unwrap();
        let bad: Vec<String> = env
            .unresolved("src/shop/media.py", &f.imports)
            .into_iter()
            .map(|u| u.module)
            .collect();
        assert_eq!(bad, ["shop.nothere", ".missing", "totally_made_up_pkg_xyz"]);
    }

    #[test]
    fn installed_packages_are_listed_once_and_only_when_needed() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        fn list() -> Option<HashSet<String>> {
            CALLS.fetch_add(1, Ordering::SeqCst);
            Some(HashSet::from(["requests".to_string()]))
        }
        let paths = vec!["app/util.py".to_string()];
        let mut env =
            ImportEnv::new(&paths, &|_| None, "os\n", &HashMap::new()).with_installed(list);
        let local = parse("import os\nfrom app import util\n", &|_| false).unwrap();
        assert!(env.unresolved("app/main.py", &local.imports).is_empty());
        assert_eq!(
            CALLS.load(Ordering::SeqCst),
            0,
            "no process for what resolves statically"
        );
        let outside = parse("import requests\nimport nope_xyz\n", &|_| false).unwrap();
        let bad = env.unresolved("app/main.py", &outside.imports);
        assert_eq!(
            bad,
            [Unresolved {
                module: "nope_xyz".into(),
                line: 2
            }]
        );
        env.unresolved("app/main.py", &outside.imports);
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        assert!(env.notes.is_empty());
    }

    #[test]
    fn without_python3_installed_packages_are_a_note() {
        let mut env = ImportEnv::new(&[], &|_| None, "", &HashMap::new()).with_installed(|| None);
        let f = parse("import requests\n", &|_| false).unwrap();
        assert_eq!(env.unresolved("main.py", &f.imports).len(), 1);
        assert_eq!(env.notes.len(), 1);
        assert!(
            env.notes[0].starts_with("python3 was not found"),
            "{:?}",
            env.notes
        );
    }
}
