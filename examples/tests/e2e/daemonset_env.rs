//! The environment of the Advanced DaemonSet scenarios: a namespace of their own, node simulators for it (in
//! process; one per group of nodes, so a scenario can add nodes mid-rollout), every node of theirs
//! labelled `e2e-ads/pool=<namespace>` (the scenarios' DaemonSets select these nodes only: the cluster may
//! hold other scenarios' nodes), and kruise-manager with only the Advanced DaemonSet controller (in
//! process), plus helpers to create, patch and read DaemonSets and their pods.

use std::time::Duration;

use anyhow::{Context as _, Result, anyhow};
use clap::Parser;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_manager::daemonset::{DaemonSetArgs, DaemonSetController};
use kruise_manager::{Manager, ManagerOptions};
use kruise_runtime::controllers::ControllerSet;
use kruise_runtime::shutdown::{self, Trigger};
use kruise_simulator::{Simulator, SimulatorConfig};
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::support::{Cluster, ensure_namespace, wait_for};

/// How long a DaemonSet may take to reach a state in these scenarios.
pub const WAIT: Duration = Duration::from_secs(90);

/// The node label that confines a scenario's DaemonSets to its own nodes.
pub const POOL_LABEL: &str = "e2e-ads/pool";

/// The taints the control plane may put on simulated nodes (they have no kubelet Lease): the scenarios'
/// pods tolerate them, with every effect.
const LIFECYCLE_TAINTS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    options: ManagerOptions,
    #[command(flatten)]
    daemonset: DaemonSetArgs,
}

type SimulatorTask = (
    Trigger,
    JoinHandle<Result<(), kruise_simulator::SimulatorError>>,
);

/// A scenario's namespace with its simulators and manager.
pub struct DaemonSetEnv {
    /// The client.
    pub client: Client,
    /// The namespace.
    pub namespace: String,
    /// The names of the scenario's nodes so far.
    pub nodes: Vec<String>,
    simulators: Vec<SimulatorTask>,
    manager: Option<(
        Trigger,
        JoinHandle<Result<(), kruise_manager::ManagerError>>,
    )>,
}

impl DaemonSetEnv {
    /// A namespace, `nodes` simulated nodes in the pool and an in-process manager running the Advanced
    /// DaemonSet controller for the namespace.
    pub async fn start(cluster: &Cluster, namespace: &str, nodes: usize) -> Result<Self> {
        crate::cloneset_env::init_logs();
        let client = cluster.client.clone();
        ensure_namespace(&client, namespace).await?;
        let mut env = Self {
            client,
            namespace: namespace.to_owned(),
            nodes: Vec::new(),
            simulators: Vec::new(),
            manager: None,
        };
        env.add_nodes(namespace, nodes).await?;
        // The manager runs with the manifests' ServiceAccount and roles, not the suite's admin token.
        let kubeconfig =
            crate::identities::manager_kubeconfig(cluster, namespace, "kruise-manager").await?;
        let manager_client = crate::support::client_for(&kubeconfig).await?;
        let cli = Cli::try_parse_from([
            "kruise-manager".to_owned(),
            format!("--namespace={namespace}"),
            "--no-webhook".into(),
            "--leader-elect=false".into(),
            format!("--daemonset-namespace={namespace}"),
            "--shutdown-timeout=5s".into(),
            "--metrics-bind-address=127.0.0.1:0".into(),
        ])?;
        let mut controllers = ControllerSet::new();
        controllers.register(DaemonSetController::new(
            cli.daemonset
                .config(&cli.options.feature_gates)
                .map_err(anyhow::Error::msg)?,
        ));
        let (stop, stopped) = shutdown::channel();
        let task =
            tokio::spawn(Manager::new(cli.options, controllers).run(manager_client, stopped));
        env.manager = Some((stop, task));
        wait_for("the v1beta1 DaemonSet API", WAIT, || async {
            Ok(env
                .daemonsets()
                .list(&ListParams::default().limit(1))
                .await
                .ok()
                .map(|_| ()))
        })
        .await?;
        Ok(env)
    }

