//! ContainerRecreateRequest: the pure decisions of its three actors, and the I/O of the
//! manager-side ones.
//!
//! * [`webhook`]: the mutating webhook's defaults and checks (pure); [`admission`] serves it;
//! * [`controller`]: kruise-manager's decisions (pure); [`reconciler`] runs them against the cluster;
//! * [`daemon`]: kruise-daemon's state machine (pure); `crate::daemon::crr` observes and executes it.
//!
//! The decision modules do no I/O, read no clock and use no randomness (the caller passes `now`); they are
//! table-tested next to the code. They live here rather than in a library crate because their inputs are
//! the CRI view of [`crate::cri::view`], which only the example binaries depend on.

pub mod admission;
pub mod controller;
pub mod daemon;
pub mod reconciler;
pub mod webhook;
