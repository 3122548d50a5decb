//! PodUnavailableBudget (upstream `pkg/controller/podunavailablebudget`, `pkg/control/pubcontrol` and the
//! pod validating webhook `pod_unavailable_budget.go`): how many of the pods a budget covers may be
//! unavailable at once, and whether one more deletion, eviction or update may make a pod unavailable.
//!
//! * [`covers`], [`is_ignored`], [`WorkloadRef`]: which pods a budget covers and which it leaves alone;
//! * [`protected_operations`]: which operations it protects;
//! * [`availability`]: expected and desired counts, and when a pod is available;
//! * [`compute_status`]: the status, its lists expiring with time ([`status`]);
//! * [`decide`]: spend one unit or refuse ([`admission`]), to be written conditionally by the caller;
//! * [`update_operation`]: whether a pod update makes it unavailable ([`pod_update`]).
//!
//! Everything works on the v1beta1 (hub) type: convert a stored v1alpha1 budget with
//! `kruise_api::convert::to_hub` first (its annotations become the v1beta1 fields).

pub mod admission;
pub mod availability;
pub mod coverage;
mod error;
pub mod operations;
pub mod pod_update;
pub mod status;

pub use self::admission::{Free, Refusal, Verdict, decide};
pub use self::coverage::{WorkloadRef, budget_key, covers, is_ignored};
pub use self::error::BudgetError;
pub use self::operations::{protected_operations, protects};
pub use self::pod_update::update_operation;
pub use self::status::{ComputedStatus, compute_status, expected_count};
