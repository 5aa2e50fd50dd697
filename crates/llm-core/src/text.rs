//! Cutting text to a byte budget without splitting a character: the one helper that error
//! excerpts, playback diagnostics, simulated streams and the agent's output caps all share
//! (here, in the leaf every one of them depends on).

/// The largest index at most `index` that is on a char boundary of `text`.
pub fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The smallest index at least `index` that is on a char boundary of `text`.
pub fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// `text` cut to at most `limit` bytes at a char boundary, with `...` when anything was cut.
pub fn excerpt(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    format!("{}...", &text[..floor_char_boundary(text, limit)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_char_boundaries() {
        // "é" is two bytes: 1..3.
        let text = "aé b";
        assert_eq!(
            (0..=5)
                .map(|i| (floor_char_boundary(text, i), ceil_char_boundary(text, i)))
                .collect::<Vec<_>>(),
            [(0, 0), (1, 1), (1, 3), (3, 3), (4, 4), (5, 5)]
        );
        assert_eq!(excerpt(text, 2), "a...");
        assert_eq!(excerpt(text, 5), "aé b");
    }
}
