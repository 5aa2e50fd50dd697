//! The outline's walk, language by language: which nodes of each grammar are items, and how
//! their names, signatures and members are read.
use super::declarators::{conversion_operator, declarator_name, is_function_declarator};
use super::*;

impl<'s> Walk<'s> {
    pub(super) fn rust(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        let body = n.child_by_field_name("body");
        let function = if scope == Scope::Type {
            Kind::Method
        } else {
            Kind::Function
        };
        let kind = match n.kind() {
            "function_item" | "function_signature_item" => function,
            "struct_item" => Kind::Struct,
            "union_item" => Kind::Union,
            "enum_item" => Kind::Enum,
            "type_item" | "associated_type" => Kind::Type,
            "const_item" => Kind::Constant,
            "static_item" => Kind::Variable,
            "macro_definition" => Kind::Macro,
            "trait_item" => {
                if let Some(name) = n.child_by_field_name("name") {
                    let sym =
                        self.symbol(Kind::Trait, n, self.text(name), Some(name), body, anchor);
                    out.push(self.container(sym, body, Scope::Type, depth));
                }
                return;
            }
            "mod_item" => {
                if let Some(name) = n.child_by_field_name("name") {
                    let sym =
                        self.symbol(Kind::Module, n, self.text(name), Some(name), body, anchor);
                    out.push(self.container(sym, body, Scope::Top, depth));
                }
                return;
            }
            "impl_item" => {
                let ty = self.field_text(n, "type").unwrap_or("");
                let name = ty.split('<').next().unwrap_or(ty).trim();
                let sym = self.symbol(Kind::Impl, n, name, None, body, anchor);
                out.push(self.container(sym, body, Scope::Type, depth));
                return;
            }
            "macro_invocation" => {
                self.macro_functions(n, function, out);
                return;
            }
            "foreign_mod_item" => {
                if let Some(b) = body {
                    self.items(b, scope, depth + 1, out);
                }
                return;
            }
            _ => return,
        };
        self.named(kind, n, anchor, out);
    }

