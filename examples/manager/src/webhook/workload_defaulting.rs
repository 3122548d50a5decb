//! The defaults of the workload kinds applied to an object as JSON, in either served version
//! ([`kruise_api::defaults::ApplyDefaults`] on the typed object of that version). Fields the types do not
//! model are kept where they were ([`UnknownFields`]), so the patch between the object as sent and the
//! answer only adds defaults.

use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::defaults::ApplyDefaults;
use kruise_api::unknown_fields::UnknownFields;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::workload_kind::WorkloadKind;

/// `object` (of `kind`, at `version`) with upstream's defaults applied.
///
/// # Errors
/// The version is not served, or the object does not decode as that kind (the message names both).
pub fn defaulted(kind: WorkloadKind, version: &str, object: &Value) -> Result<Value, String> {
    use WorkloadKind as Kind;
    match (kind, version) {
        (Kind::CloneSet, "v1alpha1") => apply::<v1alpha1::CloneSet>(kind, object),
        (Kind::CloneSet, "v1beta1") => apply::<v1beta1::CloneSet>(kind, object),
        (Kind::StatefulSet, "v1alpha1") => apply::<v1alpha1::StatefulSet>(kind, object),
        (Kind::StatefulSet, "v1beta1") => apply::<v1beta1::StatefulSet>(kind, object),
        (Kind::DaemonSet, "v1alpha1") => apply::<v1alpha1::DaemonSet>(kind, object),
        (Kind::DaemonSet, "v1beta1") => apply::<v1beta1::DaemonSet>(kind, object),
        (Kind::BroadcastJob, "v1alpha1") => apply::<v1alpha1::BroadcastJob>(kind, object),
        (Kind::BroadcastJob, "v1beta1") => apply::<v1beta1::BroadcastJob>(kind, object),
        (Kind::AdvancedCronJob, "v1alpha1") => apply::<v1alpha1::AdvancedCronJob>(kind, object),
        (Kind::AdvancedCronJob, "v1beta1") => apply::<v1beta1::AdvancedCronJob>(kind, object),
        (Kind::ImagePullJob, "v1alpha1") => apply::<v1alpha1::ImagePullJob>(kind, object),
        (Kind::ImagePullJob, "v1beta1") => apply::<v1beta1::ImagePullJob>(kind, object),
        _ => Err(format!(
            "{}.apps.kruise.io has no version {version:?} (served: v1alpha1, v1beta1)",
            kind.kind()
        )),
    }
}

fn apply<T>(kind: WorkloadKind, object: &Value) -> Result<Value, String>
where
    T: DeserializeOwned + Serialize + ApplyDefaults,
{
    let mut typed: T = serde_json::from_value(object.clone())
        .map_err(|error| format!("decoding the {}: {error}", kind.kind()))?;
    let known = serde_json::to_value(&typed)
        .map_err(|error| format!("encoding the {}: {error}", kind.kind()))?;
    let unknown = UnknownFields::between(object, &known);
    typed.apply_defaults();
    let mut after = serde_json::to_value(&typed)
        .map_err(|error| format!("encoding the {}: {error}", kind.kind()))?;
    unknown.restore(&mut after);
    Ok(after)
}
