//! Which nodes should run a daemon pod (upstream `nodeShouldRunDaemonPod`).
//!
//! The daemon pod is the template's pod with the default daemon tolerations added
//! ([`super::toleration::with_daemon_tolerations`]), so an unschedulable node (tainted
//! `node.kubernetes.io/unschedulable:NoSchedule`) and nodes under memory, disk or PID pressure still run
//! it, and a not-ready or unreachable node keeps it. A node:
//!
//! 1. must be the template's `spec.nodeName` when that is set;
//! 2. must satisfy the template's `nodeSelector` and required node affinity ([`super::node_affinity`]);
//! 3. should run the pod only when every `NoSchedule` and `NoExecute` taint is tolerated; with an untolerated
//!    `NoSchedule` taint but every `NoExecute` taint tolerated, a pod already there may continue running.
//!
//! `spec.unschedulable` itself is not read (the node controller turns it into the taint).

use k8s_openapi::api::core::v1::{Node, PodSpec, Taint, Toleration};

use super::node_affinity;
use super::toleration::{NO_EXECUTE, NO_SCHEDULE, first_untolerated, with_daemon_tolerations};

/// What a node says about running the daemon pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeFit {
    /// A daemon pod should run there (count it in `desiredNumberScheduled`, create one if missing).
    pub should_run: bool,
    /// A daemon pod already there may stay.
    pub should_continue_running: bool,
    /// Why not, when it should not run.
    pub reason: Option<Unfit>,
}

/// Why a node should not run the daemon pod.
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
    /// A taint no toleration tolerates.
    Taint {
        /// `key=value:effect`.
        taint: String,
    },
}

impl std::fmt::Display for Unfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NodeName { wanted } => write!(f, "the template's spec.nodeName is {wanted:?}"),
            Self::NodeAffinity => {
                f.write_str("the node fails the template's nodeSelector or required node affinity")
            }
            Self::Taint { taint } => write!(f, "taint {taint} is not tolerated"),
        }
    }
}

/// The daemon pod's tolerations (the template's plus the defaults) and how to check nodes against it.
#[derive(Clone, Debug)]
pub struct DaemonPodFit<'a> {
    spec: &'a PodSpec,
    tolerations: Vec<Toleration>,
}

impl<'a> DaemonPodFit<'a> {
    /// The fit checker for a pod template spec.
    #[must_use]
    pub fn new(spec: &'a PodSpec) -> Self {
        let tolerations = with_daemon_tolerations(
            spec.tolerations.as_deref().unwrap_or_default(),
            spec.host_network == Some(true),
        );
        Self { spec, tolerations }
    }

    /// The tolerations the daemon pod has.
    #[must_use]
    pub fn tolerations(&self) -> &[Toleration] {
        &self.tolerations
    }

    /// What `node` says about running the pod.
    #[must_use]
    pub fn check(&self, node: &Node) -> NodeFit {
        let name = node.metadata.name.as_deref().unwrap_or("");
        let unfit = |reason| NodeFit {
            should_run: false,
            should_continue_running: false,
            reason: Some(reason),
        };
        if let Some(wanted) = self.spec.node_name.as_deref().filter(|n| !n.is_empty())
            && wanted != name
        {
            return unfit(Unfit::NodeName {
                wanted: wanted.to_owned(),
            });
        }
        if !node_affinity::matches(self.spec, node) {
            return unfit(Unfit::NodeAffinity);
        }
        let taints = node
            .spec
            .as_ref()
            .and_then(|spec| spec.taints.as_deref())
            .unwrap_or_default();
        if let Some(taint) =
            first_untolerated(taints, &self.tolerations, &[NO_SCHEDULE, NO_EXECUTE])
        {
            let keeps = first_untolerated(taints, &self.tolerations, &[NO_EXECUTE]).is_none();
            return NodeFit {
                should_run: false,
                should_continue_running: keeps,
                reason: Some(Unfit::Taint {
                    taint: describe(taint),
                }),
            };
        }
        NodeFit {
            should_run: true,
            should_continue_running: true,
            reason: None,
        }
    }
}

fn describe(taint: &Taint) -> String {
    match taint.value.as_deref().filter(|v| !v.is_empty()) {
        Some(value) => format!("{}={}:{}", taint.key, value, taint.effect),
        None => format!("{}:{}", taint.key, taint.effect),
    }
}
