//! ContainerRecreateRequest in kruise-manager: the I/O around the pure decisions of
//! [`kruise_lifecycle::container_recreate`].
//!
//! * [`admission`] serves the mutating webhook ([`kruise_lifecycle::container_recreate::webhook`]);
//! * [`reconciler`] runs kruise-manager's decisions ([`kruise_lifecycle::container_recreate::controller`])
//!   against the cluster;
//! * kruise-daemon's side is `kruise_daemon::crr`, which observes the node through CRI
//!   ([`kruise_runtime::cri::view`] converts what the runtime says) and executes
//!   [`kruise_lifecycle::container_recreate::daemon`].

pub mod admission;
pub mod reconciler;
