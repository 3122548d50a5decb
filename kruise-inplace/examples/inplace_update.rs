//! One pod updated in place from one pod template to another, step by step as a controller does it: `calculate`
//! (can it be done in place, and what changes), `apply` (the writes that start it), the kubelet restarting the
//! container with the new image, `refresh` (the writes that finish it) and `completion::is_completed`.
//!
//! ```text
//! cargo run -p kruise-inplace --example inplace_update
//! cargo run -p kruise-inplace --example inplace_update -- OLD_TEMPLATE.yaml NEW_TEMPLATE.yaml
//! ```
//!
//! The templates are pod templates (`metadata` and `spec`). Without arguments the update changes the image of
//! container `web` from `nginx:1.24` to `nginx:1.25` and adds a template annotation. The pod is made from the
//! old template, running and ready, with the `InPlaceUpdateReady` readiness gate CloneSet pods carry. Invalid
//! input ends it with exit code 1 and a one-line `error: ...` naming the file.

use std::collections::BTreeMap;
use std::error::Error;
use std::process::ExitCode;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{
    ContainerStatus, Pod, PodCondition, PodReadinessGate, PodStatus, PodTemplateSpec,
};
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL;
use kruise_inplace::{
    Outcome, Subresource, UpdateOptions, apply, calculate, completion, refresh, revision,
};

const SAMPLE_OLD_TEMPLATE: &str = "
metadata:
  labels: {app: web}
spec:
  containers:
    - {name: web, image: 'nginx:1.24'}
    - {name: log-agent, image: 'busybox:1.36', command: [sleep, 999d]}
";

const SAMPLE_NEW_TEMPLATE: &str = "
metadata:
  labels: {app: web}
  annotations: {example.com/rollout: second}
spec:
  containers:
    - {name: web, image: 'nginx:1.25'}
    - {name: log-agent, image: 'busybox:1.36', command: [sleep, 999d]}
";

/// The readiness gate and condition of in-place updates (`apps.kruise.io` pods carry it).
const IN_PLACE_UPDATE_READY: &str = "InPlaceUpdateReady";

/// Runs the example; invalid input ends it with exit code 1 and a one-line message on standard error.
fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (old_template, new_template) = match arguments.as_slice() {
        [] => (
            read_template("sample old template", SAMPLE_OLD_TEMPLATE)?,
            read_template("sample new template", SAMPLE_NEW_TEMPLATE)?,
        ),
        [old, new] => (
            read_template(old, &read_file(old)?)?,
            read_template(new, &read_file(new)?)?,
        ),
        _ => return Err("usage: inplace_update [OLD_TEMPLATE.yaml NEW_TEMPLATE.yaml]".into()),
    };
    let options = UpdateOptions::default(); // upstream's feature-gate defaults

    // The two ControllerRevisions of a CloneSet named "web", named and encoded as the Go controller does.
    let old_revision = controller_revision(&old_template, 1)?;
    let new_revision = controller_revision(&new_template, 2)?;
    let old_name = old_revision.metadata.name.clone().unwrap_or_default();
    println!(
        "revisions: {old_name} -> {}",
        new_revision.metadata.name.as_deref().unwrap_or_default()
    );

    // 1. Can the pod move from one revision to the other in place?
    let spec = match calculate(&old_revision, &new_revision, &options) {
        Ok(spec) => spec,
        Err(recreate) => {
            println!("not in place, the pod must be recreated: {recreate}");
            return Ok(());
        }
    };
    // The update spec as upstream writes it into `apps.kruise.io/inplace-update-grace` when there is a grace period.
    println!("update spec: {}", serde_json::to_string(&spec)?);

    // 2. Start the update: the pod is marked not ready first (status), then its images and labels change.
    let pod = running_pod(&old_template, &old_name);
    let started_at: Timestamp = "2024-05-01T10:00:00Z".parse()?;
    let started = apply(&pod, &spec, started_at, &options)?;
    print_writes("apply", &started);
    println!(
        "completed after apply: {}",
        completion::is_completed(&started.pod, &options)
    );

    // 3. The kubelet sees the new images, restarts those containers and reports new image IDs.
    // The controller reads the pod back: the writes and the kubelet's status update gave it a new resourceVersion.
    let mut restarted = started.pod.clone();
    restarted.metadata.resource_version = Some("1003".to_owned());
    restart_containers(&mut restarted, &spec.container_images);

    // 4. The next reconcile: the update is complete, the pod is marked ready again.
    let refreshed_at: Timestamp = "2024-05-01T10:00:05Z".parse()?;
    let finished = refresh(&restarted, refreshed_at, &options)?;
    print_writes("refresh", &finished);
    println!(
        "completed after refresh: {}",
        completion::is_completed(&finished.pod, &options)
    );
    Ok(())
}

