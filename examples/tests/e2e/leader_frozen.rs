//! A leader frozen (SIGSTOP) past its lease, then resumed (SIGCONT), sends no write that the API server
//! receives after a standby has taken the lease over, not even a request that was already on its way
//! out at the freeze (the leader's connections check the write fence at each socket write): proven from
//! the API server's audit log, which records every write request with the client's user agent
//! (`kruise-manager/VERSION (IDENTITY)`) and the time the server received it. The only request of the
//! old leader it lets through is a lease renewal the API server refused (409 Conflict: it was based on
//! the lease before the takeover, so it changed nothing).
//!
//! The leader is frozen in the middle of scaling a CloneSet up (a batch of pod creations half done, its
//! Event queue filling), and the CloneSet keeps changing while it is frozen (the changes wait in its
//! watches): on waking, a leader that went on running (or draining) its controllers writes pods,
//! statuses and Events after the new leader's `acquireTime`.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail, ensure};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::CloneSet;
use kube::api::{ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::audit_log::{AuditEvent, audit_log_path, read_audit_log};
use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, ensure_namespace, wait_for};

const NAMESPACE: &str = "e2e-leader-frozen";
const LEASE: &str = "e2e-frozen";
const OLD: &str = "e2e-frozen-a";
const NEW: &str = "e2e-frozen-b";
const CLONESET: &str = "frozen-probe";
/// The lease timing of both managers (short, so the scenario is quick).
const LEASE_DURATION: Duration = Duration::from_secs(4);

fn args(identity: &str, install_crds: bool) -> Vec<String> {
    let mut args = vec![
        format!("--namespace={NAMESPACE}"),
        format!("--identity={identity}"),
        format!("--leader-election-id={LEASE}"),
        "--no-webhook".into(),
        format!("--lease-duration={}s", LEASE_DURATION.as_secs()),
        "--renew-deadline=3s".into(),
        "--retry-period=1s".into(),
    ];
    if !install_crds {
        args.push("--no-install-crds".into());
    }
    args
}

async fn lease_spec(client: &Client) -> Result<Option<(String, Timestamp)>> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    Ok(leases
        .get_opt(LEASE)
        .await?
        .and_then(|lease| lease.spec)
        .and_then(|spec| {
            let holder = spec.holder_identity.filter(|holder| !holder.is_empty())?;
            Some((holder, spec.acquire_time?.0))
        }))
}

fn signal(manager: &ManagerProcess, name: &str) -> Result<()> {
    let pid = manager
        .process
        .child
        .id()
        .ok_or_else(|| anyhow!("the manager already exited"))?;
    let status = std::process::Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()?;
    ensure!(status.success(), "kill -{name} {pid} failed");
    Ok(())
}

