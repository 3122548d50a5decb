//! The upstream switches that change SidecarSet decisions, as a plain struct the caller passes (never global
//! state). [`Default`] is upstream's default.

use std::fmt;

pub use kruise_api::feature_gate::FeatureGateError;
use kruise_api::feature_gate::FeatureGateSet;
/// Upstream feature gates that change injection and validation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Gate `EnableSortSidecarContainerByName` (default off): sidecar containers are merged into the pod in
    /// name order instead of SidecarSet order.
    pub sort_sidecar_containers_by_name: bool,
    /// Gate `SidecarSetPatchPodMetadataDefaultsAllowed` (default off): without a `patchPodMetadata` whitelist
    /// (or with no rule for the SidecarSet) every annotation key is allowed.
    pub patch_pod_metadata_defaults_allowed: bool,
}

impl Options {
    /// Upstream's name of [`Options::sort_sidecar_containers_by_name`].
    pub const SORT_BY_NAME: &'static str = "EnableSortSidecarContainerByName";
    /// Upstream's name of [`Options::patch_pod_metadata_defaults_allowed`].
    pub const PATCH_METADATA_DEFAULTS_ALLOWED: &'static str =
        "SidecarSetPatchPodMetadataDefaultsAllowed";
    /// Every gate name [`Options::set_gate`] knows.
    pub const GATE_NAMES: [&'static str; 2] =
        [Self::SORT_BY_NAME, Self::PATCH_METADATA_DEFAULTS_ALLOWED];

    /// Sets one gate by its upstream name.
    ///
    /// # Errors
    /// [`FeatureGateError::Unknown`] for a name that does not change SidecarSet decisions.
    pub fn set_gate(&mut self, name: &str, enabled: bool) -> Result<(), FeatureGateError> {
        <Self as FeatureGateSet>::set_gate(self, name, enabled)
    }

    /// Applies a `--feature-gates` list (`Name=true,Name=false,...`, values as Go's `strconv.ParseBool`).
    ///
    /// ```
    /// use kruise_sidecar::Options;
    ///
    /// let options = Options::default().with_feature_gates("EnableSortSidecarContainerByName=true").unwrap();
    /// assert!(options.sort_sidecar_containers_by_name);
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
            Self::SORT_BY_NAME => self.sort_sidecar_containers_by_name = enabled,
            Self::PATCH_METADATA_DEFAULTS_ALLOWED => {
                self.patch_pod_metadata_defaults_allowed = enabled;
            }
            _ => return false,
        }
        true
    }
}

impl fmt::Display for Options {
    /// The gates as a `--feature-gates` list.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={},{}={}",
            Self::SORT_BY_NAME,
            self.sort_sidecar_containers_by_name,
            Self::PATCH_METADATA_DEFAULTS_ALLOWED,
            self.patch_pod_metadata_defaults_allowed
        )
    }
}
