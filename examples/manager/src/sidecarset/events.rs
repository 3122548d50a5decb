//! The Kubernetes Events the SidecarSet controller records, published in the background (a reconcile
//! never waits for an Event; when the queue is full they are dropped and logged).
//!
//! | reason | type | when |
//! |---|---|---|
//! | `CreateRevision` | Normal | a ControllerRevision was created for the SidecarSet |
//! | `UpgradeSidecars` | Normal | a pod's sidecars were upgraded in place |
//! | `ResetHotUpgradeContainer` | Normal | a hot-upgrade pod's idle container went back to the empty image |
//! | `NotUpgradable` | Warning | a pod cannot be upgraded in place (`SidecarSetUpgradable=False` written) |
//! | `FailedUpdatePod` | Warning | a pod write failed |
//!
//! Upstream's SidecarSet controller records no Events; these make `kubectl describe sidecarset` show what
//! the controller did.

pub use kruise_runtime::events::{EventRecord as Record, EventSink};
