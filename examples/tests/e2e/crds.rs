//! The CRDs printed by `kruise crds` are accepted by a real kube-apiserver, in the v1.8 layout (v1alpha1)
//! and then upgraded in place to the v1.9 layout (both versions, v1beta1 stored); every fixture of
//! `kruise-api/tests/fixtures/` is created and read back without a field lost or changed. The deployment
//! manifests are accepted too (server-side dry run).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result, bail, ensure};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::discovery::pinned_kind;
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::support::{Cluster, ensure_namespace, wait_for};

const NAMESPACE: &str = "e2e-fixtures";
const FIELD_MANAGER: &str = "kruise-rs-e2e";

pub async fn crds_are_accepted_and_fixtures_round_trip(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: it would replace the cluster's OpenKruise CRDs)"
        );
        return Ok(());
    }
    let client = &cluster.client;
    ensure_namespace(client, NAMESPACE).await?;
    let fixtures = fixtures()?;
    ensure!(
        fixtures.len() > 50,
        "only {} fixtures found",
        fixtures.len()
    );

    // The v1.8 layout: v1alpha1 served and stored (Advanced StatefulSet: both, v1beta1 stored).
    let v1alpha1 = apply_crds(client, "v1alpha1").await?;
    let mut created = Vec::new();
    for (index, (source, object)) in fixtures.iter().enumerate() {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        if served(&v1alpha1, api_version, kind)? {
            created.push(round_trip(client, &v1alpha1, index, source, object).await?);
        }
    }
    eprintln!(
        "    v1alpha1 layout: {} CRDs, {} fixtures round-tripped",
        v1alpha1.len(),
        created.len()
    );

    // Upgrade to the v1.9 layout in place; what was written before still reads back.
    let all = apply_crds(client, "all").await?;
    for (index, (source, object)) in fixtures.iter().enumerate() {
        let done = created.iter().any(|(i, _, _)| *i == index);
        if done {
            read_back(client, &all, &format!("fx-{index}"), source, object).await?;
        } else {
            created.push(round_trip(client, &all, index, source, object).await?);
        }
    }
    eprintln!(
        "    all-versions layout: {} CRDs, {} fixtures in total",
        all.len(),
        created.len()
    );
    ensure!(
        created.len() == fixtures.len(),
        "{} of {} fixtures created",
        created.len(),
        fixtures.len()
    );

    // Cluster-scoped fixtures would outlive the namespace: delete them.
    for (_, resource, name) in created.iter().filter(|(_, resource, _)| !resource.1) {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource.0);
        api.delete(name, &DeleteParams::default())
            .await
            .with_context(|| format!("deleting {name}"))?;
    }
    manifests_are_accepted(client).await
}

/// `(source, object)` of every fixture document.
fn fixtures() -> Result<Vec<(String, Value)>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kruise-api/tests/fixtures");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    let mut fixtures = Vec::new();
    for path in paths
        .iter()
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
    {
        let text = std::fs::read_to_string(path)?;
        let documents: Vec<Value> =
            serde_saphyr::from_multiple(&text).with_context(|| format!("{}", path.display()))?;
        for (number, value) in documents.into_iter().enumerate() {
            if value.is_object() {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                fixtures.push((format!("{name}#{number}"), value));
            }
        }
    }
    Ok(fixtures)
}

/// Runs `kruise crds --api-version <versions>`, applies every CRD, waits until all are Established, and
/// returns them by name.
async fn apply_crds(
    client: &Client,
    versions: &str,
) -> Result<BTreeMap<String, CustomResourceDefinition>> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kruise"))
        .args(["crds", "--api-version", versions])
        .output()
        .context("running kruise crds")?;
    ensure!(
        output.status.success(),
        "kruise crds failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout)?;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut crds = BTreeMap::new();
    for value in serde_saphyr::from_multiple::<Value>(&text)? {
        let crd: CustomResourceDefinition = serde_json::from_value(value.clone())?;
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&value),
        )
        .await
        .with_context(|| format!("the server refused CRD {name} ({versions} layout)"))?;
        crds.insert(name, crd);
    }
    for name in crds.keys() {
        wait_for(
            &format!("CRD {name} Established"),
            Duration::from_secs(30),
            || async {
                let crd = api.get(name).await?;
                let conditions = crd
                    .status
                    .and_then(|status| status.conditions)
                    .unwrap_or_default();
                Ok(conditions
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
                    .then_some(()))
            },
        )
        .await?;
    }
    Ok(crds)
}

