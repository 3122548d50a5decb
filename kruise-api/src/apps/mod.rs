//! The `apps.kruise.io` group: every workload and feature kind, in `v1alpha1` and `v1beta1`.

pub mod v1alpha1;
pub mod v1beta1;

/// The API group of every kind except PodUnavailableBudget.
pub const GROUP: &str = "apps.kruise.io";
