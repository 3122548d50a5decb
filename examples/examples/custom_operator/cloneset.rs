//! The PodFleet as the CloneSet planner reads it: an in-memory CloneSet (never sent to the API server) with the
//! fleet's name, namespace, uid and generation, a pod template of one container `main` running the fleet's
//! image, pods selected by the label `demo.kruise-rs.io/fleet=<name>`, and the fleet's rollout settings as the
//! rolling-update strategy.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kruise_api::apps::v1beta1::{
    CloneSet, CloneSetPodUpdatePolicy, CloneSetSpec, CloneSetStatus, CloneSetUpdateStrategy,
    RollingUpdateCloneSetStrategy,
};
use kruise_api::defaults::ApplyDefaults as _;
use kube::ResourceExt as _;

use crate::fleet::PodFleet;

/// The label that selects a fleet's pods; its value is the fleet's name.
pub const FLEET_LABEL: &str = "demo.kruise-rs.io/fleet";

/// The name of the pods' only container.
pub const CONTAINER: &str = "main";

/// The labels of the pods of the fleet named `fleet` (also its selector).
#[must_use]
pub fn pod_labels(fleet: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(FLEET_LABEL.to_owned(), fleet.to_owned())])
}

/// The CloneSet the planner is given for `fleet`. Its status carries the fleet's revisions and observed
/// generation, as the planner starts from the previous status. Defaults are applied as kruise-manager applies
/// them (the pod template's too, so that revisions hash the template the pods really get).
#[must_use]
pub fn as_cloneset(fleet: &PodFleet) -> CloneSet {
    let name = fleet.name_any();
    let labels = pod_labels(&name);
    let policy = if fleet.spec.in_place {
        CloneSetPodUpdatePolicy::InPlaceIfPossible
    } else {
        CloneSetPodUpdatePolicy::ReCreate
    };
    let mut cloneset = CloneSet::new(
        &name,
        CloneSetSpec {
            replicas: Some(fleet.spec.replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: CONTAINER.to_owned(),
                        image: Some(fleet.spec.image.clone()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            update_strategy: CloneSetUpdateStrategy {
                rolling_update: Some(RollingUpdateCloneSetStrategy {
                    partition: fleet.spec.partition.clone(),
                    max_unavailable: fleet.spec.max_unavailable.clone(),
                    max_surge: fleet.spec.max_surge.clone(),
                    pod_update_policy: Some(policy),
                    ..RollingUpdateCloneSetStrategy::default()
                }),
                ..CloneSetUpdateStrategy::default()
            },
            ..CloneSetSpec::default()
        },
    );
    cloneset.metadata.namespace = fleet.namespace();
    cloneset.metadata.uid = fleet.uid();
    cloneset.metadata.generation = fleet.metadata.generation;
    cloneset.status = fleet.status.as_ref().map(|status| CloneSetStatus {
        observed_generation: status.observed_generation,
        update_revision: status.update_revision.clone(),
        current_revision: status.current_revision.clone(),
        ..CloneSetStatus::default()
    });
    cloneset.apply_defaults();
    cloneset
}
