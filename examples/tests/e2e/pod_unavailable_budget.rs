//! PodUnavailableBudget on the real API server (kruise-manager as a child process, real HTTPS webhooks, the
//! node simulator playing kubelet): a 10-pod CloneSet under a budget of `maxUnavailable: 2` (its
//! `targetRef`).
//!
//! * Evictions: 50 evictions fired at once at random pods of it never leave more than 2 of the 10 pods
//!   unavailable (not Ready, or terminating), judged on every event of a pod watch; the refused ones get 429
//!   with a message naming the budget; some are admitted. Before that, a dry-run eviction is refused while
//!   the budget allows nothing (which also shows the webhook is in force), a dry run spends nothing, and a
//!   new pod of the CloneSet is annotated `pub.kruise.io/related-pub` by the pod mutating webhook.
//! * Sidecar upgrade (gate `PodUnavailableBudgetUpdateGate`): a SidecarSet allowed to upgrade every pod at
//!   once upgrades the 6 pods of a CloneSet under `maxUnavailable: 1` one at a time (never more than 1
//!   unavailable on any watch event), and completes.
//! * Rollout (gate `PodUnavailableBudgetUpdateGate`): an in-place image update with the CloneSet's own
//!   `maxUnavailable: 50%` stays within the budget's 2 on every watch event, and completes.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context as _, Result, bail, ensure};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::policy::v1alpha1::PodUnavailableBudget;
use kube::api::{DeleteParams, EvictParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::task::JoinHandle;

use crate::cloneset_env::{Env, is_ready};
use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, wait_for};

const REPLICAS: usize = 10;
const BUDGET: &str = "web-pub";
const CLONESET: &str = "web";
const WAIT: Duration = Duration::from_secs(90);
const MANAGER_NAMESPACE: &str = "e2e-pub-system";

type Body<'a> =
    Box<dyn FnOnce(Env, Client) -> Pin<Box<dyn Future<Output = (Env, Result<()>)> + 'a>> + 'a>;

pub async fn pod_unavailable_budget_limits_concurrent_evictions(cluster: &Cluster) -> Result<()> {
    with_manager(
        cluster,
        "e2e-pub-evict",
        &[],
        Box::new(|env, evictions_client| Box::pin(evictions(env, evictions_client))),
    )
    .await
}

pub async fn pod_unavailable_budget_limits_sidecar_upgrades(cluster: &Cluster) -> Result<()> {
    with_manager(
        cluster,
        "e2e-pub-sidecar",
        &["--feature-gates=PodUnavailableBudgetUpdateGate=true"],
        Box::new(|env, _| Box::pin(sidecar_upgrade(env))),
    )
    .await
}

pub async fn pod_unavailable_budget_limits_in_place_rollout(cluster: &Cluster) -> Result<()> {
    with_manager(
        cluster,
        "e2e-pub-rollout",
        &["--feature-gates=PodUnavailableBudgetUpdateGate=true"],
        Box::new(|env, _| Box::pin(rollout(env))),
    )
    .await
}

/// The simulator for `namespace` and kruise-manager with its webhooks served, running `body`.
async fn with_manager(
    cluster: &Cluster,
    namespace: &str,
    extra: &[&str],
    body: Body<'_>,
) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback)"
        );
        return Ok(());
    }
    let env = Env::without_manager(cluster, namespace).await?;
    let mut args = crate::manager_process::scenario_args(
        MANAGER_NAMESPACE,
        "pub",
        &[format!("--cloneset-namespace={namespace}")],
    );
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let mut manager =
        ManagerProcess::spawn(cluster, namespace, &args, Webhooks::Served, &[]).await?;
    let ready = manager.wait_ready().await;
    let (env, result) = match (ready, no_retry_client(&cluster.kubeconfig).await) {
        (Ok(()), Ok(client)) => body(env, client).await,
        (Ok(()), Err(error)) | (Err(error), _) => (env, Err(error)),
    };
    let result = match result {
        // The budget controller and webhook read pods from the one shared pod watch.
        Ok(()) => {
            manager
                .expect_one_watch_each(&["pods", "podunavailablebudgets.policy.kruise.io"])
                .await
        }
        failed => failed,
    };
    let stopped = manager.terminate().await;
    let env_stopped = env.stop().await;
    result
        .and(stopped)
        .and(env_stopped)
        .with_context(|| manager.log_tail())
}

