//! Outlines read by hand, without a grammar: Markdown's heading tree, and the top-level keys of
//! JSON, TOML (with the keys of each table) and YAML documents.
use crate::clean;
use crate::{Kind, Symbol};

fn key(kind: Kind, name: &str, line_text: &str, line: usize) -> Symbol {
    Symbol {
        kind,
        name: name.to_owned(),
        signature: clean::signature(line_text, name),
        doc: None,
        line,
        end_line: line,
        children: Vec::new(),
    }
}

/// ATX (`## Title`) and setext (`Title` over `===` or `---`) headings, nested by level, outside
/// fenced code blocks and front matter; the doc is the first paragraph that is not a heading.
pub(crate) fn markdown(src: &str) -> (Option<String>, Vec<Symbol>) {
    let lines: Vec<&str> = src.lines().collect();
    let mut headings: Vec<(usize, Symbol)> = Vec::new();
    let mut fence: Option<&str> = None;
    let mut doc: Option<String> = None;
    let mut paragraph = String::new();
    let mut start = 0;
    if lines.first().is_some_and(|l| l.trim_end() == "---")
        && let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---")
    {
        start = end + 2;
    }
    for i in start..lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        if let Some(f) = fence {
            if trimmed.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        let indent = line.len() - trimmed.len();
        let atx = (indent < 4)
            .then(|| {
                let level = trimmed.bytes().take_while(|&b| b == b'#').count();
                let rest = &trimmed[level..];
                ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])))
                    .then(|| (level, rest.trim().trim_end_matches('#').trim()))
            })
            .flatten();
        let next = lines.get(i + 1).map(|l| l.trim());
        let setext = match next {
            Some(n) if !n.is_empty() && n.bytes().all(|b| b == b'=') => Some(1),
            Some(n) if n.len() >= 2 && n.bytes().all(|b| b == b'-') => Some(2),
            _ => None,
        }
        .filter(|_| {
            indent < 4 && !trimmed.is_empty() && paragraph.is_empty() && !is_block(trimmed)
        });
        let heading = atx.or(setext.map(|level| (level, trimmed.trim())));
        if let Some((level, title)) = heading {
            if doc.is_none() && !paragraph.is_empty() {
                doc = Some(clean::cap(&paragraph, crate::MAX_FILE_DOC));
            }
            paragraph.clear();
            let mut sym = key(Kind::Heading, title, line.trim(), i + 1);
            if atx.is_none() {
                sym.signature = clean::cap(title, crate::MAX_SIGNATURE);
            }
            headings.push((level, sym));
            continue;
        }
        if trimmed.is_empty() {
            if doc.is_none() && !paragraph.is_empty() {
                doc = Some(clean::cap(&paragraph, crate::MAX_FILE_DOC));
            }
            paragraph.clear();
        } else if doc.is_none() && !is_block(trimmed) && paragraph.len() <= crate::MAX_FILE_DOC {
            if !paragraph.is_empty() {
                paragraph.push(' ');
            }
            paragraph.push_str(&link_text(trimmed));
        }
    }
    if doc.is_none() && !paragraph.is_empty() {
        doc = Some(clean::cap(&paragraph, crate::MAX_FILE_DOC));
    }
    (doc, nest(headings))
}

/// Lines that start something other than prose: badges and images, HTML, lists, tables,
/// quotes, rules, link reference definitions (`[id]: url`), and lines of links alone (a row
/// of badges). A line that starts with a link and goes on in words is prose.
fn is_block(line: &str) -> bool {
    if line.starts_with('[') {
        let rest = link_text(line);
        let reference = line
            .split_once("]:")
            .is_some_and(|(label, _)| !label.contains(']'));
        // Only links and separators (`[Docs](u) · [Chat](v)`): a row of links, not prose.
        let links_only = !without_links(line).chars().any(char::is_alphanumeric);
        return reference || line.starts_with("[!") || links_only || rest == line;
    }
    line.starts_with(['<', '|', '>', '-', '*', '+', '!', '='])
}

/// `line` with its links and images taken out whole, text, target and all (nested ones too:
/// a badge's image inside its link).
fn without_links(line: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' => depth += 1,
            ']' if depth > 0 => {
                depth -= 1;
                if depth == 0 && matches!(chars.peek(), Some('(' | '[')) {
                    let close = if chars.next() == Some('(') { ')' } else { ']' };
                    for d in chars.by_ref() {
                        if d == close {
                            break;
                        }
                    }
                }
            }
            '!' if depth == 0 && chars.peek() == Some(&'[') => {}
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Markdown's inline links and images as their text: `[text](url)` is `text`, `![alt](url)`
/// nothing, `[text][ref]` `text`; anything else as written.
fn link_text(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let image = rest[..open].ends_with('!');
        let before = if image {
            &rest[..open - 1]
        } else {
            &rest[..open]
        };
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            break;
        };
        let text = &after[..close];
        let tail = &after[close + 1..];
        let target_end = match tail.chars().next() {
            Some('(') => tail.find(')').map(|e| e + 1),
            Some('[') => tail.find(']').map(|e| e + 1),
            _ => None,
        };
        let Some(target_end) = target_end else {
            out.push_str(&rest[..open + 1]);
            rest = after;
            continue;
        };
        out.push_str(before);
        if !image {
            out.push_str(text);
        }
        rest = &tail[target_end..];
    }
    out.push_str(rest);
    out
}

