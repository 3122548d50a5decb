//! Create, scale, update, read and delete a CloneSet with kube's typed `Api<CloneSet>`.
//!
//! ```text
//! kruise crds | kubectl apply -f -      # once: the OpenKruise CRDs
//! cargo run -p kruise-examples --example cloneset_crud -- [NAMESPACE]
//! ```
//!
//! The cluster is the one of `KUBECONFIG` (or `~/.kube/config`, or the in-cluster service account); the namespace
//! is `default` unless given. The object operations need only the CRDs: without a running kruise-manager (or the
//! Go OpenKruise) no pod is created and the CloneSet has no status yet, which the program says. A failing request
//! ends it with exit code 1 and a one-line `error: ...`.

use std::collections::BTreeMap;
use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kruise_api::apps::v1beta1::{CloneSet, CloneSetSpec};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

/// The CloneSet this program creates (and deletes again).
const NAME: &str = "cloneset-crud-example";
/// The field manager of the patches (shown in `metadata.managedFields`).
const FIELD_MANAGER: &str = "cloneset-crud-example";

/// Runs the example; a failure ends it with exit code 1 and a one-line message on standard error.
#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn Error>> {
    let namespace = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "default".to_owned());
    let client = Client::try_default()
        .await
        .map_err(|error| format!("no cluster (KUBECONFIG): {error}"))?;
    let clonesets: Api<CloneSet> = Api::namespaced(client, &namespace);

    // Create: the typed object, serialised by kube as apps.kruise.io/v1beta1 CloneSet.
    let created = clonesets
        .create(&PostParams::default(), &cloneset(NAME, "nginx:1.24"))
        .await
        .map_err(|error| {
            format!("create CloneSet {namespace}/{NAME} (are the CRDs installed?): {error}")
        })?;
    println!(
        "created CloneSet {namespace}/{NAME}: replicas {}, generation {}",
        created.spec.replicas.unwrap_or(1),
        created.metadata.generation.unwrap_or_default()
    );

    // Scale: a JSON merge patch of the field that changes.
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    let scaled = clonesets
        .patch(
            NAME,
            &params,
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await?;
    println!(
        "scaled to {} replicas, generation {}",
        scaled.spec.replicas.unwrap_or(1),
        scaled.metadata.generation.unwrap_or_default()
    );

    // Change the image: an RFC 6902 JSON patch, which can address a list element (a merge patch would replace
    // the whole container list). The `test` makes it fail instead of changing another container.
    let image_patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/template/spec/containers/0/name", "value": "web"},
        {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.25"},
    ]))?;
    let updated = clonesets
        .patch(NAME, &params, &Patch::Json::<()>(image_patch))
        .await?;
    let image = updated
        .spec
        .template
        .spec
        .as_ref()
        .and_then(|spec| spec.containers.first())
        .and_then(|container| container.image.clone())
        .unwrap_or_default();
    println!(
        "image set to {image}, generation {}",
        updated.metadata.generation.unwrap_or_default()
    );

    // Read: the status is written by the CloneSet controller (kruise-manager), if one runs.
    let read = clonesets.get(NAME).await?;
    match read.status {
        Some(status) => println!(
            "status: observedGeneration {}, replicas {}, updated {}, ready {}",
            status.observed_generation,
            status.replicas,
            status.updated_replicas,
            status.ready_replicas
        ),
        None => println!("status: none yet (no CloneSet controller has reconciled it)"),
    }

    // Delete, then wait until the API server no longer has it.
    clonesets.delete(NAME, &DeleteParams::default()).await?;
    for _ in 0..60 {
        if clonesets.get_opt(NAME).await?.is_none() {
            println!("deleted CloneSet {namespace}/{NAME}");
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(format!("CloneSet {namespace}/{NAME} still exists 30s after its deletion").into())
}

/// A CloneSet `name` of one container `web` running `image`, one replica, its pods labelled `app=<name>`.
fn cloneset(name: &str, image: &str) -> CloneSet {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    CloneSet::new(
        name,
        CloneSetSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".to_owned(),
                        image: Some(image.to_owned()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..CloneSetSpec::default()
        },
    )
}
