//! The `custom_operator` example (`examples/examples/custom_operator/`) is its own controller: it installs the
//! PodFleet CRD and rolls out the pods of a PodFleet with the CloneSet planner, with no kruise-manager running.
//! The node simulator plays kubelet for the scenario's namespace.
//!
//! A fleet of 4 is created and must get 4 Ready pods; its image is changed in place with `maxUnavailable: 1`
//! while a pod watch counts the unavailable pods after every event (never more than 1, and the update must be
//! seen making one unavailable); the same pods must end at the new image, restarted once; the fleet is scaled
//! to 2, then updated by recreation (`inPlace: false`), again within `maxUnavailable: 1`. The example is stopped with SIGINT (exit 0) and must have printed one line per action with the
//! planner's rule; run again with `--exit-when-rolled-out`, it exits 0 on its own.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail, ensure};
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{
    ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::cloneset_env::{Env, describe, is_ready, restarts, running_image};
use crate::cluster_examples::example_binary;
use crate::support::{Cluster, Process, wait_for};

const NAMESPACE: &str = "e2e-custom-operator";
const FLEET: &str = "fleet";
/// The label the example puts on a fleet's pods.
const FLEET_LABEL: &str = "demo.kruise-rs.io/fleet";
const WAIT: Duration = Duration::from_secs(30);

pub async fn custom_operator_rolls_out_its_own_crd(cluster: &Cluster) -> Result<()> {
    let binary = example_binary("custom_operator")?;
    let env = Env::without_manager(cluster, NAMESPACE).await?;
    let result = scenario(cluster, &env, &binary).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn scenario(cluster: &Cluster, env: &Env, binary: &Path) -> Result<()> {
    let program = binary.to_str().context("the example's path is not UTF-8")?;
    let mut operator = Process::spawn(
        program,
        &[NAMESPACE.to_owned()],
        &cluster.kubeconfig,
        cluster.log("custom-operator"),
    )?;
    let fleets = fleet_api(env);
    // The example installs the CRD: wait until PodFleets are served.
    wait_for(
        "the PodFleet API (installed by the example)",
        WAIT,
        || async {
            Ok(fleets
                .list(&ListParams::default().limit(1))
                .await
                .ok()
                .map(|_| ()))
        },
    )
    .await
    .with_context(|| format!("the example's log:\n{}", operator.tail()))?;

    // The CRD's schema (from the example's Rust types) refuses a negative replica count.
    let negative: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "demo.kruise-rs.io/v1", "kind": "PodFleet",
        "metadata": {"name": "negative", "namespace": NAMESPACE},
        "spec": {"replicas": -1, "image": "nginx:1.24"},
    }))?;
    match fleets.create(&PostParams::default(), &negative).await {
        Err(kube::Error::Api(status))
            if status.code == 422 && status.message.contains("spec.replicas") => {}
        other => bail!("a PodFleet of -1 replicas: {other:?}"),
    }

    let fleet: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "demo.kruise-rs.io/v1", "kind": "PodFleet",
        "metadata": {"name": FLEET, "namespace": NAMESPACE},
        "spec": {"replicas": 4, "image": "nginx:1.24", "maxUnavailable": 1, "inPlace": true},
    }))?;
    let uid = fleets
        .create(&PostParams::default(), &fleet)
        .await?
        .uid()
        .context("the created PodFleet has no uid")?;
    let before = wait_rolled_out(env, &uid, 4, "nginx:1.24", 1)
        .await
        .with_context(|| format!("the example's log:\n{}", operator.tail()))?;

    // The in-place update, watched: never more than maxUnavailable pods unavailable.
    let watch = UnavailableWatch::start(env, 4).await?;
    fleets
        .patch(
            FLEET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"image": "nginx:1.25"}})),
        )
        .await?;
    let after = wait_rolled_out(env, &uid, 4, "nginx:1.25", 2)
        .await
        .with_context(|| format!("the example's log:\n{}", operator.tail()))?;
    let most = watch.stop().await?;
    ensure!(
        most == 1,
        "{most} pods unavailable at once during the in-place update: want exactly 1 (maxUnavailable 1)"
    );
    ensure!(
        uids(&before) == uids(&after),
        "the update replaced pods instead of updating them in place"
    );
    ensure!(
        after.iter().all(|pod| restarts(pod) == 1),
        "restart counts after the in-place update: {:?}",
        after.iter().map(restarts).collect::<Vec<_>>()
    );

    fleets
        .patch(
            FLEET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await?;
    let scaled = wait_rolled_out(env, &uid, 2, "nginx:1.25", 3)
        .await
        .with_context(|| format!("the example's log:\n{}", operator.tail()))?;

    // A recreate update (`inPlace: false`): new pods replace the old ones, one at a time.
    let watch = UnavailableWatch::start(env, 2).await?;
    fleets
        .patch(
            FLEET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"image": "nginx:1.26", "inPlace": false}})),
        )
        .await?;
    let recreated = wait_rolled_out(env, &uid, 2, "nginx:1.26", 4)
        .await
        .with_context(|| format!("the example's log:\n{}", operator.tail()))?;
    let most = watch.stop().await?;
    ensure!(
        most == 1,
        "{most} pods unavailable at once during the recreate update: want exactly 1 (maxUnavailable 1)"
    );
    ensure!(
        recreated
            .iter()
            .all(|pod| !uids(&scaled).contains(&pod.uid())),
        "the recreate update kept pods"
    );

    // Ctrl-C: a graceful stop with exit code 0.
    let status = interrupt(&mut operator).await?;
    let log = std::fs::read_to_string(&operator.log)?;
    ensure!(
        status.success(),
        "the example exited with {status} after SIGINT:\n{log}"
    );
    eprintln!("    custom_operator printed:");
    for line in log.lines() {
        eprintln!("      {line}");
    }
    for (action, rule) in [
        ("createPod", "scale-up at the update revision"),
        ("updateInPlace", "update: position"),
        ("deletePod", "scale-down: ranked"),
        ("markSpecifiedDelete", "recreate (policy ReCreate)"),
        ("deletePod", "specified for deletion"),
    ] {
        ensure!(
            log.lines().any(
                |line| line.starts_with(&format!("{NAMESPACE}/{FLEET}: {action} "))
                    && line.contains(rule)
            ),
            "the example logged no {action} line with {rule:?}:\n{log}"
        );
    }
    ensure!(
        log.lines()
            .filter(|line| line.contains(": createPod "))
            .count()
            == 6,
        "the example did not create exactly 6 pods (4, then 2 recreated):\n{log}"
    );

    // Started again on a rolled-out fleet, `--exit-when-rolled-out` ends it by itself.
    let mut again = Process::spawn(
        program,
        &[NAMESPACE.to_owned(), "--exit-when-rolled-out".to_owned()],
        &cluster.kubeconfig,
        cluster.log("custom-operator-exit"),
    )?;
    let status = tokio::time::timeout(WAIT, again.child.wait())
        .await
        .with_context(|| format!("--exit-when-rolled-out did not exit:\n{}", again.tail()))??;
    let log = std::fs::read_to_string(&again.log)?;
    ensure!(
        status.success(),
        "--exit-when-rolled-out exited with {status}:\n{log}"
    );
    ensure!(
        log.contains(&format!(
            "every PodFleet of namespace {NAMESPACE} is rolled out"
        )),
        "--exit-when-rolled-out printed:\n{log}"
    );
    fleets.delete(FLEET, &Default::default()).await?;
    Ok(())
}

