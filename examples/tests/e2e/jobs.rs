//! kruise-manager (the binary) with the node simulator: the conversion webhook makes v1alpha1 and v1beta1
//! CloneSets and SidecarSets readable in both versions without loss; a BroadcastJob runs one pod on every
//! eligible node and completes (or fails fast, then goes after its TTL); an AdvancedCronJob with
//! `@every 2s` creates BroadcastJobs that run on every simulated node, Forbid never overlaps runs,
//! Replace replaces the running one, and the history is trimmed.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1beta1::{AdvancedCronJob, BroadcastJob};
use kruise_runtime::shutdown;
use kruise_simulator::job_exit::EXIT_CODE_ANNOTATION;
use kruise_simulator::{Simulator, SimulatorConfig};
use kube::api::{
    DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::core::ApiResource;
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};

use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, ensure_namespace, wait_for};

const NAMESPACE: &str = "e2e-jobs";
const NODES: [&str; 3] = ["e2e-jobs-0", "e2e-jobs-1", "e2e-jobs-2"];
const WAIT: Duration = Duration::from_secs(60);

/// The manager process and the in-process simulator of a scenario.
struct Environment {
    manager: ManagerProcess,
    simulator: Option<(
        shutdown::Trigger,
        tokio::task::JoinHandle<Result<(), kruise_simulator::SimulatorError>>,
    )>,
}

impl Environment {
    async fn start(cluster: &Cluster, name: &str, simulate: bool) -> Result<Self> {
        let args: Vec<String> = vec![
            "--create-namespace".into(),
            "--namespace=e2e-jobs-system".into(),
            format!("--identity=e2e-{name}"),
            "--leader-elect=false".into(),
        ];
        let manager = ManagerProcess::spawn(cluster, name, &args, Webhooks::Served, &[]).await?;
        let simulator = if simulate {
            let config = SimulatorConfig {
                nodes: NODES.len(),
                node_prefix: "e2e-jobs".into(),
                namespace: Some(NAMESPACE.into()),
                ready_delay: Duration::from_millis(300),
                job_run_duration: Duration::from_secs(1),
                ..SimulatorConfig::default()
            };
            let (stop, stopped) = shutdown::channel();
            let task = tokio::spawn(Simulator::new(cluster.client.clone(), config).run(stopped));
            Some((stop, task))
        } else {
            None
        };
        let environment = Self { manager, simulator };
        environment.manager.wait_ready().await?;
        ensure_namespace(&cluster.client, NAMESPACE).await?;
        Ok(environment)
    }

    /// Stops the simulator and the manager (gracefully: it resets the CRDs' conversion).
    async fn stop(mut self, result: Result<()>) -> Result<()> {
        if let Some((stop, task)) = self.simulator.take() {
            stop.trigger();
            let _ = tokio::time::timeout(Duration::from_secs(15), task).await;
        }
        let stopped = self.manager.stop().await;
        result.and(stopped).with_context(|| self.manager.log_tail())
    }
}

fn dynamic(
    client: &Client,
    version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", version, kind),
        plural,
    );
    if namespaced {
        Api::namespaced_with(client.clone(), NAMESPACE, &resource)
    } else {
        Api::all_with(client.clone(), &resource)
    }
}

/// Every leaf of `expected` is in `actual` with the same value (the server may add defaults).
fn contains(actual: &Value, expected: &Value, path: &str) -> Result<()> {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => {
            for (key, value) in expected {
                let inner = actual.get(key).unwrap_or(&Value::Null);
                contains(inner, value, &format!("{path}.{key}"))?;
            }
            Ok(())
        }
        (Value::Array(actual), Value::Array(expected)) if actual.len() == expected.len() => {
            for (index, (actual, expected)) in actual.iter().zip(expected).enumerate() {
                contains(actual, expected, &format!("{path}[{index}]"))?;
            }
            Ok(())
        }
        _ if actual == expected => Ok(()),
        _ => bail!("{path}: expected {expected}, read {actual}"),
    }
}