/// A client that answers a 429 at once: kube's default client retries 429 (up to 15 times, backing off),
/// which would hide the refusals under test.
async fn no_retry_client(kubeconfig: &std::path::Path) -> Result<Client> {
    let config = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let mut config =
        kube::Config::from_custom_kubeconfig(config, &kube::config::KubeConfigOptions::default())
            .await?;
    config.default_retry = false;
    Ok(Client::try_from(config)?)
}

fn budgets(env: &Env) -> Api<PodUnavailableBudget> {
    Api::namespaced(env.client.clone(), &env.namespace)
}

/// A 10-pod CloneSet (in place, `maxUnavailable: 50%`), all Ready, and its budget allowing 2.
async fn cloneset_under_budget(env: &Env) -> Result<()> {
    wait_for("the PodUnavailableBudget API", WAIT, || async {
        Ok(budgets(env)
            .list(&ListParams::default().limit(1))
            .await
            .ok()
            .map(drop))
    })
    .await?;
    env.create(
        CLONESET,
        i32::try_from(REPLICAS)?,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "50%"}}}),
    )
    .await?;
    env.wait_rolled_out(CLONESET, REPLICAS, "nginx:1.25")
        .await?;
    // Nothing may go first: maxUnavailable 0 until the webhook is seen refusing.
    let budget: PodUnavailableBudget = serde_json::from_value(json!({
        "apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": BUDGET, "namespace": env.namespace},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": CLONESET},
            "maxUnavailable": 0}
    }))?;
    budgets(env).create(&PostParams::default(), &budget).await?;
    wait_budget(env, 0, 10).await?;
    Ok(())
}

/// Waits until the budget's status says `allowed` with `current` available out of 10.
async fn wait_budget(env: &Env, allowed: i32, current: i32) -> Result<()> {
    wait_budget_of(env, allowed, current, 10).await
}

/// Waits until the budget's status says `allowed` with `current` available out of `total`.
async fn wait_budget_of(env: &Env, allowed: i32, current: i32, total: i32) -> Result<()> {
    wait_for(
        &format!("{BUDGET}: unavailableAllowed {allowed}, currentAvailable {current}"),
        WAIT,
        || async {
            let status = budgets(env).get(BUDGET).await?.status.unwrap_or_default();
            if status.unavailable_allowed == allowed
                && status.current_available == current
                && status.total_replicas == total
            {
                return Ok(Some(()));
            }
            bail!("status {status:?}")
        },
    )
    .await
}

/// A pod of the CloneSet created (dry run) gets `pub.kruise.io/related-pub` and `kruise.io/related-pub`.
async fn related_budget_annotated(env: &Env) -> Result<()> {
    let cloneset = env.clonesets().get(CLONESET).await?;
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-probe", "namespace": env.namespace, "labels": {"app": "probe"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": CLONESET,
                "uid": cloneset.metadata.uid, "controller": true}]},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
    }))?;
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    wait_for("the related-pub annotations on a new pod", WAIT, || async {
        let created = env.pods_api().create(&params, &pod).await?;
        let annotations = created.metadata.annotations.unwrap_or_default();
        let related = |key: &str| annotations.get(key).map(String::as_str);
        if related("pub.kruise.io/related-pub") == Some(BUDGET)
            && related("kruise.io/related-pub") == Some(BUDGET)
        {
            return Ok(Some(()));
        }
        bail!("annotations {annotations:?}")
    })
    .await
}

fn dry_run() -> EvictParams {
    let mut params = EvictParams::default();
    params.post_options.dry_run = true;
    params
}

