//! The numbers and switches an Advanced DaemonSet's spec gives the planner, with upstream's
//! scalers: `maxUnavailable` / `maxSurge` are the safe scaler rounding **up** over the nodes that should run
//! the pod, with maxUnavailable 1 when both are 0; `partition` is the safe scaler rounding **down** over
//! `status.desiredNumberScheduled`; `burstReplicas` (default 250) rounds down over the same.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{
    DaemonSet, DaemonSetRollingUpdateType, DaemonSetUpdateStrategyType, RollingUpdateDaemonSet,
};

use super::error::Error;
use crate::int_or_percent::{Rounding, ScaleError, safe_scaled};

/// Annotation on a DaemonSet holding its template generation (Kubernetes' `DeprecatedTemplateGeneration`);
/// pods whose `pod-template-generation` label equals it count as updated, as pods carrying the update hash do.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// The default `burstReplicas`.
pub const DEFAULT_BURST_REPLICAS: i32 = 250;

const MAX_UNAVAILABLE: &str = "spec.updateStrategy.rollingUpdate.maxUnavailable";
const MAX_SURGE: &str = "spec.updateStrategy.rollingUpdate.maxSurge";
const PARTITION: &str = "spec.updateStrategy.rollingUpdate.partition";
const BURST_REPLICAS: &str = "spec.burstReplicas";

/// The rollout numbers of one plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budgets {
    /// Nodes that should run the pod now.
    pub desired: i64,
    /// `maxUnavailable` scaled up over `desired`; 1 when it and `maxSurge` are both 0 and `desired > 0`.
    pub max_unavailable: i64,
    /// `maxSurge` scaled up over `desired`.
    pub max_surge: i64,
    /// `partition` scaled down over `status.desiredNumberScheduled`: how many nodes keep their old pod.
    pub partition: i64,
    /// `burstReplicas` scaled down over `status.desiredNumberScheduled`: creations and deletions per pass.
    pub burst_replicas: i64,
}

/// The DaemonSet's settings as the planner uses them.
#[derive(Clone, Debug)]
pub(crate) struct Settings<'a> {
    pub(crate) daemonset: &'a DaemonSet,
    /// `updateStrategy.type` is `RollingUpdate` (or unset, which defaults to it).
    pub(crate) rolling_type: bool,
    pub(crate) rolling: Option<&'a RollingUpdateDaemonSet>,
    pub(crate) in_place: bool,
    pub(crate) paused: bool,
    pub(crate) min_ready_seconds: i32,
    pub(crate) template_generation: Option<String>,
    pub(crate) partitioned_scaling: bool,
    pub(crate) key: String,
}

impl<'a> Settings<'a> {
    pub(crate) fn of(daemonset: &'a DaemonSet) -> Self {
        let spec = &daemonset.spec;
        let rolling_type = spec
            .update_strategy
            .type_
            .as_ref()
            .is_none_or(|t| *t == DaemonSetUpdateStrategyType::RollingUpdate);
        let rolling = spec.update_strategy.rolling_update.as_ref();
        let template_generation = daemonset
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION))
            .and_then(|value| value.parse::<i64>().ok())
            .map(|generation| generation.to_string());
        Self {
            daemonset,
            rolling_type,
            rolling,
            in_place: rolling_type
                && rolling.and_then(|r| r.type_.as_ref())
                    == Some(&DaemonSetRollingUpdateType::InPlaceIfPossible),
            paused: rolling.and_then(|r| r.paused) == Some(true),
            min_ready_seconds: spec.min_ready_seconds,
            template_generation,
            partitioned_scaling: spec
                .scale_strategy
                .as_ref()
                .is_some_and(|s| s.partitioned_scaling),
            key: format!(
                "{}/{}",
                daemonset.metadata.namespace.as_deref().unwrap_or(""),
                daemonset.metadata.name.as_deref().unwrap_or("")
            ),
        }
    }

    fn invalid(&self, field: &str, error: ScaleError) -> Error {
        Error::InvalidValue {
            daemonset: self.key.clone(),
            source: error.in_field(field),
        }
    }

    fn rolling_value(
        &self,
        pick: fn(&RollingUpdateDaemonSet) -> Option<&IntOrString>,
    ) -> Option<&'a IntOrString> {
        if !self.rolling_type {
            return None;
        }
        self.rolling.and_then(pick)
    }

    /// Whether the DaemonSet may run two pods on a node while replacing one (`maxSurge` of 1 node > 0; an
    /// invalid value means no).
    pub(crate) fn allow_surge(&self) -> bool {
        self.rolling_value(|r| r.max_surge.as_ref())
            .is_some_and(|value| safe_scaled(value, 1, Rounding::Up).is_ok_and(|n| n > 0))
    }

    /// `status.desiredNumberScheduled` as last written.
    pub(crate) fn status_desired(&self) -> i64 {
        i64::from(
            self.daemonset
                .status
                .as_ref()
                .map_or(0, |s| s.desired_number_scheduled),
        )
    }

    /// `burstReplicas` over `status.desiredNumberScheduled`, rounded down.
    pub(crate) fn burst_replicas(&self) -> Result<i64, Error> {
        let value = self
            .daemonset
            .spec
            .burst_replicas
            .clone()
            .unwrap_or(IntOrString::Int(DEFAULT_BURST_REPLICAS));
        safe_scaled(&value, self.status_desired(), Rounding::Down)
            .map_err(|error| self.invalid(BURST_REPLICAS, error))
    }

    /// The partition over `total`, rounded down (0 when unset or not a rolling update).
    pub(crate) fn partition_over(&self, total: i64) -> Result<i64, Error> {
        self.rolling_value(|r| r.partition.as_ref())
            .map_or(Ok(0), |value| safe_scaled(value, total, Rounding::Down))
            .map_err(|error| self.invalid(PARTITION, error))
    }

    /// Whether a partition is set at all.
    pub(crate) fn has_partition(&self) -> bool {
        self.rolling_value(|r| r.partition.as_ref()).is_some()
    }

    /// The budgets of the rolling update for `desired` nodes.
    pub(crate) fn budgets(&self, desired: i64) -> Result<Budgets, Error> {
        let scaled = |field, value: Option<&IntOrString>| {
            value.map_or(Ok(0), |value| {
                safe_scaled(value, desired, Rounding::Up)
                    .map_err(|error| self.invalid(field, error))
            })
        };
        let mut max_unavailable = scaled(
            MAX_UNAVAILABLE,
            self.rolling_value(|r| r.max_unavailable.as_ref()),
        )?;
        let max_surge = scaled(MAX_SURGE, self.rolling_value(|r| r.max_surge.as_ref()))?;
        if desired > 0 && max_unavailable == 0 && max_surge == 0 {
            max_unavailable = 1;
        }
        Ok(Budgets {
            desired,
            max_unavailable,
            max_surge,
            partition: self.partition_over(self.status_desired())?,
            burst_replicas: self.burst_replicas()?,
        })
    }
}
