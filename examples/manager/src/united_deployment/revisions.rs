//! The ControllerRevisions of a UnitedDeployment: the update revision built from `spec.template` with
//! [`kruise_schedule::united_deployment::revision`], labelled with the selector's `matchLabels` and owned
//! by the UnitedDeployment; the history steps (reuse, renumber, create with collisions, truncate beyond
//! `spec.revisionHistoryLimit`) are [`crate::workload::history`]'s.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_api::apps::v1beta1::UnitedDeployment;
use kruise_inplace::revision::RevisionError;
use kruise_runtime::actions;
use kruise_runtime::harness::object_key;
use kruise_schedule::united_deployment::revision::template_revision;
use kube::{Api, ResourceExt};

use super::{OWNER, UnitedDeploymentControllerError};
use crate::workload::history::{self, Ensured, HistoryError};

/// The revision of the UnitedDeployment's current template, numbered `number`, named with
/// `collision_count`.
///
/// # Errors
/// The template cannot be written as revision data.
pub fn new_revision(
    united_deployment: &UnitedDeployment,
    number: i64,
    collision_count: i32,
) -> Result<ControllerRevision, RevisionError> {
    let revision = template_revision(
        &united_deployment.name_any(),
        &united_deployment.spec.template,
        collision_count,
    )
    .map_err(|error| RevisionError::Template(error.to_string()))?;
    let mut object = revision.to_controller_revision(
        united_deployment.spec.selector.match_labels.as_ref(),
        number,
    );
    object.metadata.namespace = united_deployment.namespace();
    object.metadata.owner_references = Some(vec![OWNER.controller_reference(united_deployment)]);
    Ok(object)
}

/// Finds, renumbers or creates the update revision among `sorted` (the UnitedDeployment's revisions, sorted
/// with [`history::sort`]), then deletes the revisions beyond the history limit that are neither the
/// current nor the update revision.
///
/// # Errors
/// The template cannot be hashed, or a write fails.
pub async fn ensure_update(
    api: &Api<ControllerRevision>,
    united_deployment: &UnitedDeployment,
    sorted: &[Arc<ControllerRevision>],
) -> Result<Ensured, UnitedDeploymentControllerError> {
    let status = united_deployment.status.clone().unwrap_or_default();
    let failed = |message: String| UnitedDeploymentControllerError::Revision {
        united_deployment: object_key(united_deployment),
        message,
    };
    let ensured = history::ensure_update(
        api,
        sorted,
        status.collision_count.unwrap_or(0),
        |number, collisions| new_revision(united_deployment, number, collisions),
    )
    .await
    .map_err(|error| match error {
        HistoryError::Revision(error) => failed(error.to_string()),
        HistoryError::Action(error) => failed(error.to_string()),
        HistoryError::Collisions { attempts } => {
            failed(format!("{attempts} revision names in a row were taken"))
        }
    })?;
    let update = ensured.revision.name_any();
    let live: BTreeSet<&str> = [status.current_revision.as_str(), update.as_str()].into();
    for doomed in history::to_truncate(sorted, &live, united_deployment.spec.revision_history_limit)
    {
        actions::delete(api, doomed.as_ref()).await?;
    }
    Ok(ensured)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn united_deployment(image: &str) -> UnitedDeployment {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "ud-uid"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"deploymentTemplate": {"spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "main", "image": image}]}}}}},
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_revision_is_named_labelled_and_owned_and_follows_the_template() {
        let first = new_revision(&united_deployment("nginx:1"), 1, 0).unwrap();
        assert!(first.name_any().starts_with("web-"));
        assert_eq!(first.namespace().as_deref(), Some("ns"));
        assert_eq!(first.labels()["app"], "web");
        let owner = &first.owner_references()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("UnitedDeployment", "ud-uid")
        );
        let same = new_revision(&united_deployment("nginx:1"), 1, 0).unwrap();
        assert!(history::equal(&first, &same));
        let changed = new_revision(&united_deployment("nginx:2"), 2, 0).unwrap();
        assert!(!history::equal(&first, &changed));
        assert_ne!(first.name_any(), changed.name_any());
    }
}