/// An eviction's outcome: admitted, refused with 429 and this message, or the pod was gone.
#[derive(Debug)]
enum Evicted {
    Admitted,
    Refused(String),
    Gone,
}

async fn evict(api: &Api<Pod>, name: &str, params: &EvictParams) -> Result<Evicted> {
    match api.evict(name, params).await {
        Ok(_) => Ok(Evicted::Admitted),
        Err(kube::Error::Api(status)) if status.code == 429 => Ok(Evicted::Refused(status.message)),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Evicted::Gone),
        Err(error) => Err(error).with_context(|| format!("evicting {name}")),
    }
}

async fn evictions(env: Env, client: Client) -> (Env, Result<()>) {
    let result = evictions_checked(&env, client).await;
    (env, result)
}

async fn evictions_checked(env: &Env, client: Client) -> Result<()> {
    cloneset_under_budget(env).await?;
    let pods: Api<Pod> = Api::namespaced(client, &env.namespace);
    let names: Vec<String> = env
        .pods(CLONESET)
        .await?
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    let first = names.first().context("no pods")?.clone();
    // The API server takes the webhook configuration up asynchronously: dry runs until one is refused.
    let refusal = wait_for("a dry-run eviction refused by the budget", WAIT, || async {
        match evict(&pods, &first, &dry_run()).await? {
            Evicted::Refused(message) => Ok(Some(message)),
            other => bail!("{other:?}"),
        }
    })
    .await?;
    let expected = format!(
        "pod {ns}/{first} may not be evicted: PodUnavailableBudget {ns}/{BUDGET} allows no more unavailable \
         pods (currentAvailable 10, desiredAvailable 10)",
        ns = env.namespace
    );
    ensure!(
        refusal.contains(&expected),
        "refusal {refusal:?}, expected {expected:?}"
    );

    related_budget_annotated(env).await?;

    budgets(env)
        .patch(
            BUDGET,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"maxUnavailable": 2}})),
        )
        .await?;
    wait_budget(env, 2, 10).await?;
    // A dry run is admitted and spends nothing.
    ensure!(
        matches!(evict(&pods, &first, &dry_run()).await?, Evicted::Admitted),
        "dry run refused"
    );
    let status = budgets(env).get(BUDGET).await?.status.unwrap_or_default();
    ensure!(
        status.unavailable_allowed == 2 && status.disrupted_pods.is_empty(),
        "a dry run changed the budget: {status:?}"
    );

    let watch = AvailabilityWatch::start(pods.clone(), REPLICAS).await?;
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |elapsed| elapsed.as_nanos() as u64)
        | 1;
    eprintln!("    eviction targets seeded with {seed}");
    let storm: Vec<JoinHandle<Result<(String, Evicted)>>> = (0..50)
        .map(|_| {
            // xorshift: random enough to pick pods, and reproducible from the printed seed.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let name = names[usize::try_from(seed % names.len() as u64).unwrap_or(0)].clone();
            let pods = pods.clone();
            tokio::spawn(async move {
                let outcome = evict(&pods, &name, &EvictParams::default()).await?;
                Ok((name, outcome))
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in storm {
        outcomes.push(task.await??);
    }
    let admitted = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Evicted::Admitted))
        .count();
    let refused: Vec<&String> = outcomes
        .iter()
        .filter_map(|(_, outcome)| match outcome {
            Evicted::Refused(message) => Some(message),
            _ => None,
        })
        .collect();
    eprintln!(
        "    50 evictions: {admitted} admitted, {} refused (429)",
        refused.len()
    );
    // The CloneSet replaces the evicted pods; the budget comes back to 2.
    let settled = env.wait_rolled_out(CLONESET, REPLICAS, "nginx:1.25").await;
    let seen = watch.stop();
    eprintln!(
        "    at most {} of the 10 pods unavailable at once",
        seen.max_unavailable
    );
    settled?;
    ensure!(
        seen.max_unavailable <= 2,
        "{} of the 10 pods were unavailable at once (budget 2)",
        seen.max_unavailable
    );
    ensure!(
        seen.max_unavailable >= 1,
        "the watch never saw an evicted pod"
    );
    wait_budget(env, 2, 10).await
}

async fn rollout(env: Env) -> (Env, Result<()>) {
    let result = rollout_checked(&env).await;
    (env, result)
}

async fn rollout_checked(env: &Env) -> Result<()> {
    cloneset_under_budget(env).await?;
    budgets(env)
        .patch(
            BUDGET,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"maxUnavailable": 2}})),
        )
        .await?;
    wait_budget(env, 2, 10).await?;
    let watch = AvailabilityWatch::start(env.pods_api(), REPLICAS).await?;
    env.set_image(CLONESET, "nginx:1.26").await?;
    // Two units at a time, each kept at least 10 s: longer than one wait_rolled_out.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(180);
    let rolled = loop {
        match env.wait_rolled_out(CLONESET, REPLICAS, "nginx:1.26").await {
            Err(_) if tokio::time::Instant::now() < deadline => {}
            done => break done,
        }
    };
    let seen = watch.stop();
    eprintln!(
        "    at most {} of the 10 pods unavailable at once",
        seen.max_unavailable
    );
    rolled?;
    ensure!(
        seen.max_unavailable <= 2,
        "{} of the 10 pods were unavailable at once (budget 2)",
        seen.max_unavailable
    );
    ensure!(
        seen.max_unavailable >= 1,
        "the watch never saw a pod updating"
    );
    Ok(())
}

