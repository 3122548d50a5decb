//! ContainerRecreateRequest (upstream `apis/apps/v1alpha1/containerrecreaterequest_types.go`).

/// Label on a CRR (immutable): the UID of the pod it acts on.
pub const POD_UID_LABEL: &str = "crr.apps.kruise.io/pod-uid";

/// Label on a CRR (immutable): the node of the pod it acts on.
pub const NODE_NAME_LABEL: &str = "crr.apps.kruise.io/node-name";

/// Label on a CRR: `"true"` until completion, then removed; kruise-daemon watches only active CRRs.
pub const ACTIVE_LABEL: &str = "crr.apps.kruise.io/active";

/// Annotation on a v1alpha1 CRR: JSON list of
/// [`ContainerStatusSnapshot`](crate::annotations::ContainerStatusSnapshot). The v1beta1 form is
/// `status.containerStatusSnapshot`.
pub const SYNC_CONTAINER_STATUSES_ANNOTATION: &str = "crr.apps.kruise.io/sync-container-statuses";

/// Finalizer on a CRR while its pod is forced not-ready; on a v1alpha1 CRR the same key is also an annotation
/// holding the RFC 3339 time the grace started (v1beta1: the `PreRecreateGrace` condition).
pub const UNREADY_ACQUIRED_KEY: &str = "crr.apps.kruise.io/unready-acquired";

/// CRR status condition type (v1beta1) and its reason: the pod was made not-ready before recreating.
pub const PRE_RECREATE_GRACE_CONDITION: &str = "PreRecreateGrace";

/// Label copied from a virtual-kubelet node to the CRR: `type: virtual-kubelet`.
pub const VIRTUAL_KUBELET_TYPE_LABEL: &str = "type";

/// The value of [`VIRTUAL_KUBELET_TYPE_LABEL`] on virtual-kubelet nodes.
pub const VIRTUAL_KUBELET_TYPE: &str = "virtual-kubelet";
