//! The SidecarSet demo against the real API server, with kruise-manager (the binary: pod webhook over
//! HTTPS and the SidecarSet controller) and the node simulator: a pod with `app=nginx` gets `sidecar1` and
//! the log volume, another pod nothing; changing the SidecarSet's image upgrades the sidecar in place
//! (same pods, the app container untouched, the sidecar restarted by the simulator), holding back
//! `partition` pods and never with more than `maxUnavailable` pods unavailable (checked on every watch
//! event); lowering the partition finishes the rollout; a canary `updateStrategy.selector` upgrades only
//! the pods it selects until it is removed. Hot upgrade (`sidecar-1` / `sidecar-2` of the seeds): every
//! observed state of the pod keeps a ready sidecar on a real image through upgrade, migration and reset,
//! and it ends with `sidecar-2` working on v2 and `sidecar-1` idle on the empty image.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::cloneset_env::{Env, is_ready};
use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-sidecarset";
pub const MANAGER_NAMESPACE: &str = "e2e-sidecarset-system";
const SIDECARSET: &str = "test-sidecarset";
const HOT_NAMESPACE: &str = "e2e-sidecarset-hot";
const HOT_SIDECARSET: &str = "hotupgrade-sidecarset";
const WAIT: Duration = Duration::from_secs(60);

pub type Body = for<'a> fn(&'a Client, u16) -> Pin<Box<dyn Future<Output = Result<()>> + 'a>>;

pub async fn sidecarset_injects_and_upgrades_in_place(cluster: &Cluster) -> Result<()> {
    with_manager(cluster, NAMESPACE, SIDECARSET, |client, port| {
        Box::pin(demo(client, port))
    })
    .await
}

pub async fn sidecarset_hot_upgrade_keeps_a_working_sidecar(cluster: &Cluster) -> Result<()> {
    with_manager(cluster, HOT_NAMESPACE, HOT_SIDECARSET, |client, port| {
        Box::pin(hot_upgrade(client, port))
    })
    .await
}

/// Runs `body` with the simulator for `namespace` and kruise-manager (webhook and controllers), then
/// deletes the SidecarSet and the namespace's pods.
pub async fn with_manager(
    cluster: &Cluster,
    namespace: &str,
    sidecarset: &str,
    body: Body,
) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback)"
        );
        return Ok(());
    }
    let env = Env::without_manager(cluster, namespace).await?;
    let args = crate::manager_process::scenario_args(
        MANAGER_NAMESPACE,
        "sidecarset",
        &[format!("--cloneset-namespace={namespace}")],
    );
    let mut manager =
        ManagerProcess::spawn(cluster, namespace, &args, Webhooks::Served, &[]).await?;
    let result = body(&env.client, manager.metrics_port).await;
    // Every controller (CloneSet, SidecarSet, pod readiness, CRR, sidecar terminator, BroadcastJob,
    // NodeImage, ImagePullJob) ran beside the SidecarSet, and the pod, CRR and SidecarSet webhooks served
    // requests: they all share one watch per kind.
    let result = match result {
        Ok(()) => {
            manager
                .expect_one_watch_each(&[
                    "pods",
                    "nodes",
                    "namespaces",
                    "persistentvolumeclaims",
                    "controllerrevisions.apps",
                    "sidecarsets.apps.kruise.io",
                    "jobs.batch",
                    "clonesets.apps.kruise.io",
                    "broadcastjobs.apps.kruise.io",
                    "containerrecreaterequests.apps.kruise.io",
                    "imagepulljobs.apps.kruise.io",
                    "nodeimages.apps.kruise.io",
                ])
                .await
        }
        failed => failed,
    };
    let cleaned = cleanup(&env.client, namespace, sidecarset).await;
    let stopped = manager.terminate().await;
    let env_stopped = env.stop().await;
    let result = result.and(cleaned).and(stopped).and(env_stopped);
    result.with_context(|| manager.log_tail())
}

