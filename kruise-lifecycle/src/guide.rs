//! How a user's operator drives the lifecycle hooks: the service-discovery walkthrough.
//!
//! Some teams register pods in a service registry outside Kubernetes. Their operator must register a pod
//! once it serves, take it out before it is updated in place or deleted, and put it back after the update.
//! A `CloneSet`'s `lifecycle` gives it the pauses it needs (this is the `cloneset-lifecycle-demo` of the
//! tutorial this project started from):
//!
//! ```yaml
//! apiVersion: apps.kruise.io/v1alpha1
//! kind: CloneSet
//! metadata: {namespace: demo, name: cloneset-lifecycle-demo}
//! spec:
//!   replicas: 2
//!   lifecycle:
//!     inPlaceUpdate:
//!       labelsHandler: {example.com/unready-blocker-inplace: "true"}
//!     preDelete:
//!       labelsHandler: {example.com/unready-blocker-delete: "true"}
//!   selector: {matchLabels: {app: nginx}}
//!   template:
//!     metadata:
//!       labels:
//!         app: nginx
//!         example.com/newly-create: "true"               # "not registered yet"
//!         example.com/unready-blocker-inplace: "true"    # arms the inPlaceUpdate hook
//!         example.com/unready-blocker-delete: "true"     # arms the preDelete hook
//!     spec: {containers: [{name: main, image: "nginx:latest"}]}
//!   updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 20%}
//! ```
//!
//! The operator watches the pods and acts on four situations, each time flipping one label with a small
//! strategic-merge patch:
//!
//! | Pod | Operator does | Then sets |
//! |---|---|---|
//! | `Normal`, `newly-create=true`, Ready | register | `newly-create=false` |
//! | `PreparingUpdate`, `unready-blocker-inplace=true` | fail over (deregister) | `unready-blocker-inplace=false` (releases the hook: Kruise updates the pod) |
//! | `Updated`, `unready-blocker-inplace=false`, Ready | register again | `unready-blocker-inplace=true` (re-arms the hook: Kruise marks the pod `Normal`) |
//! | `PreparingDelete`, `unready-blocker-delete=true` | unregister | `unready-blocker-delete=false` (releases the hook: Kruise deletes the pod) |
//!
//! The run below plays both sides: the `CloneSet` controller's decisions come from [`Workload`](crate::Workload),
//! and the operator's from a plain function over the pod.
//!
//! ```
//! use std::collections::BTreeMap;
//! use k8s_openapi::api::core::v1::{Pod, PodCondition, PodSpec, PodStatus};
//! use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
//! use kruise_api::lifecycle::{Lifecycle, LifecycleHook};
//! use kruise_lifecycle::{
//!     DeleteDecision, LifecycleStateType as State, MetadataChange, RefreshInput, UpdateDecision, Workload,
//! };
//!
//! const NEWLY_CREATED: &str = "example.com/newly-create";
//! const INPLACE_HOOK: &str = "example.com/unready-blocker-inplace";
//! const DELETE_HOOK: &str = "example.com/unready-blocker-delete";
//!
//! #[derive(Debug, PartialEq)]
//! enum Registry { Register, FailOver, Unregister }
//!
//! /// The user's operator: what to tell the registry, and the label patch that records it.
//! fn operator(pod: &Pod) -> Option<(Registry, MetadataChange)> {
//!     let label = |key| kruise_api::pod::label(pod, key).unwrap_or("");
//!     let ready = kruise_api::pod::is_ready(pod);
//!     match kruise_lifecycle::state::state(pod)? {
//!         State::Normal if label(NEWLY_CREATED) == "true" && ready => {
//!             Some((Registry::Register, MetadataChange::default().with_label(NEWLY_CREATED, "false")))
//!         }
//!         State::PreparingUpdate if label(INPLACE_HOOK) == "true" => {
//!             Some((Registry::FailOver, MetadataChange::default().with_label(INPLACE_HOOK, "false")))
//!         }
//!         State::Updated if label(INPLACE_HOOK) == "false" && ready => {
//!             Some((Registry::Register, MetadataChange::default().with_label(INPLACE_HOOK, "true")))
//!         }
//!         State::PreparingDelete if label(DELETE_HOOK) == "true" => {
//!             Some((Registry::Unregister, MetadataChange::default().with_label(DELETE_HOOK, "false")))
//!         }
//!         _ => None,
//!     }
//! }
//!
//! let hook = |key: &str| LifecycleHook {
//!     labels_handler: BTreeMap::from([(key.to_owned(), "true".to_owned())]),
//!     ..Default::default()
//! };
//! let lifecycle = Lifecycle {
//!     in_place_update: Some(hook(INPLACE_HOOK)),
//!     pre_delete: Some(hook(DELETE_HOOK)),
//!     ..Default::default()
//! };
//! let cloneset = Workload::cloneset(Some(&lifecycle));
//! let now = Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC);
//! let mut registry = Vec::new();
//! let mut run_operator = |pod: &mut Pod| {
//!     if let Some((call, patch)) = operator(pod) {
//!         registry.push(call);
//!         patch.apply_to(pod);
//!     }
//! };
//!
//! // The controller creates the pod from the template: PreparingNormal.
//! let mut pod = Pod::default();
//! pod.metadata.labels = Some(BTreeMap::from(
//!     [("app", "nginx"), (NEWLY_CREATED, "true"), (INPLACE_HOOK, "true"), (DELETE_HOOK, "true")]
//!         .map(|(k, v)| (k.to_owned(), v.to_owned())),
//! ));
//! cloneset.created(&pod, &now).change.apply_to(&mut pod);
//! assert_eq!(kruise_lifecycle::state::state(&pod), Some(State::PreparingNormal));
//!
//! // Scheduled and refreshed: Normal. Kubelet reports it Ready; the operator registers it.
//! pod.spec = Some(PodSpec { node_name: Some("node-1".into()), ..Default::default() });
//! cloneset.refresh(&pod, RefreshInput::default(), &now)?.change.apply_to(&mut pod);
//! pod.status = Some(PodStatus {
//!     conditions: Some(vec![PodCondition { type_: "Ready".into(), status: "True".into(), ..Default::default() }]),
//!     ..Default::default()
//! });
//! run_operator(&mut pod);
//!
//! // A new revision: the hook holds the pod in PreparingUpdate; the operator fails it over and releases it.
//! let UpdateDecision::Hold(held) = cloneset.update_wanted(&pod, &now)? else { panic!("must hold") };
//! held.change.apply_to(&mut pod);
//! run_operator(&mut pod);
//!
//! // Released: the controller updates it in place (Updating), then marks it Updated once done.
//! let UpdateDecision::UpdateNow(updating) = cloneset.update_wanted(&pod, &now)? else { panic!("must update") };
//! updating.change.apply_to(&mut pod);
//! let done = RefreshInput { update_completed: true, ..Default::default() };
//! cloneset.refresh(&pod, done, &now)?.change.apply_to(&mut pod);
//! assert_eq!(kruise_lifecycle::state::state(&pod), Some(State::Updated));
//!
//! // The operator registers it again and re-arms the hook; the next refresh makes it Normal.
//! run_operator(&mut pod);
//! cloneset.refresh(&pod, RefreshInput::default(), &now)?.change.apply_to(&mut pod);
//! assert_eq!(kruise_lifecycle::state::state(&pod), Some(State::Normal));
//!
//! // Scale-in: held in PreparingDelete until the operator has unregistered it.
//! let DeleteDecision::Hold(held) = cloneset.delete_wanted(&pod, &now)? else { panic!("must hold") };
//! held.change.apply_to(&mut pod);
//! run_operator(&mut pod);
//! assert_eq!(cloneset.delete_wanted(&pod, &now)?, DeleteDecision::Delete);
//!
//! assert_eq!(registry, [Registry::Register, Registry::FailOver, Registry::Register, Registry::Unregister]);
//! # Ok::<(), kruise_lifecycle::Error>(())
//! ```
//!
//! ## Finalizers and `markPodNotReady`
//!
//! The other style holds pods with a finalizer and lets Kruise take the pod out of Service endpoints
//! first: with `markPodNotReady: true`, entering `PreparingUpdate` or `PreparingDelete` adds a not-ready
//! entry to the pod's `KruisePodReady` condition, so the pod is not Ready while the operator deregisters
//! it. The entry goes away when the update is over.
//!
//! ```yaml
//! lifecycle:
//!   preDelete:     {markPodNotReady: true, finalizersHandler: [example.io/unready-blocker]}
//!   inPlaceUpdate: {markPodNotReady: true, finalizersHandler: [example.io/unready-blocker]}
//! ```
//!
//! ```
//! use k8s_openapi::api::core::v1::{Pod, PodCondition, PodReadinessGate, PodSpec, PodStatus};
//! use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
//! use kruise_api::lifecycle::{Lifecycle, LifecycleHook};
//! use kruise_lifecycle::{RefreshInput, UpdateDecision, Workload};
//!
//! const BLOCKER: &str = "example.io/unready-blocker";
//! let hook = LifecycleHook {
//!     finalizers_handler: vec![BLOCKER.into()],
//!     mark_pod_not_ready: true,
//!     ..Default::default()
//! };
//! let lifecycle = Lifecycle {
//!     in_place_update: Some(hook.clone()),
//!     pre_delete: Some(hook),
//!     ..Default::default()
//! };
//! let cloneset = Workload::cloneset(Some(&lifecycle));
//! let now = Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC);
//! let condition = |type_: &str| PodCondition { type_: type_.into(), status: "True".into(), ..Default::default() };
//!
//! // A serving pod: Normal, Ready, with the KruisePodReady gate (injected by Kruise's webhook).
//! let mut pod = Pod {
//!     spec: Some(PodSpec {
//!         readiness_gates: Some(vec![PodReadinessGate { condition_type: "KruisePodReady".into() }]),
//!         ..Default::default()
//!     }),
//!     status: Some(PodStatus {
//!         conditions: Some(["ContainersReady", "Ready", "KruisePodReady"].map(condition).into()),
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! pod.metadata.labels = Some([("lifecycle.apps.kruise.io/state".into(), "Normal".into())].into());
//! pod.metadata.finalizers = Some(vec![BLOCKER.into(), "kubernetes.io/other-owner".into()]);
//!
//! // PreparingUpdate: the status write (sent first) takes the pod out of endpoints.
//! let UpdateDecision::Hold(held) = cloneset.update_wanted(&pod, &now)? else { panic!() };
//! let status = held.change.status.strategic_merge_patch(&pod).unwrap();
//! assert_eq!(status["status"]["conditions"][0]["type"], "KruisePodReady");
//! assert_eq!(status["status"]["conditions"][0]["status"], "False");
//! held.change.apply_to(&mut pod);
//! assert!(!kruise_api::pod::is_ready(&pod));
//!
//! // The operator deregisters the pod and removes only its own finalizer.
//! pod.metadata.finalizers = Some(vec!["kubernetes.io/other-owner".into()]);
//! let UpdateDecision::UpdateNow(updating) = cloneset.update_wanted(&pod, &now)? else { panic!() };
//! updating.change.apply_to(&mut pod);
//!
//! // Update done: Updated, and the not-ready entry is gone in the same step.
//! let done = RefreshInput { update_completed: true, ..Default::default() };
//! cloneset.refresh(&pod, done, &now)?.change.apply_to(&mut pod);
//! assert!(kruise_api::pod::is_ready(&pod));
//! assert_eq!(kruise_lifecycle::not_ready::entries(&pod)?, vec![]);
//! # Ok::<(), kruise_lifecycle::Error>(())
//! ```
