//! A dry run of the CloneSet controller: what it would do next to a CloneSet and its pods, from manifests.
//! Prints the scale/update numbers (upstream's `diff`), each action with the rule that chose it, and the status
//! the controller would write.
//!
//! ```text
//! cargo run -p kruise-schedule --example cloneset_plan
//! cargo run -p kruise-schedule --example cloneset_plan -- CLONESET.yaml PODS.yaml
//! ```
//!
//! `CLONESET.yaml` holds one CloneSet (`apps.kruise.io/v1alpha1` or `v1beta1`); `PODS.yaml` is a YAML stream of
//! its pods and its ControllerRevisions (`kubectl get pods,controllerrevisions -l app=... -o yaml` gives a
//! `List`; split it into documents). Without arguments it plans `cloneset_plan_cloneset.yaml` with
//! `cloneset_plan_pods.yaml`: a 5-replica `InPlaceIfPossible` CloneSet whose image just changed from
//! `nginx:1.24` to `nginx:1.25`, with `maxUnavailable: 2`. Invalid input ends it with exit code 1 and a
//! one-line `error: ...` naming the file (and document) and what is wrong.

use std::error::Error;
use std::process::ExitCode;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::defaults::ApplyDefaults;
use kruise_inplace::calculate::RevisionRef;
use kruise_inplace::revision;
use kruise_schedule::cloneset::{ActionKind, Options, PlanInput, Revisions, SeededIds, plan};
use serde_json::Value;

const SAMPLE_CLONESET: &str = include_str!("cloneset_plan_cloneset.yaml");
const SAMPLE_PODS: &str = include_str!("cloneset_plan_pods.yaml");

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
    let (cloneset, owned) = match arguments.as_slice() {
        [] => (
            read_cloneset("cloneset_plan_cloneset.yaml", SAMPLE_CLONESET)?,
            read_owned("cloneset_plan_pods.yaml", SAMPLE_PODS)?,
        ),
        [cloneset, pods] => (
            read_cloneset(cloneset, &read_file(cloneset)?)?,
            read_owned(pods, &read_file(pods)?)?,
        ),
        _ => return Err("usage: cloneset_plan [CLONESET.yaml PODS.yaml]".into()),
    };
    let name = cloneset.metadata.name.as_deref().unwrap_or_default();
    let status = cloneset.status.clone().unwrap_or_default();

    // The update revision is the one of the current template, named and encoded as the Go controller does
    // (the template as stored, that is with the API server's defaults). The current revision comes from the
    // status; a CloneSet that was never reconciled has none, and then every pod is "current".
    let template_revision = revision::for_template(
        name,
        &cloneset.spec.template,
        status.collision_count.unwrap_or(0),
    )?;
    let template_data: Value = serde_json::from_str(&template_revision.data)?;
    let update = template_revision.name.as_str();
    let current = match status.current_revision.as_str() {
        "" => update,
        recorded => recorded,
    };
    // In-place updates diff the revisions' data: the planner needs both the pods' revision and the update one.
    let mut known: Vec<RevisionRef<'_>> = owned.revisions.iter().map(RevisionRef::from).collect();
    if known.iter().all(|known| known.name != update) {
        known.push(RevisionRef {
            name: update,
            data: Some(&template_data),
            annotations: None,
        });
    }
    let revisions = Revisions {
        current,
        update,
        known: &known,
    };

    // `now` (for `minReadySeconds`, lifecycle timestamps and the progress deadline), the feature gates and the
    // source of instance ids of new pods are arguments: the planner reads no clock and no randomness.
    let now = "2024-05-01T10:00:00Z"
        .parse::<Timestamp>()?
        .to_zoned(TimeZone::UTC);
    let options = Options::default();
    let ids = SeededIds::new(7);
    let input = PlanInput::new(&cloneset, &owned.pods, revisions, &now, &options, &ids);
    let result = plan(&input);

    println!(
        "CloneSet {name}: {} pods, current revision {current}, update revision {update}",
        owned.pods.len()
    );
    println!("step: {}", result.step.name());
    println!("diff: {}", result.diff);
    for invalid in &result.invalid {
        println!("invalid: {invalid}");
    }
    println!("actions ({}):", result.actions.len());
    for action in &result.actions {
        let mut object = action.object_name(&owned.pods, &[]).to_owned();
        if let ActionKind::CreatePod { batch, .. } = &action.kind {
            object.push_str(&format!(" (batch {batch})"));
        }
        println!("  {} {object}", action.kind.name());
        println!("    because: {}", action.reason());
    }
    if let Some(stopped) = &result.stopped {
        println!("stopped: {stopped}");
    }
    let status = &result.status;
    println!("status the controller writes:");
    println!(
        "  replicas {}, ready {}, available {}, updated {}, updatedReady {}, expectedUpdated {}",
        status.replicas,
        status.ready_replicas,
        status.available_replicas,
        status.updated_replicas,
        status.updated_ready_replicas,
        status.expected_updated_replicas
    );
    println!(
        "  currentRevision {}, updateRevision {}, observedGeneration {}",
        status.current_revision, status.update_revision, status.observed_generation
    );
    for condition in &status.conditions {
        println!(
            "  condition {:?} {}: {}",
            condition.type_, condition.status, condition.message
        );
    }
    if let Some(after) = result.requeue_after {
        println!("look again in {after:?}");
    }
    Ok(())
}

