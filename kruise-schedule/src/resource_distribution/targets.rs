//! The namespaces a ResourceDistribution targets (upstream's `listNamespacesForDistributor`): every
//! namespace with `allNamespaces`, otherwise the `includedNamespaces` and the namespaces the
//! `namespaceLabelSelector` matches (an empty selector matches none); then minus `excludedNamespaces`, minus
//! `kube-system` and `kube-public`, minus namespaces being deleted. An included namespace that does not
//! exist is still a target, reported apart ([`Targets::missing`]): the controller counts it as desired and
//! failed (`NamespaceNotExists`).
//!
//! ```
//! use std::collections::BTreeMap;
//! use kruise_api::apps::v1alpha1::ResourceDistributionTargets;
//! use kruise_schedule::resource_distribution::targets::{NamespaceView, target_namespaces};
//!
//! let targets: ResourceDistributionTargets = serde_json::from_value(serde_json::json!({
//!     "allNamespaces": true, "excludedNamespaces": {"list": [{"name": "b"}]}
//! })).unwrap();
//! let labels = BTreeMap::new();
//! let view = |name| NamespaceView { name, labels: &labels, terminating: false };
//! let found = target_namespaces(&targets, &[view("a"), view("b"), view("kube-public")]).unwrap();
//! assert_eq!(found.namespaces.into_iter().collect::<Vec<_>>(), ["a"]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Namespace;
use kruise_api::apps::v1alpha1::ResourceDistributionTargets;
use kruise_api::label_selector::{self, SelectorError};

use super::is_forbidden;

/// What the decision needs of one namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamespaceView<'a> {
    /// `metadata.name`.
    pub name: &'a str,
    /// `metadata.labels`.
    pub labels: &'a BTreeMap<String, String>,
    /// Being deleted: `metadata.deletionTimestamp` set or `status.phase: Terminating`.
    pub terminating: bool,
}

impl<'a> NamespaceView<'a> {
    /// The view of a Namespace object (`empty` stands for missing labels).
    #[must_use]
    pub fn of(namespace: &'a Namespace, empty: &'a BTreeMap<String, String>) -> Self {
        let terminating = namespace.metadata.deletion_timestamp.is_some()
            || namespace
                .status
                .as_ref()
                .and_then(|status| status.phase.as_deref())
                == Some("Terminating");
        Self {
            name: namespace.metadata.name.as_deref().unwrap_or_default(),
            labels: namespace.metadata.labels.as_ref().unwrap_or(empty),
            terminating,
        }
    }
}

/// The target namespaces of one distributor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    /// Existing namespaces that receive a copy.
    pub namespaces: BTreeSet<String>,
    /// Namespaces of `includedNamespaces` that do not exist (not excluded, not forbidden).
    pub missing: BTreeSet<String>,
}

impl Targets {
    /// How many namespaces the resource should reach (`status.desired`): existing and missing targets.
    #[must_use]
    pub fn desired(&self) -> usize {
        self.namespaces.len() + self.missing.len()
    }

    /// Whether `namespace` is an existing target.
    #[must_use]
    pub fn contains(&self, namespace: &str) -> bool {
        self.namespaces.contains(namespace)
    }
}

/// Why the targets cannot be worked out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TargetsError {
    /// `spec.targets.namespaceLabelSelector` is not a valid label selector.
    #[error("spec.targets.namespaceLabelSelector: {source}")]
    Selector {
        /// What is wrong with it.
        #[source]
        source: SelectorError,
    },
}

/// The target namespaces of `targets` among `namespaces` (every namespace of the cluster).
///
/// # Errors
/// The namespace label selector is invalid.
pub fn target_namespaces(
    targets: &ResourceDistributionTargets,
    namespaces: &[NamespaceView<'_>],
) -> Result<Targets, TargetsError> {
    let selector = &targets.namespace_label_selector;
    let use_selector = !label_selector::is_empty(selector);
    if use_selector {
        label_selector::validate(selector).map_err(|source| TargetsError::Selector { source })?;
    }
    let excluded: BTreeSet<&str> = targets
        .excluded_namespaces
        .list
        .iter()
        .map(|namespace| namespace.name.as_str())
        .collect();
    let included: BTreeSet<&str> = targets
        .included_namespaces
        .list
        .iter()
        .map(|namespace| namespace.name.as_str())
        .filter(|name| !name.is_empty())
        .collect();
    let eligible = |name: &str| !excluded.contains(name) && !is_forbidden(name);
    let mut found = Targets::default();
    for namespace in namespaces {
        if namespace.terminating || !eligible(namespace.name) {
            continue;
        }
        let selected = targets.all_namespaces
            || included.contains(namespace.name)
            || (use_selector
                && label_selector::matches(selector, namespace.labels).unwrap_or(false));
        if selected {
            found.namespaces.insert(namespace.name.to_owned());
        }
    }
    let existing: BTreeSet<&str> = namespaces.iter().map(|namespace| namespace.name).collect();
    found.missing = included
        .into_iter()
        .filter(|name| !existing.contains(name) && eligible(name))
        .map(str::to_owned)
        .collect();
    Ok(found)
}
