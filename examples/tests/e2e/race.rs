//! Measurement (not a pass/fail check, run on demand by `scripts/race.sh`): kruise-manager's workloads
//! against kube-controller-manager's on the same control plane and the same simulated nodes, in one run.
//! Each contestant creates its pods, then rolls out a new image; a pod watch times both to the event that
//! completed them (every live pod Ready, running the image asked for), and the API server's audit log counts
//! the writes each controller sent while doing so. Printed as a table at the end.
//!
//! Runs only with `KRUISE_E2E_RACE=1`, on a control plane whose kube-controller-manager runs the
//! deployment, replicaset, statefulset and daemonset controllers (`KRUISE_CP_KCM_CONTROLLERS`, which
//! `scripts/race.sh` sets); otherwise it says so and passes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube::api::{
    Api, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::discovery::ApiResource;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::audit_log::{AuditEvent, audit_log_path, read_audit_log};
use crate::cloneset_env::{Env, ManagerHandle, is_ready, running_image, simulator_config};
use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-race";
const OLD_IMAGE: &str = "nginx:1.25";
const NEW_IMAGE: &str = "nginx:1.26";

/// The pods of the replicated contestants (`KRUISE_E2E_RACE_PODS`, default 1,000).
fn pods() -> usize {
    std::env::var("KRUISE_E2E_RACE_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

/// The simulated nodes, and so the pods of the daemon contestants (`KRUISE_E2E_RACE_NODES`, default 50).
fn nodes() -> usize {
    std::env::var("KRUISE_E2E_RACE_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50)
}

/// Which controller runs a contestant (who the audit log's writes are counted for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    KubeControllerManager,
    KruiseManager,
}

impl Runner {
    fn sent(self, event: &AuditEvent) -> bool {
        match self {
            Self::KubeControllerManager => event.user_agent.starts_with("kube-controller-manager/"),
            Self::KruiseManager => event.user_agent.starts_with("kruise-manager/"),
        }
    }
}

/// One workload of the race.
struct Contestant {
    /// The table's row name.
    label: &'static str,
    /// Its object's name, and the pods' `app` label.
    name: &'static str,
    resource: ApiResource,
    runner: Runner,
    /// The `spec` over the common one (replicas, selector, template).
    spec: Value,
    /// Extra template `spec` fields (readiness gates for in-place policies).
    pod_spec: Value,
    /// How many pods it ends with.
    pods: usize,
    /// Whether `spec.replicas` is set (not for daemon sets).
    replicated: bool,
}

/// What a contestant took.
struct Outcome {
    label: &'static str,
    pods: usize,
    create: Duration,
    rollout: Duration,
    create_writes: Writes,
    rollout_writes: Writes,
}

/// The writes one controller sent in the race's namespace during one phase, by verb and resource.
#[derive(Default)]
struct Writes(BTreeMap<String, usize>);

impl Writes {
    fn count(
        events: &[AuditEvent],
        runner: Runner,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Self> {
        let mut writes = Self::default();
        for event in events {
            let Some(object) = &event.object_ref else {
                continue;
            };
            if object.namespace.as_deref() != Some(NAMESPACE) || !runner.sent(event) {
                continue;
            }
            let received = event.received()?;
            if received >= from && received < to {
                let resource = match &object.subresource {
                    Some(subresource) => format!("{}/{subresource}", object.resource),
                    None => object.resource.clone(),
                };
                *writes
                    .0
                    .entry(format!("{} {resource}", event.verb))
                    .or_default() += 1;
            }
        }
        Ok(writes)
    }

    fn total(&self) -> usize {
        self.0.values().sum()
    }

    /// `verb resource count, ...`, most first.
    fn breakdown(&self) -> String {
        let mut counts: Vec<(&String, &usize)> = self.0.iter().collect();
        counts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        counts
            .iter()
            .map(|(what, count)| format!("{what} {count}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn in_place_readiness_gate() -> Value {
    json!({"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]})
}

fn contestants() -> Vec<Contestant> {
    let pods = pods();
    let nodes = nodes();
    let deployment = resource("apps", "v1", "Deployment", "deployments");
    let statefulset = resource("apps", "v1", "StatefulSet", "statefulsets");
    let daemonset = resource("apps", "v1", "DaemonSet", "daemonsets");
    let cloneset = resource("apps.kruise.io", "v1beta1", "CloneSet", "clonesets");
    let advanced_statefulset = resource("apps.kruise.io", "v1beta1", "StatefulSet", "statefulsets");
    let advanced_daemonset = resource("apps.kruise.io", "v1beta1", "DaemonSet", "daemonsets");
    let budget = json!({"maxUnavailable": "10%", "maxSurge": 0});
    let replicated = |label, name, resource: &ApiResource, runner, spec, pod_spec| Contestant {
        label,
        name,
        resource: resource.clone(),
        runner,
        spec,
        pod_spec,
        pods,
        replicated: true,
    };
    let daemon = |label, name, resource: &ApiResource, runner, spec, pod_spec| Contestant {
        label,
        name,
        resource: resource.clone(),
        runner,
        spec,
        pod_spec,
        pods: nodes,
        replicated: false,
    };
    vec![
        replicated(
            "Deployment (kube-controller-manager)",
            "deployment",
            &deployment,
            Runner::KubeControllerManager,
            json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": budget}}),
            json!({}),
        ),
        replicated(
            "CloneSet ReCreate",
            "cloneset-recreate",
            &cloneset,
            Runner::KruiseManager,
            json!({"updateStrategy": {"rollingUpdate": {
                "podUpdatePolicy": "ReCreate", "maxUnavailable": "10%", "maxSurge": 0}}}),
            json!({}),
        ),
        replicated(
            "CloneSet InPlaceIfPossible",
            "cloneset-inplace",
            &cloneset,
            Runner::KruiseManager,
            json!({"updateStrategy": {"rollingUpdate": {
                "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "10%", "maxSurge": 0}}}),
            json!({}),
        ),
        replicated(
            "StatefulSet OrderedReady (kube-controller-manager)",
            "statefulset-ordered",
            &statefulset,
            Runner::KubeControllerManager,
            json!({"serviceName": "statefulset-ordered", "podManagementPolicy": "OrderedReady"}),
            json!({}),
        ),
        replicated(
            "StatefulSet Parallel (kube-controller-manager)",
            "statefulset-parallel",
            &statefulset,
            Runner::KubeControllerManager,
            json!({"serviceName": "statefulset-parallel", "podManagementPolicy": "Parallel"}),
            json!({}),
        ),
        replicated(
            "Advanced StatefulSet Parallel, InPlaceIfPossible",
            "asts-inplace",
            &advanced_statefulset,
            Runner::KruiseManager,
            json!({
                "serviceName": "asts-inplace",
                "podManagementPolicy": "Parallel",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                    "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "10%"}},
            }),
            in_place_readiness_gate(),
        ),
        daemon(
            "DaemonSet (kube-controller-manager)",
            "daemonset",
            &daemonset,
            Runner::KubeControllerManager,
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}}),
            json!({}),
        ),
        daemon(
            "Advanced DaemonSet Standard",
            "ads-standard",
            &advanced_daemonset,
            Runner::KruiseManager,
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                "rollingUpdateType": "Standard", "maxUnavailable": "10%"}}}),
            json!({}),
        ),
        daemon(
            "Advanced DaemonSet InPlaceIfPossible",
            "ads-inplace",
            &advanced_daemonset,
            Runner::KruiseManager,
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                "rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": "10%"}}}),
            json!({}),
        ),
    ]
}

pub async fn race_against_kube_controller_manager(cluster: &Cluster) -> Result<()> {
    if std::env::var("KRUISE_E2E_RACE").as_deref() != Ok("1") {
        eprintln!("    skipped: set KRUISE_E2E_RACE=1 (scripts/race.sh)");
        return Ok(());
    }
    let audit_log = audit_log_path(cluster)
        .context("the race counts writes in the audit log of the local control plane")?;
    let mut config = simulator_config(NAMESPACE);
    config.nodes = nodes();
    config.max_pods = 110;
    config.ready_delay = Duration::from_millis(500);
    config.restart_delay = Duration::from_millis(500);
    config.concurrency = 64;
    let mut env = Env::with_simulator(cluster, NAMESPACE, config).await?;
    let mut args = crate::cloneset_env::manager_args(NAMESPACE);
    args.push("--log-format=json".into());
    let manager =
        ManagerProcess::spawn(cluster, "race", &args, Webhooks::AsArgumentsSay, &[]).await?;
    env.manager = Some(ManagerHandle::Child(Box::new(manager)));
    env.wait_for_api().await?;
    let result = match kube_controller_manager_races(&env.client).await {
        Ok(()) => run(&env.client, &audit_log).await,
        Err(error) => Err(error),
    };
    let stopped = env.stop().await;
    let kept =
        std::env::temp_dir().join(format!("kruise-rs-race-{}-audit.log", std::process::id()));
    if std::fs::copy(&audit_log, &kept).is_ok() {
        eprintln!(
            "    the API server's audit log is kept in {}",
            kept.display()
        );
    }
    result.and(stopped)
}

async fn run(client: &Client, audit_log: &std::path::Path) -> Result<()> {
    let only = std::env::var("KRUISE_E2E_RACE_ONLY").unwrap_or_default();
    let mut outcomes = Vec::new();
    for contestant in contestants() {
        if !only.is_empty() && !only.split(',').any(|name| name == contestant.name) {
            continue;
        }
        eprintln!("    racing {} ({} pods)", contestant.label, contestant.pods);
        let outcome = race(client, audit_log, &contestant)
            .await
            .with_context(|| contestant.label)?;
        eprintln!(
            "      create {:.1} s ({}), rollout {:.1} s ({})",
            outcome.create.as_secs_f64(),
            outcome.create_writes.breakdown(),
            outcome.rollout.as_secs_f64(),
            outcome.rollout_writes.breakdown()
        );
        outcomes.push(outcome);
    }
    eprintln!(
        "    {} build of kruise-manager; pods become Ready 0.5 s after they start, and restart in place in 0.5 s",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    eprintln!(
        "    | workload | pods | create -> all Ready | image rollout | writes per pod (create / rollout) |"
    );
    eprintln!("    |---|---|---|---|---|");
    for outcome in &outcomes {
        let per_pod = |writes: usize| writes as f64 / outcome.pods.max(1) as f64;
        eprintln!(
            "    | {} | {} | {:.1} s | {:.1} s | {:.1} / {:.1} |",
            outcome.label,
            outcome.pods,
            outcome.create.as_secs_f64(),
            outcome.rollout.as_secs_f64(),
            per_pod(outcome.create_writes.total()),
            per_pod(outcome.rollout_writes.total())
        );
    }
    Ok(())
}

/// Creates the contestant, waits for its pods, rolls out the new image, waits again, deletes it and waits
/// for its pods to go.
async fn race(
    client: &Client,
    audit_log: &std::path::Path,
    contestant: &Contestant,
) -> Result<Outcome> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), NAMESPACE, &contestant.resource);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let tracker = PodTracker::start(pods.clone(), contestant.name);
    let deadline = Duration::from_secs(3600);

    let created_at = Timestamp::now();
    let started = Instant::now();
    api.create(&PostParams::default(), &manifest(contestant)?)
        .await
        .context("creating it")?;
    tracker
        .wait(deadline, |census| {
            census.live == contestant.pods && census.ready == contestant.pods
        })
        .await
        .context("waiting for its pods to be Ready")?;
    let create = started.elapsed();

    let rollout_at = Timestamp::now();
    let started = Instant::now();
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": NEW_IMAGE}]}}}});
    api.patch(
        contestant.name,
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .context("setting the new image")?;
    tracker
        .wait(deadline, |census| {
            census.live == contestant.pods && census.ready_new == contestant.pods
        })
        .await
        .context("waiting for the rollout")?;
    let rollout = started.elapsed();
    let finished_at = Timestamp::now();

    let events = read_audit_log(audit_log)?;
    let create_writes = Writes::count(&events, contestant.runner, created_at, rollout_at)?;
    let rollout_writes = Writes::count(&events, contestant.runner, rollout_at, finished_at)?;

    api.delete(contestant.name, &DeleteParams::background())
        .await
        .context("deleting it")?;
    tracker
        .wait(Duration::from_secs(900), |census| census.total == 0)
        .await
        .context("waiting for its pods to be deleted")?;
    tracker.stop();
    Ok(Outcome {
        label: contestant.label,
        pods: contestant.pods,
        create,
        rollout,
        create_writes,
        rollout_writes,
    })
}

