//! The Advanced DaemonSet planner: one reconcile of upstream's DaemonSet controller as a pure function
//! (upstream `pkg/controller/daemonset`).
//!
//! [`plan`] reads a [`PlanInput`] (the DaemonSet, references to its pods and to every node, the update hash
//! and known revisions, `now`, [`Options`]) and returns a [`Plan`]: the [`Action`]s of the step that acts — each with the [`Rule`]
//! that chose it, in the planners' shared vocabulary ([`crate::planning`]) — the new status, the rollout [`Budgets`], the node update order and when to requeue.
//!
//! 1. **manage**: which nodes should run the pod ([`node_fit`]: `spec.nodeName`, `nodeSelector`, required node
//!    affinity, taints against the template's tolerations plus the default daemon tolerations — so
//!    unschedulable nodes still run it); create the missing pod on each (slow-start batches, `burstReplicas`,
//!    and with `scaleStrategy.partitionedScaling` at most `desired - new - partition`), delete failed,
//!    `PreparingDelete`, excess and misplaced pods (a preDelete hook turns a deletion into `PreparingDelete`).
//!    If anything is written, the plan stops there, as upstream waits for its expectations.
//! 2. **refresh** in-place updates in progress, then, unless `paused` or `OnDelete`, the **rolling update** on
//!    the nodes the update order allows (partition, `rollingUpdate.selector`): with `maxSurge` 0 replace old
//!    pods within `maxUnavailable` (in place with `InPlaceIfPossible` when the change allows it), otherwise
//!    create new pods next to old ones within `maxSurge` and delete each old pod once its new pod is
//!    available.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Node, Pod};
//! use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
//! use kruise_api::apps::v1beta1::DaemonSet;
//! use kruise_schedule::daemonset::{plan, ActionKind, Options, PlanInput, Revisions, Step};
//!
//! let daemonset: DaemonSet = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
//!     "metadata": {"name": "agent", "namespace": "kube-system", "generation": 2},
//!     "spec": {
//!         "selector": {"matchLabels": {"app": "agent"}},
//!         "template": {
//!             "metadata": {"labels": {"app": "agent"}},
//!             "spec": {"nodeSelector": {"role": "worker"}, "containers": [{"name": "c", "image": "agent:1"}]},
//!         },
//!     },
//! })).unwrap();
//! let node = |name: &str, role: &str| -> Node {
//!     serde_json::from_value(serde_json::json!({"metadata": {"name": name, "labels": {"role": role}}})).unwrap()
//! };
//! let nodes = [node("n1", "worker"), node("n2", "worker"), node("m1", "control-plane")];
//! let nodes: Vec<&Node> = nodes.iter().collect();
//! let pods: Vec<&Pod> = Vec::new();
//! let now = "2024-05-01T10:00:00Z".parse::<Timestamp>().unwrap().to_zoned(TimeZone::UTC);
//! let options = Options::default();
//! let input = PlanInput::new(&daemonset, &pods, &nodes, Revisions::hash("6d5b8f7c9"), &now, &options);
//! let plan = plan(&input);
//! assert_eq!(plan.step, Step::Manage);
//! let created: Vec<&str> = plan.actions.iter().filter_map(|a| match &a.kind {
//!     ActionKind::CreatePod { node, .. } => node.as_deref(),
//!     _ => None,
//! }).collect();
//! assert_eq!(created, ["n1", "n2"]); // the control-plane node fails the nodeSelector
//! assert_eq!(plan.status.desired_number_scheduled, 2);
//! assert_eq!(plan.status.update_revision, "6d5b8f7c9");
//! ```

mod action;
mod create;
mod error;
mod facts;
mod in_place;
mod input;
mod manage;
pub mod node_affinity;
pub mod node_fit;
mod options;
mod plan;
mod rolling;
mod settings;
mod status;
mod sync_nodes;
pub mod toleration;
mod update_order;

pub use action::{Action, ActionKind, Rule};
pub use create::OWNER_API_VERSION;
pub use error::Error;
pub use input::{KnownRevision, PlanInput, Revisions};
pub use node_fit::{DaemonPodFit, NodeFit, Unfit};
pub use options::Options;
pub use plan::{Plan, Step, plan};
pub use settings::{Budgets, DEFAULT_BURST_REPLICAS, TEMPLATE_GENERATION_ANNOTATION};
pub use update_order::NodeClass;

pub use crate::planning::{PlanRule, UpdateHow};
