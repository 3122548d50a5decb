//! The RFC 6902 patch of an admission response: the operations that turn the admitted pod into the injected
//! one. Injection only changes annotations and four lists of the pod spec, so the patch is built from those:
//! one operation per changed annotation, and per list of the spec (init containers, containers, volumes, pull
//! secrets) an `add` for each item injected before or after the pod's own and a `replace` for each item
//! replaced in place (a list the pod does not have, or has empty, is added whole; a list left empty is
//! removed).
//!
//! [`injection_patch`] / [`injection_patch_json`] find those operations by comparing two pods. Injection itself
//! ([`crate::inject()`], [`crate::inject_json`]) writes the same operations, byte for byte, from what it
//! injects (`injection_delta`): only the injected items are serialised and the pod's own containers
//! are never compared. Property tests check that both agree and that applying the patch reproduces the
//! injected pod.

use std::collections::BTreeMap;

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, RemoveOperation, ReplaceOperation};
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;
use serde_json::Value;

use crate::injection_delta::{InjectionDelta, ListLayout};

/// The JSON pointer of `tokens` (`~` and `/` escaped as `~0` and `~1`).
fn pointer(tokens: &[&str]) -> PointerBuf {
    let mut text = String::with_capacity(tokens.iter().map(|token| token.len() + 3).sum());
    for token in tokens {
        text.push('/');
        let mut start = 0;
        while let Some(at) = find_byte(token.as_bytes(), start, |byte| byte == b'~' || byte == b'/')
        {
            // `~` and `/` are ASCII, so `start` and `at` are character boundaries.
            text.push_str(token.get(start..at).unwrap_or_default());
            text.push_str(if token.as_bytes().get(at) == Some(&b'~') {
                "~0"
            } else {
                "~1"
            });
            start = at + 1;
        }
        text.push_str(token.get(start..).unwrap_or_default());
    }
    // Well-formed by construction; `from_tokens` is the slower way to the same pointer.
    PointerBuf::try_from(text).unwrap_or_else(|_| PointerBuf::from_tokens(tokens.iter().copied()))
}

/// The kind of an RFC 6902 operation injection writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Add,
    Replace,
    Remove,
}

impl Kind {
    /// The operation's JSON text up to its path's first character.
    fn json_prefix(self) -> &'static [u8] {
        match self {
            Self::Add => b"{\"op\":\"add\",\"path\":\"",
            Self::Replace => b"{\"op\":\"replace\",\"path\":\"",
            Self::Remove => b"{\"op\":\"remove\",\"path\":\"",
        }
    }
}

/// Where the operations go: typed [`PatchOperation`]s, or JSON text written straight from the typed values.
trait Sink {
    fn push<T: Serialize + ?Sized>(&mut self, kind: Kind, path: &[&str], value: Option<&T>);

    /// [`Sink::push`] of a string value.
    fn push_text(&mut self, kind: Kind, path: &[&str], value: &str) {
        self.push(kind, path, Some(value));
    }
}

impl Sink for Vec<PatchOperation> {
    fn push<T: Serialize + ?Sized>(&mut self, kind: Kind, path: &[&str], value: Option<&T>) {
        let path = pointer(path);
        let value = || {
            value.map_or(Value::Null, |v| {
                serde_json::to_value(v).unwrap_or(Value::Null)
            })
        };
        self.push(match kind {
            Kind::Add => PatchOperation::Add(AddOperation {
                path,
                value: value(),
            }),
            Kind::Replace => PatchOperation::Replace(ReplaceOperation {
                path,
                value: value(),
            }),
            Kind::Remove => PatchOperation::Remove(RemoveOperation { path }),
        });
    }
}

/// The patch as JSON text, the way `serde_json` writes a [`Patch`] (object keys of values in field order).
struct JsonSink {
    out: Vec<u8>,
}

/// The sink's buffer as `serde_json`'s writer: the many one-byte writes (quotes, colons, commas, brackets)
/// are pushed instead of copied.
struct JsonBytes<'a>(&'a mut Vec<u8>);

