//! `apps.kruise.io/v1alpha1`: the version upstream v1.8 stores (the shape of the kruise-api Go module), plus
//! the fields upstream HEAD added to it (spec 1.5).

mod cloneset;
mod daemonset;
mod statefulset;
mod uniteddeployment;

pub use cloneset::*;
pub use daemonset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