fn manifest(contestant: &Contestant) -> Result<DynamicObject> {
    let name = contestant.name;
    let mut pod_spec = json!({"containers": [{"name": "main", "image": OLD_IMAGE}]});
    if let (Some(extra), Some(target)) = (contestant.pod_spec.as_object(), pod_spec.as_object_mut())
    {
        target.extend(extra.clone());
    }
    let mut spec = json!({
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec},
    });
    if contestant.replicated {
        spec["replicas"] = json!(contestant.pods);
    }
    if let (Some(extra), Some(target)) = (contestant.spec.as_object(), spec.as_object_mut()) {
        target.extend(extra.clone());
    }
    let object = json!({
        "apiVersion": contestant.resource.api_version,
        "kind": contestant.resource.kind,
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": spec,
    });
    Ok(serde_json::from_value(object)?)
}

/// The pods of one contestant at one watch event.
#[derive(Clone, Copy, Debug, Default)]
struct Census {
    /// Every pod, terminating ones too.
    total: usize,
    /// Pods not being deleted.
    live: usize,
    /// Live pods that are Ready.
    ready: usize,
    /// Live pods that are Ready and run the new image.
    ready_new: usize,
}

/// A pod watch keeping the [`Census`] of `app=<name>` current.
struct PodTracker {
    census: watch::Receiver<Census>,
    task: tokio::task::JoinHandle<()>,
}