/// The PodFleet API of the scenario's namespace (the test does not share the example's Rust types).
fn fleet_api(env: &Env) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "demo.kruise-rs.io",
        "v1",
        "PodFleet",
    ));
    Api::namespaced_with(env.client.clone(), NAMESPACE, &resource)
}

/// The active pods the fleet with `uid` controls, by name.
async fn fleet_pods(env: &Env, uid: &str) -> Result<Vec<Pod>> {
    let mut pods: Vec<Pod> = env
        .pods_api()
        .list(&ListParams::default().labels(&format!("{FLEET_LABEL}={FLEET}")))
        .await?
        .items
        .into_iter()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .filter(|pod| {
            pod.owner_references().iter().any(|owner| {
                owner.controller == Some(true) && owner.kind == "PodFleet" && owner.uid == uid
            })
        })
        .collect();
    pods.sort_by_key(ResourceExt::name_any);
    Ok(pods)
}

/// Waits until the fleet has exactly `replicas` pods, all Ready and running `image`, and its status says it is
/// rolled out at `generation`.
async fn wait_rolled_out(
    env: &Env,
    uid: &str,
    replicas: i64,
    image: &str,
    generation: i64,
) -> Result<Vec<Pod>> {
    let fleets = fleet_api(env);
    wait_for(
        &format!("PodFleet {FLEET}: {replicas} Ready pods at {image}"),
        WAIT,
        || async {
            let fleet = fleets.get(FLEET).await?;
            let status = fleet.data.get("status").cloned().unwrap_or_default();
            let pods = fleet_pods(env, uid).await?;
            let count = |field: &str| {
                status
                    .get(field)
                    .and_then(serde_json::Value::as_i64)
                    .unwrap_or(-1)
            };
            let done = i64::try_from(pods.len())? == replicas
                && pods
                    .iter()
                    .all(|pod| is_ready(pod) && running_image(pod) == Some(image))
                && fleet.metadata.generation == Some(generation)
                && count("observedGeneration") == generation
                && [
                    "replicas",
                    "readyReplicas",
                    "updatedReplicas",
                    "updatedReadyReplicas",
                ]
                .iter()
                .all(|field| count(field) == replicas);
            if done {
                return Ok(Some(pods));
            }
            Err(anyhow!(
                "pods {:?}; generation {:?}, status {status}",
                pods.iter().map(describe).collect::<Vec<_>>(),
                fleet.metadata.generation
            ))
        },
    )
    .await
}

