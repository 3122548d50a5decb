//! The switches of an in-place update: upstream's feature gates (with upstream's defaults) and the per-workload
//! options upstream passes in `UpdateOptions`.

use std::fmt;

pub use kruise_api::feature_gate::FeatureGateError;
use kruise_api::feature_gate::FeatureGateSet;

/// Upstream feature gates that change in-place updates. [`Default`] is upstream's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    /// `InPlaceUpdateEnvFromMetadata` (default on): a label or annotation read by an env var through
    /// `fieldRef` is updated in place, and the containers reading it restart.
    pub in_place_update_env_from_metadata: bool,
    /// `InPlaceWorkloadVerticalScaling` (default off): cpu and memory requests and limits change in place.
    pub in_place_workload_vertical_scaling: bool,
    /// `RecreatePodWhenChangeVCTInCloneSetGate` (default off): a change of the volume claim templates' hash
    /// annotation on the revisions forces a recreate (unless
    /// [`UpdateOptions::ignore_volume_claim_templates_hash_diff`]).
    pub recreate_pod_when_change_vct_in_clone_set_gate: bool,
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self {
            in_place_update_env_from_metadata: true,
            in_place_workload_vertical_scaling: false,
            recreate_pod_when_change_vct_in_clone_set_gate: false,
        }
    }
}

impl FeatureGates {
    /// Upstream's name of [`Self::in_place_update_env_from_metadata`].
    pub const ENV_FROM_METADATA: &'static str = "InPlaceUpdateEnvFromMetadata";
    /// Upstream's name of [`Self::in_place_workload_vertical_scaling`].
    pub const VERTICAL_SCALING: &'static str = "InPlaceWorkloadVerticalScaling";
    /// Upstream's name of [`Self::recreate_pod_when_change_vct_in_clone_set_gate`].
    pub const RECREATE_ON_VCT_CHANGE: &'static str = "RecreatePodWhenChangeVCTInCloneSetGate";
    /// Every gate name this crate knows.
    pub const NAMES: [&'static str; 3] = [
        Self::ENV_FROM_METADATA,
        Self::VERTICAL_SCALING,
        Self::RECREATE_ON_VCT_CHANGE,
    ];

    /// Sets one gate by its upstream name.
    ///
    /// # Errors
    /// [`FeatureGateError::Unknown`] for a name this crate does not know.
    pub fn set(&mut self, name: &str, enabled: bool) -> Result<(), FeatureGateError> {
        self.set_gate(name, enabled)
    }

    /// Upstream's defaults with a `--feature-gates` list applied: `Name=true,Name=false,...` (spaces around
    /// entries are ignored, an empty list changes nothing). Values are read like Go's `strconv.ParseBool`.
    ///
    /// ```
    /// use kruise_inplace::FeatureGates;
    ///
    /// let gates = FeatureGates::parse("InPlaceWorkloadVerticalScaling=true, InPlaceUpdateEnvFromMetadata=false").unwrap();
    /// assert!(gates.in_place_workload_vertical_scaling);
    /// assert!(!gates.in_place_update_env_from_metadata);
    /// assert!(FeatureGates::parse("NoSuchGate=true").is_err());
    /// ```
    ///
    /// # Errors
    /// [`FeatureGateError`] naming the first entry that is malformed or unknown.
    pub fn parse(list: &str) -> Result<Self, FeatureGateError> {
        let mut gates = Self::default();
        gates.apply_feature_gates(list)?;
        Ok(gates)
    }
}

impl FeatureGateSet for FeatureGates {
    const NAMES: &'static [&'static str] = &Self::NAMES;

    fn set_known_gate(&mut self, name: &str, enabled: bool) -> bool {
        let gate = match name {
            Self::ENV_FROM_METADATA => &mut self.in_place_update_env_from_metadata,
            Self::VERTICAL_SCALING => &mut self.in_place_workload_vertical_scaling,
            Self::RECREATE_ON_VCT_CHANGE => {
                &mut self.recreate_pod_when_change_vct_in_clone_set_gate
            }
            _ => return false,
        };
        *gate = enabled;
        true
    }
}

