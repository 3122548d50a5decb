//! CustomResourceDefinitions for every kind, as upstream ships them (`config/crd/bases/*.yaml`): both versions
//! served with v1beta1 stored, printer columns, short names, scope, status and scale subresources, schemaless pod
//! and volume claim templates, and a conversion strategy of your choice.
//!
//! ```
//! use kruise_api::crd::{CrdOptions, all};
//!
//! let crds = all(&CrdOptions::default());
//! let cloneset = crds.iter().find(|crd| crd.metadata.name.as_deref() == Some("clonesets.apps.kruise.io")).unwrap();
//! let versions: Vec<_> = cloneset.spec.versions.iter().map(|v| (v.name.as_str(), v.storage)).collect();
//! assert_eq!(versions, [("v1alpha1", false), ("v1beta1", true)]);
//! ```

use k8s_openapi::ByteString;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, ServiceReference, WebhookClientConfig,
    WebhookConversion,
};
use kube::CustomResourceExt;
use kube::core::crd::merge_crds;

use crate::apps::{v1alpha1, v1beta1};
use crate::policy;

/// Which versions the CRDs serve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VersionSelection {
    /// Upstream v1.9 (HEAD): both versions served, v1beta1 stored (v1alpha1-only kinds stay v1alpha1).
    #[default]
    All,
    /// Upstream v1.8: v1alpha1 only and stored, except Advanced StatefulSet, which serves both and stores
    /// v1beta1.
    V1alpha1,
    /// v1beta1 only (v1alpha1-only kinds stay v1alpha1).
    V1beta1,
}

/// How the API server converts between the two versions of a kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ConversionStrategy {
    /// `strategy: None`: the server only rewrites `apiVersion`. Correct only for kinds whose two versions
    /// have the same shape; use a webhook when clients read and write both versions.
    #[default]
    None,
    /// `strategy: Webhook` calling the given endpoint (admission.k8s.io-style `ConversionReview` v1).
    Webhook(WebhookClientConfig),
}

impl ConversionStrategy {
    /// A webhook served by a Service, at `path` on `port`, trusted through `ca_bundle` (PEM).
    #[must_use]
    pub fn service(namespace: &str, name: &str, path: &str, port: i32, ca_bundle: Vec<u8>) -> Self {
        Self::Webhook(WebhookClientConfig {
            ca_bundle: Some(ByteString(ca_bundle)),
            service: Some(ServiceReference {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                path: Some(path.to_owned()),
                port: Some(port),
            }),
            url: None,
        })
    }
}

/// What to generate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CrdOptions {
    /// Which versions to serve.
    pub versions: VersionSelection,
    /// The conversion strategy of CRDs that serve two versions.
    pub conversion: ConversionStrategy,
}

/// One CRD per kind, named `<plural>.<group>`, ordered by name.
#[must_use]
pub fn all(options: &CrdOptions) -> Vec<CustomResourceDefinition> {
    let mut crds = vec![
        two_versions::<v1alpha1::CloneSet, v1beta1::CloneSet>(options),
        one_version::<v1alpha1::EphemeralJob>(options),
        one_version::<v1alpha1::NodePodProbe>(options),
        two_versions::<v1alpha1::PersistentPodState, v1beta1::PersistentPodState>(options),
        one_version::<v1alpha1::PodProbeMarker>(options),
        two_versions::<v1alpha1::ResourceDistribution, v1beta1::ResourceDistribution>(options),
        two_versions::<v1alpha1::WorkloadSpread, v1beta1::WorkloadSpread>(options),
        two_versions::<v1alpha1::AdvancedCronJob, v1beta1::AdvancedCronJob>(options),
        two_versions::<v1alpha1::BroadcastJob, v1beta1::BroadcastJob>(options),
        two_versions::<v1alpha1::ImageListPullJob, v1beta1::ImageListPullJob>(options),
        two_versions::<v1alpha1::ImagePullJob, v1beta1::ImagePullJob>(options),
        two_versions::<v1alpha1::NodeImage, v1beta1::NodeImage>(options),
        two_versions::<v1alpha1::DaemonSet, v1beta1::DaemonSet>(options),
        two_versions_since_v1alpha1::<v1alpha1::StatefulSet, v1beta1::StatefulSet>(options),
        two_versions::<v1alpha1::UnitedDeployment, v1beta1::UnitedDeployment>(options),
        two_versions::<v1alpha1::ContainerRecreateRequest, v1beta1::ContainerRecreateRequest>(
            options,
        ),
        two_versions::<v1alpha1::SidecarSet, v1beta1::SidecarSet>(options),
        two_versions::<policy::v1alpha1::PodUnavailableBudget, policy::v1beta1::PodUnavailableBudget>(
            options,
        ),
    ];
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    crds
}

/// The CRD of a kind served in two versions, shaped by the options.
fn two_versions<A: CustomResourceExt, B: CustomResourceExt>(
    options: &CrdOptions,
) -> CustomResourceDefinition {
    let alpha = A::crd();
    let beta = B::crd();
    let mut crd = match options.versions {
        VersionSelection::V1alpha1 => alpha,
        VersionSelection::V1beta1 => beta,
        VersionSelection::All => merge_crds(vec![alpha.clone(), beta], "v1beta1").unwrap_or(alpha),
    };
    finish(&mut crd, options);
    crd
}

/// The CRD of a kind upstream v1.8 already served in both versions with v1beta1 stored (Advanced
/// StatefulSet): both versions for [`VersionSelection::All`] and [`VersionSelection::V1alpha1`].
fn two_versions_since_v1alpha1<A: CustomResourceExt, B: CustomResourceExt>(
    options: &CrdOptions,
) -> CustomResourceDefinition {
    let both = CrdOptions {
        versions: VersionSelection::All,
        ..options.clone()
    };
    match options.versions {
        VersionSelection::V1beta1 => two_versions::<A, B>(options),
        _ => two_versions::<A, B>(&both),
    }
}

/// The CRD of a kind that only has v1alpha1.
fn one_version<A: CustomResourceExt>(options: &CrdOptions) -> CustomResourceDefinition {
    let mut crd = A::crd();
    finish(&mut crd, options);
    crd
}

fn finish(crd: &mut CustomResourceDefinition, options: &CrdOptions) {
    crd.spec.versions.sort_by(|a, b| a.name.cmp(&b.name));
    let storage_present = crd.spec.versions.iter().any(|version| version.storage);
    if !storage_present && let Some(first) = crd.spec.versions.first_mut() {
        first.storage = true;
    }
    for version in &mut crd.spec.versions {
        version.served = true;
    }
    crd.spec.conversion = match (&options.conversion, crd.spec.versions.len()) {
        (ConversionStrategy::Webhook(client_config), 2..) => Some(CustomResourceConversion {
            strategy: "Webhook".to_owned(),
            webhook: Some(WebhookConversion {
                client_config: Some(client_config.clone()),
                conversion_review_versions: vec!["v1".to_owned()],
            }),
        }),
        _ => Some(CustomResourceConversion {
            strategy: "None".to_owned(),
            webhook: None,
        }),
    };
}
