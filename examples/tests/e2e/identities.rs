//! kruise-manager and kruise-daemon run in the end-to-end tests as they run in a cluster: with a
//! ServiceAccount token bound to the roles of the shipped manifests (`examples/manifests/rbac.yaml`,
//! `daemon.yaml`), never with the control plane's `system:masters` token. A permission the manifests lack
//! fails the scenario that needs it (the manager's or daemon's log names the refused request).
//!
//! The manager of a scenario runs in its own namespace (`--namespace`) with its own lease
//! (`--leader-election-id`), so the manifest's roles are rendered for those flags, as an operator installing
//! with other flags would edit them: what the manifest puts in `kruise-system` is made in that namespace, the
//! rules' `resourceNames` that name the manifest's namespace (`kruise-system`) or lease (`kruise-manager`)
//! name the scenario's, and every role and binding gets a name of its own so scenarios do not share them.
//! The daemon's objects are applied exactly as the manifest has them. On a cluster given with
//! `KRUISE_E2E_KUBECONFIG` the processes keep that kubeconfig (the suite does not change cluster-wide RBAC
//! there, and newer clusters do not make token Secrets).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kruise_api::keys::image_pull::DAEMON_CONFIG_NAMESPACE;
use kube::api::{Patch, PatchParams};
use kube::config::Kubeconfig;
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::support::{Cluster, ensure_namespace, wait_for};

/// The namespace the manifests install into.
const MANIFEST_NAMESPACE: &str = "kruise-system";

/// The kinds of the manifests that make an identity.
const RBAC_KINDS: [&str; 6] = [
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
];

/// A kubeconfig for kruise-manager running with `--namespace={namespace}` and
/// `--leader-election-id={lease}`: the manifests' ServiceAccount `kruise-manager` in `namespace`, with the
/// manifests' Role and ClusterRole rendered for these flags.
pub async fn manager_kubeconfig(
    cluster: &Cluster,
    namespace: &str,
    lease: &str,
) -> Result<PathBuf> {
    if cluster.external {
        return Ok(cluster.kubeconfig.clone());
    }
    ensure_namespace(&cluster.client, namespace).await?;
    for object in manifest_objects("namespace.yaml")? {
        apply(&cluster.client, &object).await?;
    }
    apply_manager_roles(cluster, "rbac.yaml", namespace, lease).await?;
    kubeconfig_for(cluster, namespace, "kruise-manager").await
}

/// Applies the roles and bindings of the manifest `file` (e.g. `resource-distribution.yaml`, the rights of a
/// gate that is off by default) for kruise-manager running with `--namespace={namespace}` and
/// `--leader-election-id={lease}`, rendered as [`manager_kubeconfig`] renders `rbac.yaml`. Call it before
/// the manager starts, as an operator applies the file with the flag.
pub async fn grant_manager(
    cluster: &Cluster,
    file: &str,
    namespace: &str,
    lease: &str,
) -> Result<()> {
    if cluster.external {
        return Ok(());
    }
    apply_manager_roles(cluster, file, namespace, lease).await
}

async fn apply_manager_roles(
    cluster: &Cluster,
    file: &str,
    namespace: &str,
    lease: &str,
) -> Result<()> {
    // Every role and binding gets a name of its own for this namespace and lease.
    let suffix = format!("{namespace}-{lease}");
    let renamed = |name: &Value| json!(format!("{}-{suffix}", name.as_str().unwrap_or_default()));
    for mut object in manifest_objects(file)? {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        // What the manifest puts in its own namespace goes into the scenario's; other namespaces (where
        // the manager copies pull secrets for the daemons) stay as they are.
        if object["metadata"]["namespace"] == MANIFEST_NAMESPACE {
            object["metadata"]["namespace"] = json!(namespace);
        }
        match kind.as_str() {
            "ServiceAccount" => {}
            "ClusterRole" | "Role" => {
                object["metadata"]["name"] = renamed(&object["metadata"]["name"]);
                render_resource_names(&mut object, namespace, lease);
            }
            "ClusterRoleBinding" | "RoleBinding" => {
                object["metadata"]["name"] = renamed(&object["metadata"]["name"]);
                object["roleRef"]["name"] = renamed(&object["roleRef"]["name"]);
                retarget_subjects(&mut object, namespace);
            }
            _ => continue,
        }
        apply(&cluster.client, &object).await?;
    }
    Ok(())
}

