//! The RFC 6902 patch of an admission response: the operations that turn the admitted pod into the injected
//! one. Injection only changes annotations and four lists of the pod spec, so the patch is built from those:
//! one operation per changed annotation, and an `add` / `replace` / `remove` of each changed list (init
//! containers, containers, volumes, pull secrets) as a whole. Serialising only what changed keeps the webhook
//! cheap; a property test checks that applying the patch reproduces the injected pod.

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

fn list_op<T: Serialize + PartialEq>(
    ops: &mut Vec<PatchOperation>,
    field: &str,
    before: Option<&Vec<T>>,
    after: Option<&Vec<T>>,
) {
    if before == after {
        return;
    }
    let path = pointer(&["spec", field]);
    match (before, after) {
        (_, None) => ops.push(PatchOperation::Remove(RemoveOperation { path })),
        (None, Some(list)) => ops.push(PatchOperation::Add(AddOperation {
            path,
            value: to_value(list),
        })),
        (Some(_), Some(list)) => ops.push(PatchOperation::Replace(ReplaceOperation {
            path,
            value: to_value(list),
        })),
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
            list_op(&mut ops, "initContainers", old.init_containers.as_ref(), new.init_containers.as_ref());
            if old.containers != new.containers {
                ops.push(PatchOperation::Replace(ReplaceOperation {
                    path: pointer(&["spec", "containers"]),
                    value: to_value(&new.containers),
                }));
            }
            list_op(&mut ops, "volumes", old.volumes.as_ref(), new.volumes.as_ref());
            list_op(
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
