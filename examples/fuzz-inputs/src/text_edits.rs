//! Edits of a valid text, for structure-aware fuzzing: an input is built from valid pieces, then cut, spliced
//! or patched in a few places, so that most inputs get deep into a parser before they go wrong.

use proptest::prelude::*;
use proptest::sample::{Index, select};

/// Fragments spliced into texts: JSON punctuation, the numbers and escapes that break parsers, and
/// characters that are not ASCII.
const FRAGMENTS: &[&str] = &[
    "\"",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\\",
    "null",
    "true",
    "0",
    "-0",
    "-1",
    "1e999",
    "2147483648",
    "9223372036854775808",
    "1.5",
    "\"\"",
    "{}",
    "[]",
    "\\u0000",
    "\\ud800",
    "é",
    "\u{0}",
    " ",
    "%",
];

/// One edit of a text (positions are picked in the text as it is when the edit applies).
#[derive(Clone, Debug)]
pub enum Edit {
    /// Drop everything from a position on.
    Cut(Index),
    /// Drop the characters between two positions.
    Remove(Index, Index),
    /// Insert a fragment at a position.
    Insert(Index, &'static str),
    /// Replace the character at a position with a fragment.
    Replace(Index, &'static str),
}

/// Any one edit.
pub fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<Index>().prop_map(Edit::Cut),
        (any::<Index>(), any::<Index>()).prop_map(|(from, to)| Edit::Remove(from, to)),
        (any::<Index>(), select(FRAGMENTS)).prop_map(|(at, text)| Edit::Insert(at, text)),
        (any::<Index>(), select(FRAGMENTS)).prop_map(|(at, text)| Edit::Replace(at, text)),
    ]
}

/// `text` as it is (one time in four) or with one to three edits.
pub fn edited(text: String) -> impl Strategy<Value = String> {
    prop::collection::vec(edit(), 0..=3).prop_map(move |edits| apply(&text, &edits))
}

/// Applies the edits in order.
pub fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for edit in edits {
        let positions = chars.len() + 1;
        match edit {
            Edit::Cut(at) => chars.truncate(at.index(positions)),
            Edit::Remove(from, to) => {
                let (from, to) = (from.index(positions), to.index(positions));
                chars.drain(from.min(to)..from.max(to));
            }
            Edit::Insert(at, fragment) => {
                let at = at.index(positions);
                chars.splice(at..at, fragment.chars());
            }
            Edit::Replace(at, fragment) => {
                let at = at.index(positions);
                let end = (at + 1).min(chars.len());
                chars.splice(at..end, fragment.chars());
            }
        }
    }
    chars.into_iter().collect()
}
