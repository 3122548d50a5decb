//! Which nodes a BroadcastJob's pod fits on (upstream `pkg/controller/broadcastjob`): the predicates upstream runs
//! against a pod pinned to each node, reusing the DaemonSet planner's node affinity and taint code.
//!
//! A node fits when:
//! 1. the template's `spec.nodeName`, if set, names it;
//! 2. it satisfies the template's `nodeSelector` and required node affinity
//!    ([`crate::daemonset::node_affinity`]);
//! 3. every `NoSchedule` and `NoExecute` taint is tolerated by the template's own tolerations (a job pod
//!    gets no default daemon tolerations);
//! 4. it is not `spec.unschedulable`, unless the pod tolerates the `node.kubernetes.io/unschedulable`
//!    `NoSchedule` taint.
//!
//! Resource fit is not checked (see the crate README, Deviations).

use k8s_openapi::api::core::v1::{Node, PodSpec, Taint};

use crate::daemonset::node_affinity;
use crate::daemonset::toleration::{NO_EXECUTE, NO_SCHEDULE, first_untolerated, tolerates};

/// The taint key kubelet and the node controller use for `spec.unschedulable`.
pub const UNSCHEDULABLE_TAINT_KEY: &str = "node.kubernetes.io/unschedulable";

/// Why a node does not fit the job's pod.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unfit {
    /// The template names another node in `spec.nodeName`.
    NodeName {
        /// The template's node.
        wanted: String,
    },
    /// The node fails the template's `nodeSelector` or required node affinity.
    NodeAffinity,
    /// A `NoSchedule`/`NoExecute` taint no toleration tolerates (`key=value:effect`).
    Taint(String),
    /// The node is cordoned (`spec.unschedulable`).
    Unschedulable,
}

impl std::fmt::Display for Unfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NodeName { wanted } => write!(f, "the template's spec.nodeName is {wanted:?}"),
            Self::NodeAffinity => {
                f.write_str("the node fails the template's nodeSelector or required node affinity")
            }
            Self::Taint(taint) => write!(f, "taint {taint} is not tolerated"),
            Self::Unschedulable => f.write_str("the node is unschedulable"),
        }
    }
}

/// Whether the pod of `template` fits on `node` (`Ok`) or why not.
///
/// # Errors
/// The reason the node does not fit.
pub fn check(template: &PodSpec, node: &Node) -> Result<(), Unfit> {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    if let Some(wanted) = template.node_name.as_deref().filter(|n| !n.is_empty())
        && wanted != name
    {
        return Err(Unfit::NodeName {
            wanted: wanted.to_owned(),
        });
    }
    if !node_affinity::matches(template, node) {
        return Err(Unfit::NodeAffinity);
    }
    let tolerations = template.tolerations.as_deref().unwrap_or_default();
    let node_spec = node.spec.as_ref();
    let taints = node_spec
        .and_then(|spec| spec.taints.as_deref())
        .unwrap_or_default();
    if let Some(taint) = first_untolerated(taints, tolerations, &[NO_SCHEDULE, NO_EXECUTE]) {
        return Err(Unfit::Taint(describe(taint)));
    }
    if node_spec.and_then(|spec| spec.unschedulable) == Some(true) {
        let cordon = Taint {
            key: UNSCHEDULABLE_TAINT_KEY.to_owned(),
            effect: NO_SCHEDULE.to_owned(),
            ..Taint::default()
        };
        if !tolerations
            .iter()
            .any(|toleration| tolerates(toleration, &cordon))
        {
            return Err(Unfit::Unschedulable);
        }
    }
    Ok(())
}

fn describe(taint: &Taint) -> String {
    match taint.value.as_deref().filter(|v| !v.is_empty()) {
        Some(value) => format!("{}={}:{}", taint.key, value, taint.effect),
        None => format!("{}:{}", taint.key, taint.effect),
    }
}
