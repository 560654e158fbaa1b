//! Python for `git sage screen`: parsing with tree-sitter-python (L0), the facts L1 and L3 use
//! (definitions, imports, calls, qualified names, a light parameter/source taint), and import
//! resolution by static lookup — the repository's files, the standard library, the packages
//! the repository declares and the packages installed — never by importing anything.
//!
//! Pure: it reads source text and tables. The installed packages come from `python_run.rs`,
//! the one part that starts a process.

use std::collections::{BTreeSet, HashMap, HashSet};

use tree_sitter::{Node, Parser};

use super::facts::{
    Arg, ArgKind, Call, DynamicHow, DynamicModule, DynamicName, Facts, Import, Input, ParseError,
    Ref,
};

/// Whether a qualified name is an input source, and how far from the program: (name, whether
/// its first name is bound nowhere in the file, the file's imports).
pub(crate) type SourceOf<'a> = dyn Fn(&str, bool, &[Import]) -> Option<Input> + 'a;

/// Parses a file; the first syntax error ends it (L0).
pub(crate) fn parse(src: &str, is_source: &SourceOf<'_>) -> Result<Facts, ParseError> {
    parse_with(src, is_source, &|_| false)
}

/// As `parse`, with calls that clean a value (escaping, confinement): what they return is not
/// tainted.
pub(crate) fn parse_with(
    src: &str,
    is_source: &SourceOf<'_>,
    is_sanitizer: &dyn Fn(&str) -> bool,
) -> Result<Facts, ParseError> {
    let r = read(src, is_source, is_sanitizer);
    match r.error {
        Some(e) => Err(e),
        None => Ok(r.facts),
    }
}

/// What could be read of a file that may not parse.
#[derive(Debug)]
pub(crate) struct Reading {
    pub facts: Facts,
    /// tree-sitter's first syntax error: the facts are what its error recovery kept.
    pub error: Option<ParseError>,
}

/// Reads a file even when it does not parse: tree-sitter recovers from a syntax error and
/// keeps the statements around it, so a file with one slip, or a patch fragment, still shows
/// its calls, imports and literals (L3 scores them; L0 has already failed it).
pub(crate) fn read(
    src: &str,
    is_source: &SourceOf<'_>,
    is_sanitizer: &dyn Fn(&str) -> bool,
) -> Reading {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("the bundled grammar matches the tree-sitter version");
    let Some(tree) = parser.parse(src, None) else {
        return Reading {
            facts: Facts::default(),
            error: Some(ParseError {
                line: 1,
                message: "the parser gave up".into(),
            }),
        };
    };
    let root = tree.root_node();
    let error = root.has_error().then(|| first_error(root, src.as_bytes()));
    let mut w = Walker {
        src: src.as_bytes(),
        aliases: HashMap::new(),
        facts: Facts::default(),
        is_source,
        is_sanitizer,
        bound: HashSet::new(),
        held: vec![HashMap::new()],
        scopes: vec![HashMap::new()],
        module_classes: HashSet::new(),
    };
    w.collect_imports(root);
    w.collect_bound(root);
    w.collect_module_classes(root);
    w.defs(root);
    w.walk(root);
    Reading {
        facts: w.facts,
        error,
    }
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

/// The name an attribute or subscript chain starts from (`d` of `d["k"].x`), if a name.
fn chain_root(n: Node) -> Option<Node> {
    let mut r = n;
    while matches!(r.kind(), "attribute" | "subscript") {
        r = r
            .child_by_field_name("object")
            .or_else(|| r.child_by_field_name("value"))?;
    }
    (r.kind() == "identifier").then_some(r)
}

/// The name of `a.b.c`, a chain of attributes only (no call or subscript in it).
fn attribute_root(mut n: Node) -> Option<Node> {
    while n.kind() == "attribute" {
        n = n.child_by_field_name("object")?;
    }
    (n.kind() == "identifier").then_some(n)
}

fn children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// `x` of `((x))`: a string split over lines is often wrapped in parentheses.
fn unparenthesised(mut n: Node) -> Node {
    while n.kind() == "parenthesized_expression" {
        match children(n).first() {
            Some(c) => n = *c,
            None => break,
        }
    }
    n
}

/// Taint bits: from an outside input source, from a function parameter, from a local source
/// (the environment: tainted, not input).
const SOURCE: u8 = 1;
const PARAM: u8 = 2;
const LOCAL: u8 = 32;
/// Not taint: the name holds text built from pieces (`sql = "…" % x`, `q += " AND " + y`),
/// so passing it on is passing a formatted string.
const FORMATTED: u8 = 4;
/// Not taint: the name holds a constant string (`query = "SELECT … %d"`), so `query % n`
/// formats text rather than taking a remainder.
const TEXT: u8 = 8;
/// Not taint: the name holds a compiled code object (`code = compile(…)`, a parameter typed
/// `CodeType`), so running it is not building code from text: `compile` was that step.
const CODE: u8 = 16;
const TAINT: u8 = SOURCE | PARAM | LOCAL;

/// Builtins whose value is a number or a truth value whatever their argument holds: a count of
/// request items (`"?" * len(ids)`) cannot carry the items' text anywhere.
const COUNTS: [&str; 8] = [
    "len",
    "isinstance",
    "issubclass",
    "hasattr",
    "callable",
    "id",
    "hash",
    "bool",
];

/// The taint bit of a source, by how far from the program it is.
fn source_bits(input: Option<Input>) -> u8 {
    match input {
        Some(Input::Outside) => SOURCE,
        Some(Input::Local) => LOCAL,
        None => 0,
    }
}

struct Walker<'a> {
    src: &'a [u8],
    /// local name → qualified name, from the imports
    aliases: HashMap<String, String>,
    facts: Facts,
    is_source: &'a SourceOf<'a>,
    is_sanitizer: &'a dyn Fn(&str) -> bool,
    /// Names the file binds anywhere (assigned, a parameter, defined, imported, a loop or `as`
    /// target): a chain whose first name is not among them is free, a global of a fragment
    /// whose imports are elsewhere (`request.args` in a view cut out of its module).
    bound: HashSet<String>,
    /// Tainted names per function scope (innermost last), with where their taint comes from,
    /// and whether they hold formatted text.
    scopes: Vec<HashMap<String, u8>>,
    /// Per function scope: names holding a call's value (indices into `facts.calls`), so
    /// that where the value goes later is part of what the call is for (`v =
    /// random.random()` … `session["token"] = v`).
    held: Vec<HashMap<String, Vec<usize>>>,
    /// Classes of this file that are module types (`class _LazyModule(types.ModuleType)` and
    /// its subclasses): building one under a submodule's name makes that submodule.
    module_classes: HashSet<String>,
}

/// A `sys.modules` key or a module object's name, read off the source.
enum ModuleKey {
    /// A constant: `"pkg.compat"`.
    Literal(String),
    /// The file's own module name followed by this: `__name__ + ".moves"` is `.moves`.
    Own(String),
    /// Anything computed otherwise.
    Opaque,
}

