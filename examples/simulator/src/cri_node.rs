//! The containerd-backed mode: on nodes given a CRI endpoint (`--cri-endpoint NODE=unix:///...`), the
//! simulator runs each bound pod as a real sandbox with real containers (host network, a PID namespace per
//! container, kubelet's labels and annotations on both; logs under `--pod-log-dir`,
//! `<namespace>_<pod>_<uid>/<container>_<restart count>.log`), restarts exited containers as kubelet would, and reports what the runtime says
//! ([`super::runtime_status`]): real container IDs, image IDs, restart counts, exit codes and times.
//!
//! Pods are polled every second (there is no event stream from the runtime, like kubelet's PLEG relist).
//! A deleted pod's sandbox is stopped and removed before the pod object is. A pod in a terminal phase has its
//! remaining containers stopped (kubelet kills what still runs once a pod is terminal); its phase is kept.
//! Containers get the environment kubelet would give them ([`super::container_env`]: `fieldRef`, ConfigMap
//! and Secret keys, `envFrom`); one whose environment cannot be built (a missing ConfigMap, Secret or key) is
//! not created and is reported waiting with reason `CreateContainerConfigError` and kubelet's message, and
//! tried again on the next pass. Each container carries kubelet v1.20's spec hash in its
//! `io.kubernetes.container.hash` annotation.
//!
//! Not supported in this mode: init containers, volumes, probes (a running container is ready).

use kruise_runtime::actions::{is_conflict, is_not_found};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, Secret};
use k8s_openapi::jiff::Timestamp;
use kruise_lifecycle::container_recreate::runtime_view::{PodView, RuntimeState};
use kube::api::{DeleteParams, PostParams, Preconditions};
use kube::{Api, ResourceExt};
use tokio::sync::OnceCell;

use super::container_env::{self, EnvSources};
use super::runtime_status;
use kruise_inplace::container_hash;
use kruise_runtime::cri::view::{pod_view, runtime_state};
use kruise_runtime::cri::{CriClient, CriError, labels};

/// How often pods on a containerd-backed node are looked at.
pub const RELIST: Duration = Duration::from_secs(1);

/// Why a pod could not be run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CriNodeError {
    /// The runtime refused a call.
    #[error("pod {pod}: {source}")]
    Runtime {
        /// `namespace/name`.
        pod: String,
        /// The failure.
        #[source]
        source: CriError,
    },
    /// The API server refused a write.
    #[error("pod {pod}: {source}")]
    Kube {
        /// `namespace/name`.
        pod: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

/// A containerd-backed node: its runtime and where its pods' logs go.
#[derive(Debug)]
pub struct CriNode {
    client: CriClient,
    runtime_name: OnceCell<String>,
    log_root: PathBuf,
}

/// Parses `NODE=unix:///path` into the node name and the endpoint.
///
/// # Errors
/// A message naming the flag value when it has no `=` or an empty node name.
pub fn parse_endpoint_flag(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((node, endpoint)) if !node.is_empty() && !endpoint.is_empty() => {
            Ok((node.to_owned(), endpoint.to_owned()))
        }
        _ => Err(format!(
            "--cri-endpoint {value:?}: expected NODE=unix:///path/to/socket"
        )),
    }
}

impl CriNode {
    /// A node whose runtime listens on `endpoint`; pod logs go under `log_root`.
    ///
    /// # Errors
    /// The endpoint is not a unix socket.
    pub fn new(endpoint: &str, log_root: PathBuf) -> Result<Self, CriError> {
        Ok(Self {
            client: CriClient::connect_lazy(endpoint)?,
            runtime_name: OnceCell::new(),
            log_root,
        })
    }

    async fn runtime_name(&self) -> Result<String, CriError> {
        self.runtime_name
            .get_or_try_init(|| async {
                self.client
                    .version()
                    .await
                    .map(|version| version.runtime_name)
            })
            .await
            .cloned()
    }

    /// What the runtime has for the pod with this UID.
    ///
    /// # Errors
    /// A runtime call failed.
    pub async fn view(&self, uid: &str) -> Result<PodView, CriError> {
        let runtime = self.runtime_name().await?;
        let containers = self.client.list_containers(labels::pod_filter(uid)).await?;
        let mut statuses = HashMap::new();
        for container in &containers {
            match self.client.container_status(&container.id).await {
                Ok(status) => {
                    statuses.insert(container.id.clone(), status);
                }
                Err(error) if error.is_not_found() => {}
                Err(error) => return Err(error),
            }
        }
        Ok(pod_view(&runtime, &containers, &statuses))
    }

