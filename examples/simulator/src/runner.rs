//! The simulator's I/O: registers the nodes, watches pods (list + watch, no streaming lists), binds pending
//! pods through `pods/binding`, writes the status decided by [`super::pod_status`] through `pods/status`
//! with the pod's `resourceVersion` (a 409 means someone else wrote first: decide again from the newer pod),
//! removes terminating pods, and renews node heartbeats.

use kruise_runtime::actions::{is_conflict, is_not_found};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Binding, Node, ObjectReference, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};

use super::binding::Placement;
use super::cri_node::{CriNode, CriNodeError};
use super::identity;
use super::job_exit;
use super::node;
use super::node_fit::{self, NodeFit};
use super::options::SimulatorConfig;
use super::pod_status::{self, Behaviour};
use super::termination::{self, Termination};
use kruise_runtime::shutdown::Shutdown;

/// Why the simulator stopped or a pod could not be handled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimulatorError {
    /// A call to the API server failed.
    #[error("{action}: {source}")]
    Kube {
        /// What was being done.
        action: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// The configured selector is invalid.
    #[error("--never-ready: {0}")]
    Selector(#[from] kruise_api::label_selector::SelectorError),
    /// A containerd-backed node's runtime endpoint is invalid.
    #[error("--cri-endpoint: {0}")]
    Endpoint(#[from] kruise_runtime::cri::CriError),
    /// A containerd-backed pod could not be run or reported.
    #[error(transparent)]
    CriNode(#[from] CriNodeError),
}

impl SimulatorError {
    fn kube(action: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let action = action.into();
        move |source| Self::Kube { action, source }
    }
}

/// The node simulator: plays kubelet (and scheduler) for the configured nodes.
#[derive(Clone)]
pub struct Simulator {
    client: Client,
    config: Arc<SimulatorConfig>,
}

struct Context {
    client: Client,
    config: Arc<SimulatorConfig>,
    placement: Arc<Mutex<Placement>>,
    cri_nodes: HashMap<String, Arc<CriNode>>,
    node_fit: NodeFit,
}

impl Simulator {
    /// A simulator talking to the cluster of `client`.
    #[must_use]
    pub fn new(client: Client, config: SimulatorConfig) -> Self {
        Self {
            client,
            config: Arc::new(config),
        }
    }

    /// Creates the Node objects (or refreshes existing ones: labels, capacity, Ready).
    ///
    /// # Errors
    /// The API server refused a node.
    pub async fn register_nodes(&self) -> Result<(), SimulatorError> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        let shape = self.config.node_shape();
        for (index, name) in self.config.node_names().iter().enumerate() {
            let wanted = self.wanted_node(name, index, &shape);
            match nodes.create(&PostParams::default(), &wanted).await {
                Ok(_) => tracing::info!(node = %name, "registered node"),
                Err(error) if is_conflict(&error) => {
                    let metadata =
                        serde_json::json!({ "metadata": { "labels": wanted.metadata.labels } });
                    nodes
                        .patch(name, &PatchParams::default(), &Patch::Merge(&metadata))
                        .await
                        .map_err(SimulatorError::kube(format!("updating node {name}")))?;
                    tracing::info!(node = %name, "node exists; refreshing its status");
                }
                Err(error) => {
                    return Err(SimulatorError::kube(format!("creating node {name}"))(error));
                }
            }
            // Whether the server kept the status given at create or not, write it through the subresource.
            let status = serde_json::json!({ "status": wanted.status });
            nodes
                .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
                .await
                .map_err(SimulatorError::kube(format!(
                    "writing the status of node {name}"
                )))?;
            self.clear_not_ready_taint(&nodes, name).await?;
        }
        Ok(())
    }

    /// Removes the `node.kubernetes.io/not-ready` taint the API server puts on a registering node
    /// (admission `TaintNodesByCondition`), as kube-controller-manager's node lifecycle controller does once
    /// the node reports Ready; daemon set controllers, which do not tolerate it, then run pods there. The
    /// write is conditional on the version read, and tried again on a conflict (someone labelling the new
    /// node at the same time).
    async fn clear_not_ready_taint(
        &self,
        nodes: &Api<Node>,
        name: &str,
    ) -> Result<(), SimulatorError> {
        const ATTEMPTS: usize = 5;
        for attempt in 1..=ATTEMPTS {
            let current = nodes
                .get(name)
                .await
                .map_err(SimulatorError::kube(format!("reading node {name}")))?;
            let taints = current
                .spec
                .as_ref()
                .and_then(|spec| spec.taints.as_deref())
                .unwrap_or_default();
            let Some(kept) = node::without_not_ready_taint(taints) else {
                return Ok(());
            };
            let patch = serde_json::json!({
                "metadata": {"resourceVersion": current.metadata.resource_version},
                "spec": {"taints": kept},
            });
            match nodes
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => return Ok(()),
                Err(error) if is_conflict(&error) && attempt < ATTEMPTS => {
                    tracing::debug!(node = %name, attempt, "node changed; removing the not-ready taint again");
                }
                Err(error) => {
                    return Err(SimulatorError::kube(format!(
                        "removing the not-ready taint of node {name}"
                    ))(error));
                }
            }
        }
        Ok(())
    }

    /// The Node object of `name` as registered: the kubelet's labels and `--node-label`.
    fn wanted_node(&self, name: &str, index: usize, shape: &node::NodeShape) -> Node {
        let mut wanted = node::node(name, index, shape, Timestamp::now());
        wanted
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .extend(self.config.extra_labels(name));
        wanted
    }

    /// Deletes the Node objects.
    ///
    /// # Errors
    /// The API server refused a deletion (a node already gone is fine).
    pub async fn delete_nodes(&self) -> Result<(), SimulatorError> {
        let nodes: Api<Node> = Api::all(self.client.clone());
        for name in self.config.node_names() {
            match nodes.delete(&name, &DeleteParams::default()).await {
                Ok(_) => tracing::info!(node = %name, "deleted node"),
                Err(error) if is_not_found(&error) => {}
                Err(error) => {
                    return Err(SimulatorError::kube(format!("deleting node {name}"))(error));
                }
            }
        }
        Ok(())
    }

    /// Registers the nodes, then binds and runs pods until `shutdown`.
    ///
    /// # Errors
    /// Registering the nodes failed (later API errors are logged and retried, not returned).
    pub async fn run(self, shutdown: Shutdown) -> Result<(), SimulatorError> {
        if let Some(selector) = &self.config.never_ready {
            kruise_api::label_selector::validate(selector)?;
        }
        let mut cri_nodes = HashMap::new();
        for (node, endpoint) in &self.config.cri_endpoints {
            let cri = CriNode::new(endpoint, self.config.pod_log_dir.clone())?;
            cri_nodes.insert(node.clone(), Arc::new(cri));
        }
        self.register_nodes().await?;
        let heartbeats = tokio::spawn(heartbeat(self.clone(), shutdown.clone()));

        let placement = Arc::new(Mutex::new(Placement::new(
            self.config.binding,
            self.config.node_names(),
            self.config.max_pods,
        )));
        let pods: Api<Pod> = match &self.config.namespace {
            Some(namespace) => Api::namespaced(self.client.clone(), namespace),
            None => Api::all(self.client.clone()),
        };
        let (reader, writer) = reflector::store();
        let tracked = Arc::clone(&placement);
        let stream = reflector::reflector(writer, watcher(pods, watcher::Config::default()))
            .inspect(move |event| track(&tracked, event))
            .default_backoff()
            .applied_objects();
        let shape = self.config.node_shape();
        let node_fit = NodeFit::new(
            self.config
                .node_names()
                .iter()
                .enumerate()
                .map(|(index, name)| self.wanted_node(name, index, &shape))
                .collect(),
        );
        let context = Arc::new(Context {
            client: self.client.clone(),
            config: Arc::clone(&self.config),
            placement,
            cri_nodes,
            node_fit,
        });
        tracing::info!(nodes = ?self.config.node_names(), binding = ?self.config.binding, "node simulator running");
        Controller::for_stream(stream, reader)
            .with_config(ControllerConfig::default().concurrency(self.config.concurrency))
            .graceful_shutdown_on(shutdown.wait())
            .run(reconcile, on_error, context)
            .for_each(|result| async move {
                if let Err(error) = result {
                    tracing::debug!(%error, "pod reconcile failed");
                }
            })
            .await;
        heartbeats.abort();
        if self.config.delete_nodes_on_exit {
            self.delete_nodes().await?;
        }
        tracing::info!("node simulator stopped");
        Ok(())
    }
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name_any())
}