impl std::io::Write for JsonBytes<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if let [byte] = buf {
            self.0.push(*byte);
        } else {
            self.0.extend_from_slice(buf);
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl JsonSink {
    /// Starts an operation: the separator, `op` and `path`.
    fn start(&mut self, kind: Kind, path: &[&str]) {
        self.out.push(if self.out.len() > 1 { b',' } else { b'[' });
        self.out.extend_from_slice(kind.json_prefix());
        for token in path {
            self.out.push(b'/');
            let bytes = token.as_bytes();
            let mut start = 0;
            while let Some(at) = find_byte(bytes, start, |byte| {
                matches!(byte, b'~' | b'/') || needs_escape(byte)
            }) {
                self.out
                    .extend_from_slice(bytes.get(start..at).unwrap_or_default());
                match bytes.get(at).copied().unwrap_or_default() {
                    b'~' => self.out.extend_from_slice(b"~0"),
                    b'/' => self.out.extend_from_slice(b"~1"),
                    b'"' => self.out.extend_from_slice(b"\\\""),
                    b'\\' => self.out.extend_from_slice(b"\\\\"),
                    control => {
                        self.out
                            .extend_from_slice(format!("\\u{control:04x}").as_bytes());
                    }
                }
                start = at + 1;
            }
            self.out
                .extend_from_slice(bytes.get(start..).unwrap_or_default());
        }
        self.out.push(b'"');
    }
}

/// The first index from `start` on whose byte is `wanted`.
#[inline]
fn find_byte(bytes: &[u8], start: usize, wanted: impl Fn(u8) -> bool) -> Option<usize> {
    bytes
        .get(start..)?
        .iter()
        .position(|byte| wanted(*byte))
        .map(|offset| start + offset)
}

/// The bytes a JSON string escapes: `"`, `\` and control characters.
#[inline]
fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

impl Sink for JsonSink {
    fn push<T: Serialize + ?Sized>(&mut self, kind: Kind, path: &[&str], value: Option<&T>) {
        self.start(kind, path);
        if let Some(value) = value {
            self.out.extend_from_slice(b",\"value\":");
            let start = self.out.len();
            if serde_json::to_writer(JsonBytes(&mut self.out), value).is_err() {
                self.out.truncate(start);
                self.out.extend_from_slice(b"null");
            }
        }
        self.out.push(b'}');
    }

    fn push_text(&mut self, kind: Kind, path: &[&str], value: &str) {
        self.start(kind, path);
        self.out.extend_from_slice(b",\"value\":");
        // `serde_json`'s own string writer is the fastest here (the hash annotations are full of quotes).
        let start = self.out.len();
        if serde_json::to_writer(JsonBytes(&mut self.out), value).is_err() {
            self.out.truncate(start);
            self.out.extend_from_slice(b"null");
        }
        self.out.push(b'}');
    }
}

/// Something with a name that identifies it in its list.
trait Named {
    fn name(&self) -> &str;
}

impl Named for k8s_openapi::api::core::v1::Container {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for k8s_openapi::api::core::v1::Volume {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for k8s_openapi::api::core::v1::LocalObjectReference {
    fn name(&self) -> &str {
        &self.name
    }
}

/// Where the original items sit, in order and contiguous, in the new list (the smallest such offset).
fn original_offset<T: Named>(before: &[T], after: &[T]) -> Option<usize> {
    let extra = after.len().checked_sub(before.len())?;
    (0..=extra).find(|offset| {
        before
            .iter()
            .zip(after.iter().skip(*offset))
            .all(|(old, new)| old.name() == new.name())
    })
}

/// Operations for one list of the spec. Injection keeps the pod's items in order (replacing some in place)
/// and adds items before and after them, so only the added and replaced items are written; any other change
/// replaces the whole list.
fn list_ops<T: Serialize + PartialEq + Named, S: Sink>(
    ops: &mut S,
    field: &str,
    before: Option<&Vec<T>>,
    after: Option<&Vec<T>>,
) {
    if before == after {
        return;
    }
    let (before, after) = match (before, after) {
        (_, None) => {
            ops.push::<Value>(Kind::Remove, &["spec", field], None);
            return;
        }
        (None, Some(list)) => {
            ops.push(Kind::Add, &["spec", field], Some(list));
            return;
        }
        (Some(before), Some(after)) => (before, after),
    };
    if before.is_empty() {
        // The whole list, as for an absent one: a pod's JSON may lack `containers`, which the typed pod
        // reads as empty, and appending (`/-`) needs an existing array.
        ops.push(Kind::Add, &["spec", field], Some(after));
        return;
    }
    let Some(offset) = original_offset(before, after) else {
        ops.push(Kind::Replace, &["spec", field], Some(after));
        return;
    };
    for (index, item) in after.iter().take(offset).enumerate() {
        ops.push(Kind::Add, &["spec", field, &index.to_string()], Some(item));
    }
    for (index, (old, new)) in before.iter().zip(after.iter().skip(offset)).enumerate() {
        if old != new {
            let at = (offset + index).to_string();
            ops.push(Kind::Replace, &["spec", field, &at], Some(new));
        }
    }
    for item in after.iter().skip(offset + before.len()) {
        ops.push(Kind::Add, &["spec", field, "-"], Some(item));
    }
}

fn annotation_ops<S: Sink>(
    ops: &mut S,
    before: Option<&BTreeMap<String, String>>,
    after: Option<&BTreeMap<String, String>>,
) {
    if before == after {
        return;
    }
    let Some(after) = after else {
        ops.push::<Value>(Kind::Remove, &["metadata", "annotations"], None);
        return;
    };
    let Some(before) = before else {
        ops.push(Kind::Add, &["metadata", "annotations"], Some(after));
        return;
    };
    for (key, value) in after {
        let path = ["metadata", "annotations", key.as_str()];
        match before.get(key) {
            None => ops.push_text(Kind::Add, &path, value),
            Some(old) if old != value => ops.push_text(Kind::Replace, &path, value),
            Some(_) => {}
        }
    }
    for key in before.keys().filter(|key| !after.contains_key(*key)) {
        ops.push::<Value>(Kind::Remove, &["metadata", "annotations", key], None);
    }
}

fn write_ops<S: Sink>(ops: &mut S, before: &Pod, after: &Pod) {
    annotation_ops(
        ops,
        before.metadata.annotations.as_ref(),
        after.metadata.annotations.as_ref(),
    );
    match (before.spec.as_ref(), after.spec.as_ref()) {
        (None, Some(spec)) => ops.push(Kind::Add, &["spec"], Some(spec)),
        (Some(old), Some(new)) => {
            list_ops(
                ops,
                "initContainers",
                old.init_containers.as_ref(),
                new.init_containers.as_ref(),
            );
            list_ops(
                ops,
                "containers",
                Some(&old.containers),
                Some(&new.containers),
            );
            list_ops(ops, "volumes", old.volumes.as_ref(), new.volumes.as_ref());
            list_ops(
                ops,
                "imagePullSecrets",
                old.image_pull_secrets.as_ref(),
                new.image_pull_secrets.as_ref(),
            );
        }
        _ => {}
    }
}

/// Operations for one list of the spec from the injection's layout: the operations [`list_ops`] finds
/// between the pod's list (`own`) and the list after injection (`list`), without comparing the pod's own
/// items (only those replaced in place).
fn layout_ops<T: Serialize + PartialEq, S: Sink>(
    ops: &mut S,
    field: &str,
    own: Option<&Vec<T>>,
    list: Option<&Vec<T>>,
    layout: &ListLayout,
) {
    let (Some(own), Some(list)) = (own, list) else {
        match (own, list) {
            (None, Some(list)) => ops.push(Kind::Add, &["spec", field], Some(list)),
            (Some(_), None) => ops.push::<Value>(Kind::Remove, &["spec", field], None),
            _ => {}
        }
        return;
    };
    if own.is_empty() {
        // The whole list, as for an absent one: a pod's JSON may lack `containers`, which the typed pod reads
        // as empty, and appending (`/-`) needs an existing array.
        if !list.is_empty() {
            ops.push(Kind::Add, &["spec", field], Some(list));
        }
        return;
    }
    // The items inserted before the pod's have names the pod does not use, so the pod's items sit right after
    // them.
    let (before, rest) = list.split_at(layout.before.min(list.len()));
    let after = rest.get(layout.own..).unwrap_or_default();
    for (index, item) in before.iter().enumerate() {
        ops.push(
            Kind::Add,
            &["spec", field, Index(index).as_str(&mut [0; 20])],
            Some(item),
        );
    }
    for &at in &layout.replaced {
        let new = rest.get(at);
        if new.is_some() && own.get(at) != new {
            let index = Index(layout.before + at);
            ops.push(
                Kind::Replace,
                &["spec", field, index.as_str(&mut [0; 20])],
                new,
            );
        }
    }
    for item in after {
        ops.push(Kind::Add, &["spec", field, "-"], Some(item));
    }
}

/// A list index as a pointer token, written into a stack buffer.
#[derive(Clone, Copy)]
struct Index(usize);

impl Index {
    fn as_str(self, buffer: &mut [u8; 20]) -> &str {
        let mut start = buffer.len();
        let mut rest = self.0;
        loop {
            start -= 1;
            if let Some(digit) = buffer.get_mut(start) {
                // `rest % 10` is below 10.
                *digit = b'0' + u8::try_from(rest % 10).unwrap_or(0);
            }
            rest /= 10;
            if rest == 0 || start == 0 {
                break;
            }
        }
        buffer
            .get(start..)
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .unwrap_or("0")
    }
}

/// The operations of an injection, from where its items went.
fn delta_ops<S: Sink>(ops: &mut S, delta: &InjectionDelta<'_>) {
    let (admitted, injected) = (delta.admitted, &delta.pod);
    annotation_ops(
        ops,
        admitted.metadata.annotations.as_ref(),
        injected.metadata.annotations.as_ref(),
    );
    let (Some(layout), Some(spec)) = (&delta.layout, injected.spec.as_ref()) else {
        return;
    };
    let Some(own) = admitted.spec.as_ref() else {
        ops.push(Kind::Add, &["spec"], Some(spec));
        return;
    };
    layout_ops(
        ops,
        "initContainers",
        own.init_containers.as_ref(),
        spec.init_containers.as_ref(),
        &layout.init_containers,
    );
    layout_ops(
        ops,
        "containers",
        Some(&own.containers),
        Some(&spec.containers),
        &layout.containers,
    );
    layout_ops(
        ops,
        "volumes",
        own.volumes.as_ref(),
        spec.volumes.as_ref(),
        &layout.volumes,
    );
    list_ops(
        ops,
        "imagePullSecrets",
        own.image_pull_secrets.as_ref(),
        spec.image_pull_secrets.as_ref(),
    );
}

/// The patch of an injection (what [`injection_patch`] finds between the admitted and the injected pod).
pub(crate) fn delta_patch(delta: &InjectionDelta<'_>) -> Patch {
    // At most one operation per annotation and per injected item, and one per list.
    let annotations = delta
        .pod
        .metadata
        .annotations
        .as_ref()
        .map_or(0, BTreeMap::len);
    let items = delta.pod.spec.as_ref().map_or(0, |spec| {
        spec.init_containers.as_ref().map_or(0, Vec::len)
            + spec.containers.len()
            + spec.volumes.as_ref().map_or(0, Vec::len)
    });
    let mut ops = Vec::with_capacity((annotations + items + 4).min(256));
    delta_ops(&mut ops, delta);
    Patch(ops)
}

/// The patch of an injection as JSON text (what [`injection_patch_json`] writes for the admitted and the
/// injected pod).
pub(crate) fn delta_patch_json(delta: &InjectionDelta<'_>) -> String {
    let mut sink = JsonSink {
        out: Vec::with_capacity(8192),
    };
    delta_ops(&mut sink, delta);
    finish(sink)
}

fn finish(mut sink: JsonSink) -> String {
    if sink.out.is_empty() {
        sink.out.push(b'[');
    }
    sink.out.push(b']');
    String::from_utf8(sink.out).unwrap_or_default()
}

/// The patch from `before` to `after`, where the two differ at most in annotations and the spec's init
/// containers, containers, volumes and image pull secrets (what injection changes).
#[must_use]
pub fn injection_patch(before: &Pod, after: &Pod) -> Patch {
    let mut ops = Vec::new();
    write_ops(&mut ops, before, after);
    Patch(ops)
}

/// The same patch as [`injection_patch`], as the JSON text of an admission response's `patch` (before base64),
/// written straight from the typed values without building `serde_json::Value` trees; `[]` when nothing
/// changed. Objects inside values keep the types' field order instead of `Value`'s sorted keys.
#[must_use]
pub fn injection_patch_json(before: &Pod, after: &Pod) -> String {
    let mut sink = JsonSink {
        out: Vec::with_capacity(4096),
    };
    write_ops(&mut sink, before, after);
    finish(sink)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_are_decimal_tokens() {
        for index in [0, 7, 10, 99, 12_345, usize::MAX] {
            assert_eq!(Index(index).as_str(&mut [0; 20]), index.to_string());
        }
    }

    #[test]
    fn pointers_escape_tokens() {
        assert_eq!(
            pointer(&["metadata", "annotations", "a/b~c"]).as_str(),
            "/metadata/annotations/a~1b~0c"
        );
        assert_eq!(
            pointer(&["spec", "containers", "-"]),
            PointerBuf::from_tokens(["spec", "containers", "-"])
        );
    }
}