/// Creates `object` in `write_version`, reads it in `read_version` (checked by `check`), and again in
/// `write_version`, which must still contain everything written.
async fn round_trip(
    client: &Client,
    (kind, plural, namespaced): (&str, &str, bool),
    write_version: &str,
    read_version: &str,
    object: Value,
    check: impl Fn(&Value) -> Result<()>,
) -> Result<()> {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let writer = dynamic(client, write_version, kind, plural, namespaced);
    let reader = dynamic(client, read_version, kind, plural, namespaced);
    let _ = writer.delete(&name, &DeleteParams::default()).await;
    wait_for(&format!("{kind} {name} gone"), WAIT, || async {
        Ok(writer.get_opt(&name).await?.is_none().then_some(()))
    })
    .await?;
    writer
        .create(
            &PostParams::default(),
            &serde_json::from_value(object.clone())?,
        )
        .await
        .with_context(|| format!("creating {kind} {name} as {write_version}"))?;
    let read = serde_json::to_value(reader.get(&name).await?)?;
    ensure!(
        read["apiVersion"] == format!("apps.kruise.io/{read_version}"),
        "read as {}",
        read["apiVersion"]
    );
    check(&read).with_context(|| format!("{kind} {name} read as {read_version}: {read}"))?;
    let back = serde_json::to_value(writer.get(&name).await?)?;
    contains(&back["spec"], &object["spec"], "spec")
        .with_context(|| format!("{kind} {name} read back as {write_version}: {back}"))?;
    // An update through the other version keeps what it does not know about. Controllers may write the
    // object (status) meanwhile: a conflict means read it again and retry, as any client would.
    let mut through_other: DynamicObject = serde_json::from_value(read.clone())?;
    for attempt in 1.. {
        through_other
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert("touched".into(), "yes".into());
        match reader
            .replace(&name, &PostParams::default(), &through_other)
            .await
        {
            Ok(_) => break,
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < 10 => {
                through_other = reader.get(&name).await?;
            }
            Err(error) => {
                return Err(error)
                    .with_context(|| format!("updating {kind} {name} as {read_version}"));
            }
        }
    }
    let after = serde_json::to_value(writer.get(&name).await?)?;
    contains(&after["spec"], &object["spec"], "spec").with_context(|| {
        format!("{kind} {name} after an update as {read_version}, read as {write_version}: {after}")
    })?;
    ensure!(after["metadata"]["labels"]["touched"] == "yes");
    writer.delete(&name, &DeleteParams::default()).await?;
    Ok(())
}

pub async fn conversion_webhook_round_trips(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on this machine's loopback)"
        );
        return Ok(());
    }
    let environment = Environment::start(cluster, "conversion", false).await?;
    let result = conversion(&cluster.client).await;
    environment.stop(result).await
}

