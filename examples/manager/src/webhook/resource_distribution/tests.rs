use kube::core::DynamicObject;
use serde_json::{Value, json};

use super::*;
use crate::webhook::configuration::{ClientTarget, FailurePolicy};

fn request(
    operation: &str,
    resource: &str,
    object: &Value,
    old: Option<&Value>,
) -> AdmissionRequest<DynamicObject> {
    let version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|api_version| api_version.split('/').nth(1))
        .unwrap_or("v1alpha1")
        .to_owned();
    let mut body = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "u1", "operation": operation, "name": "shared",
            "kind": {"group": "apps.kruise.io", "version": version, "kind": "ResourceDistribution"},
            "resource": {"group": "apps.kruise.io", "version": version, "resource": resource},
            "userInfo": {},
            "object": object,
        }
    });
    if let Some(old) = old {
        body["request"]["oldObject"] = old.clone();
    }
    parse_request(&serde_json::to_vec(&body).unwrap()).unwrap()
}

fn distributor(resource: &Value) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ResourceDistribution",
        "metadata": {"name": "shared"},
        "spec": {"resource": resource,
            "targets": {"includedNamespaces": {"list": [{"name": "web"}]}}}})
}

fn secret(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": {"k": "dg=="}})
}

fn answered(judgement: Judgement) -> AdmissionResponse {
    match judgement {
        Judgement::Answer(response) => response,
        Judgement::Conflicts(pending) => {
            panic!("expected an answer, got {:?}", pending.distributor)
        }
    }
}

#[test]
fn a_valid_distributor_goes_on_to_the_conflict_check() {
    let object = distributor(&secret("pull"));
    let Judgement::Conflicts(pending) =
        judge(&request("CREATE", "resourcedistributions", &object, None))
    else {
        panic!("a valid distributor needs the conflict check");
    };
    assert_eq!(
        pending.distributor.spec.targets.included_namespaces.list[0].name,
        "web"
    );
    let allowed = Pending {
        allowed: pending.allowed.clone(),
        distributor: pending.distributor.clone(),
    };
    assert!(allowed.finish(Ok(Vec::new())).allowed);
    let refused = pending.finish(Ok(vec!["web".to_owned()]));
    assert!(!refused.allowed);
    assert_eq!(refused.result.code, 422);
    assert_eq!(
        refused.result.message,
        "ResourceDistribution.apps.kruise.io \"shared\" is invalid: spec.targets: Invalid value: [\"web\"]: \
         conflict: Secret \"pull\" already exists in these target namespaces and was not distributed by \
         ResourceDistribution \"shared\" (annotation kruise.io/resourcedistribution.resource.from)"
    );
}

#[test]
fn a_failed_listing_refuses_with_500() {
    let object = distributor(&secret("pull"));
    let Judgement::Conflicts(pending) =
        judge(&request("CREATE", "resourcedistributions", &object, None))
    else {
        panic!("a valid distributor needs the conflict check");
    };
    let refused = pending.finish(Err("listing secrets: forbidden".to_owned()));
    assert!(!refused.allowed);
    assert_eq!(refused.result.code, 500);
    assert!(
        refused
            .result
            .message
            .contains("listing secrets: forbidden"),
        "{}",
        refused.result.message
    );
}

#[test]
fn a_renamed_resource_is_refused_on_update() {
    let old = distributor(&secret("pull"));
    let object = distributor(&secret("pull2"));
    let response = answered(judge(&request(
        "UPDATE",
        "resourcedistributions",
        &object,
        Some(&old),
    )));
    assert!(!response.allowed);
    assert_eq!(response.result.code, 422);
    assert_eq!(
        response.result.message,
        "ResourceDistribution.apps.kruise.io \"shared\" is invalid: spec.resource.metadata.name: \
         Invalid value: \"pull2\": field is immutable"
    );
}

#[test]
fn metadata_updates_and_deletions_are_not_judged() {
    let old = distributor(&secret("pull"));
    let mut labelled = old.clone();
    labelled["metadata"]["finalizers"] = json!(["foregroundDeletion"]);
    assert!(
        answered(judge(&request(
            "UPDATE",
            "resourcedistributions",
            &labelled,
            Some(&old)
        )))
        .allowed
    );
    let mut deleting = distributor(&secret("pull2"));
    deleting["metadata"]["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
    assert!(
        answered(judge(&request(
            "UPDATE",
            "resourcedistributions",
            &deleting,
            Some(&old)
        )))
        .allowed
    );
}

#[test]
fn a_v1beta1_object_is_judged_in_v1alpha1() {
    let object = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ResourceDistribution",
        "metadata": {"name": "shared"},
        "spec": {"resource": secret("pull"),
            "targets": {"namespaceSelector": {"matchLabels": {"bad key!": "x"}}}}});
    let response = answered(judge(&request(
        "CREATE",
        "resourcedistributions",
        &object,
        None,
    )));
    assert!(!response.allowed);
    assert!(
        response
            .result
            .message
            .contains("spec.targets.namespaceLabelSelector: Invalid value: {\"matchLabels\":{\"bad key!\":\"x\"}}"),
        "{}",
        response.result.message
    );
}

#[test]
fn other_resources_and_undecodable_objects() {
    let object = distributor(&secret("pull"));
    assert!(answered(judge(&request("CREATE", "sidecarsets", &object, None))).allowed);
    assert!(
        answered(judge(&request(
            "DELETE",
            "resourcedistributions",
            &object,
            None
        )))
        .allowed
    );
    let mut broken = object.clone();
    broken["spec"]["targets"] = json!("everywhere");
    let response = answered(judge(&request(
        "CREATE",
        "resourcedistributions",
        &broken,
        None,
    )));
    assert!(!response.allowed);
    assert_eq!(response.result.code, 400);
    assert!(
        response
            .result
            .message
            .starts_with("ResourceDistribution shared: decoding the new object: "),
        "{}",
        response.result.message
    );
}

#[test]
fn the_configuration_entry_names_v1alpha1_cluster_scoped() {
    let options = WebhookOptions {
        target: ClientTarget::Url("https://127.0.0.1:9443/mutate-pod".into()),
        failure_policy: FailurePolicy::Ignore,
        ..WebhookOptions::default()
    };
    let value = serde_json::to_value(resource_distribution_webhook(&options, b"CA")).unwrap();
    assert_eq!(value["name"], RESOURCE_DISTRIBUTION_WEBHOOK_NAME);
    assert_eq!(value["failurePolicy"], "Ignore");
    assert_eq!(
        value["clientConfig"]["url"],
        "https://127.0.0.1:9443/validate-apps-kruise-io-v1alpha1-resourcedistribution"
    );
    assert_eq!(
        value["rules"][0],
        json!({"apiGroups": ["apps.kruise.io"], "apiVersions": ["v1alpha1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["resourcedistributions"], "scope": "Cluster"})
    );
    // Only with the gate on.
    let names = |options: &WebhookOptions| -> Vec<String> {
        crate::webhook::validating_configuration::validating_webhook_configuration(options, b"")
            .webhooks
            .unwrap_or_default()
            .into_iter()
            .map(|webhook| webhook.name)
            .collect()
    };
    assert!(!names(&options).contains(&RESOURCE_DISTRIBUTION_WEBHOOK_NAME.to_owned()));
    let gated = WebhookOptions {
        resource_distribution: true,
        ..options
    };
    assert!(names(&gated).contains(&RESOURCE_DISTRIBUTION_WEBHOOK_NAME.to_owned()));
}
