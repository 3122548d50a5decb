//! The environment of the CloneSet scenarios: a namespace of their own, the node simulator for it (in
//! process) and kruise-manager with the CloneSet controller (in process, or as a child process that can
//! be killed), plus helpers to create, patch and read CloneSets and their pods.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow};
use clap::Parser;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::CloneSet;
use kruise_manager::cloneset::{CloneSetArgs, CloneSetController};
use kruise_manager::{Manager, ManagerOptions};
use kruise_runtime::controllers::ControllerSet;
use kruise_runtime::shutdown::{self, Trigger};
use kruise_simulator::{Simulator, SimulatorConfig};
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, ensure_namespace};

/// How long a CloneSet may take to reach a state in these scenarios.
pub const WAIT: Duration = Duration::from_secs(60);

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    options: ManagerOptions,
    #[command(flatten)]
    cloneset: CloneSetArgs,
}

/// The manager's arguments for a scenario namespace (no webhook, no election, CloneSets of `namespace`).
pub fn manager_args(namespace: &str) -> Vec<String> {
    vec![
        format!("--namespace={namespace}"),
        "--no-webhook".into(),
        "--leader-elect=false".into(),
        format!("--cloneset-namespace={namespace}"),
        "--shutdown-timeout=5s".into(),
    ]
}

/// A running manager: in process, or a child process.
pub enum ManagerHandle {
    /// In this process.
    InProcess {
        /// Stops it.
        stop: Trigger,
        /// Its task.
        task: JoinHandle<Result<(), kruise_manager::ManagerError>>,
    },
    /// A `kruise-manager` process.
    Child(Box<ManagerProcess>),
}

impl ManagerHandle {
    /// Starts kruise-manager in process for `namespace`, with `extra` arguments (feature gates).
    pub fn in_process_with(client: &Client, namespace: &str, extra: &[&str]) -> Result<Self> {
        let mut args = vec!["kruise-manager".to_owned()];
        args.extend(manager_args(namespace));
        args.push("--metrics-bind-address=127.0.0.1:0".into());
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        let cli = Cli::try_parse_from(args)?;
        let mut controllers = ControllerSet::new();
        controllers.register(CloneSetController::new(
            cli.cloneset
                .config(&cli.options.feature_gates)
                .map_err(anyhow::Error::msg)?,
        ));
        let (stop, stopped) = shutdown::channel();
        let task =
            tokio::spawn(Manager::new(cli.options, controllers).run(client.clone(), stopped));
        Ok(Self::InProcess { stop, task })
    }

    /// Starts the `kruise-manager` binary for `namespace`, with `extra` arguments; its log is
    /// `manager-NAME.log`.
    pub async fn child(
        cluster: &Cluster,
        namespace: &str,
        name: &str,
        extra: &[&str],
    ) -> Result<Self> {
        let mut args = manager_args(namespace);
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        let process =
            ManagerProcess::spawn(cluster, name, &args, Webhooks::AsArgumentsSay, &[]).await?;
        Ok(Self::Child(Box::new(process)))
    }

    /// Kills it at once (no graceful stop): the child gets SIGKILL, the in-process task is aborted.
    pub async fn kill(self) -> Result<()> {
        match self {
            Self::InProcess { task, .. } => {
                task.abort();
                let _ = task.await;
            }
            Self::Child(mut manager) => {
                manager.process.child.kill().await?;
            }
        }
        Ok(())
    }

    /// Stops it gracefully.
    pub async fn stop(self) -> Result<()> {
        match self {
            Self::InProcess { stop, task } => {
                stop.trigger();
                tokio::time::timeout(Duration::from_secs(15), task)
                    .await
                    .context("the manager did not stop")???;
            }
            Self::Child(mut manager) => {
                manager.terminate().await?;
            }
        }
        Ok(())
    }
}

/// A scenario's namespace with its simulator and manager.
pub struct Env {
    /// The client.
    pub client: Client,
    /// The namespace.
    pub namespace: String,
    simulator: Option<(
        Trigger,
        JoinHandle<Result<(), kruise_simulator::SimulatorError>>,
    )>,
    /// The manager (taken by scenarios that kill and restart it).
    pub manager: Option<ManagerHandle>,
}

/// Simulator settings of the scenarios: two nodes, fast readiness and restarts.
pub fn simulator_config(namespace: &str) -> SimulatorConfig {
    SimulatorConfig {
        nodes: 2,
        node_prefix: namespace.to_owned(),
        namespace: Some(namespace.to_owned()),
        ready_delay: Duration::from_millis(300),
        restart_delay: Duration::from_millis(700),
        delete_nodes_on_exit: true,
        ..SimulatorConfig::default()
    }
}

