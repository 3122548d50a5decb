//! The UnitedDeployment decisions (upstream `pkg/controller/uniteddeployment`) as pure functions: the
//! replicas of each subset ([`allocation`]), their partitions ([`partitions`]), the revision of the
//! template ([`revision`]), the workload each subset wants ([`desired`], with the subset patch of
//! [`template_patch`]), what is read back from a workload ([`workload`]), the status ([`status`]), the
//! `Adaptive` schedule strategy ([`adaptive`], with `reserveUnschedulablePods` [`reservation`]), and one
//! whole reconcile ([`plan`]). The caller lists the workloads the UnitedDeployment controls (CloneSets,
//! Advanced StatefulSets, StatefulSets or Deployments), keeps the ControllerRevisions, writes, and passes
//! the clock's `now`.
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
//! use kruise_api::apps::v1beta1::UnitedDeployment;
//! use kruise_schedule::united_deployment::plan::{PlanInput, plan};
//! use kruise_schedule::united_deployment::revision::template_revision;
//!
//! let ud: UnitedDeployment = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
//!     "metadata": {"name": "web", "namespace": "default", "uid": "1"},
//!     "spec": {
//!         "replicas": 4, "selector": {"matchLabels": {"app": "web"}},
//!         "template": {"deploymentTemplate": {"spec": {
//!             "selector": {"matchLabels": {"app": "web"}},
//!             "template": {"metadata": {"labels": {"app": "web"}},
//!                 "spec": {"containers": [{"name": "main", "image": "nginx"}]}}}}},
//!         "topology": {"subsets": [{"name": "a"}, {"name": "b", "replicas": 1}]}
//!     }
//! })).unwrap();
//! let revision = template_revision("web", &ud.spec.template, 0).unwrap();
//! let now = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
//! let plan = plan(&PlanInput {
//!     united_deployment: &ud, workloads: &[], update_revision: &revision.name,
//!     collision_count: 0, now: &now, pods: &Default::default(),
//! }).unwrap();
//! assert_eq!(plan.create.len(), 2);
//! assert_eq!(plan.create[0].metadata().generate_name.as_deref(), Some("web-a-"));
//! ```

pub mod adaptive;
pub mod allocation;
pub mod desired;
mod native_spec;
pub mod partitions;
pub mod plan;
pub mod reservation;
pub mod revision;
pub mod status;
pub mod template_patch;
pub mod workload;

/// Why a UnitedDeployment cannot be reconciled as it is written. Each message names the field and value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnitedDeploymentError {
    /// A subset's `replicas`, `minReplicas` or `maxReplicas` is not a valid value.
    #[error("{field}: invalid value {value}: {reason}")]
    InvalidReplicas {
        /// The field path, e.g. `spec.topology.subsets[1].replicas`.
        field: String,
        /// The value as written.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// The fixed subset replicas add up to more than `spec.replicas`.
    #[error(
        "spec.topology.subsets: the subsets' replicas add up to {fixed}, more than spec.replicas {total}"
    )]
    FixedAboveTotal {
        /// Their sum.
        fixed: i64,
        /// `spec.replicas`.
        total: i32,
    },
    /// Every subset has fixed replicas and they add up to less than `spec.replicas`.
    #[error(
        "spec.topology.subsets: every subset has replicas and they add up to {fixed}, less than spec.replicas {total}"
    )]
    FixedBelowTotal {
        /// Their sum.
        fixed: i64,
        /// `spec.replicas`.
        total: i32,
    },
    /// `spec.replicas` is unset and some subset has no `replicas`.
    #[error("spec.replicas: unset, so every subset must set replicas")]
    UnfixedWithoutTotal,
    /// A subset's `minReplicas` is above its `maxReplicas`.
    #[error("{field}: minReplicas {min} is above maxReplicas {max}")]
    MinAboveMax {
        /// The subset's path, e.g. `spec.topology.subsets[0]`.
        field: String,
        /// Its minimum.
        min: i32,
        /// Its maximum.
        max: i32,
    },
    /// `spec.template` names none of the four workload kinds.
    #[error(
        "spec.template: set one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate, deploymentTemplate"
    )]
    NoTemplate,
    /// `spec.template` cannot be written as revision data.
    #[error("spec.template: {0}")]
    Template(String),
    /// A subset's `patch` does not apply to the pod template.
    #[error(
        "UnitedDeployment {united_deployment}: spec.topology.subsets[{subset}].patch: {reason}"
    )]
    InvalidPatch {
        /// The UnitedDeployment's name.
        united_deployment: String,
        /// The subset's name.
        subset: String,
        /// Why.
        reason: String,
    },
}
