//! The validation of the workload kinds on JSON objects: each object is converted to the version upstream
//! validates ([`WorkloadKind::validated_version`]) if it is not already in it, decoded, defaulted, and
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
        Kind::AdvancedCronJob => check(kind, object, old, advancedcronjob::validate),
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
    let new: T = decoded(kind, object, "new")?;
    let Some(old) = old else {
        return Ok(validate(&new, None));
    };
    let old: T = decoded(kind, old, "old")?;
    let mut problems = validate(&new, Some(&old));
    let existing = validate(&old, None);
    problems.retain(|problem| !existing.contains(problem));
    Ok(problems)
}

/// The object in the validated version, decoded and defaulted.
fn decoded<T>(kind: WorkloadKind, object: &Value, which: &str) -> Result<T, String>
where
    T: DeserializeOwned + ApplyDefaults,
{
    let target = kind.validated_api_version();
    let mut value = object.clone();
    if value.get("apiVersion").and_then(Value::as_str) != Some(target.as_str()) {
        value = kruise_api::convert::convert_object(value, &target).map_err(|error| {
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
