//! The workload kinds with defaulting and validating webhooks, and their names: resource, webhook paths
//! (upstream's, for the version upstream validates) and webhook names (upstream's `m<kind>.kb.io` and
//! `v<kind>.kb.io`).
//!
//! ```
//! use kruise_manager::webhook::workload_kind::WorkloadKind;
//!
//! assert_eq!(WorkloadKind::CloneSet.mutate_path(), "/mutate-apps-kruise-io-v1alpha1-cloneset");
//! assert_eq!(WorkloadKind::StatefulSet.validate_path(), "/validate-apps-kruise-io-v1beta1-statefulset");
//! assert_eq!(WorkloadKind::ImagePullJob.validating_webhook_name(), "vimagepulljob.kb.io");
//! ```

/// A workload kind of `apps.kruise.io` whose objects kruise-manager defaults and validates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// `clonesets`.
    CloneSet,
    /// `statefulsets` (Advanced StatefulSet).
    StatefulSet,
    /// `daemonsets` (Advanced DaemonSet).
    DaemonSet,
    /// `broadcastjobs`.
    BroadcastJob,
    /// `advancedcronjobs`.
    AdvancedCronJob,
    /// `imagepulljobs`.
    ImagePullJob,
}

/// The API group of every workload kind.
pub const GROUP: &str = "apps.kruise.io";
/// The versions both served for every workload kind (v1beta1 stored).
pub const SERVED_VERSIONS: [&str; 2] = ["v1alpha1", "v1beta1"];

impl WorkloadKind {
    /// Every kind, in the order their webhooks are registered.
    pub const ALL: [Self; 6] = [
        Self::CloneSet,
        Self::StatefulSet,
        Self::DaemonSet,
        Self::BroadcastJob,
        Self::AdvancedCronJob,
        Self::ImagePullJob,
    ];

    /// The kind, as in `kind: CloneSet`.
    #[must_use]
    pub fn kind(self) -> &'static str {
        match self {
            Self::CloneSet => "CloneSet",
            Self::StatefulSet => "StatefulSet",
            Self::DaemonSet => "DaemonSet",
            Self::BroadcastJob => "BroadcastJob",
            Self::AdvancedCronJob => "AdvancedCronJob",
            Self::ImagePullJob => "ImagePullJob",
        }
    }

    /// The kind in lower case (`cloneset`), as in upstream's paths and webhook names.
    #[must_use]
    pub fn singular(self) -> &'static str {
        match self {
            Self::CloneSet => "cloneset",
            Self::StatefulSet => "statefulset",
            Self::DaemonSet => "daemonset",
            Self::BroadcastJob => "broadcastjob",
            Self::AdvancedCronJob => "advancedcronjob",
            Self::ImagePullJob => "imagepulljob",
        }
    }

    /// The resource (`clonesets`).
    #[must_use]
    pub fn resource(self) -> &'static str {
        match self {
            Self::CloneSet => "clonesets",
            Self::StatefulSet => "statefulsets",
            Self::DaemonSet => "daemonsets",
            Self::BroadcastJob => "broadcastjobs",
            Self::AdvancedCronJob => "advancedcronjobs",
            Self::ImagePullJob => "imagepulljobs",
        }
    }

    /// The kind of a resource of [`GROUP`], if it is one of these.
    #[must_use]
    pub fn of_resource(resource: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.resource() == resource)
    }

    /// The version upstream's validating webhook decodes (the other version reaches it converted):
    /// v1beta1 for Advanced StatefulSet, v1alpha1 for the others.
    #[must_use]
    pub fn validated_version(self) -> &'static str {
        match self {
            Self::StatefulSet => "v1beta1",
            _ => "v1alpha1",
        }
    }

    /// The version the validating webhook's rule names, in which requests reach it (`matchPolicy:
    /// Equivalent` converts the other): the validated version, except for AdvancedCronJob, which is
    /// validated in v1beta1 (its ImageListPullJob template exists only there; a conversion to v1alpha1 would
    /// drop it) while its paths keep upstream's v1alpha1.
    #[must_use]
    pub fn admitted_version(self) -> &'static str {
        match self {
            Self::AdvancedCronJob => "v1beta1",
            _ => self.validated_version(),
        }
    }

    /// `apps.kruise.io/<admitted version>`: what the validating webhook decodes.
    #[must_use]
    pub fn admitted_api_version(self) -> String {
        format!("{GROUP}/{}", self.admitted_version())
    }

    /// `apps.kruise.io/<validated version>`.
    #[must_use]
    pub fn validated_api_version(self) -> String {
        format!("{GROUP}/{}", self.validated_version())
    }

    /// The path of the defaulting webhook (both versions).
    #[must_use]
    pub fn mutate_path(self) -> String {
        format!(
            "/mutate-apps-kruise-io-{}-{}",
            self.validated_version(),
            self.singular()
        )
    }

    /// The path of the validating webhook.
    #[must_use]
    pub fn validate_path(self) -> String {
        format!(
            "/validate-apps-kruise-io-{}-{}",
            self.validated_version(),
            self.singular()
        )
    }

    /// The name of the defaulting webhook in the MutatingWebhookConfiguration.
    #[must_use]
    pub fn mutating_webhook_name(self) -> String {
        format!("m{}.kb.io", self.singular())
    }

    /// The name of the validating webhook in the ValidatingWebhookConfiguration.
    #[must_use]
    pub fn validating_webhook_name(self) -> String {
        format!("v{}.kb.io", self.singular())
    }
}
