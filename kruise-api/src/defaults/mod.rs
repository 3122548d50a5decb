//! Upstream's defaulting: one [`ApplyDefaults`] implementation per kind and version, applying what
//! OpenKruise's mutating webhooks (and CRD `default`s) would, without overwriting fields that are set.
//!
//! Pod templates are schemaless in the CRDs, so the API server does not default them; Kruise's webhooks do
//! (Kubernetes' own pod-spec defaults plus `imagePullPolicy: Always` for containers). [`pod`] reproduces that
//! for templates, since revision names and SidecarSet hashes are computed from defaulted objects.
//!
//! ```
//! use kruise_api::apps::v1alpha1::CloneSet;
//! use kruise_api::defaults::ApplyDefaults;
//!
//! let mut cs: CloneSet = serde_saphyr::from_str(r#"
//! apiVersion: apps.kruise.io/v1alpha1
//! kind: CloneSet
//! metadata: {name: demo}
//! spec:
//!   selector: {matchLabels: {app: demo}}
//!   template:
//!     metadata: {labels: {app: demo}}
//!     spec: {containers: [{name: main, image: "nginx:1.25"}]}
//! "#).unwrap();
//! cs.apply_defaults();
//! assert_eq!(cs.spec.replicas, Some(1));
//! assert_eq!(cs.spec.revision_history_limit, Some(10));
//! let main = &cs.spec.template.spec.as_ref().unwrap().containers[0];
//! assert_eq!(main.image_pull_policy.as_deref(), Some("Always"));
//! ```

pub mod pod;
pub mod statefulset;

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
mod daemonset;
mod ephemeraljob;
mod imagepulljob;
mod nodeimage;
mod nodepodprobe;
mod persistentpodstate;
mod podprobemarker;
mod resourcedistribution;
mod uniteddeployment;
mod workloadspread;

pub use imagepulljob::add_deletion_protection;
pub use nodeimage::DefaultCreatedAt;
mod containerrecreaterequest;
mod podunavailablebudget;
mod sidecarset;

/// Applies upstream's defaults to an object in place, leaving fields that are already set alone.
///
/// Applying defaults twice is the same as applying them once.
pub trait ApplyDefaults {
    /// Fills unset fields with upstream's defaults.
    fn apply_defaults(&mut self);
}
