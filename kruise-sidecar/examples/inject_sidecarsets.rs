//! What the SidecarSet pod webhook does to a pod being created: which SidecarSets match it, the containers and
//! volumes it injects, and the RFC 6902 patch an admission response carries.
//!
//! ```text
//! cargo run -p kruise-sidecar --example inject_sidecarsets
//! cargo run -p kruise-sidecar --example inject_sidecarsets -- POD.yaml SIDECARSET.yaml [SIDECARSET.yaml...]
//! ```
//!
//! Without arguments it injects the seed tutorial's `test-sidecarset` (a busybox sidecar with a log volume)
//! into an `app=nginx` pod (`tests/fixtures/`). SidecarSet files may hold several YAML documents, in
//! `apps.kruise.io/v1alpha1` or `v1beta1`. Invalid input ends it with exit code 1 and a one-line `error: ...`
//! naming the file (and document).

use std::error::Error;
use std::path::Path;
use std::process::ExitCode;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::defaults::ApplyDefaults;
use kruise_sidecar::{InjectRequest, Options, SeededChance, inject_json};

const SAMPLE_POD: &str = include_str!("../tests/fixtures/pod-nginx.yaml");
const SAMPLE_SIDECARSET: &str = include_str!("../tests/fixtures/sidecarset-log.yaml");

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
    let (pod, sidecarsets) = match arguments.split_first() {
        None => (
            read_pod("sample pod", SAMPLE_POD)?,
            read_sidecarsets("sample SidecarSet", SAMPLE_SIDECARSET)?,
        ),
        Some((_, [])) => {
            return Err("usage: inject_sidecarsets [POD.yaml SIDECARSET.yaml...]".into());
        }
        Some((pod_path, sidecarset_paths)) => {
            let pod = read_pod(pod_path, &read_file(pod_path)?)?;
            let mut sidecarsets = Vec::new();
            for path in sidecarset_paths {
                sidecarsets.extend(read_sidecarsets(path, &read_file(path)?)?);
            }
            (pod, sidecarsets)
        }
    };

    // The webhook's inputs besides the pod and the SidecarSets: the SidecarSets' ControllerRevisions (only
    // read for `injectionStrategy.revision`), the labels of the pod's namespace (for `namespaceSelector`),
    // the time written into the hash annotations, and the source of randomness of the `Partial` revision
    // policy. All of them are arguments: the library reads no clock and no cluster.
    let now: Timestamp = "2024-05-01T10:00:00Z".parse()?;
    let request = InjectRequest {
        pod: &pod,
        old_pod: None, // CREATE; an UPDATE passes the old pod (upstream injects nothing then)
        sidecarsets: &sidecarsets,
        revisions: &[],
        namespace_labels: None,
        now,
        options: Options::default(),
    };
    // `inject_json` writes the patch as the JSON text an admission response carries; `inject` returns it
    // as a typed `json_patch::Patch`.
    let injection = inject_json(&request, &mut SeededChance::new(1))?;

    let pod_name = pod.metadata.name.as_deref().unwrap_or("<unnamed>");
    if injection.sidecarsets.is_empty() {
        println!("pod {pod_name}: no SidecarSet matches, nothing injected");
        return Ok(());
    }
    println!(
        "pod {pod_name}: injected SidecarSets {}",
        injection.sidecarsets.join(", ")
    );
    let spec = injection.pod.spec.as_ref();
    let containers = spec
        .map(|spec| spec.containers.as_slice())
        .unwrap_or_default();
    let init_containers = spec
        .and_then(|spec| spec.init_containers.as_deref())
        .unwrap_or_default();
    for (kind, list) in [
        ("init container", init_containers),
        ("container", containers),
    ] {
        for container in list {
            println!(
                "  {kind} {}: {}",
                container.name,
                container.image.as_deref().unwrap_or("<no image>")
            );
        }
    }
    for volume in spec
        .and_then(|spec| spec.volumes.as_deref())
        .unwrap_or_default()
    {
        println!("  volume {}", volume.name);
    }
    let annotations = injection.pod.metadata.annotations.unwrap_or_default();
    for (key, value) in annotations
        .iter()
        .filter(|(key, _)| key.contains("sidecarset"))
    {
        println!("  annotation {key}: {value}");
    }

    // Pretty-print the patch: one operation per line.
    let patch: serde_json::Value = serde_json::from_str(&injection.patch)?;
    println!("admission patch (RFC 6902):");
    for operation in patch.as_array().map(Vec::as_slice).unwrap_or_default() {
        println!("  {operation}");
    }
    Ok(())
}

fn read_file(path: &str) -> Result<String, Box<dyn Error>> {
    std::fs::read_to_string(Path::new(path)).map_err(|error| format!("{path}: {error}").into())
}

/// The one Pod of a YAML document; `source` names it in errors.
fn read_pod(source: &str, text: &str) -> Result<Pod, Box<dyn Error>> {
    let pod: Pod = serde_saphyr::from_str(text).map_err(|error| format!("{source}: {error}"))?;
    if pod.metadata.name.is_none() {
        return Err(format!("{source}: metadata.name is missing").into());
    }
    Ok(pod)
}

/// Every SidecarSet of a YAML stream, as the hub type with upstream's defaults applied (as stored in a
/// cluster by the SidecarSet webhook); `source` names the stream in errors.
fn read_sidecarsets(source: &str, text: &str) -> Result<Vec<v1beta1::SidecarSet>, Box<dyn Error>> {
    let mut sidecarsets = Vec::new();
    // Empty and `null` documents are skipped; `index` counts the others.
    let objects: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(text).map_err(|e| format!("{source}: {e}"))?;
    for (index, object) in objects.into_iter().enumerate() {
        let at = |message: String| format!("{source}: document {index}: {message}");
        let field = |name: &str| object.get(name).and_then(serde_json::Value::as_str);
        let api_version = field("apiVersion").unwrap_or_default().to_owned();
        let kind = field("kind").unwrap_or_default().to_owned();
        if kind != "SidecarSet" {
            return Err(at(format!("kind {kind:?} is not SidecarSet")).into());
        }
        let mut sidecarset = match api_version.as_str() {
            "apps.kruise.io/v1alpha1" => {
                let alpha: v1alpha1::SidecarSet =
                    serde_json::from_value(object).map_err(|e| at(e.to_string()))?;
                v1beta1::SidecarSet::from(&alpha)
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
        sidecarset.apply_defaults();
        sidecarsets.push(sidecarset);
    }
    Ok(sidecarsets)
}
