//! Conversions between `v1alpha1` and `v1beta1`, the hub (as upstream v1.9).
//!
//! Each kind with two versions implements [`HubConversion`] with upstream's field mapping (the
//! `apis/apps/v1alpha1/*_conversion.go` files): fields that move between annotations or labels and spec, renamed
//! fields, the CloneSet update-strategy split, and so on. The `From` impls between the two versions wrap that
//! mapping so that **v1alpha1 → v1beta1 → v1alpha1 gives back exactly the object you started with, for any value**:
//!
//! * when the v1beta1 shape can represent the v1alpha1 object, the mapping alone is used and the v1beta1
//!   object carries nothing extra;
//! * otherwise (rare: e.g. a v1alpha1 CloneSet that sets an image-pre-download field *and* the annotation
//!   that upstream gives precedence) the v1beta1 object carries the difference in the
//!   [`STASH_ANNOTATION`], a JSON merge patch guarded by a fingerprint of the v1beta1 spec (and, separately,
//!   status) it was made for. Converting back applies the patch only while that part is unchanged, so a
//!   stale stash never undoes a later v1beta1 edit.
//!
//! v1beta1 → v1alpha1 follows upstream and drops what v1alpha1 cannot hold (for example a v1beta1-only
//! field); `docs/api.md` lists those fields.
//!
//! ```
//! use kruise_api::apps::{v1alpha1, v1beta1};
//!
//! let alpha: v1alpha1::CloneSet = serde_saphyr::from_str(r#"
//! apiVersion: apps.kruise.io/v1alpha1
//! kind: CloneSet
//! metadata: {name: demo}
//! spec:
//!   selector: {matchLabels: {app: demo}}
//!   template: {metadata: {labels: {app: demo}}}
//!   updateStrategy: {type: InPlaceIfPossible, partition: 2}
//! "#).unwrap();
//! let beta = v1beta1::CloneSet::from(&alpha);
//! let rolling = beta.spec.update_strategy.rolling_update.as_ref().unwrap();
//! assert_eq!(rolling.pod_update_policy.as_ref().map(|policy| policy.as_str()), Some("InPlaceIfPossible"));
//! assert_eq!(v1alpha1::CloneSet::from(&beta), alpha);
//! ```

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
mod containerrecreaterequest;
mod daemonset;
mod dynamic;
mod imagepulljob;
mod nodeimage;
mod persistentpodstate;
mod podunavailablebudget;
mod resourcedistribution;
mod sidecarset;
mod stash;
mod statefulset;
mod uniteddeployment;
mod workloadspread;

pub use dynamic::{ConversionError, convert_object};
pub use stash::STASH_ANNOTATION;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A served version that converts to and from its hub version with upstream's field mapping.
///
/// Implementations only map fields; use `From` (or [`to_hub`] / [`from_hub`]) to convert, which adds the
/// lossless round trip on top.
pub trait HubConversion:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + PartialEq + Clone
{
    /// The hub (storage) version of the same kind.
    type Hub: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone;

    /// Upstream's mapping of this version's fields to the hub's.
    fn to_hub_fields(&self) -> Self::Hub;

    /// Upstream's mapping of the hub's fields to this version's.
    fn from_hub_fields(hub: &Self::Hub) -> Self;
}

/// Converts to the hub version; converting the result back with [`from_hub`] gives `spoke` again.
#[must_use]
pub fn to_hub<S: HubConversion>(spoke: &S) -> S::Hub {
    stash::to_hub(spoke)
}

/// Converts from the hub version, restoring what a still-valid stash remembers.
#[must_use]
pub fn from_hub<S: HubConversion>(hub: &S::Hub) -> S {
    stash::from_hub(hub)
}

/// Implements `From` in both directions (owned and borrowed) between a spoke and its hub.
macro_rules! hub_conversion {
    ($spoke:ty => $hub:ty) => {
        impl ::std::convert::From<&$spoke> for $hub {
            fn from(spoke: &$spoke) -> Self {
                $crate::convert::to_hub(spoke)
            }
        }
        impl ::std::convert::From<$spoke> for $hub {
            fn from(spoke: $spoke) -> Self {
                $crate::convert::to_hub(&spoke)
            }
        }
        impl ::std::convert::From<&$hub> for $spoke {
            fn from(hub: &$hub) -> Self {
                $crate::convert::from_hub(hub)
            }
        }
        impl ::std::convert::From<$hub> for $spoke {
            fn from(hub: $hub) -> Self {
                $crate::convert::from_hub(&hub)
            }
        }
    };
}
pub(crate) use hub_conversion;
