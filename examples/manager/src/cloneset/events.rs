//! The Kubernetes Events the CloneSet controller records, with upstream's reasons and messages, published
//! through the runtime's [`EventSink`] (a reconcile never waits for an Event).
//!
//! | reason | type | when |
//! |---|---|---|
//! | `SuccessfulCreate` | Normal | a pod was created |
//! | `FailedCreate` | Warning | creating a pod or claim failed |
//! | `SuccessfulDelete` | Normal | a pod was deleted |
//! | `FailedDelete` | Warning | deleting a pod or claim failed |
//! | `SuccessfulUpdatePodInPlace` | Normal | a pod was updated in place |
//! | `FailedUpdatePodInPlace` | Warning | an in-place update failed |
//! | `SuccessfulUpdatePodReCreate` | Normal | a pod was marked `specified-delete` to be recreated at the new revision |
//! | `FailedUpdatePodReCreate` | Warning | that mark could not be written |
//! | `ScaleUpLimited` | Warning | `scaleStrategy.maxUnavailable` holds back creations |
//! | `InvalidSpec` | Warning | a spec value upstream's webhook would refuse or its controller cannot parse (not upstream's: its webhook refuses the spec); the message names the CloneSet, the field, the value and how it is read; recorded when the `InvalidSpec` condition appears or its message changes |
//! | `SkippedPod` | Warning | a pod left out of the update because its in-place state cannot be read (not upstream's: upstream stops the CloneSet's update there) |
//! | `CreatedImagePullJob` | Normal | an image pre-download job was created |
//! | `FailedCreateImagePullJob` | Normal (as upstream) | creating it failed for another reason than existing |

pub use kruise_runtime::events::{EventRecord, EventSink};

/// The component name upstream's CloneSet Events carry.
pub const COMPONENT: &str = "cloneset-controller";

/// The Events of the CloneSet controller, with upstream's reasons and messages.
#[derive(Clone, Copy, Debug)]
pub struct Record;

impl Record {
    fn normal(reason: &'static str, message: String) -> EventRecord {
        EventRecord::normal(reason, message)
    }

    fn warning(reason: &'static str, message: String) -> EventRecord {
        EventRecord::warning(reason, message)
    }

    /// A pod was created.
    #[must_use]
    pub fn created(pod: &str) -> EventRecord {
        Self::normal("SuccessfulCreate", format!("succeed to create pod {pod}"))
    }

    /// Creating a pod failed.
    #[must_use]
    pub fn create_failed(pod: &str, error: &dyn std::fmt::Display) -> EventRecord {
        Self::warning(
            "FailedCreate",
            format!("failed to create pod: {error}, pod: {pod}"),
        )
    }

    /// Creating a claim failed.
    #[must_use]
    pub fn claim_create_failed(claim: &str, error: &dyn std::fmt::Display) -> EventRecord {
        Self::warning(
            "FailedCreate",
            format!("failed to create pvc: {error}, pvc: {claim}"),
        )
    }

    /// A pod was deleted.
    #[must_use]
    pub fn deleted(pod: &str) -> EventRecord {
        Self::normal("SuccessfulDelete", format!("succeed to delete pod {pod}"))
    }

    /// Deleting a pod failed.
    #[must_use]
    pub fn delete_failed(pod: &str, error: &dyn std::fmt::Display) -> EventRecord {
        Self::warning(
            "FailedDelete",
            format!("failed to delete pod {pod}: {error}"),
        )
    }

    /// Deleting a claim failed.
    #[must_use]
    pub fn claim_delete_failed(claim: &str, error: &dyn std::fmt::Display) -> EventRecord {
        Self::warning(
            "FailedDelete",
            format!("failed to delete pvc {claim}: {error}"),
        )
    }

    /// A pod was updated in place to `revision`.
    #[must_use]
    pub fn updated_in_place(pod: &str, revision: &str) -> EventRecord {
        Self::normal(
            "SuccessfulUpdatePodInPlace",
            format!("successfully update pod {pod} in-place(revision {revision})"),
        )
    }

    /// An in-place update to `revision` failed.
    #[must_use]
    pub fn in_place_failed(
        pod: &str,
        revision: &str,
        error: &dyn std::fmt::Display,
    ) -> EventRecord {
        Self::warning(
            "FailedUpdatePodInPlace",
            format!("failed to update pod {pod} in-place(revision {revision}): {error}"),
        )
    }

    /// A pod was marked to be recreated at `revision`.
    #[must_use]
    pub fn marked_for_recreate(pod: &str, revision: &str) -> EventRecord {
        Self::normal(
            "SuccessfulUpdatePodReCreate",
            format!(
                "successfully patch pod {pod} specified-delete for update(revision {revision})"
            ),
        )
    }

    /// Marking a pod to be recreated failed.
    #[must_use]
    pub fn recreate_failed(
        pod: &str,
        revision: &str,
        error: &dyn std::fmt::Display,
    ) -> EventRecord {
        Self::warning(
            "FailedUpdatePodReCreate",
            format!(
                "failed to patch pod specified-delete {pod} for update(revision {revision}): {error}"
            ),
        )
    }

