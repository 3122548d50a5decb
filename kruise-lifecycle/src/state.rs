//! The lifecycle state of a pod: the `lifecycle.apps.kruise.io/state` label, and the
//! `lifecycle.apps.kruise.io/timestamp` annotation written with every change (upstream `apis/apps/pub/lifecycle.go`).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
//! use kruise_lifecycle::state::{self, LifecycleStateType};
//!
//! let now = Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC);
//! let pod = state::set_state(&LifecycleStateType::PreparingNormal, &now).apply(&Pod::default());
//! assert_eq!(state::state(&pod), Some(LifecycleStateType::PreparingNormal));
//! assert_eq!(
//!     kruise_api::pod::annotation(&pod, "lifecycle.apps.kruise.io/timestamp"),
//!     Some("1970-01-01T00:00:00Z")
//! );
//! ```

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Zoned;
use kruise_api::keys::lifecycle::{STATE_LABEL, TIMESTAMP_ANNOTATION};
pub use kruise_api::lifecycle::LifecycleStateType;

use crate::change::MetadataChange;
use crate::timestamp::lifecycle_timestamp;

/// The pod's lifecycle state; `None` when the label is absent or empty (upstream's `""`, which counts like
/// `Normal` for availability). Values this crate does not know come back as
/// [`LifecycleStateType::Unknown`].
#[must_use]
pub fn state(pod: &Pod) -> Option<LifecycleStateType> {
    kruise_api::pod::lifecycle_state(pod)
}

/// The metadata change that moves a pod to `state` at `now`: the state label and the timestamp annotation
/// (Go RFC 3339 in `now`'s time zone), written together as upstream does.
#[must_use]
pub fn set_state(state: &LifecycleStateType, now: &Zoned) -> MetadataChange {
    MetadataChange::default()
        .with_label(STATE_LABEL, state.as_str())
        .with_annotation(TIMESTAMP_ANNOTATION, lifecycle_timestamp(now))
}
