//! A definition's section cut to what is left of a bundle's budget: the lines around the one
//! a reader should see first, a third of them before it.
use super::{Section, section_markdown};

/// The fewest lines a definition cut to fit what is left of the budget shows.
pub const MIN_CUT_LINES: usize = 8;

/// `s`, a definition's section that does not fit, cut to the lines around `focus` (else its
/// first lines) that fit in `room` tokens, a third of them before it; `None` when fewer than
/// [`MIN_CUT_LINES`] would, or for an outline or module lines.
/// [`shrunk`] until the section's Markdown, as `count` counts it, fits `room` tokens (a model
/// whose tokens are shorter than four bytes needs a smaller cut); the cut and its tokens.
pub(super) fn shrunk_to_fit(
    path: &str,
    s: &Section,
    focus: Option<usize>,
    room: usize,
    count: &dyn Fn(&str) -> usize,
) -> Option<(Section, usize)> {
    let mut target = room;
    for _ in 0..4 {
        let cut = shrunk(path, s, focus, target)?;
        let cost = count(&section_markdown(path, &cut));
        if cost <= room {
            return Some((cut, cost));
        }
        // Aim lower, in proportion to the overshoot.
        target = target * room / cost.max(1);
    }
    None
}

fn shrunk(path: &str, s: &Section, focus: Option<usize>, room: usize) -> Option<Section> {
    if s.kind != "definition" {
        return None;
    }
    let lines: Vec<&str> = s.text.split('\n').collect();
    let empty = Section {
        text: String::new(),
        ..s.clone()
    };
    // The label and fences, then a line's bytes and its newline each.
    let fixed = section_markdown(path, &empty).len() + 8;
    let room_bytes = (room * 4).checked_sub(fixed)?;
    let at = focus.map_or(0, |f| f.clamp(s.line_start, s.line_end) - s.line_start);
    let (mut lo, mut hi, mut bytes) = (at, at, 0);
    loop {
        let before = at - lo < (hi - at) / 2;
        let grow_lo = lo > 0 && (before || hi == lines.len());
        let next = if grow_lo { lo - 1 } else { hi };
        if next >= lines.len() || bytes + lines[next].len() + 1 > room_bytes {
            break;
        }
        bytes += lines[next].len() + 1;
        if grow_lo {
            lo -= 1;
        } else {
            hi += 1;
        }
    }
    (hi - lo >= MIN_CUT_LINES).then(|| Section {
        line_start: s.line_start + lo,
        line_end: s.line_start + hi - 1,
        text: lines[lo..hi].join("\n"),
        ..s.clone()
    })
}
