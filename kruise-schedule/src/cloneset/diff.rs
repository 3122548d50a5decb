//! Upstream's `calculateDiffsWithExpectation` (`pkg/controller/cloneset/sync/cloneset_scale.go`): how many pods to
//! create, delete and update, and the budgets for doing so.

use std::fmt;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::CloneSet;

use super::facts::{self, AVAILABLE, PodFacts, SPECIFIED, UPDATED, UPDATED_FOR_SCALE};
use super::options::Options;
use super::settings::Settings;
use crate::pod_view::State;

/// The ten numbers of upstream's `expectationDiffs`. All zero when nothing is to be done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Diff {
    /// Pods to create (before `scale_up_limit`).
    pub scale_up_num: i64,
    /// How many of the pods to create should be at the current revision (may exceed `scale_up_num`).
    pub scale_up_num_old_revision: i64,
    /// Pods to delete, not counting those already specified for deletion.
    pub scale_down_num: i64,
    /// How many of the pods to delete should be at old revisions (may exceed `scale_down_num`).
    pub scale_down_num_old_revision: i64,
    /// How many pods may be created now (`scaleStrategy.maxUnavailable` minus the unavailable pods).
    pub scale_up_limit: i64,
    /// How many ready pods may be deleted now (`maxUnavailable` plus the surplus minus the unavailable).
    pub delete_ready_limit: i64,
    /// Pods temporarily above `replicas`.
    pub use_surge: i64,
    /// How many of the surge pods are at the current revision.
    pub use_surge_old_revision: i64,
    /// Pods to move to the update revision (positive) or back to the current revision (negative).
    pub update_num: i64,
    /// How many pods may be unavailable because of updates.
    pub update_max_unavailable: i64,
}

impl Diff {
    /// Whether every number is zero.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The fields with upstream's (camelCase) names, in upstream's order.
    #[must_use]
    pub fn fields(&self) -> [(&'static str, i64); 10] {
        [
            ("scaleUpNum", self.scale_up_num),
            ("scaleUpNumOldRevision", self.scale_up_num_old_revision),
            ("scaleDownNum", self.scale_down_num),
            ("scaleDownNumOldRevision", self.scale_down_num_old_revision),
            ("scaleUpLimit", self.scale_up_limit),
            ("deleteReadyLimit", self.delete_ready_limit),
            ("useSurge", self.use_surge),
            ("useSurgeOldRevision", self.use_surge_old_revision),
            ("updateNum", self.update_num),
            ("updateMaxUnavailable", self.update_max_unavailable),
        ]
    }
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (name, value) in self.fields() {
            if value != 0 {
                if !first {
                    f.write_str(", ")?;
                }
                write!(f, "{name}={value}")?;
                first = false;
            }
        }
        if first {
            f.write_str("nothing to do")?;
        }
        Ok(())
    }
}

/// Which pods count as "at the update revision".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RevisionMatch {
    /// `controller-revision-hash` denotes the update revision (upstream `EqualToRevisionHash`; the update
    /// step's default).
    #[default]
    Hash,
    /// Also `PreparingUpdate` pods when `PreparingUpdateAsUpdate` is on (upstream `revision.IsPodUpdate`; the
    /// scale step's predicate).
    IsPodUpdate,
}

/// The diff for `cloneset` with its `pods` (inactive ones are ignored) between the current and update
/// revisions, at `now` (for `minReadySeconds`).
///
/// ```
/// use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
/// use kruise_api::apps::v1beta1::{CloneSet, RollingUpdateCloneSetStrategy};
/// use kruise_schedule::cloneset::{calculate_diffs, Options, RevisionMatch};
///
/// let mut cloneset = CloneSet::default();
/// cloneset.spec.replicas = Some(5);
/// cloneset.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
///     max_unavailable: Some(IntOrString::Int(1)),
///     ..Default::default()
/// });
/// let now = "2024-05-01T10:00:00Z".parse().unwrap();
/// let diff = calculate_diffs(&cloneset, &[], "r1", "r2", RevisionMatch::Hash, &Options::default(), now);
/// assert_eq!((diff.scale_up_num, diff.scale_up_limit), (5, 5));
/// ```
#[must_use]
pub fn calculate_diffs(
    cloneset: &CloneSet,
    pods: &[Pod],
    current_revision: &str,
    update_revision: &str,
    revision_match: RevisionMatch,
    options: &Options,
    now: Timestamp,
) -> Diff {
    let settings = Settings::of(cloneset, options);
    let facts = facts::collect(pods, &settings, current_revision, update_revision, now);
    diff(
        &settings,
        &facts.pods,
        current_revision == update_revision,
        revision_match,
    )
}

