//! `apps.kruise.io/v1alpha1`: the version upstream v1.8 stores (the shape of the kruise-api Go module), plus
//! the fields upstream HEAD added to it (spec 1.5).

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
mod imagelistpulljob;
mod imagepulljob;
mod nodeimage;

pub use advancedcronjob::*;
pub use broadcastjob::*;
pub use cloneset::*;
pub use imagelistpulljob::*;
pub use imagepulljob::*;
pub use nodeimage::*;
