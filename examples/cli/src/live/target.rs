//! `KIND/NAME` as kubectl takes it, for the three Kruise workloads, and the API version the cluster serves
//! for the kind.

use kube::Client;
use kube::core::ApiResource;

use crate::CliError;

/// The group of the Kruise workloads.
pub const GROUP: &str = "apps.kruise.io";

/// A Kruise workload kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    /// CloneSet (`cloneset`, `clonesets`, `clone`).
    CloneSet,
    /// Advanced StatefulSet (`asts`, `advancedstatefulset`, `statefulset.apps.kruise.io`).
    StatefulSet,
    /// Advanced DaemonSet (`ads`, `advanceddaemonset`, `daemonset.apps.kruise.io`).
    DaemonSet,
}

impl WorkloadKind {
    /// The kind's name in the API.
    #[must_use]
    pub fn kind(self) -> &'static str {
        match self {
            Self::CloneSet => "CloneSet",
            Self::StatefulSet => "StatefulSet",
            Self::DaemonSet => "DaemonSet",
        }
    }

    /// The resource's plural.
    #[must_use]
    pub fn plural(self) -> &'static str {
        match self {
            Self::CloneSet => "clonesets",
            Self::StatefulSet => "statefulsets",
            Self::DaemonSet => "daemonsets",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        let name = name.to_ascii_lowercase();
        match name.as_str() {
            "cloneset"
            | "clonesets"
            | "clone"
            | "cloneset.apps.kruise.io"
            | "clonesets.apps.kruise.io" => Some(Self::CloneSet),
            "asts"
            | "advancedstatefulset"
            | "advancedstatefulsets"
            | "statefulset.apps.kruise.io"
            | "statefulsets.apps.kruise.io" => Some(Self::StatefulSet),
            "ads"
            | "advanceddaemonset"
            | "advanceddaemonsets"
            | "daemonset.apps.kruise.io"
            | "daemonsets.apps.kruise.io" => Some(Self::DaemonSet),
            _ => None,
        }
    }
}

/// A workload named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Its kind.
    pub kind: WorkloadKind,
    /// Its name.
    pub name: String,
}

impl Target {
    /// `kind.apps.kruise.io/NAME`, as kubectl prints the object it changed.
    #[must_use]
    pub fn display(&self) -> String {
        format!(
            "{}.{GROUP}/{}",
            self.kind.kind().to_ascii_lowercase(),
            self.name
        )
    }
}

impl std::str::FromStr for Target {
    type Err = String;

    /// Parses `KIND/NAME` (e.g. `cloneset/web`, `asts/db`, `ads/agent`).
    fn from_str(text: &str) -> Result<Self, String> {
        let (kind, name) = text
            .split_once('/')
            .ok_or_else(|| format!("{text:?}: expected KIND/NAME, e.g. cloneset/web"))?;
        let kind = WorkloadKind::from_name(kind).ok_or_else(|| {
            format!(
                "{text:?}: unknown kind {kind:?} (cloneset, asts or advancedstatefulset, ads or \
                 advanceddaemonset)"
            )
        })?;
        if name.is_empty() || name.contains('/') {
            return Err(format!("{text:?}: expected KIND/NAME, e.g. cloneset/web"));
        }
        Ok(Self {
            kind,
            name: name.to_owned(),
        })
    }
}

/// The version the cluster serves `kind` in: v1beta1 where served, else v1alpha1.
///
/// # Errors
/// Neither version serves the kind (the CRDs are not installed), or discovery fails.
pub async fn served(client: &Client, kind: WorkloadKind) -> Result<ApiResource, CliError> {
    for version in ["v1beta1", "v1alpha1"] {
        let api_version = format!("{GROUP}/{version}");
        let Ok(resources) = client.list_api_group_resources(&api_version).await else {
            continue;
        };
        if resources.resources.iter().any(|r| r.name == kind.plural()) {
            return Ok(ApiResource {
                group: GROUP.to_owned(),
                version: version.to_owned(),
                api_version,
                kind: kind.kind().to_owned(),
                plural: kind.plural().to_owned(),
            });
        }
    }
    Err(CliError::Cluster(format!(
        "the cluster serves no {}.{GROUP} (are the OpenKruise CRDs installed? `kruise crds | kubectl apply -f -`)",
        kind.plural()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_read_by_kubectl_names() {
        let target = |text: &str| text.parse::<Target>();
        assert_eq!(
            target("cloneset/web"),
            Ok(Target {
                kind: WorkloadKind::CloneSet,
                name: "web".into()
            })
        );
        assert_eq!(target("clone/web").unwrap().kind, WorkloadKind::CloneSet);
        assert_eq!(target("ASTS/db").unwrap().kind, WorkloadKind::StatefulSet);
        assert_eq!(
            target("statefulset.apps.kruise.io/db").unwrap().kind,
            WorkloadKind::StatefulSet
        );
        assert_eq!(target("ads/agent").unwrap().kind, WorkloadKind::DaemonSet);
        assert_eq!(
            target("cloneset/web").unwrap().display(),
            "cloneset.apps.kruise.io/web"
        );
        for bad in [
            "web",
            "cloneset/",
            "deployment/web",
            "cloneset/a/b",
            "statefulset/db",
        ] {
            let error = target(bad).unwrap_err();
            assert!(error.contains(bad), "{bad}: {error}");
        }
    }
}
