//! ImagePullJob, ImageListPullJob and NodeImage (upstream `pkg/controller/imagepulljob`, kruise-daemon).

/// Finalizer protecting an ImagePullJob from garbage collection.
pub const DELETION_PROTECTION_FINALIZER: &str = "apps.kruise.io/deletion-protection";

/// Annotation on a synced pull Secret: the sync mode.
pub const SECRET_MODE_ANNOTATION: &str = "imagepulljobs.kruise.io/mode";

/// Annotation on a synced pull Secret: the jobs referencing it.
pub const SECRET_REFERENCES_ANNOTATION: &str = "imagepulljobs.kruise.io/references";

/// Annotation on a synced pull Secret: `<namespace>/<name>` of the source Secret.
pub const SECRET_SOURCE_KEY_ANNOTATION: &str = "imagepulljobs.kruise.io/source-key";

/// Label on a synced pull Secret: the UID of the source Secret.
pub const SECRET_SOURCE_UID_LABEL: &str = "imagepulljobs.kruise.io/source-uid";

/// The `mode` of a NodeImage pull secret reference created by an ImagePullJob.
pub const SECRET_MODE_BATCH: &str = "batch";

/// CRI sandbox annotation: the image pull sandbox was created to pull an image.
pub const PULLING_IMAGE_BY_ANNOTATION: &str = "apps.kruise.io/pulling-image-by";

/// The namespace kruise-manager copies ImagePullJob pull secrets into, and the only one whose Secrets
/// kruise-daemon may read (upstream's `kruise-daemon-config`).
pub const DAEMON_CONFIG_NAMESPACE: &str = "kruise-daemon-config";
