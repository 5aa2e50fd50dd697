//! Error excerpts: text cut to a byte budget without splitting a character. Every cut in the
//! workspace is std's `str::floor_char_boundary` (or `ceil_char_boundary`), stable since Rust
//! 1.91, the workspace's minimum.

/// `text` cut to at most `limit` bytes at a char boundary, with `...` when anything was cut.
pub fn excerpt(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    format!("{}...", &text[..text.floor_char_boundary(limit)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_char_boundaries() {
        // "é" is two bytes: 1..3.
        let text = "aé b";
        assert_eq!(excerpt(text, 2), "a...");
        assert_eq!(excerpt(text, 5), "aé b");
    }
}