fn read_file(path: &str) -> Result<String, Box<dyn Error>> {
    std::fs::read_to_string(path).map_err(|error| format!("{path}: {error}").into())
}

/// The CloneSet of a YAML document as the hub type, with upstream's defaults applied (as the API server stores
/// it); `source` names it in errors.
fn read_cloneset(source: &str, text: &str) -> Result<v1beta1::CloneSet, Box<dyn Error>> {
    let at = |message: String| format!("{source}: {message}");
    let object: Value = serde_saphyr::from_str(text).map_err(|e| at(e.to_string()))?;
    let field = |name: &str| {
        let value = object.get(name).and_then(Value::as_str);
        value.unwrap_or_default().to_owned()
    };
    let (kind, api_version) = (field("kind"), field("apiVersion"));
    if kind != "CloneSet" {
        return Err(at(format!("kind {kind:?} is not CloneSet")).into());
    }
    let mut cloneset = match api_version.as_str() {
        "apps.kruise.io/v1alpha1" => {
            let alpha: v1alpha1::CloneSet =
                serde_json::from_value(object).map_err(|e| at(e.to_string()))?;
            v1beta1::CloneSet::from(&alpha)
        }
        "apps.kruise.io/v1beta1" => {
            serde_json::from_value(object).map_err(|e| at(e.to_string()))?
        }
        other => {
            return Err(at(format!(
                "apiVersion {other:?} is not apps.kruise.io/v1alpha1 or v1beta1"
            ))
            .into());
        }
    };
    if cloneset
        .metadata
        .name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return Err(at("metadata.name is missing".to_owned()).into());
    }
    cloneset.apply_defaults();
    Ok(cloneset)
}

/// The objects of the pods file.
struct Owned {
    pods: Vec<Pod>,
    revisions: Vec<ControllerRevision>,
}

/// The pods and ControllerRevisions of a YAML stream; `source` names it in errors.
fn read_owned(source: &str, text: &str) -> Result<Owned, Box<dyn Error>> {
    let mut owned = Owned {
        pods: Vec::new(),
        revisions: Vec::new(),
    };
    // Empty and `null` documents are skipped; `index` counts the others.
    let objects: Vec<Value> =
        serde_saphyr::from_multiple(text).map_err(|e| format!("{source}: {e}"))?;
    for (index, object) in objects.into_iter().enumerate() {
        let at = |message: String| format!("{source}: document {index}: {message}");
        match object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "Pod" => owned
                .pods
                .push(serde_json::from_value(object).map_err(|e| at(e.to_string()))?),
            "ControllerRevision" => owned
                .revisions
                .push(serde_json::from_value(object).map_err(|e| at(e.to_string()))?),
            other => {
                return Err(at(format!("kind {other:?} is not Pod or ControllerRevision")).into());
            }
        }
    }
    Ok(owned)
}
