//! A definition's section cut to what is left of a bundle's budget: the lines around the one
//! a reader should see first, a third of them before it.
use super::{HEAD_LINES, MAX_SECTION_LINES, Section, section_markdown};

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

/// The lines of a definition spanning `start..=end` a bundle shows: all of them, or for one
/// longer than [`MAX_SECTION_LINES`], its first [`HEAD_LINES`] and a window of the rest
/// around `focus` (the line holding most of the task's words), as one span where they meet.
pub(super) fn spans_of(start: usize, end: usize, focus: Option<usize>) -> Vec<(usize, usize)> {
    let start = start.max(1);
    let end = end.max(start);
    if end - start < MAX_SECTION_LINES {
        return vec![(start, end)];
    }
    let head = (start, start + HEAD_LINES - 1);
    let room = MAX_SECTION_LINES - HEAD_LINES;
    let focus = focus.unwrap_or(start).clamp(start, end);
    let from = focus.saturating_sub(room / 3).max(head.1 + 1);
    let from = from.min(end + 1 - room);
    let window = (from, from + room - 1);
    if window.0 == head.1 + 1 {
        vec![(head.0, window.1)]
    } else {
        vec![head, window]
    }
}

/// The lines of the definition spanning `start..=end` that neither `shown` (its head and
/// window, [`spans_of`]) nor `doc` (the rest of its docstring) covers: none for one shown
/// whole.
pub(super) fn rest_of(
    start: usize,
    end: usize,
    shown: &[(usize, usize)],
    doc: Option<&[(usize, usize)]>,
) -> Vec<(usize, usize)> {
    let mut rest = vec![(start.max(1), end.max(start))];
    for &cut in shown.iter().chain(doc.unwrap_or_default()) {
        rest = super::docstring::without(&rest, cut);
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_definition_s_rest_is_what_its_head_window_and_docstring_leave() {
        // 300 lines: the head 100-111, a window around line 300, the gap and the tail left.
        let shown = spans_of(100, 399, Some(300));
        assert_eq!(shown, [(100, 111), (254, 391)]);
        assert_eq!(rest_of(100, 399, &shown, None), [(112, 253), (392, 399)]);
        let doc = [(113, 120)];
        assert_eq!(
            rest_of(100, 399, &shown, Some(&doc)),
            [(112, 112), (121, 253), (392, 399)]
        );
        // A short one is shown whole: no rest.
        let whole = spans_of(1, 40, Some(20));
        assert_eq!(rest_of(1, 40, &whole, None), []);
    }
}
