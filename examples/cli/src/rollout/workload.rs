//! The `-f` object: which workload it is, decoded and converted to the v1beta1 hub.

use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::defaults::ApplyDefaults;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::decode::{decode, invalid};
use crate::CliError;
use crate::input::read_objects;

/// The kinds `kruise rollout plan` reads, as upstream's webhook stores them.
#[allow(clippy::enum_variant_names)] // the variants are the Kubernetes kinds
pub(super) enum Workload {
    /// A CloneSet, as given (its planner reads unset fields as upstream's defaults).
    CloneSet(Box<v1beta1::CloneSet>),
    /// An Advanced StatefulSet, defaulted.
    StatefulSet(Box<v1beta1::StatefulSet>),
    /// An Advanced DaemonSet, defaulted.
    DaemonSet(Box<v1beta1::DaemonSet>),
    /// A SidecarSet, defaulted (cluster-scoped: no namespace).
    SidecarSet(Box<v1beta1::SidecarSet>),
}

impl Workload {
    /// Its kind.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Self::CloneSet(_) => "CloneSet",
            Self::StatefulSet(_) => "StatefulSet",
            Self::DaemonSet(_) => "DaemonSet",
            Self::SidecarSet(_) => "SidecarSet",
        }
    }
}

const ALPHA: &str = "apps.kruise.io/v1alpha1";
const BETA: &str = "apps.kruise.io/v1beta1";

/// Reads the one workload of `path`.
pub(super) fn read_workload(path: &str) -> Result<Workload, CliError> {
    let mut objects = read_objects(&[path.to_owned()])?;
    if objects.len() != 1 {
        return Err(invalid(
            path,
            format!(
                "expected one CloneSet, StatefulSet, DaemonSet or SidecarSet, found {} objects",
                objects.len()
            ),
        ));
    }
    workload_from_object(path, &objects.pop().unwrap_or(Value::Null))
}

/// The workload `object` (read from `path`, which names it in errors).
pub(super) fn workload_from_object(path: &str, object: &Value) -> Result<Workload, CliError> {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    match kind {
        "CloneSet" => match api_version {
            BETA => decode::<v1beta1::CloneSet>(path, object)
                .map(|set| Workload::CloneSet(Box::new(set))),
            ALPHA => decode::<v1alpha1::CloneSet>(path, object)
                .map(|alpha| Workload::CloneSet(Box::new(v1beta1::CloneSet::from(&alpha)))),
            other => Err(invalid(
                path,
                format!("apiVersion: expected {ALPHA} or {BETA}, found {other:?}"),
            )),
        },
        "StatefulSet" => {
            hub::<v1alpha1::StatefulSet, v1beta1::StatefulSet>(path, object, kind, api_version)
                .map(|set| Workload::StatefulSet(Box::new(set)))
        }
        "DaemonSet" => {
            hub::<v1alpha1::DaemonSet, v1beta1::DaemonSet>(path, object, kind, api_version)
                .map(|set| Workload::DaemonSet(Box::new(set)))
        }
        "SidecarSet" => {
            hub::<v1alpha1::SidecarSet, v1beta1::SidecarSet>(path, object, kind, api_version).map(
                |mut set| {
                    set.metadata.namespace = None;
                    Workload::SidecarSet(Box::new(set))
                },
            )
        }
        other => Err(invalid(
            path,
            format!(
                "kind: expected CloneSet, found {other:?} (apiVersion {api_version:?}); kruise rollout plan also \
                 reads {ALPHA} and {BETA} StatefulSet, DaemonSet and SidecarSet"
            ),
        )),
    }
}

/// Decodes an `apps.kruise.io` object of either version, applies upstream's defaults and converts it to
/// the hub.
fn hub<A, B>(path: &str, object: &Value, kind: &str, api_version: &str) -> Result<B, CliError>
where
    A: DeserializeOwned + ApplyDefaults,
    B: DeserializeOwned + ApplyDefaults + for<'a> From<&'a A>,
{
    match api_version {
        BETA => {
            let mut set = decode::<B>(path, object)?;
            set.apply_defaults();
            Ok(set)
        }
        ALPHA => {
            let mut alpha = decode::<A>(path, object)?;
            alpha.apply_defaults();
            Ok(B::from(&alpha))
        }
        other => Err(invalid(
            path,
            format!(
                "apiVersion: expected {ALPHA} or {BETA} for a {kind}, found {other:?} (kruise rollout plan reads \
                 the apps.kruise.io {kind} only)"
            ),
        )),
    }
}
