//! What a controller sends: the pod after an in-place step, and the minimal RFC 6902 JSON patches that turn the
//! observed pod into it, in the order upstream writes them.
//!
//! Upstream makes up to three writes: the `status` subresource (the `InPlaceUpdateReady` condition), the
//! `resize` subresource (container resources, Kubernetes 1.32 and later) and the pod itself (labels,
//! annotations, images). Each becomes one [`Write`]. Patches address labels and annotations by key and
//! containers by index (a pod's container list never changes), so they only touch what the step changed.
//!
//! Upstream updates with the resourceVersion it read (optimistic concurrency). The first write of an
//! [`Outcome`] therefore starts with a `test` of `/metadata/resourceVersion` when the observed pod has one: it
//! fails with a conflict if the pod changed since it was read. Later writes of the same outcome carry no such
//! test, because the first write changes the resourceVersion.

use std::collections::BTreeMap;
use std::time::Duration;

use json_patch::jsonptr::PointerBuf;
use json_patch::{
    AddOperation, Patch, PatchOperation, RemoveOperation, ReplaceOperation, TestOperation,
};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde_json::Value;

/// Where a patch goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// The pod itself.
    Pod,
    /// The pod's `status` subresource.
    Status,
    /// The pod's `resize` subresource.
    Resize,
}

/// One write of an in-place step: an RFC 6902 JSON patch for the pod or one of its subresources.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    /// Where to send the patch.
    pub subresource: Subresource,
    /// The JSON patch (`application/json-patch+json`).
    pub patch: Patch,
}

/// The result of an in-place step for one pod.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The pod as it is once every write succeeded (the observed pod when there is nothing to write).
    pub pod: Pod,
    /// The writes to send, in order; empty when nothing changes.
    pub writes: Vec<Write>,
    /// When to look at the pod again (a grace period still running), if at all.
    pub requeue_after: Option<Duration>,
}

impl Outcome {
    /// Nothing to write, nothing to wait for.
    #[must_use]
    pub fn unchanged(pod: &Pod) -> Self {
        Self {
            pod: pod.clone(),
            writes: Vec::new(),
            requeue_after: None,
        }
    }

    /// The writes that turn `before` into `after`, whatever changed.
    #[must_use]
    pub fn between(before: &Pod, after: Pod, resize_subresource: bool) -> Self {
        Self::diff(before, after, resize_subresource, Scope::Any)
    }

    /// [`Self::between`] for the changes this crate's own steps make: metadata, container images and
    /// resources, and status conditions (the rest of the spec and status is not compared).
    pub(crate) fn between_steps(before: &Pod, after: Pod, resize_subresource: bool) -> Self {
        Self::diff(before, after, resize_subresource, Scope::Steps)
    }

    fn diff(before: &Pod, mut after: Pod, resize_subresource: bool, scope: Scope) -> Self {
        let writes = writes(before, &mut after, resize_subresource, scope);
        Self {
            pod: after,
            writes,
            requeue_after: None,
        }
    }

    /// Whether there is anything to write.
    #[must_use]
    pub fn changed(&self) -> bool {
        !self.writes.is_empty()
    }

    /// The patch for one target, if this outcome writes it.
    #[must_use]
    pub fn patch(&self, subresource: Subresource) -> Option<&Patch> {
        self.writes
            .iter()
            .find(|write| write.subresource == subresource)
            .map(|write| &write.patch)
    }
}

/// Which parts of a pod may differ.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Anything.
    Any,
    /// Metadata, container images and resources, status conditions.
    Steps,
}

