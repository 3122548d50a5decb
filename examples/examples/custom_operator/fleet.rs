//! The custom resource of this operator: a `PodFleet` (group `demo.kruise-rs.io`) asks for `replicas` pods
//! running `image`, rolled out like a CloneSet. Its status is what the CloneSet planner computes for it.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Api, Client, CustomResource, CustomResourceExt as _, ResourceExt as _};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The field manager of everything this operator writes.
pub const FIELD_MANAGER: &str = "custom-operator-example";

/// How long the API server may take to serve a newly installed CRD.
const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(30);

/// The desired state of a fleet of identical pods.
// `printcolumn(type_ = "integer", ...)` repeats an attribute on purpose: one per column.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "demo.kruise-rs.io",
    version = "v1",
    kind = "PodFleet",
    namespaced,
    status = "PodFleetStatus",
    shortname = "fleet",
    doc = "A fleet of identical pods, scaled and rolled out by the CloneSet planner.",
    printcolumn(name = "Desired", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(
        name = "Updated",
        type_ = "integer",
        json_path = ".status.updatedReplicas"
    ),
    printcolumn(name = "Ready", type_ = "integer", json_path = ".status.readyReplicas"),
    printcolumn(name = "Image", type_ = "string", json_path = ".spec.image")
)]
#[serde(rename_all = "camelCase")]
pub struct PodFleetSpec {
    /// How many pods to run (the API server refuses a negative number).
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// The image of the pods' only container, `main`.
    pub image: String,
    /// How many pods may be unavailable during an update (a number or a percentage; CloneSet's default 20%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// How many pods may be created above `replicas` during an update (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// How many pods stay at the old image (default 0: update them all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// Update pods in place (only the container restarts) instead of recreating them.
    #[serde(default)]
    pub in_place: bool,
}

/// What the operator last saw of its pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodFleetStatus {
    /// The generation of the spec this status describes.
    pub observed_generation: i64,
    /// Pods that exist and are not being deleted.
    pub replicas: i32,
    /// Pods whose Ready condition is True.
    pub ready_replicas: i32,
    /// Pods at the update revision.
    pub updated_replicas: i32,
    /// Pods at the update revision and Ready.
    pub updated_ready_replicas: i32,
    /// The revision of the pod template the spec asks for now.
    pub update_revision: String,
    /// The revision every pod was at before the update began (equal to `updateRevision` once rolled out).
    pub current_revision: String,
}

impl PodFleet {
    /// Whether the status describes the current spec with every wanted pod updated and Ready.
    #[must_use]
    pub fn is_rolled_out(&self) -> bool {
        let Some(status) = &self.status else {
            return false;
        };
        let wanted = self.spec.replicas;
        status.observed_generation == self.metadata.generation.unwrap_or_default()
            && status.replicas == wanted
            && status.updated_replicas == wanted
            && status.ready_replicas == wanted
            && status.updated_ready_replicas == wanted
    }
}

/// Installs (or updates) the PodFleet CRD with a server-side apply and waits until the API server serves it.
///
/// # Errors
/// The apply fails (no permission to write CRDs, say) or the CRD is not Established in time.
pub async fn install_crd(client: &Client) -> Result<(), String> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = PodFleet::crd();
    let name = crd.name_any();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    crds.patch(&name, &params, &Patch::Apply(&crd))
        .await
        .map_err(|error| format!("install CustomResourceDefinition {name}: {error}"))?;
    let established = await_condition(crds, &name, conditions::is_crd_established());
    match tokio::time::timeout(ESTABLISHED_TIMEOUT, established).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(format!(
            "waiting for CustomResourceDefinition {name}: {error}"
        )),
        Err(_) => Err(format!(
            "CustomResourceDefinition {name} not Established after {}s",
            ESTABLISHED_TIMEOUT.as_secs()
        )),
    }
}