async fn conversion(client: &Client) -> Result<()> {
    let cloneset = ("CloneSet", "clonesets", true);
    // Fields k8s-openapi does not model, in the schemaless pod template the server keeps: they survive every
    // conversion (checked by `round_trip`: the object read back, and after an update through the other version,
    // contains everything written).
    let template = json!({"metadata": {"labels": {"app": "conv"}},
        "spec": {"futurePodField": {"kept": true},
            "containers": [{"name": "main", "image": "nginx", "futureContainerField": "kept"}]}});
    let alpha = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "conv-alpha"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "conv"}}, "template": template,
            "scaleStrategy": {"disablePVCReuse": true, "maxUnavailable": 1},
            "updateStrategy": {"type": "InPlaceIfPossible", "partition": "30%", "maxUnavailable": 2,
                "paused": true}}
    });
    // The API server picks the CRD's conversion webhook up asynchronously.
    wait_for(
        "v1alpha1 CloneSets to convert through the webhook",
        WAIT,
        || {
            let alpha = alpha.clone();
            async move {
                let outcome = round_trip(client, cloneset, "v1alpha1", "v1beta1", alpha, |beta| {
                    let rolling = &beta["spec"]["updateStrategy"]["rollingUpdate"];
                    ensure!(beta["spec"]["updateStrategy"]["type"] == "RollingUpdate");
                    ensure!(rolling["podUpdatePolicy"] == "InPlaceIfPossible");
                    ensure!(rolling["partition"] == "30%");
                    ensure!(rolling["maxUnavailable"] == 2);
                    ensure!(rolling["paused"] == true);
                    ensure!(beta["spec"]["scaleStrategy"]["enablePVCReuse"] == false);
                    Ok(())
                })
                .await;
                Ok(outcome.ok())
            }
        },
    )
    .await?;

    let beta = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": "conv-beta"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "conv"}}, "template": template,
            "scaleStrategy": {"enablePVCReuse": true, "excludePreparingDelete": true},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceOnly",
                "partition": 1, "maxSurge": "10%"}}}
    });
    round_trip(client, cloneset, "v1beta1", "v1alpha1", beta, |alpha| {
        ensure!(alpha["spec"]["updateStrategy"]["type"] == "InPlaceOnly");
        ensure!(alpha["spec"]["updateStrategy"]["partition"] == 1);
        ensure!(alpha["spec"]["updateStrategy"]["maxSurge"] == "10%");
        ensure!(alpha["spec"]["scaleStrategy"]["disablePVCReuse"].as_bool() != Some(true));
        Ok(())
    })
    .await?;

    let sidecarset = ("SidecarSet", "sidecarsets", false);
    let alpha = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "e2e-conv-alpha"},
        "spec": {"namespace": "team-a", "selector": {"matchLabels": {"app": "conv"}},
            "containers": [{"name": "sidecar1", "image": "busybox", "command": ["sleep", "999d"]}]}
    });
    round_trip(client, sidecarset, "v1alpha1", "v1beta1", alpha, |beta| {
        ensure!(
            beta["spec"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                == "team-a"
        );
        ensure!(beta["spec"].get("namespace").is_none_or(Value::is_null));
        Ok(())
    })
    .await?;
    // Its own container name: the SidecarSet webhook refuses a name another SidecarSet that may select the
    // same pods uses, and e2e-conv-alpha (namespace team-a, which may carry the label team=b) still exists.
    let beta = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "e2e-conv-beta"},
        "spec": {"namespaceSelector": {"matchLabels": {"team": "b"}},
            "selector": {"matchLabels": {"app": "conv"}},
            "containers": [{"name": "sidecar2", "image": "busybox"}]}
    });
    round_trip(client, sidecarset, "v1beta1", "v1alpha1", beta, |alpha| {
        ensure!(alpha["spec"]["namespaceSelector"]["matchLabels"]["team"] == "b");
        ensure!(alpha["spec"]["containers"][0]["name"] == "sidecar2");
        Ok(())
    })
    .await?;
    Ok(())
}

/// Pods must land on these nodes only (other scenarios may leave nodes behind).
fn on_our_nodes() -> Value {
    json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": NODES}]}]}}})
}

/// The node lifecycle taints the control plane puts on simulated nodes (they have no kubelet Lease); job pods
/// tolerate them, as broadcast jobs that must reach every node do.
const LIFECYCLE_TAINTS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

fn lifecycle_tolerations() -> Value {
    Value::Array(
        LIFECYCLE_TAINTS
            .iter()
            .map(|key| json!({"key": key, "operator": "Exists"}))
            .collect(),
    )
}