/// A JSON pointer from unescaped tokens.
fn pointer(tokens: &[&str]) -> PointerBuf {
    let mut text = String::with_capacity(tokens.iter().map(|token| token.len() + 1).sum());
    for token in tokens {
        text.push('/');
        for ch in token.chars() {
            match ch {
                '~' => text.push_str("~0"),
                '/' => text.push_str("~1"),
                _ => text.push(ch),
            }
        }
    }
    PointerBuf::parse(text).unwrap_or_else(|_| PointerBuf::from_tokens(tokens.iter().copied()))
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn add(ops: &mut Vec<PatchOperation>, path: PointerBuf, value: Value) {
    ops.push(PatchOperation::Add(AddOperation { path, value }));
}

fn replace(ops: &mut Vec<PatchOperation>, path: PointerBuf, value: Value) {
    ops.push(PatchOperation::Replace(ReplaceOperation { path, value }));
}

fn remove(ops: &mut Vec<PatchOperation>, path: PointerBuf) {
    ops.push(PatchOperation::Remove(RemoveOperation { path }));
}

/// Operations turning an optional field `before` into `after` at `path`.
fn set_optional<T: Serialize + PartialEq>(
    ops: &mut Vec<PatchOperation>,
    path: PointerBuf,
    before: Option<&T>,
    after: Option<&T>,
) {
    match (before, after) {
        (Some(_), None) => remove(ops, path),
        (None, Some(value)) => add(ops, path, to_value(value)),
        (Some(old), Some(new)) if old != new => replace(ops, path, to_value(new)),
        _ => {}
    }
}

fn map_ops(
    ops: &mut Vec<PatchOperation>,
    base: [&str; 2],
    before: Option<&BTreeMap<String, String>>,
    after: Option<&BTreeMap<String, String>>,
) {
    let (Some(before), Some(after)) = (before, after) else {
        set_optional(ops, pointer(&base), before, after);
        return;
    };
    let [first, second] = base;
    for (key, value) in after {
        match before.get(key) {
            None => add(
                ops,
                pointer(&[first, second, key]),
                Value::String(value.clone()),
            ),
            Some(old) if old != value => {
                replace(
                    ops,
                    pointer(&[first, second, key]),
                    Value::String(value.clone()),
                );
            }
            Some(_) => {}
        }
    }
    for key in before.keys().filter(|key| !after.contains_key(*key)) {
        remove(ops, pointer(&[first, second, key]));
    }
}

/// A generic diff of two serialisable values under `base`.
fn diff_under<T: Serialize>(ops: &mut Vec<PatchOperation>, base: &[&str], before: &T, after: &T) {
    let prefix = pointer(base);
    for op in json_patch::diff(&to_value(before), &to_value(after)).0 {
        ops.push(prefix_op(&prefix, op));
    }
}

fn prefix_op(prefix: &PointerBuf, op: PatchOperation) -> PatchOperation {
    let join = |path: &PointerBuf| prefix.concat(path);
    match op {
        PatchOperation::Add(op) => PatchOperation::Add(AddOperation {
            path: join(&op.path),
            value: op.value,
        }),
        PatchOperation::Remove(op) => PatchOperation::Remove(RemoveOperation {
            path: join(&op.path),
        }),
        PatchOperation::Replace(op) => PatchOperation::Replace(ReplaceOperation {
            path: join(&op.path),
            value: op.value,
        }),
        other => other,
    }
}

fn writes(before: &Pod, after: &mut Pod, resize_subresource: bool, scope: Scope) -> Vec<Write> {
    let mut writes = Vec::new();
    let status_ops = status_ops(before, after, scope);
    if !status_ops.is_empty() {
        writes.push(Write {
            subresource: Subresource::Status,
            patch: Patch(status_ops),
        });
    }
    if resize_subresource {
        let empty = PodSpec::default();
        let before_spec = before.spec.as_ref().unwrap_or(&empty);
        let after_spec = after.spec.as_ref().unwrap_or(&empty);
        let resize_ops = resource_ops(before_spec, after_spec);
        if !resize_ops.is_empty() {
            writes.push(Write {
                subresource: Subresource::Resize,
                patch: Patch(resize_ops),
            });
        }
    }
    let mut pod_ops = metadata_ops(before, after);
    spec_ops(&mut pod_ops, before, after, resize_subresource, scope);
    if !pod_ops.is_empty() {
        writes.push(Write {
            subresource: Subresource::Pod,
            patch: Patch(pod_ops),
        });
    }
    if let (Some(first), Some(version)) = (
        writes.first_mut(),
        before.metadata.resource_version.as_ref(),
    ) {
        first.patch.0.insert(
            0,
            PatchOperation::Test(TestOperation {
                path: pointer(&["metadata", "resourceVersion"]),
                value: Value::String(version.clone()),
            }),
        );
    }
    writes
}

fn metadata_ops(before: &Pod, after: &Pod) -> Vec<PatchOperation> {
    let mut ops = Vec::new();
    let (old, new) = (&before.metadata, &after.metadata);
    map_ops(
        &mut ops,
        ["metadata", "labels"],
        old.labels.as_ref(),
        new.labels.as_ref(),
    );
    map_ops(
        &mut ops,
        ["metadata", "annotations"],
        old.annotations.as_ref(),
        new.annotations.as_ref(),
    );
    set_optional(
        &mut ops,
        pointer(&["metadata", "finalizers"]),
        old.finalizers.as_ref(),
        new.finalizers.as_ref(),
    );
    if !same_apart_from_maps(old, new) {
        let mut rest = old.clone();
        rest.labels.clone_from(&new.labels);
        rest.annotations.clone_from(&new.annotations);
        rest.finalizers.clone_from(&new.finalizers);
        diff_under(&mut ops, &["metadata"], &rest, new);
    }
    ops
}

/// Whether two object metas agree on everything but labels, annotations and finalizers.
fn same_apart_from_maps(old: &ObjectMeta, new: &ObjectMeta) -> bool {
    old.name == new.name
        && old.generate_name == new.generate_name
        && old.namespace == new.namespace
        && old.uid == new.uid
        && old.resource_version == new.resource_version
        && old.generation == new.generation
        && old.creation_timestamp == new.creation_timestamp
        && old.deletion_timestamp == new.deletion_timestamp
        && old.deletion_grace_period_seconds == new.deletion_grace_period_seconds
        && old.owner_references == new.owner_references
        && old.managed_fields == new.managed_fields
        && old.self_link == new.self_link
}

fn container_ops(
    ops: &mut Vec<PatchOperation>,
    index: usize,
    before: &Container,
    after: &Container,
    images: bool,
    resources: bool,
) {
    let index = index.to_string();
    if images {
        set_optional(
            ops,
            pointer(&["spec", "containers", &index, "image"]),
            before.image.as_ref(),
            after.image.as_ref(),
        );
    }
    if resources {
        set_optional(
            ops,
            pointer(&["spec", "containers", &index, "resources"]),
            before.resources.as_ref(),
            after.resources.as_ref(),
        );
    }
}

fn resource_ops(before: &PodSpec, after: &PodSpec) -> Vec<PatchOperation> {
    let mut ops = Vec::new();
    for (index, (old, new)) in before.containers.iter().zip(&after.containers).enumerate() {
        container_ops(&mut ops, index, old, new, false, true);
    }
    ops
}

fn spec_ops(
    ops: &mut Vec<PatchOperation>,
    before: &Pod,
    after: &mut Pod,
    resize_subresource: bool,
    scope: Scope,
) {
    let (Some(old), Some(new)) = (&before.spec, &mut after.spec) else {
        if before.spec != after.spec {
            set_optional(
                ops,
                pointer(&["spec"]),
                before.spec.as_ref(),
                after.spec.as_ref(),
            );
        }
        return;
    };
    // The fast path covers what in-place steps change: container images and resources. Compare the rest by
    // putting the old images and resources into the new spec for a moment.
    let mut same_rest = scope == Scope::Steps && old.containers.len() == new.containers.len();
    if !same_rest && old.containers.len() == new.containers.len() {
        let saved: Vec<_> = new
            .containers
            .iter_mut()
            .zip(&old.containers)
            .map(|(container, original)| {
                (
                    std::mem::replace(&mut container.image, original.image.clone()),
                    std::mem::replace(&mut container.resources, original.resources.clone()),
                )
            })
            .collect();
        same_rest = *old == *new;
        for (container, (image, resources)) in new.containers.iter_mut().zip(saved) {
            container.image = image;
            container.resources = resources;
        }
    }
    let new = &*new;
    if same_rest {
        for (index, (old_container, new_container)) in
            old.containers.iter().zip(&new.containers).enumerate()
        {
            container_ops(
                ops,
                index,
                old_container,
                new_container,
                true,
                !resize_subresource,
            );
        }
        return;
    }
    let mut target = new.clone();
    if resize_subresource && old.containers.len() == target.containers.len() {
        for (container, original) in target.containers.iter_mut().zip(&old.containers) {
            container.resources.clone_from(&original.resources);
        }
    }
    diff_under(ops, &["spec"], old, &target);
}

fn status_ops(before: &Pod, after: &mut Pod, scope: Scope) -> Vec<PatchOperation> {
    let mut ops = Vec::new();
    let (Some(old), Some(new)) = (&before.status, &mut after.status) else {
        set_optional(
            &mut ops,
            pointer(&["status"]),
            before.status.as_ref(),
            after.status.as_ref(),
        );
        return ops;
    };
    let same_rest = scope == Scope::Steps || {
        let conditions = std::mem::replace(&mut new.conditions, old.conditions.clone());
        let same = *old == *new;
        new.conditions = conditions;
        same
    };
    let new = &*new;
    if !same_rest {
        diff_under(&mut ops, &["status"], old, new);
        return ops;
    }
    match (&old.conditions, &new.conditions) {
        (Some(old), Some(new)) => {
            for (index, (old_condition, new_condition)) in old.iter().zip(new).enumerate() {
                if old_condition != new_condition {
                    replace(
                        &mut ops,
                        pointer(&["status", "conditions", &index.to_string()]),
                        to_value(new_condition),
                    );
                }
            }
            for (index, condition) in new.iter().enumerate().skip(old.len()) {
                add(
                    &mut ops,
                    pointer(&["status", "conditions", &index.to_string()]),
                    to_value(condition),
                );
            }
            for index in (new.len()..old.len()).rev() {
                remove(
                    &mut ops,
                    pointer(&["status", "conditions", &index.to_string()]),
                );
            }
        }
        (old, new) => set_optional(
            &mut ops,
            pointer(&["status", "conditions"]),
            old.as_ref(),
            new.as_ref(),
        ),
    }
    ops
}
