//! Members an outline leaves out but search finds (`Parsed::members`): one
//! `check(language, source, expected)` table, each expected line `kind name @line`, on the
//! skimmed parse the facts come from. Nothing a function defines for itself is a member.
#![cfg(all(
    feature = "rust",
    feature = "javascript",
    feature = "typescript",
    feature = "go",
    feature = "java",
    feature = "c",
    feature = "cpp"
))]
use outline::{Language, Parser};
use pretty_assertions::assert_eq;

fn check(language: Language, source: &str, expected: &[&str]) {
    let mut parser = Parser::new();
    let parsed = parser.skim(language, source).expect("parses");
    let got: Vec<String> = parsed
        .members()
        .iter()
        .map(|m| format!("{} {} @{}", m.kind.noun(), m.name, m.line))
        .collect();
    assert_eq!(got, expected, "{language} source:\n{source}");
}

#[test]
fn rust_enum_variants_and_struct_fields_outside_functions() {
    check(
        Language::Rust,
        "pub enum ErrorCode {\n    Message(Box<str>),\n    ExpectedDoubleQuote,\n    Eof { at: usize },\n}\n\
         pub struct Point {\n    pub x: i32,\n    y: i32,\n}\n\
         pub struct Pair(u8, u8);\n\
         mod inner {\n    union Bits { word: u32, bytes: [u8; 4] }\n}\n\
         fn local() {\n    enum Hidden { Nope }\n    struct Also { no: u8 }\n}\n",
        &[
            "variant Message @2",
            "variant ExpectedDoubleQuote @3",
            "variant Eof @4",
            "field x @7",
            "field y @8",
            "field word @12",
            "field bytes @12",
        ],
    );
}

#[test]
fn enumerators_and_enum_constants_and_go_fields() {
    check(
        Language::C,
        "enum color { RED, GREEN = 2 };\nint f(void) { enum inner { NOPE }; return 0; }\n",
        &["variant RED @1", "variant GREEN @1"],
    );
    check(
        Language::Java,
        "enum Planet {\n  MERCURY(1), VENUS(2);\n  void m() { int unusedLocalVariable = 1; }\n}\n",
        &["variant MERCURY @2", "variant VENUS @2"],
    );
    check(
        Language::TypeScript,
        "export enum Direction {\n  Up = 1,\n  Down,\n  SomewhereFarAwayFromHere,\n}\n",
        &[
            "variant Up @2",
            "variant Down @3",
            "variant SomewhereFarAwayFromHere @4",
        ],
    );
    check(
        Language::Go,
        "package p\n\ntype Server struct {\n\tAddr, Host string\n\tPort int\n\tReadHeaderTimeout int\n}\n\nfunc (s *Server) Serve() error {\n\ttype local struct{ hidden int }\n\treturn nil\n}\n",
        &[
            "field Addr @4",
            "field Host @4",
            "field Port @5",
            "field ReadHeaderTimeout @6",
        ],
    );
}
