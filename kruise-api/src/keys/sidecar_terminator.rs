//! Job sidecar terminator (upstream `well_known_labels.go`, `pkg/controller/sidecarterminator`).

/// Container env var `"true"`: stop this sidecar (through a ContainerRecreateRequest) once the Job's main
/// containers have finished.
pub const TERMINATE_SIDECAR_WHEN_JOB_EXIT_ENV: &str = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT";

/// Container env var holding an image name: stop this sidecar by swapping it in place to that image.
pub const TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE_ENV: &str =
    "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE";

/// Container env var `"true"`: the sidecar's exit code does not decide the pod's result.
pub const TERMINATE_SIDECAR_IGNORE_EXIT_CODE_ENV: &str =
    "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE";

/// Container env var on EphemeralJob containers: the job id.
pub const EPHEMERAL_JOB_ID_ENV: &str = "KRUISE_EJOB_ID";

/// Pod condition type the sidecar terminator sets when it ends a Job's pod (upstream's `SidecarTerminated`,
/// `pkg/controller/sidecarterminator`); the ContainerRecreateRequest webhook accepts requests on such a pod
/// although it is no longer active.
pub const SIDECAR_TERMINATED_CONDITION: &str = "SidecarTerminated";
