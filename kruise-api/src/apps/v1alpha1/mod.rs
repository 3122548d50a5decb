//! `apps.kruise.io/v1alpha1`: the version upstream v1.8 stores (the shape of the kruise-api Go module), plus
//! the fields upstream HEAD added to it (spec 1.5).

mod cloneset;
mod containerrecreaterequest;
mod sidecarset;

pub use cloneset::*;
pub use containerrecreaterequest::*;
pub use sidecarset::*;
