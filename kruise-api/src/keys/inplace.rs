//! In-place update (upstream `apis/apps/pub/inplace_update.go`, `pkg/util/inplaceupdate`).

/// Readiness gate and pod condition type: `False` (reason [`START_INPLACE_UPDATE_REASON`]) while a pod is
/// being updated in place, `True` once the update completed.
pub const INPLACE_UPDATE_READY: &str = "InPlaceUpdateReady";

/// The reason of the `InPlaceUpdateReady=False` condition written before an in-place update.
pub const START_INPLACE_UPDATE_REASON: &str = "StartInPlaceUpdate";

/// Annotation: JSON [`InPlaceUpdateState`](crate::inplace::InPlaceUpdateState), written on every in-place
/// update and read to decide completion.
pub const STATE_ANNOTATION: &str = "apps.kruise.io/inplace-update-state";

/// Annotation: the legacy key of [`STATE_ANNOTATION`]; still read, and deleted whenever the state is written.
pub const LEGACY_STATE_ANNOTATION: &str = "inplace-update-state";

/// Annotation: the JSON update spec stored while waiting for `gracePeriodSeconds`; present only during the
/// grace period.
pub const GRACE_ANNOTATION: &str = "apps.kruise.io/inplace-update-grace";

/// Annotation: the legacy key of [`GRACE_ANNOTATION`]; still read and removed.
pub const LEGACY_GRACE_ANNOTATION: &str = "inplace-update-grace";

/// Annotation: JSON [`RuntimeContainerMetaSet`](crate::inplace::RuntimeContainerMetaSet) written by
/// kruise-daemon; used by the in-place completion checks.
pub const RUNTIME_CONTAINERS_META_ANNOTATION: &str = "apps.kruise.io/runtime-containers-meta";

/// Annotation on a ControllerRevision: the hash of the workload's volume claim templates (used with the
/// `RecreatePodWhenChangeVCTInCloneSetGate` feature gate).
pub const VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION: &str =
    "kruise.io/cloneset-volumeclaimtemplate-hash";

/// Label on a ControllerRevision: an image pre-download job was created for it (upstream's spelling, sic).
pub const IMAGE_PRE_DOWNLOAD_CREATED_LABEL: &str = "apps.kruise.io/pre-predownload-created";

/// Label on a ControllerRevision: image pre-download was skipped for it.
pub const IMAGE_PRE_DOWNLOAD_IGNORED_LABEL: &str = "apps.kruise.io/image-predownload-ignored";

/// Annotation on a v1alpha1 workload: image pre-download parallelism (IntOrString as a string). The v1beta1
/// form is `inPlaceUpdateStrategy.imagePreDownloadParallelism`.
pub const IMAGE_PRE_DOWNLOAD_PARALLELISM_ANNOTATION: &str =
    "apps.kruise.io/image-predownload-parallelism";

/// Annotation on a v1alpha1 workload: image pre-download timeout in seconds (integer string). The v1beta1
/// form is `inPlaceUpdateStrategy.imagePreDownloadTimeoutSeconds`.
pub const IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_ANNOTATION: &str =
    "apps.kruise.io/image-predownload-timeout-seconds";

/// Annotation on a v1alpha1 workload: the number of updated ready pods required before image pre-download
/// starts (integer string). The v1beta1 form is `inPlaceUpdateStrategy.imagePreDownloadMinUpdatedReadyPods`.
pub const IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION: &str =
    "apps.kruise.io/image-predownload-min-updated-ready-pods";
