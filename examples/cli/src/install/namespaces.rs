//! `namespace.yaml`: the namespace kruise-manager and kruise-daemon run in, and the one holding the copies
//! of ImagePullJob pull secrets.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use kruise_api::keys::image_pull::DAEMON_CONFIG_NAMESPACE;
use kruise_api::keys::kubernetes::NAMESPACE_NAME_LABEL;

use super::document::Document;
use super::object_meta::cluster_meta;
use super::settings::InstallSettings;

/// A Namespace carrying the `kubernetes.io/metadata.name` label (set by Kubernetes 1.21+ itself, here for
/// older servers: the webhooks' namespace selectors use it).
fn namespace(name: &str) -> Namespace {
    let mut metadata = cluster_meta(name);
    metadata.labels = Some(BTreeMap::from([(
        NAMESPACE_NAME_LABEL.to_owned(),
        name.to_owned(),
    )]));
    Namespace {
        metadata,
        ..Namespace::default()
    }
}

/// The two Namespaces.
///
/// # Errors
/// Rendering fails.
pub fn documents(settings: &InstallSettings) -> std::io::Result<Vec<Document>> {
    Ok(vec![
        Document::new(
            "The namespace kruise-manager runs in. Its pods never reach the webhook (see webhook.yaml).",
            &namespace(&settings.namespace),
        )?,
        Document::new(
            "Where kruise-manager copies the pull secrets of ImagePullJobs; the only namespace whose Secrets\n\
             kruise-daemon may read (daemon.yaml).",
            &namespace(DAEMON_CONFIG_NAMESPACE),
        )?,
    ])
}
