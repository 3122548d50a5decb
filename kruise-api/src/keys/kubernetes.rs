//! Kubernetes' own keys that OpenKruise reads or writes with specific meanings.

/// Label on pods and ControllerRevisions: the revision. CloneSet writes the full revision name
/// `<cloneset>-<hash>` (or only the hash with the `CloneSetShortHash` gate), Advanced StatefulSet the
/// revision name, Advanced DaemonSet the hash alone.
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller-revision-hash";

/// Label on pods: the short hash (last `-` segment of the revision name); CloneSet writes it on every pod.
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";

/// Label on Advanced DaemonSet pods: the template generation (decimal), a legacy alternative to the hash.
pub const POD_TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// Label on Advanced StatefulSet pods: the pod's own name.
pub const STATEFULSET_POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";

/// Label on Advanced StatefulSet pods: the ordinal (with the `PodIndexLabel` gate, on by default).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// Annotation on pods: the deletion cost, an int32 string. `+N` and leading zeros are invalid and count as 0.
pub const POD_DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Label on ControllerRevisions: the revision hash, set when the revision is created.
pub const CONTROLLER_REVISION_HASH_OF_REVISION_LABEL: &str = "controller.kubernetes.io/hash";

/// Label on namespaces (set by Kubernetes 1.21+): the namespace's own name. The SidecarSet v1beta1
/// `namespaceSelector` uses it to express the v1alpha1 `namespace` field.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";
