//! `SidecarSet` v1beta1 (upstream `apis/apps/v1beta1/sidecarset_types.go`).
//!
//! The types below [`SidecarSetSpec`] are identical in both versions and re-exported by
//! [`v1alpha1`](crate::apps::v1alpha1).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, LocalObjectReference, ObjectFieldSelector, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;
use crate::scatter::UpdateScatterStrategy;
use crate::update_priority::UpdatePriorityStrategy;

/// Sidecar containers (and init containers, volumes, pull secrets and pod metadata) injected into every pod
/// the selectors match, and updated in place when the `SidecarSet` changes.
// kube's `printcolumn(...)` entries repeat `type_ = ...`, which clippy takes for duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "SidecarSet",
    status = "SidecarSetStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "SidecarSet injects sidecar containers into the pods it selects and keeps them up to date.",
    printcolumn(
        name = "MATCHED",
        type_ = "integer",
        json_path = ".status.matchedPods",
        description = "Pods the SidecarSet selects."
    ),
    printcolumn(
        name = "UPDATED",
        type_ = "integer",
        json_path = ".status.updatedPods",
        description = "Selected pods running the latest sidecars."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.readyPods",
        description = "Selected pods that are ready."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    /// Which pods get the sidecars. Must be set and non-empty: an empty selector matches no pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Which namespaces' pods get the sidecars, by namespace labels (unset: every namespace). A v1alpha1
    /// `namespace: X` becomes `matchLabels: {kubernetes.io/metadata.name: X}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Init containers injected when a pod is created (never into existing pods), in name order. Native
    /// sidecars (`restartPolicy: Always`) also count for the `SidecarSet` hash.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub init_containers: Vec<SidecarContainer>,
    /// Sidecar containers injected into the pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub containers: Vec<SidecarContainer>,
    /// Volumes the sidecars mount; added to the pod unless it has a volume of the same name. Schemaless in the
    /// CRD, as upstream.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object_list")]
    pub volumes: Vec<Volume>,
    /// How pods that already run the sidecars are updated.
    #[serde(default)]
    pub update_strategy: SidecarSetUpdateStrategy,
    /// How (and which revision of) the sidecars are injected into new pods.
    #[serde(default)]
    pub injection_strategy: SidecarSetInjectionStrategy,
    /// Image pull secrets added to the pod for the sidecar images.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// How many old `ControllerRevisions` to keep (defaults to 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Pod annotations written on injection (and, for non-`Retain` policies, on in-place updates).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub patch_pod_metadata: Vec<SidecarSetPatchPodMetadata>,
    /// A user-chosen version, copied to the `SidecarSet`'s `ControllerRevisions` as the label
    /// `apps.kruise.io/sidecarset-custom-version` (v1alpha1 keeps it in that label on the `SidecarSet`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub custom_version: String,
}

/// A sidecar container: every field of a Kubernetes container plus how to inject and upgrade it.
///
/// Serialises like Go's struct: the container's fields inline, then the Kruise fields in upstream's order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainer {
    /// The container itself. In the CRD schema only its `name` is typed and the other container fields are
    /// kept as written (`x-kubernetes-preserve-unknown-fields`), as upstream does: the schema stays small enough
    /// for `kubectl apply`, and the API server never prunes container fields newer than the schema.
    #[serde(flatten)]
    #[schemars(schema_with = "crate::schema::named_preserve_unknown_object")]
    pub container: Container,
    /// Where the container goes among the pod's containers: `BeforeAppContainer` (the default for
    /// containers) or `AfterAppContainer` (the default for init containers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_inject_policy: Option<PodInjectPolicy>,
    /// How the container is upgraded in place. Always written, like Go's non-pointer struct.
    #[serde(default)]
    pub upgrade_strategy: SidecarContainerUpgradeStrategy,
    /// Whether the container also mounts every volume mount of the pod's other (non-injected) containers.
    /// Always written, like Go's non-pointer struct.
    #[serde(default)]
    pub share_volume_policy: ShareVolumePolicy,
    /// Whether the container also gets every volume device of the pod's other (non-injected) containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_volume_device_policy: Option<ShareVolumePolicy>,
    /// Environment variables copied from other containers of the pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub transfer_env: Vec<TransferEnvVar>,
    /// Resources computed at injection from the resources of the pod's containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_policy: Option<ResourcesPolicy>,
}

crate::open_enum! {
    /// Where a sidecar container is placed among the pod's containers.
    pub enum PodInjectPolicy {
        /// Before the pod's own containers (the default for containers).
        BeforeAppContainer = "BeforeAppContainer",
        /// After the pod's own containers (the default for init containers).
        AfterAppContainer = "AfterAppContainer",
    }
}

/// How a sidecar container is upgraded in place.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainerUpgradeStrategy {
    /// `ColdUpgrade` (the default: replace the image) or `HotUpgrade` (two containers that take turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_type: Option<SidecarContainerUpgradeType>,
    /// For `HotUpgrade`: the image the idle container of the pair runs (it must accept the same command,
    /// args and probes but do nothing).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hot_upgrade_empty_image: String,
}

crate::open_enum! {
    /// How a sidecar container is upgraded.
    pub enum SidecarContainerUpgradeType {
        /// Replace the image of the running container (the default).
        ColdUpgrade = "ColdUpgrade",
        /// Run the sidecar as two containers, `<name>-1` and `<name>-2`, and switch between them.
        HotUpgrade = "HotUpgrade",
    }
}

/// Whether a sidecar shares the volumes (or devices) of the pod's other containers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShareVolumePolicy {
    /// `enabled` or `disabled` (the default).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<ShareVolumePolicyType>,
}

crate::open_enum! {
    /// Whether volumes are shared (lower-case values, as upstream).
    pub enum ShareVolumePolicyType {
        /// Share them.
        Enabled = "enabled",
        /// Do not share them (the default).
        Disabled = "disabled",
    }
}