/// The `resourceNames` of the manifest's rules that name its namespace or its lease, renamed to the
/// scenario's: what an operator installing with other `--namespace` / `--leader-election-id` flags edits.
fn render_resource_names(role: &mut Value, namespace: &str, lease: &str) {
    for rule in role["rules"].as_array_mut().into_iter().flatten() {
        let resources: Vec<String> = rule["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        for name in rule["resourceNames"].as_array_mut().into_iter().flatten() {
            if resources.iter().any(|resource| resource == "namespaces")
                && name == MANIFEST_NAMESPACE
            {
                *name = json!(namespace);
            }
            if resources.iter().any(|resource| resource == "leases") && name == "kruise-manager" {
                *name = json!(lease);
            }
        }
    }
}

/// A kubeconfig for kruise-daemon: the ServiceAccount `kruise-daemon` and the roles of `daemon.yaml`, applied
/// as the manifest has them.
pub async fn daemon_kubeconfig(cluster: &Cluster) -> Result<PathBuf> {
    if cluster.external {
        // Where the manager copies pull secrets for the daemons (the manifests make it).
        ensure_namespace(&cluster.client, DAEMON_CONFIG_NAMESPACE).await?;
        return Ok(cluster.kubeconfig.clone());
    }
    let mut objects = manifest_objects("namespace.yaml")?;
    objects.extend(manifest_objects("daemon.yaml")?);
    // Namespaces first: the namespaced objects go into them.
    objects.sort_by_key(|object| object["kind"] != "Namespace");
    let mut account_namespace = None;
    for object in objects {
        let kind = object["kind"].as_str().unwrap_or_default();
        if !RBAC_KINDS.contains(&kind) {
            continue;
        }
        if kind == "ServiceAccount" && object["metadata"]["name"] == "kruise-daemon" {
            account_namespace = object["metadata"]["namespace"].as_str().map(str::to_owned);
        }
        apply(&cluster.client, &object).await?;
    }
    let namespace = account_namespace.unwrap_or_else(|| MANIFEST_NAMESPACE.to_owned());
    kubeconfig_for(cluster, &namespace, "kruise-daemon").await
}

/// Every object of one manifest file.
fn manifest_objects(file: &str) -> Result<Vec<Value>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("manifests")
        .join(file);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    // Empty and `null` documents are skipped.
    serde_saphyr::from_multiple(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Points the ServiceAccount subjects of a binding at `namespace`.
fn retarget_subjects(binding: &mut Value, namespace: &str) {
    if let Some(subjects) = binding["subjects"].as_array_mut() {
        for subject in subjects {
            if subject["kind"] == "ServiceAccount" {
                subject["namespace"] = json!(namespace);
            }
        }
    }
}

/// Server-side applies one manifest object (as the e2e suite's field manager).
async fn apply(client: &Client, object: &Value) -> Result<()> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    let api: Api<DynamicObject> = match object["metadata"]["namespace"].as_str() {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    api.patch(
        name,
        &PatchParams::apply("kruise-e2e").force(),
        &Patch::Apply(object),
    )
    .await
    .with_context(|| format!("applying {kind} {name} from the manifests"))?;
    Ok(())
}

/// Waits for the token Secret of ServiceAccount `namespace/name` (made by kube-controller-manager) and
/// writes a kubeconfig with it next to the cluster's.
async fn kubeconfig_for(cluster: &Cluster, namespace: &str, name: &str) -> Result<PathBuf> {
    let accounts: Api<ServiceAccount> = Api::namespaced(cluster.client.clone(), namespace);
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), namespace);
    let token = wait_for(
        &format!("a token for ServiceAccount {namespace}/{name}"),
        Duration::from_secs(60),
        || async {
            let Some(account) = accounts.get_opt(name).await? else {
                return Ok(None);
            };
            for reference in account.secrets.unwrap_or_default() {
                let Some(secret_name) = reference.name else {
                    continue;
                };
                if let Some(secret) = secrets.get_opt(&secret_name).await?
                    && let Some(token) = secret.data.and_then(|data| data.get("token").cloned())
                {
                    return Ok(Some(String::from_utf8(token.0)?));
                }
            }
            Ok(None)
        },
    )
    .await?;
    let mut config = Kubeconfig::read_from(&cluster.kubeconfig)
        .with_context(|| format!("reading {}", cluster.kubeconfig.display()))?;
    let Some(user) = config.auth_infos.first_mut() else {
        bail!("{} has no user", cluster.kubeconfig.display());
    };
    let auth = user
        .auth_info
        .as_mut()
        .ok_or_else(|| anyhow!("{} has no user credentials", cluster.kubeconfig.display()))?;
    auth.token = Some(token.into());
    let path = cluster
        .kubeconfig
        .with_file_name(format!("kubeconfig-{namespace}-{name}"));
    std::fs::write(&path, serde_saphyr::to_string(&config)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
