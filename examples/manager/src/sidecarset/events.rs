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

use k8s_openapi::api::core::v1::ObjectReference;
use kruise_api::apps::v1beta1::SidecarSet;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Client, Resource};
use tokio::sync::mpsc;

/// How many Events may wait to be published.
const QUEUE: usize = 1024;

/// One Event about a SidecarSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Normal or Warning.
    pub warning: bool,
    /// The reason.
    pub reason: &'static str,
    /// The message.
    pub message: String,
}

impl Record {
    /// A Normal Event.
    #[must_use]
    pub fn normal(reason: &'static str, message: String) -> Self {
        Self {
            warning: false,
            reason,
            message,
        }
    }

    /// A Warning Event.
    #[must_use]
    pub fn warning(reason: &'static str, message: String) -> Self {
        Self {
            warning: true,
            reason,
            message,
        }
    }
}

/// Where Events go: a queue drained by a background task.
#[derive(Clone, Debug)]
pub struct EventSink {
    sender: mpsc::Sender<(ObjectReference, Record)>,
}

impl EventSink {
    /// Starts the publishing task.
    #[must_use]
    pub fn spawn(client: Client, reporter: Reporter) -> Self {
        let (sender, mut receiver) = mpsc::channel::<(ObjectReference, Record)>(QUEUE);
        let recorder = Recorder::new(client, reporter);
        tokio::spawn(async move {
            while let Some((reference, record)) = receiver.recv().await {
                let event = Event {
                    type_: if record.warning {
                        EventType::Warning
                    } else {
                        EventType::Normal
                    },
                    reason: record.reason.to_owned(),
                    note: Some(record.message),
                    action: record.reason.to_owned(),
                    secondary: None,
                };
                if let Err(error) = recorder.publish(&event, &reference).await {
                    tracing::debug!(%error, "publishing a SidecarSet Event failed");
                }
            }
        });
        Self { sender }
    }

    /// A sink whose Events go to `sender` (tests).
    #[must_use]
    pub fn to_channel(sender: mpsc::Sender<(ObjectReference, Record)>) -> Self {
        Self { sender }
    }

    /// Queues an Event about `sidecarset`.
    pub fn record(&self, sidecarset: &SidecarSet, record: Record) {
        let reference = sidecarset.object_ref(&());
        if let Err(error) = self.sender.try_send((reference, record)) {
            tracing::warn!(%error, "the SidecarSet Event queue is full; dropping an Event");
        }
    }
}
