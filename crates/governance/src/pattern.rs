//! The patterns of a policy: wildcards over tool names and argument values, and the lexical path
//! normalization applied to `path` arguments before they are matched.

/// Whether `text` matches `pattern`, where `*` stands for any run of characters (`/` included)
/// and `?` for one character; every other character stands for itself.
pub(crate) fn wildcard(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // The last `*` seen and the text position it has absorbed up to, for backtracking.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// `path` as the workspace tools resolve it, `..` applied lexically, so `./.merkle/x` and
/// `src/../.merkle/x` meet a rule on `.merkle/*` ([`merkle_hash::lexical_path`]).
pub(crate) fn normalize_path(path: &str) -> String {
    merkle_hash::lexical_path(path)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn wildcards() {
        let cases = [
            ("read_file", "read_file", true),
            ("read_*", "read_file", true),
            ("read_*", "write_file", false),
            ("*", "", true),
            (".merkle/*", ".merkle/audit.jsonl", true),
            (".merkle/*", ".merkle/a/b", true),
            (".merkle/*", ".merkle", false),
            ("rm -rf *", "rm -rf /", true),
            ("?at", "cat", true),
            ("?at", "at", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
        ];
        let got: Vec<_> = cases
            .iter()
            .map(|(p, t, _)| (*p, *t, wildcard(p, t)))
            .collect();
        assert_eq!(got, cases);
    }

    #[test]
    fn paths() {
        let cases = [
            ("src/lib.rs", "src/lib.rs"),
            ("./.merkle/x", ".merkle/x"),
            ("src/../.merkle/x", ".merkle/x"),
            ("a//b/./c/", "a/b/c"),
            ("../x", "../x"),
            ("../../x/..", "../.."),
            ("/etc/../passwd", "/passwd"),
            ("/..", "/"),
        ];
        let got: Vec<_> = cases.iter().map(|(p, _)| (*p, normalize_path(p))).collect();
        let want: Vec<_> = cases.iter().map(|(p, n)| (*p, n.to_string())).collect();
        assert_eq!(got, want);
    }
}
