//! The numbers and switches a CloneSet's spec gives the planner, read once.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{
    CloneSet, CloneSetPodUpdatePolicy, CloneSetUpdateStrategyType, RollingUpdateCloneSetStrategy,
};
use kruise_api::keys;

use super::invalid::{self, InvalidValue, Reading};
use super::options::Options;
use crate::int_or_percent::{Rounding, ScaleError, legacy_scaled};
use crate::partition::partition_replicas;

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
    /// Values upstream's validation would refuse or its controller cannot parse, with how they were read.
    pub(crate) invalid: Vec<InvalidValue>,
    /// Whether one of them holds the plan ([`Reading::Hold`]): nothing is scaled or updated.
    pub(crate) held: bool,
}

const REPLICAS: &str = "spec.replicas";
const MIN_READY_SECONDS: &str = "spec.minReadySeconds";

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
        let mut found: Vec<InvalidValue> = Vec::new();
        found.extend(invalid::replicas(REPLICAS, spec.replicas));
        found.extend(invalid::min_ready_seconds(
            MIN_READY_SECONDS,
            spec.min_ready_seconds,
        ));
        if let Some(rolling) = rolling {
            if let Some(partition) = &rolling.partition {
                found.extend(invalid::partition(PARTITION, partition, replicas));
            }
            let budgets = [
                (MAX_SURGE, rolling.max_surge.as_ref()),
                (MAX_UNAVAILABLE, rolling.max_unavailable.as_ref()),
            ];
            for (field, budget) in budgets {
                found.extend(budget.and_then(|budget| invalid::negative_budget(field, budget)));
            }
        }
        if let Some(budget) = &spec.scale_strategy.max_unavailable {
            found.extend(invalid::negative_budget(SCALE_MAX_UNAVAILABLE, budget));
        }
        // Upstream logs a value it cannot parse and uses 0 (a partition that does not parse holds instead,
        // reported above).
        let mut read = |field: &'static str, result: Result<i64, ScaleError>| {
            result.unwrap_or_else(|error| {
                if field != PARTITION {
                    found.push(InvalidValue::unparsable(field, &error, Reading::Zero));
                }
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
        found.sort_by_key(|value| value.field);
        let held = found.iter().any(|value| value.reading == Reading::Hold);
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
            invalid: found,
            held,
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