/// Environment variables copied from another container of the pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferEnvVar {
    /// The container to copy from.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub source_container_name: String,
    /// Where to read the container name from instead: a pod label or annotation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name_from: Option<SourceContainerNameSource>,
    /// One variable to copy.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub env_name: String,
    /// More variables to copy.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub env_names: Vec<String>,
}

/// Where the source container's name of a [`TransferEnvVar`] is read from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceContainerNameSource {
    /// A pod field: `metadata.labels['<key>']` or `metadata.annotations['<key>']`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<ObjectFieldSelector>,
}

/// Resources of a sidecar computed, when it is injected, from the resources of the pod's containers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesPolicy {
    /// How the matched containers' resources are combined: `sum` or `max`.
    pub target_containers_mode: TargetContainersMode,
    /// Which containers count, by a regular expression on their names (CRD default `.*`).
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(extend("default" = ".*"))]
    pub target_containers_name_regex: String,
    /// The expressions that compute the sidecar's limits and requests. Always written.
    #[serde(default)]
    pub resources_expr: ResourcesExpr,
}

crate::open_enum! {
    #[schema_enum]
    /// How the resources of the matched containers are combined.
    pub enum TargetContainersMode {
        /// Add them up.
        Sum = "sum",
        /// Take the largest.
        Max = "max",
    }
}

/// Go's zero value: the empty string (the field is required, so the API server rejects it).
impl Default for TargetContainersMode {
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

/// The expressions that compute a sidecar's resources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesExpr {
    /// Expressions for the limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceExpressions>,
    /// Expressions for the requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ResourceExpressions>,
}

/// Expressions over `cpu` and `memory` (the combined values of the matched containers), such as
/// `max(cpu*50%, 50m)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceExpressions {
    /// The CPU expression.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cpu: String,
    /// The memory expression.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub memory: String,
}

/// How pods that run a `SidecarSet`'s sidecars are updated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpdateStrategy {
    /// `RollingUpdate` (the default) or `NotUpdate` (only new pods get new sidecars).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<SidecarSetUpdateStrategyType>,
    /// Stop updating pods (injection into new pods goes on).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub paused: bool,
    /// Update only the pods this selector matches (it cannot be combined with a non-zero partition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// How many (or what percentage of) matched pods to keep at old sidecars (defaults to 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// How many matched pods may be unavailable during the update (defaults to 1; percentages round up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Which pods are updated first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    /// Label pairs whose pods should be spread across update batches (`value: "*"` means every value).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scatter_strategy: UpdateScatterStrategy,
}

crate::open_enum! {
    /// Whether a `SidecarSet` updates the pods that already run its sidecars.
    pub enum SidecarSetUpdateStrategyType {
        /// Update them in rolling batches (the default).
        RollingUpdate = "RollingUpdate",
        /// Leave them alone; only new pods get the new sidecars.
        NotUpdate = "NotUpdate",
    }
}

/// How a `SidecarSet` is injected into new pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectionStrategy {
    /// Stop injecting into new pods (pods that have the sidecars keep being updated).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub paused: bool,
    /// Inject a specific earlier revision instead of the latest one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<SidecarSetInjectRevision>,
}

/// The earlier revision of a `SidecarSet` to inject into new pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectRevision {
    /// The newest `ControllerRevision` with this custom version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
    /// The `ControllerRevision` with this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_name: Option<String>,
    /// When that revision is used: `Always` (the default) or `Partial`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        schema_with = "value_schema::<SidecarSetInjectRevisionPolicy>",
        extend("default" = "Always")
    )]
    pub policy: Option<SidecarSetInjectRevisionPolicy>,
}

crate::open_enum! {
    #[schema_enum]
    /// When a `SidecarSet` injects the revision named in its injection strategy.
    pub enum SidecarSetInjectRevisionPolicy {
        /// Always (the default).
        Always = "Always",
        /// Only for pods outside `updateStrategy.selector`, and otherwise with the probability of a
        /// percentage `updateStrategy.partition`; the latest revision the rest of the time.
        Partial = "Partial",
    }
}

/// Pod annotations a `SidecarSet` writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchPodMetadata {
    /// The annotations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub annotations: BTreeMap<String, String>,
    /// How they are written: `Retain` (the default), `Overwrite` or `MergePatchJson`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_policy: Option<SidecarSetPatchPolicy>,
}

crate::open_enum! {
    /// How a `SidecarSet` writes its pod annotations.
    pub enum SidecarSetPatchPolicy {
        /// Only add annotations the pod does not have, and only on injection (the default).
        Retain = "Retain",
        /// Set them, on injection and on in-place updates.
        Overwrite = "Overwrite",
        /// JSON-merge-patch a non-empty existing value with the given one; set it otherwise.
        MergePatchJson = "MergePatchJson",
    }
}

/// What the `SidecarSet` controller observed (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// Active pods the `SidecarSet` selects that carry all of its sidecars.
    #[serde(default)]
    pub matched_pods: i32,
    /// Matched pods at the `SidecarSet`'s current hash.
    #[serde(default)]
    pub updated_pods: i32,
    /// Matched pods that are ready with consistent sidecars.
    #[serde(default)]
    pub ready_pods: i32,
    /// Matched pods that are both updated and ready.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_ready_pods: i32,
    /// The name of the newest `ControllerRevision`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub latest_revision: String,
    /// Hash collisions met while naming `ControllerRevisions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
}

/// The schema of `T` itself for an `Option<T>` field that is never written as `null`: a closed enum stays a
/// plain `enum` of strings (no `null` member, which a structural schema does not allow).
fn value_schema<T: JsonSchema>(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    T::json_schema(generator)
}
