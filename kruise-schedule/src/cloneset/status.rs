//! The status a CloneSet plan writes (upstream `calculateStatus` and the `Progressing` condition).

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps::v1beta1::{
    CloneSetCondition, CloneSetConditionType, CloneSetStatus, INVALID_SPEC_REASON,
    progressing_reason,
};

use super::error::Error;
use super::facts::{AVAILABLE, UPDATE_READY, UPDATED};
use super::plan::Ctx;
use crate::selector_string::selector_string;

/// The condition a failed scale step adds.
pub(crate) const FAILED_SCALE: CloneSetConditionType = CloneSetConditionType::FailedScale;
/// The condition a failed update step adds.
pub(crate) const FAILED_UPDATE: CloneSetConditionType = CloneSetConditionType::FailedUpdate;

/// The new status and, while a rollout is progressing under a deadline, when to check the deadline.
pub(crate) fn status(
    ctx: &Ctx<'_>,
    failure: Option<(CloneSetConditionType, &Error)>,
) -> (CloneSetStatus, Option<Duration>) {
    let cloneset = ctx.input.cloneset;
    let old = cloneset.status.clone().unwrap_or_default();
    let mut status = CloneSetStatus {
        observed_generation: cloneset.metadata.generation.unwrap_or(0),
        update_revision: ctx.input.revisions.update.to_owned(),
        current_revision: ctx.input.revisions.current.to_owned(),
        collision_count: old.collision_count,
        label_selector: selector_string(&cloneset.spec.selector),
        conditions: old
            .conditions
            .iter()
            .filter(|c| c.type_ != FAILED_SCALE && c.type_ != FAILED_UPDATE)
            .cloned()
            .collect(),
        ..CloneSetStatus::default()
    };
    for facts in &ctx.facts.pods {
        status.replicas += 1;
        let updated = facts.has(UPDATED);
        if facts.has(UPDATE_READY) {
            status.ready_replicas += 1;
            if updated {
                status.updated_ready_replicas += 1;
            }
        }
        if facts.has(AVAILABLE) {
            status.available_replicas += 1;
            if updated {
                status.updated_available_replicas += 1;
            }
        }
        if updated {
            status.updated_replicas += 1;
        }
    }
    let replicas = i32::try_from(ctx.settings.replicas).unwrap_or(i32::MAX);
    if status.updated_replicas == status.replicas && status.replicas == replicas {
        status.current_revision.clone_from(&status.update_revision);
    }
    status.expected_updated_replicas =
        i32::try_from(ctx.settings.expected_updated_replicas(cloneset)).unwrap_or(0);
    let now = ctx.now;
    invalid_spec(ctx, &mut status, now);
    if let Some((type_, error)) = failure {
        status.conditions.push(CloneSetCondition {
            type_,
            status: "True".to_owned(),
            last_update_time: None,
            last_transition_time: Some(kruise_lifecycle::timestamp::condition_time(now)),
            reason: String::new(),
            message: error.to_string(),
        });
    }
    let requeue = progressing(ctx, &mut status, replicas, now);
    (status, requeue)
}

/// The `InvalidSpec` condition (kruise-rs): set while the spec has invalid values, in place (keeping its
/// `lastTransitionTime`, so an unchanged spec writes an unchanged status), removed once the spec is fixed.
fn invalid_spec(ctx: &Ctx<'_>, status: &mut CloneSetStatus, now: Timestamp) {
    let type_ = CloneSetConditionType::InvalidSpec;
    let invalid = &ctx.settings.invalid;
    if invalid.is_empty() {
        status.conditions.retain(|c| c.type_ != type_);
        return;
    }
    let message = invalid
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    if let Some(existing) = status.conditions.iter_mut().find(|c| c.type_ == type_) {
        if existing.status != "True" {
            existing.status = "True".to_owned();
            existing.last_transition_time = Some(kruise_lifecycle::timestamp::condition_time(now));
        }
        existing.reason = INVALID_SPEC_REASON.to_owned();
        existing.message = message;
        return;
    }
    status.conditions.push(CloneSetCondition {
        type_,
        status: "True".to_owned(),
        last_update_time: None,
        last_transition_time: Some(kruise_lifecycle::timestamp::condition_time(now)),
        reason: INVALID_SPEC_REASON.to_owned(),
        message,
    });
}