pub fn sidecarsets(client: &Client) -> Api<SidecarSet> {
    Api::all(client.clone())
}

fn pods(client: &Client) -> Api<Pod> {
    Api::namespaced(client.clone(), NAMESPACE)
}

async fn cleanup(client: &Client, namespace: &str, sidecarset: &str) -> Result<()> {
    let _ = sidecarsets(client)
        .delete(sidecarset, &DeleteParams::default())
        .await;
    Api::<Pod>::namespaced(client.clone(), namespace)
        .delete_collection(
            &DeleteParams::default().grace_period(0),
            &ListParams::default(),
        )
        .await?;
    Ok(())
}

fn pod(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}})
}

fn container_names(pod: &Pod) -> Vec<String> {
    pod.spec
        .iter()
        .flat_map(|spec| spec.containers.iter().map(|c| c.name.clone()))
        .collect()
}

fn spec_image<'a>(pod: &'a Pod, container: &str) -> Option<&'a str> {
    pod.spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == container)?
        .image
        .as_deref()
}

/// `(running image, restart count, container ID)` of a container, from the pod's status.
fn running(pod: &Pod, container: &str) -> Option<(String, i32, String)> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|status| status.name == container)
        .map(|status| {
            (
                status.image.clone(),
                status.restart_count,
                status.container_id.clone().unwrap_or_default(),
            )
        })
}

async fn status_of(client: &Client) -> Result<(i32, i32, i32)> {
    let set = sidecarsets(client).get(SIDECARSET).await?;
    let status = set.status.unwrap_or_default();
    Ok((status.matched_pods, status.updated_pods, status.ready_pods))
}

async fn wait_status(client: &Client, expected: (i32, i32, i32)) -> Result<()> {
    wait_for(
        &format!("SidecarSet status (matched, updated, ready) = {expected:?}"),
        WAIT,
        || async {
            let (matched, updated, ready) = status_of(client).await?;
            let generation_seen = sidecarsets(client)
                .get(SIDECARSET)
                .await?
                .status
                .is_some_and(|s| s.observed_generation > 0);
            Ok((generation_seen && (matched, updated, ready) == expected).then_some(()))
        },
    )
    .await
}

/// Watches the `app=nginx` pods and records the most unavailable at once.
struct Unavailability {
    max: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Unavailability {
    fn start(api: Api<Pod>) -> Self {
        let max = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&max);
        let task = tokio::spawn(async move {
            let mut pods: BTreeMap<String, Pod> = BTreeMap::new();
            let config = watcher::Config::default().labels("app=nginx");
            let mut events = watcher(api, config).default_backoff().boxed();
            while let Some(Ok(event)) = events.next().await {
                match event {
                    watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => {
                        pods.insert(pod.name_any(), pod);
                    }
                    watcher::Event::Delete(pod) => {
                        pods.remove(&pod.name_any());
                    }
                    _ => {}
                }
                let down = pods.values().filter(|p| !is_ready(p)).count();
                seen.fetch_max(down, Ordering::SeqCst);
            }
        });
        Self { max, task }
    }

    fn stop(self) -> usize {
        self.task.abort();
        self.max.load(Ordering::SeqCst)
    }
}

pub async fn wait_for_manager(client: &Client, metrics_port: u16) -> Result<()> {
    crate::manager_process::wait_ready(metrics_port).await?;
    wait_for("the v1beta1 SidecarSet API", WAIT, || async {
        Ok(sidecarsets(client)
            .list(&ListParams::default().limit(1))
            .await
            .ok()
            .map(|_| ()))
    })
    .await
}

