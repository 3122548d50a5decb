//! The fields a typed decode drops, kept aside and put back.
//!
//! Decoding an object into a Rust type keeps only the fields the type models. A webhook that decodes, changes
//! and re-encodes an object would silently delete the rest: fields of a newer OpenKruise or Kubernetes
//! version, anything under a schemaless pod template. [`UnknownFields::between`] records what the typed copy
//! lost (by comparing the original JSON with the typed copy encoded again) and [`UnknownFields::restore`] puts
//! it back into the answer, where the answer has nothing at that place.
//!
//! ```
//! use k8s_openapi::api::core::v1::Container;
//! use kruise_api::unknown_fields::UnknownFields;
//! use serde_json::json;
//!
//! let original = json!({"name": "app", "image": "nginx", "futureField": {"on": true}});
//! let typed: Container = serde_json::from_value(original.clone()).unwrap();
//! let unknown = UnknownFields::between(&original, &serde_json::to_value(&typed).unwrap());
//! assert!(!unknown.is_empty());
//!
//! let mut changed = typed.clone();
//! changed.image = Some("nginx:1.27".to_owned());
//! let mut answer = serde_json::to_value(&changed).unwrap();
//! unknown.restore(&mut answer);
//! assert_eq!(answer, json!({"name": "app", "image": "nginx:1.27", "futureField": {"on": true}}));
//! ```

use std::collections::BTreeMap;

use serde_json::Value;

/// What a typed copy of an object lacks compared with the object as received (see the [module](self)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnknownFields {
    root: Node,
}

/// The unknown parts under one JSON value.
#[derive(Debug, Clone, Default, PartialEq)]
enum Node {
    /// Nothing unknown here.
    #[default]
    Nothing,
    /// Keys of an object: unknown ones with their values, known ones with what is unknown beneath them.
    Fields(BTreeMap<String, Entry>),
    /// Items of an array of `len` items (matched by position), with what is unknown in each.
    Items {
        /// The array's length: an answer whose array has another length is not matched.
        len: usize,
        /// What is unknown in each item, by position.
        items: BTreeMap<usize, Node>,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Entry {
    /// A key the typed copy does not have, with its value.
    Unknown(Value),
    /// A key both have; something beneath it is unknown.
    Beneath(Node),
}

impl UnknownFields {
    /// What `original` has that `known` (the same object decoded into a type and encoded again) lacks.
    ///
    /// A key counts as unknown when `known` has no such key at the same place; a `null` value is the same as
    /// no value and never counts. Arrays are compared item by item when both have the same length (the
    /// typed copy keeps list order); otherwise nothing beneath them is recorded.
    #[must_use]
    pub fn between(original: &Value, known: &Value) -> Self {
        Self {
            root: node_between(original, known),
        }
    }

    /// Whether the typed copy kept everything.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.root == Node::Nothing
    }

    /// Puts the unknown fields back into `target` (the typed answer, encoded): each unknown key is added to the
    /// object found at its place, unless that object already has a value for it (the typed answer wins). A
    /// place `target` no longer has (an object the answer dropped or moved, an array that changed length) is
    /// skipped.
    pub fn restore(&self, target: &mut Value) {
        restore_node(&self.root, target);
    }
}

fn node_between(original: &Value, known: &Value) -> Node {
    match (original, known) {
        (Value::Object(original), Value::Object(known)) => {
            let mut fields = BTreeMap::new();
            for (key, value) in original {
                match known.get(key) {
                    _ if value.is_null() => {}
                    None | Some(Value::Null) => {
                        fields.insert(key.clone(), Entry::Unknown(value.clone()));
                    }
                    Some(known) => {
                        let beneath = node_between(value, known);
                        if beneath != Node::Nothing {
                            fields.insert(key.clone(), Entry::Beneath(beneath));
                        }
                    }
                }
            }
            if fields.is_empty() {
                Node::Nothing
            } else {
                Node::Fields(fields)
            }
        }
        (Value::Array(original), Value::Array(known)) if original.len() == known.len() => {
            let items: BTreeMap<usize, Node> = original
                .iter()
                .zip(known)
                .enumerate()
                .map(|(index, (original, known))| (index, node_between(original, known)))
                .filter(|(_, node)| *node != Node::Nothing)
                .collect();
            if items.is_empty() {
                Node::Nothing
            } else {
                Node::Items {
                    len: original.len(),
                    items,
                }
            }
        }
        _ => Node::Nothing,
    }
}

fn restore_node(node: &Node, target: &mut Value) {
    match (node, target) {
        (Node::Fields(fields), Value::Object(target)) => {
            for (key, entry) in fields {
                match entry {
                    Entry::Unknown(value) => {
                        let slot = target.entry(key.clone()).or_insert(Value::Null);
                        if slot.is_null() {
                            *slot = value.clone();
                        }
                    }
                    Entry::Beneath(beneath) => {
                        if let Some(inner) = target.get_mut(key) {
                            restore_node(beneath, inner);
                        }
                    }
                }
            }
        }
        (Node::Items { len, items }, Value::Array(target)) if target.len() == *len => {
            for (index, beneath) in items {
                if let Some(inner) = target.get_mut(*index) {
                    restore_node(beneath, inner);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nothing_unknown_when_the_typed_copy_kept_everything() {
        let object = json!({"a": 1, "b": {"c": [1, {"d": 2}]}});
        assert!(UnknownFields::between(&object, &object).is_empty());
    }

    #[test]
    fn nulls_are_not_fields() {
        let original = json!({"a": null, "b": {"c": null}});
        assert!(UnknownFields::between(&original, &json!({"b": {}})).is_empty());
    }

    #[test]
    fn unknown_keys_at_every_depth_come_back() {
        let original = json!({
            "spec": {"replicas": 3, "future": {"x": 1},
                "template": {"spec": {"containers": [
                    {"name": "a", "newer": true}, {"name": "b"}]}}},
            "status": {"seen": 1}
        });
        let known = json!({
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}}
        });
        let unknown = UnknownFields::between(&original, &known);
        let mut answer = json!({
            "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}}
        });
        unknown.restore(&mut answer);
        assert_eq!(
            answer,
            json!({
                "spec": {"replicas": 5, "future": {"x": 1},
                    "template": {"spec": {"containers": [{"name": "a", "newer": true}, {"name": "b"}]}}},
                "status": {"seen": 1}
            })
        );
    }

    #[test]
    fn the_typed_answer_wins_and_lost_places_are_skipped() {
        let original = json!({"spec": {"a": 1, "moved": {"x": 1}}, "list": [{"k": 1}]});
        let known = json!({"spec": {"moved": {}}, "list": [{}]});
        let unknown = UnknownFields::between(&original, &known);
        // The answer set `a` itself, no longer has `moved`, and its list changed length.
        let mut answer = json!({"spec": {"a": 2}, "list": [{}, {}]});
        unknown.restore(&mut answer);
        assert_eq!(answer, json!({"spec": {"a": 2}, "list": [{}, {}]}));
    }

    #[test]
    fn arrays_of_different_lengths_record_nothing_beneath() {
        let original = json!({"list": [{"k": 1}, {"k": 2}]});
        let known = json!({"list": [{}]});
        assert!(UnknownFields::between(&original, &known).is_empty());
    }
}
