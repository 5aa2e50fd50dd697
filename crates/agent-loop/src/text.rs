//! Cutting text to a byte budget without splitting a character: the one helper that tool
//! output caps, identity-file caps, ledgers and model prompts all share.

/// The largest index at most `index` that is on a char boundary of `text`.
pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}
