//! The Kubernetes Events the Advanced StatefulSet controller records, with upstream's reasons and
//! messages (upstream `recordPodEvent`, `recordClaimEvent` and the in-place update Events), published
//! through the runtime's [`EventSink`] (a reconcile never waits for an Event).
//!
//! | reason | type | when |
//! |---|---|---|
//! | `SuccessfulCreate` | Normal | a pod or a claim was created |
//! | `FailedCreate` | Warning | creating a pod or a claim failed |
//! | `SuccessfulDelete` | Normal | a pod was deleted |
//! | `FailedDelete` | Warning | deleting a pod failed |
//! | `SuccessfulUpdate` | Normal | a pod's identity labels were written (claim owner references are written without an Event, as upstream) |
//! | `FailedUpdate` | Warning | that write failed |
//! | `SuccessfulUpdatePodInPlace` | Normal | a pod was updated in place |
//! | `FailedUpdatePodInPlace` | Warning | an in-place update failed |
//! | `SuccessfulResize` | Normal | a claim was expanded to its template's storage (`volumeClaimUpdateStrategy: OnPodRollingUpdate`) |
//! | `FailedResize` | Warning | the API server refused that expansion (its message is in the Event) |
//! | `FailedUpdatePVC` | Warning | a claim differs from its template in more than its storage: it is not expanded and waits to be deleted |
//! | `InvalidSpec` | Warning | a `spec.reserveOrdinals` entry upstream cannot parse (upstream then reserves nothing); not upstream's |

pub use kruise_runtime::events::{EventRecord, EventSink};

/// The component name upstream's Advanced StatefulSet Events carry.
pub const COMPONENT: &str = "statefulset-controller";

/// The Events of the Advanced StatefulSet controller, with upstream's reasons and messages.
#[derive(Clone, Copy, Debug)]
pub struct Record;

/// A pod or claim write whose outcome is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// A creation.
    Create,
    /// A deletion.
    Delete,
    /// An update.
    Update,
    /// A claim expansion (`volumeClaimUpdateStrategy: OnPodRollingUpdate`).
    Resize,
}

impl Verb {
    fn reasons(self) -> (&'static str, &'static str) {
        match self {
            Self::Create => ("SuccessfulCreate", "FailedCreate"),
            Self::Delete => ("SuccessfulDelete", "FailedDelete"),
            Self::Update => ("SuccessfulUpdate", "FailedUpdate"),
            Self::Resize => ("SuccessfulResize", "FailedResize"),
        }
    }

    fn word(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Delete => "delete",
            Self::Update => "update",
            Self::Resize => "resize",
        }
    }
}

impl Record {
    /// `verb` of pod `pod` of StatefulSet `set` succeeded.
    #[must_use]
    pub fn pod(verb: Verb, pod: &str, set: &str) -> EventRecord {
        EventRecord::normal(
            verb.reasons().0,
            format!("{} Pod {pod} in StatefulSet {set} successful", verb.word()),
        )
    }

    /// `verb` of pod `pod` of StatefulSet `set` failed.
    #[must_use]
    pub fn pod_failed(
        verb: Verb,
        pod: &str,
        set: &str,
        error: &dyn std::fmt::Display,
    ) -> EventRecord {
        EventRecord::warning(
            verb.reasons().1,
            format!(
                "{} Pod {pod} in StatefulSet {set} failed error: {error}",
                verb.word()
            ),
        )
    }

    /// `verb` of claim `claim` (of pod `pod`) of StatefulSet `set` succeeded.
    #[must_use]
    pub fn claim(verb: Verb, claim: &str, pod: &str, set: &str) -> EventRecord {
        EventRecord::normal(
            verb.reasons().0,
            format!(
                "{} Claim {claim} Pod {pod} in StatefulSet {set} success",
                verb.word()
            ),
        )
    }