impl PodTracker {
    fn start(api: Api<Pod>, name: &str) -> Self {
        let (publish, census) = watch::channel(Census::default());
        let config = watcher::Config::default().labels(&format!("app={name}"));
        let task = tokio::spawn(async move {
            let mut pods: BTreeMap<String, (bool, bool, bool)> = BTreeMap::new();
            let mut events = watcher(api, config).default_backoff().boxed();
            while let Some(item) = events.next().await {
                let Ok(event) = item else { continue };
                match event {
                    watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => {
                        let live = pod.metadata.deletion_timestamp.is_none();
                        let ready = is_ready(&pod);
                        let new = running_image(&pod) == Some(NEW_IMAGE)
                            && pod
                                .spec
                                .as_ref()
                                .and_then(|spec| spec.containers.first())
                                .and_then(|container| container.image.as_deref())
                                == Some(NEW_IMAGE);
                        pods.insert(pod.name_any(), (live, ready, new));
                    }
                    watcher::Event::Delete(pod) => {
                        pods.remove(&pod.name_any());
                    }
                    watcher::Event::Init => pods.clear(),
                    watcher::Event::InitDone => {}
                }
                let mut census = Census {
                    total: pods.len(),
                    ..Census::default()
                };
                for (live, ready, new) in pods.values() {
                    census.live += usize::from(*live);
                    census.ready += usize::from(*live && *ready);
                    census.ready_new += usize::from(*live && *ready && *new);
                }
                publish.send_replace(census);
            }
        });
        Self { census, task }
    }

