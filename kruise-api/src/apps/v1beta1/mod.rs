//! `apps.kruise.io/v1beta1`: the storage (hub) version of upstream v1.9.
//!
//! Types that are identical in both versions are defined here and re-exported by
//! [`v1alpha1`](super::v1alpha1).

mod cloneset;
mod daemonset;
mod statefulset;
mod uniteddeployment;

pub use cloneset::*;
pub use daemonset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
