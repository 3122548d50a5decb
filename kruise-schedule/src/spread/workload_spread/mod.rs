//! WorkloadSpread (upstream `pkg/util/workloadspread`, `pkg/controller/workloadspread`,
//! `pkg/webhook/workloadspread`): the pods of one workload are spread over ordered subsets of nodes, each with
//! an optional maximum (`maxReplicas`, an integer or a share of the workload's replicas, rounded up).
//!
//! Decisions, each in its own module, all pure (the caller passes `now` and what it observed):
//!
//! * [`admission`]: at pod CREATE the first subset, in spec order, that is schedulable and still misses
//!   pods is spent (`missingReplicas - 1`, the pod recorded in `creatingPods`); at pod DELETE the pod's
//!   subset gets it back (`missingReplicas + 1`, the pod recorded in `deletingPods`). The caller writes the
//!   returned status conditionally (resourceVersion) and decides again on a conflict, so concurrent
//!   admissions never overfill a subset.
//! * [`injection`]: what a pod admitted into a subset gets: the subset's required node selector term ANDed
//!   into each of its required terms, preferred terms and tolerations appended, the subset's patch, and the
//!   `apps.kruise.io/matched-workloadspread` annotation ([`matched`]).
//! * [`status`]: the controller's subset statuses from the pods it sees: replicas, missing replicas,
//!   `creatingPods` / `deletingPods` entries dropped when observed or expired ([`CREATING_POD_TIMEOUT`],
//!   [`DELETING_POD_TIMEOUT`]), and when to look again.
//! * [`deletion_cost`]: the `controller.kubernetes.io/pod-deletion-cost` of every pod, so that a scale-down
//!   removes the surplus of full subsets first, then pods of later subsets before earlier ones.
//! * [`adaptive`]: the `Adaptive` strategy: pods unschedulable for longer than `rescheduleCriticalSeconds`
//!   are deleted (so the workload recreates them elsewhere) and their subset is marked `Schedulable=False`
//!   for [`UNSCHEDULABLE_RECOVERY`].
//! * [`plan()`]: one controller reconcile: [`status`], [`deletion_cost`] and [`adaptive`] together.
//!
//! ```
//! use kruise_api::apps::v1beta1::WorkloadSpread;
//! use kruise_schedule::spread::workload_spread::admission::admit_create;
//!
//! let spread: WorkloadSpread = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "ws", "namespace": "default"},
//!     "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
//!         "subsets": [{"name": "a", "maxReplicas": 1}, {"name": "b"}]},
//!     "status": {"subsetStatuses": [
//!         {"name": "a", "replicas": 1, "missingReplicas": 0},
//!         {"name": "b", "replicas": 0, "missingReplicas": -1}]}
//! })).unwrap();
//! let now = "2024-05-01T10:00:00Z".parse().unwrap();
//! let admitted = admit_create(&spread, "web-x1", now).unwrap().unwrap();
//! assert_eq!(admitted.subset.name, "b", "subset a is full");
//! assert!(admitted.status.subset_statuses[1].creating_pods.contains_key("web-x1"));
//! ```

pub mod adaptive;
pub mod admission;
pub mod deletion_cost;
pub mod error;
pub mod injection;
pub mod matched;
pub mod max_replicas;
mod plan;
pub mod status;

use std::time::Duration;

pub use self::error::WorkloadSpreadError;
pub use self::plan::{Plan, PlanInput, plan};

/// How long a pod admitted into a subset stays in `creatingPods` without being seen (upstream waits the
/// same way for its informer; kruise-rs: 30 s, then the pod is counted only if it exists).
pub const CREATING_POD_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a pod whose deletion was admitted stays in `deletingPods` while it still exists (kruise-rs:
/// 30 s; a deletion held by a finalizer or a refused one counts the pod again afterwards).
pub const DELETING_POD_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a subset stays `Schedulable=False` after the `Adaptive` strategy found it could not schedule
/// its pods (upstream: 5 minutes).
pub const UNSCHEDULABLE_RECOVERY: Duration = Duration::from_secs(300);

/// `rescheduleCriticalSeconds` when the `Adaptive` strategy does not set it (kruise-rs: 30 s).
pub const DEFAULT_RESCHEDULE_CRITICAL_SECONDS: i32 = 30;