    /// Starts a simulator for `count` more nodes named `<prefix>-<index>`, waits for them, and labels them
    /// into the pool; their names.
    pub async fn add_nodes(&mut self, prefix: &str, count: usize) -> Result<Vec<String>> {
        let config = SimulatorConfig {
            nodes: count,
            node_prefix: prefix.to_owned(),
            namespace: Some(self.namespace.clone()),
            ready_delay: Duration::from_millis(300),
            restart_delay: Duration::from_millis(700),
            delete_nodes_on_exit: true,
            ..SimulatorConfig::default()
        };
        let names = config.node_names();
        let (stop, stopped) = shutdown::channel();
        let task = tokio::spawn(Simulator::new(self.client.clone(), config).run(stopped));
        self.simulators.push((stop, task));
        let nodes: Api<Node> = Api::all(self.client.clone());
        for name in &names {
            wait_for(&format!("node {name} registered"), WAIT, || async {
                Ok(nodes.get_opt(name).await?.map(|_| ()))
            })
            .await?;
            let patch = json!({"metadata": {"labels": {POOL_LABEL: self.namespace}}});
            nodes
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
        self.nodes.extend(names.iter().cloned());
        Ok(names)
    }

    /// Sets (or with `None` removes) the label `key` on node `name`.
    pub async fn label_node(&self, name: &str, key: &str, value: Option<&str>) -> Result<()> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        let patch = json!({"metadata": {"labels": {key: value}}});
        nodes
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    /// Sets (`Some(effect)`) or removes (`None`) the taint `key=e2e` on node `name`, keeping its other taints
    /// (conditional on the node's `resourceVersion`, retried on a conflict with a heartbeat).
    pub async fn taint_node(&self, name: &str, key: &str, effect: Option<&str>) -> Result<()> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        wait_for(&format!("taint {key} on node {name} written"), WAIT, || async {
            let current = nodes.get(name).await?;
            let mut taints: Vec<Value> = current
                .spec
                .and_then(|spec| spec.taints)
                .unwrap_or_default()
                .into_iter()
                .filter(|taint| taint.key != key)
                .map(serde_json::to_value)
                .collect::<Result<_, _>>()?;
            taints.extend(effect.map(|effect| json!({"key": key, "value": "e2e", "effect": effect})));
            let patch = json!({"metadata": {"resourceVersion": current.metadata.resource_version},
                "spec": {"taints": taints}});
            match nodes
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => Ok(Some(())),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
                Err(error) => Err(error.into()),
            }
        })
        .await
    }

    /// Cordons (`true`) or uncordons node `name` (`spec.unschedulable`).
    pub async fn cordon(&self, name: &str, cordoned: bool) -> Result<()> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        let patch = json!({"spec": {"unschedulable": cordoned.then_some(true)}});
        nodes
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    /// Waits until exactly `nodes` run one live Ready pod of the DaemonSet (`selector` finds its pods) and
    /// the status counts them as desired.
    pub async fn wait_pods_on(&self, name: &str, selector: &str, nodes: &[&str]) -> Result<()> {
        let mut expected: Vec<String> = nodes.iter().map(|node| (*node).to_owned()).collect();
        expected.sort();
        wait_for(
            &format!("{name}: one Ready pod on each of {expected:?}"),
            WAIT,
            || async {
                let status = self
                    .daemonsets()
                    .get(name)
                    .await?
                    .status
                    .unwrap_or_default();
                let pods = self.pods(selector).await?;
                let mut on: Vec<String> = pods.iter().map(node_of).collect();
                on.sort();
                let done = on == expected
                    && pods.iter().all(kruise_api::pod::is_ready)
                    && status.desired_number_scheduled == i32::try_from(expected.len())?
                    && status.number_ready == status.desired_number_scheduled;
                if done {
                    return Ok(Some(()));
                }
                Err(anyhow!(
                    "pods {:?}; status desired {} ready {}",
                    pods.iter().map(describe).collect::<Vec<_>>(),
                    status.desired_number_scheduled,
                    status.number_ready
                ))
            },
        )
        .await
    }

    /// Deletes the scenario's DaemonSets (later scenarios' managers watch every namespace), then stops the
    /// manager and the simulators (deleting the simulated nodes); `result` first.
    pub async fn stop(mut self, result: Result<()>) -> Result<()> {
        let mut stopped = self
            .daemonsets()
            .delete_collection(&Default::default(), &ListParams::default())
            .await
            .map(drop)
            .context("deleting the scenario's DaemonSets");
        if let Some((stop, task)) = self.manager.take() {
            stop.trigger();
            let manager = match tokio::time::timeout(Duration::from_secs(15), task).await {
                Ok(Ok(Ok(()))) => Ok(()),
                Ok(Ok(Err(error))) => Err(anyhow!(error).context("the manager failed")),
                Ok(Err(error)) => Err(anyhow!(error).context("the manager task")),
                Err(_) => Err(anyhow!("the manager did not stop")),
            };
            stopped = stopped.and(manager);
        }
        for (stop, task) in self.simulators.drain(..) {
            stop.trigger();
            let finished = tokio::time::timeout(Duration::from_secs(15), task)
                .await
                .context("a simulator did not stop")
                .and_then(|joined| Ok(joined??));
            stopped = stopped.and(finished);
        }
        result.and(stopped)
    }

    /// The v1beta1 DaemonSet API of the namespace.
    pub fn daemonsets(&self) -> Api<DaemonSet> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// The pod API of the namespace.
    pub fn pods_api(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Confines a DaemonSet (a JSON object of any version) to the pool's nodes and lets its pods tolerate
    /// the lifecycle taints of simulated nodes; sets its namespace.
    pub fn confine(&self, object: &mut Value) {
        object["metadata"]["namespace"] = json!(self.namespace);
        let spec = &mut object["spec"]["template"]["spec"];
        spec["nodeSelector"][POOL_LABEL] = json!(self.namespace);
        let tolerations: Vec<Value> = LIFECYCLE_TAINTS
            .iter()
            .map(|key| json!({"key": key, "operator": "Exists"}))
            .collect();
        spec["tolerations"] = Value::Array(tolerations);
    }

    /// Creates a v1beta1 DaemonSet `name` (label `app=<name>`, one container `main` at `image`) with
    /// `spec` merged over that, confined to the pool.
    pub async fn create(&self, name: &str, image: &str, spec: Value) -> Result<DaemonSet> {
        let mut object = json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "DaemonSet",
            "metadata": {"name": name},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "main", "image": image}]},
                },
            },
        });
        merge(&mut object["spec"], spec);
        self.confine(&mut object);
        let daemonset: DaemonSet = serde_json::from_value(object)?;
        Ok(self
            .daemonsets()
            .create(&PostParams::default(), &daemonset)
            .await?)
    }

    /// A JSON merge patch of the DaemonSet.
    pub async fn patch(&self, name: &str, patch: Value) -> Result<DaemonSet> {
        Ok(self
            .daemonsets()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?)
    }

    /// Sets the image of the template's first container, named `container`.
    pub async fn set_image(&self, name: &str, container: &str, image: &str) -> Result<DaemonSet> {
        self.patch(
            name,
            json!({"spec": {"template": {"spec": {"containers": [{"name": container, "image": image}]}}}}),
        )
        .await
    }

    /// The live pods (no deletion timestamp) matching `selector`, by name.
    pub async fn pods(&self, selector: &str) -> Result<Vec<Pod>> {
        let mut pods: Vec<Pod> = self
            .pods_api()
            .list(&ListParams::default().labels(selector))
            .await?
            .items
            .into_iter()
            .filter(|pod| pod.metadata.deletion_timestamp.is_none())
            .collect();
        pods.sort_by_key(ResourceExt::name_any);
        Ok(pods)
    }

    /// Waits until every node of the pool runs exactly one live pod of the DaemonSet (`selector` finds its
    /// pods), Ready, running `image` in container `container`, at the update revision, and the status says
    /// so for the whole pool.
    pub async fn wait_rolled_out(
        &self,
        name: &str,
        selector: &str,
        container: &str,
        image: &str,
    ) -> Result<Vec<Pod>> {
        let nodes = self.nodes.len();
        wait_for(
            &format!("{name}: one Ready pod at {image} on each of {nodes} nodes"),
            WAIT,
            || async {
                let daemonset = self.daemonsets().get(name).await?;
                let status = daemonset.status.clone().unwrap_or_default();
                let pods = self.pods(selector).await?;
                let mut on: Vec<String> = pods.iter().map(node_of).collect();
                on.sort();
                let mut expected = self.nodes.clone();
                expected.sort();
                let count = i32::try_from(nodes)?;
                let done = on == expected
                    && pods.iter().all(|pod| {
                        kruise_api::pod::is_ready(pod)
                            && running_image(pod, container) == Some(image)
                            && revision(pod) == status.update_revision
                    })
                    && status.desired_number_scheduled == count
                    && status.current_number_scheduled == count
                    && status.updated_number_scheduled == count
                    && status.number_ready == count
                    && status.number_available == count
                    && status.number_misscheduled == 0
                    && status.observed_generation == daemonset.metadata.generation.unwrap_or(0);
                if done {
                    return Ok(Some(pods));
                }
                Err(anyhow!(
                    "pods {:?}; status desired {} current {} updated {} ready {} available {} revision {}",
                    pods.iter().map(describe).collect::<Vec<_>>(),
                    status.desired_number_scheduled,
                    status.current_number_scheduled,
                    status.updated_number_scheduled,
                    status.number_ready,
                    status.number_available,
                    status.update_revision
                ))
            },
        )
        .await
    }

    /// The Events about `name` once `enough` says they are all there (Events are published in the
    /// background, so the last ones may still be on their way when a rollout is observed complete).
    pub async fn events_when(
        &self,
        name: &str,
        enough: impl Fn(&[(String, String)]) -> bool,
    ) -> Result<Vec<(String, String)>> {
        wait_for(&format!("the Events about {name}"), WAIT, || async {
            let reasons = self.event_reasons(name).await?;
            if enough(&reasons) {
                return Ok(Some(reasons));
            }
            Err(anyhow!("Events so far: {reasons:?}"))
        })
        .await
    }

    /// The reasons and messages of the Events recorded about the object `name`, in order of creation.
    pub async fn event_reasons(&self, name: &str) -> Result<Vec<(String, String)>> {
        let events: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(self.client.clone(), &self.namespace);
        let mut list: Vec<_> = events
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|event| event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
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

fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(target.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, patch) => *target = patch,
    }
}

/// The node a daemon pod is for: its `spec.nodeName`, or before binding the node its required node
/// affinity names.
pub fn node_of(pod: &Pod) -> String {
    kruise_schedule::daemonset::node_affinity::target_node(pod.spec.as_ref())
        .unwrap_or_default()
        .to_owned()
}

/// The image container `container` runs (from its status).
pub fn running_image<'a>(pod: &'a Pod, container: &str) -> Option<&'a str> {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|s| s.name == container))
        .map(|status| status.image.as_str())
}

/// The restart count of container `container`.
pub fn restarts(pod: &Pod, container: &str) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|s| s.name == container))
        .map_or(0, |status| status.restart_count)
}

/// The pod's `controller-revision-hash`.
pub fn revision(pod: &Pod) -> String {
    kruise_api::pod::revision(pod).to_owned()
}

/// `name(node, revision, ready)` for failure messages.
pub fn describe(pod: &Pod) -> String {
    format!(
        "{}({}, {}, ready={})",
        pod.name_any(),
        node_of(pod),
        revision(pod),
        kruise_api::pod::is_ready(pod)
    )
}
