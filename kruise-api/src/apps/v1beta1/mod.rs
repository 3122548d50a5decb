//! `apps.kruise.io/v1beta1`: the storage (hub) version of upstream v1.9.
//!
//! Types that are identical in both versions are defined here and re-exported by
//! [`v1alpha1`](super::v1alpha1).

mod advancedcronjob;
mod broadcastjob;
mod cloneset;
mod containerrecreaterequest;
mod daemonset;
mod imagelistpulljob;
mod imagepulljob;
mod nodeimage;
mod persistentpodstate;
mod resourcedistribution;
mod sandboxconfig;
mod sidecarset;
mod statefulset;
mod uniteddeployment;
mod workloadspread;

pub use advancedcronjob::*;
pub use broadcastjob::*;
pub use cloneset::*;
pub use containerrecreaterequest::*;
pub use daemonset::*;
pub use imagelistpulljob::*;
pub use imagepulljob::*;
pub use nodeimage::*;
pub use persistentpodstate::*;
pub use resourcedistribution::*;
pub use sandboxconfig::*;
pub use sidecarset::*;
pub use statefulset::*;
pub use uniteddeployment::*;
pub use workloadspread::*;