fn read_file(path: &str) -> Result<String, Box<dyn Error>> {
    std::fs::read_to_string(path).map_err(|error| format!("{path}: {error}").into())
}

/// A pod template from YAML; `source` names it in errors.
fn read_template(source: &str, text: &str) -> Result<PodTemplateSpec, Box<dyn Error>> {
    let template: PodTemplateSpec =
        serde_saphyr::from_str(text).map_err(|error| format!("{source}: {error}"))?;
    if template
        .spec
        .as_ref()
        .is_none_or(|spec| spec.containers.is_empty())
    {
        return Err(format!("{source}: spec.containers is empty").into());
    }
    Ok(template)
}

/// The ControllerRevision of `template` for a workload named `web`.
fn controller_revision(
    template: &PodTemplateSpec,
    number: i64,
) -> Result<ControllerRevision, Box<dyn Error>> {
    let revision = revision::for_template("web", template, 0)?;
    let labels = template
        .metadata
        .as_ref()
        .and_then(|metadata| metadata.labels.as_ref());
    Ok(revision.to_controller_revision(labels, number))
}

/// A pod of `template` at `revision`, running and ready, as a kubelet reports it.
fn running_pod(template: &PodTemplateSpec, revision: &str) -> Pod {
    let mut pod = Pod {
        metadata: template.metadata.clone().unwrap_or_default(),
        spec: template.spec.clone(),
        status: None,
    };
    pod.metadata.name = Some("web-x7k2p".to_owned());
    pod.metadata.namespace = Some("default".to_owned());
    pod.metadata.resource_version = Some("1000".to_owned());
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(
            CONTROLLER_REVISION_HASH_LABEL.to_owned(),
            revision.to_owned(),
        );
    let containers = pod
        .spec
        .as_ref()
        .map(|spec| spec.containers.as_slice())
        .unwrap_or_default();
    let statuses = containers
        .iter()
        .map(|container| {
            let image = container.image.clone().unwrap_or_default();
            ContainerStatus {
                name: container.name.clone(),
                image_id: format!("docker.io/library/{image}@sha256:old"),
                image,
                ready: true,
                ..ContainerStatus::default()
            }
        })
        .collect();
    let condition = |type_: &str| PodCondition {
        type_: type_.to_owned(),
        status: "True".to_owned(),
        ..PodCondition::default()
    };
    pod.status = Some(PodStatus {
        phase: Some("Running".to_owned()),
        conditions: Some(vec![condition(IN_PLACE_UPDATE_READY), condition("Ready")]),
        container_statuses: Some(statuses),
        ..PodStatus::default()
    });
    if let Some(spec) = pod.spec.as_mut() {
        spec.readiness_gates = Some(vec![PodReadinessGate {
            condition_type: IN_PLACE_UPDATE_READY.to_owned(),
        }]);
    }
    pod
}

/// What a kubelet reports once it restarted the containers whose image changed: their new image and image ID.
fn restart_containers(pod: &mut Pod, images: &BTreeMap<String, String>) {
    let statuses = pod
        .status
        .as_mut()
        .and_then(|status| status.container_statuses.as_mut());
    for status in statuses.into_iter().flatten() {
        if let Some(image) = images.get(&status.name) {
            status.image.clone_from(image);
            status.image_id = format!("docker.io/library/{image}@sha256:new");
            status.restart_count += 1;
        }
    }
}

/// The patches of a step, in the order a controller sends them.
fn print_writes(step: &str, outcome: &Outcome) {
    println!("{step}: {} write(s)", outcome.writes.len());
    let pod = outcome.pod.metadata.name.as_deref().unwrap_or_default();
    for write in &outcome.writes {
        let target = match write.subresource {
            Subresource::Pod => format!("pods/{pod}"),
            Subresource::Status => format!("pods/{pod}/status"),
            Subresource::Resize => format!("pods/{pod}/resize"),
        };
        println!("  PATCH {target} (application/json-patch+json):");
        for operation in &write.patch.0 {
            let text = serde_json::to_string(operation).unwrap_or_else(|error| error.to_string());
            println!("    {text}");
        }
    }
    if let Some(after) = outcome.requeue_after {
        println!("  look again in {after:?}");
    }
}
