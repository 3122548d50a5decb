//! The ResourceDistribution decisions (upstream `pkg/controller/resourcedistribution` and
//! `pkg/webhook/resourcedistribution`) as pure functions: which namespaces a distributor targets
//! ([`targets`]), the hash of its resource ([`hash`]), what to do with the copy in one namespace and what the
//! copy is ([`copy`]), the status with one condition per kind of failure ([`status`]), and the rules of the
//! validating webhook ([`validation`]). The caller observes the namespaces and the copies' metadata, calls
//! these, writes, and passes the clock's `now`.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kruise_api::apps::v1alpha1::ResourceDistribution;
//! use kruise_schedule::resource_distribution::copy::{CopyDecision, CopyMeta, decide};
//! use kruise_schedule::resource_distribution::hash::resource_hash;
//! use kruise_schedule::resource_distribution::targets::{NamespaceView, target_namespaces};
//!
//! let distributor: ResourceDistribution = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "shared"},
//!     "spec": {
//!         "resource": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pull"}},
//!         "targets": {"namespaceLabelSelector": {"matchLabels": {"team": "a"}}}
//!     }
//! })).unwrap();
//! let labels = BTreeMap::from([("team".to_owned(), "a".to_owned())]);
//! let none = BTreeMap::new();
//! let namespaces = [
//!     NamespaceView { name: "web", labels: &labels, terminating: false },
//!     NamespaceView { name: "kube-system", labels: &labels, terminating: false },
//!     NamespaceView { name: "db", labels: &none, terminating: false },
//! ];
//! let targets = target_namespaces(&distributor.spec.targets, &namespaces).unwrap();
//! assert_eq!(targets.namespaces.iter().collect::<Vec<_>>(), ["web"]);
//! let hash = resource_hash(&distributor.spec.resource);
//! assert_eq!(decide("shared", true, None, &hash), CopyDecision::Create);
//! let foreign = CopyMeta { from: None, hash: None };
//! assert_eq!(decide("shared", true, Some(foreign), &hash), CopyDecision::Conflict);
//! ```

pub mod copy;
pub mod hash;
pub mod status;
pub mod targets;
pub mod validation;

/// Namespaces that never receive a copy and may not be named as targets (upstream's forbidden list).
pub const FORBIDDEN_NAMESPACES: [&str; 2] = ["kube-system", "kube-public"];

/// The kinds a ResourceDistribution distributes (`spec.resource.kind`, all `apiVersion: v1`).
pub const SUPPORTED_KINDS: [&str; 2] = ["Secret", "ConfigMap"];

/// Whether `namespace` is one of [`FORBIDDEN_NAMESPACES`].
#[must_use]
pub fn is_forbidden(namespace: &str) -> bool {
    FORBIDDEN_NAMESPACES.contains(&namespace)
}
