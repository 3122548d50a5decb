//! A role and the binding that grants it to a ServiceAccount: the two documents every piece of the install's
//! RBAC is made of, cluster-wide or in one namespace.

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject,
};

use super::document::Document;
use super::object_meta::{cluster_meta, namespaced_meta};
use super::policy_rule::role_ref;

/// The ClusterRole `name` with `rules` (under `comment`) and the ClusterRoleBinding of the same name
/// granting it to `subject`.
///
/// # Errors
/// Rendering fails.
pub fn cluster_role_grant(
    comment: &str,
    name: &str,
    rules: Vec<PolicyRule>,
    subject: &Subject,
) -> std::io::Result<[Document; 2]> {
    Ok([
        Document::new(
            comment,
            &ClusterRole {
                metadata: cluster_meta(name),
                rules: Some(rules),
                aggregation_rule: None,
            },
        )?,
        Document::new(
            "",
            &ClusterRoleBinding {
                metadata: cluster_meta(name),
                role_ref: role_ref("ClusterRole", name),
                subjects: Some(vec![subject.clone()]),
            },
        )?,
    ])
}

/// The Role `name` of `namespace` with `rules` (under `comment`) and the RoleBinding of the same name
/// granting it to `subject`.
///
/// # Errors
/// Rendering fails.
pub fn role_grant(
    comment: &str,
    name: &str,
    namespace: &str,
    rules: Vec<PolicyRule>,
    subject: &Subject,
) -> std::io::Result<[Document; 2]> {
    Ok([
        Document::new(
            comment,
            &Role {
                metadata: namespaced_meta(name, namespace),
                rules: Some(rules),
            },
        )?,
        Document::new(
            "",
            &RoleBinding {
                metadata: namespaced_meta(name, namespace),
                role_ref: role_ref("Role", name),
                subjects: Some(vec![subject.clone()]),
            },
        )?,
    ])
}
