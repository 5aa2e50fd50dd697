//! Plain-text tables: the policy grid and the CLI's audit log, aligned the same way.

/// Rows as left-aligned columns two spaces apart, widths measured in chars (not bytes, so a
/// cell with non-ASCII text does not push its column out), each line trimmed at the end and
/// ended by a newline.
pub fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::table;

    #[test]
    fn columns_are_aligned_by_chars() {
        let rows = vec![
            vec!["é".to_owned(), "x".to_owned()],
            vec!["ab".to_owned(), "y".to_owned()],
        ];
        assert_eq!(table(&rows), "é   x\nab  y\n");
    }
}