/// The API resource for `apiVersion`/`kind` and whether it is namespaced, from the CRDs.
fn resource(
    crds: &BTreeMap<String, CustomResourceDefinition>,
    api_version: &str,
    kind: &str,
) -> Result<Option<(ApiResource, bool)>> {
    let (group, version) = api_version
        .split_once('/')
        .context("no group in apiVersion")?;
    let crd = crds
        .values()
        .find(|crd| crd.spec.group == group && crd.spec.names.kind == kind)
        .with_context(|| format!("no CRD for {api_version} {kind}"))?;
    if !crd
        .spec
        .versions
        .iter()
        .any(|v| v.name == version && v.served)
    {
        return Ok(None);
    }
    let gvk = GroupVersionKind::gvk(group, version, kind);
    Ok(Some((
        ApiResource::from_gvk_with_plural(&gvk, &crd.spec.names.plural),
        crd.spec.scope == "Namespaced",
    )))
}

fn served(
    crds: &BTreeMap<String, CustomResourceDefinition>,
    api_version: &str,
    kind: &str,
) -> Result<bool> {
    Ok(resource(crds, api_version, kind)?.is_some())
}

fn api(client: &Client, resource: &(ApiResource, bool)) -> Api<DynamicObject> {
    if resource.1 {
        Api::namespaced_with(client.clone(), NAMESPACE, &resource.0)
    } else {
        Api::all_with(client.clone(), &resource.0)
    }
}

/// Creates the fixture as `fx-<index>` and checks it reads back unchanged.
async fn round_trip(
    client: &Client,
    crds: &BTreeMap<String, CustomResourceDefinition>,
    index: usize,
    source: &str,
    object: &Value,
) -> Result<(usize, (ApiResource, bool), String)> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let resource = resource(crds, api_version, kind)?
        .with_context(|| format!("{source}: {api_version} not served"))?;
    let name = format!("fx-{index}");
    let mut body = object.clone();
    if let Some(metadata) = body["metadata"].as_object_mut() {
        for server_owned in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
            "selfLink",
        ] {
            metadata.remove(server_owned);
        }
    }
    body["metadata"]["name"] = json!(name);
    without_nulls(&mut body, "");
    if resource.1 {
        body["metadata"]["namespace"] = json!(NAMESPACE);
    } else if let Some(metadata) = body["metadata"].as_object_mut() {
        metadata.remove("namespace");
    }
    let dynamic: DynamicObject = serde_json::from_value(body)?;
    api(client, &resource)
        .create(&PostParams::default(), &dynamic)
        .await
        .with_context(|| format!("{source}: the server refused {api_version} {kind}"))?;
    read_back(client, crds, &name, source, object).await?;
    Ok((index, resource, name))
}

async fn read_back(
    client: &Client,
    crds: &BTreeMap<String, CustomResourceDefinition>,
    name: &str,
    source: &str,
    object: &Value,
) -> Result<()> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let resource =
        resource(crds, api_version, kind)?.with_context(|| format!("{source}: not served"))?;
    let stored = serde_json::to_value(api(client, &resource).get(name).await?)?;
    let mut differences = Vec::new();
    for (key, value) in object.as_object().into_iter().flatten() {
        if matches!(key.as_str(), "apiVersion" | "kind" | "metadata" | "status") {
            continue;
        }
        compare(value, &stored[key], key, &mut differences);
    }
    for key in ["labels", "annotations"] {
        compare(
            &object["metadata"][key],
            &stored["metadata"][key],
            &format!("metadata.{key}"),
            &mut differences,
        );
    }
    if !differences.is_empty() {
        bail!(
            "{source} ({kind} {name}) changed on the server: {}",
            differences.join("; ")
        );
    }
    Ok(())
}

/// YAML nulls as a Go client would send them: `""` in string maps (`key:` with no value), absent elsewhere.
fn without_nulls(value: &mut Value, key: &str) {
    match value {
        Value::Object(map) => {
            let string_map = matches!(
                key,
                "matchLabels" | "nodeSelector" | "labels" | "annotations"
            );
            if string_map {
                map.values_mut()
                    .filter(|v| v.is_null())
                    .for_each(|v| *v = json!(""));
            }
            map.retain(|_, v| !v.is_null());
            for (child, v) in map.iter_mut() {
                without_nulls(v, child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| without_nulls(item, "")),
        _ => {}
    }
}

/// Every value of `expected` is in `actual` (the server may add defaults, nothing else).
fn compare(expected: &Value, actual: &Value, path: &str, differences: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Null, _) => {}
        (Value::Object(expected), Value::Object(actual)) => {
            for (key, value) in expected {
                compare(
                    value,
                    actual.get(key).unwrap_or(&Value::Null),
                    &format!("{path}.{key}"),
                    differences,
                );
            }
        }
        (Value::Object(expected), _) if expected.is_empty() => {}
        (Value::Array(expected), Value::Array(actual)) if expected.len() == actual.len() => {
            for (index, (e, a)) in expected.iter().zip(actual).enumerate() {
                compare(e, a, &format!("{path}[{index}]"), differences);
            }
        }
        (Value::Number(e), Value::Number(a)) if e.as_f64() == a.as_f64() => {}
        (e, a) if e == a => {}
        (e, a) => differences.push(format!("{path}: wrote {e}, read {a}")),
    }
}

