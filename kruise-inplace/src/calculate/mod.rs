//! Whether a pod can move from one revision to another in place, and what to change (upstream's
//! `defaultCalculateInPlaceUpdateSpec`).
//!
//! The RFC 6902 diff between the two revisions' data (the crate's own diff, operation for operation
//! `json_patch::diff`) decides:
//!
//! * the first `/spec/template` in every path is dropped;
//! * paths under `/metadata/` are collected as metadata changes; any other path not under `/spec/` recreates;
//! * under `/spec/`, only `replace` operations can stay in place: `/spec/containers/<i>/image` (the image of
//!   the *old* template's container `i`), and with `InPlaceWorkloadVerticalScaling`
//!   `/spec/containers/<i>/resources/{limits|requests}/{cpu|memory}` with a valid quantity, provided the pod QoS
//!   class does not change; everything else recreates;
//! * with `InPlaceUpdateEnvFromMetadata`, an added or replaced `/metadata/{labels|annotations}/<key>` that an
//!   env var of a new-template container reads through `fieldRef` is recorded per container
//!   (`containerRefMetadata`) and taken out of both templates;
//! * when there were metadata changes at all, the strategic merge patch between the remaining metadata is
//!   `metaDataPatch` (possibly `{}`).
//!
//! `json_patch::diff` and upstream's `appscode/jsonpatch` can emit different operations for the same change
//! (upstream writes `add` where a `null` becomes a value and edit-distance operations for lists of scalars,
//! `json_patch` writes `replace` and index-wise operations); every such case is a change this module
//! classifies the same way either way (a recreate, or a metadata change), so the decision and the update spec
//! are the same.
//!
//! Only the parts of the templates this module reads are checked (containers, their names, env vars and
//! resources, the metadata); upstream decodes the whole template and recreates when any field has the wrong
//! type.

use std::collections::BTreeMap;

use json_patch::PatchOperation;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PodTemplateSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kruise_api::inplace::ContainerRefMetadata;
use kruise_api::keys::inplace::VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION;
use serde_json::Value;

use crate::env_from_metadata::{ANNOTATIONS_PATH, LABELS_PATH, json_container_references};
use crate::options::UpdateOptions;
use crate::qos::QosClass;
use crate::quantity;
use crate::revision;
use crate::strategic_merge;
use crate::update_spec::UpdateSpec;

mod template;

use template::Template;

/// Why a pod cannot be updated in place and must be recreated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Recreate {
    /// A revision has no data, or its data is not a pod template revision.
    #[error("revision {revision:?}: {reason}")]
    InvalidRevision {
        /// The revision's name.
        revision: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The volume claim templates changed (`RecreatePodWhenChangeVCTInCloneSetGate`).
    #[error("volume claim templates changed (hash {old:?} -> {new:?})")]
    VolumeClaimTemplatesChanged {
        /// The old revision's hash annotation.
        old: String,
        /// The new revision's hash annotation.
        new: String,
    },
    /// A change outside the pod template's metadata and spec (for example to the `$patch` directive).
    #[error("{op} {path}: only the template's metadata and spec can change in place")]
    OutsideTemplate {
        /// The RFC 6902 operation.
        op: &'static str,
        /// Its path, without `/spec/template`.
        path: String,
    },
    /// A change to the pod spec that cannot be done in place.
    #[error("{op} {path}: only replacing a container's image{resources} can be done in place", resources = if *.vertical_scaling { " or cpu/memory" } else { "" })]
    SpecChange {
        /// The RFC 6902 operation.
        op: &'static str,
        /// Its path, without `/spec/template`.
        path: String,
        /// Whether vertical scaling was on (for the message).
        vertical_scaling: bool,
    },
    /// A container path whose index is past the old template's containers.
    #[error("{path}: the old template has only {containers} containers")]
    ContainerIndex {
        /// The path, without `/spec/template`.
        path: String,
        /// How many containers the old template has.
        containers: usize,
    },
    /// A resource change that cannot be done in place.
    #[error("{path}: {reason}")]
    Resources {
        /// The path, without `/spec/template`.
        path: String,
        /// Why not.
        reason: String,
    },
    /// The resource change would change the pod's QoS class.
    #[error("pod QoS class would change from {old} to {new}")]
    QosClassChanged {
        /// The old template's class.
        old: QosClass,
        /// The new template's class.
        new: QosClass,
    },
}

/// A revision as [`calculate_data`] needs it.
#[derive(Clone, Copy, Debug)]
pub struct RevisionRef<'a> {
    /// The revision's name.
    pub name: &'a str,
    /// Its data (`{"spec":{"template":...}}`).
    pub data: Option<&'a Value>,
    /// Its annotations (for the volume claim template hash).
    pub annotations: Option<&'a BTreeMap<String, String>>,
}

