//! Canonical JSON and the argument hash: one byte string per JSON value, whatever the key order
//! it arrived in.
//!
//! The form is ours, not RFC 8785: object keys sorted by their UTF-8 bytes, no whitespace, and
//! strings and numbers written as `serde_json` writes them. It does not depend on serde_json's
//! `preserve_order` feature, which another crate in a build could switch on.
use serde_json::Value;

/// `value` in canonical form.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&scalar(&Value::String(key.clone())));
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&scalar(other)),
    }
}

fn scalar(value: &Value) -> String {
    serde_json::to_string(value).expect("a JSON scalar always serializes")
}

/// The argument hash of a tool call: blake3 (hex) of the canonical JSON of its arguments. Two
/// calls with equal arguments hash alike whatever their key order.
pub fn args_hash(args: &Value) -> String {
    blake3::hash(canonical_json(args).as_bytes())
        .to_hex()
        .to_string()
}
