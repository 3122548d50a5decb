//! JSON text exactly as Go's `encoding/json` writes it.
//!
//! Hashes and byte-compared annotation values depend on Go's output, which differs from `serde_json`'s:
//!
//! * object keys of maps are sorted by bytes (Go sorts map keys; revision data goes through a map, so every key
//!   is sorted there);
//! * `<`, `>` and `&` are escaped as `\u003c`, `\u003e`, `\u0026`, and U+2028 / U+2029 as `\u2028` / `\u2029`;
//!   control characters use `\b`, `\f`, `\n`, `\r`, `\t` or `\u00XX` with lowercase hex (Go 1.22 and later);
//! * numbers are `float64` values after a round trip through `map[string]interface{}`: integers beyond 2^53
//!   lose precision, and magnitudes of 1e21 or more (or below 1e-6) use exponent notation like `1e+21`.
//!
//! Which fields of a Kubernetes object appear at all (Go's `omitempty` rules, structs that are never omitted,
//! Go's field order) is decided by the crate's tables of Go's struct definitions, which this module exposes
//! for the two kinds other crates hash: [`container_value`] and [`write_container`] for a `corev1.Container`,
//! [`volume_value`] for a `corev1.Volume` (kruise-sidecar's SidecarSet hashes and revisions are built on them).
//!
//! Use this module when a value you compute must equal one the Go OpenKruise computes from the same object
//! (a hash, an annotation compared byte for byte); for anything else `serde_json` is the right writer.

use std::fmt::Write as _;

use serde_json::Value;

pub use crate::go_types::{GoJsonError, container_value, volume_value, write_container};

/// Writes `value` as Go writes a decoded `interface{}` value: maps with sorted keys, Go escaping and Go number
/// formatting.
pub fn write_sorted(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => write_number(out, number),
        Value::String(text) => write_str(out, text),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_sorted(out, item);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_str(out, key);
                out.push(':');
                if let Some(field) = fields.get(key) {
                    write_sorted(out, field);
                }
            }
            out.push('}');
        }
    }
}

/// [`write_sorted`] into a new string.
#[must_use]
pub fn to_string_sorted(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_sorted(&mut out, value);
    out
}

/// Writes a JSON string literal with Go's escaping.
pub fn write_str(out: &mut String, text: &str) {
    out.push('"');
    let mut start = 0;
    for (index, ch) in text.char_indices() {
        let escape: Option<&str> = match ch {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '<' => Some("\\u003c"),
            '>' => Some("\\u003e"),
            '&' => Some("\\u0026"),
            '\u{2028}' => Some("\\u2028"),
            '\u{2029}' => Some("\\u2029"),
            c if u32::from(c) < 0x20 => None,
            _ => continue,
        };
        out.push_str(text.get(start..index).unwrap_or_default());
        match escape {
            Some(escaped) => out.push_str(escaped),
            None => {
                let _ = write!(out, "\\u{:04x}", u32::from(ch));
            }
        }
        start = index + ch.len_utf8();
    }
    out.push_str(text.get(start..).unwrap_or_default());
    out.push('"');
}

/// Writes a number as Go writes a `float64` (every JSON number Go decodes into `interface{}` is one).
pub fn write_number(out: &mut String, number: &serde_json::Number) {
    #[allow(clippy::cast_precision_loss)]
    let float = if let Some(int) = number.as_i64() {
        int as f64
    } else if let Some(uint) = number.as_u64() {
        uint as f64
    } else {
        number.as_f64().unwrap_or(0.0)
    };
    write_float(out, float);
}

/// Go's `encoding/json` formatting of a `float64`.
pub fn write_float(out: &mut String, float: f64) {
    let magnitude = float.abs();
    if magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude) {
        // Go: 'e' format with the shortest digits, exponent with a sign and at least one digit.
        let text = format!("{float:e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) => {
                out.push_str(mantissa);
                out.push('e');
                if !exponent.starts_with('-') {
                    out.push('+');
                }
                out.push_str(exponent);
            }
            None => out.push_str(&text),
        }
    } else {
        let _ = write!(out, "{float}");
    }
}

/// Rewrites `serde_json` output into Go's escaping: `serde_json` leaves `<`, `>`, `&`, U+2028 and U+2029 as
/// they are, Go escapes them. They can only occur inside string literals, so a plain replacement is exact.
#[must_use]
pub fn escape_like_go(json: String) -> String {
    if !json
        .chars()
        .any(|c| matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}'))
    {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for ch in json.chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            _ => out.push(ch),
        }
    }
    out
}

/// `serde_json::to_string` with Go's escaping. The types this crate serialises have only string keys and
/// cannot fail to serialise.
#[must_use]
pub fn to_string_like_go<T: serde::Serialize>(value: &T) -> String {
    escape_like_go(serde_json::to_string(value).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escaping_matches_go() {
        let mut out = String::new();
        write_str(&mut out, "a<b>&c\"d\\e\n\t\u{1}\u{8}\u{c}\u{7f}\u{2028}é");
        assert_eq!(
            out,
            r#""a\u003cb\u003e\u0026c\"d\\e\n\t\u0001\b\f"#.to_owned()
                + "\u{7f}"
                + r"\u2028é"
                + "\""
        );
    }

    #[test]
    fn maps_are_sorted_by_bytes() {
        let value = json!({"b": 1, "a": {"z": [true, null], "$patch": "replace"}, "B": "x"});
        assert_eq!(
            to_string_sorted(&value),
            r#"{"B":"x","a":{"$patch":"replace","z":[true,null]},"b":1}"#
        );
    }

    #[test]
    fn numbers_go_through_float64() {
        let cases: [(Value, &str); 7] = [
            (json!(30), "30"),
            (json!(-5), "-5"),
            (json!(9_007_199_254_740_993_i64), "9007199254740992"),
            (json!(1e21), "1e+21"),
            (json!(1.5e-7), "1.5e-7"),
            (json!(0.5), "0.5"),
            (
                json!(100_000_000_000_000_000_000.0),
                "100000000000000000000",
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(to_string_sorted(&value), expected, "{value}");
        }
    }

    #[test]
    fn serde_output_is_reescaped() {
        let value = json!({"k": "<a&b>"});
        assert_eq!(to_string_like_go(&value), r#"{"k":"\u003ca\u0026b\u003e"}"#);
    }
}
