//! Typed, versioned and convertible OpenKruise APIs for Rust.
//!
//! * [`apps::v1alpha1`] and [`apps::v1beta1`]: every `apps.kruise.io` kind, as `kube` custom resources;
//!   [`policy`]: `policy.kruise.io` PodUnavailableBudget.
//! * [`convert`]: v1alpha1 ⇄ v1beta1 conversions (`From` impls), lossless from v1alpha1 and back.
//! * [`defaults`]: upstream's defaulting for every kind, including pod templates.
//! * [`crd`]: the CustomResourceDefinitions, ready to install; [`schema_version`]: which version wrote an
//!   installed CRD, so an older installer leaves a newer schema alone.
//! * [`keys`]: every well-known label, annotation, condition, env var and finalizer; [`annotations`]: the JSON
//!   values of the annotations; [`lifecycle`], [`inplace`], [`update_priority`], [`scatter`]: the types shared
//!   by several kinds; [`pod`]: small pod facts (ready, available, revision match); [`pod_condition`]: writing pod
//!   conditions and recomputing `Ready` from readiness gates as upstream does; [`readiness_gates`]: the gates a
//!   new pod of a Kruise workload gets; [`feature_gate`]: upstream's
//!   `--feature-gates` lists and their one error type; [`unknown_fields`]: the fields a typed decode drops, put
//!   back into a webhook's answer.
//!
//! The crate does no I/O and enables no `k8s-openapi` version feature: pick one in your binary.
//!
//! ```
//! use kruise_api::apps::{v1alpha1, v1beta1};
//! use kruise_api::defaults::ApplyDefaults;
//!
//! let yaml = r#"
//! apiVersion: apps.kruise.io/v1alpha1
//! kind: CloneSet
//! metadata: {name: sample, namespace: default}
//! spec:
//!   replicas: 5
//!   selector: {matchLabels: {app: sample}}
//!   template:
//!     metadata: {labels: {app: sample}}
//!     spec: {containers: [{name: nginx, image: "nginx:alpine"}]}
//!   updateStrategy: {type: InPlaceIfPossible, partition: 3, maxUnavailable: "50%"}
//! "#;
//! let mut cloneset: v1alpha1::CloneSet = serde_saphyr::from_str(yaml)?;
//! cloneset.apply_defaults();
//! let hub = v1beta1::CloneSet::from(&cloneset);
//! assert_eq!(hub.spec.replicas, Some(5));
//! assert_eq!(v1alpha1::CloneSet::from(hub), cloneset);
//! # Ok::<(), serde_saphyr::Error>(())
//! ```

// kube's `#[kube(printcolumn(...))]` repeats keys such as `type_` once per column by design.
#![allow(clippy::duplicated_attributes)]

pub mod annotations;
pub mod apps;
pub mod convert;
pub mod crd;
pub mod defaults;
pub mod feature_gate;
pub mod image;
pub mod inplace;
pub mod keys;
pub mod label_selector;
pub mod lifecycle;
mod omitempty;
mod open_enum;
pub mod pod;
pub mod pod_condition;
pub mod policy;
pub mod readiness_gates;
pub mod scatter;
mod schema;
pub mod schema_version;
pub mod unknown_fields;
pub mod update_priority;
