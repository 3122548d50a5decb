//! RBAC rules written compactly: `rule(&["apps"], &["deployments"], &["get"])`.

use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef, Subject};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|&item| item.to_owned()).collect()
}

/// A rule granting `verbs` on `resources` of `groups`.
#[must_use]
pub fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(strings(groups)),
        resources: Some(strings(resources)),
        verbs: strings(verbs),
        non_resource_urls: None,
        resource_names: None,
    }
}

/// A rule granting `verbs` on the objects `names` only.
#[must_use]
pub fn named_rule(
    groups: &[&str],
    resources: &[&str],
    verbs: &[&str],
    names: Vec<String>,
) -> PolicyRule {
    PolicyRule {
        resource_names: Some(names),
        ..rule(groups, resources, verbs)
    }
}

/// A reference to the ClusterRole or Role (`kind`) `name`.
#[must_use]
pub fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: Some("rbac.authorization.k8s.io".to_owned()),
        kind: kind.to_owned(),
        name: name.to_owned(),
    }
}

/// The ServiceAccount `name` of `namespace` as a binding's subject.
#[must_use]
pub fn service_account_subject(name: &str, namespace: &str) -> Subject {
    Subject {
        api_group: None,
        kind: "ServiceAccount".to_owned(),
        name: name.to_owned(),
        namespace: Some(namespace.to_owned()),
    }
}
