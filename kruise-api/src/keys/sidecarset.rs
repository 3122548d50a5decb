//! SidecarSet (upstream `pkg/control/sidecarcontrol/util.go`, `util_hotupgrade.go`).

/// Annotation on a SidecarSet: its hash (64 characters from the safe-encoding alphabet). On a **pod** the same
/// key holds a JSON map SidecarSet name → [`SidecarSetHashEntry`](crate::annotations::SidecarSetHashEntry).
pub const HASH_ANNOTATION: &str = "kruise.io/sidecarset-hash";

/// Annotation on a SidecarSet: its hash with every image blanked. On a pod: the same map as
/// [`HASH_ANNOTATION`] with the without-image hashes.
pub const HASH_WITHOUT_IMAGE_ANNOTATION: &str = "kruise.io/sidecarset-hash-without-image";

/// Annotation on a pod: the comma-joined, sorted, de-duplicated names of the SidecarSets injected into it
/// (see [`InjectedSidecarSets`](crate::annotations::InjectedSidecarSets)).
pub const INJECTED_LIST_ANNOTATION: &str = "kruise.io/sidecarset-injected-list";

/// Annotation on a pod: JSON map SidecarSet name → [`InPlaceUpdateState`](crate::inplace::InPlaceUpdateState)
/// (only `revision`, `updateTimestamp` and `lastContainerStatuses` are used).
pub const INPLACE_UPDATE_STATE_ANNOTATION: &str = "kruise.io/sidecarset-inplace-update-state";

/// Annotation on a pod: JSON map sidecar container name → the hot-upgrade container that currently works
/// (see [`WorkingHotUpgradeContainers`](crate::annotations::WorkingHotUpgradeContainers)).
pub const WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION: &str =
    "kruise.io/sidecarset-working-hotupgrade-container";

/// Annotation prefix on a pod: `version.sidecarset.kruise.io/<container>` holds a hot-upgrade container's
/// version (`"1"` at injection for the working one, `"0"` for the empty one, later the SidecarSet's
/// `metadata.resourceVersion`).
pub const VERSION_ANNOTATION_PREFIX: &str = "version.sidecarset.kruise.io/";

/// Annotation prefix on a pod: `versionalt.sidecarset.kruise.io/<container>` holds the other hot-upgrade
/// container's version.
pub const VERSION_ALT_ANNOTATION_PREFIX: &str = "versionalt.sidecarset.kruise.io/";

/// Container env var: a `fieldRef` to the container's `version.sidecarset.kruise.io/<container>` annotation.
pub const VERSION_ENV: &str = "SIDECARSET_VERSION";

/// Container env var: a `fieldRef` to the container's `versionalt.sidecarset.kruise.io/<container>` annotation.
pub const VERSION_ALT_ENV: &str = "SIDECARSET_VERSION_ALT";

/// Container env var `"true"` on every injected sidecar and init container; used to leave sidecars out when
/// sharing volumes.
pub const IS_INJECTED_ENV: &str = "IS_INJECTED";

/// Pod condition type: message = JSON object SidecarSet name → bool; `True` with reason
/// [`ALL_UPGRADABLE_REASON`] only when all are true, else `False` with reason [`UPDATE_IMMUTABLE_FIELD_REASON`].
pub const UPGRADABLE_CONDITION: &str = "SidecarSetUpgradable";

/// Reason of a `True` [`UPGRADABLE_CONDITION`].
pub const ALL_UPGRADABLE_REASON: &str = "AllSidecarsetUpgradable";

/// Reason of a `False` [`UPGRADABLE_CONDITION`].
pub const UPDATE_IMMUTABLE_FIELD_REASON: &str = "UpdateImmutableField";

/// Label on a ControllerRevision: the SidecarSet it belongs to. SidecarSet revisions live in the
/// kruise-manager namespace.
pub const NAME_LABEL: &str = "kruise.io/sidecarset-name";

/// Label on a v1alpha1 SidecarSet and on its ControllerRevisions: a user-chosen version string. The v1beta1
/// form of the SidecarSet label is `spec.customVersion`.
pub const CUSTOM_VERSION_LABEL: &str = "apps.kruise.io/sidecarset-custom-version";

/// Annotation on a SidecarSet: `"true"` marks a canary SidecarSet.
pub const CANARY_ANNOTATION: &str = "apps.kruise.io/sidecarset-canary";

/// Annotation on a canary SidecarSet: the base SidecarSet it suppresses on injection.
pub const BASE_ANNOTATION: &str = "apps.kruise.io/sidecarset-base";

/// The ConfigMap (in the kruise-manager namespace) holding Kruise's configuration.
pub const CONFIGURATION_CONFIG_MAP: &str = "kruise-configuration";

/// Key in [`CONFIGURATION_CONFIG_MAP`]: the `patchPodMetadata` whitelist, JSON
/// `{"rules":[{"selector":LabelSelector?,"allowedAnnotationKeyExprs":[regex...]}]}`.
pub const PATCH_POD_METADATA_WHITELIST_KEY: &str = "SidecarSet_PatchPodMetadata_WhiteList";