/// Waits until the simulated nodes exist and are Ready, with no taint but the lifecycle ones.
async fn nodes_ready(client: &Client) -> Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    wait_for("the simulated nodes Ready", WAIT, || async {
        for name in NODES {
            let Some(node) = nodes.get_opt(name).await? else {
                bail!("node {name} not registered yet");
            };
            let taints: Vec<String> = node
                .spec
                .as_ref()
                .and_then(|spec| spec.taints.clone())
                .unwrap_or_default()
                .into_iter()
                .filter(|taint| !LIFECYCLE_TAINTS.contains(&taint.key.as_str()))
                .map(|taint| format!("{}:{}", taint.key, taint.effect))
                .collect();
            let ready = node
                .status
                .as_ref()
                .and_then(|status| status.conditions.as_ref())
                .is_some_and(|conditions| {
                    conditions
                        .iter()
                        .any(|c| c.type_ == "Ready" && c.status == "True")
                });
            ensure!(
                ready && taints.is_empty(),
                "node {name}: ready {ready}, taints {taints:?}"
            );
        }
        Ok(Some(()))
    })
    .await
}

/// Adds `taint` to `node` (keeping the others), or removes the e2e taint when `None`.
async fn set_taint(client: &Client, node: &str, taint: Option<Value>) -> Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    let current = nodes.get(node).await?;
    let mut taints: Vec<Value> = current
        .spec
        .and_then(|spec| spec.taints)
        .unwrap_or_default()
        .into_iter()
        .filter(|existing| existing.key != "e2e-jobs/blocked")
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;
    taints.extend(taint);
    let patch = json!({"metadata": {"resourceVersion": current.metadata.resource_version},
        "spec": {"taints": taints}});
    nodes
        .patch(node, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

pub async fn broadcast_job_runs_on_every_eligible_node(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the manager's webhook listens on loopback)"
        );
        return Ok(());
    }
    let environment = Environment::start(cluster, "broadcastjob", true).await?;
    let result = broadcast_jobs(&cluster.client).await;
    let cleanup = set_taint(&cluster.client, NODES[2], None).await;
    environment.stop(result.and(cleanup)).await
}

