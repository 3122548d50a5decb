//! Every manifest in `tests/fixtures/` (the seeds' and OpenKruise user guides' examples) deserialises into its
//! typed kind and serialises back without losing anything; v1alpha1 objects also survive the round trip
//! through v1beta1 unchanged and without needing the conversion stash.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::path::Path;

use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::convert::{HubConversion, STASH_ANNOTATION};
use kruise_api::policy::{v1alpha1 as policy_v1alpha1, v1beta1 as policy_v1beta1};
use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn typed_round_trip<T: Serialize + DeserializeOwned>(document: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(document.clone())
        .map_err(|error| format!("does not decode: {error}"))?;
    let output = serde_json::to_value(&typed).map_err(|error| error.to_string())?;
    support::lossless::check(document, &output)?;
    let again: T = serde_json::from_value(output.clone())
        .map_err(|error| format!("output does not decode: {error}"))?;
    let output_again = serde_json::to_value(&again).map_err(|error| error.to_string())?;
    if output_again != output {
        return Err("serialising is not stable".into());
    }
    Ok(output)
}

fn conversion_round_trip<A: HubConversion>(document: &Value) -> Result<Value, String> {
    let output = typed_round_trip::<A>(document)?;
    let alpha: A = serde_json::from_value(output).map_err(|error| error.to_string())?;
    let hub = kruise_api::convert::to_hub(&alpha);
    if hub
        .meta()
        .annotations
        .as_ref()
        .is_some_and(|annotations| annotations.contains_key(STASH_ANNOTATION))
    {
        return Err("converting to v1beta1 needed the conversion stash".into());
    }
    let back: A = kruise_api::convert::from_hub(&hub);
    if back != alpha {
        return Err("v1alpha1 -> v1beta1 -> v1alpha1 changed the object".into());
    }
    serde_json::to_value(&hub).map_err(|error| error.to_string())
}

/// Dispatches a document to its kind's checks by `apiVersion` and `kind`.
macro_rules! check_document {
    ($document:expr; convertible: $($alpha:ty),*; single: $($single:ty),*) => {{
        let document: &Value = $document;
        let api_version = document["apiVersion"].as_str().unwrap_or_default();
        let kind = document["kind"].as_str().unwrap_or_default();
        let mut result = None;
        $(
            if api_version == <$alpha as Resource>::api_version(&()) && kind == <$alpha as Resource>::kind(&()) {
                result = Some(conversion_round_trip::<$alpha>(document).and_then(|hub| {
                    typed_round_trip::<<$alpha as HubConversion>::Hub>(&hub).map(|_| hub)
                }));
            }
        )*
        $(
            if api_version == <$single as Resource>::api_version(&()) && kind == <$single as Resource>::kind(&()) {
                result = Some(typed_round_trip::<$single>(document));
            }
        )*
        result.unwrap_or_else(|| Err(format!("no type for {api_version} {kind}")))
    }};
}

fn check(document: &Value) -> Result<Value, String> {
    check_document!(document;
        convertible:
            v1alpha1::AdvancedCronJob,
            v1alpha1::BroadcastJob,
            v1alpha1::CloneSet,
            v1alpha1::ContainerRecreateRequest,
            v1alpha1::DaemonSet,
            v1alpha1::ImageListPullJob,
            v1alpha1::ImagePullJob,
            v1alpha1::NodeImage,
            v1alpha1::PersistentPodState,
            v1alpha1::ResourceDistribution,
            v1alpha1::SidecarSet,
            v1alpha1::StatefulSet,
            v1alpha1::UnitedDeployment,
            v1alpha1::WorkloadSpread,
            policy_v1alpha1::PodUnavailableBudget;
        single:
            v1alpha1::EphemeralJob,
            v1alpha1::NodePodProbe,
            v1alpha1::PodProbeMarker,
            v1beta1::AdvancedCronJob,
            v1beta1::BroadcastJob,
            v1beta1::CloneSet,
            v1beta1::ContainerRecreateRequest,
            v1beta1::DaemonSet,
            v1beta1::ImageListPullJob,
            v1beta1::ImagePullJob,
            v1beta1::NodeImage,
            v1beta1::PersistentPodState,
            v1beta1::ResourceDistribution,
            v1beta1::SidecarSet,
            v1beta1::StatefulSet,
            v1beta1::UnitedDeployment,
            v1beta1::WorkloadSpread,
            policy_v1beta1::PodUnavailableBudget
    )
}

#[test]
fn fixtures_round_trip_without_loss() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    for path in paths
        .iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
    {
        let text = std::fs::read_to_string(path).unwrap();
        // Empty and `null` documents are skipped.
        let documents: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        for (index, document) in documents.into_iter().enumerate() {
            let name = format!(
                "{}#{index} ({} {})",
                path.file_name().unwrap().to_string_lossy(),
                document["kind"],
                document["metadata"]["name"]
            );
            match check(&document) {
                Ok(_) => checked += 1,
                Err(error) => failures.push(format!("{name}: {error}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 0, "no fixtures found in {}", dir.display());
    println!("{checked} fixture documents checked");
}
