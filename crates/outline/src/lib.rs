//! Structural outlines of source files: every definition, nested by scope, with its signature
//! line, its first doc line and its line number, rendered to text within a byte budget.
//!
//! # Why this crate exists
//!
//! A file's frame is the first thing an agent reads about it, and `merkle generate` writes one
//! for every file without a model. A frame made of a file's first lines names a tenth of what a
//! tags tool finds there; an outline names all of it, in a few kilobytes, and says what it left
//! out when a file has more.
//!
//! # What it is, and what it is not
//!
//! - **Pure.** Bytes in, an [`Outline`] out: no IO, no async, no network, no global state. It
//!   never sees a path (the caller maps a file name to a [`Language`]), so an outline depends on
//!   the content and the language alone and callers may memoize it by those, across renames.
//! - **Deterministic.** The same bytes and language give the same outline and the same text,
//!   on every machine: grammars are compiled in, nothing is configured from the environment.
//! - **Two parsers.** Programming languages are parsed by tree-sitter grammars, each behind a
//!   cargo feature that is on by default (`rust`, `python`, `javascript`, `typescript`, `go`,
//!   `java`, `c`, `cpp`): a build without them is lean and [`Language::from_path`] then names
//!   none of those languages. Markdown (its heading tree), JSON, TOML and YAML (their top-level
//!   keys) are read by hand: their outline is a few lines of structure that needs no grammar.
//! - **Definitions, not references.** Modules, types, traits and interfaces, classes, functions
//!   and methods, constants, variables and macros, as declared. Function bodies are never
//!   entered: what a function defines inside itself is its business, and skipping bodies keeps
//!   the walk to the few nodes that can hold definitions.
//! - **Bodies are not even parsed** by [`Parser::skim`]: a hand-written lexer finds the
//!   bodies of functions (Rust, Python, JavaScript, TypeScript, Go, Java; not C or C++, whose
//!   preprocessor defeats it) and tree-sitter is given the rest of the file as its included
//!   ranges, several times less to parse. The skimmed outline equals the whole parse's: where
//!   the skimmed tree has an error, the whole file is parsed again.
//! - **One parse, outline and imports.** [`Parser::skim`] (and [`Parser::parse`], whole)
//!   returns a [`Parsed`] file whose syntax tree stays available ([`Parsed::tree`]), so that
//!   its outline and its imports ([`Parsed::imports`]) come from the same parse. The skimming
//!   lexer notes where imports may hide in the bodies it skips (a Python function's `import`,
//!   a script's `require(...)` or `import(...)`) and they are read there by hand, so a skimmed
//!   file's imports are the whole parse's too. A [`Parser`] is owned by its caller and reused
//!   across files, like a buffer.
//!
//! # Bounded text
//!
//! [`render`] writes one line per symbol (`LINE: signature — first doc line`), indented by
//! scope, within [`RenderConfig::max_bytes`]. Shallow symbols come first: every top-level
//! definition before any member, members before their members. What does not fit is counted,
//! never dropped silently: `+ 37 more methods in impl Store`.
//!
//! # Imports
//!
//! [`Parsed::imports`] (`imports.rs`) gives the import specifiers as written: Rust `mod` and
//! `use crate::|self::|super::` (brace groups expanded, inline modules taken into account), Python
//! `import`/`from`, JS/TS `import`/`export ... from`/`require`/`import()`, Go import paths, C/C++
//! quoted includes, Java imports. Resolving them needs paths, which this crate never sees
//! (context's `resolve.rs` does it).
//!
//! # What else holds
//!
//! - [`FORMAT`] is bumped whenever any outline's text changes, since callers memoize by content.
//! - The grammar features are turned on through `context`'s and `cli`'s `grammars` feature;
//!   without one, [`Language::from_path`] does not name that language and the caller falls back.
//! - A skimmed parse gives the outline a whole parse gives (`tests/outline.rs`), and the same
//!   imports (`tests/imports.rs` checks both parses).
//! - [`render`] always writes the first line and the note of what it left out, counted by kind.
use std::fmt;

mod clean;
mod error;
mod imports;
#[cfg(feature = "syntax")]
mod members;
#[cfg(feature = "syntax")]
mod references;
mod render;
#[cfg(feature = "syntax")]
mod skim;
#[cfg(feature = "syntax")]
mod syntax;
mod text;

pub use clean::is_directive;
pub use error::{Error, Result};
pub use imports::{Import, ImportKind};
pub use render::{RenderConfig, render};

/// The version of what this crate writes for a given input. Bump it when an outline or its
/// rendering changes for some file, so that callers who memoize by it produce their outlines
/// again.
pub const FORMAT: &str = "v17";

/// A language the outline reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    /// TypeScript with JSX (`.tsx`): another grammar.
    Tsx,
    Go,
    Java,
    C,
    Cpp,
    Markdown,
    Json,
    Toml,
    Yaml,
}

