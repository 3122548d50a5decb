//! `apps.kruise.io/v1alpha1`: the version upstream v1.8 stores (the shape of the kruise-api Go module), plus
//! the fields upstream HEAD added to it (spec 1.5).

mod cloneset;
mod ephemeraljob;
mod nodepodprobe;
mod persistentpodstate;
mod podprobemarker;
mod resourcedistribution;
mod workloadspread;

pub use cloneset::*;
pub use ephemeraljob::*;
pub use nodepodprobe::*;
pub use persistentpodstate::*;
pub use podprobemarker::*;
pub use resourcedistribution::*;
pub use workloadspread::*;