    /// `scaleStrategy.maxUnavailable` limits creations to `limit`.
    #[must_use]
    pub fn scale_up_limited(limit: i64) -> EventRecord {
        Self::warning(
            "ScaleUpLimited",
            format!("scaleUp is limited because of scaleStrategy.maxUnavailable, limit: {limit}"),
        )
    }

    /// A spec value of CloneSet `cloneset` (`namespace/name`) is invalid; `invalid` names the field and value
    /// and says how the planner reads it.
    #[must_use]
    pub fn invalid_spec(cloneset: &str, invalid: &dyn std::fmt::Display) -> EventRecord {
        Self::warning("InvalidSpec", format!("CloneSet {cloneset}: {invalid}"))
    }

    /// A pod was left out of the refresh and update because something it carries cannot be read; the
    /// other pods go on.
    #[must_use]
    pub fn skipped_pod(pod: &str, error: &dyn std::fmt::Display) -> EventRecord {
        Self::warning(
            "SkippedPod",
            format!("pod {pod} is left out of the update: {error}"),
        )
    }

    /// An ImagePullJob pre-downloading `image` was created.
    #[must_use]
    pub fn created_image_pull_job(job: &str, image: &str) -> EventRecord {
        Self::normal(
            "CreatedImagePullJob",
            format!("created ImagePullJob {job} for image: {image}"),
        )
    }

    /// Creating an ImagePullJob failed (upstream records it as a Normal Event).
    #[must_use]
    pub fn image_pull_job_failed(job: &str, error: &dyn std::fmt::Display) -> EventRecord {
        Self::normal(
            "FailedCreateImagePullJob",
            format!("failed to create ImagePullJob {job}: {error}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::events::EventType;

    use super::*;

    #[test]
    fn reasons_and_messages_are_upstream_s() {
        assert_eq!(
            Record::created("web-abcde"),
            EventRecord {
                warning: false,
                reason: "SuccessfulCreate",
                message: "succeed to create pod web-abcde".into(),
                related: None,
            }
        );
        assert_eq!(Record::deleted("p").message, "succeed to delete pod p");
        let in_place = Record::updated_in_place("p", "web-7d9f");
        assert_eq!(
            (in_place.reason, in_place.message.as_str()),
            (
                "SuccessfulUpdatePodInPlace",
                "successfully update pod p in-place(revision web-7d9f)"
            )
        );
        let recreate = Record::marked_for_recreate("p", "web-7d9f");
        assert_eq!(recreate.reason, "SuccessfulUpdatePodReCreate");
        assert_eq!(
            recreate.message,
            "successfully patch pod p specified-delete for update(revision web-7d9f)"
        );
        let invalid = Record::invalid_spec("ns/web", &"spec.replicas: invalid value \"-1\"");
        assert_eq!(
            (invalid.warning, invalid.reason, invalid.message.as_str()),
            (
                true,
                "InvalidSpec",
                "CloneSet ns/web: spec.replicas: invalid value \"-1\""
            )
        );
        let limited = Record::scale_up_limited(2);
        assert!(limited.warning);
        assert_eq!(limited.reason, "ScaleUpLimited");
        assert!(limited.message.ends_with("limit: 2"));
        let failed = Record::in_place_failed("p", "r", &"boom");
        assert!(failed.warning && failed.message.ends_with(": boom"));
        for record in [
            Record::create_failed("p", &"x"),
            Record::claim_create_failed("c", &"x"),
        ] {
            assert_eq!(record.reason, "FailedCreate");
        }
        for record in [
            Record::delete_failed("p", &"x"),
            Record::claim_delete_failed("c", &"x"),
        ] {
            assert_eq!(record.reason, "FailedDelete");
        }
        assert_eq!(
            Record::recreate_failed("p", "r", &"x").reason,
            "FailedUpdatePodReCreate"
        );
        let job = Record::created_image_pull_job("web-7d9f-main", "nginx:2");
        assert_eq!(
            (job.warning, job.reason, job.message.as_str()),
            (
                false,
                "CreatedImagePullJob",
                "created ImagePullJob web-7d9f-main for image: nginx:2"
            )
        );
        let failed = Record::image_pull_job_failed("web-7d9f-main", &"forbidden");
        assert_eq!(
            (failed.warning, failed.reason, failed.message.as_str()),
            (
                false,
                "FailedCreateImagePullJob",
                "failed to create ImagePullJob web-7d9f-main: forbidden"
            )
        );
        let event = Record::scale_up_limited(1).event();
        assert_eq!(event.type_, EventType::Warning);
        assert_eq!(event.reason, "ScaleUpLimited");
        assert!(event.secondary.is_none());
        let about = Record::created("web-a").about("Pod", "ns", "web-a").event();
        let related = about.secondary.unwrap();
        assert_eq!(
            (
                related.kind.as_deref(),
                related.name.as_deref(),
                related.namespace.as_deref()
            ),
            (Some("Pod"), Some("web-a"), Some("ns"))
        );
    }
}