/// The label of a node's zone.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// [`simulator_config`] with one node per entry of `zones`: node `<namespace>-<i>` is labelled
/// [`ZONE_LABEL`] `zones[i]`.
pub fn zoned_simulator_config(namespace: &str, zones: &[&str]) -> SimulatorConfig {
    let mut config = simulator_config(namespace);
    config.nodes = zones.len();
    config.node_labels = zones
        .iter()
        .enumerate()
        .map(|(index, zone)| {
            (
                format!("{namespace}-{index}"),
                ZONE_LABEL.to_owned(),
                (*zone).to_owned(),
            )
        })
        .collect();
    config
}

/// Sends the logs of in-process managers and simulators to a file that outlives the control plane's run
/// directory (once).
pub fn init_logs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let path = std::env::temp_dir().join(format!(
            "kruise-rs-e2e-{}-in-process.log",
            std::process::id()
        ));
        eprintln!("e2e: in-process manager logs in {}", path.display());
        if let Ok(file) = std::fs::File::create(&path) {
            let _ = tracing_subscriber::fmt()
                .with_ansi(false)
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
                        "info,kruise_manager=debug,kruise_runtime=debug".into()
                    }),
                )
                .with_writer(std::sync::Mutex::new(file))
                .try_init();
        }
    });
}

impl Env {
    /// A namespace, the simulator and an in-process manager.
    pub async fn start(cluster: &Cluster, namespace: &str) -> Result<Self> {
        Self::start_with(cluster, namespace, &[]).await
    }

    /// [`Env::start`] with `extra` manager arguments (feature gates).
    pub async fn start_with(cluster: &Cluster, namespace: &str, extra: &[&str]) -> Result<Self> {
        init_logs();
        let mut env = Self::without_manager(cluster, namespace).await?;
        // The manager runs with the manifests' ServiceAccount and roles, not the suite's admin token.
        let kubeconfig =
            crate::identities::manager_kubeconfig(cluster, namespace, "kruise-manager").await?;
        let client = crate::support::client_for(&kubeconfig).await?;
        env.manager = Some(ManagerHandle::in_process_with(&client, namespace, extra)?);
        env.wait_for_api().await?;
        Ok(env)
    }

    /// Waits until v1beta1 CloneSets are served (the manager installs the CRDs at start).
    pub async fn wait_for_api(&self) -> Result<()> {
        crate::support::wait_for("the v1beta1 CloneSet API", WAIT, || async {
            Ok(self
                .clonesets()
                .list(&ListParams::default().limit(1))
                .await
                .ok()
                .map(|_| ()))
        })
        .await
    }

    /// A namespace and the simulator, no manager yet.
    pub async fn without_manager(cluster: &Cluster, namespace: &str) -> Result<Self> {
        Self::with_simulator(cluster, namespace, simulator_config(namespace)).await
    }

    /// A namespace and the simulator with `config`, no manager yet.
    pub async fn with_simulator(
        cluster: &Cluster,
        namespace: &str,
        config: SimulatorConfig,
    ) -> Result<Self> {
        let client = cluster.client.clone();
        ensure_namespace(&client, namespace).await?;
        let (stop, stopped) = shutdown::channel();
        let simulator = tokio::spawn(Simulator::new(client.clone(), config).run(stopped));
        Ok(Self {
            client,
            namespace: namespace.to_owned(),
            simulator: Some((stop, simulator)),
            manager: None,
        })
    }

    /// Stops the manager and the simulator (deleting the simulated nodes).
    pub async fn stop(mut self) -> Result<()> {
        if let Some(manager) = self.manager.take() {
            manager.stop().await?;
        }
        if let Some((stop, task)) = self.simulator.take() {
            stop.trigger();
            tokio::time::timeout(Duration::from_secs(15), task)
                .await
                .context("the simulator did not stop")??
                .context("the simulator failed")?;
        }
        Ok(())
    }

