//! kruise-daemon runs with exactly the permissions the manifests give it: the namespaces of
//! `examples/manifests/namespace.yaml` and the RBAC objects of `examples/manifests/daemon.yaml` are applied,
//! and the daemons get a kubeconfig that acts as its ServiceAccount (`as:`, impersonation by the e2e admin).
//! So a daemon that reads something its manifests do not allow (a pull secret outside `kruise-daemon-config`,
//! a pod) fails here as it would in a cluster. On a cluster given by the user nothing cluster-wide is applied:
//! the daemons run with the user's kubeconfig, and only the namespace `kruise-daemon-config` is ensured.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kruise_api::keys::image_pull::DAEMON_CONFIG_NAMESPACE;
use kube::api::{Patch, PatchParams};
use kube::config::Kubeconfig;
use kube::{Api, Client, Resource};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::support::{Cluster, ensure_namespace};

/// The user kruise-daemon's ServiceAccount authenticates as.
pub const DAEMON_USER: &str = "system:serviceaccount:kruise-system:kruise-daemon";

fn manifest(name: &str) -> Result<Vec<Value>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("manifests")
        .join(name);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_yaml::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).context(name.to_owned()))
        .collect()
}

async fn apply<K>(api: Api<K>, object: &Value) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let name = object["metadata"]["name"].as_str().context("a name")?;
    api.patch(
        name,
        &PatchParams::apply("kruise-rs-e2e").force(),
        &Patch::Apply(object),
    )
    .await
    .with_context(|| format!("applying {} {name}", object["kind"]))?;
    Ok(())
}

/// Applies the daemon's namespaces and RBAC from the manifests, and writes a kubeconfig that acts as the
/// daemon's ServiceAccount; its path. On a user's cluster: the namespace `kruise-daemon-config` and the user's
/// own kubeconfig.
///
/// # Errors
/// A manifest cannot be read or applied, or the kubeconfig cannot be written.
pub async fn daemon_kubeconfig(cluster: &Cluster) -> Result<PathBuf> {
    if cluster.external {
        ensure_namespace(&cluster.client, DAEMON_CONFIG_NAMESPACE).await?;
        return Ok(cluster.kubeconfig.clone());
    }
    let client: &Client = &cluster.client;
    for object in manifest("namespace.yaml")?
        .iter()
        .chain(&manifest("daemon.yaml")?)
    {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        match object["kind"].as_str().unwrap_or_default() {
            "Namespace" => apply(Api::<Namespace>::all(client.clone()), object).await?,
            "ServiceAccount" => {
                apply(
                    Api::<ServiceAccount>::namespaced(client.clone(), namespace),
                    object,
                )
                .await?;
            }
            "ClusterRole" => apply(Api::<ClusterRole>::all(client.clone()), object).await?,
            "ClusterRoleBinding" => {
                apply(Api::<ClusterRoleBinding>::all(client.clone()), object).await?;
            }
            "Role" => apply(Api::<Role>::namespaced(client.clone(), namespace), object).await?,
            "RoleBinding" => {
                apply(
                    Api::<RoleBinding>::namespaced(client.clone(), namespace),
                    object,
                )
                .await?;
            }
            _ => {}
        }
    }
    let mut config = Kubeconfig::read_from(&cluster.kubeconfig)?;
    for named in &mut config.auth_infos {
        if let Some(user) = named.auth_info.as_mut() {
            user.impersonate = Some(DAEMON_USER.to_owned());
        }
    }
    let path = cluster.log_dir.join("kubeconfig-kruise-daemon");
    std::fs::write(&path, serde_yaml::to_string(&config)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
