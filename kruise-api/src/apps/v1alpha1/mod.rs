//! `apps.kruise.io/v1alpha1`: the version upstream v1.8 stores (the shape of the kruise-api Go module), plus
//! the fields upstream HEAD added to it.

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
mod containerrecreaterequest;
mod daemonset;
mod ephemeraljob;
mod imagelistpulljob;
mod imagepulljob;
mod nodeimage;
mod nodepodprobe;
mod persistentpodstate;
mod podprobemarker;
mod resourcedistribution;
mod sidecarset;
mod statefulset;
mod uniteddeployment;
mod workloadspread;

pub use advancedcronjob::*;
pub use broadcastjob::*;
pub use cloneset::*;
pub use containerrecreaterequest::*;
pub use daemonset::*;
pub use ephemeraljob::*;
pub use imagelistpulljob::*;
pub use imagepulljob::*;
pub use nodeimage::*;
pub use nodepodprobe::*;
pub use persistentpodstate::*;
pub use podprobemarker::*;
pub use resourcedistribution::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
pub use workloadspread::*;