/// The most pods out of `replicas` that were not (Ready and not terminating) at once, over every event.
#[derive(Debug, Default)]
struct Seen {
    max_unavailable: usize,
}

/// A watch of the CloneSet's pods judging every event.
struct AvailabilityWatch {
    seen: Arc<Mutex<Seen>>,
    task: JoinHandle<()>,
}

impl AvailabilityWatch {
    /// Starts watching and waits for its first list.
    async fn start(api: Api<Pod>, replicas: usize) -> Result<Self> {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let record = Arc::clone(&seen);
        let (listed, mut on_listed) = tokio::sync::watch::channel(false);
        let config = watcher::Config::default().labels(&format!("app={CLONESET}"));
        let task = tokio::spawn(async move {
            let mut pods: BTreeMap<String, Pod> = BTreeMap::new();
            let mut initialised = false;
            let mut events = watcher(api, config).default_backoff().boxed();
            while let Some(item) = events.next().await {
                let Ok(event) = item else { continue };
                match event {
                    watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => {
                        pods.insert(pod.name_any(), pod);
                    }
                    watcher::Event::Delete(pod) => {
                        pods.remove(&pod.name_any());
                    }
                    watcher::Event::Init => {
                        pods.clear();
                        initialised = false;
                    }
                    watcher::Event::InitDone => {
                        initialised = true;
                        let _ = listed.send(true);
                    }
                }
                if !initialised {
                    continue;
                }
                let available = pods
                    .values()
                    .filter(|pod| is_ready(pod) && pod.metadata.deletion_timestamp.is_none())
                    .count();
                let mut seen = record.lock().unwrap_or_else(PoisonError::into_inner);
                seen.max_unavailable = seen.max_unavailable.max(replicas.saturating_sub(available));
            }
        });
        wait_for("the pod watch's first list", WAIT, || {
            let listed = *on_listed.borrow_and_update();
            async move { Ok(listed.then_some(())) }
        })
        .await?;
        Ok(Self { seen, task })
    }

