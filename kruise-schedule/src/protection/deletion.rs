//! Deletion protection: the `policy.kruise.io/delete-protection` label of a Namespace, a
//! CustomResourceDefinition or a workload refuses its deletion (upstream's validating webhooks under
//! `pkg/webhook/util/deletionprotection`, feature gate `ResourcesDeletionProtection`).
//!
//! * `Always`: the object cannot be deleted while it has the label.
//! * `Cascading`: the object cannot be deleted while it has dependents the deletion would take with it:
//!   a Namespace its active pods (phase neither `Succeeded` nor `Failed`, not being deleted), a
//!   CustomResourceDefinition its custom resources, a workload its replicas ([`ProtectedKind::dependents_of`]).
//!
//! Any other label value protects nothing, as upstream, and neither does the label of an object already
//! being deleted (its `deletionTimestamp` is set: the deletion was accepted before). The caller counts the
//! active pods or custom resources (I/O) only for `Cascading`, and answers the admission request.
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//! use kruise_schedule::protection::deletion::{DeletionProtection, Dependents, ProtectedKind};
//!
//! let meta = ObjectMeta {
//!     labels: Some([("policy.kruise.io/delete-protection".to_owned(), "Cascading".to_owned())].into()),
//!     ..ObjectMeta::default()
//! };
//! let protection = DeletionProtection::of(&meta).unwrap();
//! let kind = ProtectedKind::of_resource("apps", "deployments").unwrap();
//! let dependents = kind.dependents_of(&serde_json::json!({"spec": {"replicas": 3}})).unwrap();
//! assert_eq!(dependents, Dependents::Replicas(3));
//! let refused = protection.judge(Some(dependents)).unwrap_err();
//! assert_eq!(
//!     refused.to_string(),
//!     "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 3>0"
//! );
//! assert!(protection.judge(Some(Dependents::Replicas(0))).is_ok());
//! ```

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::keys::pub_policy::{
    DELETE_PROTECTION_ALWAYS, DELETE_PROTECTION_CASCADING, DELETE_PROTECTION_LABEL,
};
use serde_json::Value;

/// The protection a `policy.kruise.io/delete-protection` label asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeletionProtection {
    /// `Always`: never deleted while labelled.
    Always,
    /// `Cascading`: deleted only when it has no dependents.
    Cascading,
}

impl DeletionProtection {
    /// The protection in force for an object about to be deleted: `None` without the label, with another
    /// value, or when the object is already being deleted.
    #[must_use]
    pub fn of(meta: &ObjectMeta) -> Option<Self> {
        if meta.deletion_timestamp.is_some() {
            return None;
        }
        match meta.labels.as_ref()?.get(DELETE_PROTECTION_LABEL)?.as_str() {
            DELETE_PROTECTION_ALWAYS => Some(Self::Always),
            DELETE_PROTECTION_CASCADING => Some(Self::Cascading),
            _ => None,
        }
    }

    /// The label value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => DELETE_PROTECTION_ALWAYS,
            Self::Cascading => DELETE_PROTECTION_CASCADING,
        }
    }

    /// Whether the deletion may go on. `dependents` is read only for [`DeletionProtection::Cascading`];
    /// `None` there (nothing countable, e.g. a workload whose replicas field does not parse) lets it go on.
    ///
    /// # Errors
    /// The refusal, with upstream's message.
    pub fn judge(self, dependents: Option<Dependents>) -> Result<(), DeletionRefused> {
        match (self, dependents) {
            (Self::Always, _) => Err(DeletionRefused {
                protection: self,
                dependents: None,
            }),
            (Self::Cascading, Some(dependents)) if dependents.count() > 0 => Err(DeletionRefused {
                protection: self,
                dependents: Some(dependents),
            }),
            (Self::Cascading, _) => Ok(()),
        }
    }
}

/// What a protected object still has that its deletion would take with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dependents {
    /// A workload's replicas (`spec.replicas`; for an Advanced DaemonSet, the pods it should run).
    Replicas(i64),
    /// A Namespace's active pods.
    ActivePods(u64),
    /// A CustomResourceDefinition's custom resources.
    CustomResources(u64),
}

impl Dependents {
    fn count(self) -> i128 {
        match self {
            Self::Replicas(count) => i128::from(count),
            Self::ActivePods(count) | Self::CustomResources(count) => i128::from(count),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Self::Replicas(_) => "replicas",
            Self::ActivePods(_) => "active pods",
            Self::CustomResources(_) => "active CRs",
        }
    }
}

/// A deletion refused by [`DeletionProtection::judge`]; displays as upstream's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeletionRefused {
    /// The protection that refused it.
    pub protection: DeletionProtection,
    /// For `Cascading`, the dependents that are left.
    pub dependents: Option<Dependents>,
}

impl fmt::Display for DeletionRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "forbidden by ResourcesProtectionDeletion for {DELETE_PROTECTION_LABEL}={}",
            self.protection.as_str()
        )?;
        if let Some(dependents) = self.dependents {
            write!(f, " and {} {}>0", dependents.noun(), dependents.count())?;
        }
        Ok(())
    }
}