    /// Waits until a census satisfies `done`.
    async fn wait(&self, timeout: Duration, done: impl Fn(&Census) -> bool) -> Result<()> {
        let mut census = self.census.clone();
        let last = Arc::new(std::sync::Mutex::new(Census::default()));
        let seen = Arc::clone(&last);
        let waited = tokio::time::timeout(
            timeout,
            census.wait_for(|now| {
                *seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = *now;
                done(now)
            }),
        )
        .await;
        match waited {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => bail!("the pod watch stopped"),
            Err(_) => {
                let last = *last
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                bail!("not done after {timeout:?}; last census {last:?}")
            }
        }
    }

    fn stop(self) {
        self.task.abort();
    }
}

/// Fails at once, instead of timing out an hour later, when kube-controller-manager does not run the
/// controllers the race needs: a Deployment of no replicas must be observed.
async fn kube_controller_manager_races(client: &Client) -> Result<()> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &resource("apps", "v1", "Deployment", "deployments"),
    );
    let name = "race-preflight";
    let object = serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "main", "image": OLD_IMAGE}]}},
        },
    }))?;
    api.create(&PostParams::default(), &object).await?;
    let observed = wait_for(
        "kube-controller-manager's deployment controller to observe a Deployment",
        Duration::from_secs(30),
        || async {
            let deployment = api.get(name).await?;
            Ok(deployment.data["status"]["observedGeneration"]
                .as_i64()
                .map(|_| ()))
        },
    )
    .await;
    api.delete(name, &DeleteParams::background()).await?;
    // Its ReplicaSet is garbage collected before the race starts, so the collector's write is not counted.
    let replica_sets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &resource("apps", "v1", "ReplicaSet", "replicasets"),
    );
    wait_for(
        "the preflight Deployment's ReplicaSet to be deleted",
        Duration::from_secs(60),
        || async {
            let listed = replica_sets
                .list(&ListParams::default().labels(&format!("app={name}")))
                .await?;
            Ok(listed.items.is_empty().then_some(()))
        },
    )
    .await?;
    observed.context(
        "kube-controller-manager does not run the deployment controller: run the race through \
         scripts/race.sh, which starts it with KRUISE_CP_KCM_CONTROLLERS",
    )
}
