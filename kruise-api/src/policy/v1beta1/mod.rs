//! `policy.kruise.io/v1beta1`: the storage (hub) version of upstream v1.9.
//!
//! Types that are identical in both versions are defined here and re-exported by
//! [`v1alpha1`](super::v1alpha1).

mod podunavailablebudget;

pub use podunavailablebudget::*;
