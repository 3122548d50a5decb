//! Availability protection decisions (upstream's `policy.kruise.io` features), without I/O.
//!
//! * [`deletion`]: deletion protection, the `policy.kruise.io/delete-protection` label (gate
//!   `ResourcesDeletionProtection`): which deletions of Namespaces, CustomResourceDefinitions and workloads
//!   are refused, and the message.

pub mod deletion;