impl fmt::Display for FeatureGates {
    /// The gates as a `--feature-gates` list.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={},{}={},{}={}",
            Self::ENV_FROM_METADATA,
            self.in_place_update_env_from_metadata,
            Self::VERTICAL_SCALING,
            self.in_place_workload_vertical_scaling,
            Self::RECREATE_ON_VCT_CHANGE,
            self.recreate_pod_when_change_vct_in_clone_set_gate
        )
    }
}

/// How a workload writes and recognises the revision label of its pods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RevisionLabels {
    /// `controller-revision-hash` holds the revision exactly (Advanced StatefulSet, Advanced DaemonSet);
    /// a pod is at a revision only when the label equals it.
    #[default]
    Exact,
    /// CloneSet: `controller-revision-hash` holds the full revision name (or only its hash with the
    /// `CloneSetShortHash` gate) and `pod-template-hash` the hash; a pod is at a revision when the label equals
    /// it or their last `-`-separated segments are equal.
    CloneSet {
        /// Upstream gate `CloneSetShortHash` (default off): write only the hash into `controller-revision-hash`.
        short_hash: bool,
    },
}

/// Options of an in-place update, as upstream's `UpdateOptions`. [`Default`] is upstream's default against a
/// cluster that serves the pod `resize` subresource (every Kubernetes version `k8s-openapi` 0.29 covers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateOptions {
    /// Upstream feature gates.
    pub gates: FeatureGates,
    /// Skip the volume-claim-template hash rule (CloneSet sets this for `InPlaceOnly`).
    pub ignore_volume_claim_templates_hash_diff: bool,
    /// `inPlaceUpdateStrategy.gracePeriodSeconds`: seconds between marking the pod not ready and patching its
    /// spec (0 patches at once).
    pub grace_period_seconds: i32,
    /// The revision recorded in the update spec and written to the pod; `None` is the new revision's name
    /// (upstream's `GetRevision`, which Advanced DaemonSet points at the revision's hash label).
    pub revision: Option<String>,
    /// How the revision label is written and compared.
    pub revision_labels: RevisionLabels,
    /// Whether the cluster serves the pod `resize` subresource (Kubernetes 1.32 and later). Resource changes
    /// (vertical scaling) then go to it as a separate patch instead of into the pod update, as upstream does.
    pub resize_subresource: bool,
}

impl Default for UpdateOptions {
    fn default() -> Self {
        Self {
            gates: FeatureGates::default(),
            ignore_volume_claim_templates_hash_diff: false,
            grace_period_seconds: 0,
            revision: None,
            revision_labels: RevisionLabels::default(),
            resize_subresource: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_defaults() {
        let gates = FeatureGates::default();
        assert!(gates.in_place_update_env_from_metadata);
        assert!(!gates.in_place_workload_vertical_scaling);
        assert!(!gates.recreate_pod_when_change_vct_in_clone_set_gate);
        assert_eq!(FeatureGates::parse("").unwrap(), gates);
        assert_eq!(FeatureGates::parse(&gates.to_string()).unwrap(), gates);
    }

    #[test]
    fn parse_errors_name_the_entry() {
        assert_eq!(
            FeatureGates::parse("InPlaceWorkloadVerticalScaling").unwrap_err(),
            FeatureGateError::Invalid {
                entry: "InPlaceWorkloadVerticalScaling".into()
            }
        );
        assert_eq!(
            FeatureGates::parse("InPlaceWorkloadVerticalScaling=yes")
                .unwrap_err()
                .to_string(),
            "invalid feature gate setting \"InPlaceWorkloadVerticalScaling=yes\": expected Name=true or Name=false"
        );
        assert!(
            FeatureGates::parse("CloneSetShortHash=true")
                .unwrap_err()
                .to_string()
                .starts_with("unknown feature gate \"CloneSetShortHash\"")
        );
        let gates = FeatureGates::parse("RecreatePodWhenChangeVCTInCloneSetGate=T").unwrap();
        assert!(gates.recreate_pod_when_change_vct_in_clone_set_gate);
    }
}
