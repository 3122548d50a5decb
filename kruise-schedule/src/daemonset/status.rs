//! The status an Advanced DaemonSet plan writes (upstream `updateDaemonSetStatus`).
//!
//! Over the existing nodes: a node that should run the pod counts in `desiredNumberScheduled`, and when it has
//! any pod (terminating ones included) in `currentNumberScheduled`; its oldest pod (scheduled first, then by
//! creation time and name) decides `numberReady`, `numberAvailable` (ready for `minReadySeconds`, and
//! `InPlaceUpdateReady` not false when the pod has that gate) and `updatedNumberScheduled` (the update hash,
//! or the template generation). A node that should not run the pod but has one counts in
//! `numberMisscheduled`. `numberUnavailable = desired - available`; `updateRevision` (v1alpha1
//! `daemonSetHash`) is the update hash.

use std::time::Duration;

use kruise_api::apps::v1beta1::DaemonSetStatus;

use super::facts::by_age;
use super::plan::Ctx;

fn count(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// The status, with `observedGeneration` kept from the old status (the caller sets it when the pass is
/// complete), and when to look again for pods that are ready but not yet available.
pub(crate) fn status(ctx: &Ctx<'_>) -> (DaemonSetStatus, Option<Duration>) {
    let daemonset = ctx.input.daemonset;
    let old = daemonset.status.clone().unwrap_or_default();
    let facts = &ctx.facts;
    let (mut desired, mut current, mut misscheduled) = (0i64, 0i64, 0i64);
    let (mut ready, mut available, mut updated) = (0i64, 0i64, 0i64);
    for entry in facts.nodes.values().filter(|e| e.exists()) {
        let scheduled = !entry.pods.is_empty();
        if !entry.fit.should_run {
            if scheduled {
                misscheduled += 1;
            }
            continue;
        }
        desired += 1;
        let oldest = entry
            .pods
            .iter()
            .filter_map(|&p| facts.pod(p))
            .min_by(|a, b| by_age(a, b));
        let Some(pod) = oldest else {
            continue;
        };
        current += 1;
        if pod.ready {
            ready += 1;
            if pod.daemon_available {
                available += 1;
            }
        }
        if pod.updated {
            updated += 1;
        }
    }
    let status = DaemonSetStatus {
        current_number_scheduled: count(current),
        number_misscheduled: count(misscheduled),
        desired_number_scheduled: count(desired),
        number_ready: count(ready),
        observed_generation: old.observed_generation,
        updated_number_scheduled: count(updated),
        number_available: count(available),
        number_unavailable: count(desired - available),
        collision_count: old.collision_count,
        conditions: old.conditions,
        update_revision: ctx.input.revisions.update_hash.to_owned(),
    };
    let min_ready = ctx.settings.min_ready_seconds;
    let requeue = (min_ready > 0 && ready != available)
        .then(|| Duration::from_secs(u64::try_from(min_ready).unwrap_or(0)));
    (status, requeue)
}