    pub(super) fn python(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        match n.kind() {
            "function_definition" => {
                let kind = if scope == Scope::Type {
                    Kind::Method
                } else {
                    Kind::Function
                };
                self.named(kind, n, anchor, out);
            }
            "class_definition" => {
                self.named_with_members(Kind::Class, n, anchor, Scope::Type, depth, out);
            }
            "decorated_definition" => {
                if let Some(def) = n.child_by_field_name("definition") {
                    self.python(def, anchor, scope, depth, out);
                }
            }
            "expression_statement" => {
                let Some(a) = n.named_child(0).filter(|a| a.kind() == "assignment") else {
                    return;
                };
                let Some(left) = a.child_by_field_name("left") else {
                    return;
                };
                let mut names = Vec::new();
                identifiers(left, &mut names);
                for name in names {
                    let text = self.text(name);
                    let kind = if scope == Scope::Type {
                        Kind::Field
                    } else if is_upper(text) {
                        Kind::Constant
                    } else {
                        Kind::Variable
                    };
                    out.push(self.symbol(kind, a, text, Some(name), None, anchor));
                }
            }
            "type_alias_statement" => {
                if let Some(name) = n.named_child(0) {
                    out.push(self.symbol(Kind::Type, n, self.text(name), Some(name), None, anchor));
                }
            }
            "if_statement" | "try_statement" | "with_statement" | "elif_clause" | "else_clause"
            | "except_clause" | "finally_clause" | "block" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    self.python(c, c, scope, depth + 1, out);
                }
            }
            _ => {}
        }
    }

    pub(super) fn script(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let kind = match n.kind() {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                Kind::Function
            }
            "method_definition" | "method_signature" | "abstract_method_signature" => Kind::Method,
            "public_field_definition" | "field_definition" | "property_signature" => Kind::Field,
            "type_alias_declaration" => Kind::Type,
            "enum_declaration" => Kind::Enum,
            "class_declaration"
            | "abstract_class_declaration"
            | "class"
            | "interface_declaration" => {
                let kind = if n.kind() == "interface_declaration" {
                    Kind::Interface
                } else {
                    Kind::Class
                };
                self.named_with_members(kind, n, anchor, Scope::Type, depth, out);
                return;
            }
            "internal_module" | "module" => {
                self.named_with_members(Kind::Namespace, n, anchor, Scope::Top, depth, out);
                return;
            }
            "export_statement" => {
                if let Some(d) = n.child_by_field_name("declaration") {
                    self.script(d, anchor, depth + 1, out);
                }
                return;
            }
            // An immediately invoked function (`((module) => { ... })(...)`, `(function () {
            // ... })()`): a bundle's or a UMD file's module scope, whose definitions are the
            // file's own.
            "call_expression" => {
                let callee = n
                    .child_by_field_name("function")
                    .filter(|f| f.kind() == "parenthesized_expression")
                    .and_then(|f| f.named_child(0))
                    .filter(|f| {
                        matches!(
                            f.kind(),
                            "arrow_function" | "function_expression" | "function"
                        )
                    });
                if let Some(body) = callee
                    .and_then(|f| f.child_by_field_name("body"))
                    .filter(|b| b.kind() == "statement_block")
                {
                    self.script(body, anchor, depth + 1, out);
                }
                return;
            }
            "ambient_declaration" | "expression_statement" | "statement_block" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    let inner_anchor = if n.kind() == "statement_block" {
                        c
                    } else {
                        anchor
                    };
                    self.script(c, inner_anchor, depth + 1, out);
                }
                return;
            }
            "lexical_declaration" | "variable_declaration" => {
                let constant = self.text(n).starts_with("const");
                let mut cursor = n.walk();
                for d in n.named_children(&mut cursor) {
                    let Some(name) = d.child_by_field_name("name") else {
                        continue;
                    };
                    let mut names = Vec::new();
                    identifiers(name, &mut names);
                    let value = d.child_by_field_name("value").map(|v| v.kind());
                    let kind = match value {
                        Some(
                            "arrow_function"
                            | "function_expression"
                            | "function"
                            | "generator_function",
                        ) => Kind::Function,
                        Some("class") => Kind::Class,
                        _ if constant => Kind::Constant,
                        _ => Kind::Variable,
                    };
                    for name in names {
                        let sig = if names_count(d) == 1 { n } else { d };
                        out.push(self.symbol(kind, sig, self.text(name), Some(name), None, anchor));
                    }
                    if let Some(object) = d
                        .child_by_field_name("value")
                        .filter(|v| v.kind() == "object")
                    {
                        self.script_object(object, out);
                    }
                }
                return;
            }
            "assignment_expression" => {
                self.script_assignment(n, anchor, out);
                return;
            }
            _ => return,
        };
        self.named(kind, n, anchor, out);
    }

    /// The functions a Rust macro's block holds (`cfg_rt! { pub fn spawn() {...} }`), read
    /// from its tokens as `fn NAME ... {...}`: no syntax tree says more inside a macro.
    fn macro_functions(&self, n: Node<'_>, kind: Kind, out: &mut Vec<Symbol>) {
        let mut cursor = n.walk();
        let Some(tree) = n
            .named_children(&mut cursor)
            .find(|c| c.kind() == "token_tree")
        else {
            return;
        };
        let mut cursor = tree.walk();
        let tokens: Vec<Node<'_>> = tree.children(&mut cursor).collect();
        for (i, t) in tokens.iter().enumerate() {
            let Some(name) = tokens
                .get(i + 1)
                .filter(|x| t.kind() == "fn" && x.kind() == "identifier")
            else {
                continue;
            };
            let body = tokens[i + 2..].iter().find(|x| {
                matches!(x.kind(), ";" | "fn")
                    || (x.kind() == "token_tree" && self.text(**x).starts_with('{'))
            });
            let Some(body) = body.filter(|x| x.kind() == "token_tree") else {
                continue;
            };
            // Its qualifiers before `fn`: `pub`, `pub(crate)`, `async`, `const`, `unsafe`, ...
            let mut from = i;
            loop {
                let before = |k: usize| from >= k && matches!(tokens[from - k].kind(), "pub");
                if from > 0
                    && matches!(
                        tokens[from - 1].kind(),
                        "pub" | "async" | "const" | "unsafe" | "extern" | "default"
                    )
                {
                    from -= 1;
                } else if from > 1 && tokens[from - 1].kind() == "token_tree" && before(2) {
                    from -= 2;
                } else {
                    break;
                }
            }
            let head = &self.src[tokens[from].start_byte()..body.start_byte()];
            let head = head.split_whitespace().collect::<Vec<_>>().join(" ");
            let name_text = self.text(*name);
            out.push(Symbol {
                kind,
                name: name_text.to_owned(),
                signature: clean::signature(&head, name_text),
                doc: None,
                line: name.start_position().row + 1,
                end_line: self.skimmed.end_row(*body) + 1,
                children: Vec::new(),
            });
        }
    }

    /// What an assignment binds as a function or a class (`app.render = function render()
    /// {...}`, `exports.parse = (s) => ...`, `Foo.prototype.bar = function () {...}`: named by
    /// the property assigned), and the functions of an object it assigns (`module.exports = {
    /// ... }`).
    fn script_assignment(&self, n: Node<'_>, anchor: Node<'_>, out: &mut Vec<Symbol>) {
        let (Some(left), Some(right)) = (
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
        ) else {
            return;
        };
        let name = match left.kind() {
            "identifier" => Some(left),
            "member_expression" => left.child_by_field_name("property"),
            _ => None,
        };
        match right.kind() {
            "arrow_function"
            | "function_expression"
            | "function"
            | "generator_function"
            | "class" => {
                let Some(name) = name else { return };
                let kind = if right.kind() == "class" {
                    Kind::Class
                } else if self.text(left).contains(".prototype.") {
                    Kind::Method
                } else {
                    Kind::Function
                };
                out.push(self.symbol(kind, n, self.text(name), Some(name), None, anchor));
            }
            "object" => self.script_object(right, out),
            _ => {}
        }
    }

    /// The functions an object literal holds: `{ get() {...}, post: function () {...}, put:
    /// () => ... }`, each a method named by its key.
    fn script_object(&self, object: Node<'_>, out: &mut Vec<Symbol>) {
        let mut cursor = object.walk();
        for c in object.named_children(&mut cursor) {
            match c.kind() {
                "method_definition" => {
                    self.named(Kind::Method, c, c, out);
                }
                "pair" => {
                    let (Some(key), Some(value)) =
                        (c.child_by_field_name("key"), c.child_by_field_name("value"))
                    else {
                        continue;
                    };
                    if matches!(
                        value.kind(),
                        "arrow_function"
                            | "function_expression"
                            | "function"
                            | "generator_function"
                    ) {
                        out.push(self.symbol(Kind::Method, c, self.text(key), Some(key), None, c));
                    }
                }
                _ => {}
            }
        }
    }

    pub(super) fn go(&self, n: Node<'_>, anchor: Node<'_>, out: &mut Vec<Symbol>) {
        match n.kind() {
            "package_clause" => {
                if let Some(name) = n.named_child(0) {
                    // Its comment is the file's doc, shown once above.
                    let mut sym =
                        self.symbol(Kind::Package, n, self.text(name), Some(name), None, anchor);
                    sym.doc = None;
                    out.push(sym);
                }
            }
            "function_declaration" => {
                self.named(Kind::Function, n, anchor, out);
            }
            "method_declaration" => {
                self.named(Kind::Method, n, anchor, out);
            }
            "type_declaration" | "const_declaration" | "var_declaration" | "var_spec_list" => {
                let mut cursor = n.walk();
                let specs: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
                let single = specs.len() == 1 && n.kind() != "var_spec_list";
                for spec in specs {
                    // A lone spec reads best with its keyword (`type Store struct`); one of a
                    // group with its own line.
                    let (sig, anchor) = if single { (n, anchor) } else { (spec, spec) };
                    let kind = match spec.kind() {
                        "type_spec" | "type_alias" => {
                            match spec.child_by_field_name("type").map(|t| t.kind()) {
                                Some("struct_type") => Kind::Struct,
                                Some("interface_type") => Kind::Interface,
                                _ => Kind::Type,
                            }
                        }
                        "const_spec" => Kind::Constant,
                        "var_spec" => Kind::Variable,
                        "var_spec_list" => {
                            self.go(spec, spec, out);
                            continue;
                        }
                        _ => continue,
                    };
                    let mut c = spec.walk();
                    for name in spec.children_by_field_name("name", &mut c) {
                        if name.kind() == "," {
                            continue;
                        }
                        out.push(self.symbol(kind, sig, self.text(name), Some(name), None, anchor));
                    }
                }
            }
            _ => {}
        }
    }

    pub(super) fn java(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        let kind = match n.kind() {
            "package_declaration" => {
                // Its name, not an annotation before it (`@CheckReturnValue package p;`).
                let mut cursor = n.walk();
                let name = n
                    .named_children(&mut cursor)
                    .find(|c| matches!(c.kind(), "scoped_identifier" | "identifier"));
                if let Some(name) = name {
                    out.push(self.symbol(
                        Kind::Package,
                        n,
                        self.text(name),
                        Some(name),
                        None,
                        anchor,
                    ));
                }
                return;
            }
            "class_declaration"
            | "record_declaration"
            | "enum_declaration"
            | "interface_declaration"
            | "annotation_type_declaration" => {
                let kind = match n.kind() {
                    "enum_declaration" => Kind::Enum,
                    "interface_declaration" | "annotation_type_declaration" => Kind::Interface,
                    _ => Kind::Class,
                };
                self.named_with_members(kind, n, anchor, Scope::Type, depth, out);
                return;
            }
            "enum_body_declarations" => {
                self.items(n, scope, depth + 1, out);
                return;
            }
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration"
            | "annotation_type_element_declaration" => Kind::Method,
            "field_declaration" | "constant_declaration" => {
                let modifiers = n
                    .named_child(0)
                    .filter(|m| m.kind() == "modifiers")
                    .map_or("", |m| self.text(m));
                let constant = n.kind() == "constant_declaration"
                    || (modifiers.contains("static") && modifiers.contains("final"));
                let kind = if constant {
                    Kind::Constant
                } else {
                    Kind::Field
                };
                let mut cursor = n.walk();
                for d in n.children_by_field_name("declarator", &mut cursor) {
                    if let Some(name) = d.child_by_field_name("name") {
                        out.push(self.symbol(kind, n, self.text(name), Some(name), None, anchor));
                    }
                }
                return;
            }
            _ => return,
        };
        self.named(kind, n, anchor, out);
    }

    pub(super) fn c(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        match n.kind() {
            "preproc_def" | "preproc_function_def" => self.c_macro(n, anchor, out),
            // An ERROR node holds what parsed around what did not: a header whose macros the
            // grammar cannot follow (fmt's `FMT_BEGIN_NAMESPACE`) can be one ERROR from its
            // first declaration to its last, with every definition inside.
            "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif"
            | "preproc_elifdef" | "declaration_list" | "ERROR" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    self.c(c, c, scope, depth + 1, out);
                }
            }
            "linkage_specification" => {
                if let Some(b) = n.child_by_field_name("body") {
                    self.c(
                        b,
                        if b.kind() == "declaration_list" {
                            b
                        } else {
                            anchor
                        },
                        scope,
                        depth + 1,
                        out,
                    );
                }
            }
            "template_declaration" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    if c.kind() != "template_parameter_list" {
                        self.c(c, anchor, scope, depth + 1, out);
                    }
                }
            }
            "namespace_definition" => {
                let name = n.child_by_field_name("name");
                let text = name.map_or("(anonymous)", |x| self.text(x));
                let body = n.child_by_field_name("body");
                let sym = self.symbol(Kind::Namespace, n, text, name, body, anchor);
                out.push(self.container(sym, body, Scope::Top, depth));
            }
            "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
                self.tagged(n, anchor, depth, out);
            }
            "function_definition" => self.c_function(n, anchor, scope, depth, out),
            // A friend defined in its class (`friend auto operator==(...) -> bool {...}`).
            "friend_declaration" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    if c.kind() == "function_definition" {
                        self.c_function(c, anchor, scope, depth + 1, out);
                    }
                }
            }
            "declaration" | "field_declaration" | "type_definition" => {
                self.c_declaration(n, anchor, scope, depth, out);
            }
            "alias_declaration" => {
                self.named(Kind::Type, n, anchor, out);
            }
            "concept_definition" => {
                self.named(Kind::Type, n, anchor, out);
            }
            _ => {}
        }
    }

    /// A C or C++ `#define`: one entry per macro name, and none for an include guard.
    fn c_macro(&self, n: Node<'_>, anchor: Node<'_>, out: &mut Vec<Symbol>) {
        // One entry per macro: the branches of an `#if` define it again. An include
        // guard (`#define FMT_FORMAT_H_`, no value) defines nothing to look for.
        let name = self.field_text(n, "name").unwrap_or_default();
        let guard = n.kind() == "preproc_def"
            && n.child_by_field_name("value").is_none()
            && ["_H", "_H_", "_HPP", "_HPP_", "_INCLUDED", "_INCLUDED_"]
                .iter()
                .any(|s| name.ends_with(s));
        let again = out.iter().any(|s| s.kind == Kind::Macro && s.name == name);
        if !guard && !again {
            self.named(Kind::Macro, n, anchor, out);
        }
    }

    /// A C or C++ function definition: a function (a method in a type's scope), or, without
    /// a parameter list, a macro's line whose children are outlined instead.
    fn c_function(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        let declarator = n.child_by_field_name("declarator");
        if let Some((at, named)) = declarator.and_then(|d| conversion_operator(self.src, n, d)) {
            let body = n.child_by_field_name("body");
            let function = c_function_kind(scope);
            out.push(self.symbol(function, n, &named, Some(at), body, anchor));
            return;
        }
        if !declarator.is_some_and(is_function_declarator) {
            // No parameter list: a line that only invokes a macro (fmt's
            // `FMT_BEGIN_EXPORT`) read as a function whose body is the definition
            // after it. What it holds is outlined instead.
            let mut cursor = n.walk();
            for c in n.named_children(&mut cursor) {
                self.c(c, c, scope, depth + 1, out);
            }
            return;
        }
        if let Some(name) = declarator.and_then(declarator_name) {
            let body = n.child_by_field_name("body");
            let function = c_function_kind(scope);
            let named = recovered_name(self.text(name), name.has_error());
            out.push(self.symbol(function, n, named, Some(name), body, anchor));
        }
    }

    /// A C or C++ declaration, field declaration or typedef: the type it defines inline, then
    /// one symbol per declarator (none for a data member).
    fn c_declaration(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        if let Some(t) = n.child_by_field_name("type") {
            self.tagged(t, anchor, depth, out);
        }
        let mut cursor = n.walk();
        for d in n.children_by_field_name("declarator", &mut cursor) {
            if let Some((at, named)) = conversion_operator(self.src, n, d) {
                let function = c_function_kind(scope);
                out.push(self.symbol(function, n, &named, Some(at), None, anchor));
                continue;
            }
            let Some(name) = declarator_name(d) else {
                continue;
            };
            let kind = if n.kind() == "type_definition" {
                Kind::Type
            } else if is_function_declarator(d) {
                c_function_kind(scope)
            } else if n.kind() == "field_declaration" {
                // Data members are the class's business; its methods are its interface.
                continue;
            } else {
                Kind::Variable
            };
            let named = recovered_name(self.text(name), name.has_error());
            out.push(self.symbol(kind, n, named, Some(name), None, anchor));
        }
    }

    /// A struct, union, enum or class specifier that has a name and a body: a definition.
    pub(super) fn tagged(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        let kind = match n.kind() {
            "struct_specifier" => Kind::Struct,
            "union_specifier" => Kind::Union,
            "enum_specifier" => Kind::Enum,
            "class_specifier" => Kind::Class,
            _ => return,
        };
        let (Some(name), Some(body)) =
            (n.child_by_field_name("name"), n.child_by_field_name("body"))
        else {
            return;
        };
        let sym = self.symbol(kind, n, self.text(name), Some(name), Some(body), anchor);
        let members = self.lang == Language::Cpp && kind != Kind::Enum;
        out.push(if members {
            self.container(sym, Some(body), Scope::Type, depth)
        } else {
            sym
        });
    }
}

