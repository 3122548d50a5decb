//! The CloneSet planner: one reconcile of upstream's CloneSet controller as a pure function
//! (upstream `pkg/controller/cloneset/sync`).
//!
//! [`plan`] reads a [`PlanInput`] (the CloneSet, its pods and claims, the current and update revisions,
//! nodes, `now`, [`Options`], and the [`InstanceIds`] source new pods take their ids from) and returns a
//! [`Plan`]: the [`Diff`] (upstream's ten numbers), the [`Action`]s of the step that acts — each with the
//! [`Rule`] that chose it, in the planners' shared vocabulary ([`crate::planning`]) — the new status, and when
//! to requeue. Like upstream it never scales and updates in one pass:
//!
//! 1. **scale**: cancel `PreparingDelete` on scale-up; create pods (instance ids from claims left without a
//!    pod first, then from `input.ids`) in slow-start batches, at most [`Options::max_creations_per_plan`]
//!    of them (a kruise-rs bound: the next plans create the rest); delete released `PreparingDelete` pods, then
//!    specified pods within `deleteReadyLimit`, then scale down by the deletion ranking
//!    ([`crate::sort::deletion`]); a preDelete hook turns a deletion into `PreparingDelete`;
//! 2. otherwise **refresh** (in-place progress, lifecycle, `pod-template-hash`) and, if that changed no
//!    lifecycle state, **update**: candidates, order (`ActivePods`, priority, scatter, `PreparingUpdate`
//!    first), `updateMaxUnavailable`, then in place when possible or recreate through
//!    `apps.kruise.io/specified-delete`.
//!
//! The plan refers to existing pods by index and never clones them; only new pods are built. A controller
//! executes the actions in order, waits for the [`Expectations`], and plans again.
//!
//! ## Planning from a cache
//!
//! Reading every pod costs about as much as the rest of the plan together, and keeping every pod whole
//! between plans costs memory, so a controller that plans often keeps a [`PodFactsCache`] beside its pod
//! store: compact per-pod facts, no pod. It applies every pod event to it ([`PodFactsCache::apply`] for an
//! add or update, skipped when the `resourceVersion` is the one stored; [`PodFactsCache::remove`] for a
//! delete; [`PodFactsCache::sync`] or [`PodFactsCache::sync_with`] from its current view, reading only the
//! pods whose version changed) and plans with [`PlanInput::from_cache`], giving the pod store as a
//! [`PodSource`]: the plan reads from it only the whole pods of the steps that act on them (in-place
//! updates, lifecycle changes, deletions, the pods ranked for a scale-down), at the cached
//! `resourceVersion`. The cache keeps, per pod, only what the pod alone says (revision, lifecycle state,
//! phase, conditions, deletion, the labels and annotations the planner reads, the `ActivePods` key); the
//! settings of the CloneSet and `now` are applied when planning, so the plan is exactly the plan of
//! [`PlanInput::new`] with the cache's pods in its order ([`PodFactsCache::pods`]), whose indexes its
//! actions use. When the source no longer holds a pod a step needs at the cached version, the plan has no
//! actions and lists the pod in [`Plan::unavailable`]: sync the cache and plan again. The priority and
//! scatter keys follow the strategy given to [`PodFactsCache::set_ordering`]; a plan for a CloneSet with
//! another strategy reads those keys from the whole pods instead (same decisions, slower).
//!
//! ```
//! use std::collections::HashMap;
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
//! use kruise_api::apps::v1beta1::CloneSet;
//! use kruise_schedule::cloneset::{plan, Options, PlanInput, PodFactsCache, PodSource, Revisions, SeededIds};
//!
//! /// The pod store: pods by name.
//! struct Store(HashMap<String, Arc<Pod>>);
//!
//! impl PodSource for Store {
//!     fn pod_at(&self, _namespace: &str, name: &str, version: &str) -> Option<Arc<Pod>> {
//!         self.0.get(name).filter(|pod| pod.metadata.resource_version.as_deref() == Some(version)).cloned()
//!     }
//! }
//!
//! let cloneset: CloneSet = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
//!     "metadata": {"name": "web", "namespace": "default"},
//!     "spec": {
//!         "replicas": 2,
//!         "selector": {"matchLabels": {"app": "web"}},
//!         "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
//!     },
//! })).unwrap();
//! let pod = |name: &str, version: &str| -> Pod {
//!     serde_json::from_value(serde_json::json!({
//!         "metadata": {"name": name, "namespace": "default", "resourceVersion": version,
//!                      "labels": {"app": "web", "controller-revision-hash": "web-a", "pod-template-hash": "a"}},
//!         "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
//!     })).unwrap()
//! };
//! let mut store = Store(HashMap::new());
//! let mut cache = PodFactsCache::for_cloneset(&cloneset);
//! for (name, version) in [("web-1", "10"), ("web-2", "11"), ("web-3", "12")] {
//!     let pod = pod(name, version);
//!     cache.apply(&pod);                                // the informer's events
//!     store.0.insert(name.to_owned(), Arc::new(pod));
//! }
//! let now = "2024-05-01T10:00:00Z".parse::<Timestamp>().unwrap().to_zoned(TimeZone::UTC);
//! let options = Options::default();
//! let revisions = Revisions::named("web-a", "web-a");
//! let ids = SeededIds::new(1);
//! let input = PlanInput::from_cache(&cloneset, (&cache, &store), revisions, &now, &options, &ids);
//! let planned = plan(&input);
//! assert_eq!(planned.diff.scale_down_num, 1);
//! // Action indexes refer to the cache's pods; the plan equals the plan of those pods read whole.
//! let pods: Vec<Pod> = cache.pods().map(|p| (*store.0[p.name]).clone()).collect();
//! let cold = plan(&PlanInput::new(&cloneset, &pods, revisions, &now, &options, &SeededIds::new(1)));
//! assert_eq!(planned.actions, cold.actions);
//! assert_eq!(planned.expectations(&pods).deletions, cold.expectations(&pods).deletions);
//! ```
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
//! use kruise_api::apps::v1beta1::CloneSet;
//! use kruise_schedule::cloneset::{plan, ActionKind, Options, PlanInput, Revisions, SeededIds, Step};
//!
//! let cloneset: CloneSet = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
//!     "metadata": {"name": "web", "namespace": "default"},
//!     "spec": {
//!         "replicas": 3,
//!         "selector": {"matchLabels": {"app": "web"}},
//!         "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
//!     },
//! })).unwrap();
//! let now = "2024-05-01T10:00:00Z".parse::<Timestamp>().unwrap().to_zoned(TimeZone::UTC);
//! let options = Options::default();
//! let pods: Vec<Pod> = Vec::new();
//! let ids = SeededIds::new(1);
//! let input = PlanInput::new(&cloneset, &pods, Revisions::named("web-a", "web-a"), &now, &options, &ids);
//! let plan = plan(&input);
//! assert_eq!(plan.step, Step::Scale);
//! assert_eq!(plan.diff.scale_up_num, 3);
//! let created: Vec<_> = plan.actions.iter().filter_map(|a| match &a.kind {
//!     ActionKind::CreatePod { pod, batch, .. } => Some((pod.metadata.name.clone().unwrap(), *batch)),
//!     _ => None,
//! }).collect();
//! assert_eq!(created.len(), 3);
//! assert_eq!(created.iter().map(|c| c.1).collect::<Vec<_>>(), [0, 1, 1]); // slow start: 1, then 2
//! ```

mod action;
mod cache;
mod create;
mod diff;
mod error;
mod facts;
mod input;
mod invalid;
mod options;
mod order;
mod plan;
mod pod_source;
mod scale;
mod settings;
mod status;
mod update;

pub use action::{Action, ActionKind, Rule, SpecificKind};
pub use cache::{Applied, PodFactsCache, PodVersion, Synced};
pub use create::OWNER_API_VERSION;
pub use diff::{Diff, RevisionMatch, calculate_diffs};
pub use error::Error;
pub use input::{InstanceIds, PlanInput, Revisions, SeededIds};
pub use invalid::{InvalidValue, Reading};
pub use options::{DEFAULT_MAX_CREATIONS_PER_PLAN, FeatureGateError, Options};
pub use plan::{Expectations, Plan, SkippedPod, Step, plan};
pub use pod_source::{NoPods, PodSource};

pub use crate::planning::{PlanRule, Target, UpdateHow};
