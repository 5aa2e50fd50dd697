//! Module doc: what the skimming lexer must read right.
use std::fmt;

/// Doc of a.
pub fn a(x: [u8; 4]) -> impl Fn() -> u8 {
    let c = '{';
    let s = "}}}";
    let r = r#"{"#;
    let l: &'static str = "}";
    /* { nested /* } */ still a comment } */
    move || x[0] + c as u8 + s.len() as u8 + r.len() as u8 + l.len() as u8
}

macro_rules! twice {
    ($x:expr) => {
        $x + $x
    };
}

/// A table of pairs.
pub const TABLE: &[(char, char)] = &[('[', ']'), ('{', '}'), ('a', 'b'), ('c', 'd'), (']', '[')];

pub struct S<'a> {
    name: &'a str,
}

impl<'a> S<'a> {
    /// Doc of b.
    pub fn b(&self) -> usize {
        if self.name == "}" {
            return twice!(1);
        }
        self.name.len()
    }
}

impl fmt::Display for S<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.name)
    }
}

pub trait T {
    /// Doc of c.
    fn c(&self) -> u8 {
        1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1
    }
    fn d(&self);
}

extern "C" {
    fn e(x: i32) -> i32;
}

#[cfg(test)]
mod tests {
    #[test]
    fn t() {
        assert_eq!(super::TABLE.len(), 5, "a table of {} pairs", 5);
    }
}
