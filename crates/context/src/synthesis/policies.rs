//! The deterministic synthesis policies ([`Concat`], [`Summary`], [`Filter`]) and the text cuts
//! and reading order they share.
use super::*;

/// The most bytes of one line that a produced frame keeps (an outline's line, a summary's line
/// of a child): a minified bundle is one line, and must not crowd out its siblings.
pub const MAX_LINE_BYTES: usize = 200;

/// The most bytes of a [`Concat`] frame; each child gets an equal share of it (at least
/// [`CONCAT_MIN_CHILD_BYTES`]), so one huge child cannot push its siblings out.
pub const CONCAT_MAX_BYTES: usize = 64 * 1024;
/// The least share of [`CONCAT_MAX_BYTES`] a child of a [`Concat`] gets.
pub const CONCAT_MIN_CHILD_BYTES: usize = 512;

/// `text` cut to at most `max` bytes, on a char boundary, ending in a marker that says how
/// much was cut (`[... 12,345 more bytes]`); `text` itself when it fits.
pub fn cut_to_bytes(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    // The marker for the most that could be cut is at least as long as the real one.
    let room = max.saturating_sub(cut_marker(text.len()).len());
    let keep = text.floor_char_boundary(room);
    let mut out = text[..keep].to_owned();
    out.push_str(&cut_marker(text.len() - keep));
    std::borrow::Cow::Owned(out)
}

fn cut_marker(bytes: usize) -> String {
    let digits = bytes.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("[... {grouped} more bytes]")
}

/// The order the built-in policies write children in: READMEs first, then entry points
/// (`main.*`, `lib.rs`, `mod.rs`, `index.*`, `__init__.py`, `__main__.py`), then the rest, each
/// group by name (bytes); a child's frames (with `*`) keep their (NodeID, FrameID) order.
/// Children without paths (a policy that reads no names) keep the order they were given in.
pub fn reading_order(children: &[ChildFrame]) -> Vec<&ChildFrame> {
    let name =
        |c: &ChildFrame| -> String { c.path.rsplit('/').next().unwrap_or_default().to_owned() };
    let rank = |name: &str| {
        let lower = name.to_ascii_lowercase();
        let stem = lower.split('.').next().unwrap_or_default();
        if stem == "readme" {
            0
        } else if matches!(stem, "main" | "index")
            || matches!(
                lower.as_str(),
                "lib.rs" | "mod.rs" | "__init__.py" | "__main__.py"
            )
        {
            1
        } else {
            2
        }
    };
    let mut ordered: Vec<(u8, String, &ChildFrame)> = children
        .iter()
        .map(|c| {
            let name = name(c);
            (rank(&name), name, c)
        })
        .collect();
    // Stable: equal keys keep the given order.
    ordered.sort_by(|a, b| (a.0, a.1.as_bytes()).cmp(&(b.0, b.1.as_bytes())));
    ordered.into_iter().map(|(_, _, c)| c).collect()
}

fn header(child: &ChildFrame) -> String {
    let slash = if child.kind == NodeKind::Dir { "/" } else { "" };
    format!("## {}{slash} ({})\n", child.path, child.frame.frame_type)
}

fn text(frame: &Frame) -> std::borrow::Cow<'_, str> {
    match frame.text() {
        Some(t) => std::borrow::Cow::Borrowed(t),
        None => {
            std::borrow::Cow::Owned(format!("({} bytes of binary content)", frame.content.len()))
        }
    }
}

/// Every child's content under a header naming the child.
#[derive(Clone, Copy, Debug, Default)]
pub struct Concat;

impl SynthesisPolicy for Concat {
    fn computes(&self) -> bool {
        true
    }

    fn id(&self) -> String {
        "concat".to_owned()
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        let share = (CONCAT_MAX_BYTES / input.children.len().max(1)).max(CONCAT_MIN_CHILD_BYTES);
        let mut out = String::new();
        for (i, c) in reading_order(input.children).into_iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&header(c));
            let body = text(&c.frame);
            let body = cut_to_bytes(&body, share);
            out.push_str(&body);
            if !body.ends_with('\n') {
                out.push('\n');
            }
        }
        Ok(cut_to_bytes(&out, CONCAT_MAX_BYTES)
            .into_owned()
            .into_bytes())
    }
}

/// A deterministic extractive summary: the first non-empty lines of each child, bounded per
/// child and in total, with a visible marker where anything was cut.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    /// Lines kept per child.
    pub lines_per_child: usize,
    /// Bytes kept in total.
    pub max_bytes: usize,
}

impl Default for Summary {
    fn default() -> Summary {
        Summary {
            lines_per_child: 3,
            max_bytes: 4096,
        }
    }
}

impl SynthesisPolicy for Summary {
    fn computes(&self) -> bool {
        true
    }

    fn id(&self) -> String {
        format!("summary:{}:{}", self.lines_per_child, self.max_bytes)
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        let mut out = String::new();
        let children = reading_order(input.children);
        for (i, c) in children.iter().enumerate() {
            let body = text(&c.frame);
            let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
            let mut part = header(c);
            for l in lines.iter().take(self.lines_per_child) {
                part.push_str(&cut_to_bytes(l.trim_end(), MAX_LINE_BYTES));
                part.push('\n');
            }
            if lines.len() > self.lines_per_child {
                let more = lines.len() - self.lines_per_child;
                part.push_str(&format!(
                    "[... {more} more {}]\n",
                    if more == 1 { "line" } else { "lines" }
                ));
            }
            let left = children.len() - i;
            let cut = format!(
                "[... {left} more {} cut at {} bytes]\n",
                if left == 1 { "child" } else { "children" },
                self.max_bytes
            );
            // The cut marker counts against the bound too, so reserve room for it.
            let room = if left > 1 { cut.len() } else { 0 };
            if out.len() + part.len() + room > self.max_bytes {
                if out.len() + cut.len() <= self.max_bytes {
                    out.push_str(&cut);
                }
                break;
            }
            out.push_str(&part);
        }
        Ok(out.into_bytes())
    }
}

/// Keeps the children a predicate accepts, then concatenates them.
#[derive(Clone)]
pub struct Filter {
    /// Names the predicate in the policy id; two filters with the same name must agree.
    pub name: String,
    /// Which child frames to keep.
    pub keep: Arc<dyn Fn(&ChildFrame) -> bool + Send + Sync>,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter").field("name", &self.name).finish()
    }
}

impl Filter {
    /// Keeps child frames whose content contains `needle`.
    pub fn containing(needle: &str) -> Filter {
        let n = needle.to_owned();
        Filter {
            name: format!("contains:{needle}"),
            keep: Arc::new(move |c| text(&c.frame).contains(&n)),
        }
    }
}

impl SynthesisPolicy for Filter {
    fn computes(&self) -> bool {
        true
    }

    fn id(&self) -> String {
        format!("filter:{}", self.name)
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        let kept: Vec<ChildFrame> = input
            .children
            .iter()
            .filter(|c| (self.keep)(c))
            .cloned()
            .collect();
        Concat.synthesize(&SynthesisInput {
            children: &kept,
            ..*input
        })
    }
}
