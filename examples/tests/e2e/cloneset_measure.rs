//! Measurement (not a pass/fail check, run on demand): a 1,000-pod CloneSet on the local control plane
//! with the node simulator, and kruise-manager as a child process. Reports the time to 1,000 Ready pods,
//! the latency from a CloneSet spec change to the first pod write, the latency from a pod becoming Ready
//! to the next pod update during the in-place rollout, the whole rollout time, the reconcile durations
//! from the manager's histogram, and the manager's memory (RSS, peak RSS).
//!
//! Runs only with `KRUISE_E2E_MEASURE=1` (see `scripts/measure-cloneset.sh`); otherwise it says so and
//! passes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use crate::cloneset_env::{Env, ManagerHandle, is_ready, simulator_config};
use crate::manager_process::{ManagerProcess, Webhooks};
use crate::rollout_plot::{self, Chart};
use crate::support::{Cluster, Histogram, http_get, percentile, rss, wait_for};

const NAMESPACE: &str = "e2e-cs-measure";

fn replicas() -> usize {
    std::env::var("KRUISE_E2E_MEASURE_REPLICAS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

pub async fn cloneset_measure_1000_pods(cluster: &Cluster) -> Result<()> {
    if std::env::var("KRUISE_E2E_MEASURE").as_deref() != Ok("1") {
        eprintln!("    skipped: set KRUISE_E2E_MEASURE=1 (scripts/measure-cloneset.sh)");
        return Ok(());
    }
    let mut config = simulator_config(NAMESPACE);
    config.nodes = 10;
    config.max_pods = 200;
    config.ready_delay = Duration::from_millis(500);
    config.restart_delay = Duration::from_millis(500);
    config.concurrency = 64;
    let mut env = Env::with_simulator(cluster, NAMESPACE, config).await?;
    let mut args = crate::cloneset_env::manager_args(NAMESPACE);
    args.push("--log-format=json".into());
    let manager =
        ManagerProcess::spawn(cluster, "measure", &args, Webhooks::AsArgumentsSay, &[]).await?;
    let pid = manager.process.child.id().context("no manager pid")?;
    let port = manager.metrics_port;
    env.manager = Some(ManagerHandle::Child(Box::new(manager)));
    env.wait_for_api().await?;
    let result = measure(&env, pid, port).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

#[derive(Default)]
struct Timeline {
    /// Pod name -> when it last became Ready.
    ready_at: Vec<Instant>,
    /// When a pod's spec first showed the new image.
    update_started: BTreeMap<String, Instant>,
    /// Pod events seen, and watch errors.
    events: usize,
    errors: Vec<String>,
    /// Pods per revision and unavailable pods over time, from the creation on.
    plot: Option<rollout_plot::Timeline>,
}

async fn reconcile_histogram(port: u16) -> Result<Histogram> {
    let (_, text) = http_get(port, "/metrics").await?;
    Ok(Histogram::parse(
        &text,
        "kruise_manager_reconcile_duration_seconds",
        "controller=\"cloneset\"",
    ))
}

async fn measure(env: &Env, pid: u32, port: u16) -> Result<()> {
    let replicas = replicas();
    let (rss_idle, _) = rss(pid)?;
    let started = Instant::now();
    // The creation and the rollout, watched event by event.
    let timeline = Arc::new(Mutex::new(Timeline {
        plot: Some(rollout_plot::Timeline::new(
            started,
            Duration::from_millis(100),
        )),
        ..Timeline::default()
    }));
    let recorder = Arc::clone(&timeline);
    let config = watcher::Config::default().labels("app=big");
    let api = env.pods_api();
    let watch = tokio::spawn(async move {
        let mut ready: BTreeMap<String, bool> = BTreeMap::new();
        // Pod name -> (at the new image, Ready).
        let mut pods: BTreeMap<String, (bool, bool)> = BTreeMap::new();
        let mut events = watcher(api, config)
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(item) = events.next().await {
            let pod = match item {
                Ok(pod) => pod,
                Err(error) => {
                    recorder.lock().unwrap().errors.push(error.to_string());
                    continue;
                }
            };
            let now = Instant::now();
            let name = pod.name_any();
            let is_now_ready = is_ready(&pod);
            let mut timeline = recorder.lock().unwrap();
            timeline.events += 1;
            if is_now_ready && ready.get(&name) == Some(&false) {
                timeline.ready_at.push(now);
            }
            ready.insert(name.clone(), is_now_ready);
            let image = pod
                .spec
                .as_ref()
                .and_then(|s| s.containers.first())
                .and_then(|c| c.image.clone());
            let at_new_image = image.as_deref() == Some("nginx:1.26");
            pods.insert(name.clone(), (at_new_image, is_now_ready));
            if at_new_image {
                timeline.update_started.entry(name).or_insert(now);
            }
            let new = pods.values().filter(|(at_new, _)| *at_new).count();
            let unavailable = pods.values().filter(|(_, ready)| !*ready).count();
            if let Some(plot) = timeline.plot.as_mut() {
                plot.record(now, pods.len() - new, new, unavailable);
            }
        }
    });
    env.create(
        "big",
        i32::try_from(replicas)?,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "10%"}}}),
    )
    .await?;
    wait_for(
        &format!("{replicas} Ready pods"),
        Duration::from_secs(900),
        || async {
            let status = env.clonesets().get("big").await?.status.unwrap_or_default();
            Ok((usize::try_from(status.ready_replicas)? == replicas).then_some(()))
        },
    )
    .await?;
    let to_ready = started.elapsed();
    let (rss_ready, _) = rss(pid)?;
    let histogram_create = reconcile_histogram(port).await?;

    tokio::time::sleep(Duration::from_secs(2)).await;
    let changed = Instant::now();
    env.set_image("big", "nginx:1.26").await?;
    let rollout = wait_for(
        "the 1,000-pod rollout",
        Duration::from_secs(900),
        || async {
            let cloneset = env.clonesets().get("big").await?;
            let generation = cloneset.metadata.generation.unwrap_or(0);
            let status = cloneset.status.unwrap_or_default();
            Ok((status.observed_generation == generation
                && usize::try_from(status.updated_ready_replicas)? == replicas
                && status.current_revision == status.update_revision)
                .then(|| changed.elapsed()))
        },
    )
    .await?;
    let (rss_after, rss_peak) = rss(pid)?;
    watch.abort();
    let plotted = {
        let mut timeline = timeline.lock().unwrap();
        let plot = timeline.plot.take().context("the timeline's plot")?;
        let markers = [
            (plot.seconds_at(started + to_ready), "all Ready"),
            (plot.seconds_at(changed), "image changed"),
            (plot.seconds_at(changed + rollout), "rolled out"),
        ];
        let title = format!(
            "CloneSet of {replicas} pods: creation, then in-place rollout (maxUnavailable 10%), {} build",
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
        let chart = Chart {
            title: &title,
            old_label: "pods at nginx:1.25",
            new_label: "pods at nginx:1.26",
            markers: &markers,
        };
        rollout_plot::write_if_asked(&chart, plot.samples())?
    };
    let histogram_all = reconcile_histogram(port).await?;

    let (starts, readies, seen) = {
        let timeline = timeline.lock().unwrap();
        let seen = format!(
            "{} pod events, watch errors {:?}",
            timeline.events,
            timeline.errors.iter().take(3).collect::<Vec<_>>()
        );
        let mut starts: Vec<Instant> = timeline.update_started.values().copied().collect();
        starts.sort();
        let mut readies = timeline.ready_at.clone();
        readies.sort();
        (starts, readies, seen)
    };
    let Some(first_write) = starts.first().map(|t| t.duration_since(changed)) else {
        bail!("no pod update was seen: {seen}");
    };
    // For every update after the first batch: the time since the most recent pod became Ready before it
    // (the event that freed the unavailability budget), when that is under 5 s.
    let mut gaps: Vec<f64> = starts
        .iter()
        .filter_map(|start| {
            let before = readies.iter().rev().find(|r| *r <= start)?;
            let gap = start.duration_since(*before);
            (*before > changed && gap < Duration::from_secs(5))
                .then_some(gap.as_secs_f64() * 1000.0)
        })
        .collect();
    gaps.sort_by(f64::total_cmp);
    let pods: Vec<Pod> = env.pods("big").await?;
    eprintln!(
        "    measured with {} pods ({} listed at the end), {} build of kruise-manager:",
        replicas,
        pods.len(),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    eprintln!(
        "    create -> {replicas} Ready:              {:.1} s",
        to_ready.as_secs_f64()
    );
    eprintln!(
        "    spec change -> first pod write:     {:.0} ms",
        first_write.as_secs_f64() * 1000.0
    );
    eprintln!(
        "    pod Ready -> next pod update:       p50 {:.0} ms, p90 {:.0} ms, p99 {:.0} ms ({} samples)",
        percentile(&gaps, 0.5),
        percentile(&gaps, 0.9),
        percentile(&gaps, 0.99),
        gaps.len()
    );
    eprintln!(
        "    in-place rollout of {replicas} pods:        {:.1} s (maxUnavailable 10%)",
        rollout.as_secs_f64()
    );
    // The creation phase's reconciles each create up to a slow-start batch of pods and wait for those
    // writes, so they take seconds; the rollout's are read, plan and a few patches.
    eprintln!(
        "    reconcile durations (creation):     {}",
        histogram_create.summary("reconciles")
    );
    eprintln!(
        "    reconcile durations (rollout):      {}",
        histogram_all.since(&histogram_create).summary("reconciles")
    );
    eprintln!(
        "    reconcile durations (all):          {}",
        histogram_all.summary("reconciles")
    );
    if let Some(path) = plotted {
        eprintln!(
            "    plot (pods per revision, unavailable pods): {}",
            path.display()
        );
    }
    eprintln!(
        "    manager RSS: idle {rss_idle:.0} MiB, {replicas} pods ready {rss_ready:.0} MiB, after rollout {rss_after:.0} MiB, peak {rss_peak:.0} MiB"
    );
    Ok(())
}
