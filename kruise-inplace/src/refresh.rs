//! Moving an in-place update forward on every reconcile (upstream's `Refresh`).
//!
//! 1. A non-empty grace annotation means the update waits for its grace period: if the pod's revision label no
//!    longer matches the spec's revision, the grace annotation is dropped; else, if less than `graceSeconds`
//!    passed since the state's `updateTimestamp` (second precision), nothing changes and the outcome asks to
//!    look again after the rest, rounded up to whole seconds; else the first batch is written and the grace
//!    annotation removed. Nothing else happens in that call.
//! 2. With a state annotation: when the containers written so far are not done
//!    ([`completion::check_containers`]) nothing happens. When containers are left for later batches, every
//!    container of `preCheckBeforeNext.containersRequiredReady` must report `ready: true`, then the next batch
//!    is written. Upstream does not write a batch made only of `nextContainerResources` (it goes on to step 3);
//!    this crate does the same.
//! 3. With the `InPlaceUpdateReady` gate, the condition becomes `True` (unless it already is, with empty reason
//!    and message). `Ready` itself is left to kubelet.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::inplace::{InPlaceUpdatePreCheckBeforeNext, InPlaceUpdateState};

use crate::apply::is_at_revision;
use crate::batch;
use crate::completion;
use crate::condition;
use crate::error::{Error, pod_key};
use crate::options::UpdateOptions;
use crate::patch::Outcome;
use crate::state;
use crate::update_spec::UpdateSpec;

/// The next step of the pod's in-place update at `now`, if any.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use kruise_inplace::{refresh, UpdateOptions};
///
/// let now = "2024-05-01T10:00:00Z".parse().unwrap();
/// let outcome = refresh(&Pod::default(), now, &UpdateOptions::default()).unwrap();
/// assert!(!outcome.changed());
/// ```
///
/// # Errors
/// [`Error`] when an in-place annotation does not parse, a grace period has no state, or a metadata patch
/// cannot be applied.
pub fn refresh(pod: &Pod, now: Timestamp, options: &UpdateOptions) -> Result<Outcome, Error> {
    if let Some(grace) = state::grace_value(pod).filter(|grace| !grace.is_empty()) {
        return finish_grace_period(pod, grace, now, options);
    }
    if let Some(value) = state::state_value(pod) {
        let mut current = state::parse_state(value).map_err(|source| Error::Annotation {
            pod: pod_key(pod),
            source,
        })?;
        if completion::check_containers(pod, &current, options).is_err() {
            return Ok(Outcome::unchanged(pod));
        }
        let later = !current.next_container_images.is_empty()
            || !current.next_container_ref_metadata.is_empty()
            || !current.next_container_resources.is_empty();
        if later {
            if !pre_check_passes(pod, current.pre_check_before_next.as_ref()) {
                return Ok(Outcome::unchanged(pod));
            }
            if let Some(outcome) = next_batch(pod, &mut current, now, options)? {
                return Ok(outcome);
            }
        }
    }
    if !condition::has_readiness_gate(pod) {
        return Ok(Outcome::unchanged(pod));
    }
    let mut updated = pod.clone();
    condition::update_condition(&mut updated, condition::ready_condition(now), now);
    Ok(Outcome::between_steps(
        pod,
        updated,
        options.resize_subresource,
    ))
}

fn finish_grace_period(
    pod: &Pod,
    grace: &str,
    now: Timestamp,
    options: &UpdateOptions,
) -> Result<Outcome, Error> {
    let spec = UpdateSpec::from_json(grace).map_err(|source| Error::GraceSpec {
        pod: pod_key(pod),
        source,
    })?;
    let value =
        state::state_value(pod).ok_or_else(|| Error::GraceWithoutState { pod: pod_key(pod) })?;
    let mut current = state::parse_state(value).map_err(|source| Error::Annotation {
        pod: pod_key(pod),
        source,
    })?;
    let mut updated = pod.clone();
    if is_at_revision(pod, &spec.revision, options.revision_labels) {
        let grace = SignedDuration::from_secs(i64::from(spec.grace_seconds));
        let elapsed = now.duration_since(current.update_timestamp.0);
        if elapsed < grace {
            let mut outcome = Outcome::unchanged(pod);
            outcome.requeue_after = Some(round_up_to_seconds(grace - elapsed));
            return Ok(outcome);
        }
        batch::patch_spec_to_pod(&mut updated, &spec, &mut current, now, &options.gates)?;
    }
    state::remove_grace(&mut updated);
    Ok(Outcome::between_steps(
        pod,
        updated,
        options.resize_subresource,
    ))
}

/// Upstream's `roundupSeconds` of a positive duration.
fn round_up_to_seconds(remaining: SignedDuration) -> Duration {
    let seconds = u64::try_from(remaining.as_secs()).unwrap_or_default();
    let extra = u64::from(remaining.subsec_nanos() > 0);
    Duration::from_secs(seconds + extra)
}

fn pre_check_passes(pod: &Pod, pre_check: Option<&InPlaceUpdatePreCheckBeforeNext>) -> bool {
    let Some(pre_check) = pre_check else {
        return true;
    };
    let statuses = crate::pod_containers::container_statuses(pod);
    pre_check.containers_required_ready.iter().all(|name| {
        statuses
            .iter()
            .find(|status| &status.name == name)
            .is_some_and(|status| status.ready)
    })
}

/// Upstream's `updateNextBatch`; `None` when there is no image or metadata left (a resources-only remainder is
/// not written).
fn next_batch(
    pod: &Pod,
    current: &mut InPlaceUpdateState,
    now: Timestamp,
    options: &UpdateOptions,
) -> Result<Option<Outcome>, Error> {
    if current.next_container_images.is_empty() && current.next_container_ref_metadata.is_empty() {
        return Ok(None);
    }
    let spec = UpdateSpec {
        container_images: current.next_container_images.clone(),
        container_ref_metadata: current.next_container_ref_metadata.clone(),
        update_env_from_metadata: current.update_env_from_metadata,
        container_resources: current.next_container_resources.clone(),
        ..UpdateSpec::default()
    };
    let mut updated = pod.clone();
    batch::patch_spec_to_pod(&mut updated, &spec, current, now, &options.gates)?;
    Ok(Some(Outcome::between_steps(
        pod,
        updated,
        options.resize_subresource,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_up() {
        assert_eq!(
            round_up_to_seconds(SignedDuration::from_secs(5)),
            Duration::from_secs(5)
        );
        assert_eq!(
            round_up_to_seconds(SignedDuration::from_millis(4001)),
            Duration::from_secs(5)
        );
        assert_eq!(
            round_up_to_seconds(SignedDuration::from_nanos(1)),
            Duration::from_secs(1)
        );
    }
}