/// A pod watch of the fleet that counts, after every event, the wanted pods that are not Ready (pods
/// missing or being deleted count as unavailable), and keeps the largest count.
struct UnavailableWatch {
    most: Arc<Mutex<usize>>,
    task: tokio::task::JoinHandle<Result<()>>,
}

impl UnavailableWatch {
    /// Starts watching; returns once the watch has listed the pods (so no later change is missed).
    async fn start(env: &Env, wanted: usize) -> Result<Self> {
        let config = watcher::Config::default().labels(&format!("{FLEET_LABEL}={FLEET}"));
        let mut events = watcher(env.pods_api(), config).boxed();
        let most = Arc::new(Mutex::new(0));
        let mut ready: BTreeMap<String, bool> = BTreeMap::new();
        // The initial list, up to InitDone.
        loop {
            match events.try_next().await? {
                Some(watcher::Event::InitApply(pod)) => {
                    ready.insert(pod.name_any(), available(&pod));
                }
                Some(watcher::Event::InitDone) => break,
                Some(_) => {}
                None => bail!("the pod watch ended before its initial list"),
            }
        }
        let counted = Arc::clone(&most);
        let task = tokio::spawn(async move {
            // During a re-list (after a lost watch) the pods are counted once it is complete.
            let mut listing = false;
            while let Some(event) = events.try_next().await? {
                match event {
                    watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => {
                        ready.insert(pod.name_any(), available(&pod));
                    }
                    watcher::Event::Delete(pod) => {
                        ready.remove(&pod.name_any());
                    }
                    watcher::Event::Init => {
                        ready.clear();
                        listing = true;
                    }
                    watcher::Event::InitDone => listing = false,
                }
                if listing {
                    continue;
                }
                let unavailable =
                    wanted.saturating_sub(ready.values().filter(|ready| **ready).count());
                let mut most = counted.lock().map_err(|_| anyhow!("poisoned"))?;
                *most = (*most).max(unavailable);
            }
            Ok(())
        });
        Ok(Self { most, task })
    }

    /// Stops the watch; returns the most pods seen unavailable at once.
    async fn stop(self) -> Result<usize> {
        if self.task.is_finished() {
            self.task.await??;
            bail!("the pod watch ended early");
        }
        self.task.abort();
        let most = *self.most.lock().map_err(|_| anyhow!("poisoned"))?;
        Ok(most)
    }
}

/// The pods' uids.
fn uids(pods: &[Pod]) -> Vec<Option<String>> {
    pods.iter().map(ResourceExt::uid).collect()
}

/// Ready and not being deleted.
fn available(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none() && is_ready(pod)
}

/// Sends SIGINT (what Ctrl-C sends) and waits for the exit status.
async fn interrupt(process: &mut Process) -> Result<std::process::ExitStatus> {
    let pid = process.child.id().context("the example already exited")?;
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()?;
    ensure!(sent.success(), "kill -INT {pid} failed");
    Ok(tokio::time::timeout(WAIT, process.child.wait())
        .await
        .with_context(|| format!("no exit 30s after SIGINT:\n{}", process.tail()))??)
}
