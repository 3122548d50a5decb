//! Which workloads a PersistentPodState may follow, and when two references name the same one.

use kruise_api::apps::v1beta1::TargetReference;

/// The API group of an `apiVersion` (`""` for the core group's `v1`).
fn group_of(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map_or("", |(group, _version)| group)
}

/// Whether pods owned by `api_version`/`kind` are handled without a configured whitelist: a StatefulSet
/// of `apps` or `apps.kruise.io`, any version (upstream `CustomWorkloadWhiteList.IsDefaultSupport`).
#[must_use]
pub fn is_supported_workload(api_version: &str, kind: &str) -> bool {
    let group = group_of(api_version);
    kind == "StatefulSet" && (group == "apps" || group == "apps.kruise.io")
}

/// Whether two references name the same workload: same API group (the version may differ), kind and name
/// (upstream `util.IsReferenceEqual`).
#[must_use]
pub fn same_workload(a: &TargetReference, b: &TargetReference) -> bool {
    group_of(&a.api_version) == group_of(&b.api_version) && a.kind == b.kind && a.name == b.name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(api_version: &str, kind: &str, name: &str) -> TargetReference {
        TargetReference {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            name: name.to_owned(),
        }
    }

    #[test]
    fn supported_workloads_are_the_two_statefulsets() {
        let rows = [
            ("apps/v1", "StatefulSet", true),
            ("apps.kruise.io/v1beta1", "StatefulSet", true),
            ("apps.kruise.io/v1alpha1", "StatefulSet", true),
            ("apps/v1", "Deployment", false),
            ("apps.kruise.io/v1alpha1", "CloneSet", false),
            ("v1", "StatefulSet", false),
            ("example.com/v1", "StatefulSet", false),
        ];
        for (api_version, kind, expected) in rows {
            assert_eq!(
                is_supported_workload(api_version, kind),
                expected,
                "{api_version} {kind}"
            );
        }
    }

    #[test]
    fn references_match_by_group_kind_and_name() {
        let web = reference("apps.kruise.io/v1beta1", "StatefulSet", "web");
        let rows = [
            (
                reference("apps.kruise.io/v1alpha1", "StatefulSet", "web"),
                true,
            ),
            (
                reference("apps.kruise.io/v1beta1", "StatefulSet", "web"),
                true,
            ),
            (reference("apps/v1", "StatefulSet", "web"), false),
            (
                reference("apps.kruise.io/v1beta1", "CloneSet", "web"),
                false,
            ),
            (
                reference("apps.kruise.io/v1beta1", "StatefulSet", "db"),
                false,
            ),
        ];
        for (other, expected) in rows {
            assert_eq!(same_workload(&web, &other), expected, "{other:?}");
        }
    }
}