async fn broadcast_jobs(client: &Client) -> Result<()> {
    nodes_ready(client).await?;
    set_taint(
        client,
        NODES[2],
        Some(json!({"key": "e2e-jobs/blocked", "value": "yes", "effect": "NoSchedule"})),
    )
    .await?;
    let jobs: Api<BroadcastJob> = Api::namespaced(client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let job: BroadcastJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
        "metadata": {"name": "hello"},
        "spec": {"parallelism": 1, "template": {"metadata": {"labels": {"app": "hello"}},
            "spec": {"restartPolicy": "Never", "affinity": on_our_nodes(), "tolerations": lifecycle_tolerations(),
                "containers": [{"name": "main", "image": "busybox"}]}}}
    }))?;
    let _ = jobs.delete("hello", &DeleteParams::background()).await;
    wait_for("no old job", WAIT, || async {
        Ok(jobs.get_opt("hello").await?.is_none().then_some(()))
    })
    .await?;
    jobs.create(&PostParams::default(), &job).await?;
    let most_active = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let done = wait_for("BroadcastJob hello to complete", WAIT, || {
        let (jobs, pods) = (jobs.clone(), pods.clone());
        let most_active = std::sync::Arc::clone(&most_active);
        async move {
            let running = pods
                .list(&ListParams::default().labels("broadcastjob-name=hello"))
                .await?
                .items
                .iter()
                .filter(|pod| {
                    !matches!(
                        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                        Some("Succeeded" | "Failed")
                    )
                })
                .count();
            most_active.fetch_max(running, std::sync::atomic::Ordering::SeqCst);
            let job = jobs.get("hello").await?;
            Ok(job
                .status
                .filter(|status| status.phase.as_str() == "completed"))
        }
    })
    .await?;
    let most_active = most_active.load(std::sync::atomic::Ordering::SeqCst);
    ensure!(
        most_active <= 1,
        "parallelism 1 but {most_active} pods ran at once"
    );
    ensure!(
        done.desired == 2,
        "desired {} (the tainted node does not count)",
        done.desired
    );
    ensure!(
        done.succeeded == 2 && done.failed == 0 && done.active == 0,
        "{done:?}"
    );
    ensure!(
        done.start_time.is_some() && done.completion_time.is_some(),
        "{done:?}"
    );
    ensure!(
        done.conditions
            .iter()
            .any(|c| c.type_.as_str() == "Complete" && c.status == "True"),
        "{done:?}"
    );
    let placed: BTreeSet<String> = pods
        .list(&ListParams::default().labels("broadcastjob-name=hello"))
        .await?
        .items
        .iter()
        .filter_map(|pod| pod.spec.as_ref()?.node_name.clone())
        .collect();
    ensure!(
        placed == BTreeSet::from([NODES[0].to_owned(), NODES[1].to_owned()]),
        "pods on {placed:?}"
    );

    // FailFast: one failing pod fails the job; then it goes after its TTL.
    let failing: BroadcastJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
        "metadata": {"name": "failing"},
        "spec": {"completionPolicy": {"ttlSecondsAfterFinished": 2},
            "template": {"metadata": {"annotations": {"simulator.kruise.io/exit-code": "3"}},
            "spec": {"restartPolicy": "Never", "affinity": on_our_nodes(), "tolerations": lifecycle_tolerations(),
                "containers": [{"name": "main", "image": "busybox"}]}}}
    }))?;
    let _ = jobs.delete("failing", &DeleteParams::background()).await;
    wait_for("no old job", WAIT, || async {
        Ok(jobs.get_opt("failing").await?.is_none().then_some(()))
    })
    .await?;
    jobs.create(&PostParams::default(), &failing).await?;
    let failed = wait_for("BroadcastJob failing to fail", WAIT, || async {
        Ok(jobs
            .get_opt("failing")
            .await?
            .and_then(|job| job.status)
            .filter(|status| status.phase.as_str() == "failed"))
    })
    .await?;
    ensure!(failed.failed >= 1, "{failed:?}");
    ensure!(
        failed
            .conditions
            .iter()
            .any(|c| c.type_.as_str() == "Failed" && c.status == "True"),
        "{failed:?}"
    );
    wait_for("the failed job to go after its TTL", WAIT, || async {
        Ok(jobs.get_opt("failing").await?.is_none().then_some(()))
    })
    .await?;
    jobs.delete("hello", &DeleteParams::background()).await?;
    Ok(())
}

pub async fn advanced_cron_job_schedules_broadcast_jobs(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the manager's webhook listens on loopback)"
        );
        return Ok(());
    }
    let started = Instant::now();
    let environment = Environment::start(cluster, "advancedcronjob", true).await?;
    let result = cron_jobs(&cluster.client).await;
    let result = environment.stop(result).await;
    eprintln!(
        "    AdvancedCronJob scenario took {:.1}s",
        started.elapsed().as_secs_f64()
    );
    result
}

/// An AdvancedCronJob running a BroadcastJob every 2 s; with `finishing` false its pods never finish: they
/// exit 1 and are restarted (`OnFailure`) far below the job's restart limit. (A BroadcastJob's pods may not
/// have `restartPolicy: Always`: the BroadcastJob webhook refuses it, as upstream's does.)
fn cron_job(name: &str, policy: &str, finishing: bool) -> Result<AdvancedCronJob> {
    let (restart_policy, exit_code, restart_limit) = if finishing {
        ("Never", "0", 0)
    } else {
        ("OnFailure", "1", 1_000_000)
    };
    Ok(serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
        "metadata": {"name": name},
        "spec": {"schedule": "@every 2s", "concurrencyPolicy": policy,
            "successfulJobsHistoryLimit": 2, "failedJobsHistoryLimit": 1,
            "template": {"broadcastJobTemplate": {"metadata": {"labels": {"cron": name}},
                "spec": {"failurePolicy": {"restartLimit": restart_limit},
                    "template": {"metadata": {"annotations": {EXIT_CODE_ANNOTATION: exit_code}},
                    "spec": {"restartPolicy": restart_policy, "affinity": on_our_nodes(),
                    "tolerations": lifecycle_tolerations(),
                    "containers": [{"name": "main", "image": "busybox"}]}}}}}}
    }))?)
}