async fn demo(client: &Client, metrics_port: u16) -> Result<()> {
    wait_for_manager(client, metrics_port).await?;
    // The demo's SidecarSet (seeds: sidecarset tutorial), with a rolling budget.
    let sidecarset: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": SIDECARSET},
        "spec": {
            "selector": {"matchLabels": {"app": "nginx"}},
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}},
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": 1},
            "containers": [{"name": "sidecar1", "image": "busybox:1.35",
                "command": ["sleep", "999d"],
                "volumeMounts": [{"name": "log-volume", "mountPath": "/var/log"}]}],
            "volumes": [{"name": "log-volume", "emptyDir": {}}],
        }
    }))?;
    sidecarsets(client)
        .create(&PostParams::default(), &sidecarset)
        .await?;
    // The controller writes the hashes and the first revision.
    wait_status(client, (0, 0, 0)).await?;

    // The API server picks the webhook configuration up asynchronously: dry runs until a pod is injected.
    let probe = pod("probe", "nginx");
    wait_for("the webhook to inject the SidecarSet", WAIT, || async {
        let created: Pod = pods(client)
            .create(
                &PostParams {
                    dry_run: true,
                    ..PostParams::default()
                },
                &serde_json::from_value(probe.clone())?,
            )
            .await?;
        Ok(container_names(&created)
            .contains(&"sidecar1".to_owned())
            .then_some(()))
    })
    .await?;

    for name in ["web-0", "web-1", "web-2"] {
        pods(client)
            .create(
                &PostParams::default(),
                &serde_json::from_value(pod(name, "nginx"))?,
            )
            .await?;
    }
    let other: Pod = pods(client)
        .create(
            &PostParams::default(),
            &serde_json::from_value(pod("other", "other"))?,
        )
        .await?;
    ensure!(
        container_names(&other) == ["main"],
        "a pod without app=nginx got {:?}",
        container_names(&other)
    );
    let web = pods(client).get("web-0").await?;
    ensure!(
        container_names(&web) == ["sidecar1", "main"],
        "injected containers {:?}",
        container_names(&web)
    );
    let volumes: Vec<String> = web
        .spec
        .iter()
        .flat_map(|s| s.volumes.iter().flatten().map(|v| v.name.clone()))
        .collect();
    ensure!(
        volumes.contains(&"log-volume".to_owned()),
        "volumes {volumes:?}"
    );
    ensure!(
        web.annotations()
            .get("kruise.io/sidecarset-injected-list")
            .is_some_and(|list| list.contains(SIDECARSET)),
        "no injected-list annotation: {:?}",
        web.annotations()
    );
    wait_status(client, (3, 3, 3)).await?;

    // Paused with a new image: no pod is at the new revision, so the status's updated counts go back to 0.
    // (Written as a merge patch, zeros are left out and the old counts stayed.)
    sidecarsets(client)
        .patch(
            SIDECARSET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {
                "updateStrategy": {"paused": true},
                "containers": [{"name": "sidecar1", "image": "busybox:1.36",
                    "command": ["sleep", "999d"],
                    "volumeMounts": [{"name": "log-volume", "mountPath": "/var/log"}]}]}})),
        )
        .await?;
    wait_for(
        "the paused SidecarSet's status to count no updated pod",
        WAIT,
        || async {
            let set = sidecarsets(client).get(SIDECARSET).await?;
            let generation = set.metadata.generation.unwrap_or_default();
            let status = set.status.unwrap_or_default();
            Ok((status.observed_generation == generation
                && status.matched_pods == 3
                && status.updated_pods == 0
                && status.updated_ready_pods == 0)
                .then_some(()))
        },
    )
    .await?;
    let before: BTreeMap<String, Pod> = pods(client)
        .list(&ListParams::default().labels("app=nginx"))
        .await?
        .into_iter()
        .map(|p| (p.name_any(), p))
        .collect();

    // New image with partition 1: two pods upgraded in place, one held back.
    let watch = Unavailability::start(pods(client));
    tokio::time::sleep(Duration::from_millis(300)).await;
    sidecarsets(client)
        .patch(
            SIDECARSET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {
                "updateStrategy": {"partition": 1, "paused": false},
                "containers": [{"name": "sidecar1", "image": "busybox:1.36",
                    "command": ["sleep", "999d"],
                    "volumeMounts": [{"name": "log-volume", "mountPath": "/var/log"}]}]}})),
        )
        .await?;
    wait_status(client, (3, 2, 3)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    ensure!(
        status_of(client).await? == (3, 2, 3),
        "the partition did not hold: {:?}",
        status_of(client).await?
    );
    let held: Vec<String> = pods(client)
        .list(&ListParams::default().labels("app=nginx"))
        .await?
        .iter()
        .filter(|p| spec_image(p, "sidecar1") == Some("busybox:1.35"))
        .map(ResourceExt::name_any)
        .collect();
    ensure!(held.len() == 1, "pods still on the old sidecar: {held:?}");

    // Partition 0: the last one follows.
    sidecarsets(client)
        .patch(
            SIDECARSET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"updateStrategy": {"partition": 0}}})),
        )
        .await?;
    wait_status(client, (3, 3, 3)).await?;
    let max_unavailable = watch.stop();
    let after: Vec<Pod> = pods(client)
        .list(&ListParams::default().labels("app=nginx"))
        .await?
        .items;
    ensure!(after.len() == 3, "{} pods", after.len());
    for pod in &after {
        let old = before
            .get(&pod.name_any())
            .with_context(|| format!("pod {} is new", pod.name_any()))?;
        ensure!(
            pod.uid() == old.uid(),
            "pod {} was recreated",
            pod.name_any()
        );
        ensure!(
            spec_image(pod, "sidecar1") == Some("busybox:1.36"),
            "{}: sidecar1 {:?}",
            pod.name_any(),
            spec_image(pod, "sidecar1")
        );
        ensure!(
            running(pod, "main") == running(old, "main"),
            "{}: the app container changed: {:?} -> {:?}",
            pod.name_any(),
            running(old, "main"),
            running(pod, "main")
        );
        let (old_image, old_restarts, _) = running(old, "sidecar1").unwrap_or_default();
        let (new_image, new_restarts, _) = running(pod, "sidecar1").unwrap_or_default();
        ensure!(
            new_image == "busybox:1.36" && old_image == "busybox:1.35",
            "{}: sidecar1 ran {old_image}, now {new_image}",
            pod.name_any()
        );
        ensure!(
            new_restarts == old_restarts + 1,
            "{}: sidecar1 restarts {old_restarts} -> {new_restarts}",
            pod.name_any()
        );
    }
    ensure!(
        max_unavailable <= 1,
        "{max_unavailable} pods unavailable at once (maxUnavailable 1)"
    );
    let other = pods(client).get("other").await?;
    ensure!(container_names(&other) == ["main"], "the other pod changed");
    canary(client).await
}