impl<'a> From<&'a ControllerRevision> for RevisionRef<'a> {
    fn from(revision: &'a ControllerRevision) -> Self {
        Self {
            name: revision.metadata.name.as_deref().unwrap_or(""),
            data: revision_data(revision).filter(|data| !data.is_null()),
            annotations: revision.metadata.annotations.as_ref(),
        }
    }
}

// `ControllerRevision.data` is optional up to Kubernetes 1.36 and required from 1.37.
k8s_openapi::k8s_if_le_1_36! {
    fn revision_data(revision: &ControllerRevision) -> Option<&Value> {
        revision.data.as_ref().map(|raw| &raw.0)
    }
}
k8s_openapi::k8s_if_ge_1_37! {
    fn revision_data(revision: &ControllerRevision) -> Option<&Value> {
        Some(&revision.data.0)
    }
}

/// The update spec to move a pod from revision `old` to revision `new` in place, or why it must be recreated.
///
/// ```
/// use k8s_openapi::api::apps::v1::ControllerRevision;
/// use kruise_inplace::{calculate, Recreate, UpdateOptions};
///
/// let revision = |name: &str, image: &str| -> ControllerRevision {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": name},
///         "data": {"spec": {"template": {"$patch": "replace", "spec": {"containers": [{"name": "c1", "image": image}]}}}},
///         "revision": 1,
///     })).unwrap()
/// };
/// let spec = calculate(&revision("old", "foo1"), &revision("new", "foo2"), &UpdateOptions::default()).unwrap();
/// assert_eq!(spec.revision, "new");
/// assert_eq!(spec.container_images["c1"], "foo2");
/// ```
///
/// # Errors
/// [`Recreate`] saying why the pod cannot be updated in place.
pub fn calculate(
    old: &ControllerRevision,
    new: &ControllerRevision,
    options: &UpdateOptions,
) -> Result<UpdateSpec, Recreate> {
    calculate_data(old.into(), new.into(), options)
}

/// Upstream's `CanUpdateInPlace`: whether [`calculate`] finds an update spec.
#[must_use]
pub fn can_update_in_place(
    old: &ControllerRevision,
    new: &ControllerRevision,
    options: &UpdateOptions,
) -> bool {
    calculate(old, new, options).is_ok()
}

/// [`calculate`] for two pod templates: their revision data is built as CloneSet builds it. The spec's revision
/// is [`UpdateOptions::revision`], else the new template's revision hash.
///
/// # Errors
/// [`Recreate`] saying why the pod cannot be updated in place (including a template holding an invalid
/// quantity).
pub fn calculate_templates(
    old: &PodTemplateSpec,
    new: &PodTemplateSpec,
    options: &UpdateOptions,
) -> Result<UpdateSpec, Recreate> {
    let data = |template: &PodTemplateSpec, which: &str| {
        revision::template_data_value(template).map_err(|error| Recreate::InvalidRevision {
            revision: which.to_owned(),
            reason: error.to_string(),
        })
    };
    let old_data = data(old, "old")?;
    let new_data = data(new, "new")?;
    let hash = revision::hash(go_json_bytes(&new_data).as_bytes(), Some(0));
    calculate_data(
        RevisionRef {
            name: "old",
            data: Some(&old_data),
            annotations: None,
        },
        RevisionRef {
            name: &hash,
            data: Some(&new_data),
            annotations: None,
        },
        options,
    )
}

fn go_json_bytes(value: &Value) -> String {
    crate::go_json::to_string_sorted(value)
}