async fn children(jobs: &Api<BroadcastJob>, name: &str) -> Result<Vec<BroadcastJob>> {
    Ok(jobs
        .list(&ListParams::default().labels(&format!("cron={name}")))
        .await?
        .items)
}

fn completed(job: &BroadcastJob) -> bool {
    job.status
        .as_ref()
        .is_some_and(|status| status.phase.as_str() == "completed")
}

async fn cron_jobs(client: &Client) -> Result<()> {
    nodes_ready(client).await?;
    let crons: Api<AdvancedCronJob> = Api::namespaced(client.clone(), NAMESPACE);
    let jobs: Api<BroadcastJob> = Api::namespaced(client.clone(), NAMESPACE);

    // Forbid: runs never overlap; each run's BroadcastJob runs on all three nodes; history is trimmed.
    crons
        .create(&PostParams::default(), &cron_job("forbid", "Forbid", true)?)
        .await?;
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let children = children(&jobs, "forbid").await?;
        let active = children.iter().filter(|job| !completed(job)).count();
        ensure!(active <= 1, "Forbid: {active} runs at once");
        for child in &children {
            let name = child.name_any();
            let scheduled = child
                .annotations()
                .get("apps.kruise.io/scheduled-at")
                .cloned()
                .context("no scheduled-at annotation")?;
            let unix: i64 = name
                .strip_prefix("forbid-")
                .and_then(|seconds| seconds.parse().ok())
                .with_context(|| format!("child name {name}"))?;
            let at: k8s_openapi::jiff::Timestamp = scheduled.parse()?;
            ensure!(at.as_second() == unix, "{name} scheduled at {scheduled}");
            if completed(child) {
                let status = child.status.as_ref().context("status")?;
                ensure!(
                    status.desired == 3 && status.succeeded == 3,
                    "{name} ran on {} of {} nodes",
                    status.succeeded,
                    status.desired
                );
            }
            seen.insert(name);
        }
        let finished = children.iter().filter(|job| completed(job)).count();
        ensure!(
            finished <= 3,
            "history limit 2 but {finished} completed runs kept"
        );
        if seen.len() >= 4 && finished <= 2 {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "only {} runs seen: {seen:?}",
            seen.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let cron = crons.get("forbid").await?;
    let status = cron.status.context("no AdvancedCronJob status")?;
    ensure!(
        status
            .type_
            .as_ref()
            .map(kruise_api::apps::v1beta1::TemplateKind::as_str)
            == Some("BroadcastJob"),
        "{status:?}"
    );
    ensure!(status.last_schedule_time.is_some(), "{status:?}");
    crons.delete("forbid", &DeleteParams::background()).await?;

    // Replace: pods that never finish; each run replaces the previous one.
    crons
        .create(
            &PostParams::default(),
            &cron_job("replace", "Replace", false)?,
        )
        .await?;
    let mut names = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(40);
    while names.len() < 3 {
        let children = children(&jobs, "replace").await?;
        let live: Vec<_> = children
            .iter()
            .filter(|job| job.metadata.deletion_timestamp.is_none())
            .collect();
        ensure!(
            live.len() <= 1,
            "Replace: {} runs alive at once",
            live.len()
        );
        names.extend(live.iter().map(|job| job.name_any()));
        ensure!(Instant::now() < deadline, "only {names:?} seen");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let cron = crons.get("replace").await?;
    let active = cron.status.map(|s| s.active.len()).unwrap_or_default();
    ensure!(active <= 1, "Replace: status lists {active} active runs");
    crons.delete("replace", &DeleteParams::background()).await?;
    Ok(())
}