/// Every object of `examples/manifests/` passes the server's validation (server-side apply, dry run).
async fn manifests_are_accepted(client: &Client) -> Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests");
    let mut count = 0;
    // The manifests' namespaces exist for real (a dry-run Namespace does not hold the dry-run objects in it).
    let namespaces = std::fs::read_to_string(dir.join("namespace.yaml"))?;
    for value in serde_saphyr::from_multiple::<Value>(&namespaces)? {
        if value["kind"] == "Namespace"
            && let Some(name) = value["metadata"]["name"].as_str()
        {
            ensure_namespace(client, name).await?;
        }
    }
    let mut paths: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    for path in paths
        .iter()
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
    {
        let text = std::fs::read_to_string(path)?;
        for value in serde_saphyr::from_multiple::<Value>(&text)? {
            let (group, version) = match value["apiVersion"]
                .as_str()
                .unwrap_or_default()
                .split_once('/')
            {
                Some((group, version)) => (group.to_owned(), version.to_owned()),
                None => (
                    String::new(),
                    value["apiVersion"].as_str().unwrap_or_default().to_owned(),
                ),
            };
            let gvk =
                GroupVersionKind::gvk(&group, &version, value["kind"].as_str().unwrap_or_default());
            let (resource, capabilities) = pinned_kind(client, &gvk).await?;
            let name = value["metadata"]["name"].as_str().unwrap_or_default();
            let api: Api<DynamicObject> = match value["metadata"]["namespace"].as_str() {
                Some(namespace) if capabilities.scope == kube::discovery::Scope::Namespaced => {
                    Api::namespaced_with(client.clone(), namespace, &resource)
                }
                _ => Api::all_with(client.clone(), &resource),
            };
            api.patch(
                name,
                &PatchParams::apply(FIELD_MANAGER).dry_run(),
                &Patch::Apply(&value),
            )
            .await
            .with_context(|| {
                format!("{}: the server refused {} {name}", path.display(), gvk.kind)
            })?;
            count += 1;
        }
    }
    eprintln!("    {count} manifest objects accepted (server-side dry run)");
    Ok(())
}

/// kruise-manager's CRD install leaves a CRD written by a newer kruise-manager as it is: during a rolling
/// upgrade an older replica must not prune the newer schema's fields.
pub async fn an_older_manager_keeps_a_newer_crd(cluster: &Cluster) -> Result<()> {
    use kruise_api::crd::CrdOptions;
    use kruise_api::schema_version::{ANNOTATION, CURRENT};
    use kruise_manager::crds;

    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: it would replace the cluster's OpenKruise CRDs)"
        );
        return Ok(());
    }
    let client = &cluster.client;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let timeout = Duration::from_secs(60);
    crds::install(client, &CrdOptions::default(), timeout).await?;
    let annotation = |crd: &CustomResourceDefinition| {
        crd.metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(ANNOTATION))
            .cloned()
    };
    let name = "clonesets.apps.kruise.io";
    ensure!(
        annotation(&api.get(name).await?).as_deref() == Some(CURRENT),
        "the installed CRD does not name its version"
    );
    // A newer kruise-manager wrote it.
    let newer = json!({"metadata": {"annotations": {ANNOTATION: "999.0.0"}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&newer))
        .await?;
    let before = api.get(name).await?;
    crds::install(client, &CrdOptions::default(), timeout).await?;
    let after = api.get(name).await?;
    let kept = annotation(&after).as_deref() == Some("999.0.0")
        && after.metadata.resource_version == before.metadata.resource_version;
    // Back to this version's schema for the scenarios that follow.
    let ours = json!({"metadata": {"annotations": {ANNOTATION: null}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&ours))
        .await?;
    crds::install(client, &CrdOptions::default(), timeout).await?;
    ensure!(
        kept,
        "the CRD of a newer version was replaced: annotation {:?}",
        annotation(&after)
    );
    Ok(())
}