impl Language {
    /// The language a file name (or a path ending in one) names by its extension, when this
    /// build reads it. `.h` is read as C++, a superset that also parses C headers.
    pub fn from_path(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, e)| e)?;
        let lang = match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" => Language::C,
            "h" | "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" => Language::Cpp,
            "md" | "markdown" => Language::Markdown,
            "json" => Language::Json,
            "toml" => Language::Toml,
            "yaml" | "yml" => Language::Yaml,
            _ => return None,
        };
        lang.is_built().then_some(lang)
    }

    /// Its name, as an outline's first line shows it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Go => "Go",
            Language::Java => "Java",
            Language::C => "C",
            Language::Cpp => "C++",
            Language::Markdown => "Markdown",
            Language::Json => "JSON",
            Language::Toml => "TOML",
            Language::Yaml => "YAML",
        }
    }

    /// Whether this build can outline it: its grammar's feature is on, or it needs none.
    pub fn is_built(self) -> bool {
        match self {
            Language::Rust => cfg!(feature = "rust"),
            Language::Python => cfg!(feature = "python"),
            Language::JavaScript => cfg!(feature = "javascript"),
            Language::TypeScript | Language::Tsx => cfg!(feature = "typescript"),
            Language::Go => cfg!(feature = "go"),
            Language::Java => cfg!(feature = "java"),
            Language::C => cfg!(feature = "c"),
            Language::Cpp => cfg!(feature = "cpp"),
            Language::Markdown | Language::Json | Language::Toml | Language::Yaml => true,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a symbol defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Kind {
    Module,
    Namespace,
    Package,
    Struct,
    Enum,
    Union,
    Type,
    Trait,
    Interface,
    Class,
    Impl,
    Function,
    Method,
    Constant,
    Variable,
    Field,
    /// A variant of an enum (an enumerator, an enum constant).
    Variant,
    Macro,
    /// A Markdown heading.
    Heading,
    /// A key of a JSON, TOML or YAML document, or a TOML table.
    Key,
}

impl Kind {
    /// The word for one of them, as omission notes write it.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Module => "module",
            Kind::Namespace => "namespace",
            Kind::Package => "package",
            Kind::Struct => "struct",
            Kind::Enum => "enum",
            Kind::Union => "union",
            Kind::Type => "type",
            Kind::Trait => "trait",
            Kind::Interface => "interface",
            Kind::Class => "class",
            Kind::Impl => "impl",
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Constant => "constant",
            Kind::Variable => "variable",
            Kind::Field => "field",
            Kind::Variant => "variant",
            Kind::Macro => "macro",
            Kind::Heading => "heading",
            Kind::Key => "key",
        }
    }

    /// The word for `n` of them.
    pub fn nouns(self, n: usize) -> String {
        match (self, n) {
            (_, 1) => self.noun().to_owned(),
            (Kind::Class, _) => "classes".to_owned(),
            _ => format!("{}s", self.noun()),
        }
    }
}

/// One definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub kind: Kind,
    /// Its name as declared (for an impl, the type it is for).
    pub name: String,
    /// Its declaration up to its body, on one line, at most [`MAX_SIGNATURE`] bytes and always
    /// naming it.
    pub signature: String,
    /// The first line of its doc comment or docstring, if it has one.
    pub doc: Option<String>,
    /// The 1-based line its name is on.
    pub line: usize,
    /// The 1-based line it ends on.
    pub end_line: usize,
    /// What it defines inside itself (methods of a class, items of a module), in source order.
    pub children: Vec<Symbol>,
}

/// Where a file names an identifier ([`Parsed::references`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub name: String,
    /// 1-based line and column (in bytes) where it begins.
    pub line: usize,
    pub column: usize,
    /// Whether it names what a call calls (`f(x)`, `a.f(x)`, `T::f(x)`, `f!(x)`, `new F()`).
    pub call: bool,
    /// Whether it is the member of an access (`a.f`, `a->f`, `obj.m()`): in Rust, Java and
    /// C++ a call of one calls a method, never a free function.
    pub member: bool,
}

/// The longest signature kept, in bytes; longer ones are cut with `…`.
pub const MAX_SIGNATURE: usize = 140;
/// The longest doc line kept, in bytes.
pub const MAX_DOC: usize = 120;
/// The longest file doc paragraph kept, in bytes.
pub const MAX_FILE_DOC: usize = 300;

/// A file's outline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outline {
    pub language: Language,
    /// The file's size in bytes.
    pub bytes: usize,
    /// Its number of lines.
    pub lines: usize,
    /// The module's doc comment or docstring, or the file's first doc paragraph, on one line.
    pub doc: Option<String>,
    /// Its top-level definitions, in source order.
    pub symbols: Vec<Symbol>,
}

impl Outline {
    /// Whether it found nothing to show: no doc and no symbol.
    pub fn is_empty(&self) -> bool {
        self.doc.is_none() && self.symbols.is_empty()
    }
}

/// Parses files. Holds the tree-sitter parser, so that a caller outlining many files reuses one
/// (one per thread: it is not shared).
#[derive(Default)]
pub struct Parser {
    #[cfg(feature = "syntax")]
    inner: syntax::TsParser,
}

