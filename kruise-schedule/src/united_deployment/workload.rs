//! The subset workloads of a UnitedDeployment, of any of the four kinds its template may name, and what
//! the controller reads from one ([`ObservedSubset`]): its subset, revision, patch, replicas, partition
//! and pod counts.

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::apps::v1beta1::{CloneSet, StatefulSet as AdvancedStatefulSet, SubsetTemplate};
use kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL;
use kruise_api::keys::united_deployment::{SUBSET_NAME_LABEL, SUBSET_PATCH_ANNOTATION};

use super::native_spec::{deployment_spec, stateful_set_spec};

/// The kind of a subset workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkloadKind {
    /// An apps.kruise.io CloneSet (`cloneSetTemplate`).
    CloneSet,
    /// An apps.kruise.io Advanced StatefulSet (`advancedStatefulSetTemplate`).
    AdvancedStatefulSet,
    /// An apps/v1 StatefulSet (`statefulSetTemplate`).
    StatefulSet,
    /// An apps/v1 Deployment (`deploymentTemplate`).
    Deployment,
}

impl WorkloadKind {
    /// Every kind, in upstream's order of precedence when a template names several.
    pub const ALL: [Self; 4] = [
        Self::StatefulSet,
        Self::AdvancedStatefulSet,
        Self::CloneSet,
        Self::Deployment,
    ];

    /// The kind `template` names (upstream `getSubsetControls`: the first set of StatefulSet, Advanced
    /// StatefulSet, CloneSet, Deployment), or `None` when it names none.
    #[must_use]
    pub fn of_template(template: &SubsetTemplate) -> Option<Self> {
        if template.stateful_set_template.is_some() {
            Some(Self::StatefulSet)
        } else if template.advanced_stateful_set_template.is_some() {
            Some(Self::AdvancedStatefulSet)
        } else if template.clone_set_template.is_some() {
            Some(Self::CloneSet)
        } else if template.deployment_template.is_some() {
            Some(Self::Deployment)
        } else {
            None
        }
    }

    /// A readable name, as in events (`CloneSet`, `AdvancedStatefulSet`, `StatefulSet`, `Deployment`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CloneSet => "CloneSet",
            Self::AdvancedStatefulSet => "AdvancedStatefulSet",
            Self::StatefulSet => "StatefulSet",
            Self::Deployment => "Deployment",
        }
    }
}

/// One subset workload.
#[derive(Clone, Debug, PartialEq)]
pub enum SubsetWorkload {
    /// A CloneSet.
    CloneSet(Box<CloneSet>),
    /// An Advanced StatefulSet.
    AdvancedStatefulSet(Box<AdvancedStatefulSet>),
    /// A Kubernetes StatefulSet.
    StatefulSet(Box<apps::StatefulSet>),
    /// A Kubernetes Deployment.
    Deployment(Box<apps::Deployment>),
}

/// Pod counts of a subset workload's status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubsetCounts {
    /// `status.replicas`.
    pub replicas: i32,
    /// `status.readyReplicas`.
    pub ready: i32,
    /// `status.updatedReplicas`.
    pub updated: i32,
    /// `status.updatedReadyReplicas` (for Deployments and Kubernetes StatefulSets, which do not count
    /// it, the smaller of updated and ready).
    pub updated_ready: i32,
}

/// What the controller reads from a subset workload.
#[derive(Clone, Debug, PartialEq)]
pub struct ObservedSubset {
    /// Its kind.
    pub kind: WorkloadKind,
    /// Its name.
    pub name: String,
    /// Its `apps.kruise.io/subset-name` label, if any.
    pub subset: Option<String>,
    /// Its `controller-revision-hash` label (the UnitedDeployment revision it was written from).
    pub revision: String,
    /// Its `apps.kruise.io/subset-patch` annotation.
    pub patch: Option<String>,
    /// `spec.replicas` (1 when unset, as the API server defaults it).
    pub replicas: i32,
    /// The partition it holds back (0 for Deployments).
    pub partition: i32,
    /// Its status counts.
    pub counts: SubsetCounts,
    /// Whether its status describes its current generation.
    pub status_current: bool,
    /// Whether it is being deleted.
    pub deleting: bool,
    /// `metadata.creationTimestamp` in seconds since the epoch (0 when unset), to keep the oldest of
    /// duplicates.
    pub created: i64,
}

impl SubsetWorkload {
    /// Its kind.
    #[must_use]
    pub fn kind(&self) -> WorkloadKind {
        match self {
            Self::CloneSet(_) => WorkloadKind::CloneSet,
            Self::AdvancedStatefulSet(_) => WorkloadKind::AdvancedStatefulSet,
            Self::StatefulSet(_) => WorkloadKind::StatefulSet,
            Self::Deployment(_) => WorkloadKind::Deployment,
        }
    }