/// A canary: `updateStrategy.selector` picks the pods to upgrade; removing it upgrades the rest.
async fn canary(client: &Client) -> Result<()> {
    pods(client)
        .patch(
            "web-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"canary": "true"}}})),
        )
        .await?;
    sidecarsets(client)
        .patch(
            SIDECARSET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {
                "updateStrategy": {"selector": {"matchLabels": {"canary": "true"}}},
                "containers": [{"name": "sidecar1", "image": "busybox:1.37",
                    "command": ["sleep", "999d"],
                    "volumeMounts": [{"name": "log-volume", "mountPath": "/var/log"}]}]}})),
        )
        .await?;
    wait_status(client, (3, 1, 3)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let upgraded: Vec<String> = pods(client)
        .list(&ListParams::default().labels("app=nginx"))
        .await?
        .iter()
        .filter(|p| spec_image(p, "sidecar1") == Some("busybox:1.37"))
        .map(ResourceExt::name_any)
        .collect();
    ensure!(upgraded == ["web-1"], "canary upgraded {upgraded:?}");
    sidecarsets(client)
        .patch(
            SIDECARSET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"updateStrategy": {"selector": null}}})),
        )
        .await?;
    wait_status(client, (3, 3, 3)).await?;
    historical_revision(client).await
}