fn progressing(
    ctx: &Ctx<'_>,
    status: &mut CloneSetStatus,
    replicas: i32,
    now: Timestamp,
) -> Option<Duration> {
    let deadline = match ctx.input.cloneset.spec.progress_deadline_seconds {
        Some(deadline) if deadline != i32::MAX => deadline,
        _ => {
            status
                .conditions
                .retain(|c| c.type_ != CloneSetConditionType::Progressing);
            return None;
        }
    };
    let current = status
        .conditions
        .iter()
        .find(|c| c.type_ == CloneSetConditionType::Progressing)
        .cloned();
    let available = status.current_revision == status.update_revision
        && status.replicas == replicas
        && status.updated_replicas == replicas
        && status.updated_available_replicas == replicas;
    let partition_available = status.expected_updated_replicas < replicas
        && status.updated_available_replicas >= status.expected_updated_replicas;
    let exceeded = current.as_ref().is_some_and(|c| {
        c.reason == progressing_reason::PROGRESS_DEADLINE_EXCEEDED
            || c.last_update_time.as_ref().is_some_and(|t| {
                t.0.checked_add(SignedDuration::from_secs(i64::from(deadline)))
                    .is_ok_and(|until| until < now)
            })
    });
    let (state, reason, message) = if available {
        (
            "True",
            progressing_reason::AVAILABLE,
            "CloneSet is available".to_owned(),
        )
    } else if ctx.settings.paused {
        (
            "True",
            progressing_reason::PAUSED,
            "CloneSet is paused".to_owned(),
        )
    } else if partition_available {
        (
            "True",
            progressing_reason::PARTITION_AVAILABLE,
            "CloneSet has been paused due to partition ready".to_owned(),
        )
    } else if exceeded {
        (
            "False",
            progressing_reason::PROGRESS_DEADLINE_EXCEEDED,
            format!(
                "CloneSet revision {} has timed out progressing",
                status.update_revision
            ),
        )
    } else {
        (
            "True",
            progressing_reason::UPDATED,
            "CloneSet is progressing".to_owned(),
        )
    };
    let condition = set_condition(status, state, reason, message, now);
    if reason != progressing_reason::UPDATED {
        return None;
    }
    let since = condition.and_then(|c| c.last_update_time.map(|t| t.0))?;
    let until = since
        .checked_add(SignedDuration::from_secs(i64::from(deadline)))
        .ok()?;
    let after = Duration::try_from(until.duration_since(now)).ok()?;
    Some(if after < Duration::from_secs(1) {
        after
    } else {
        after + Duration::from_secs(1)
    })
}

/// Upstream `SetCloneSetCondition`: the same status and reason keep the existing condition; the same status
/// keeps its `lastTransitionTime`; otherwise the condition is replaced. Returns the condition now in place.
fn set_condition(
    status: &mut CloneSetStatus,
    state: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> Option<CloneSetCondition> {
    let time = kruise_lifecycle::timestamp::condition_time(now);
    let position = status
        .conditions
        .iter()
        .position(|c| c.type_ == CloneSetConditionType::Progressing);
    let existing = position.and_then(|i| status.conditions.get(i));
    if let Some(existing) = existing
        && existing.status == state
        && existing.reason == reason
    {
        return Some(existing.clone());
    }
    let transition = existing
        .filter(|c| c.status == state)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| time.clone());
    let condition = CloneSetCondition {
        type_: CloneSetConditionType::Progressing,
        status: state.to_owned(),
        last_update_time: Some(time),
        last_transition_time: Some(transition),
        reason: reason.to_owned(),
        message,
    };
    if let Some(position) = position {
        status.conditions.remove(position);
    }
    status.conditions.push(condition.clone());
    Some(condition)
}