/// Keeps the placement in step with the watch: what is bound where, what went away.
fn track(placement: &Mutex<Placement>, event: &Result<watcher::Event<Pod>, watcher::Error>) {
    let Ok(event) = event else { return };
    let mut placement = placement.lock().unwrap_or_else(PoisonError::into_inner);
    match event {
        watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => {
            match pod.spec.as_ref().and_then(|spec| spec.node_name.as_deref()) {
                Some(node) if !is_finished(pod) => placement.observe(&pod_key(pod), node),
                _ => placement.forget(&pod_key(pod)),
            }
        }
        watcher::Event::Delete(pod) => placement.forget(&pod_key(pod)),
        watcher::Event::Init | watcher::Event::InitDone => {}
    }
}

fn is_finished(pod: &Pod) -> bool {
    matches!(
        pod.status
            .as_ref()
            .and_then(|status| status.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

async fn reconcile(pod: Arc<Pod>, context: Arc<Context>) -> Result<Action, SimulatorError> {
    let config = &context.config;
    let now = Timestamp::now();
    let name = pod.name_any();
    let namespace = pod.namespace().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
    let node = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.node_name.clone())
        .unwrap_or_default();
    let node_index = context
        .placement
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .nodes()
        .iter()
        .position(|ours| *ours == node);

    if node.is_empty() {
        return bind(&pod, &api, &context).await;
    }
    let Some(node_index) = node_index else {
        return Ok(Action::await_change());
    };
    if let Some(cri) = context.cri_nodes.get(&node) {
        let next = cri
            .reconcile(&pod, &api, &identity::node_ip(node_index))
            .await?;
        return Ok(next.map_or_else(Action::await_change, Action::requeue));
    }
    match termination::decide(&pod, config.termination_delay, now) {
        Termination::NotTerminating => {}
        Termination::Wait(wait) => return Ok(Action::requeue(wait)),
        Termination::DeleteNow => {
            let params = DeleteParams {
                grace_period_seconds: Some(0),
                preconditions: Some(Preconditions {
                    uid: pod.metadata.uid.clone(),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            return match api.delete(&name, &params).await {
                Ok(_) => {
                    tracing::info!(pod = %pod_key(&pod), %node, "containers stopped; pod removed");
                    Ok(Action::await_change())
                }
                Err(error) if is_conflict(&error) || is_not_found(&error) => {
                    Ok(Action::await_change())
                }
                Err(error) => Err(SimulatorError::kube(format!(
                    "deleting pod {}",
                    pod_key(&pod)
                ))(error)),
            };
        }
    }
    if is_finished(&pod) {
        return Ok(Action::await_change());
    }

    let behaviour = Behaviour {
        ready_delay: config.ready_delay,
        restart_delay: config.restart_delay,
        extra_delay: if config.slow_nodes.contains(&node) {
            config.slow_node_delay
        } else {
            Duration::ZERO
        },
        never_ready: config.never_ready.as_ref().is_some_and(|selector| {
            kruise_api::label_selector::matches(selector, pod.labels()).unwrap_or(false)
        }),
        host_ip: identity::node_ip(node_index),
    };
    let decision = pod_status::decide(&pod, &behaviour, now);
    let decision = job_exit::apply(&pod, decision, config.job_run_duration, now);
    if let Some(status) = decision.status {
        let mut updated = (*pod).clone();
        report_changes(&pod, &status, &node);
        updated.status = Some(status);
        match api
            .replace_status(&name, &PostParams::default(), &updated)
            .await
        {
            Ok(_) => {}
            // Someone wrote first (or the pod is gone): the watch brings the newer pod, decide again then.
            Err(error) if is_conflict(&error) || is_not_found(&error) => {
                tracing::debug!(pod = %pod_key(&pod), %error, "status write lost a race; retrying");
                return Ok(Action::requeue(Duration::from_millis(200)));
            }
            Err(error) => {
                return Err(SimulatorError::kube(format!(
                    "writing the status of pod {}",
                    pod_key(&pod)
                ))(error));
            }
        }
    }
    Ok(decision
        .recheck_after
        .map_or_else(Action::await_change, Action::requeue))
}

/// Binds a pending pod to a node of ours, unless it is not ours to bind.
async fn bind(pod: &Pod, api: &Api<Pod>, context: &Context) -> Result<Action, SimulatorError> {
    let spec_scheduler = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.scheduler_name.as_deref());
    if pod.metadata.deletion_timestamp.is_some()
        || is_finished(pod)
        || spec_scheduler.unwrap_or("default-scheduler") != context.config.scheduler_name
    {
        return Ok(Action::await_change());
    }
    let key = pod_key(pod);
    // A daemon pod names its node in its required node affinity (`metadata.name In [node]`): only that
    // node will do, and a node of somebody else's is left to its scheduler.
    let pinned = kruise_schedule::daemonset::node_affinity::target_node(pod.spec.as_ref());
    let constrained = node_fit::is_constrained(pod.spec.as_ref());
    let chosen = {
        let mut placement = context
            .placement
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match pinned {
            Some(node) if !placement.owns(node) => return Ok(Action::await_change()),
            Some(node) => placement.reserve_on(&key, node),
            None if constrained => {
                placement.reserve_among(&key, |node| context.node_fit.fits(pod.spec.as_ref(), node))
            }
            None => placement.reserve(&key),
        }
    };
    let Some(node) = chosen else {
        tracing::warn!(pod = %key, "no simulated node has room for it; the pod stays pending");
        if pinned.is_none() {
            mark_unschedulable(pod, api).await?;
        }
        return Ok(Action::requeue(Duration::from_secs(5)));
    };
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some(pod.name_any()),
            namespace: pod.namespace(),
            uid: None,
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(node.clone()),
            ..ObjectReference::default()
        },
    };
    let result: Result<serde_json::Value, _> = api
        .create_subresource("binding", &pod.name_any(), &PostParams::default(), &binding)
        .await;
    match result {
        Ok(_) => {
            tracing::info!(pod = %key, %node, "bound pod");
            Ok(Action::await_change())
        }
        Err(error) => {
            context
                .placement
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .forget(&key);
            match error {
                // Already bound (by another simulator) or gone: the watch tells the rest.
                error if is_conflict(&error) || is_not_found(&error) => Ok(Action::await_change()),
                other => Err(SimulatorError::kube(format!("binding pod {key} to {node}"))(other)),
            }
        }
    }
}

/// Marks a pod no node fits `PodScheduled=False`, reason `Unschedulable` (once).
async fn mark_unschedulable(pod: &Pod, api: &Api<Pod>) -> Result<(), SimulatorError> {
    let Some(patch) = node_fit::unschedulable_patch(
        pod,
        "no simulated node matches the pod's node affinity or has room",
        Timestamp::now(),
    ) else {
        return Ok(());
    };
    match api
        .patch_status(
            &pod.name_any(),
            &PatchParams::default(),
            &Patch::Strategic(&patch),
        )
        .await
    {
        Ok(_) => {
            tracing::info!(pod = %pod_key(pod), "marked unschedulable");
            Ok(())
        }
        Err(error) if is_not_found(&error) => Ok(()),
        Err(error) => Err(SimulatorError::kube(format!(
            "marking pod {} unschedulable",
            pod_key(pod)
        ))(error)),
    }
}

/// Logs what a status write means: the pod started, a container restarted, readiness flipped.
fn report_changes(pod: &Pod, new: &k8s_openapi::api::core::v1::PodStatus, node: &str) {
    let key = pod_key(pod);
    let old = pod.status.clone().unwrap_or_default();
    if old.phase != new.phase {
        tracing::info!(pod = %key, %node, phase = new.phase.as_deref().unwrap_or_default(), "pod phase");
    }
    for container in new.container_statuses.iter().flatten() {
        let before = old
            .container_statuses
            .iter()
            .flatten()
            .find(|cs| cs.name == container.name);
        if let Some(before) = before
            && container.restart_count > before.restart_count
        {
            tracing::info!(pod = %key, container = %container.name, image = %container.image,
                restart_count = container.restart_count, "restarted container with its new image");
        }
    }
    let ready = |status: &k8s_openapi::api::core::v1::PodStatus| {
        status
            .conditions
            .iter()
            .flatten()
            .find(|condition| condition.type_ == "Ready")
            .map(|condition| condition.status.clone())
    };
    if ready(&old) != ready(new) {
        tracing::info!(pod = %key, ready = ready(new).unwrap_or_default(), "pod readiness");
    }
}

#[allow(clippy::needless_pass_by_value)] // the signature kube-runtime's Controller::run expects
fn on_error(pod: Arc<Pod>, error: &SimulatorError, _context: Arc<Context>) -> Action {
    tracing::warn!(pod = %pod_key(&pod), %error, "retrying in 1s");
    Action::requeue(Duration::from_secs(1))
}

/// Renews the node heartbeats until shutdown; re-registers nodes that were deleted under us.
async fn heartbeat(simulator: Simulator, shutdown: Shutdown) {
    let nodes: Api<Node> = Api::all(simulator.client.clone());
    let mut ticker = tokio::time::interval(
        simulator
            .config
            .heartbeat_interval
            .max(Duration::from_secs(1)),
    );
    ticker.tick().await;
    loop {
        tokio::select! {
            () = shutdown.clone().wait() => return,
            _ = ticker.tick() => {}
        }
        let patch = node::heartbeat_patch(Timestamp::now());
        let mut missing = false;
        for name in simulator.config.node_names() {
            match nodes
                .patch_status(&name, &PatchParams::default(), &Patch::Strategic(&patch))
                .await
            {
                Ok(_) => {}
                Err(error) if is_not_found(&error) => missing = true,
                Err(error) => tracing::warn!(node = %name, %error, "heartbeat failed"),
            }
        }
        if missing && let Err(error) = simulator.register_nodes().await {
            tracing::warn!(%error, "re-registering nodes failed");
        }
    }
}
