//! Availability protection decisions (upstream's `policy.kruise.io` features), without I/O.
//!
//! * [`deletion`]: deletion protection, the `policy.kruise.io/delete-protection` label (gate
//!   `ResourcesDeletionProtection`): which deletions of Namespaces, CustomResourceDefinitions and workloads
//!   are refused, and the message.
//! * [`unavailable_budget`]: PodUnavailableBudget: which pods a budget covers, its status, and whether a
//!   deletion, eviction or update of a pod may spend one unit of the budget.

pub mod deletion;
pub mod unavailable_budget;
