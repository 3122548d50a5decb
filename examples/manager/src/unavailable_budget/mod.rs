//! PodUnavailableBudget in kruise-manager (gates `PodUnavailableBudgetDeleteGate`, on by default, and
//! `PodUnavailableBudgetUpdateGate`, off by default, as upstream): the decisions are
//! [`kruise_schedule::protection::unavailable_budget`]'s; here are the reads and writes.
//!
//! * [`budgets`]: the budgets of the shared informer, and the one covering a pod;
//! * [`mod@spend`]: one unit of a pod's budget taken with a conditional status write (the webhook, and the
//!   CloneSet controller before an in-place update);
//! * [`update_check`]: the check the CloneSet and SidecarSet controllers make before an in-place update;
//! * [`controller`]: the status of every budget;
//! * [`workload_replicas`]: the replicas of a `targetRef` from its `scale` subresource.
//!
//! The validating webhook is [`crate::webhook::pod_unavailable_budget`].

pub mod budgets;
pub mod controller;
pub mod spend;
pub mod update_check;
pub mod workload_replicas;

pub use self::budgets::BudgetStores;
pub use self::spend::{Spent, spend};
