//! Paths as text, normalised lexically: what the store, governance's rules and import
//! resolution share, without touching the file system.

/// `path` with `.` and empty components dropped and `..` applied lexically (the path may name
/// something no longer on disk, so nothing is resolved through the file system): the one
/// lexical normalisation the store, governance's rules and import resolution share. A leading
/// `/` is kept (and `..` stops there); leading `..` components of a relative path are kept.
pub fn lexical_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_and_empty_parts_go_and_parents_apply() {
        assert_eq!(lexical_path("src/./a//b/../c.rs"), "src/a/c.rs");
        assert_eq!(lexical_path("../x/../../y"), "../../y");
        assert_eq!(lexical_path("/a/../../b"), "/b");
        assert_eq!(lexical_path("src/../.merkle/x"), ".merkle/x");
    }
}