/// [`calculate`] on borrowed revision parts.
///
/// # Errors
/// [`Recreate`] saying why the pod cannot be updated in place.
pub fn calculate_data(
    old: RevisionRef<'_>,
    new: RevisionRef<'_>,
    options: &UpdateOptions,
) -> Result<UpdateSpec, Recreate> {
    let gates = options.gates;
    let old_data = data_of(old)?;
    let new_data = data_of(new)?;
    let patch = crate::json_diff::diff(old_data, new_data);

    if gates.recreate_pod_when_change_vct_in_clone_set_gate
        && !options.ignore_volume_claim_templates_hash_diff
    {
        fn hash<'r>(revision: &RevisionRef<'r>) -> Option<&'r String> {
            revision
                .annotations
                .filter(|annotations| !annotations.is_empty())
                .and_then(|annotations| annotations.get(VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION))
        }
        if let (Some(old_hash), Some(new_hash)) = (hash(&old), hash(&new))
            && old_hash != new_hash
        {
            return Err(Recreate::VolumeClaimTemplatesChanged {
                old: old_hash.clone(),
                new: new_hash.clone(),
            });
        }
    }

    let old_template = Template::of(old.name, old_data)?;
    let new_template = Template::of(new.name, new_data)?;
    let mut spec = UpdateSpec {
        revision: options
            .revision
            .clone()
            .unwrap_or_else(|| new.name.to_owned()),
        grace_seconds: options.grace_period_seconds,
        ..UpdateSpec::default()
    };

    let mut metadata_ops: Vec<(&'static str, String, Option<&Value>)> = Vec::new();
    for op in &patch.0 {
        let (kind, value) = op_parts(op);
        let full_path = op.path().to_string();
        let path = full_path.replacen("/spec/template", "", 1);
        if !path.starts_with("/spec/") {
            if path.starts_with("/metadata/") {
                metadata_ops.push((kind, path, value));
                continue;
            }
            return Err(Recreate::OutsideTemplate { op: kind, path });
        }
        let spec_change = |path: String| Recreate::SpecChange {
            op: kind,
            path,
            vertical_scaling: gates.in_place_workload_vertical_scaling,
        };
        if kind != "replace" {
            return Err(spec_change(path));
        }
        if let Some(index) = container_field_index(&path, "image") {
            let name = old_template.container_name(index, &path)?;
            let image = value
                .and_then(Value::as_str)
                .ok_or_else(|| spec_change(path.clone()))?;
            spec.container_images
                .insert(name.to_owned(), image.to_owned());
        } else if gates.in_place_workload_vertical_scaling && is_resources_path(&path) {
            record_resource(&mut spec, &old_template, &path, value)?;
        } else {
            return Err(spec_change(path));
        }
    }

    if gates.in_place_workload_vertical_scaling && !spec.container_resources.is_empty() {
        let old_class = old_template.qos_class()?;
        let new_class = new_template.qos_class()?;
        if old_class != new_class {
            return Err(Recreate::QosClassChanged {
                old: old_class,
                new: new_class,
            });
        }
    }

    if !metadata_ops.is_empty() {
        let mut old_meta = old_template.metadata()?;
        let mut new_meta = new_template.metadata()?;
        if gates.in_place_update_env_from_metadata {
            for (kind, path, value) in &metadata_ops {
                if *kind != "replace" && *kind != "add" {
                    continue;
                }
                record_env_metadata(
                    &mut spec,
                    &new_template,
                    path,
                    *value,
                    [&mut old_meta, &mut new_meta],
                )?;
            }
        }
        spec.meta_data_patch =
            Some(strategic_merge::two_way_metadata_patch(&old_meta, &new_meta).into_bytes());
    }
    Ok(spec)
}

fn data_of(revision: RevisionRef<'_>) -> Result<&Value, Recreate> {
    revision.data.ok_or_else(|| Recreate::InvalidRevision {
        revision: revision.name.to_owned(),
        reason: "no data".to_owned(),
    })
}

fn op_parts(op: &PatchOperation) -> (&'static str, Option<&Value>) {
    match op {
        PatchOperation::Add(add) => ("add", Some(&add.value)),
        PatchOperation::Remove(_) => ("remove", None),
        PatchOperation::Replace(replace) => ("replace", Some(&replace.value)),
        PatchOperation::Move(_) => ("move", None),
        PatchOperation::Copy(_) => ("copy", None),
        PatchOperation::Test(test) => ("test", Some(&test.value)),
    }
}

/// `^/spec/containers/([0-9]+)/<field>$` → the index.
fn container_field_index(path: &str, field: &str) -> Option<usize> {
    let rest = path.strip_prefix("/spec/containers/")?;
    let (index, tail) = rest.split_once('/')?;
    if tail != field || index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Go's strconv.Atoi saturates out-of-range values; any such index is past the containers anyway.
    Some(index.parse().unwrap_or(usize::MAX))
}

/// `^/spec/containers/([0-9]+)/resources/.*$`
fn is_resources_path(path: &str) -> bool {
    path.strip_prefix("/spec/containers/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(index, tail)| {
            !index.is_empty()
                && index.bytes().all(|b| b.is_ascii_digit())
                && tail.starts_with("resources/")
        })
}

