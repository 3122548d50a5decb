//! The switches that change Advanced DaemonSet decisions, passed by the caller (never global state).
//! [`Default`] is upstream's default.

use kruise_inplace::FeatureGates;

/// Upstream switches read by the Advanced DaemonSet planner.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// The in-place update gates (`InPlaceUpdateEnvFromMetadata`, `InPlaceWorkloadVerticalScaling`,
    /// `RecreatePodWhenChangeVCTInCloneSetGate`).
    pub in_place: FeatureGates,
}

impl Options {
    /// Options with these in-place gates.
    #[must_use]
    pub fn with_in_place(mut self, gates: FeatureGates) -> Self {
        self.in_place = gates;
        self
    }
}
