//! The revisions a plan runs with: the update revision's name as the CloneSet and Advanced StatefulSet
//! controllers compute it, and the current and update revisions chosen from the flags and the status.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::defaults::pod::{PodDefaultsOptions, apply_pod_spec_defaults};
use kruise_inplace::calculate::RevisionRef;
use kruise_inplace::{go_json, revision};

use super::PlanArgs;
use super::decode::invalid;
use super::owned::KnownRevision;
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

/// The (current, update) revisions: the flags, else the status's names, else the `template`'s revision
/// (update) and the update revision (current).
pub(super) fn chosen_revisions(
    args: &PlanArgs,
    status: (&str, &str),
    name: &str,
    template: &PodTemplateSpec,
    collisions: i32,
) -> Result<(String, String), CliError> {
    let (status_current, status_update) = status;
    let update = match (&args.update_revision, status_update) {
        (Some(given), _) => given.clone(),
        (None, "") => template_revision(name, template, collisions, &args.workload)?,
        (None, name) => name.to_owned(),
    };
    let current = match (&args.current_revision, status_current) {
        (Some(given), _) => given.clone(),
        (None, "") => update.clone(),
        (None, name) => name.to_owned(),
    };
    Ok((current, update))
}

/// The planners' view of the ControllerRevisions of the input.
pub(super) fn revision_refs(known: &[KnownRevision]) -> Vec<RevisionRef<'_>> {
    known
        .iter()
        .map(|r| RevisionRef {
            name: &r.name,
            data: Some(&r.data),
            annotations: r.annotations.as_ref(),
        })
        .collect()
}

/// `namespace/name` of the planned workload (namespace `default` when unset).
pub(super) fn workload_key(metadata: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        metadata.namespace.as_deref().unwrap_or("default"),
        metadata.name.as_deref().unwrap_or("")
    )
}