impl fmt::Debug for Parser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Parser")
    }
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Parses `source` as `language`: the whole file, so the tree holds every node.
    pub fn parse<'s>(&mut self, language: Language, source: &'s str) -> Result<Parsed<'s>> {
        self.parse_as(language, source, false)
    }

    /// Parses `source` as `language` for its outline and its imports, several times cheaper
    /// on code than [`Parser::parse`]: the parser is given only what can hold definitions, not
    /// the bodies of functions (a hand-written lexer finds them first, and notes where an
    /// import may hide in them: a Python function's `import`, a script's `require(...)`), and
    /// parses the whole file only where that skimmed parse has an error. Its
    /// [`Parsed::outline`] and [`Parsed::imports`] are the whole parse's; its tree lacks the
    /// bodies.
    pub fn skim<'s>(&mut self, language: Language, source: &'s str) -> Result<Parsed<'s>> {
        self.parse_as(language, source, true)
    }

    /// A whole or a skimmed parse; the languages read by hand have no tree.
    fn parse_as<'s>(
        &mut self,
        language: Language,
        source: &'s str,
        skim: bool,
    ) -> Result<Parsed<'s>> {
        #[cfg(not(feature = "syntax"))]
        let _ = skim;
        Ok(Parsed {
            language,
            source,
            #[cfg(feature = "syntax")]
            tree: match language {
                Language::Markdown | Language::Json | Language::Toml | Language::Yaml => None,
                _ => self.inner.parse(language, source, skim)?,
            },
        })
    }

    /// The outline of `source`: `skim(language, source)?.outline()`.
    pub fn outline(&mut self, language: Language, source: &str) -> Result<Outline> {
        Ok(self.skim(language, source)?.outline())
    }
}

/// A parsed file: its syntax tree (for grammar languages) and the source it was parsed from.
pub struct Parsed<'s> {
    language: Language,
    source: &'s str,
    #[cfg(feature = "syntax")]
    tree: Option<syntax::Skimmed>,
}

impl fmt::Debug for Parsed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parsed")
            .field("language", &self.language)
            .field("bytes", &self.source.len())
            .finish()
    }
}

impl Parsed<'_> {
    pub fn language(&self) -> Language {
        self.language
    }

    /// The enum variants and struct, union and class fields outside functions, which an
    /// outline leaves out (its budget is for definitions) but a search should find; empty for
    /// the languages read by hand and for builds without the language's grammar.
    pub fn members(&self) -> Vec<Symbol> {
        #[cfg(feature = "syntax")]
        if let Some(tree) = &self.tree {
            return members::members(self.language, tree.tree.root_node(), self.source);
        }
        Vec::new()
    }

    /// Where the file names one of `names` (every identifier when `names` is empty), in
    /// source order: identifiers, fields and properties, types, never a declaration's own name
    /// nor a comment or a string. A skimmed parse ([`Parser::skim`]) has no bodies to look
    /// in: parse the whole file ([`Parser::parse`]) for a function's references. Empty for
    /// the languages read by hand and for builds without the language's grammar.
    pub fn references(&self, names: &[&str]) -> Vec<Reference> {
        #[cfg(feature = "syntax")]
        if let Some(tree) = &self.tree {
            return references::references(tree.tree.root_node(), self.source, names);
        }
        let _ = names;
        Vec::new()
    }

    /// The calls of the file: its [`Parsed::references`] that name what a call calls.
    pub fn calls(&self) -> Vec<Reference> {
        let mut all = self.references(&[]);
        all.retain(|r| r.call);
        all
    }

    /// The tree-sitter syntax tree; `None` for the languages read by hand. A skimmed parse's
    /// ([`Parser::skim`]) has no nodes inside the function bodies it skipped.
    #[cfg(feature = "syntax")]
    pub fn tree(&self) -> Option<&tree_sitter::Tree> {
        self.tree.as_ref().map(|s| &s.tree)
    }

    /// The file's outline.
    pub fn outline(&self) -> Outline {
        let (doc, symbols) = match self.language {
            Language::Markdown => text::markdown(self.source),
            Language::Json => text::json(self.source),
            Language::Toml => text::toml(self.source),
            Language::Yaml => text::yaml(self.source),
            #[cfg(feature = "syntax")]
            _ => match &self.tree {
                Some(tree) => syntax::outline(self.language, tree, self.source),
                None => (None, Vec::new()),
            },
            #[cfg(not(feature = "syntax"))]
            _ => (None, Vec::new()),
        };
        Outline {
            language: self.language,
            bytes: self.source.len(),
            lines: self.source.lines().count(),
            doc,
            symbols,
        }
    }
}

/// Outlines one file with a parser of its own ([`Parser::outline`]); a [`Parser`] reused
/// across files saves setting one up per file.
pub fn outline(language: Language, source: &str) -> Result<Outline> {
    Parser::new().outline(language, source)
}