impl std::error::Error for DeletionRefused {}

/// The kinds whose deletion the label protects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProtectedKind {
    /// `v1` Namespace.
    Namespace,
    /// `apiextensions.k8s.io` CustomResourceDefinition (`v1`, `v1beta1`).
    CustomResourceDefinition,
    /// `apps/v1` Deployment.
    Deployment,
    /// `apps/v1` ReplicaSet.
    ReplicaSet,
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// `apps.kruise.io` CloneSet.
    CloneSet,
    /// `apps.kruise.io` Advanced StatefulSet.
    AdvancedStatefulSet,
    /// `apps.kruise.io` Advanced DaemonSet (not in upstream's list; see [`ProtectedKind::dependents_of`]).
    AdvancedDaemonSet,
    /// `apps.kruise.io` UnitedDeployment.
    UnitedDeployment,
}

impl ProtectedKind {
    /// Every protected kind.
    pub const ALL: [Self; 9] = [
        Self::Namespace,
        Self::CustomResourceDefinition,
        Self::Deployment,
        Self::ReplicaSet,
        Self::StatefulSet,
        Self::CloneSet,
        Self::AdvancedStatefulSet,
        Self::AdvancedDaemonSet,
        Self::UnitedDeployment,
    ];

    /// The kind of an API group and resource (plural), if protected.
    #[must_use]
    pub fn of_resource(group: &str, resource: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.group() == group && kind.resource() == resource)
    }

    /// The API group (`""` for the core group).
    #[must_use]
    pub fn group(self) -> &'static str {
        match self {
            Self::Namespace => "",
            Self::CustomResourceDefinition => "apiextensions.k8s.io",
            Self::Deployment | Self::ReplicaSet | Self::StatefulSet => "apps",
            Self::CloneSet
            | Self::AdvancedStatefulSet
            | Self::AdvancedDaemonSet
            | Self::UnitedDeployment => "apps.kruise.io",
        }
    }

    /// The versions whose deletions are checked.
    #[must_use]
    pub fn versions(self) -> &'static [&'static str] {
        match self {
            Self::Namespace | Self::Deployment | Self::ReplicaSet | Self::StatefulSet => &["v1"],
            Self::CustomResourceDefinition => &["v1", "v1beta1"],
            Self::CloneSet
            | Self::AdvancedStatefulSet
            | Self::AdvancedDaemonSet
            | Self::UnitedDeployment => &["v1alpha1", "v1beta1"],
        }
    }

    /// The resource (plural).
    #[must_use]
    pub fn resource(self) -> &'static str {
        match self {
            Self::Namespace => "namespaces",
            Self::CustomResourceDefinition => "customresourcedefinitions",
            Self::Deployment => "deployments",
            Self::ReplicaSet => "replicasets",
            Self::StatefulSet | Self::AdvancedStatefulSet => "statefulsets",
            Self::CloneSet => "clonesets",
            Self::AdvancedDaemonSet => "daemonsets",
            Self::UnitedDeployment => "uniteddeployments",
        }
    }

    /// The kind's name, as in the object's `kind`.
    #[must_use]
    pub fn kind(self) -> &'static str {
        match self {
            Self::Namespace => "Namespace",
            Self::CustomResourceDefinition => "CustomResourceDefinition",
            Self::Deployment => "Deployment",
            Self::ReplicaSet => "ReplicaSet",
            Self::StatefulSet | Self::AdvancedStatefulSet => "StatefulSet",
            Self::CloneSet => "CloneSet",
            Self::AdvancedDaemonSet => "DaemonSet",
            Self::UnitedDeployment => "UnitedDeployment",
        }
    }

    /// Whether objects of the kind live in a namespace.
    #[must_use]
    pub fn is_namespaced(self) -> bool {
        !matches!(self, Self::Namespace | Self::CustomResourceDefinition)
    }

    /// The dependents of a workload, read from the object (JSON) being deleted; `None` for a Namespace and a
    /// CustomResourceDefinition, whose dependents the caller counts in the cluster.
    ///
    /// A workload's dependents are its `spec.replicas`; an object without the field counts the API's default
    /// of 1 (upstream's objects always have it: the API server or its defaulting webhook sets it). An Advanced
    /// DaemonSet has no replicas: its dependents are `status.desiredNumberScheduled`, the pods it should run
    /// (0 when the status does not say).
    #[must_use]
    pub fn dependents_of(self, object: &Value) -> Option<Dependents> {
        let number = |pointer: &str, absent: i64| match object.pointer(pointer) {
            None | Some(Value::Null) => Some(absent),
            Some(value) => value.as_i64(),
        };
        match self {
            Self::Namespace | Self::CustomResourceDefinition => None,
            Self::AdvancedDaemonSet => {
                number("/status/desiredNumberScheduled", 0).map(Dependents::Replicas)
            }
            Self::Deployment
            | Self::ReplicaSet
            | Self::StatefulSet
            | Self::CloneSet
            | Self::AdvancedStatefulSet
            | Self::UnitedDeployment => number("/spec/replicas", 1).map(Dependents::Replicas),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use serde_json::json;

    fn labelled(value: &str) -> ObjectMeta {
        ObjectMeta {
            labels: Some([(DELETE_PROTECTION_LABEL.to_owned(), value.to_owned())].into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn the_label_value_decides_the_protection() {
        let cases = [
            ("Always", Some(DeletionProtection::Always)),
            ("Cascading", Some(DeletionProtection::Cascading)),
            ("always", None),
            ("cascading", None),
            ("", None),
            ("Never", None),
        ];
        for (value, expected) in cases {
            assert_eq!(
                DeletionProtection::of(&labelled(value)),
                expected,
                "{value:?}"
            );
        }
        assert_eq!(DeletionProtection::of(&ObjectMeta::default()), None);
    }

    #[test]
    fn an_object_already_being_deleted_is_not_protected() {
        let mut meta = labelled("Always");
        meta.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        assert_eq!(DeletionProtection::of(&meta), None);
    }

    #[test]
    fn always_refuses_whatever_is_left() {
        for dependents in [
            None,
            Some(Dependents::Replicas(0)),
            Some(Dependents::ActivePods(0)),
        ] {
            let refused = DeletionProtection::Always.judge(dependents).unwrap_err();
            assert_eq!(
                refused.to_string(),
                "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
            );
        }
    }

    #[test]
    fn cascading_refuses_only_with_dependents_left() {
        let cases = [
            (Dependents::Replicas(2), Some("and replicas 2>0")),
            (Dependents::Replicas(0), None),
            (Dependents::Replicas(-1), None),
            (Dependents::ActivePods(1), Some("and active pods 1>0")),
            (Dependents::ActivePods(0), None),
            (Dependents::CustomResources(7), Some("and active CRs 7>0")),
            (Dependents::CustomResources(0), None),
        ];
        for (dependents, refusal) in cases {
            let judged = DeletionProtection::Cascading.judge(Some(dependents));
            match refusal {
                None => assert_eq!(judged, Ok(()), "{dependents:?}"),
                Some(tail) => assert_eq!(
                    judged.unwrap_err().to_string(),
                    format!(
                        "forbidden by ResourcesProtectionDeletion for \
                         policy.kruise.io/delete-protection=Cascading {tail}"
                    ),
                ),
            }
        }
        assert_eq!(DeletionProtection::Cascading.judge(None), Ok(()));
    }

    #[test]
    fn a_workload_counts_its_replicas() {
        let cases = [
            (
                ProtectedKind::Deployment,
                json!({"spec": {"replicas": 3}}),
                Some(3),
            ),
            (
                ProtectedKind::CloneSet,
                json!({"spec": {"replicas": 0}}),
                Some(0),
            ),
            (
                ProtectedKind::AdvancedStatefulSet,
                json!({"spec": {}}),
                Some(1),
            ),
            (
                ProtectedKind::UnitedDeployment,
                json!({"spec": {"replicas": null}}),
                Some(1),
            ),
            (
                ProtectedKind::ReplicaSet,
                json!({"spec": {"replicas": "3"}}),
                None,
            ),
            (
                ProtectedKind::AdvancedDaemonSet,
                json!({"spec": {"replicas": 9}, "status": {"desiredNumberScheduled": 4}}),
                Some(4),
            ),
            (
                ProtectedKind::AdvancedDaemonSet,
                json!({"spec": {}}),
                Some(0),
            ),
        ];
        for (kind, object, expected) in cases {
            assert_eq!(
                kind.dependents_of(&object),
                expected.map(Dependents::Replicas),
                "{kind:?} {object}"
            );
        }
        assert_eq!(ProtectedKind::Namespace.dependents_of(&json!({})), None);
        assert_eq!(
            ProtectedKind::CustomResourceDefinition.dependents_of(&json!({})),
            None
        );
    }

    #[test]
    fn kinds_are_found_by_group_and_resource() {
        for kind in ProtectedKind::ALL {
            assert_eq!(
                ProtectedKind::of_resource(kind.group(), kind.resource()),
                Some(kind)
            );
        }
        assert_eq!(
            ProtectedKind::of_resource("apps", "statefulsets"),
            Some(ProtectedKind::StatefulSet)
        );
        assert_eq!(
            ProtectedKind::of_resource("apps.kruise.io", "statefulsets"),
            Some(ProtectedKind::AdvancedStatefulSet)
        );
        assert_eq!(ProtectedKind::of_resource("apps", "daemonsets"), None);
        assert_eq!(ProtectedKind::of_resource("", "pods"), None);
        assert!(!ProtectedKind::Namespace.is_namespaced());
        assert!(ProtectedKind::UnitedDeployment.is_namespaced());
    }
}
