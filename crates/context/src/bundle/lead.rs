//! The lines that lead a definition in a bundle: its doc comment, attributes, decorators and
//! annotations, right above it and no deeper than it (`Filling::through_lead`).

/// The most lines above a definition its section shows (see `Filling::through_lead`), and
/// never more than the definition's own (at least 2): a declaration's long doc comment would
/// otherwise cost ten times the line it documents. On Multi-SWE-bench, where a third of the
/// changed lines lie outside definitions (doc comments among them), line recall at 4k/8k/16k
/// tokens -0.3/+2.2/+2.8 points (with no cap but 20: -2.6/+2.1/+2.7), and a class's head led
/// too +0.9 at 4k; the dev set (Python) unchanged.
pub(super) const LEAD_LINES: usize = 20;

/// What a line leading a definition starts with in `lang`: a comment (`//`, `/*`, a block
/// comment's `*`, Python's `#`), an attribute (`#[...]`), a decorator or an annotation (`@`).
/// None in a language whose definitions are no code (Markdown's headings, a JSON key).
pub(super) fn lead_markers(lang: outline::Language) -> &'static [&'static str] {
    use outline::Language as L;
    match lang {
        L::Python => &["#", "@"],
        L::Rust => &["//", "/*", "*", "#["],
        L::JavaScript | L::TypeScript | L::Tsx | L::Go | L::Java | L::C | L::Cpp => {
            &["//", "/*", "*", "@"]
        }
        _ => &[],
    }
}

/// Whether `line` may lead a definition indented by `indent`, as no code line does: it starts
/// with one of `markers` and is indented no deeper than the definition (a block comment's
/// `*` one column deeper), so that the end of the code above (a continued expression, a
/// comment inside the body before) is not taken for it.
pub(super) fn leads_definition(line: &str, indent: usize, markers: &[&str]) -> bool {
    let t = line.trim_start();
    let depth = line.len() - t.len();
    let slack = usize::from(t.starts_with('*'));
    depth <= indent + slack && markers.iter().any(|m| t.starts_with(m))
}
