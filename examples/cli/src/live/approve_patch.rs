//! The write of `kruise rollout approve` (pure). Upstream's `kubectl kruise rollout approve` approves
//! Kruise Rollout objects (`rollouts.kruise.io`) only; kruise-rs has no such objects, so for CloneSets,
//! Advanced StatefulSets and Advanced DaemonSets approving releases the next batch of a partitioned
//! rollout: the partition drops to `--partition N`, or by one batch (the rolling update's
//! `maxUnavailable` scaled against the desired pods, at least 1).

use serde_json::{Value, json};

use super::strategy::{
    Rounding, conditional, desired_pods, dotted, held_back, knob, knob_patch, scaled,
};
use super::target::WorkloadKind;

/// The partition before and after, and the patch.
#[derive(Clone, Debug, PartialEq)]
pub struct Approval {
    /// Pods the partition held back.
    pub from: i64,
    /// Pods it holds back now.
    pub to: i64,
    /// The conditional merge patch.
    pub patch: Value,
}

/// One batch: `maxUnavailable` (CloneSet default `20%`, the others 1) of the desired pods, at least 1.
fn batch(object: &Value, kind: WorkloadKind, version: &str) -> Result<i64, String> {
    let default = match kind {
        WorkloadKind::CloneSet => json!("20%"),
        WorkloadKind::StatefulSet | WorkloadKind::DaemonSet => json!(1),
    };
    let value = knob(object, kind, version, "maxUnavailable").unwrap_or(&default);
    scaled(value, desired_pods(object, kind), Rounding::Up)
        .map(|count| count.max(1))
        .map_err(|error| format!("{}: {error}", dotted(kind, version, "maxUnavailable")))
}

/// Why `approve` does nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApproveRefusal {
    /// `--partition` is negative or not below the current partition (bad input).
    BadRequest(String),
    /// No partition holds pods back, or a knob does not parse.
    Refused(String),
}

impl std::fmt::Display for ApproveRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadRequest(message) | Self::Refused(message) => f.write_str(message),
        }
    }
}

/// Decides `approve`: the new partition is `requested`, else the current one lowered by one batch.
///
/// # Errors
/// No partition holds pods back, `requested` is negative or not below the current partition, or a knob
/// does not parse (each message names the field and value).
pub fn approve(
    object: &Value,
    kind: WorkloadKind,
    version: &str,
    requested: Option<i64>,
) -> Result<Approval, ApproveRefusal> {
    let field = dotted(kind, version, "partition");
    let from = held_back(object, kind, version)
        .map_err(ApproveRefusal::Refused)?
        .min(desired_pods(object, kind));
    if from == 0 {
        return Err(ApproveRefusal::Refused(format!(
            "no partition to lower: {field} holds no pod back, the rollout is not waiting for approval"
        )));
    }
    let to = match requested {
        Some(value) if value < 0 => {
            return Err(ApproveRefusal::BadRequest(format!(
                "--partition {value}: must be 0 or more"
            )));
        }
        Some(value) if value >= from => {
            return Err(ApproveRefusal::BadRequest(format!(
                "--partition {value}: must be below the current partition ({field} holds {from} pods back)"
            )));
        }
        Some(value) => value,
        None => (from - batch(object, kind, version).map_err(ApproveRefusal::Refused)?).max(0),
    };
    Ok(Approval {
        from,
        to,
        patch: conditional(object, knob_patch(kind, version, "partition", &json!(to))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cloneset(partition: &Value, max_unavailable: Option<Value>) -> Value {
        let mut rolling = json!({"partition": partition});
        if let Some(value) = max_unavailable {
            rolling["maxUnavailable"] = value;
        }
        json!({"metadata": {"resourceVersion": "3"},
               "spec": {"replicas": 10, "updateStrategy": {"rollingUpdate": rolling}}})
    }

    #[test]
    fn approve_lowers_the_partition_by_one_batch_or_to_the_value_given() {
        let by_default = approve(
            &cloneset(&json!(8), None),
            WorkloadKind::CloneSet,
            "v1beta1",
            None,
        )
        .unwrap();
        assert_eq!((by_default.from, by_default.to), (8, 6), "20% of 10");
        assert_eq!(
            by_default.patch,
            json!({"metadata": {"resourceVersion": "3"},
                   "spec": {"updateStrategy": {"rollingUpdate": {"partition": 6}}}})
        );
        let percent = approve(
            &cloneset(&json!("50%"), Some(json!(3))),
            WorkloadKind::CloneSet,
            "v1beta1",
            None,
        )
        .unwrap();
        assert_eq!((percent.from, percent.to), (5, 2));
        let last = approve(
            &cloneset(&json!(1), Some(json!("30%"))),
            WorkloadKind::CloneSet,
            "v1beta1",
            None,
        )
        .unwrap();
        assert_eq!(last.to, 0, "never below 0");
        let given = approve(
            &cloneset(&json!(8), None),
            WorkloadKind::CloneSet,
            "v1beta1",
            Some(3),
        )
        .unwrap();
        assert_eq!(given.to, 3);
        let asts =
            json!({"spec": {"replicas": 4, "updateStrategy": {"rollingUpdate": {"partition": 4}}}});
        assert_eq!(
            approve(&asts, WorkloadKind::StatefulSet, "v1beta1", None)
                .unwrap()
                .to,
            3,
            "batch of 1"
        );
        let alpha = json!({"spec": {"replicas": 4, "updateStrategy": {"partition": 2, "maxUnavailable": 2}}});
        let patch = approve(&alpha, WorkloadKind::CloneSet, "v1alpha1", None)
            .unwrap()
            .patch;
        assert_eq!(patch["spec"]["updateStrategy"]["partition"], 0);
    }

    #[test]
    fn approve_refuses_when_nothing_is_held_back_or_the_value_does_not_lower_it() {
        let error = approve(
            &cloneset(&json!(0), None),
            WorkloadKind::CloneSet,
            "v1beta1",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("no partition to lower") && error.contains("rollingUpdate.partition"),
            "{error}"
        );
        let unset = json!({"spec": {"replicas": 2}});
        assert!(approve(&unset, WorkloadKind::StatefulSet, "v1beta1", None).is_err());
        let ApproveRefusal::BadRequest(error) = approve(
            &cloneset(&json!(4), None),
            WorkloadKind::CloneSet,
            "v1beta1",
            Some(4),
        )
        .unwrap_err() else {
            panic!("a --partition that does not lower it is bad input");
        };
        assert!(
            error.contains("--partition 4") && error.contains("holds 4"),
            "{error}"
        );
        assert!(
            approve(
                &cloneset(&json!(4), None),
                WorkloadKind::CloneSet,
                "v1beta1",
                Some(-1)
            )
            .is_err()
        );
    }
}