fn record_resource(
    spec: &mut UpdateSpec,
    old_template: &Template<'_>,
    path: &str,
    value: Option<&Value>,
) -> Result<(), Recreate> {
    let resources_error = |reason: String| Recreate::Resources {
        path: path.to_owned(),
        reason,
    };
    let words: Vec<&str> = path.split('/').collect();
    let [_, _, _, index, _, list, resource] = words.as_slice() else {
        return Err(resources_error(
            "only /spec/containers/<i>/resources/{limits|requests}/<resource> can change"
                .to_owned(),
        ));
    };
    let index: usize = index.parse().unwrap_or(usize::MAX);
    let name = old_template.container_name(index, path)?;
    let text = value
        .and_then(Value::as_str)
        .ok_or_else(|| resources_error("the new value is not a quantity string".to_owned()))?;
    let parsed = quantity::parse(text).map_err(|error| resources_error(error.to_string()))?;
    if *resource != "cpu" && *resource != "memory" {
        return Err(resources_error(format!(
            "only cpu and memory can be resized in place, not {resource}"
        )));
    }
    let canonical = parsed.to_canonical().unwrap_or_else(|| text.to_owned());
    let entry = spec
        .container_resources
        .entry(name.to_owned())
        .or_insert_with(|| ResourceRequirements {
            limits: Some(BTreeMap::new()),
            requests: Some(BTreeMap::new()),
            ..ResourceRequirements::default()
        });
    let target = match *list {
        "limits" => entry.limits.get_or_insert_with(BTreeMap::new),
        "requests" => entry.requests.get_or_insert_with(BTreeMap::new),
        _ => return Ok(()),
    };
    target.insert((*resource).to_owned(), Quantity(canonical));
    Ok(())
}

/// Upstream's env-from-metadata step for one `add`/`replace` metadata operation.
fn record_env_metadata(
    spec: &mut UpdateSpec,
    new_template: &Template<'_>,
    path: &str,
    value: Option<&Value>,
    metas: [&mut Value; 2],
) -> Result<(), Recreate> {
    let words: Vec<&str> = path.splitn(4, '/').collect();
    let [_, _, kind @ ("labels" | "annotations"), raw_key] = words.as_slice() else {
        return Ok(());
    };
    let key = decode_pointer_token(raw_key);
    let field_path = if *kind == "labels" {
        LABELS_PATH
    } else {
        ANNOTATIONS_PATH
    };
    let mut referenced = false;
    for container in new_template.containers()? {
        if !json_container_references(container, field_path, &key) {
            continue;
        }
        let text = value
            .and_then(Value::as_str)
            .ok_or_else(|| Recreate::InvalidRevision {
                revision: new_template.revision.to_owned(),
                reason: format!("{path}: {kind} values must be strings"),
            })?;
        let name = container.get("name").and_then(Value::as_str).unwrap_or("");
        let entry: &mut ContainerRefMetadata = spec
            .container_ref_metadata
            .entry(name.to_owned())
            .or_default();
        let target = if *kind == "labels" {
            &mut entry.labels
        } else {
            &mut entry.annotations
        };
        target.insert(key.clone(), text.to_owned());
        spec.update_env_from_metadata = true;
        referenced = true;
    }
    if referenced {
        for meta in metas {
            if let Some(Value::Object(map)) = meta.get_mut(*kind) {
                map.remove(&key);
                if map.is_empty() {
                    // Go's omitempty drops an emptied map from the JSON the patch is computed from.
                    if let Value::Object(fields) = meta {
                        fields.remove(*kind);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Go's `strings.NewReplacer("~1", "/", "~0", "~")`.
fn decode_pointer_token(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut rest = token;
    while let Some(position) = rest.find('~') {
        out.push_str(rest.get(..position).unwrap_or_default());
        let after = rest.get(position..).unwrap_or_default();
        if let Some(tail) = after.strip_prefix("~1") {
            out.push('/');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("~0") {
            out.push('~');
            rest = tail;
        } else {
            out.push('~');
            rest = after.get(1..).unwrap_or_default();
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            container_field_index("/spec/containers/0/image", "image"),
            Some(0)
        );
        assert_eq!(
            container_field_index("/spec/containers/12/image", "image"),
            Some(12)
        );
        assert_eq!(
            container_field_index("/spec/containers/x/image", "image"),
            None
        );
        assert_eq!(
            container_field_index("/spec/containers/0/image/x", "image"),
            None
        );
        assert_eq!(
            container_field_index("/spec/initContainers/0/image", "image"),
            None
        );
        assert!(is_resources_path("/spec/containers/0/resources/limits/cpu"));
        assert!(is_resources_path("/spec/containers/0/resources/x"));
        assert!(!is_resources_path("/spec/containers/0/resourcesx"));
        assert_eq!(decode_pointer_token("a~1b~0c~01"), "a/b~c~1");
        assert_eq!(decode_pointer_token("~2x~"), "~2x~");
    }
}
