//! The switches that change CloneSet decisions: upstream's feature gates and controller flags, as a plain
//! struct the caller passes (never global state). [`Default`] is upstream's default.

use std::fmt;

pub use kruise_api::feature_gate::FeatureGateError;
use kruise_api::feature_gate::FeatureGateSet;
use kruise_inplace::FeatureGates;

/// The default of [`Options::max_creations_per_plan`]: the first ten slow-start batches
/// (1 + 2 + 4 + … + 512 pods).
pub const DEFAULT_MAX_CREATIONS_PER_PLAN: usize = 1023;

/// Upstream switches that change what the CloneSet planner decides, and the planner's own bound on a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Gate `CloneSetPartitionRollback` (default off): when the partition grows while a rollout is under way,
    /// roll pods back to the current revision.
    pub partition_rollback: bool,
    /// Gate `PreparingUpdateAsUpdate` (default off): the scale step counts `PreparingUpdate` pods as already
    /// at the update revision.
    pub preparing_update_as_update: bool,
    /// Gate `CloneSetShortHash` (default off): new pods get only the hash in `controller-revision-hash`.
    pub short_hash: bool,
    /// Controller flag `--cloneset-scaling-exclude-preparing-delete` (default off): leave `PreparingDelete`
    /// pods out when counting pods for scaling, for every CloneSet.
    pub exclude_preparing_delete: bool,
    /// The in-place update gates (`InPlaceUpdateEnvFromMetadata`, `InPlaceWorkloadVerticalScaling`,
    /// `RecreatePodWhenChangeVCTInCloneSetGate`).
    pub in_place: FeatureGates,
    /// Lifecycle switches.
    pub lifecycle: kruise_lifecycle::Options,
    /// The most pods one plan creates (kruise-rs; upstream creates every missing pod in one reconcile,
    /// which for `replicas: 2147483647` is more than any process can hold). The plans that follow create
    /// the rest, each from the pods that exist by then. A value of 0 is read as 1. Default
    /// [`DEFAULT_MAX_CREATIONS_PER_PLAN`].
    pub max_creations_per_plan: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            partition_rollback: false,
            preparing_update_as_update: false,
            short_hash: false,
            exclude_preparing_delete: false,
            in_place: FeatureGates::default(),
            lifecycle: kruise_lifecycle::Options::default(),
            max_creations_per_plan: DEFAULT_MAX_CREATIONS_PER_PLAN,
        }
    }
}

impl Options {
    /// Upstream's name of [`Options::partition_rollback`].
    pub const PARTITION_ROLLBACK: &'static str = "CloneSetPartitionRollback";
    /// Upstream's name of [`Options::preparing_update_as_update`].
    pub const PREPARING_UPDATE_AS_UPDATE: &'static str = "PreparingUpdateAsUpdate";
    /// Upstream's name of [`Options::short_hash`].
    pub const SHORT_HASH: &'static str = "CloneSetShortHash";
    /// Every gate name [`Options::set_gate`] knows.
    pub const GATE_NAMES: [&'static str; 6] = [
        Self::PARTITION_ROLLBACK,
        Self::PREPARING_UPDATE_AS_UPDATE,
        Self::SHORT_HASH,
        FeatureGates::ENV_FROM_METADATA,
        FeatureGates::VERTICAL_SCALING,
        FeatureGates::RECREATE_ON_VCT_CHANGE,
    ];

    /// Sets one gate by its upstream name.
    ///
    /// # Errors
    /// [`FeatureGateError::Unknown`] for a name that does not change CloneSet decisions.
    pub fn set_gate(&mut self, name: &str, enabled: bool) -> Result<(), FeatureGateError> {
        <Self as FeatureGateSet>::set_gate(self, name, enabled)
    }

    /// Applies a `--feature-gates` list (`Name=true,Name=false,...`, values as Go's `strconv.ParseBool`).
    ///
    /// ```
    /// use kruise_schedule::cloneset::Options;
    ///
    /// let options = Options::default().with_feature_gates("CloneSetPartitionRollback=true").unwrap();
    /// assert!(options.partition_rollback);
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
            Self::PARTITION_ROLLBACK => self.partition_rollback = enabled,
            Self::PREPARING_UPDATE_AS_UPDATE => self.preparing_update_as_update = enabled,
            Self::SHORT_HASH => self.short_hash = enabled,
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
            "{}={},{}={},{}={},{}",
            Self::PARTITION_ROLLBACK,
            self.partition_rollback,
            Self::PREPARING_UPDATE_AS_UPDATE,
            self.preparing_update_as_update,
            Self::SHORT_HASH,
            self.short_hash,
            self.in_place
        )
    }
}
