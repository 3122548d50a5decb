//! Leader election on a `coordination.k8s.io/v1` Lease: one active manager; a standby takes over within
//! the lease duration after the leader stops renewing; the leader's controllers run only while it leads;
//! on shutdown the lease is released so a standby takes over at once.
//!
//! [`decision`] holds the rules (pure, tested with two clocks), [`elector`] the I/O loop.

pub mod decision;
pub mod elector;

pub use decision::LeaderTiming;
pub use elector::{ElectionError, LeaderElector, Outcome};
