//! The glue the workload controllers (CloneSet, Advanced StatefulSet, Advanced DaemonSet) share: which
//! owner controls an object ([`owner`]), the owned objects of the shared informers as a controller's
//! trigger ([`watch`]), and the ControllerRevision history of a pod template ([`history`]). Each is
//! parametrised by the owner's [`owner::OwnerKind`] and, for the trigger, by the controller's
//! [`watch::ExpectationSink`].

pub mod history;
pub mod owner;
pub mod pod_write;
pub mod watch;
