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

/// `task` as the reporter wrote it, where it differs: without its HTML comments
/// ([`without_comments`]) and the lines the tree's issue templates hold ([`without_template`]);
/// `None` where neither leaves anything out.
pub(super) fn as_written(store: &Store, facts: &TreeFacts, task: &str) -> Result<Option<String>> {
    let shown = without_comments(task);
    Ok(match without_template(store, facts, &shown)? {
        Some(stripped) => Some(stripped),
        None => matches!(shown, Cow::Owned(_)).then(|| shown.into_owned()),
    })
}

/// `task` without its HTML comments (`<!-- ... -->`) outside code fences and inline code: the
/// instructions an issue template leaves in every issue, which GitHub and GitLab do not show
/// ("Hey there, thanks for creating an issue! ... run the script at ..."). A `<!--` that never
/// closes hides the rest only where it starts its line (an HTML block); within a line it is
/// text. Borrowed where it has none.
fn without_comments(task: &str) -> Cow<'_, str> {
    if !task.contains("<!--") {
        return Cow::Borrowed(task);
    }
    let mut out = String::with_capacity(task.len());
    let mut fences = Fences::default();
    // The next byte to read, and whether it starts a line.
    let (mut at, mut line_start) = (0, true);
    while at < task.len() {
        let end = task[at..].find('\n').map_or(task.len(), |i| at + i + 1);
        let line = &task[at..end];
        let code = line_start && fences.fenced(line);
        let open = if code { None } else { comment_start(line) };
        let Some(open) = open else {
            out.push_str(line);
            (at, line_start) = (end, true);
            continue;
        };
        out.push_str(&line[..open]);
        let after = at + open + 4;
        match task[after..].find("-->") {
            Some(close) => (at, line_start) = (after + close + 3, false),
            None if line[..open].trim().is_empty() => at = task.len(),
            None => {
                out.push_str(&line[open..]);
                (at, line_start) = (end, true);
            }
        }
    }
    Cow::Owned(out)
}

/// Where a comment opens in `line`, outside its inline code (backticks).
fn comment_start(line: &str) -> Option<usize> {
    let mut in_code = false;
    for (i, b) in line.bytes().enumerate() {
        if b == b'`' {
            in_code = !in_code;
        } else if !in_code && line.as_bytes()[i..].starts_with(b"<!--") {
            return Some(i);
        }
    }
    None
}

/// Markdown's code fences, line by line: a fence (```` ``` ```` or `~~~`, three or more) opens
/// a block that only a fence of the same character, at least as long, closes.
#[derive(Default)]
struct Fences {
    open: Option<(u8, usize)>,
}

impl Fences {
    /// Whether `line` is a fence or inside a block, taking it in.
    fn fenced(&mut self, line: &str) -> bool {
        let t = line.trim_start().as_bytes();
        let run = |c: u8| t.iter().take_while(|&&b| b == c).count();
        let marker = [b'`', b'~']
            .into_iter()
            .map(|c| (c, run(c)))
            .find(|&(_, n)| n >= 3);
        match (self.open, marker) {
            (None, Some(m)) => self.open = Some(m),
            (Some((c, n)), Some((mc, mn))) if c == mc && mn >= n => self.open = None,
            (None, None) => return false,
            _ => {}
        }
        true
    }
}

/// `task` without the lines the tree's issue templates hold; `None` where there are none (or
/// no template).
fn without_template(store: &Store, facts: &TreeFacts, task: &str) -> Result<Option<String>> {
    let files = templates(facts);
    if files.is_empty() {
        return Ok(None);
    }
    let mut held = HashSet::new();
    for f in files {
        if let Some(text) = read_text(store, f)? {
            held.extend(template_lines(&f.path, &text));
        }
    }
    Ok(match strip(task, &held) {
        Cow::Owned(s) => Some(s),
        Cow::Borrowed(_) => None,
    })
}

