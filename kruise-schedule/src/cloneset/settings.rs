//! The numbers and switches a CloneSet's spec gives the planner, read once.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{
    CloneSet, CloneSetPodUpdatePolicy, CloneSetUpdateStrategyType, RollingUpdateCloneSetStrategy,
};
use kruise_api::keys;

use super::options::Options;
use crate::int_or_percent::{Rounding, ScaleError, legacy_scaled};
use crate::partition::partition_replicas;

/// A value upstream reads while swallowing a parse error (it logs and uses 0); kept so the plan can show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IgnoredValue {
    /// The field, e.g. `spec.updateStrategy.rollingUpdate.maxSurge`.
    pub field: &'static str,
    /// What was wrong with it.
    pub error: ScaleError,
}

/// The CloneSet's settings as the planner uses them.
#[derive(Clone, Debug)]
pub(crate) struct Settings<'a> {
    pub(crate) replicas: i64,
    pub(crate) partition: i64,
    pub(crate) max_surge: i64,
    pub(crate) max_unavailable: i64,
    pub(crate) scale_max_unavailable: i64,
    pub(crate) exclude_preparing_delete: bool,
    pub(crate) preparing_update_as_update: bool,
    pub(crate) partition_rollback: bool,
    pub(crate) min_ready_seconds: i32,
    pub(crate) paused: bool,
    pub(crate) on_delete: bool,
    pub(crate) policy: CloneSetPodUpdatePolicy,
    pub(crate) rolling: Option<&'a RollingUpdateCloneSetStrategy>,
    pub(crate) pods_to_delete: &'a [String],
    pub(crate) ignored: Vec<IgnoredValue>,
}

const MAX_SURGE: &str = "spec.updateStrategy.rollingUpdate.maxSurge";
const MAX_UNAVAILABLE: &str = "spec.updateStrategy.rollingUpdate.maxUnavailable";
const PARTITION: &str = "spec.updateStrategy.rollingUpdate.partition";
const SCALE_MAX_UNAVAILABLE: &str = "spec.scaleStrategy.maxUnavailable";

impl<'a> Settings<'a> {
    pub(crate) fn of(cloneset: &'a CloneSet, options: &Options) -> Self {
        let spec = &cloneset.spec;
        let replicas = i64::from(spec.replicas.unwrap_or(1));
        let on_delete = spec.update_strategy.type_ == Some(CloneSetUpdateStrategyType::OnDelete);
        let rolling = if on_delete {
            None
        } else {
            spec.update_strategy.rolling_update.as_ref()
        };
        let mut ignored = Vec::new();
        let mut read = |field: &'static str, result: Result<i64, ScaleError>| {
            result.unwrap_or_else(|error| {
                ignored.push(IgnoredValue {
                    field,
                    error: error.in_field(field),
                });
                0
            })
        };
        let default_unavailable =
            IntOrString::String(keys::cloneset::DEFAULT_MAX_UNAVAILABLE.into());
        let (partition, max_surge, max_unavailable) = match rolling {
            Some(rolling) => {
                let partition = read(
                    PARTITION,
                    partition_replicas(rolling.partition.as_ref(), spec.replicas),
                );
                let mut max_surge = match &rolling.max_surge {
                    Some(surge) => read(MAX_SURGE, legacy_scaled(surge, replicas, Rounding::Up)),
                    None => 0,
                };
                if rolling.paused {
                    max_surge = 0;
                }
                let rounding = if max_surge == 0 {
                    Rounding::Up
                } else {
                    Rounding::Down
                };
                let unavailable = rolling
                    .max_unavailable
                    .as_ref()
                    .unwrap_or(&default_unavailable);
                let max_unavailable = read(
                    MAX_UNAVAILABLE,
                    legacy_scaled(unavailable, replicas, rounding),
                );
                (partition, max_surge, max_unavailable)
            }
            None => (
                0,
                0,
                legacy_scaled(&default_unavailable, replicas, Rounding::Down).unwrap_or(0),
            ),
        };
        let scale_max_unavailable = match &spec.scale_strategy.max_unavailable {
            Some(value) => read(
                SCALE_MAX_UNAVAILABLE,
                legacy_scaled(value, replicas, Rounding::Up),
            ),
            None => i64::from(i32::MAX),
        };
        let label_exclude = cloneset
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(keys::cloneset::SCALING_EXCLUDE_PREPARING_DELETE_LABEL))
            .is_some_and(|value| value == "true");
        Self {
            replicas,
            partition,
            max_surge,
            max_unavailable,
            scale_max_unavailable,
            exclude_preparing_delete: spec.scale_strategy.exclude_preparing_delete
                || options.exclude_preparing_delete
                || label_exclude,
            preparing_update_as_update: options.preparing_update_as_update,
            partition_rollback: options.partition_rollback,
            min_ready_seconds: spec.min_ready_seconds,
            paused: rolling.is_some_and(|rolling| rolling.paused),
            on_delete,
            policy: rolling
                .and_then(|rolling| rolling.pod_update_policy.clone())
                .unwrap_or(CloneSetPodUpdatePolicy::ReCreate),
            rolling,
            pods_to_delete: &spec.scale_strategy.pods_to_delete,
            ignored,
        }
    }

    /// `status.expectedUpdatedReplicas`: replicas minus the partition (replicas without `rollingUpdate`); a
    /// partition that does not parse leaves it unset (0), as upstream.
    pub(crate) fn expected_updated_replicas(&self, cloneset: &CloneSet) -> i64 {
        match self.rolling {
            None => self.replicas,
            Some(rolling) => partition_replicas(rolling.partition.as_ref(), cloneset.spec.replicas)
                .map_or(0, |partition| self.replicas - partition),
        }
    }
}
