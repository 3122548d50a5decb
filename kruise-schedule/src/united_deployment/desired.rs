//! The workload of one subset as the UnitedDeployment wants it (upstream's per-kind
//! `ApplySubsetTemplate` in `adapter/*_adapter.go`):
//!
//! * metadata: `generateName` `<unitedDeployment>-<subset>-` (`<unitedDeployment>-` when that is not a
//!   valid name prefix), the template's labels and annotations, the selector's `matchLabels`, the labels
//!   `controller-revision-hash` (the UnitedDeployment's revision) and `apps.kruise.io/subset-name`, the
//!   annotation `apps.kruise.io/subset-patch` (the subset's raw patch, empty without one), and a
//!   controller owner reference to the UnitedDeployment;
//! * spec: the template's, with the selector narrowed to the subset (`apps.kruise.io/subset-name`), the
//!   subset's replicas and (CloneSet, both StatefulSets) partition;
//! * pod template: the two labels above, the subset's `nodeSelectorTerm` ANDed into every required node
//!   selector term (or as the only term), the subset's tolerations appended, then the subset's `patch`
//!   ([`super::template_patch`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{
    CloneSet, StatefulSet as AdvancedStatefulSet, Subset, UnitedDeployment,
};
use kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL;
use kruise_api::keys::united_deployment::{SUBSET_NAME_LABEL, SUBSET_PATCH_ANNOTATION};

use super::UnitedDeploymentError;
use super::native_spec::{deployment, stateful_set};
use super::template_patch::apply_patch;
use super::workload::SubsetWorkload;

/// What one subset's workload is made of besides the UnitedDeployment.
#[derive(Clone, Copy, Debug)]
pub struct SubsetShape<'a> {
    /// The subset.
    pub subset: &'a Subset,
    /// The UnitedDeployment revision (ControllerRevision name) the workload is written from.
    pub revision: &'a str,
    /// Its replicas.
    pub replicas: i32,
    /// Its partition.
    pub partition: i32,
}

/// The `generateName` of a subset's workload (upstream `getSubsetPrefix`).
#[must_use]
pub fn name_prefix(united_deployment: &str, subset: &str) -> String {
    let prefix = format!("{united_deployment}-{subset}-");
    if is_name_prefix(&prefix) {
        prefix
    } else {
        format!("{united_deployment}-")
    }
}

