//! The switches that change Advanced StatefulSet decisions: upstream's feature gates, as a plain struct the
//! caller passes (never global state). [`Default`] is upstream's default.

use std::fmt;

pub use kruise_api::feature_gate::FeatureGateError;
use kruise_api::feature_gate::FeatureGateSet;
use kruise_inplace::FeatureGates;

/// Upstream switches that change what the Advanced StatefulSet planner decides.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Gate `StatefulSetStartOrdinal` (default off): honour `spec.ordinals.start`; off, ordinals start at 0.
    pub start_ordinal: bool,
    /// Gate `PodIndexLabel` (default on): new pods get `apps.kubernetes.io/pod-index`.
    pub pod_index_label: bool,
    /// Gate `StatefulSetAutoDeletePVC` (default on): keep the claims' owner references in line with
    /// `persistentVolumeClaimRetentionPolicy`, and do not create a pod whose claim still belongs to an
    /// earlier pod of the same name.
    pub auto_delete_pvc: bool,
    /// Gate `PreparingUpdateAsUpdate` (default off): `PreparingUpdate` pods count as updated where upstream
    /// uses `IsPodUpdate` (the unordered update order and the revision of new pods under `unorderedUpdate`).
    pub preparing_update_as_update: bool,
    /// Gate `StatefulSetAutoResizePVCGate` (default off): with `volumeClaimUpdateStrategy.type:
    /// OnPodRollingUpdate`, a pod's claims are expanded to their templates' storage, and must have that
    /// capacity, before the rolling update updates the pod.
    pub auto_resize_pvc: bool,
    /// The in-place update gates.
    pub in_place: FeatureGates,
    /// Lifecycle switches.
    pub lifecycle: kruise_lifecycle::Options,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            start_ordinal: false,
            pod_index_label: true,
            auto_delete_pvc: true,
            preparing_update_as_update: false,
            auto_resize_pvc: false,
            in_place: FeatureGates::default(),
            lifecycle: kruise_lifecycle::Options::default(),
        }
    }
}

impl Options {
    /// Upstream's name of [`Options::start_ordinal`].
    pub const START_ORDINAL: &'static str = "StatefulSetStartOrdinal";
    /// Upstream's name of [`Options::pod_index_label`].
    pub const POD_INDEX_LABEL: &'static str = "PodIndexLabel";
    /// Upstream's name of [`Options::auto_delete_pvc`].
    pub const AUTO_DELETE_PVC: &'static str = "StatefulSetAutoDeletePVC";
    /// Upstream's name of [`Options::preparing_update_as_update`].
    pub const PREPARING_UPDATE_AS_UPDATE: &'static str = "PreparingUpdateAsUpdate";
    /// Upstream's name of [`Options::auto_resize_pvc`].
    pub const AUTO_RESIZE_PVC: &'static str = "StatefulSetAutoResizePVCGate";
    /// Every gate name [`Options::set_gate`] knows.
    pub const GATE_NAMES: [&'static str; 8] = [
        Self::START_ORDINAL,
        Self::POD_INDEX_LABEL,
        Self::AUTO_DELETE_PVC,
        Self::PREPARING_UPDATE_AS_UPDATE,
        Self::AUTO_RESIZE_PVC,
        FeatureGates::ENV_FROM_METADATA,
        FeatureGates::VERTICAL_SCALING,
        FeatureGates::RECREATE_ON_VCT_CHANGE,
    ];

    /// Sets one gate by its upstream name.
    ///
    /// # Errors
    /// [`FeatureGateError::Unknown`] for a name that does not change these decisions.
    pub fn set_gate(&mut self, name: &str, enabled: bool) -> Result<(), FeatureGateError> {
        <Self as FeatureGateSet>::set_gate(self, name, enabled)
    }

    /// Applies a `--feature-gates` list (`Name=true,Name=false,...`, values as Go's `strconv.ParseBool`).
    ///
    /// ```
    /// use kruise_schedule::statefulset::Options;
    ///
    /// let options = Options::default().with_feature_gates("StatefulSetStartOrdinal=true").unwrap();
    /// assert!(options.start_ordinal);
    /// assert!(Options::default().with_feature_gates("Nope=true").is_err());
    /// ```
    ///
    /// # Errors
    /// [`FeatureGateError`] naming the first entry that is malformed or unknown.
    pub fn with_feature_gates(mut self, list: &str) -> Result<Self, FeatureGateError> {
        self.apply_feature_gates(list)?;
        Ok(self)
    }
}

impl FeatureGateSet for Options {
    const NAMES: &'static [&'static str] = &Self::GATE_NAMES;

    fn set_known_gate(&mut self, name: &str, enabled: bool) -> bool {
        match name {
            Self::START_ORDINAL => self.start_ordinal = enabled,
            Self::POD_INDEX_LABEL => self.pod_index_label = enabled,
            Self::AUTO_DELETE_PVC => self.auto_delete_pvc = enabled,
            Self::PREPARING_UPDATE_AS_UPDATE => self.preparing_update_as_update = enabled,
            Self::AUTO_RESIZE_PVC => self.auto_resize_pvc = enabled,
            _ => return self.in_place.set_known_gate(name, enabled),
        }
        true
    }
}

impl fmt::Display for Options {
    /// The gates as a `--feature-gates` list.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={},{}={},{}={},{}={},{}={},{}",
            Self::START_ORDINAL,
            self.start_ordinal,
            Self::POD_INDEX_LABEL,
            self.pod_index_label,
            Self::AUTO_DELETE_PVC,
            self.auto_delete_pvc,
            Self::PREPARING_UPDATE_AS_UPDATE,
            self.preparing_update_as_update,
            Self::AUTO_RESIZE_PVC,
            self.auto_resize_pvc,
            self.in_place
        )
    }
}