    fn stop(self) -> Seen {
        self.task.abort();
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

const SIDECARSET: &str = "e2e-pub-sidecar";
const SIDECAR_REPLICAS: usize = 6;

fn sidecarsets(env: &Env) -> Api<SidecarSet> {
    Api::all(env.client.clone())
}

fn sidecar_container(image: &str) -> serde_json::Value {
    json!({"name": "sidecar1", "image": image, "command": ["sleep", "999d"]})
}

fn sidecar_image(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()?
        .containers
        .iter()
        .find(|container| container.name == "sidecar1")?
        .image
        .as_deref()
}

async fn sidecar_upgrade(env: Env) -> (Env, Result<()>) {
    let result = sidecar_upgrade_checked(&env).await;
    let _ = sidecarsets(&env)
        .delete(SIDECARSET, &DeleteParams::default())
        .await;
    (env, result)
}

async fn sidecar_upgrade_checked(env: &Env) -> Result<()> {
    wait_for(
        "the SidecarSet and PodUnavailableBudget APIs",
        WAIT,
        || async {
            sidecarsets(env)
                .list(&ListParams::default().limit(1))
                .await?;
            budgets(env).list(&ListParams::default().limit(1)).await?;
            Ok(Some(()))
        },
    )
    .await?;
    let sidecarset: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": SIDECARSET},
        "spec": {"selector": {"matchLabels": {"sidecar": SIDECARSET}},
            "updateStrategy": {"type": "RollingUpdate", "maxUnavailable": "100%"},
            "containers": [sidecar_container("busybox:1.35")]}
    }))?;
    sidecarsets(env)
        .create(&PostParams::default(), &sidecarset)
        .await?;
    // The pod webhook injects once its configuration is in force and its SidecarSet cache has the set.
    let probe: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "probe", "namespace": env.namespace, "labels": {"sidecar": SIDECARSET}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
    }))?;
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    wait_for(
        "the SidecarSet injected by the pod webhook",
        WAIT,
        || async {
            let created = env.pods_api().create(&dry, &probe).await?;
            Ok(sidecar_image(&created).is_some().then_some(()))
        },
    )
    .await?;
    env.create(
        CLONESET,
        i32::try_from(SIDECAR_REPLICAS)?,
        "nginx:1.25",
        json!({"template": {"metadata": {"labels": {"app": CLONESET, "sidecar": SIDECARSET}}}}),
    )
    .await?;
    let pods = env
        .wait_rolled_out(CLONESET, SIDECAR_REPLICAS, "nginx:1.25")
        .await?;
    ensure!(
        pods.iter()
            .all(|pod| sidecar_image(pod) == Some("busybox:1.35")),
        "pods without the sidecar"
    );
    let budget: PodUnavailableBudget = serde_json::from_value(json!({
        "apiVersion": "policy.kruise.io/v1alpha1", "kind": "PodUnavailableBudget",
        "metadata": {"name": BUDGET, "namespace": env.namespace},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": CLONESET},
            "maxUnavailable": 1}
    }))?;
    budgets(env).create(&PostParams::default(), &budget).await?;
    let total = i32::try_from(SIDECAR_REPLICAS)?;
    wait_budget_of(env, 1, total, total).await?;

    let watch = AvailabilityWatch::start(env.pods_api(), SIDECAR_REPLICAS).await?;
    sidecarsets(env)
        .patch(
            SIDECARSET,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"containers": [sidecar_container("busybox:1.36")]}})),
        )
        .await?;
    let upgraded = wait_for(
        "every sidecar upgraded under the budget",
        Duration::from_secs(180),
        || async {
            let pods = env.pods(CLONESET).await?;
            let done = pods.len() == SIDECAR_REPLICAS
                && pods
                    .iter()
                    .all(|pod| is_ready(pod) && sidecar_image(pod) == Some("busybox:1.36"));
            if done {
                return Ok(Some(()));
            }
            bail!(
                "sidecars {:?}",
                pods.iter()
                    .map(|pod| (
                        pod.name_any(),
                        sidecar_image(pod).map(str::to_owned),
                        is_ready(pod)
                    ))
                    .collect::<Vec<_>>()
            )
        },
    )
    .await;
    let seen = watch.stop();
    eprintln!(
        "    at most {} of the {SIDECAR_REPLICAS} pods unavailable at once",
        seen.max_unavailable
    );
    upgraded?;
    ensure!(
        seen.max_unavailable <= 1,
        "{} of the {SIDECAR_REPLICAS} pods were unavailable at once (budget 1)",
        seen.max_unavailable
    );
    Ok(())
}