/// Whether `prefix` plus a generated suffix can be a DNS subdomain name.
fn is_name_prefix(prefix: &str) -> bool {
    prefix.len() <= 253
        && prefix.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && prefix
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

/// The controller owner reference of a subset workload.
#[must_use]
pub fn owner_reference(united_deployment: &UnitedDeployment) -> OwnerReference {
    OwnerReference {
        api_version: "apps.kruise.io/v1beta1".to_owned(),
        kind: "UnitedDeployment".to_owned(),
        name: united_deployment.metadata.name.clone().unwrap_or_default(),
        uid: united_deployment.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The workload of `shape.subset` (see the module documentation).
///
/// # Errors
/// The template names no kind, or the subset's patch does not apply.
pub fn desired_workload(
    united_deployment: &UnitedDeployment,
    shape: SubsetShape<'_>,
) -> Result<SubsetWorkload, UnitedDeploymentError> {
    let template = &united_deployment.spec.template;
    if let Some(template) = &template.stateful_set_template {
        let mut spec = template.spec.clone();
        spec.selector = subset_selector(united_deployment, shape.subset);
        spec.replicas = Some(shape.replicas);
        spec.template = pod_template(united_deployment, &spec.template, shape)?;
        let strategy = spec.update_strategy.get_or_insert_with(Default::default);
        if strategy.type_.as_deref() != Some("OnDelete") {
            strategy.type_ = Some("RollingUpdate".to_owned());
            strategy
                .rolling_update
                .get_or_insert_with(Default::default)
                .partition = Some(shape.partition);
        }
        return Ok(SubsetWorkload::StatefulSet(Box::new(stateful_set(
            metadata(united_deployment, &template.metadata, shape),
            spec,
        ))));
    }
    if let Some(template) = &template.advanced_stateful_set_template {
        let mut spec = template.spec.clone();
        spec.selector = subset_selector(united_deployment, shape.subset);
        spec.replicas = Some(shape.replicas);
        spec.template = pod_template(united_deployment, &spec.template, shape)?;
        spec.update_strategy
            .rolling_update
            .get_or_insert_with(Default::default)
            .partition = Some(shape.partition);
        return Ok(SubsetWorkload::AdvancedStatefulSet(Box::new(
            AdvancedStatefulSet {
                metadata: metadata(united_deployment, &template.metadata, shape),
                spec,
                status: None,
            },
        )));
    }
    if let Some(template) = &template.clone_set_template {
        let mut spec = template.spec.clone();
        spec.selector = subset_selector(united_deployment, shape.subset);
        spec.replicas = Some(shape.replicas);
        spec.template = pod_template(united_deployment, &spec.template, shape)?;
        spec.update_strategy
            .rolling_update
            .get_or_insert_with(Default::default)
            .partition = Some(IntOrString::Int(shape.partition));
        return Ok(SubsetWorkload::CloneSet(Box::new(CloneSet {
            metadata: metadata(united_deployment, &template.metadata, shape),
            spec,
            status: None,
        })));
    }
    if let Some(template) = &template.deployment_template {
        let mut spec = template.spec.clone();
        spec.selector = subset_selector(united_deployment, shape.subset);
        spec.replicas = Some(shape.replicas);
        spec.template = pod_template(united_deployment, &spec.template, shape)?;
        return Ok(SubsetWorkload::Deployment(Box::new(deployment(
            metadata(united_deployment, &template.metadata, shape),
            spec,
        ))));
    }
    Err(UnitedDeploymentError::NoTemplate)
}

fn metadata(
    united_deployment: &UnitedDeployment,
    template: &ObjectMeta,
    shape: SubsetShape<'_>,
) -> ObjectMeta {
    let mut labels = template.labels.clone().unwrap_or_default();
    labels.extend(
        united_deployment
            .spec
            .selector
            .match_labels
            .iter()
            .flatten()
            .map(|(key, value)| (key.clone(), value.clone())),
    );
    labels.insert(
        CONTROLLER_REVISION_HASH_LABEL.to_owned(),
        shape.revision.to_owned(),
    );
    labels.insert(SUBSET_NAME_LABEL.to_owned(), shape.subset.name.clone());
    let mut annotations = template.annotations.clone().unwrap_or_default();
    annotations.insert(SUBSET_PATCH_ANNOTATION.to_owned(), patch_text(shape.subset));
    let name = united_deployment
        .metadata
        .name
        .as_deref()
        .unwrap_or_default();
    ObjectMeta {
        generate_name: Some(name_prefix(name, &shape.subset.name)),
        namespace: united_deployment.metadata.namespace.clone(),
        labels: Some(labels),
        annotations: Some(annotations),
        owner_references: Some(vec![owner_reference(united_deployment)]),
        ..ObjectMeta::default()
    }
}

/// The subset's raw patch as written into `apps.kruise.io/subset-patch` (empty without one).
#[must_use]
pub fn patch_text(subset: &Subset) -> String {
    subset
        .patch
        .as_ref()
        .filter(|patch| !patch.0.is_null())
        .map(|patch| patch.0.to_string())
        .unwrap_or_default()
}

fn subset_selector(united_deployment: &UnitedDeployment, subset: &Subset) -> LabelSelector {
    let mut selector = united_deployment.spec.selector.clone();
    selector
        .match_labels
        .get_or_insert_with(BTreeMap::new)
        .insert(SUBSET_NAME_LABEL.to_owned(), subset.name.clone());
    selector
}

fn pod_template(
    united_deployment: &UnitedDeployment,
    template: &PodTemplateSpec,
    shape: SubsetShape<'_>,
) -> Result<PodTemplateSpec, UnitedDeploymentError> {
    let mut template = template.clone();
    let labels = template
        .metadata
        .get_or_insert_with(ObjectMeta::default)
        .labels
        .get_or_insert_with(BTreeMap::new);
    labels.insert(SUBSET_NAME_LABEL.to_owned(), shape.subset.name.clone());
    labels.insert(
        CONTROLLER_REVISION_HASH_LABEL.to_owned(),
        shape.revision.to_owned(),
    );
    let spec = template.spec.get_or_insert_with(Default::default);
    let term = &shape.subset.node_selector_term;
    let has_term = term
        .match_expressions
        .as_ref()
        .is_some_and(|e| !e.is_empty())
        || term.match_fields.as_ref().is_some_and(|f| !f.is_empty());
    if has_term {
        let required = spec
            .affinity
            .get_or_insert_with(Affinity::default)
            .node_affinity
            .get_or_insert_with(NodeAffinity::default)
            .required_during_scheduling_ignored_during_execution
            .get_or_insert_with(NodeSelector::default);
        if required.node_selector_terms.is_empty() {
            required.node_selector_terms.push(Default::default());
        }
        for existing in &mut required.node_selector_terms {
            if let Some(expressions) = term.match_expressions.as_ref().filter(|e| !e.is_empty()) {
                existing
                    .match_expressions
                    .get_or_insert_with(Vec::new)
                    .extend(expressions.iter().cloned());
            }
            if let Some(fields) = term.match_fields.as_ref().filter(|f| !f.is_empty()) {
                existing
                    .match_fields
                    .get_or_insert_with(Vec::new)
                    .extend(fields.iter().cloned());
            }
        }
    }
    if !shape.subset.tolerations.is_empty() {
        spec.tolerations
            .get_or_insert_with(Vec::new)
            .extend(shape.subset.tolerations.iter().cloned());
    }
    match shape
        .subset
        .patch
        .as_ref()
        .filter(|patch| !patch.0.is_null())
    {
        Some(patch) => {
            apply_patch(&template, &patch.0).map_err(|reason| UnitedDeploymentError::InvalidPatch {
                united_deployment: united_deployment.metadata.name.clone().unwrap_or_default(),
                subset: shape.subset.name.clone(),
                reason,
            })
        }
        None => Ok(template),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn united_deployment(template: &Value) -> UnitedDeployment {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
            "metadata": {"name": "web", "namespace": "ns", "uid": "ud-uid"},
            "spec": {
                "replicas": 4,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template,
                "topology": {"subsets": [{
                    "name": "zone-a",
                    "nodeSelectorTerm": {"matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]},
                    "tolerations": [{"key": "dedicated", "operator": "Exists"}],
                    "patch": {"metadata": {"labels": {"zone": "a"}}}
                }]}
            }
        }))
        .unwrap()
    }

    fn pod_template_json() -> Value {
        json!({"metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
                    {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["nvme"]}]}
                ]}}}}})
    }

    fn build(template: &Value) -> Value {
        let ud = united_deployment(template);
        let shape = SubsetShape {
            subset: &ud.spec.topology.subsets[0],
            revision: "web-abc",
            replicas: 3,
            partition: 1,
        };
        let workload = desired_workload(&ud, shape).unwrap();
        match workload {
            SubsetWorkload::CloneSet(set) => serde_json::to_value(set).unwrap(),
            SubsetWorkload::AdvancedStatefulSet(set) => serde_json::to_value(set).unwrap(),
            SubsetWorkload::StatefulSet(set) => serde_json::to_value(set).unwrap(),
            SubsetWorkload::Deployment(set) => serde_json::to_value(set).unwrap(),
        }
    }

    #[test]
    fn a_cloneset_subset_is_named_labelled_owned_and_pinned_to_its_zone() {
        let object = build(&json!({"cloneSetTemplate": {
            "metadata": {"labels": {"team": "x"}, "annotations": {"note": "y"}},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": pod_template_json()}}}));
        let metadata = &object["metadata"];
        assert_eq!(metadata["generateName"], "web-zone-a-");
        assert_eq!(metadata["namespace"], "ns");
        assert_eq!(
            metadata["labels"],
            json!({"app": "web", "team": "x", "controller-revision-hash": "web-abc",
                "apps.kruise.io/subset-name": "zone-a"})
        );
        assert_eq!(metadata["annotations"]["note"], "y");
        assert_eq!(
            metadata["annotations"]["apps.kruise.io/subset-patch"],
            r#"{"metadata":{"labels":{"zone":"a"}}}"#
        );
        assert_eq!(metadata["ownerReferences"][0]["uid"], "ud-uid");
        assert_eq!(metadata["ownerReferences"][0]["controller"], true);
        let spec = &object["spec"];
        assert_eq!(spec["replicas"], 3);
        assert_eq!(spec["updateStrategy"]["rollingUpdate"]["partition"], 1);
        assert_eq!(
            spec["selector"]["matchLabels"],
            json!({"app": "web", "apps.kruise.io/subset-name": "zone-a"})
        );
        let pod = &spec["template"];
        assert_eq!(pod["metadata"]["labels"]["zone"], "a", "the patch applied");
        assert_eq!(
            pod["metadata"]["labels"]["apps.kruise.io/subset-name"],
            "zone-a"
        );
        assert_eq!(
            pod["metadata"]["labels"]["controller-revision-hash"],
            "web-abc"
        );
        let terms = pod["spec"]["affinity"]["nodeAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            .as_array()
            .unwrap();
        assert_eq!(terms.len(), 2);
        for term in terms {
            let keys: Vec<_> = term["matchExpressions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["key"].as_str().unwrap())
                .collect();
            assert_eq!(keys, ["disk", "topology.kubernetes.io/zone"]);
        }
        assert_eq!(pod["spec"]["tolerations"][0]["key"], "dedicated");
    }

    #[test]
    fn every_kind_gets_its_replicas_and_partition() {
        let deployment = build(&json!({"deploymentTemplate": {"spec": {
            "selector": {"matchLabels": {"app": "web"}}, "template": pod_template_json()}}}));
        assert_eq!(deployment["spec"]["replicas"], 3);
        assert!(deployment["spec"].get("updateStrategy").is_none());
        let stateful = build(
            &json!({"statefulSetTemplate": {"spec": {"serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}}, "template": pod_template_json()}}}),
        );
        assert_eq!(stateful["spec"]["updateStrategy"]["type"], "RollingUpdate");
        assert_eq!(
            stateful["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
            1
        );
        let on_delete = build(
            &json!({"statefulSetTemplate": {"spec": {"serviceName": "web",
            "updateStrategy": {"type": "OnDelete"},
            "selector": {"matchLabels": {"app": "web"}}, "template": pod_template_json()}}}),
        );
        assert!(
            on_delete["spec"]["updateStrategy"]
                .get("rollingUpdate")
                .is_none()
        );
        let advanced = build(&json!({"advancedStatefulSetTemplate": {"spec": {
            "selector": {"matchLabels": {"app": "web"}}, "template": pod_template_json()}}}));
        assert_eq!(
            advanced["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
            1
        );
        assert_eq!(advanced["metadata"]["generateName"], "web-zone-a-");
    }

    #[test]
    fn no_template_and_bad_patches_are_errors() {
        let ud = united_deployment(&json!({}));
        let shape = SubsetShape {
            subset: &ud.spec.topology.subsets[0],
            revision: "r",
            replicas: 1,
            partition: 0,
        };
        assert!(matches!(
            desired_workload(&ud, shape),
            Err(UnitedDeploymentError::NoTemplate)
        ));
        let mut ud = united_deployment(&json!({"deploymentTemplate": {"spec": {
            "selector": {"matchLabels": {"app": "web"}}, "template": pod_template_json()}}}));
        ud.spec.topology.subsets[0].patch =
            Some(k8s_openapi::apimachinery::pkg::runtime::RawExtension(
                json!({"spec": {"containers": 3}}),
            ));
        let shape = SubsetShape {
            subset: &ud.spec.topology.subsets[0],
            revision: "r",
            replicas: 1,
            partition: 0,
        };
        let error = desired_workload(&ud, shape).unwrap_err().to_string();
        assert!(
            error.contains("zone-a") && error.contains("patch"),
            "{error}"
        );
    }

    #[test]
    fn a_prefix_that_cannot_be_a_name_falls_back_to_the_owner_name() {
        assert_eq!(name_prefix("web", "zone-a"), "web-zone-a-");
        let long = "s".repeat(260);
        assert_eq!(name_prefix("web", &long), "web-");
    }
}
