//! The RFC 6902 patch of an admission response: the operations that turn the admitted pod into the injected
//! one. Injection only changes annotations and four lists of the pod spec, so the patch is built from those:
//! one operation per changed annotation, and per list of the spec (init containers, containers, volumes, pull
//! secrets) an `add` for each item injected before or after the pod's own and a `replace` for each item
//! replaced in place. Serialising only what changed keeps the webhook cheap; a property test checks that
//! applying the patch reproduces the injected pod.

use std::collections::BTreeMap;

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, RemoveOperation, ReplaceOperation};
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;
use serde_json::Value;

fn pointer(tokens: &[&str]) -> PointerBuf {
    PointerBuf::from_tokens(tokens.iter().copied())
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
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
fn list_ops<T: Serialize + PartialEq + Named>(
    ops: &mut Vec<PatchOperation>,
    field: &str,
    before: Option<&Vec<T>>,
    after: Option<&Vec<T>>,
) {
    if before == after {
        return;
    }
    let (before, after) = match (before, after) {
        (_, None) => {
            ops.push(PatchOperation::Remove(RemoveOperation {
                path: pointer(&["spec", field]),
            }));
            return;
        }
        (None, Some(list)) => {
            ops.push(PatchOperation::Add(AddOperation {
                path: pointer(&["spec", field]),
                value: to_value(list),
            }));
            return;
        }
        (Some(before), Some(after)) => (before, after),
    };
    let Some(offset) = original_offset(before, after) else {
        ops.push(PatchOperation::Replace(ReplaceOperation {
            path: pointer(&["spec", field]),
            value: to_value(after),
        }));
        return;
    };
    for (index, item) in after.iter().take(offset).enumerate() {
        ops.push(PatchOperation::Add(AddOperation {
            path: pointer(&["spec", field, &index.to_string()]),
            value: to_value(item),
        }));
    }
    for (index, (old, new)) in before.iter().zip(after.iter().skip(offset)).enumerate() {
        if old != new {
            ops.push(PatchOperation::Replace(ReplaceOperation {
                path: pointer(&["spec", field, &(offset + index).to_string()]),
                value: to_value(new),
            }));
        }
    }
    for item in after.iter().skip(offset + before.len()) {
        ops.push(PatchOperation::Add(AddOperation {
            path: pointer(&["spec", field, "-"]),
            value: to_value(item),
        }));
    }
}

fn annotation_ops(
    ops: &mut Vec<PatchOperation>,
    before: Option<&BTreeMap<String, String>>,
    after: Option<&BTreeMap<String, String>>,
) {
    if before == after {
        return;
    }
    let Some(after) = after else {
        ops.push(PatchOperation::Remove(RemoveOperation {
            path: pointer(&["metadata", "annotations"]),
        }));
        return;
    };
    let Some(before) = before else {
        ops.push(PatchOperation::Add(AddOperation {
            path: pointer(&["metadata", "annotations"]),
            value: to_value(after),
        }));
        return;
    };
    for (key, value) in after {
        let path = pointer(&["metadata", "annotations", key]);
        match before.get(key) {
            None => ops.push(PatchOperation::Add(AddOperation {
                path,
                value: Value::String(value.clone()),
            })),
            Some(old) if old != value => ops.push(PatchOperation::Replace(ReplaceOperation {
                path,
                value: Value::String(value.clone()),
            })),
            Some(_) => {}
        }
    }
    for key in before.keys().filter(|key| !after.contains_key(*key)) {
        ops.push(PatchOperation::Remove(RemoveOperation {
            path: pointer(&["metadata", "annotations", key]),
        }));
    }
}

/// The patch from `before` to `after`, where the two differ at most in annotations and the spec's init
/// containers, containers, volumes and image pull secrets (what injection changes).
#[must_use]
pub fn injection_patch(before: &Pod, after: &Pod) -> Patch {
    let mut ops = Vec::new();
    annotation_ops(
        &mut ops,
        before.metadata.annotations.as_ref(),
        after.metadata.annotations.as_ref(),
    );
    match (before.spec.as_ref(), after.spec.as_ref()) {
        (None, Some(spec)) => ops.push(PatchOperation::Add(AddOperation {
            path: pointer(&["spec"]),
            value: to_value(spec),
        })),
        (Some(old), Some(new)) => {
            list_ops(
                &mut ops,
                "initContainers",
                old.init_containers.as_ref(),
                new.init_containers.as_ref(),
            );
            list_ops(
                &mut ops,
                "containers",
                Some(&old.containers),
                Some(&new.containers),
            );
            list_ops(
                &mut ops,
                "volumes",
                old.volumes.as_ref(),
                new.volumes.as_ref(),
            );
            list_ops(
                &mut ops,
                "imagePullSecrets",
                old.image_pull_secrets.as_ref(),
                new.image_pull_secrets.as_ref(),
            );
        }
        _ => {}
    }
    Patch(ops)
}
