//! The vocabulary the rollout planners share: what a plan asks a controller to do ([`Action`],
//! [`ActionKind`]), why ([`PlanRule`], rendered by [`Action::reason`]), which revision a pod is at or moves to
//! ([`Target`]) and how an update is carried out ([`UpdateHow`]).
//!
//! Every planner has the same shape: `plan(input: &PlanInput<'_>) -> Plan` in its module
//! ([`crate::cloneset::plan`], [`crate::statefulset::plan`], [`crate::daemonset::plan`],
//! [`crate::broadcast_job::plan`]). Whatever a plan reads is in its input, randomness included (the CloneSet
//! input carries its instance-id source); the planners read no clock and use no global randomness.
//!
//! The writes that mean the same thing for every workload (create a claim or a pod, delete a pod, write a
//! lifecycle transition, refresh or start an in-place update) are variants of [`ActionKind`]; the writes only
//! one workload makes are its own enum, carried by [`ActionKind::Specific`]. Each planner names its
//! instantiation: `cloneset::Action` is `Action<cloneset::Rule, cloneset::SpecificKind>`, and so on.
//!
//! ```
//! use kruise_schedule::planning::{ActionKind, PlanRule};
//! use kruise_schedule::statefulset::{Action, Rule};
//!
//! let action = Action {
//!     kind: ActionKind::DeletePod { pod: 0 },
//!     rule: Rule::SpecifiedDelete { slot: 2 },
//! };
//! assert_eq!(action.kind.name(), "deletePod");
//! assert_eq!(action.kind.pod(), Some(0));
//! assert_eq!(action.rule.id(), "specified-delete");
//! assert_eq!(
//!     action.reason(),
//!     "labelled apps.kruise.io/specified-delete (slot 2); not limited by the partition"
//! );
//! ```

mod action;
mod rule;

pub use action::{Action, ActionKind, SpecificAction};
pub use rule::{Hook, PlanRule, Target, UpdateHow};