/// The lines a template at `path` puts in an issue, normalized: a Markdown template's every
/// line; an issue form's (YAML) texts of `label`, `description`, `placeholder` and `value`,
/// which GitHub shows, but not its keys or a dropdown's options (the reporter's answers).
fn template_lines(path: &str, text: &str) -> Vec<String> {
    let lower = path.to_ascii_lowercase();
    if !(lower.ends_with(".yml") || lower.ends_with(".yaml")) {
        return text.lines().filter_map(normalized).collect();
    }
    fn texts(v: &serde_yaml::Value, out: &mut Vec<String>) {
        match v {
            serde_yaml::Value::Mapping(m) => {
                for (k, v) in m {
                    let shown = matches!(
                        k.as_str(),
                        Some("label" | "description" | "placeholder" | "value")
                    );
                    match v.as_str() {
                        Some(s) if shown => out.extend(s.lines().filter_map(normalized)),
                        _ => texts(v, out),
                    }
                }
            }
            serde_yaml::Value::Sequence(items) => items.iter().for_each(|v| texts(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(form) = serde_yaml::from_str::<serde_yaml::Value>(text) {
        texts(&form, &mut out);
    }
    out
}

/// `task` without its lines whose normal form `held` holds, but for its first line (its
/// title) and what its code blocks hold (a template's sample code is the reporter's code when
/// an issue quotes it).
fn strip<'t>(task: &'t str, held: &HashSet<String>) -> Cow<'t, str> {
    let mut kept: Vec<&str> = Vec::new();
    let (mut fences, mut titled, mut dropped) = (Fences::default(), false, false);
    for line in task.lines() {
        let t = line.trim_start();
        if !fences.fenced(line) && titled && normalized(line).is_some_and(|n| held.contains(&n)) {
            dropped = true;
            continue;
        }
        titled |= !t.is_empty();
        kept.push(line);
    }
    if dropped {
        Cow::Owned(kept.join("\n"))
    } else {
        Cow::Borrowed(task)
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
    fn hidden_comments_go_but_not_in_code_fences() {
        assert!(matches!(without_comments("no comment"), Cow::Borrowed(_)));
        let task = "Title\n<!-- a hint -->kept <!-- two\nlines --> also kept\n\
                    ```xml\n<!-- code -->\n~~~\n<!-- still code -->\n```\n\
                    `<!--` in code, and <!-- one never closed within a line\n\
                    <!-- never closed\nhidden\n";
        assert_eq!(
            without_comments(task),
            "Title\nkept  also kept\n```xml\n<!-- code -->\n~~~\n<!-- still code -->\n```\n\
             `<!--` in code, and <!-- one never closed within a line\n"
        );
        // Any text around them (the bytes of `：` are not a comment's).
        assert_eq!(
            without_comments("python3.7：\n<!-- x -->é"),
            "python3.7：\né"
        );
        let crlf = "Title\r\n<!--\r\nhint\r\n-->\r\nBody\r\n";
        assert_eq!(without_comments(crlf), "Title\r\n\r\nBody\r\n");
    }

    #[test]
    fn a_line_is_compared_without_its_marks() {
        for (line, normal) in [
            (
                "**What version of `bat` are you using?**",
                Some("what version of bat are you using?"),
            ),
            ("### Steps to reproduce", Some("steps to reproduce")),
            (
                "      label: What did you expect?",
                Some("what did you expect?"),
            ),
            (
                "- [x] a detailed description",
                Some("a detailed description"),
            ),
            ("xarray breaks", Some("xarray breaks")),
            ("```python", None),
            ("---", None),
            ("...", None),
            ("abc", None),
        ] {
            assert_eq!(normalized(line).as_deref(), normal, "{line}");
        }
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
        // The title stays, and so does what a code block holds.
        let task = "Describe the bug you encountered:\nDescribe the bug you encountered:\n\
                    ```\nDescribe the bug you encountered:\n```\n";
        assert_eq!(
            strip(task, &held),
            "Describe the bug you encountered:\n```\nDescribe the bug you encountered:\n```"
        );
    }

    #[test]
    fn an_issue_form_holds_the_texts_it_shows_not_its_keys_or_options() {
        let form = "name: Bug\ndescription: File a bug report\nbody:\n  - type: textarea\n    \
                    attributes:\n      label: What happened?\n      description: |\n        \
                    Tell us what you saw.\n        And what you expected.\n  - type: dropdown\n    \
                    attributes:\n      label: Which component?\n      options:\n        \
                    - Formatter\n        - Linter\n    validations:\n      required: true\n";
        let mut lines = template_lines(".github/ISSUE_TEMPLATE/bug.yml", form);
        lines.sort();
        assert_eq!(
            lines,
            [
                "and what you expected.",
                "file a bug report",
                "tell us what you saw.",
                "what happened?",
                "which component?"
            ]
        );
        assert!(template_lines("bug.yml", "[not: yaml").is_empty());
    }
}