    /// Its metadata.
    #[must_use]
    pub fn metadata(&self) -> &ObjectMeta {
        match self {
            Self::CloneSet(set) => &set.metadata,
            Self::AdvancedStatefulSet(set) => &set.metadata,
            Self::StatefulSet(set) => &set.metadata,
            Self::Deployment(deployment) => &deployment.metadata,
        }
    }

    /// Its metadata, to change.
    pub fn metadata_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Self::CloneSet(set) => &mut set.metadata,
            Self::AdvancedStatefulSet(set) => &mut set.metadata,
            Self::StatefulSet(set) => &mut set.metadata,
            Self::Deployment(deployment) => &mut deployment.metadata,
        }
    }

    /// What the controller reads from it.
    #[must_use]
    pub fn observe(&self) -> ObservedSubset {
        let metadata = self.metadata();
        let label = |key: &str| {
            metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(key))
                .cloned()
        };
        let (replicas, partition, counts, observed_generation) = self.figures();
        ObservedSubset {
            kind: self.kind(),
            name: metadata.name.clone().unwrap_or_default(),
            subset: label(SUBSET_NAME_LABEL).filter(|name| !name.is_empty()),
            revision: label(CONTROLLER_REVISION_HASH_LABEL).unwrap_or_default(),
            patch: metadata
                .annotations
                .as_ref()
                .and_then(|annotations| annotations.get(SUBSET_PATCH_ANNOTATION))
                .cloned(),
            replicas,
            partition,
            counts,
            status_current: observed_generation >= metadata.generation.unwrap_or(0),
            deleting: metadata.deletion_timestamp.is_some(),
            created: metadata
                .creation_timestamp
                .as_ref()
                .map_or(0, |time| time.0.as_second()),
        }
    }

    /// `(spec replicas, partition, status counts, status.observedGeneration)`.
    fn figures(&self) -> (i32, i32, SubsetCounts, i64) {
        match self {
            Self::CloneSet(set) => {
                let replicas = set.spec.replicas.unwrap_or(1);
                let partition = set
                    .spec
                    .update_strategy
                    .rolling_update
                    .as_ref()
                    .and_then(|rolling| rolling.partition.as_ref());
                let partition = crate::partition::partition_replicas(partition, Some(replicas))
                    .ok()
                    .and_then(|kept| i32::try_from(kept).ok())
                    .unwrap_or(0);
                let status = set.status.clone().unwrap_or_default();
                let counts = SubsetCounts {
                    replicas: status.replicas,
                    ready: status.ready_replicas,
                    updated: status.updated_replicas,
                    updated_ready: status.updated_ready_replicas,
                };
                (replicas, partition, counts, status.observed_generation)
            }
            Self::AdvancedStatefulSet(set) => {
                let partition = set
                    .spec
                    .update_strategy
                    .rolling_update
                    .as_ref()
                    .and_then(|rolling| rolling.partition)
                    .unwrap_or(0);
                let status = set.status.clone().unwrap_or_default();
                let counts = SubsetCounts {
                    replicas: status.replicas,
                    ready: status.ready_replicas,
                    updated: status.updated_replicas,
                    updated_ready: status.updated_ready_replicas,
                };
                (
                    set.spec.replicas.unwrap_or(1),
                    partition,
                    counts,
                    status.observed_generation,
                )
            }
            Self::StatefulSet(set) => {
                let spec = stateful_set_spec(set).cloned().unwrap_or_default();
                let partition = spec
                    .update_strategy
                    .and_then(|strategy| strategy.rolling_update)
                    .and_then(|rolling| rolling.partition)
                    .unwrap_or(0);
                let status = set.status.clone().unwrap_or_default();
                let counts = native_counts(
                    status.replicas,
                    status.ready_replicas.unwrap_or(0),
                    status.updated_replicas.unwrap_or(0),
                );
                (
                    spec.replicas.unwrap_or(1),
                    partition,
                    counts,
                    status.observed_generation.unwrap_or(0),
                )
            }
            Self::Deployment(deployment) => {
                let replicas = deployment_spec(deployment)
                    .and_then(|spec| spec.replicas)
                    .unwrap_or(1);
                let status = deployment.status.clone().unwrap_or_default();
                let counts = native_counts(
                    status.replicas.unwrap_or(0),
                    status.ready_replicas.unwrap_or(0),
                    status.updated_replicas.unwrap_or(0),
                );
                (replicas, 0, counts, status.observed_generation.unwrap_or(0))
            }
        }
    }
}

fn native_counts(replicas: i32, ready: i32, updated: i32) -> SubsetCounts {
    SubsetCounts {
        replicas,
        ready,
        updated,
        updated_ready: updated.min(ready),
    }
}