    /// `verb` of claim `claim` (of pod `pod`) of StatefulSet `set` failed.
    #[must_use]
    pub fn claim_failed(
        verb: Verb,
        claim: &str,
        pod: &str,
        set: &str,
        error: &dyn std::fmt::Display,
    ) -> EventRecord {
        EventRecord::warning(
            verb.reasons().1,
            format!(
                "{} Claim {claim} for Pod {pod} in StatefulSet {set} failed error: {error}",
                verb.word()
            ),
        )
    }

    /// A pod was updated in place to `revision`.
    #[must_use]
    pub fn updated_in_place(pod: &str, revision: &str) -> EventRecord {
        EventRecord::normal(
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
        EventRecord::warning(
            "FailedUpdatePodInPlace",
            format!("failed to update pod {pod} in-place(revision {revision}): {error}"),
        )
    }

    /// The claim `claim` differs from its template in more than its storage request, so it is not expanded
    /// (upstream's Event of `TryPatchPVC`).
    #[must_use]
    pub fn claim_not_expandable(claim: &str) -> EventRecord {
        EventRecord::warning(
            "FailedUpdatePVC",
            format!(
                "failed to update pvc {claim}: contains diff other than spec resource, wait pvc to be deleted"
            ),
        )
    }

    /// A spec value of StatefulSet `set` (`namespace/name`) is invalid; `invalid` names the field and value
    /// and says how it is read.
    #[must_use]
    pub fn invalid_spec(set: &str, invalid: &dyn std::fmt::Display) -> EventRecord {
        EventRecord::warning("InvalidSpec", format!("StatefulSet {set}: {invalid}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_and_messages_are_upstream_s() {
        let created = Record::pod(Verb::Create, "web-0", "web");
        assert_eq!(
            (created.warning, created.reason, created.message.as_str()),
            (
                false,
                "SuccessfulCreate",
                "create Pod web-0 in StatefulSet web successful"
            )
        );
        let failed = Record::pod_failed(Verb::Delete, "web-3", "web", &"forbidden");
        assert_eq!(
            (failed.warning, failed.reason, failed.message.as_str()),
            (
                true,
                "FailedDelete",
                "delete Pod web-3 in StatefulSet web failed error: forbidden"
            )
        );
        assert_eq!(
            Record::claim(Verb::Create, "www-web-0", "web-0", "web").message,
            "create Claim www-web-0 Pod web-0 in StatefulSet web success"
        );
        assert_eq!(
            Record::claim_failed(Verb::Update, "www-web-0", "web-0", "web", &"x").reason,
            "FailedUpdate"
        );
        let in_place = Record::updated_in_place("web-4", "web-84644dfc7d");
        assert_eq!(
            (in_place.reason, in_place.message.as_str()),
            (
                "SuccessfulUpdatePodInPlace",
                "successfully update pod web-4 in-place(revision web-84644dfc7d)"
            )
        );
        assert_eq!(
            Record::in_place_failed("p", "r", &"boom").reason,
            "FailedUpdatePodInPlace"
        );
        let resized = Record::claim(Verb::Resize, "data-web-2", "web-2", "web");
        assert_eq!(
            (resized.warning, resized.reason, resized.message.as_str()),
            (
                false,
                "SuccessfulResize",
                "resize Claim data-web-2 Pod web-2 in StatefulSet web success"
            )
        );
        let refused =
            Record::claim_failed(Verb::Resize, "data-web-2", "web-2", "web", &"forbidden");
        assert_eq!(
            (refused.warning, refused.reason, refused.message.as_str()),
            (
                true,
                "FailedResize",
                "resize Claim data-web-2 for Pod web-2 in StatefulSet web failed error: forbidden"
            )
        );
        assert_eq!(
            Record::claim_not_expandable("data-web-2").message,
            "failed to update pvc data-web-2: contains diff other than spec resource, wait pvc to be deleted"
        );
        assert_eq!(
            Record::invalid_spec("ns/web", &"spec.reserveOrdinals").message,
            "StatefulSet ns/web: spec.reserveOrdinals"
        );
    }
}
