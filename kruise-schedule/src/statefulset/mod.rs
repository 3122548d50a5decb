//! The Advanced StatefulSet planner: one reconcile of upstream's Advanced StatefulSet controller as a pure
//! function (upstream `pkg/controller/statefulset/stateful_set_control.go`).
//!
//! [`plan`] reads a [`PlanInput`] (the StatefulSet, its pods and claims, the current and update revisions,
//! `now`, [`Options`]) and returns a [`Plan`]: the [`Action`]s to take in order — each with the [`Rule`]
//! that chose it, in the planners' shared vocabulary ([`crate::planning`]) — the new status, when to requeue, and where the pass stopped ([`Wait`]) or failed
//! ([`Error`]).
//!
//! 1. **Ordinals** ([`ordinals`]): pods are named `<name>-<ordinal>`. `replicas` ordinals are kept, from
//!    `spec.ordinals.start` (gate `StatefulSetStartOrdinal`) upwards, skipping `spec.reserveOrdinals` (ints
//!    and `"a-b"` ranges; one invalid entry discards them all). A kept ordinal's **slot index** is
//!    `ordinal - start`, reserved slots included. Pods on other ordinals are condemned.
//! 2. **Slots**, lowest first: finished pods are deleted; missing pods are created (claims
//!    `<template>-<pod>` first) at the current revision while `isCurrentRevisionNeeded` says so, else at the
//!    update revision. `OrderedReady` (the default) creates one pod per pass and waits for each pod to be
//!    Running and available before looking at the next; `Parallel` creates them all, limited by
//!    `scaleStrategy.maxUnavailable` (rounded down, at least 1).
//! 3. **Condemned** pods are deleted from the highest ordinal down; `OrderedReady` deletes one per pass and
//!    stops at an unavailable pod unless it is the first unhealthy one. A preDelete hook turns a deletion
//!    into `PreparingDelete`.
//! 4. **Rolling update**: refresh pods (in-place progress, lifecycle); if a state changed, stop. Then delete
//!    `apps.kruise.io/specified-delete` pods within `rollingUpdate.maxUnavailable` (rounded down, at least
//!    1), and update the pods at slot indexes from the highest down to the **partition** (or, with
//!    `unorderedUpdate`, by priority, keeping `partition` pods old), in place (`InPlaceIfPossible`,
//!    `InPlaceOnly`, through the inPlaceUpdate hook) or by deletion, until `maxUnavailable` pods are
//!    unavailable. With gate `StatefulSetAutoResizePVCGate` and `volumeClaimUpdateStrategy.type:
//!    OnPodRollingUpdate`, a pod's claims that request less storage than their templates are expanded
//!    first, and the pod waits (counted unavailable) until each claim has the capacity it requests.
//! 5. **Status**, including `volumeClaims`: per template, the pods whose claim requests at least the
//!    template's storage, and of those the ones whose claim also has that capacity ([`claim_fit`]).
//!
//! The plan refers to existing pods and claims by index and never clones them; only new objects are built.
//! A controller executes the actions in order and plans again after the writes are observed.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
//! use kruise_api::apps::v1beta1::StatefulSet;
//! use kruise_schedule::statefulset::{plan, ActionKind, Options, PlanInput, Revisions, Wait};
//!
//! let set: StatefulSet = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
//!     "metadata": {"name": "web", "namespace": "default"},
//!     "spec": {
//!         "replicas": 3,
//!         "reserveOrdinals": [1],
//!         "selector": {"matchLabels": {"app": "web"}},
//!         "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
//!     },
//! })).unwrap();
//! let now = "2024-05-01T10:00:00Z".parse::<Timestamp>().unwrap().to_zoned(TimeZone::UTC);
//! let options = Options::default();
//! let pods: Vec<Pod> = Vec::new();
//! let input = PlanInput::new(&set, &pods, Revisions::named("web-a", "web-a"), &now, &options);
//! let plan = plan(&input);
//! // OrderedReady: only web-0 is created, the pass waits for it.
//! let created: Vec<_> = plan.actions.iter().filter_map(|a| match &a.kind {
//!     ActionKind::CreatePod { pod, .. } => pod.metadata.name.clone(),
//!     _ => None,
//! }).collect();
//! assert_eq!(created, ["web-0"]);
//! assert_eq!(plan.waiting, Some(Wait::Created { pod: "web-0".into() }));
//! // Ordinal 1 is reserved: the three pods live on 0, 2 and 3.
//! assert_eq!(plan.range.ordinals().collect::<Vec<_>>(), [0, 2, 3]);
//! ```

mod action;
mod create;
mod error;
mod health;
mod input;
mod options;
pub mod ordinals;
mod pass;
mod plan;
mod retention;
mod scale;
mod status;
mod update;
mod volume_claims;
mod wait;

pub use action::{Action, ActionKind, Condemned, Rule, SpecificKind};
pub use create::OWNER_API_VERSION;
pub use error::Error;
pub use input::{PlanInput, Revisions};
pub use options::{FeatureGateError, Options};
pub use plan::{Plan, plan};
pub use volume_claims::{ClaimFit, UnparsableClaim, claim_fit};
pub use wait::Wait;

pub use crate::planning::{PlanRule, Target, UpdateHow};
