//! `policy.kruise.io/v1alpha1`: the version upstream v1.8 stores.

mod podunavailablebudget;

pub use podunavailablebudget::*;
