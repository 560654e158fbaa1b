//! What a language module reads out of one source file, in a form the language-independent
//! layers (L1 preservation, L3 rules) work on: definitions, imports, modules the file makes at
//! run time, calls with their arguments, and qualified names referenced. Names are qualified through the file's imports
//! (`ET.fromstring` after `import xml.etree.ElementTree as ET` is `xml.etree.ElementTree.fromstring`).

use serde::Serialize;

/// Why a file could not be parsed (L0).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ParseError {
    pub line: u32,
    pub message: String,
}

/// How far an input source is from the program, as the source tables weigh it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// What an outsider chooses: request data, the console, the command line, the network.
    Outside,
    /// What whoever starts the process chooses: the environment. It taints a value (a
    /// caller's own setting reaching `open` is still a value from elsewhere) but is not
    /// *input* to the conditions that make a sink high-risk.
    Local,
}

/// An import statement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Import {
    /// The module as Python reads it: leading dots for relative imports, no whitespace
    /// (`from . data import x` imports `.data`).
    pub module: String,
    /// Names imported from it (`from m import a, b`), empty for `import m`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    pub line: u32,
    /// Guarded by `try: … except ImportError` (or similar): its absence is handled.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

/// A module a file makes while it runs rather than as a file of its own: six's `moves`
/// (`moves = _MovedItems(__name__ + ".moves")`, served by an import hook), or an alias put into
/// `sys.modules`. An import at or below it cannot be looked up among the repository's files.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DynamicModule {
    pub name: DynamicName,
    pub how: DynamicHow,
    pub line: u32,
}

/// Which module is made, as far as the source says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DynamicName {
    /// Below the file's own module, dotted relative to it: `moves`, `moves.urllib`.
    Below(String),
    /// Named in full: `sys.modules["pkg.compat"] = …`.
    Named(String),
    /// Some names below the file's module that the source does not spell out
    /// (`sys.modules[fullname] = mod`, an importer appended to `sys.meta_path`).
    AnyBelow,
}

/// How the source makes a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DynamicHow {
    /// An entry put into `sys.modules`.
    SysModules,
    /// A module object (`types.ModuleType` or a subclass) built under a submodule's name.
    ModuleObject,
    /// An importer added to `sys.meta_path`.
    ImportHook,
}

impl DynamicHow {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            DynamicHow::SysModules => "an entry put into sys.modules",
            DynamicHow::ModuleObject => "a module object built under that name",
            DynamicHow::ImportHook => "an importer added to sys.meta_path",
        }
    }
}

/// How an argument's value is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ArgKind {
    /// A constant: a plain string, a number, True/False/None.
    Literal,
    /// A string built at run time: f-string, `%`, `+` or `.format`.
    Formatted,
    /// A compiled code object (`code = compile(…)`, a parameter typed `CodeType`): running it
    /// is not building code from text, the `compile` before it was.
    Code,
    /// Anything else (a name, a call, an attribute…).
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Arg {
    /// The keyword, for keyword arguments.
    pub name: Option<String>,
    pub text: String,
    pub kind: ArgKind,
    /// Mentions a function parameter or a value derived from one, or an input source.
    pub tainted: bool,
    /// … and the taint comes (at least partly) from a function parameter.
    pub from_parameter: bool,
    /// … and (at least partly) from an input source (request data, `input()`, `sys.argv`):
    /// what a caller outside the program controls, not merely what a caller passes.
    pub from_input: bool,
}

/// A call, its callee qualified through the imports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Call {
    pub name: String,
    pub line: u32,
    pub end_line: u32,
    pub args: Vec<Arg>,
    /// The object a method is called on (`p` of `p.open()`, `os.path` of `os.path.join(…)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<Arg>,
    /// Names around the call that say what its value is for: the names it is assigned to,
    /// the keyword or dictionary key it is given as, the functions it is inside
    /// (`reset_token = random.randint(…)`, `def make_password(): return random.choice(…)`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
}

/// A referenced name (identifier or attribute chain), qualified.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Ref {
    pub name: String,
    pub line: u32,
    /// Its first name is bound nowhere in the file: a global whose import is elsewhere.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub free: bool,
}

/// Everything L1 and L3 need from a file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Facts {
    /// Module-level functions, classes and methods (`Class.method`).
    pub defs: Vec<String>,
    pub imports: Vec<Import>,
    /// Modules the file makes at run time.
    pub dynamic_modules: Vec<DynamicModule>,
    pub calls: Vec<Call>,
    pub refs: Vec<Ref>,
    /// Byte ranges of strings that stand as statements of their own (docstrings): prose and
    /// examples, not code, so the tables' text patterns do not read them.
    pub docstrings: Vec<(usize, usize)>,
    /// Line spans (first, last, 1-based) of the functions not inside another function
    /// (methods count as their own): where a value can travel without a call.
    pub functions: Vec<(u32, u32)>,
}

impl Facts {
    /// The outermost function holding a line (its span), or None at module level.
    pub(crate) fn function_at(&self, line: u32) -> Option<(u32, u32)> {
        self.functions
            .iter()
            .copied()
            .find(|&(a, b)| a <= line && line <= b)
    }

    /// The file's text with its docstrings blanked out (newlines kept, so lines still count).
    pub(crate) fn code_text<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if self.docstrings.is_empty() {
            return std::borrow::Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for &(start, end) in &self.docstrings {
            if start < at || end > text.len() {
                continue;
            }
            out.push_str(&text[at..start]);
            out.extend(
                text[start..end]
                    .chars()
                    .map(|c| if c == '\n' { '\n' } else { ' ' }),
            );
            at = end;
        }
        out.push_str(&text[at..]);
        std::borrow::Cow::Owned(out)
    }
}
