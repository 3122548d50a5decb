//! The metadata of the rendered objects.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The label every kruise-manager pod carries and every selector of it uses.
pub const APP_LABEL: &str = "app.kubernetes.io/name";

/// `name`, cluster-scoped.
#[must_use]
pub fn cluster_meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    }
}

/// `name` in `namespace`.
#[must_use]
pub fn namespaced_meta(name: &str, namespace: &str) -> ObjectMeta {
    ObjectMeta {
        namespace: Some(namespace.to_owned()),
        ..cluster_meta(name)
    }
}

/// `{app.kubernetes.io/name: app}`.
#[must_use]
pub fn app_labels(app: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(APP_LABEL.to_owned(), app.to_owned())])
}
