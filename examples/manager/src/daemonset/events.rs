//! The Events of the Advanced DaemonSet controller, with upstream's reasons and messages (the pod control
//! of Kubernetes' DaemonSet controller, which upstream's uses, and its in-place update Event):
//!
//! | reason | type | when |
//! |---|---|---|
//! | `SuccessfulCreate` | Normal | `Created pod: NAME` |
//! | `FailedCreate` | Warning | `Error creating: ERROR` |
//! | `SuccessfulDelete` | Normal | `Deleted pod: NAME` |
//! | `FailedDelete` | Warning | `Error deleting: ERROR` |
//! | `SuccessfulUpdatePodInPlace` | Normal | `successfully update pod NAME in-place` |
//! | `FailedUpdatePodInPlace` | Warning | an in-place update was refused (not a 409) |
//! | `SelectingAll` | Warning | the selector is empty: nothing is done |

pub use kruise_runtime::events::{EventRecord, EventSink};

/// The component name upstream's DaemonSet Events carry.
pub const COMPONENT: &str = "daemonset-controller";

/// The Events of the Advanced DaemonSet controller.
#[derive(Clone, Copy, Debug)]
pub struct Record;

impl Record {
    /// A pod was created.
    #[must_use]
    pub fn created(pod: &str) -> EventRecord {
        EventRecord::normal("SuccessfulCreate", format!("Created pod: {pod}"))
    }

    /// Creating a pod failed.
    #[must_use]
    pub fn create_failed(error: &dyn std::fmt::Display) -> EventRecord {
        EventRecord::warning("FailedCreate", format!("Error creating: {error}"))
    }

    /// A pod was deleted.
    #[must_use]
    pub fn deleted(pod: &str) -> EventRecord {
        EventRecord::normal("SuccessfulDelete", format!("Deleted pod: {pod}"))
    }

    /// Deleting a pod failed.
    #[must_use]
    pub fn delete_failed(error: &dyn std::fmt::Display) -> EventRecord {
        EventRecord::warning("FailedDelete", format!("Error deleting: {error}"))
    }

    /// A pod was updated in place.
    #[must_use]
    pub fn updated_in_place(pod: &str) -> EventRecord {
        EventRecord::normal(
            "SuccessfulUpdatePodInPlace",
            format!("successfully update pod {pod} in-place"),
        )
    }

    /// An in-place update failed.
    #[must_use]
    pub fn in_place_failed(pod: &str, error: &dyn std::fmt::Display) -> EventRecord {
        EventRecord::warning(
            "FailedUpdatePodInPlace",
            format!("failed to update pod {pod} in-place: {error}"),
        )
    }

    /// The DaemonSet's selector is empty (it would select every pod of its namespace).
    #[must_use]
    pub fn selecting_all() -> EventRecord {
        EventRecord::warning(
            "SelectingAll",
            "This daemon set is selecting all pods. A non-empty selector is required.".to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_and_messages_are_upstream_s() {
        let created = Record::created("nginx-vjwxf");
        assert_eq!(
            (created.warning, created.reason, created.message.as_str()),
            (false, "SuccessfulCreate", "Created pod: nginx-vjwxf")
        );
        let deleted = Record::deleted("nginx-z9zgg");
        assert_eq!(
            (deleted.reason, deleted.message.as_str()),
            ("SuccessfulDelete", "Deleted pod: nginx-z9zgg")
        );
        let in_place = Record::updated_in_place("nginx-kqqmr");
        assert_eq!(
            (in_place.reason, in_place.message.as_str()),
            (
                "SuccessfulUpdatePodInPlace",
                "successfully update pod nginx-kqqmr in-place"
            )
        );
        let failed = Record::create_failed(&"forbidden");
        assert!(failed.warning);
        assert_eq!(
            (failed.reason, failed.message.as_str()),
            ("FailedCreate", "Error creating: forbidden")
        );
        assert_eq!(Record::delete_failed(&"x").reason, "FailedDelete");
        assert_eq!(
            Record::in_place_failed("p", &"x").reason,
            "FailedUpdatePodInPlace"
        );
        assert!(Record::selecting_all().warning);
    }
}