/// `injectionStrategy.revision.revisionName`: new pods get the first revision (busybox:1.35), read by the
/// webhook from its ControllerRevision store.
async fn historical_revision(client: &Client) -> Result<()> {
    let revisions: Api<ControllerRevision> = Api::namespaced(client.clone(), MANAGER_NAMESPACE);
    let mut own = revisions
        .list(&ListParams::default().labels(&format!("kruise.io/sidecarset-name={SIDECARSET}")))
        .await?
        .items;
    own.sort_by_key(|revision| revision.revision);
    ensure!(own.len() == 3, "{} revisions for three specs", own.len());
    let first = own.first().map(ResourceExt::name_any).unwrap_or_default();
    sidecarsets(client)
        .patch(
            SIDECARSET,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"injectionStrategy": {"revision": {"revisionName": first}}}}),
            ),
        )
        .await?;
    // The webhook's SidecarSet store follows the patch asynchronously: dry runs until it applies.
    let probe = pod("web-3", "nginx");
    let created = wait_for("a pod injected at the first revision", WAIT, || async {
        let created: Pod = pods(client)
            .create(
                &PostParams {
                    dry_run: true,
                    ..PostParams::default()
                },
                &serde_json::from_value(probe.clone())?,
            )
            .await?;
        Ok((spec_image(&created, "sidecar1") == Some("busybox:1.35")).then_some(created))
    })
    .await?;
    let recorded = created
        .annotations()
        .get("kruise.io/sidecarset-hash")
        .cloned()
        .unwrap_or_default();
    ensure!(
        recorded.contains(&first),
        "the pod does not record revision {first}: {recorded}"
    );
    Ok(())
}

const SIDECAR_V1: &str = "openkruise/hotupgrade-sample:sidecarv1";
const SIDECAR_V2: &str = "openkruise/hotupgrade-sample:sidecarv2";
const EMPTY: &str = "openkruise/hotupgrade-sample:empty";

/// `(name, running image, ready)` of the hot-upgrade pair, from the pod's status.
fn pair(pod: &Pod) -> Vec<(String, String, bool)> {
    pod.status
        .iter()
        .flat_map(|status| status.container_statuses.iter().flatten())
        .filter(|status| status.name.starts_with("sidecar-"))
        .map(|status| (status.name.clone(), status.image.clone(), status.ready))
        .collect()
}

/// A sidecar container that runs a real (non-empty) image and is ready.
fn working(pod: &Pod) -> usize {
    pair(pod)
        .iter()
        .filter(|(_, image, ready)| *ready && image != EMPTY)
        .count()
}