/// Headings nested under the nearest shallower heading before them.
fn nest(headings: Vec<(usize, Symbol)>) -> Vec<Symbol> {
    let mut roots: Vec<Symbol> = Vec::new();
    // The open headings, shallowest first: (level, symbol), folded into their parent when a
    // heading at their level or above arrives.
    let mut open: Vec<(usize, Symbol)> = Vec::new();
    let close = |open: &mut Vec<(usize, Symbol)>, roots: &mut Vec<Symbol>| {
        if let Some((_, done)) = open.pop() {
            match open.last_mut() {
                Some((_, parent)) => parent.children.push(done),
                None => roots.push(done),
            }
        }
    };
    for (level, sym) in headings {
        while open.last().is_some_and(|(l, _)| *l >= level) {
            close(&mut open, &mut roots);
        }
        open.push((level, sym));
    }
    while !open.is_empty() {
        close(&mut open, &mut roots);
    }
    roots
}

/// The keys of a JSON document's top-level object, with the line each is on.
pub(crate) fn json(src: &str) -> (Option<String>, Vec<Symbol>) {
    // An array's objects' keys are not the document's own.
    if !src
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
    {
        return (None, Vec::new());
    }
    let lines: Vec<&str> = src.lines().collect();
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut line = 1usize;
    let mut i = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    } else if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                let end = i.min(bytes.len());
                let after = src.get(end + 1..).unwrap_or("").trim_start();
                if depth == 1 && after.starts_with(':') {
                    let name = src.get(start..end).unwrap_or("");
                    let text = lines.get(line - 1).copied().unwrap_or("").trim();
                    out.push(key(Kind::Key, name, text, line));
                }
            }
            _ => {}
        }
        i += 1;
    }
    (None, out)
}

/// A TOML document's top-level keys and tables, each table with its keys, skipping the insides
/// of multi-line strings and arrays.
pub(crate) fn toml(src: &str) -> (Option<String>, Vec<Symbol>) {
    let mut out: Vec<Symbol> = Vec::new();
    let mut in_table = false;
    let mut open_brackets = 0i32;
    let mut open_string: Option<&str> = None;
    let mut doc = String::new();
    let mut doc_done = false;
    for (i, raw) in src.lines().enumerate() {
        let line = raw.trim();
        if let Some(q) = open_string {
            if line.contains(q) {
                open_string = None;
            }
            continue;
        }
        if open_brackets > 0 {
            open_brackets += brackets(line);
            continue;
        }
        if !doc_done {
            match line.strip_prefix('#') {
                Some(c) if out.is_empty() => {
                    doc.push_str(c.trim());
                    doc.push('\n');
                    continue;
                }
                _ => doc_done = !line.is_empty() || !doc.is_empty(),
            }
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            let name = line
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim();
            out.push(key(Kind::Key, name, line, i + 1));
            in_table = true;
            continue;
        }
        let Some((k, value)) = line.split_once('=') else {
            continue;
        };
        let name = k.trim().trim_matches(['"', '\'']);
        let value = value.trim();
        for q in ["\"\"\"", "'''"] {
            if value.matches(q).count() == 1 {
                open_string = Some(q);
            }
        }
        if value.starts_with('[') || value.starts_with('{') {
            open_brackets = brackets(value);
        }
        let sym = key(Kind::Key, name, line, i + 1);
        match out.last_mut() {
            Some(table) if in_table => table.children.push(sym),
            _ => out.push(sym),
        }
    }
    (clean::first_paragraph(&doc), out)
}

/// Opening minus closing brackets and braces on a line, outside strings and comments.
fn brackets(line: &str) -> i32 {
    let mut n = 0;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => break,
            (None, '[' | '{') => n += 1,
            (None, ']' | '}') => n -= 1,
            _ => {}
        }
    }
    n
}

/// A YAML document's top-level keys: unindented `key:` lines.
pub(crate) fn yaml(src: &str) -> (Option<String>, Vec<Symbol>) {
    let mut out = Vec::new();
    let mut doc = String::new();
    for (i, line) in src.lines().enumerate() {
        if line.starts_with([' ', '\t', '-', '#', '%', '.', '|', '>']) || line.trim().is_empty() {
            if out.is_empty()
                && let Some(c) = line.strip_prefix('#')
            {
                doc.push_str(c.trim());
                doc.push('\n');
            }
            continue;
        }
        let name = match line.find(": ").or_else(|| {
            line.trim_end()
                .ends_with(':')
                .then(|| line.trim_end().len() - 1)
        }) {
            Some(colon) => line[..colon].trim().trim_matches(['"', '\'']),
            None => continue,
        };
        out.push(key(Kind::Key, name, line, i + 1));
    }
    (clean::first_paragraph(&doc), out)
}
