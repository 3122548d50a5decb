//! The `policy.kruise.io` group: `PodUnavailableBudget`, in `v1alpha1` and `v1beta1`.

pub mod v1alpha1;
pub mod v1beta1;

/// The API group of `PodUnavailableBudget`.
pub const GROUP: &str = "policy.kruise.io";