    /// Runs one pass for a pod bound to this node: start what must run, report the status, or tear the pod
    /// down when it is being deleted. Returns when to look again.
    ///
    /// # Errors
    /// A runtime call or a write failed (retried by the caller).
    pub async fn reconcile(
        &self,
        pod: &Pod,
        api: &Api<Pod>,
        host_ip: &str,
    ) -> Result<Option<Duration>, CriNodeError> {
        let key = format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name_any());
        let runtime = |source| CriNodeError::Runtime {
            pod: key.clone(),
            source,
        };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        if pod.metadata.deletion_timestamp.is_some() {
            self.remove_sandboxes(&uid).await.map_err(runtime)?;
            let params = DeleteParams {
                grace_period_seconds: Some(0),
                preconditions: Some(Preconditions {
                    uid: Some(uid),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            return match api.delete(&pod.name_any(), &params).await {
                Ok(_) => {
                    tracing::info!(pod = %key, "sandbox removed; pod deleted");
                    Ok(None)
                }
                Err(error) if is_conflict(&error) || is_not_found(&error) => Ok(None),
                Err(source) => Err(CriNodeError::Kube { pod: key, source }),
            };
        }
        let phase = kruise_api::pod::phase(pod);
        if matches!(phase, "Succeeded" | "Failed") {
            // kubelet never moves a pod out of a terminal phase: it stops what still runs and keeps
            // reporting the containers.
            self.stop_running(pod, &uid).await.map_err(runtime)?;
            let view = self.view(&uid).await.map_err(runtime)?;
            let mut status = runtime_status::decide(pod, &view, host_ip, Timestamp::now()).status;
            status.phase = Some(phase.to_owned());
            self.write_status(pod, api, status, &key).await?;
            return Ok(None);
        }
        let sandbox = self.ensure_sandbox(pod).await.map_err(runtime)?;
        let view = self.view(&uid).await.map_err(runtime)?;
        let decision = runtime_status::decide(pod, &view, host_ip, Timestamp::now());
        let mut started = false;
        // Containers whose environment cannot be built (kubelet's CreateContainerConfigError): not created,
        // reported waiting, tried again on the next pass.
        let mut config_errors = Vec::new();
        for (name, restart_count) in &decision.start {
            let Some(container) = pod
                .spec
                .as_ref()
                .and_then(|spec| spec.containers.iter().find(|c| &c.name == name))
            else {
                continue;
            };
            let sources =
                fetch_env_sources(api, container)
                    .await
                    .map_err(|source| CriNodeError::Kube {
                        pod: key.clone(),
                        source,
                    })?;
            let env = match container_env::resolve(pod, container, host_ip, &sources) {
                Ok(env) => env,
                Err(error) => {
                    tracing::info!(pod = %key, container = %name, %error, "cannot build the container's environment");
                    config_errors.push((name.clone(), error.message));
                    continue;
                }
            };
            self.start_container(pod, &sandbox, container, *restart_count, env)
                .await
                .map_err(runtime)?;
            tracing::info!(pod = %key, container = %name, restart_count, "started container");
            started = true;
        }
        if started {
            // Report from the runtime's new state at once (container IDs, start times).
            let view = self.view(&uid).await.map_err(runtime)?;
            let mut decision = runtime_status::decide(pod, &view, host_ip, Timestamp::now());
            runtime_status::mark_config_errors(&mut decision.status, &config_errors);
            self.write_status(pod, api, decision.status, &key).await?;
            return Ok(Some(RELIST));
        }
        let mut decision = decision;
        runtime_status::mark_config_errors(&mut decision.status, &config_errors);
        if !config_errors.is_empty() {
            decision.recheck_after = Some(RELIST);
        }
        self.write_status(pod, api, decision.status, &key).await?;
        Ok(Some(
            decision
                .recheck_after
                .map_or(RELIST, |after| after.min(RELIST)),
        ))
    }

    async fn write_status(
        &self,
        pod: &Pod,
        api: &Api<Pod>,
        status: k8s_openapi::api::core::v1::PodStatus,
        key: &str,
    ) -> Result<(), CriNodeError> {
        if pod.status.as_ref() == Some(&status) {
            return Ok(());
        }
        let mut updated = pod.clone();
        updated.status = Some(status);
        match api
            .replace_status(&pod.name_any(), &PostParams::default(), &updated)
            .await
        {
            // A conflict: the watch brings the newer pod and the next pass writes again.
            Ok(_) => Ok(()),
            Err(error) if is_conflict(&error) || is_not_found(&error) => Ok(()),
            Err(source) => Err(CriNodeError::Kube {
                pod: key.to_owned(),
                source,
            }),
        }
    }

    fn sandbox_config(&self, pod: &Pod) -> cri::PodSandboxConfig {
        let namespace = pod.namespace().unwrap_or_default();
        let name = pod.name_any();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let log_directory = self.log_root.join(format!("{namespace}_{name}_{uid}"));
        cri::PodSandboxConfig {
            metadata: Some(cri::PodSandboxMetadata {
                name: name.clone(),
                uid: uid.clone(),
                namespace: namespace.clone(),
                attempt: 0,
            }),
            // Host-network pods share the host's UTS namespace: no hostname (kubelet leaves it empty too).
            hostname: String::new(),
            log_directory: log_directory.display().to_string(),
            labels: labels::sandbox_labels(&namespace, &name, &uid),
            linux: Some(cri::LinuxPodSandboxConfig {
                security_context: Some(cri::LinuxSandboxSecurityContext {
                    namespace_options: Some(cri::NamespaceOption {
                        network: cri::NamespaceMode::Node.into(),
                        // kubelet without shareProcessNamespace: each container is PID 1 of its own.
                        pid: cri::NamespaceMode::Container.into(),
                        ipc: cri::NamespaceMode::Pod.into(),
                        ..cri::NamespaceOption::default()
                    }),
                    ..cri::LinuxSandboxSecurityContext::default()
                }),
                ..cri::LinuxPodSandboxConfig::default()
            }),
            ..cri::PodSandboxConfig::default()
        }
    }

    async fn ensure_sandbox(&self, pod: &Pod) -> Result<(String, cri::PodSandboxConfig), CriError> {
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let config = self.sandbox_config(pod);
        let existing = self.client.list_sandboxes(labels::pod_filter(&uid)).await?;
        if let Some(ready) = existing
            .iter()
            .find(|sandbox| sandbox.state == i32::from(cri::PodSandboxState::SandboxReady))
        {
            return Ok((ready.id.clone(), config));
        }
        let _ = std::fs::create_dir_all(&config.log_directory);
        let id = self.client.run_sandbox(config.clone()).await?;
        tracing::info!(pod = %pod.name_any(), sandbox = %id, "started sandbox");
        Ok((id, config))
    }

    async fn start_container(
        &self,
        pod: &Pod,
        sandbox: &(String, cri::PodSandboxConfig),
        container: &Container,
        restart_count: i32,
        env: Vec<(String, String)>,
    ) -> Result<(), CriError> {
        let namespace = pod.namespace().unwrap_or_default();
        let name = pod.name_any();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let image = container.image.clone().unwrap_or_default();
        if self.client.image_status(&image).await?.is_none() {
            self.client
                .pull_image(&image, None, None, Duration::from_secs(300))
                .await?;
        }
        let grace = pod
            .spec
            .as_ref()
            .and_then(|spec| spec.termination_grace_period_seconds)
            .unwrap_or(30);
        let config = cri::ContainerConfig {
            metadata: Some(cri::ContainerMetadata {
                name: container.name.clone(),
                attempt: u32::try_from(restart_count).unwrap_or_default(),
            }),
            image: Some(kruise_runtime::cri::image_spec(&image)),
            command: container.command.clone().unwrap_or_default(),
            args: container.args.clone().unwrap_or_default(),
            working_dir: container.working_dir.clone().unwrap_or_default(),
            envs: env
                .into_iter()
                .map(|(key, value)| cri::KeyValue { key, value })
                .collect(),
            labels: labels::container_labels(&namespace, &name, &uid, &container.name),
            annotations: HashMap::from([
                (
                    labels::CONTAINER_RESTART_COUNT.to_owned(),
                    restart_count.to_string(),
                ),
                (
                    labels::POD_TERMINATION_GRACE_PERIOD.to_owned(),
                    grace.to_string(),
                ),
                (labels::CONTAINER_HASH.to_owned(), kubelet_hash(container)),
            ]),
            log_path: format!("{}_{restart_count}.log", container.name),
            linux: Some(cri::LinuxContainerConfig {
                security_context: Some(cri::LinuxContainerSecurityContext {
                    namespace_options: Some(cri::NamespaceOption {
                        network: cri::NamespaceMode::Node.into(),
                        pid: cri::NamespaceMode::Container.into(),
                        ipc: cri::NamespaceMode::Pod.into(),
                        ..cri::NamespaceOption::default()
                    }),
                    ..cri::LinuxContainerSecurityContext::default()
                }),
                ..cri::LinuxContainerConfig::default()
            }),
            ..cri::ContainerConfig::default()
        };
        self.client
            .create_and_start(&sandbox.0, config, sandbox.1.clone())
            .await?;
        // kubelet keeps the newest dead incarnation (for lastState); older ones are removed.
        let view = self.view(&uid).await?;
        let mut dead: Vec<_> = view
            .containers
            .iter()
            .filter(|c| c.name == container.name && c.state == RuntimeState::Exited)
            .collect();
        dead.sort_by_key(|c| std::cmp::Reverse(c.created_at_ns));
        for old in dead.iter().skip(1) {
            self.client.remove_container(&old.id).await?;
        }
        Ok(())
    }

    async fn stop_running(&self, pod: &Pod, uid: &str) -> Result<(), CriError> {
        let grace = pod
            .spec
            .as_ref()
            .and_then(|spec| spec.termination_grace_period_seconds)
            .unwrap_or(30);
        for container in self.client.list_containers(labels::pod_filter(uid)).await? {
            if runtime_state(container.state) == RuntimeState::Running {
                self.client.stop_container(&container.id, grace).await?;
                tracing::info!(pod = %pod.name_any(), container = %container.id, "stopped a container of a finished pod");
            }
        }
        Ok(())
    }

    async fn remove_sandboxes(&self, uid: &str) -> Result<(), CriError> {
        for sandbox in self.client.list_sandboxes(labels::pod_filter(uid)).await? {
            match self.client.remove_sandbox(&sandbox.id).await {
                Ok(()) => {}
                Err(error) if error.is_not_found() => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// The container hash kubelet v1.20 (the simulated nodes' version) writes in the container's
/// `io.kubernetes.container.hash` annotation: the whole container spec, in hex.
fn kubelet_hash(container: &Container) -> String {
    format!(
        "{:x}",
        container_hash::hash_before_v1_31(container).unwrap_or_default()
    )
}

/// Fetches the ConfigMaps and Secrets the container's environment reads (a missing one is `None`).
async fn fetch_env_sources(
    pods: &Api<Pod>,
    container: &Container,
) -> Result<EnvSources, kube::Error> {
    let (config_map_names, secret_names) = container_env::references(container);
    let mut sources = EnvSources::default();
    if config_map_names.is_empty() && secret_names.is_empty() {
        return Ok(sources);
    }
    let client = kube::Client::from(pods.clone());
    let namespace = pods.namespace().unwrap_or_default().to_owned();
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    for name in config_map_names {
        let data = config_maps
            .get_opt(&name)
            .await?
            .map(|config_map| config_map.data.unwrap_or_default());
        sources.config_maps.insert(name, data);
    }
    let secrets: Api<Secret> = Api::namespaced(client, &namespace);
    for name in secret_names {
        let data = secrets.get_opt(&name).await?.map(|secret| {
            secret
                .data
                .unwrap_or_default()
                .into_iter()
                .map(|(key, value)| (key, String::from_utf8_lossy(&value.0).into_owned()))
                .collect()
        });
        sources.secrets.insert(name, data);
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_flags() {
        assert_eq!(
            parse_endpoint_flag("n-0=unix:///run/c.sock").unwrap(),
            ("n-0".to_owned(), "unix:///run/c.sock".to_owned())
        );
        assert!(parse_endpoint_flag("unix:///run/c.sock").is_err());
        assert!(parse_endpoint_flag("=x").is_err());
    }
}
