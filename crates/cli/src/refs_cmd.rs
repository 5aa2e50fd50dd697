//! `merkle refs`: a definition's callers and callees, read from tree-sitter's identifiers.
use std::path::Path;

use anyhow::Result;
use clap::Args;
use context::refs::{Refs, Site};

use crate::output::Out;
use crate::{Global, usage, workspace_path};

#[derive(Args, Debug)]
pub(crate) struct RefsArgs {
    /// The definition: a name (`parse`, `Type::name`, `Class.name`) or PATH:LINE (the
    /// definition spanning that line of that file)
    target: String,
}

pub(crate) fn refs(out: &mut Out, g: &Global, root: &Path, args: &RefsArgs) -> Result<()> {
    let target = args.target.trim();
    if target.is_empty() {
        usage!("the symbol is empty");
    }
    // `PATH:LINE` with PATH as the shell gives it (relative to here), as a workspace path.
    let target = match target.rsplit_once(':') {
        Some((p, l)) if !p.is_empty() && !p.ends_with(':') && l.parse::<usize>().is_ok() => {
            format!("{}:{l}", workspace_path(root, p)?)
        }
        _ => target.to_owned(),
    };
    let found = crate::workspace(g, root)
        .read_facts_as(context::ops::Reads::Index, |store, tree, _| {
            context::refs::refs_in(store, &tree.facts, &*tree.index(store)?, &target)
        })?;
    let text = render(&found);
    out.value(found.json(), text);
    Ok(())
}

/// The references as text: the definitions, then the callers and the callees, one a line
/// (`path:start-end name (lines ...)`).
fn render(r: &Refs) -> String {
    let mut out = String::new();
    let mut section = |title: &str, sites: &[Site]| {
        out.push_str(&format!("{title} ({}):\n", sites.len()));
        if sites.is_empty() {
            out.push_str("  none\n");
        }
        for s in sites {
            let name = s.name.as_deref().unwrap_or("(module level)");
            let mut line = format!("  {}:{}-{} {name}", s.path, s.line_start, s.line_end);
            if !s.lines.is_empty() {
                let lines: Vec<String> = s.lines.iter().map(ToString::to_string).collect();
                line.push_str(&format!(" (line {})", lines.join(", ")));
            }
            if s.candidates > 1 {
                line.push_str(&format!(" [one of {} definitions]", s.candidates));
            }
            out.push_str(&line);
            out.push('\n');
        }
    };
    section(&format!("definitions of {}", r.name), &r.definitions);
    section("callers", &r.callers);
    section("callees", &r.callees);
    out.trim_end().to_owned()
}