#[derive(Default)]
struct Side {
    total: i64,
    pre_deleting: i64,
    active: i64,
    to_delete: i64,
    unavailable: i64,
}

/// The diff from the facts already read. Pod counts and `replicas` (an int32) cannot overflow; the
/// budgets can be anything a percentage scales to, so sums with them saturate.
pub(crate) fn diff(
    settings: &Settings<'_>,
    pods: &[PodFacts<'_>],
    same_revision: bool,
    revision_match: RevisionMatch,
) -> Diff {
    let updated_flag = match revision_match {
        RevisionMatch::Hash => UPDATED,
        RevisionMatch::IsPodUpdate => UPDATED_FOR_SCALE,
    };
    let (mut new, mut old) = (Side::default(), Side::default());
    for pod in pods {
        let side = if pod.has(updated_flag) {
            &mut new
        } else {
            &mut old
        };
        side.total += 1;
        if pod.state == State::PreparingDelete {
            side.pre_deleting += 1;
        } else {
            side.active += 1;
            if pod.has(SPECIFIED) {
                side.to_delete += 1;
            } else if !pod.has(AVAILABLE) {
                side.unavailable += 1;
            }
        }
    }
    let replicas = settings.replicas;
    let partition = settings.partition;
    let mut update_old_diff = old.active - partition;
    let mut update_new_diff = new.active - (replicas - partition);
    let total_unavailable = new.pre_deleting + old.pre_deleting + new.unavailable + old.unavailable;
    if same_revision || !settings.partition_rollback {
        update_old_diff = update_old_diff.max(0);
        update_new_diff = update_new_diff.min(0);
    }

    let mut result = Diff::default();
    if settings.max_surge > 0 {
        let (mut scale_surge, mut scale_old_surge) = (0, 0);
        let to_delete = new.to_delete + old.to_delete;
        if to_delete > 0 {
            scale_surge = (total_unavailable + to_delete)
                .saturating_sub(settings.max_unavailable)
                .max(0)
                .min(to_delete);
            if scale_surge > new.to_delete {
                scale_old_surge = scale_surge - new.to_delete;
            }
        }
        let (mut update_surge, mut update_old_surge) = (0, 0);
        let opposite = (update_old_diff > 0 && update_new_diff < 0)
            || (update_old_diff < 0 && update_new_diff > 0);
        if opposite {
            if update_old_diff.abs() <= update_new_diff.abs() {
                update_surge = update_old_diff.abs();
                if update_old_diff < 0 {
                    update_old_surge = update_surge;
                }
            } else {
                update_surge = update_new_diff.abs();
                if update_new_diff > 0 {
                    update_old_surge = update_surge;
                }
            }
        }
        if scale_surge >= update_surge {
            result.use_surge = settings.max_surge.min(scale_surge);
            result.use_surge_old_revision = result.use_surge.min(scale_old_surge);
        } else {
            result.use_surge = settings.max_surge.min(update_surge);
            result.use_surge_old_revision = result.use_surge.min(update_old_surge);
        }
    }

    let all = new.total + old.total;
    let mut current_total = all;
    let mut current_total_old = old.total;
    if settings.exclude_preparing_delete {
        current_total -= old.pre_deleting + new.pre_deleting;
        current_total_old -= old.pre_deleting;
    }
    let expected_total = replicas + result.use_surge;
    let expected_total_old = partition + result.use_surge_old_revision;

    let up = expected_total - current_total;
    if up > 0 {
        result.scale_up_num = up;
        result.scale_up_num_old_revision = (expected_total_old - current_total_old).max(0);
        result.scale_up_limit = up.min(
            settings
                .scale_max_unavailable
                .saturating_sub(total_unavailable)
                .max(0),
        );
    }
    let down = current_total - old.to_delete - new.to_delete - expected_total;
    if down > 0 {
        result.scale_down_num = down;
        result.scale_down_num_old_revision =
            (current_total_old - old.to_delete - expected_total_old).max(0);
    }
    if new.to_delete > 0 || old.to_delete > 0 || result.scale_down_num > 0 {
        result.delete_ready_limit = settings
            .max_unavailable
            .saturating_add(all - replicas)
            .saturating_sub(total_unavailable)
            .max(0);
    }
    result.update_num = if update_old_diff.abs() <= update_new_diff.abs() {
        update_old_diff
    } else {
        -update_new_diff
    };
    if result.update_num != 0 {
        result.update_max_unavailable = settings.max_unavailable.saturating_add(all - replicas);
    }
    result
}
