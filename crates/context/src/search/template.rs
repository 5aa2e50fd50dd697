//! The lines an issue keeps from the repository's issue template: the headings and prompts a
//! reporter fills in ("What version of `bat` are you using?", "How did you install it?",
//! "Steps to reproduce"), which say nothing of this issue and, as words, point at whatever
//! files talk of versions and installing. A task's lines that a template of the tree holds
//! (compared without case, Markdown marks or spacing) are left out of what a search reads.
//!
//! Templates are where GitHub and GitLab read them: `.github/ISSUE_TEMPLATE/` (Markdown, and
//! the YAML of issue forms, whose `label`, `description`, `placeholder` and `value` texts are
//! what an issue shows), an `issue_template.md` at the root, in `docs/` or in `.github/`, and
//! `.gitlab/issue_templates/`.
use std::borrow::Cow;
use std::collections::HashSet;

use merkle_store::Store;

use super::prior::read_text;
use crate::error::Result;
use crate::facts::{FileEntry, TreeFacts};

/// Lines shorter than this once normalized are left in the task: a bare `---` or `...` of a
/// template says nothing, and neither does the same line in an issue.
const MIN_LINE: usize = 4;

/// `task` without the lines the tree's issue templates hold; the task itself where there are
/// none (or no template).
pub(super) fn without_template<'t>(
    store: &Store,
    facts: &TreeFacts,
    task: &'t str,
) -> Result<Cow<'t, str>> {
    let files = templates(facts);
    if files.is_empty() {
        return Ok(Cow::Borrowed(task));
    }
    let mut held = HashSet::new();
    for f in files {
        if let Some(text) = read_text(store, f)? {
            held.extend(text.lines().filter_map(normalized));
        }
    }
    Ok(strip(task, &held))
}

/// `task` without its lines whose normal form `held` holds.
fn strip<'t>(task: &'t str, held: &HashSet<String>) -> Cow<'t, str> {
    let kept: Vec<&str> = task
        .lines()
        .filter(|l| normalized(l).is_none_or(|n| !held.contains(&n)))
        .collect();
    if kept.len() == task.lines().count() {
        Cow::Borrowed(task)
    } else {
        Cow::Owned(kept.join("\n"))
    }
}

/// The tree's issue templates.
fn templates(facts: &TreeFacts) -> Vec<&FileEntry> {
    let mut out = Vec::new();
    for dir in ["", "docs/", ".github/"] {
        for name in [
            "issue_template.md",
            "ISSUE_TEMPLATE.md",
            "Issue_template.md",
        ] {
            out.extend(facts.file(&format!("{dir}{name}")));
        }
    }
    let folder = |f: &&FileEntry, prefix: &str, name: &str| {
        f.path[prefix.len()..]
            .split('/')
            .next()
            .is_some_and(|d| d.eq_ignore_ascii_case(name))
            && f.path[prefix.len()..].contains('/')
    };
    out.extend(under(facts, ".github/").filter(|f| folder(f, ".github/", "issue_template")));
    out.extend(under(facts, ".gitlab/").filter(|f| folder(f, ".gitlab/", "issue_templates")));
    out
}

/// The files of `facts` whose path starts with `prefix`.
fn under<'f>(facts: &'f TreeFacts, prefix: &'f str) -> impl Iterator<Item = &'f FileEntry> {
    let from = facts.files.partition_point(|f| f.path.as_str() < prefix);
    facts.files[from..]
        .iter()
        .take_while(move |f| f.path.starts_with(prefix))
}

/// A line as compared: lowercase, without Markdown's heading, quote, list, checkbox and
/// emphasis marks or a YAML key of an issue form, spaces collapsed; `None` for a line too short
/// to say anything ([`MIN_LINE`]) or without a letter, and for a code fence (```` ```python ````),
/// which tells what follows is code.
fn normalized(line: &str) -> Option<String> {
    let mut s = line.trim().to_lowercase();
    if s.starts_with("```") || s.starts_with("~~~") {
        return None;
    }
    for key in [
        "label:",
        "description:",
        "placeholder:",
        "value:",
        "- label:",
    ] {
        if let Some(rest) = s.strip_prefix(key) {
            s = rest.trim().trim_start_matches(['|', '>']).to_owned();
            break;
        }
    }
    let marks = |c: char| "#>*-+".contains(c) || c.is_whitespace();
    let s = s.trim_start_matches(marks);
    let s = ["[ ]", "[x]"]
        .iter()
        .find_map(|b| s.strip_prefix(b))
        .unwrap_or(s)
        .trim_start_matches(marks);
    let words: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || "*_`\"'".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let out = words.join(" ");
    (out.len() >= MIN_LINE && out.chars().any(char::is_alphabetic)).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_compared_without_its_marks() {
        assert_eq!(
            normalized("**What version of `bat` are you using?**").as_deref(),
            Some("what version of bat are you using?")
        );
        assert_eq!(
            normalized("### Steps to reproduce").as_deref(),
            Some("steps to reproduce")
        );
        assert_eq!(
            normalized("      label: What did you expect?").as_deref(),
            Some("what did you expect?")
        );
        assert_eq!(
            normalized("- [x] a detailed description").as_deref(),
            Some("a detailed description")
        );
        assert_eq!(
            normalized("xarray breaks").as_deref(),
            Some("xarray breaks")
        );
        assert_eq!(normalized("```python"), None);
        assert_eq!(normalized("---"), None);
        assert_eq!(normalized("..."), None);
        assert_eq!(normalized("abc"), None);
    }

    #[test]
    fn the_template_s_lines_leave_the_task_and_the_rest_stay() {
        let held: HashSet<String> = "**Describe the bug you encountered:**\n...\n---\n"
            .lines()
            .filter_map(normalized)
            .collect();
        let task = "Infinite loop\n**Describe the bug you encountered:**\nbat a b > b loops\n---\n";
        assert_eq!(strip(task, &held), "Infinite loop\nbat a b > b loops\n---");
        let untouched = "nothing of the template here";
        assert!(matches!(strip(untouched, &held), Cow::Borrowed(_)));
    }
}