/// The hot-upgrade demo of the seeds: `sidecar-1` / `sidecar-2`, upgrade to v2, migration, reset.
async fn hot_upgrade(client: &Client, metrics_port: u16) -> Result<()> {
    wait_for_manager(client, metrics_port).await?;
    let hot_pods: Api<Pod> = Api::namespaced(client.clone(), HOT_NAMESPACE);
    let container = |image: &str| {
        json!([{"name": "sidecar", "image": image, "command": ["sleep", "999d"],
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": EMPTY}}])
    };
    let sidecarset: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": HOT_SIDECARSET},
        "spec": {
            "selector": {"matchLabels": {"app": "hotupgrade"}},
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": HOT_NAMESPACE}},
            "containers": container(SIDECAR_V1),
        }
    }))?;
    sidecarsets(client)
        .create(&PostParams::default(), &sidecarset)
        .await?;
    let mut object = pod("busybox", "hotupgrade");
    object["metadata"]["namespace"] = json!(HOT_NAMESPACE);
    wait_for(
        "the webhook to inject the hot-upgrade pair",
        WAIT,
        || async {
            let created: Pod = hot_pods
                .create(
                    &PostParams {
                        dry_run: true,
                        ..PostParams::default()
                    },
                    &serde_json::from_value(object.clone())?,
                )
                .await?;
            Ok(container_names(&created)
                .contains(&"sidecar-1".to_owned())
                .then_some(()))
        },
    )
    .await?;
    let created = hot_pods
        .create(&PostParams::default(), &serde_json::from_value(object)?)
        .await?;
    ensure!(
        container_names(&created) == ["sidecar-1", "sidecar-2", "main"],
        "hot-upgrade containers {:?}",
        container_names(&created)
    );
    wait_for("the pod to run sidecar-1", WAIT, || async {
        let pod = hot_pods.get("busybox").await?;
        Ok((is_ready(&pod) && working(&pod) == 1).then_some(()))
    })
    .await?;

    // Every observed state keeps one working sidecar.
    let lost = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::Mutex::new(
        Vec::<Vec<(String, String, bool)>>::new(),
    ));
    let watch = {
        let (lost, seen) = (Arc::clone(&lost), Arc::clone(&seen));
        let api = hot_pods.clone();
        tokio::spawn(async move {
            let config = watcher::Config::default().labels("app=hotupgrade");
            let mut events = watcher(api, config)
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(Ok(pod)) = events.next().await {
                if working(&pod) == 0 {
                    lost.fetch_add(1, Ordering::SeqCst);
                }
                if let Ok(mut seen) = seen.lock() {
                    seen.push(pair(&pod));
                }
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    sidecarsets(client)
        .patch(
            HOT_SIDECARSET,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"containers": container(SIDECAR_V2)}})),
        )
        .await?;
    let done = wait_for("upgrade, migration and reset", WAIT, || async {
        let pod = hot_pods.get("busybox").await?;
        let mut images: Vec<(String, String)> = pair(&pod)
            .into_iter()
            .filter(|(_, _, ready)| *ready)
            .map(|(name, image, _)| (image, name))
            .collect();
        images.sort();
        let settled = images.len() == 2
            && images.first().is_some_and(|(image, _)| image == EMPTY)
            && images.get(1).is_some_and(|(image, _)| image == SIDECAR_V2);
        Ok(settled.then_some(pod))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    watch.abort();
    let last = hot_pods.get("busybox").await?;
    let pod = done.with_context(|| {
        format!(
            "last pod: statuses {:?}, spec sidecar-1 {:?} sidecar-2 {:?}, annotations {:?}, conditions {:?}",
            pair(&last),
            spec_image(&last, "sidecar-1"),
            spec_image(&last, "sidecar-2"),
            last.annotations(),
            last.status.as_ref().and_then(|s| s.conditions.clone())
        )
    })?;
    let states = seen.lock().map(|s| s.clone()).unwrap_or_default();
    ensure!(
        lost.load(Ordering::SeqCst) == 0,
        "a state without a working sidecar was observed: {states:?}"
    );
    // Migration was observed: both sidecars working, the old on v1 and the new on v2.
    let migrating = states.iter().any(|state| {
        let ready = |image: &str| state.iter().any(|(_, i, ready)| *ready && i == image);
        ready(SIDECAR_V1) && ready(SIDECAR_V2)
    });
    ensure!(migrating, "no migration state observed: {states:?}");
    let working_name = pod
        .annotations()
        .get("kruise.io/sidecarset-working-hotupgrade-container")
        .cloned()
        .unwrap_or_default();
    ensure!(
        working_name.contains("sidecar-2"),
        "the working container is not sidecar-2: {working_name}"
    );
    ensure!(
        spec_image(&pod, "sidecar-1") == Some(EMPTY)
            && spec_image(&pod, "sidecar-2") == Some(SIDECAR_V2),
        "final images sidecar-1 {:?}, sidecar-2 {:?}",
        spec_image(&pod, "sidecar-1"),
        spec_image(&pod, "sidecar-2")
    );
    ensure!(
        running(&pod, "main")
            .is_some_and(|(image, restarts, _)| image == "nginx:1.25" && restarts == 0),
        "the app container changed: {:?}",
        running(&pod, "main")
    );
    Ok(())
}
