//! The update revision's name as the CloneSet and Advanced StatefulSet controllers compute it.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kruise_api::defaults::pod::{PodDefaultsOptions, apply_pod_spec_defaults};
use kruise_inplace::{go_json, revision};

use super::decode::invalid;
use crate::CliError;

/// The defaulted `template`'s revision hash (with the `collisions` of `status.collisionCount`) under the
/// workload's `name`; `path` names the file in errors.
pub(super) fn template_revision(
    name: &str,
    template: &PodTemplateSpec,
    collisions: i32,
    path: &str,
) -> Result<String, CliError> {
    let mut template = template.clone();
    apply_pod_spec_defaults(
        template.spec.get_or_insert_with(Default::default),
        PodDefaultsOptions::default(),
    );
    let data = revision::template_data_value(&template)
        .map_err(|error| invalid(path, format!("spec.template: {error}")))?;
    let hash = revision::hash(
        go_json::to_string_sorted(&data).as_bytes(),
        Some(collisions),
    );
    Ok(revision::name(name, &hash))
}