    /// The CloneSet API of the namespace.
    pub fn clonesets(&self) -> Api<CloneSet> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// The pod API of the namespace.
    pub fn pods_api(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Creates a v1beta1 CloneSet `name` (label `app=<name>`, one container `main` at `image`) with
    /// `spec` merged over the defaults.
    pub async fn create(
        &self,
        name: &str,
        replicas: i32,
        image: &str,
        spec: Value,
    ) -> Result<CloneSet> {
        let mut object = json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "CloneSet",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "main", "image": image}]},
                },
            },
        });
        merge(&mut object["spec"], spec);
        let cloneset: CloneSet = serde_json::from_value(object)?;
        Ok(self
            .clonesets()
            .create(&PostParams::default(), &cloneset)
            .await?)
    }

    /// A JSON merge patch of the CloneSet.
    pub async fn patch(&self, name: &str, patch: Value) -> Result<CloneSet> {
        Ok(self
            .clonesets()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?)
    }

    /// Sets the image of container `main`.
    pub async fn set_image(&self, name: &str, image: &str) -> Result<CloneSet> {
        self.patch(
            name,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}),
        )
        .await
    }

    /// The CloneSet's active pods (label `app=<name>`), by name.
    pub async fn pods(&self, name: &str) -> Result<Vec<Pod>> {
        let mut pods: Vec<Pod> = self
            .pods_api()
            .list(&ListParams::default().labels(&format!("app={name}")))
            .await?
            .items
            .into_iter()
            .filter(|pod| pod.metadata.deletion_timestamp.is_none())
            .collect();
        pods.sort_by_key(ResourceExt::name_any);
        Ok(pods)
    }

    /// Waits until the CloneSet has exactly `replicas` pods, all Ready, at `image`, at the update
    /// revision, and its status says so.
    pub async fn wait_rolled_out(
        &self,
        name: &str,
        replicas: usize,
        image: &str,
    ) -> Result<Vec<Pod>> {
        crate::support::wait_for(
            &format!("{name}: {replicas} Ready pods at {image}"),
            WAIT,
            || async {
                let cloneset = self.clonesets().get(name).await?;
                let status = cloneset.status.clone().unwrap_or_default();
                let pods = self.pods(name).await?;
                let done = pods.len() == replicas
                    && pods.iter().all(|pod| is_ready(pod) && running_image(pod) == Some(image))
                    && pods.iter().all(|pod| revision(pod) == status.update_revision)
                    && status.updated_ready_replicas == i32::try_from(replicas)?
                    && status.ready_replicas == i32::try_from(replicas)?
                    && status.current_revision == status.update_revision
                    && status.observed_generation == cloneset.metadata.generation.unwrap_or(0);
                if done {
                    return Ok(Some(pods));
                }
                Err(anyhow!(
                    "{} pods {:?}; status replicas {} ready {} updatedReady {} current {} update {}",
                    pods.len(),
                    pods.iter().map(describe).collect::<Vec<_>>(),
                    status.replicas,
                    status.ready_replicas,
                    status.updated_ready_replicas,
                    status.current_revision,
                    status.update_revision
                ))
            },
        )
        .await
    }

    /// The reasons of the Events recorded about the CloneSet, in order of creation.
    pub async fn event_reasons(&self, name: &str) -> Result<Vec<(String, String)>> {
        let events: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(self.client.clone(), &self.namespace);
        let mut list: Vec<_> = events
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|event| {
                event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
                    || event.regarding.is_none()
            })
            .collect();
        list.sort_by_key(|event| event.metadata.creation_timestamp.clone().map(|t| t.0));
        Ok(list
            .into_iter()
            .map(|event| {
                (
                    event.reason.unwrap_or_default(),
                    event.note.unwrap_or_default(),
                )
            })
            .collect())
    }
}

/// Merges `patch` into `target` (objects key by key, anything else replaced).
pub fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(target.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, patch) => *target = patch,
    }
}

/// Whether the pod's Ready condition is True.
pub fn is_ready(pod: &Pod) -> bool {
    kruise_api::pod::is_ready(pod)
}

/// The image container `main` runs (from its status).
pub fn running_image(pod: &Pod) -> Option<&str> {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|s| s.name == "main"))
        .map(|status| status.image.as_str())
}

/// Container `main`'s restart count.
pub fn restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|s| s.name == "main"))
        .map_or(0, |status| status.restart_count)
}

/// The pod's `controller-revision-hash`.
pub fn revision(pod: &Pod) -> String {
    kruise_api::pod::revision(pod).to_owned()
}

/// The pod's lifecycle state label.
pub fn lifecycle(pod: &Pod) -> String {
    pod.labels()
        .get("lifecycle.apps.kruise.io/state")
        .cloned()
        .unwrap_or_default()
}

/// The node the pod runs on.
pub fn node(pod: &Pod) -> String {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default()
}

/// `name(revision, state, ready, image)` for failure messages.
pub fn describe(pod: &Pod) -> String {
    format!(
        "{}({}, {}, ready={}, {})",
        pod.name_any(),
        revision(pod),
        lifecycle(pod),
        is_ready(pod),
        running_image(pod).unwrap_or("-")
    )
}

/// Pod identity that an in-place update must keep: name -> (uid, node).
pub fn identities(pods: &[Pod]) -> BTreeMap<String, (String, String)> {
    pods.iter()
        .map(|pod| (pod.name_any(), (pod.uid().unwrap_or_default(), node(pod))))
        .collect()
}