impl<'a> Walker<'a> {
    fn text(&self, n: Node) -> &'a str {
        n.utf8_text(self.src).unwrap_or("")
    }

    /// A module name as Python reads it: whitespace and line continuations between dots and
    /// names are legal (`from . data import x`, `from .. pkg . sub import y`) but are no part
    /// of the name, and would leave it resolving nowhere.
    fn dotted(&self, n: Node) -> String {
        match n.kind() {
            "dotted_name" => children(n)
                .into_iter()
                .filter(|c| c.kind() == "identifier")
                .map(|c| self.text(c))
                .collect::<Vec<_>>()
                .join("."),
            "relative_import" => {
                let mut out = String::new();
                for c in children(n) {
                    match c.kind() {
                        "import_prefix" => out.extend(self.text(c).chars().filter(|c| *c == '.')),
                        "dotted_name" => out.push_str(&self.dotted(c)),
                        _ => {}
                    }
                }
                out
            }
            _ => self
                .text(n)
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '\\')
                .collect(),
        }
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
                                    .map(|x| self.dotted(x))
                                    .unwrap_or_default(),
                                c.child_by_field_name("alias")
                                    .map(|x| self.text(x).to_string()),
                            ),
                            _ => (self.dotted(c), None),
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
                        .map(|x| self.dotted(x))
                        .unwrap_or_default();
                    let mut names = Vec::new();
                    let mut c = n.walk();
                    for name in n.children_by_field_name("name", &mut c) {
                        let (orig, local) = match name.kind() {
                            "aliased_import" => {
                                let o = name
                                    .child_by_field_name("name")
                                    .map(|x| self.dotted(x))
                                    .unwrap_or_default();
                                let l = name
                                    .child_by_field_name("alias")
                                    .map(|x| self.text(x).to_string())
                                    .unwrap_or_else(|| o.clone());
                                (o, l)
                            }
                            _ => (self.dotted(name), self.dotted(name)),
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

    fn collect_bound(&mut self, root: Node) {
        fn targets(w: &Walker, n: Node, out: &mut HashSet<String>) {
            match n.kind() {
                "identifier" => {
                    out.insert(w.text(n).to_string());
                }
                "pattern_list"
                | "tuple_pattern"
                | "list_pattern"
                | "list_splat_pattern"
                | "parenthesized_expression"
                | "tuple"
                | "list"
                | "as_pattern_target" => {
                    for c in children(n) {
                        targets(w, c, out);
                    }
                }
                _ => {}
            }
        }
        let mut out: HashSet<String> = self.aliases.keys().cloned().collect();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            let field = |f: &str| n.child_by_field_name(f);
            match n.kind() {
                "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                    if let Some(l) = field("left") {
                        targets(self, l, &mut out);
                    }
                }
                "named_expression" | "function_definition" | "class_definition" => {
                    if let Some(l) = field("name") {
                        targets(self, l, &mut out);
                    }
                    out.extend(self.params_of(n));
                }
                "lambda" => out.extend(self.params_of(n)),
                "as_pattern" => {
                    if let Some(t) = children(n).last() {
                        targets(self, *t, &mut out);
                    }
                }
                "global_statement" | "nonlocal_statement" => {
                    for c in children(n) {
                        targets(self, c, &mut out);
                    }
                }
                _ => {}
            }
            stack.extend(children(n));
        }
        self.bound = out;
    }

    /// Whether a chain's first name is free in the file (see `bound`).
    fn free_root(&self, n: Node) -> bool {
        chain_root(n).is_some_and(|r| !self.bound.contains(self.text(r)))
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

    /// Module types of this file: classes whose bases are `types.ModuleType` or another module
    /// type of the file, however deep (six: `_MovedItems` ← `_LazyModule` ← `types.ModuleType`).
    fn collect_module_classes(&mut self, root: Node) {
        let mut classes: Vec<(String, Vec<String>)> = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if n.kind() == "class_definition"
                && let Some(name) = n.child_by_field_name("name")
            {
                let bases = n
                    .child_by_field_name("superclasses")
                    .map(|b| {
                        children(b)
                            .into_iter()
                            .filter_map(|b| self.qualify(b))
                            .collect()
                    })
                    .unwrap_or_default();
                classes.push((self.text(name).to_string(), bases));
            }
            stack.extend(children(n));
        }
        loop {
            let before = self.module_classes.len();
            for (name, bases) in &classes {
                if bases
                    .iter()
                    .any(|b| b == "types.ModuleType" || self.module_classes.contains(b))
                {
                    self.module_classes.insert(name.clone());
                }
            }
            if self.module_classes.len() == before {
                break;
            }
        }
    }

    /// A `sys.modules` key or a module object's name as far as it can be read off.
    fn module_key(&self, n: Node) -> ModuleKey {
        fn concat(a: ModuleKey, b: ModuleKey) -> ModuleKey {
            match (a, b) {
                (ModuleKey::Literal(x), ModuleKey::Literal(y)) => ModuleKey::Literal(x + &y),
                (ModuleKey::Own(x), ModuleKey::Literal(y)) => ModuleKey::Own(x + &y),
                _ => ModuleKey::Opaque,
            }
        }
        match n.kind() {
            "identifier" if self.text(n) == "__name__" => ModuleKey::Own(String::new()),
            "string" => {
                let mut key = ModuleKey::Literal(String::new());
                for c in children(n) {
                    key = match c.kind() {
                        "string_content" => {
                            concat(key, ModuleKey::Literal(self.text(c).to_string()))
                        }
                        // f"{__name__}.moves"
                        "interpolation" => match (&key, c.child_by_field_name("expression")) {
                            (ModuleKey::Literal(x), Some(e)) if x.is_empty() => self.module_key(e),
                            _ => ModuleKey::Opaque,
                        },
                        _ => key,
                    };
                }
                key
            }
            "concatenated_string" => children(n)
                .into_iter()
                .map(|c| self.module_key(c))
                .reduce(concat)
                .unwrap_or(ModuleKey::Opaque),
            "parenthesized_expression" => children(n)
                .first()
                .map_or(ModuleKey::Opaque, |c| self.module_key(*c)),
            "binary_operator" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o));
                let (Some(l), Some(r)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) else {
                    return ModuleKey::Opaque;
                };
                match op {
                    Some("+") => concat(self.module_key(l), self.module_key(r)),
                    // "%s.moves" % __name__
                    Some("%") => match (self.module_key(l), self.module_key(r)) {
                        (ModuleKey::Literal(f), ModuleKey::Own(o)) if o.is_empty() => f
                            .strip_prefix("%s")
                            .filter(|rest| !rest.contains('%'))
                            .map_or(ModuleKey::Opaque, |rest| ModuleKey::Own(rest.into())),
                        _ => ModuleKey::Opaque,
                    },
                    _ => ModuleKey::Opaque,
                }
            }
            _ => ModuleKey::Opaque,
        }
    }

    /// Records a module made at run time under `key`.
    fn made(&mut self, key: ModuleKey, how: DynamicHow, at: Node) {
        let name = match key {
            ModuleKey::Literal(s) if !s.is_empty() => Some(DynamicName::Named(s)),
            ModuleKey::Literal(_) => None,
            ModuleKey::Own(s) => match s.strip_prefix('.') {
                Some(rest) if !rest.is_empty() => Some(DynamicName::Below(rest.to_string())),
                // `sys.modules[__name__] = obj`: the module swaps itself for an object whose
                // attributes may pass for submodules
                None if s.is_empty() && how == DynamicHow::SysModules => {
                    Some(DynamicName::AnyBelow)
                }
                // `__name__ + "_compat"` names a sibling, not a module below this one
                _ => None,
            },
            // whatever its key, a `sys.modules` entry or an importer serves imports; a module
            // object built under a computed name may never be registered at all
            ModuleKey::Opaque if how != DynamicHow::ModuleObject => Some(DynamicName::AnyBelow),
            ModuleKey::Opaque => None,
        };
        if let Some(name) = name {
            self.facts.dynamic_modules.push(DynamicModule {
                name,
                how,
                line: line(at),
            });
        }
    }

    /// `sys.modules[KEY] = …`, `sys.meta_path = […]` (or `+=`).
    fn assigned_module(&mut self, left: Node) {
        match left.kind() {
            "subscript"
                if left
                    .child_by_field_name("value")
                    .and_then(|v| self.qualify(v))
                    .as_deref()
                    == Some("sys.modules") =>
            {
                let key = left
                    .child_by_field_name("subscript")
                    .map_or(ModuleKey::Opaque, |k| self.module_key(k));
                self.made(key, DynamicHow::SysModules, left);
            }
            "attribute" if self.qualify(left).as_deref() == Some("sys.meta_path") => {
                self.made(ModuleKey::Opaque, DynamicHow::ImportHook, left);
            }
            _ => {}
        }
    }

    /// Calls that make modules: `sys.modules.setdefault(KEY, m)`, `sys.modules.update(…)`, an
    /// importer added to `sys.meta_path`, a module object built under a name.
    fn called_module(&mut self, n: Node) {
        let Some(callee) = n
            .child_by_field_name("function")
            .and_then(|f| self.qualify(f))
        else {
            return;
        };
        let first = n.child_by_field_name("arguments").and_then(|a| {
            children(a)
                .into_iter()
                .find(|c| !matches!(c.kind(), "keyword_argument" | "comment"))
        });
        let key = |w: &Self| first.map_or(ModuleKey::Opaque, |k| w.module_key(k));
        match callee.as_str() {
            "sys.modules.setdefault" | "sys.modules.__setitem__" => {
                self.made(key(self), DynamicHow::SysModules, n);
            }
            "sys.modules.update" => self.made(ModuleKey::Opaque, DynamicHow::SysModules, n),
            "sys.meta_path.append" | "sys.meta_path.insert" | "sys.meta_path.extend" => {
                self.made(ModuleKey::Opaque, DynamicHow::ImportHook, n);
            }
            c if c == "types.ModuleType" || self.module_classes.contains(c) => {
                self.made(key(self), DynamicHow::ModuleObject, n);
            }
            _ => {}
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
                let local = self.bits_of(t) & TAINT;
                local
                    | self.aliases.get(t).map_or(0, |q| {
                        source_bits((self.is_source)(q, false, &self.facts.imports))
                    })
            }
            "attribute" => {
                let own = self.qualify(n).map_or(0, |q| {
                    source_bits((self.is_source)(&q, self.free_root(n), &self.facts.imports))
                });
                // a member of an imported object, read by attributes only (`request.method` of
                // flask's request): the source tables say whether that member is input, so the
                // object's taint (the whole request is a source) does not decide it
                let imported_chain = attribute_root(n).is_some_and(|r| {
                    let name = self.text(r);
                    self.aliases.contains_key(name) && self.bits_of(name) & TAINT == 0
                });
                if imported_chain {
                    own
                } else {
                    own | n.child_by_field_name("object").map_or(0, |o| self.taint(o))
                }
            }
            "call" => {
                let callee = n
                    .child_by_field_name("function")
                    .and_then(|f| self.qualify(f));
                if callee
                    .as_deref()
                    .is_some_and(|q| (self.is_sanitizer)(q) || COUNTS.contains(&q))
                {
                    return 0;
                }
                let free = n
                    .child_by_field_name("function")
                    .is_some_and(|f| self.free_root(f));
                let own = callee.as_deref().map_or(0, |q| {
                    source_bits((self.is_source)(q, free, &self.facts.imports))
                });
                children(n)
                    .into_iter()
                    .fold(own, |acc, c| acc | self.taint(c))
            }
            // a count decides how often constant text repeats, not what it says
            "binary_operator" if self.repeats_text(n) => 0,
            _ => children(n)
                .into_iter()
                .fold(0, |acc, c| acc | self.taint(c)),
        }
    }

    /// `"…" * n` or `n * "…"`: a string literal repeated, or a list or tuple of them
    /// (`["col = ?"] * len(ids)`).
    fn repeats_text(&self, n: Node) -> bool {
        let op = n.child_by_field_name("operator").map(|o| self.text(o));
        let literal = |s: Node| {
            matches!(s.kind(), "string" | "concatenated_string")
                && self.arg_kind(s) == ArgKind::Literal
        };
        let plain = |side: Option<Node>| {
            side.map(unparenthesised).is_some_and(|s| {
                literal(s)
                    || (matches!(s.kind(), "list" | "tuple")
                        && s.named_child_count() > 0
                        && children(s).into_iter().all(literal))
            })
        };
        n.kind() == "binary_operator"
            && op == Some("*")
            && (plain(n.child_by_field_name("left")) || plain(n.child_by_field_name("right")))
    }

    fn arg(&self, name: Option<String>, v: Node) -> Arg {
        let t = self.taint(v);
        Arg {
            name,
            text: self.text(v).to_string(),
            kind: self.arg_kind(v),
            tainted: t != 0,
            from_parameter: t & PARAM != 0,
            from_input: t & SOURCE != 0,
        }
    }

    /// What the innermost scope knows of a name (taint, FORMATTED, TEXT bits; 0 if nothing).
    fn bits_of(&self, name: &str) -> u8 {
        self.scopes
            .last()
            .and_then(|s| s.get(name))
            .copied()
            .unwrap_or(0)
    }

    fn arg_kind(&self, n: Node) -> ArgKind {
        match n.kind() {
            "identifier" => {
                let bits = self.bits_of(self.text(n));
                if bits & FORMATTED != 0 {
                    ArgKind::Formatted
                } else if bits & CODE != 0 {
                    ArgKind::Code
                } else {
                    ArgKind::Other
                }
            }
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
                let (left, right) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                );
                let literal =
                    |side: Option<Node>| side.is_some_and(|s| self.arg_kind(s) == ArgKind::Literal);
                // `"\n" * n` repeats constant text, `"a" + "b"` joins it: nothing in it is data
                if self.repeats_text(n) || (op == "+" && literal(left) && literal(right)) {
                    return ArgKind::Literal;
                }
                let holds_text =
                    |s: Node| s.kind() == "identifier" && self.bits_of(self.text(s)) & TEXT != 0;
                let stringy = |side: Option<Node>| {
                    side.is_some_and(|s| {
                        matches!(unparenthesised(s).kind(), "string" | "concatenated_string")
                            || holds_text(s)
                            || self.arg_kind(s) == ArgKind::Formatted
                    })
                };
                if (op == "%" || op == "+") && (stringy(left) || stringy(right)) {
                    ArgKind::Formatted
                } else {
                    ArgKind::Other
                }
            }
            "call" => {
                let f = n.child_by_field_name("function");
                let is_str_method = f.is_some_and(|f| {
                    f.kind() == "attribute"
                        && f.child_by_field_name("object").is_some_and(|o| {
                            matches!(unparenthesised(o).kind(), "string" | "concatenated_string")
                        })
                        && f.child_by_field_name("attribute")
                            .is_some_and(|a| matches!(self.text(a), "format" | "join"))
                });
                // `", ".join("?" * len(ids))`: constant text joined to itself, placeholders
                let joins_constant_text = is_str_method
                    && f.and_then(|f| f.child_by_field_name("attribute"))
                        .is_some_and(|a| self.text(a) == "join")
                    && n.child_by_field_name("arguments")
                        .map(children)
                        .is_some_and(|a| {
                            a.len() == 1
                                && a[0].kind() == "binary_operator"
                                && self.repeats_text(a[0])
                        });
                if joins_constant_text {
                    ArgKind::Literal
                } else if is_str_method {
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
            .or_else(|| self.looked_up(f))
            .unwrap_or_else(|| format!("({})", self.text(f).chars().take(40).collect::<String>()));
        let mut args = Vec::new();
        let last = name.rsplit('.').next().unwrap_or(&name).to_string();
        if let Some(list) = n.child_by_field_name("arguments") {
            for a in children(list) {
                self.passed(a, std::slice::from_ref(&last));
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
        let receiver = (f.kind() == "attribute")
            .then(|| f.child_by_field_name("object"))
            .flatten()
            .map(|o| self.arg(None, o));
        let context = self.context_of(n);
        self.facts.calls.push(Call {
            name,
            line: line(n),
            end_line: n.end_position().row as u32 + 1,
            args,
            receiver,
            context,
        });
    }

    /// A callee looked up by a constant key, `table[key]` (Salt's `__salt__["cmd.run"](…)`):
    /// named `table[key]`, the key unquoted.
    fn looked_up(&self, f: Node) -> Option<String> {
        if f.kind() != "subscript" {
            return None;
        }
        let table = self.qualify(f.child_by_field_name("value")?)?;
        let key = f.child_by_field_name("subscript")?;
        let text = self.text(key);
        (key.kind() == "string" && self.arg_kind(key) == ArgKind::Literal)
            .then(|| format!("{table}[{}]", text.trim_matches(['"', '\''])))
    }

    /// What a call's value is for, in names: up through the expression it is part of to the
    /// assignment, keyword, dictionary key or `return` it feeds, and the functions around it.
    fn context_of(&self, call: Node) -> Vec<String> {
        let mut out = Vec::new();
        let mut in_expression = true;
        let mut n = call;
        while let Some(p) = n.parent() {
            match p.kind() {
                "assignment" | "augmented_assignment" | "named_expression" if in_expression => {
                    let target = p
                        .child_by_field_name("left")
                        .or_else(|| p.child_by_field_name("name"));
                    if let Some(t) = target.filter(|t| *t != n) {
                        out.push(self.text(t).to_string());
                    }
                    in_expression = false;
                }
                "keyword_argument" if in_expression => {
                    if let Some(k) = p.child_by_field_name("name") {
                        out.push(self.text(k).to_string());
                    }
                }
                "pair" if in_expression => {
                    if let Some(k) = p.child_by_field_name("key").filter(|k| *k != n) {
                        out.push(self.text(k).trim_matches(['"', '\'']).to_string());
                    }
                }
                "function_definition" => {
                    if let Some(k) = p.child_by_field_name("name") {
                        out.push(self.text(k).to_string());
                    }
                    in_expression = false;
                }
                "class_definition" | "module" => break,
                k if k.ends_with("_statement") || k == "block" => in_expression = false,
                _ => {}
            }
            n = p;
        }
        out
    }

    /// Marks the names an assignment binds as tainted when its value is, and as formatted
    /// text when it is built from pieces. `augmented` (`+=`): the old value stays part of it.
    fn assign(&mut self, left: Node, right: Node, augmented: bool) {
        let t = self.taint(right);
        let built = match self.arg_kind(right) {
            ArgKind::Formatted => true,
            // `q += x` on a name holding a query: still one built from pieces
            _ => augmented && self.arg_kind(left) == ArgKind::Formatted,
        };
        let constant_text = !augmented
            && matches!(
                unparenthesised(right).kind(),
                "string" | "concatenated_string"
            )
            && !built;
        let compiled = !augmented && self.is_compile_call(unparenthesised(right));
        let mut ids = Vec::new();
        match left.kind() {
            "identifier" => ids.push(self.text(left).to_string()),
            "pattern_list" | "tuple_pattern" | "list_pattern" => self.idents(left, &mut ids),
            _ => {}
        }
        let scope = self.scopes.last_mut().expect("a scope");
        for id in ids {
            let bits = scope.entry(id.clone()).or_default();
            *bits |= t;
            if built && left.kind() == "identifier" {
                *bits |= FORMATTED;
            } else if !augmented {
                *bits &= !FORMATTED;
            }
            if constant_text && left.kind() == "identifier" {
                *bits |= TEXT;
            } else if !augmented {
                *bits &= !TEXT;
            }
            if compiled && left.kind() == "identifier" {
                *bits |= CODE;
            } else if !augmented {
                *bits &= !CODE;
            }
            if *bits == 0 {
                scope.remove(&id);
            }
        }
    }

    /// `compile(…)`, the builtin, or `code.replace(…)` of a code object: a code object.
    fn is_compile_call(&self, n: Node) -> bool {
        let Some(f) = n
            .child_by_field_name("function")
            .filter(|_| n.kind() == "call")
        else {
            return false;
        };
        let of_code = f.kind() == "attribute"
            && f.child_by_field_name("attribute")
                .is_some_and(|a| self.text(a) == "replace")
            && f.child_by_field_name("object").is_some_and(|o| {
                o.kind() == "identifier" && self.bits_of(self.text(o)) & CODE != 0
            });
        of_code
            || self
                .qualify(f)
                .is_some_and(|q| q == "compile" || q == "builtins.compile")
    }

    /// After `left = right`: `left` holds the values of the calls made in `right` (those
    /// recorded from `before` on) or of the name `right` is; anything else clears it.
    fn hold(&mut self, left: Node, right: Node, before: usize) {
        if left.kind() != "identifier" {
            return;
        }
        let mut made: Vec<usize> = (before..self.facts.calls.len()).collect();
        if right.kind() == "identifier"
            && let Some(v) = self.held.last().and_then(|h| h.get(self.text(right)))
        {
            made.extend(v);
        }
        let id = self.text(left).to_string();
        let held = self.held.last_mut().expect("a scope");
        if made.is_empty() {
            held.remove(&id);
        } else {
            held.insert(id, made);
        }
    }

    /// A value given to a call or a store: the calls whose values its names hold are for
    /// that too (`set_cookie`, `session`, the key `token`).
    fn passed(&mut self, value: Node, words: &[String]) {
        let Some(held) = self.held.last().filter(|h| !h.is_empty()) else {
            return;
        };
        let mut ids = Vec::new();
        self.idents(value, &mut ids);
        let calls: Vec<usize> = ids
            .iter()
            .filter_map(|i| held.get(i))
            .flatten()
            .copied()
            .collect();
        for i in calls {
            let ctx = &mut self.facts.calls[i].context;
            for w in words {
                if !w.is_empty() && !ctx.contains(w) {
                    ctx.push(w.clone());
                }
            }
        }
    }

    /// `obj[key] = value`: a pseudo-call `obj.__setitem__(key, value)`, as Python runs it
    /// (`session["user"] = name` stores into the session), and `obj` now holds the value.
    fn store(&mut self, assignment: Node, target: Node, value: Node) {
        let (Some(object), Some(key)) = (
            target.child_by_field_name("value"),
            target.child_by_field_name("subscript"),
        ) else {
            return;
        };
        if let Some(q) = self.qualify(object) {
            let key_text = self.text(key).trim_matches(['"', '\'']).to_string();
            let last = q.rsplit('.').next().unwrap_or(&q).to_string();
            self.passed(value, &[last, key_text]);
            let args = vec![self.arg(None, key), self.arg(None, value)];
            self.facts.calls.push(Call {
                name: format!("{q}.__setitem__"),
                line: line(assignment),
                end_line: assignment.end_position().row as u32 + 1,
                args,
                receiver: None,
                context: self.context_of(assignment),
            });
        }
        self.taint_root(object, self.taint(value));
    }

    /// A container a value is put into carries its taint: `lst.append(x)`, `d.update(x)`.
    fn mutated(&mut self, call: Node) {
        let Some(f) = call
            .child_by_field_name("function")
            .filter(|f| f.kind() == "attribute")
        else {
            return;
        };
        let (Some(object), Some(method)) = (
            f.child_by_field_name("object"),
            f.child_by_field_name("attribute"),
        ) else {
            return;
        };
        let buffer_write = matches!(self.text(method), "write" | "writelines")
            // a local buffer (`buf = io.StringIO(); buf.write(x)`), not `self.wfile` or
            // `sys.stdout`, whose root names much more than the text written
            && object.kind() == "identifier"
            && self.text(object) != "self";
        if !buffer_write
            && !matches!(
                self.text(method),
                "append" | "extend" | "insert" | "add" | "update" | "setdefault" | "appendleft"
            )
        {
            return;
        }
        let t = call
            .child_by_field_name("arguments")
            .map_or(0, |a| self.taint(a));
        self.taint_root(object, t);
    }

    /// Adds taint to the name an object expression starts from (`d` of `d["k"].x`).
    fn taint_root(&mut self, object: Node, t: u8) {
        if t == 0 {
            return;
        }
        if let Some(r) = chain_root(object) {
            let id = self.text(r).to_string();
            let scope = self.scopes.last_mut().expect("a scope");
            *scope.entry(id).or_default() |= t;
        }
    }

    /// The parameters typed `CodeType` (`def runcode(self, code: CodeType)`).
    fn code_params_of(&self, f: Node) -> Vec<String> {
        let Some(ps) = f.child_by_field_name("parameters") else {
            return Vec::new();
        };
        children(ps)
            .into_iter()
            .filter(|p| matches!(p.kind(), "typed_parameter" | "typed_default_parameter"))
            .filter(|p| {
                p.child_by_field_name("type").is_some_and(|t| {
                    self.text(t)
                        .trim_end_matches(['"', '\''])
                        .ends_with("CodeType")
                })
            })
            .filter_map(|p| {
                p.child_by_field_name("name")
                    .or_else(|| children(p).into_iter().find(|c| c.kind() == "identifier"))
            })
            .map(|n| self.text(n).to_string())
            .collect()
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
                if n.kind() == "function_definition" && self.scopes.len() == 1 {
                    // decorators are part of it: a route's decorator is where its input starts
                    let outer = n.parent().filter(|p| p.kind() == "decorated_definition");
                    self.facts
                        .functions
                        .push((line(outer.unwrap_or(n)), n.end_position().row as u32 + 1));
                }
                let mut scope = self.scopes.last().cloned().unwrap_or_default();
                for p in self.params_of(n) {
                    *scope.entry(p).or_default() |= PARAM;
                }
                for p in self.code_params_of(n) {
                    *scope.entry(p).or_default() |= CODE;
                }
                self.scopes.push(scope);
                self.held
                    .push(self.held.last().cloned().unwrap_or_default());
                for c in children(n) {
                    self.walk(c);
                }
                self.scopes.pop();
                self.held.pop();
                return;
            }
            "assignment" | "augmented_assignment" => {
                if let (Some(l), Some(r)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) {
                    let before = self.facts.calls.len();
                    self.walk(r);
                    self.hold(l, r, before);
                    if l.kind() == "subscript" {
                        self.store(n, l, r);
                    }
                    self.assign(l, r, n.kind() == "augmented_assignment");
                    self.assigned_module(l);
                    return;
                }
            }
            "for_statement" => {
                if let (Some(l), Some(r)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) {
                    self.assign(l, r, false);
                }
            }
            "with_item" | "as_pattern" => {
                // `with open(p) as f`: f carries p's taint
                let kids = children(n);
                if kids.len() >= 2 {
                    let (value, target) = (kids[0], kids[kids.len() - 1]);
                    if n.kind() == "as_pattern" {
                        self.assign(target, value, false);
                    }
                }
            }
            "call" => {
                self.record_call(n);
                self.called_module(n);
                self.mutated(n);
            }
            "expression_statement" => {
                let kids = children(n);
                if let [only] = kids.as_slice()
                    && matches!(only.kind(), "string" | "concatenated_string")
                {
                    self.facts
                        .docstrings
                        .push((only.start_byte(), only.end_byte()));
                }
            }
            "return_statement" => {
                // a pseudo-call `return(value)`: what a function hands back (a view's
                // response) can be a sink like any call's argument
                if let Some(v) = children(n).into_iter().find(|c| c.kind() != "comment") {
                    let arg = self.arg(None, v);
                    self.facts.calls.push(Call {
                        name: "return".into(),
                        line: line(n),
                        end_line: n.end_position().row as u32 + 1,
                        args: vec![arg],
                        receiver: None,
                        context: self.context_of(n),
                    });
                }
            }
            "attribute" => {
                let is_inner = n.parent().is_some_and(|p| {
                    p.kind() == "attribute" && p.child_by_field_name("object") == Some(n)
                });
                if !is_inner && let Some(q) = self.qualify(n) {
                    self.facts.refs.push(Ref {
                        name: q,
                        line: line(n),
                        free: self.free_root(n),
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
                    // the object of an attribute: the chain's own reference names what is read
                    // (`request.method`, which a source may except), not the whole object
                    let object_of_attribute = n.parent().is_some_and(|p| {
                        p.kind() == "attribute" && p.child_by_field_name("object") == Some(n)
                    });
                    if !in_import && !object_of_attribute {
                        self.facts.refs.push(Ref {
                            name: q.clone(),
                            line: line(n),
                            free: false,
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
pub(crate) struct ImportEnv<'a> {
    /// Dotted module paths the repository provides, from every plausible root.
    repo_modules: HashSet<String>,
    /// Directories (as `/` paths) of the repository, for relative imports.
    repo_files: HashSet<String>,
    stdlib: HashSet<String>,
    declared: HashSet<String>,
    installed: Option<HashSet<String>>,
    /// Where `installed` comes from: `python_run` unless a test says otherwise.
    list_installed: fn() -> Option<HashSet<String>>,
    /// A file's content at the tip.
    read: &'a dyn Fn(&str) -> Option<String>,
    /// The modules each repository file makes at run time, read on first need.
    made: HashMap<String, Vec<DynamicModule>>,
    pub notes: Vec<String>,
}

/// Why an import does not resolve.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Unresolved {
    pub module: String,
    pub line: u32,
}

/// An import that reaches a module a repository file makes at run time (six's `moves`, an
/// alias put into `sys.modules`): no file to look up, so not checked — and not a failure.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Dynamic {
    pub module: String,
    pub line: u32,
    /// The repository file whose source makes the module, and the line that does.
    pub created_by: String,
    pub created_line: u32,
    pub how: DynamicHow,
}

/// What became of a file's imports.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Checked {
    /// Resolve nowhere: L1 fails.
    pub unresolved: Vec<Unresolved>,
    /// Reach a module made at run time: listed, not checked.
    pub dynamic: Vec<Dynamic>,
}

/// One import looked up.
enum Lookup {
    Found,
    /// Through a module that `file` makes at run time.
    Dynamic {
        file: String,
        made: DynamicModule,
    },
    Missing,
}

impl<'a> ImportEnv<'a> {
    /// `paths`: every file of the tip tree; `read`: a file's content at the tip (the
    /// dependency declarations, and the files an import passes through); tables from
    /// templates/screen/python/.
    pub(crate) fn new(
        paths: &[String],
        read: &'a dyn Fn(&str) -> Option<String>,
        stdlib_txt: &str,
        dist: &HashMap<String, Vec<String>>,
    ) -> ImportEnv<'a> {
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
            read,
            made: HashMap::new(),
            notes: Vec::new(),
        }
    }

    /// Lists installed packages with `list` instead of asking `python3` (tests, or a caller
    /// that knows better).
    #[cfg(test)]
    pub(crate) fn with_installed(mut self, list: fn() -> Option<HashSet<String>>) -> Self {
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

    /// A file's (at `path`) imports that resolve nowhere, and those that reach a module made
    /// at run time.
    pub(crate) fn check(&mut self, path: &str, imports: &[Import]) -> Checked {
        let mut out = Checked::default();
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        for i in imports.iter().filter(|i| !i.optional) {
            let found = if i.module.starts_with('.') {
                self.relative(dir, i)
            } else {
                self.absolute(i)
            };
            match found {
                Lookup::Found => {}
                Lookup::Missing => out.unresolved.push(Unresolved {
                    module: i.module.clone(),
                    line: i.line,
                }),
                Lookup::Dynamic { file, made } => out.dynamic.push(Dynamic {
                    module: i.module.clone(),
                    line: i.line,
                    created_by: file,
                    created_line: made.line,
                    how: made.how,
                }),
            }
        }
        out
    }

    fn absolute(&mut self, i: &Import) -> Lookup {
        let top = i.module.split('.').next().unwrap_or("");
        if top == "__future__" || self.stdlib.contains(top) || self.declared.contains(top) {
            return Lookup::Found;
        }
        if self.repo_modules.contains(top) {
            // the repository's own package: the submodule (or a name in it) must exist
            let ok = self.repo_modules.contains(&i.module)
                || (!i.names.is_empty()
                    && i.names
                        .iter()
                        .all(|n| self.repo_modules.contains(&format!("{}.{n}", i.module))));
            if ok {
                return Lookup::Found;
            }
            let parts: Vec<&str> = i.module.split('.').collect();
            return self.dynamic_below(&parts, 1, false);
        }
        if self.installed().contains(top) {
            Lookup::Found
        } else {
            Lookup::Missing
        }
    }

    fn relative(&mut self, dir: &str, i: &Import) -> Lookup {
        let dots = i.module.chars().take_while(|c| *c == '.').count();
        let mut base: Vec<&str> = if dir.is_empty() {
            Vec::new()
        } else {
            dir.split('/').collect()
        };
        for _ in 1..dots {
            if base.pop().is_none() {
                return Lookup::Missing;
            }
        }
        let rest: Vec<&str> = i.module[dots..]
            .split('.')
            .filter(|s| !s.is_empty())
            .collect();
        let full: Vec<&str> = base.iter().chain(&rest).copied().collect();
        let p = full.join("/");
        if !rest.is_empty() {
            return if self.exists(&p) {
                Lookup::Found
            } else {
                self.dynamic_below(&full, base.len(), true)
            };
        }
        // `from . import x`: each x is a module of the package or a name in its __init__
        let mut found = Lookup::Found;
        for n in &i.names {
            let sub = if p.is_empty() {
                n.clone()
            } else {
                format!("{p}/{n}")
            };
            if self.exists(&sub) || self.exists(&p) {
                continue;
            }
            let mut below = full.clone();
            below.push(n);
            match self.dynamic_below(&below, base.len(), true) {
                Lookup::Missing => return Lookup::Missing,
                d => found = d,
            }
        }
        found
    }

    /// A module or package of the repository at the `/`-path `p`.
    fn exists(&self, p: &str) -> bool {
        self.repo_files.contains(&format!("{p}.py"))
            || self.repo_files.contains(&format!("{p}/__init__.py"))
            || self
                .repo_files
                .iter()
                .any(|f| f.starts_with(&format!("{p}/")))
    }

    /// Whether an import that no file provides passes through a module that a repository file
    /// makes at run time: a prefix of `full` (the import's parts; for a relative import, the
    /// directories first) at least `first` parts long that has a file of its own whose source
    /// makes the rest. Python can import what that file puts into `sys.modules` or serves
    /// through an importer, though no file of that name exists; what is below it can only be
    /// known by running the code, so it is listed rather than failed. Only the files on the
    /// import's own path are read: that is where Python looks, and it keeps this cheap.
    fn dynamic_below(&mut self, full: &[&str], first: usize, relative: bool) -> Lookup {
        for k in first.max(1)..full.len() {
            let (prefix, rest) = full.split_at(k);
            for file in self.module_files(&prefix.join("/"), relative) {
                // the line that names the module says more than a catch-all such as six's
                // `sys.modules[fullname] = mod`
                let made = self.made_by(&file);
                let hit = made
                    .iter()
                    .find(|m| {
                        m.name != DynamicName::AnyBelow && makes(&m.name, prefix, rest, relative)
                    })
                    .or_else(|| made.iter().find(|m| m.name == DynamicName::AnyBelow))
                    .cloned();
                if let Some(made) = hit {
                    return Lookup::Dynamic { file, made };
                }
            }
        }
        Lookup::Missing
    }

    /// The `.py` files of the module at `/`-path `stem`: exactly there for a relative import,
    /// under any root for an absolute one.
    fn module_files(&self, stem: &str, exact: bool) -> Vec<String> {
        let names = [format!("{stem}.py"), format!("{stem}/__init__.py")];
        let mut out: Vec<String> = if exact {
            names
                .into_iter()
                .filter(|n| self.repo_files.contains(n))
                .collect()
        } else {
            self.repo_files
                .iter()
                .filter(|f| {
                    names
                        .iter()
                        .any(|n| f.as_str() == n || f.ends_with(&format!("/{n}")))
                })
                .cloned()
                .collect()
        };
        out.sort();
        out
    }

    /// The modules a repository file makes at run time (none when it does not parse).
    fn made_by(&mut self, file: &str) -> &[DynamicModule] {
        if !self.made.contains_key(file) {
            let made = (self.read)(file)
                .and_then(|t| parse(&t, &|_, _, _| None).ok())
                .map(|f| f.dynamic_modules)
                .unwrap_or_default();
            self.made.insert(file.to_string(), made);
        }
        &self.made[file]
    }
}

/// Whether a module made at run time by the module `prefix` is `rest` below it or above
/// `rest`. A name given in full must name a module below `prefix`: for a relative import the
/// package's own dotted name depends on which directory is the root, so it only has to end
/// the same way.
fn makes(name: &DynamicName, prefix: &[&str], rest: &[&str], relative: bool) -> bool {
    match name {
        DynamicName::AnyBelow => true,
        DynamicName::Below(s) => {
            let s: Vec<&str> = s.split('.').collect();
            rest.starts_with(&s)
        }
        DynamicName::Named(s) => {
            let s: Vec<&str> = s.split('.').collect();
            (1..s.len()).any(|head| {
                let (own, below) = s.split_at(head);
                rest.starts_with(below)
                    && if relative {
                        prefix.ends_with(own)
                    } else {
                        prefix == own
                    }
            })
        }
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
        parse(src, &|q: &str, _, _| {
            q.starts_with("flask.request.").then_some(Input::Outside)
        })
        .unwrap()
    }

    #[test]
    fn syntax_errors_give_their_line() {
        let e = parse("def f(:\n    pass\n", &|_, _, _| None).unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("x = 1\n\nif x\n    y = 2\n", &|_, _, _| None).unwrap_err();
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
        // `sql` holds text built with `%`: passing it is passing a formatted string
        assert_eq!(
            (ex[0].args[0].kind, ex[0].args[0].tainted),
            (ArgKind::Formatted, true)
        );
        assert_eq!(ex[1].args[0].kind, ArgKind::Formatted);
        assert_eq!(ex[2].args[0].kind, ArgKind::Literal);
        assert!(f.refs.iter().any(|r| r.name == "flask.request.args.get"));
    }

    /// The kind of the first argument of each `db.execute` call in the source.
    fn execute_kinds(src: &str) -> Vec<ArgKind> {
        facts(src)
            .calls
            .iter()
            .filter(|c| c.name == "db.execute")
            .map(|c| c.args[0].kind)
            .collect()
    }

    #[test]
    fn names_holding_built_text_stay_formatted_until_reassigned() {
        let kinds = execute_kinds(
            "def q(db, k):\n    a = 'SELECT 1'\n    db.execute(a)\n    a += ' WHERE k = ' + k\n    db.execute(a)\n    b = 'x = {}'.format(k)\n    db.execute(b)\n    b = 'SELECT 2'\n    db.execute(b)\n    c = f'{k}'\n    c += ' LIMIT 1'\n    db.execute(c)\n",
        );
        use ArgKind::*;
        assert_eq!(kinds, [Other, Formatted, Formatted, Other, Formatted]);
    }

    #[test]
    fn a_name_holding_constant_text_formats_with_percent_and_splits_with_parentheses() {
        let kinds = execute_kinds(
            "def q(db, n, cmd):
    query = 'SELECT a FROM t LIMIT %d'
    db.execute(query % n)
    size = 10
    db.execute(size % n)
    query = n
    db.execute(query % n)
    c = (
        'git show '
        ':{}'
    ).format(cmd)
    db.execute(c)
",
        );
        use ArgKind::*;
        assert_eq!(kinds, [Formatted, Other, Other, Formatted]);
    }

    #[test]
    fn stores_returns_and_lookups_read_as_calls() {
        let f = facts(
            "from flask import request, session\ndef v(p):\n    box = []\n    box.append(request.args['a'])\n    session['u'] = box[0]\n    p.open()\n    __salt__['cmd.run']('ls')\n    return box\n",
        );
        let by = |n: &str| f.calls.iter().find(|c| c.name == n).unwrap();
        let store = by("flask.session.__setitem__");
        assert_eq!(store.args[0].text, "'u'");
        assert!(
            store.args[1].from_input,
            "the list holds the input it was given"
        );
        assert!(
            by("p.open")
                .receiver
                .as_ref()
                .is_some_and(|r| r.from_parameter)
        );
        assert_eq!(by("__salt__[cmd.run]").args[0].kind, ArgKind::Literal);
        assert!(by("return").args[0].from_input);
    }

    #[test]
    fn chains_on_names_the_file_never_binds_are_free() {
        let is_source = |q: &str, free: bool, _: &[Import]| {
            (free && q.starts_with("request.args")).then_some(Input::Outside)
        };
        let free = parse(
            "def view(self):\n    start = request.args.get('s')\n    self.db.execute(start)\n",
            &is_source,
        )
        .unwrap();
        let ex = free
            .calls
            .iter()
            .find(|c| c.name == "self.db.execute")
            .unwrap();
        assert!(
            ex.args[0].from_input,
            "a free `request` is the fragment's global"
        );
        assert!(
            free.refs
                .iter()
                .any(|r| r.name == "request.args.get" && r.free)
        );
        // a parameter (or an assignment, an import) anywhere in the file binds the name
        for binds in [
            "def other(request):\n    pass\n",
            "request = object()\n",
            "import request\n",
        ] {
            let src = format!(
                "{binds}\ndef view(self):\n    start = request.args.get('s')\n    self.db.execute(start)\n"
            );
            let f = parse(&src, &is_source).unwrap();
            let ex = f
                .calls
                .iter()
                .find(|c| c.name.ends_with("db.execute"))
                .unwrap();
            assert!(!ex.args[0].from_input, "{binds}");
            assert!(
                !f.refs
                    .iter()
                    .any(|r| r.free && r.name.starts_with("request")),
                "{binds}"
            );
        }
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
        let f = parse(src, &|_, _, _| None).unwrap();
        let bad: Vec<String> = env
            .check("src/shop/media.py", &f.imports)
            .unresolved
            .into_iter()
            .map(|u| u.module)
            .collect();
        assert_eq!(bad, ["shop.nothere", ".missing", "totally_made_up_pkg_xyz"]);
    }

    fn env_of<'a>(
        files: &'a HashMap<&'a str, &'a str>,
        read: &'a dyn Fn(&str) -> Option<String>,
    ) -> ImportEnv<'a> {
        let paths: Vec<String> = files.keys().map(|s| s.to_string()).collect();
        ImportEnv::new(&paths, read, "os\nsys\ntypes\n", &HashMap::new())
            .with_installed(|| Some(HashSet::new()))
    }

    /// The modules `src` imports, and what a file at `path` among `files` makes of them.
    fn checked(files: &[(&str, &str)], path: &str, src: &str) -> (Vec<String>, Checked) {
        let files: HashMap<&str, &str> = files.iter().copied().collect();
        let read = |p: &str| files.get(p).map(|s| s.to_string());
        let mut env = env_of(&files, &read);
        let f = parse(src, &|_, _, _| None).unwrap();
        let modules = f.imports.iter().map(|i| i.module.clone()).collect();
        (modules, env.check(path, &f.imports))
    }

    fn modules<T>(v: &[T], m: impl Fn(&T) -> &str) -> Vec<&str> {
        v.iter().map(m).collect()
    }

    #[test]
    fn spaces_in_relative_imports_are_no_part_of_the_name() {
        let files = [
            ("app/__init__.py", ""),
            ("app/data.py", "X = 1\n"),
            ("app/views/__init__.py", ""),
            ("app/views/data.py", "X = 1\n"),
            ("app/views/page.py", ""),
            ("app/pkg/__init__.py", ""),
            ("app/pkg/sub.py", "y = 2\n"),
            ("app/x.py", ""),
        ];
        let src = "from . data import X\nfrom .. pkg . sub import y\nfrom . import x\nfrom .  import  data\nfrom .\\\n    data import X as Z\nimport os . path\nfrom . nothere import W\nfrom .. pkg . gone import v\n\ndef f(a):\n    return X(a), y(a)\n";
        let (mods, c) = checked(&files, "app/views/page.py", src);
        assert_eq!(
            mods,
            [
                ".data",
                "..pkg.sub",
                ".",
                ".",
                ".data",
                "os.path",
                ".nothere",
                "..pkg.gone"
            ]
        );
        // one dot is the file's own package (app/views), two its parent (app)
        assert_eq!(
            modules(&c.unresolved, |u| &u.module),
            [".nothere", "..pkg.gone"]
        );
        let (_, c) = checked(&files, "app/x.py", src);
        assert_eq!(
            modules(&c.unresolved, |u| &u.module),
            ["..pkg.sub", ".nothere", "..pkg.gone"],
            "from app/, two dots leave the repository's packages"
        );
        let (_, c) = checked(
            &files,
            "app/pkg/sub.py",
            "from .. data import X\nfrom . import x\n",
        );
        assert_eq!(c, Checked::default());
        // names are qualified through the normalised module
        let f = parse(src, &|_, _, _| None).unwrap();
        let calls = modules(&f.calls, |c| &c.name);
        assert_eq!(
            calls,
            ["return", ".data.X", "..pkg.sub.y"],
            "`return` a pseudo-call"
        );
    }

    /// six's `moves`, cut down to the lines that make it: module types, a lazy module built
    /// under `__name__ + ".moves"`, and its own submodules.
    const SIX: &str = "import types\n\nclass _LazyModule(types.ModuleType):\n    pass\n\nclass _MovedItems(_LazyModule):\n    __path__ = []\n\nclass Module_six_moves_urllib(types.ModuleType):\n    pass\n\nmoves = _MovedItems(__name__ + \".moves\")\nurllib = Module_six_moves_urllib(__name__ + \".moves.urllib\")\n\ndef b(s):\n    return s\n";

    #[test]
    fn six_moves_is_dynamic_not_missing() {
        let f = parse(SIX, &|_, _, _| None).unwrap();
        assert_eq!(
            f.dynamic_modules,
            [
                DynamicModule {
                    name: DynamicName::Below("moves".into()),
                    how: DynamicHow::ModuleObject,
                    line: 12
                },
                DynamicModule {
                    name: DynamicName::Below("moves.urllib".into()),
                    how: DynamicHow::ModuleObject,
                    line: 13
                },
            ]
        );
        let files = [("six.py", SIX), ("app/__init__.py", "")];
        let src = "from six.moves import urllib\nfrom six.moves.urllib.parse import urlparse\nimport six.moves.cPickle\nimport six\nfrom six import b\nfrom six.nothere import x\n";
        let (_, c) = checked(&files, "app/net.py", src);
        assert_eq!(
            modules(&c.dynamic, |d| &d.module),
            ["six.moves", "six.moves.urllib.parse", "six.moves.cPickle"]
        );
        assert!(
            c.dynamic
                .iter()
                .all(|d| d.created_by == "six.py" && d.how == DynamicHow::ModuleObject)
        );
        assert_eq!(c.dynamic[0].created_line, 12);
        assert_eq!(
            modules(&c.unresolved, |u| &u.module),
            ["six.nothere"],
            "six makes moves, nothing else"
        );
        // six's importer stores whatever it loads (a catch-all): the line naming moves is given
        let with_loader = format!(
            "import sys\n\nclass _SixMetaPathImporter(object):\n    def load_module(self, fullname):\n        sys.modules[fullname] = fullname\n\n{SIX}"
        );
        let (_, c) = checked(&[("six.py", &with_loader)], "net.py", src);
        assert_eq!(
            (c.dynamic[0].how, c.dynamic[0].created_line),
            (DynamicHow::ModuleObject, 18)
        );
        assert_eq!(
            (c.dynamic[3].module.as_str(), c.dynamic[3].how),
            ("six.nothere", DynamicHow::SysModules),
            "but it serves any name below six"
        );
        assert!(c.unresolved.is_empty());
        // the older six puts moves straight into sys.modules
        let old = "import sys\nimport types\n\nclass _MovedItems(types.ModuleType):\n    pass\n\nsys.modules[__name__ + \".moves\"] = _MovedItems(\"moves\")\n";
        let (_, c) = checked(&[("six.py", old)], "net.py", src);
        assert_eq!(c.dynamic.len(), 3);
        assert_eq!(
            (c.dynamic[0].how, c.dynamic[0].created_line),
            (DynamicHow::SysModules, 7)
        );
    }

    #[test]
    fn a_vendored_six_makes_moves_under_its_package() {
        let files = [
            ("lib/ansible/__init__.py", ""),
            ("lib/ansible/module_utils/__init__.py", ""),
            ("lib/ansible/module_utils/six/__init__.py", SIX),
            ("lib/ansible/module_utils/urls.py", ""),
            ("src/pip/__init__.py", ""),
            ("src/pip/_vendor/__init__.py", ""),
            ("src/pip/_vendor/six.py", SIX),
        ];
        let src = "from ansible.module_utils.six.moves import http_client\nfrom .six.moves.urllib.parse import urlparse\nfrom .six import moves\nfrom pip._vendor.six.moves import urllib\nfrom ansible.module_utils.six.other import x\nfrom .six.other import y\n";
        let (_, c) = checked(&files, "lib/ansible/module_utils/urls.py", src);
        assert_eq!(
            modules(&c.dynamic, |d| &d.module),
            [
                "ansible.module_utils.six.moves",
                ".six.moves.urllib.parse",
                "pip._vendor.six.moves"
            ]
        );
        assert_eq!(
            modules(&c.dynamic, |d| &d.created_by),
            [
                "lib/ansible/module_utils/six/__init__.py",
                "lib/ansible/module_utils/six/__init__.py",
                "src/pip/_vendor/six.py"
            ]
        );
        assert_eq!(
            modules(&c.unresolved, |u| &u.module),
            ["ansible.module_utils.six.other", ".six.other"]
        );
    }

    #[test]
    fn modules_put_into_sys_modules_are_dynamic() {
        let init = "import sys\nfrom sys import modules as loaded\nfrom pkg import _impl\n\nsys.modules[__name__ + '.compat'] = _impl\nsys.modules['pkg.legacy'] = _impl\nloaded.setdefault(f'{__name__}.old', _impl)\nsys.modules['%s.older' % __name__] = _impl\nsys.modules[__name__ + '_sibling'] = _impl\nlog = make_logger(__name__ + '.quiet')\n";
        let f = parse(init, &|_, _, _| None).unwrap();
        let names: Vec<&DynamicName> = f.dynamic_modules.iter().map(|d| &d.name).collect();
        assert_eq!(
            names,
            [
                &DynamicName::Below("compat".into()),
                &DynamicName::Named("pkg.legacy".into()),
                &DynamicName::Below("old".into()),
                &DynamicName::Below("older".into()),
            ],
            "a sibling's name and a logger's are not modules below pkg"
        );
        let files = [("src/pkg/__init__.py", init), ("src/pkg/_impl.py", "")];
        let src = "from pkg.compat import thing\nimport pkg.legacy.deep\nfrom pkg.old import x\nfrom pkg.older import z\nfrom pkg.quiet import q\nfrom pkg.other import y\nfrom pkg_sibling import s\n";
        let (_, c) = checked(&files, "src/app.py", src);
        assert_eq!(
            modules(&c.dynamic, |d| &d.module),
            ["pkg.compat", "pkg.legacy.deep", "pkg.old", "pkg.older"]
        );
        assert!(c.dynamic.iter().all(|d| d.how == DynamicHow::SysModules));
        assert_eq!(
            modules(&c.unresolved, |u| &u.module),
            ["pkg.quiet", "pkg.other", "pkg_sibling"]
        );
        // a key the source does not spell out, or an importer, serves any name below
        let hook = "import sys\n\nclass Finder:\n    def load_module(self, fullname):\n        sys.modules[fullname] = object()\n\nsys.meta_path.append(Finder())\n";
        let f = parse(hook, &|_, _, _| None).unwrap();
        let hows: Vec<(DynamicHow, &DynamicName)> =
            f.dynamic_modules.iter().map(|d| (d.how, &d.name)).collect();
        assert_eq!(
            hows,
            [
                (DynamicHow::SysModules, &DynamicName::AnyBelow),
                (DynamicHow::ImportHook, &DynamicName::AnyBelow),
            ]
        );
        let (_, c) = checked(
            &[("vendor/__init__.py", hook)],
            "a.py",
            "import vendor.anything\n",
        );
        assert_eq!(modules(&c.dynamic, |d| &d.module), ["vendor.anything"]);
    }

    #[test]
    fn a_missing_module_with_nothing_dynamic_on_its_path_still_fails() {
        // six.py without the lines that make moves, and a package that makes nothing
        let files = [
            ("six.py", "def b(s):\n    return s\n"),
            ("pkg/__init__.py", "import sys\nVERSION = sys.version\n"),
            ("pkg/sub/__init__.py", SIX),
        ];
        let src = "from six.moves import urllib\nimport pkg.moves\nfrom . moves import x\nimport nowhere_xyz.moves\n";
        let (_, c) = checked(&files, "pkg/a.py", src);
        assert!(c.dynamic.is_empty(), "{:?}", c.dynamic);
        assert_eq!(
            modules(&c.unresolved, |u| &u.module),
            ["six.moves", "pkg.moves", ".moves", "nowhere_xyz.moves"],
            "pkg/sub makes moves below pkg.sub, not below pkg"
        );
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
        let local = parse("import os\nfrom app import util\n", &|_, _, _| None).unwrap();
        assert_eq!(env.check("app/main.py", &local.imports), Checked::default());
        assert_eq!(
            CALLS.load(Ordering::SeqCst),
            0,
            "no process for what resolves statically"
        );
        let outside = parse("import requests\nimport nope_xyz\n", &|_, _, _| None).unwrap();
        let bad = env.check("app/main.py", &outside.imports).unresolved;
        assert_eq!(
            bad,
            [Unresolved {
                module: "nope_xyz".into(),
                line: 2
            }]
        );
        env.check("app/main.py", &outside.imports);
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        assert!(env.notes.is_empty());
    }

    #[test]
    fn without_python3_installed_packages_are_a_note() {
        let mut env = ImportEnv::new(&[], &|_| None, "", &HashMap::new()).with_installed(|| None);
        let f = parse("import requests\n", &|_, _, _| None).unwrap();
        assert_eq!(env.check("main.py", &f.imports).unresolved.len(), 1);
        assert_eq!(env.notes.len(), 1);
        assert!(
            env.notes[0].starts_with("python3 was not found"),
            "{:?}",
            env.notes
        );
    }
}
