//! Kubernetes Events, recorded one way by every controller: an [`EventRecord`] (Normal or Warning, reason,
//! message, optionally the related pod or claim) queued on an [`EventSink`], published by one background
//! task per sink through kube-runtime's `Recorder` (which counts repeats of the same Event as one series).
//! Recording never blocks a reconcile; when the queue is full the Event is dropped with a warning.
//!
//! ```
//! use kruise_runtime::events::EventRecord;
//!
//! let record = EventRecord::warning("FailedCreate", "failed to create pod web-0: quota".into())
//!     .about("Pod", "default", "web-0");
//! assert!(record.warning);
//! assert_eq!(record.related.unwrap().name.as_deref(), Some("web-0"));
//! ```

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Client, Resource};
use tokio::sync::mpsc;

/// How many Events may wait to be published.
const QUEUE: usize = 1024;

/// One Event about an object.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRecord {
    /// Normal or Warning.
    pub warning: bool,
    /// The reason (`SuccessfulCreate`, ...), also the Event's action.
    pub reason: &'static str,
    /// The message.
    pub message: String,
    /// The object acted on (the Event's `related` object). Events about different pods are kept apart;
    /// without it, Events with the same reason about one object are counted as one series.
    pub related: Option<ObjectReference>,
}

impl EventRecord {
    /// A Normal Event.
    #[must_use]
    pub fn normal(reason: &'static str, message: String) -> Self {
        Self {
            warning: false,
            reason,
            message,
            related: None,
        }
    }

    /// A Warning Event.
    #[must_use]
    pub fn warning(reason: &'static str, message: String) -> Self {
        Self::new(true, reason, message)
    }

    /// A Warning Event when `warning`, a Normal one otherwise.
    #[must_use]
    pub fn new(warning: bool, reason: &'static str, message: String) -> Self {
        Self {
            warning,
            ..Self::normal(reason, message)
        }
    }

    /// The same Event, about the core (`v1`) object `name` of kind `kind` in `namespace` as well.
    #[must_use]
    pub fn about(mut self, kind: &str, namespace: &str, name: &str) -> Self {
        self.related = Some(ObjectReference {
            api_version: Some("v1".to_owned()),
            kind: Some(kind.to_owned()),
            namespace: Some(namespace.to_owned()),
            name: Some(name.to_owned()),
            ..ObjectReference::default()
        });
        self
    }

    /// The kube-runtime Event.
    #[must_use]
    pub fn event(&self) -> Event {
        Event {
            type_: if self.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: self.reason.to_owned(),
            note: Some(self.message.clone()),
            action: self.reason.to_owned(),
            secondary: self.related.clone(),
        }
    }
}

/// Where a controller sends Events; cheap to clone.
#[derive(Clone, Debug)]
pub struct EventSink {
    sender: Option<mpsc::Sender<(ObjectReference, EventRecord)>>,
}

impl EventSink {
    /// A sink publishing through `client` as `reporter`, from a background task that ends when every
    /// clone of the sink is dropped (call inside a Tokio runtime).
    #[must_use]
    pub fn spawn(client: Client, reporter: Reporter) -> Self {
        let (sender, mut receiver) = mpsc::channel::<(ObjectReference, EventRecord)>(QUEUE);
        let recorder = Recorder::new(client, reporter);
        tokio::spawn(async move {
            while let Some((reference, record)) = receiver.recv().await {
                match recorder.publish(&record.event(), &reference).await {
                    Ok(()) => {
                        tracing::debug!(reason = record.reason, message = %record.message, "recorded an Event");
                    }
                    Err(error) => {
                        tracing::warn!(%error, reason = record.reason, "recording an Event failed");
                    }
                }
            }
        });
        Self {
            sender: Some(sender),
        }
    }

    /// A sink that drops everything (tests).
    #[must_use]
    pub fn disabled() -> Self {
        Self { sender: None }
    }

    /// A sink whose Events go to `sender` (tests).
    #[must_use]
    pub fn to_channel(sender: mpsc::Sender<(ObjectReference, EventRecord)>) -> Self {
        Self {
            sender: Some(sender),
        }
    }

    /// Queues an Event about the object `regarding`.
    pub fn record(&self, regarding: &ObjectReference, record: EventRecord) {
        let Some(sender) = &self.sender else {
            return;
        };
        if let Err(error) = sender.try_send((regarding.clone(), record)) {
            tracing::warn!(%error, "the Event queue is full; dropping an Event");
        }
    }

    /// Queues an Event about `object`.
    pub fn record_for<K: Resource<DynamicType = ()>>(&self, object: &K, record: EventRecord) {
        self.record(&object.object_ref(&()), record);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn records_are_queued_about_their_object() {
        let (sender, mut receiver) = mpsc::channel(4);
        let sink = EventSink::to_channel(sender);
        let pod: Pod =
            serde_json::from_value(json!({"metadata": {"name": "web-0", "namespace": "ns"}}))
                .unwrap();
        sink.record_for(&pod, EventRecord::normal("Started", "started".into()));
        let (reference, record) = receiver.recv().await.unwrap();
        assert_eq!(reference.name.as_deref(), Some("web-0"));
        assert_eq!(reference.kind.as_deref(), Some("Pod"));
        assert_eq!(record.reason, "Started");
        EventSink::disabled().record_for(&pod, EventRecord::normal("Dropped", String::new()));
    }

    #[test]
    fn events_carry_type_reason_action_and_related_object() {
        let event = EventRecord::warning("FailedDelete", "no".into())
            .about("Pod", "ns", "web-1")
            .event();
        assert_eq!(event.type_, EventType::Warning);
        assert_eq!(event.action, "FailedDelete");
        assert_eq!(event.note.as_deref(), Some("no"));
        assert_eq!(
            event.secondary.and_then(|related| related.name).as_deref(),
            Some("web-1")
        );
    }
}
