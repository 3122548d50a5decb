//! The validation of the workload kinds on JSON objects: each object is converted to the version upstream
//! validates ([`WorkloadKind::validated_version`]; v1beta1 for an AdvancedCronJob, whose v1beta1-only
//! ImageListPullJob template is checked too) if it is not already in it, decoded, defaulted, and
//! checked by the kind's rules in [`kruise_schedule::validation`].
//!
//! An UPDATE is refused only for problems it introduces: problems the stored object already had (say, it
//! was stored while the webhook was away) do not block later writes such as a controller's finalizer or
//! label changes. Immutable fields are compared between the two objects, so their changes always count.

use kruise_api::apps::v1alpha1;
use kruise_api::defaults::ApplyDefaults;
use kruise_schedule::validation::{
    FieldError, advancedcronjob, broadcastjob, cloneset, daemonset, imagepulljob, statefulset,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::workload_kind::WorkloadKind;

/// The problems of `object` (and, for an UPDATE, the stored `old` object) of `kind`, in either served
/// version.
///
/// # Errors
/// An object does not convert or decode (the message names the kind and which object).
pub fn violations(
    kind: WorkloadKind,
    object: &Value,
    old: Option<&Value>,
) -> Result<Vec<FieldError>, String> {
    use WorkloadKind as Kind;
    match kind {
        Kind::CloneSet => check(kind, object, old, cloneset::validate),
        Kind::StatefulSet => check(kind, object, old, statefulset::validate),
        Kind::DaemonSet => check(kind, object, old, daemonset::validate),
        Kind::BroadcastJob => check(kind, object, old, |job: &v1alpha1::BroadcastJob, _| {
            broadcastjob::validate(job)
        }),
        // v1beta1, whose ImageListPullJob template the v1alpha1 form cannot hold: its rules are the v1alpha1
        // ones on the converted object plus that template's.
        Kind::AdvancedCronJob => check_in(
            kind,
            &kind.admitted_api_version(),
            object,
            old,
            advancedcronjob::validate_v1beta1,
        ),
        Kind::ImagePullJob => check(kind, object, old, |job: &v1alpha1::ImagePullJob, _| {
            imagepulljob::validate(job)
        }),
    }
}

fn check<T>(
    kind: WorkloadKind,
    object: &Value,
    old: Option<&Value>,
    validate: impl Fn(&T, Option<&T>) -> Vec<FieldError>,
) -> Result<Vec<FieldError>, String>
where
    T: DeserializeOwned + ApplyDefaults,
{
    check_in(kind, &kind.validated_api_version(), object, old, validate)
}

/// [`check`] with the objects converted to `api_version`.
fn check_in<T>(
    kind: WorkloadKind,
    api_version: &str,
    object: &Value,
    old: Option<&Value>,
    validate: impl Fn(&T, Option<&T>) -> Vec<FieldError>,
) -> Result<Vec<FieldError>, String>
where
    T: DeserializeOwned + ApplyDefaults,
{
    let new: T = decoded(kind, api_version, object, "new")?;
    let Some(old) = old else {
        return Ok(validate(&new, None));
    };
    let old: T = decoded(kind, api_version, old, "old")?;
    let mut problems = validate(&new, Some(&old));
    let existing = validate(&old, None);
    problems.retain(|problem| !existing.contains(problem));
    Ok(problems)
}

/// The object in `target` (an API version), decoded and defaulted.
fn decoded<T>(kind: WorkloadKind, target: &str, object: &Value, which: &str) -> Result<T, String>
where
    T: DeserializeOwned + ApplyDefaults,
{
    let mut value = object.clone();
    if value.get("apiVersion").and_then(Value::as_str) != Some(target) {
        value = kruise_api::convert::convert_object(value, target).map_err(|error| {
            format!(
                "converting the {which} {} to {target}: {error}",
                kind.kind()
            )
        })?;
    }
    let mut typed: T = serde_json::from_value(value)
        .map_err(|error| format!("decoding the {which} {}: {error}", kind.kind()))?;
    typed.apply_defaults();
    Ok(typed)
}