/// Patches the CloneSet's replicas between 10 and 30 every 500 ms until `stop`: each change is a
/// reconcile creating (in slow-start batches) or deleting 20 pods.
fn keep_the_leader_busy(client: &Client, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<()> {
    let clonesets: Api<CloneSet> = Api::namespaced(client.clone(), NAMESPACE);
    tokio::spawn(async move {
        let mut replicas = SCALED;
        while !stop.load(Ordering::SeqCst) {
            replicas = SCALED + 10 - replicas;
            if let Err(error) = scale(&clonesets, replicas).await {
                eprintln!("    scaling {CLONESET}: {error}");
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
}

/// The replicas the frozen leader is caught scaling up to.
const SCALED: i32 = 30;

async fn scale(clonesets: &Api<CloneSet>, replicas: i32) -> kube::Result<CloneSet> {
    let patch = json!({"spec": {"replicas": replicas}});
    clonesets
        .patch(CLONESET, &PatchParams::default(), &Patch::Merge(&patch))
        .await
}

/// Pod counts well inside the last two slow-start batches of the scale-up from 2 to [`SCALED`] (batches
/// of 1, 2, 4, 8 and 13 creations: 10-17 and 18-30): the creations of a big batch land over tens of
/// milliseconds, so a count inside one means the batch is on the wire, not just finished.
fn in_mid_batch(count: usize) -> bool {
    (12..=15).contains(&count) || (21..=27).contains(&count)
}

/// Scales the CloneSet from 2 to [`SCALED`] and freezes the leader (SIGSTOP) as soon as the count of its
/// pods shows a big batch of creations half done: the leader is then in the middle of its reconcile, the
/// rest of the batch already sent and the next batch still to come. Requests it was sending at the freeze
/// (past the fence's request-level check but not yet on the wire) must not be delivered on waking: its
/// connections check the fence again at each socket write. The count is followed through a pod watch from
/// the version of the list that saw 2 pods, so every count the creations pass through is seen (a poll
/// of the count can jump over a batch that lands within a few milliseconds). Returns the count it was
/// caught at; tries the scale-up again (up to 10 times) when no half-done batch was seen.
async fn freeze_in_mid_batch(
    client: &Client,
    clonesets: &Api<CloneSet>,
    leader: &ManagerProcess,
) -> Result<usize> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let selector = format!("app={CLONESET}");
    let scaled = usize::try_from(SCALED)?;
    for _ in 0..10 {
        scale(clonesets, 2).await?;
        let (version, mut live) = wait_for(
            "the CloneSet's 2 pods",
            Duration::from_secs(120),
            || async {
                let list = pods.list(&ListParams::default().labels(&selector)).await?;
                let live: HashSet<String> = list.items.iter().filter_map(live_name).collect();
                Ok((live.len() == 2)
                    .then(|| (list.metadata.resource_version.unwrap_or_default(), live)))
            },
        )
        .await?;
        let mut events = pods
            .watch(&WatchParams::default().labels(&selector), &version)
            .await?
            .boxed();
        scale(clonesets, SCALED).await?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while live.len() < scaled {
            let event = tokio::time::timeout_at(deadline, events.try_next())
                .await
                .map_err(|_| {
                    anyhow!(
                        "the scale-up to {SCALED} did not finish: {} pods",
                        live.len()
                    )
                })??;
            match event {
                Some(WatchEvent::Added(pod) | WatchEvent::Modified(pod)) => match live_name(&pod) {
                    Some(name) => live.insert(name),
                    None => live.remove(&pod.name_any()),
                },
                Some(WatchEvent::Deleted(pod)) => live.remove(&pod.name_any()),
                Some(WatchEvent::Bookmark(_)) => false,
                Some(WatchEvent::Error(error)) => bail!("the pod watch failed: {error}"),
                None => bail!("the pod watch ended at {} pods", live.len()),
            };
            if in_mid_batch(live.len()) {
                signal(leader, "STOP")?;
                return Ok(live.len());
            }
        }
    }
    bail!("never saw the leader in the middle of a batch of creations")
}

/// The pod's name if it is not being deleted.
fn live_name(pod: &Pod) -> Option<String> {
    pod.metadata
        .deletion_timestamp
        .is_none()
        .then(|| pod.name_any())
}

pub async fn a_frozen_leader_writes_nothing_after_it_is_deposed(cluster: &Cluster) -> Result<()> {
    let Some(audit_log) = audit_log_path(cluster) else {
        eprintln!("    skipped: an external cluster has no audit log this test can read");
        return Ok(());
    };
    let client = &cluster.client;
    ensure_namespace(client, NAMESPACE).await?;
    let mut managers = vec![
        ManagerProcess::spawn(
            cluster,
            OLD,
            &args(OLD, true),
            Webhooks::AsArgumentsSay,
            &[],
        )
        .await?,
    ];
    let result = async {
        managers[0].wait_ready().await?;
        managers.push(
            ManagerProcess::spawn(
                cluster,
                NEW,
                &args(NEW, false),
                Webhooks::AsArgumentsSay,
                &[],
            )
            .await?,
        );
        managers[1].wait_ready().await?;
        freeze_and_resume(client, &audit_log, &mut managers).await
    }
    .await;
    result.with_context(|| {
        managers
            .iter()
            .map(ManagerProcess::log_tail)
            .collect::<Vec<_>>()
            .join("\n")
    })
}

async fn freeze_and_resume(
    client: &Client,
    audit_log: &std::path::Path,
    managers: &mut [ManagerProcess],
) -> Result<()> {
    // `OLD` starts first, so it leads (asserted, since the whole scenario depends on it).
    let (first, _) = wait_for("a leader", Duration::from_secs(60), || async {
        lease_spec(client).await
    })
    .await?;
    ensure!(first == OLD, "{first} leads; expected {OLD}, started first");

    let cloneset: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet",
        "metadata": {"name": CLONESET, "namespace": NAMESPACE},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": CLONESET}},
            "template": {
                "metadata": {"labels": {"app": CLONESET}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1"}]},
            },
        },
    }))?;
    let clonesets: Api<CloneSet> = Api::namespaced(client.clone(), NAMESPACE);
    wait_for("the CloneSet API", Duration::from_secs(60), || async {
        Ok(clonesets
            .list(&ListParams::default().limit(1))
            .await
            .ok()
            .map(|_| ()))
    })
    .await?;
    clonesets.create(&PostParams::default(), &cloneset).await?;
    // The leader is working: it has written something besides its lease.
    wait_for(
        "the leader to write for the CloneSet",
        Duration::from_secs(60),
        || async {
            Ok(read_audit_log(audit_log)?
                .iter()
                .any(|event| event.sent_by(OLD) && !is_lease(event))
                .then_some(()))
        },
    )
    .await?;
    let caught_at = freeze_in_mid_batch(client, &clonesets, &managers[0]).await?;
    // Changes keep coming while it is frozen (they wait in its watches for it to wake).
    let stop = Arc::new(AtomicBool::new(false));
    let busy = keep_the_leader_busy(client, Arc::clone(&stop));
    let outcome = async {
        let (second, acquired) = wait_for(
            "the standby to take the lease over",
            Duration::from_secs(60),
            || async {
                Ok(lease_spec(client)
                    .await?
                    .filter(|(holder, _)| holder != OLD))
            },
        )
        .await?;
        ensure!(second == NEW, "the lease went to {second}");
        // The new leader works (and the frozen one's watches fill up) for a while before the old wakes.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let resumed = Timestamp::now();
        signal(&managers[0], "CONT")?;
        eprintln!(
            "    {OLD} frozen mid-batch ({caught_at} of {SCALED} pods); {NEW} acquired the lease at \
             {acquired}; {OLD} resumed"
        );
        // The deposed leader notices and exits (its exit is the end of its writes).
        let status =
            tokio::time::timeout(Duration::from_secs(60), managers[0].process.child.wait())
                .await
                .context("the resumed old leader did not exit")??;
        ensure!(
            !status.success(),
            "the deposed leader exited with {status}; expected a failure (lost the lease)"
        );
        Ok((acquired, resumed))
    }
    .await;
    stop.store(true, Ordering::SeqCst);
    let _ = busy.await;
    let (acquired, resumed) = outcome?;
    managers[1]
        .stop()
        .await
        .context("the new leader's graceful stop")?;
    clonesets
        .delete(CLONESET, &Default::default())
        .await
        .map(drop)
        .or_else(|error| match error {
            kube::Error::Api(status) if status.code == 404 => Ok(()),
            other => Err(other),
        })?;

    let events = read_audit_log(audit_log)?;
    let before = events
        .iter()
        .filter(|event| event.sent_by(OLD) && !is_lease(event))
        .count();
    let new_leader_writes = events.iter().filter(|event| event.sent_by(NEW)).count();
    ensure!(
        before > 0 && new_leader_writes > 0,
        "the audit log does not tell the managers apart ({before} writes of {OLD} besides its lease, \
         {new_leader_writes} of {NEW})"
    );
    // Whatever the old leader had queued, serialised or encrypted at the freeze meets its connections'
    // fence on waking: nothing it sends is received after the takeover.
    let late: Vec<String> = events
        .iter()
        .filter(|event| event.sent_by(OLD) && !is_refused_lease_write(event))
        .map(|event| Ok((event.received()?, event)))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .filter(|(received, _)| *received >= acquired)
        .map(|(_, event)| event.describe())
        .collect();
    ensure!(
        late.is_empty(),
        "{OLD} wrote {} time(s) after {NEW} acquired the lease at {acquired} (it resumed at {resumed}):\n  {}",
        late.len(),
        late.join("\n  ")
    );
    eprintln!(
        "    audit log: {before} writes of {OLD} for its controllers before the freeze, none received \
         after {acquired}"
    );
    Ok(())
}

/// A lease write the API server refused with 409 Conflict: the elector's renewal (or acquisition) based
/// on a lease that changed since it was read, which wrote nothing.
fn is_refused_lease_write(event: &AuditEvent) -> bool {
    is_lease(event)
        && event
            .response_status
            .as_ref()
            .and_then(|status| status.code)
            == Some(409)
}

fn is_lease(event: &AuditEvent) -> bool {
    event
        .object_ref
        .as_ref()
        .is_some_and(|object| object.resource == "leases")
}
