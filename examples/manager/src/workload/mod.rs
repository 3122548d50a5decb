//! The glue the workload controllers (CloneSet, Advanced StatefulSet, Advanced DaemonSet) share: which
//! owner controls an object ([`owner`]), the owned objects of the shared informers as a controller's
//! trigger ([`watch`]), the set-up of the controller itself ([`controller`]: owner watch, triggers, queue
//! depth, harness), the ControllerRevision history of a pod template ([`history`]), the conditional
//! writes to a pod ([`pod_write`]) and how they are sent ([`send_writes`]; a plan's run of them, pods side by
//! side, [`pod_runs`]). Each is parametrised by the
//! owner's [`owner::OwnerKind`] and by the controller's state: its [`SharedExpectations`](crate::expectations::SharedExpectations) (the
//! [`watch::ExpectationSink`] of the owned objects) and what it forgets of a deleted owner
//! ([`controller::WorkloadState`]).

pub mod controller;
pub mod history;
#[cfg(test)]
pub(crate) mod offline_client;
pub mod owner;
pub mod pod_runs;
pub mod pod_write;
pub mod send_writes;
pub mod watch;