/// What a C or C++ function declared in `scope` is: a method in a type's, else a function.
fn c_function_kind(scope: Scope) -> Kind {
    if scope == Scope::Type {
        Kind::Method
    } else {
        Kind::Function
    }
}

fn is_upper(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase()) && !name.chars().any(|c| c.is_ascii_lowercase())
}
/// The identifiers a pattern binds (`a`, `a, b`, `[a, b]`, `{ a, b: c }`).
fn identifiers<'t>(n: Node<'t>, out: &mut Vec<Node<'t>>) {
    match n.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => out.push(n),
        "pattern_list" | "tuple_pattern" | "list_pattern" | "array_pattern" | "object_pattern"
        | "pair_pattern" | "assignment_pattern" | "rest_pattern" => {
            let mut cursor = n.walk();
            let children: Vec<Node<'t>> = if n.kind() == "pair_pattern" {
                n.child_by_field_name("value").into_iter().collect()
            } else if n.kind() == "assignment_pattern" {
                n.child_by_field_name("left").into_iter().collect()
            } else {
                n.named_children(&mut cursor).collect()
            };
            for c in children {
                identifiers(c, out);
            }
        }
        _ => {}
    }
}
/// How many names a JavaScript declarator binds.
fn names_count(declarator: Node<'_>) -> usize {
    let mut names = Vec::new();
    if let Some(n) = declarator.child_by_field_name("name") {
        identifiers(n, &mut names);
    }
    names.len()
}
