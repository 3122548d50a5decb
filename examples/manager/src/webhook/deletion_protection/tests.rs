use kube::core::DynamicObject;
use serde_json::{Value, json};

use super::*;
use crate::webhook::configuration::{ClientTarget, FailurePolicy};

fn request(
    group: &str,
    version: &str,
    resource: &str,
    namespace: &str,
    old: Value,
) -> AdmissionRequest<DynamicObject> {
    let name = old.pointer("/metadata/name").cloned().unwrap_or(json!("x"));
    let mut body = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "u1", "operation": "DELETE", "name": name, "namespace": namespace,
            "kind": {"group": group, "version": version, "kind": "Any"},
            "resource": {"group": group, "version": version, "resource": resource},
            "userInfo": {},
        }
    });
    body["request"]["oldObject"] = old;
    parse_request(&serde_json::to_vec(&body).unwrap()).unwrap()
}

fn labelled(name: &str, value: &str, rest: &Value) -> Value {
    let mut object = json!({"apiVersion": "v1", "kind": "Any",
        "metadata": {"name": name, "labels": {DELETE_PROTECTION_LABEL: value}}});
    json_patch::merge(&mut object, rest);
    object
}

fn answered(judgement: Judgement) -> AdmissionResponse {
    match judgement {
        Judgement::Answer(response) => response,
        Judgement::Count(pending) => panic!("expected an answer, got a count: {:?}", pending.count),
    }
}

#[test]
fn always_refuses_any_protected_kind_with_403_naming_the_object() {
    let cases = [
        ("apps", "v1", "replicasets", "ns", "ReplicaSet ns/web"),
        (
            "apps.kruise.io",
            "v1beta1",
            "statefulsets",
            "ns",
            "StatefulSet ns/web",
        ),
        (
            "apps.kruise.io",
            "v1alpha1",
            "uniteddeployments",
            "ns",
            "UnitedDeployment ns/web",
        ),
        ("", "v1", "namespaces", "web", "Namespace web"),
        (
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "",
            "CustomResourceDefinition web",
        ),
    ];
    for (group, version, resource, namespace, subject) in cases {
        let old = labelled("web", "Always", &json!({"spec": {"replicas": 0}}));
        let response = answered(judge(&request(group, version, resource, namespace, old)));
        assert!(!response.allowed, "{resource}");
        assert_eq!(response.result.code, 403);
        assert_eq!(response.result.reason, "Forbidden");
        assert_eq!(
            response.result.message,
            format!(
                "{subject}: forbidden by ResourcesProtectionDeletion for \
                 policy.kruise.io/delete-protection=Always"
            )
        );
    }
}

#[test]
fn cascading_workloads_are_judged_by_their_replicas() {
    let scaled = labelled("web", "Cascading", &json!({"spec": {"replicas": 2}}));
    let response = answered(judge(&request(
        "apps.kruise.io",
        "v1alpha1",
        "clonesets",
        "ns",
        scaled,
    )));
    assert!(!response.allowed);
    assert!(
        response
            .result
            .message
            .ends_with("Cascading and replicas 2>0"),
        "{}",
        response.result.message
    );

    let empty = labelled("web", "Cascading", &json!({"spec": {"replicas": 0}}));
    assert!(answered(judge(&request("apps", "v1", "deployments", "ns", empty))).allowed);
}

#[test]
fn unprotected_requests_are_allowed() {
    let deployment = |value: &str| labelled("web", value, &json!({"spec": {"replicas": 2}}));
    let mut deleting = deployment("Always");
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    let requests = [
        request("apps", "v1", "deployments", "ns", deployment("always")),
        request("apps", "v1", "deployments", "ns", deleting),
        // Not a protected kind.
        request("apps", "v1", "daemonsets", "ns", deployment("Always")),
        request("", "v1", "pods", "ns", deployment("Always")),
    ];
    for request in requests {
        assert!(answered(judge(&request)).allowed, "{:?}", request.resource);
    }
    let mut update = request("apps", "v1", "deployments", "ns", deployment("Always"));
    update.operation = Operation::Update;
    assert!(answered(judge(&update)).allowed);
}

#[test]
fn a_cascading_namespace_counts_its_active_pods() {
    let old = labelled("team", "Cascading", &json!({}));
    let Judgement::Count(pending) = judge(&request("", "v1", "namespaces", "team", old.clone()))
    else {
        panic!("a namespace needs a count");
    };
    assert_eq!(
        pending.count,
        Count::ActivePods {
            namespace: "team".into()
        }
    );
    let refused = pending.finish(Ok(3));
    assert!(!refused.allowed);
    assert_eq!(
        refused.result.message,
        "Namespace team: forbidden by ResourcesProtectionDeletion for \
         policy.kruise.io/delete-protection=Cascading and active pods 3>0"
    );
    let Judgement::Count(pending) = judge(&request("", "v1", "namespaces", "team", old.clone()))
    else {
        panic!("a namespace needs a count");
    };
    assert!(pending.finish(Ok(0)).allowed);
    let Judgement::Count(pending) = judge(&request("", "v1", "namespaces", "team", old)) else {
        panic!("a namespace needs a count");
    };
    let failed = pending.finish(Err("connection refused".into()));
    assert!(!failed.allowed);
    assert_eq!(failed.result.code, 500);
    assert!(
        failed.result.message.contains("connection refused"),
        "{}",
        failed.result.message
    );
}

#[test]
fn a_cascading_crd_counts_its_resources_in_the_storage_version() {
    let crd = |versions: Value| {
        labelled(
            "widgets.example.com",
            "Cascading",
            &json!({"spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"},
                "scope": "Namespaced", "versions": versions}}),
        )
    };
    let versions = json!([
        {"name": "v1alpha1", "served": true, "storage": false},
        {"name": "v1", "served": true, "storage": true}
    ]);
    let Judgement::Count(pending) = judge(&request(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "",
        crd(versions),
    )) else {
        panic!("a CRD needs a count");
    };
    let Count::CustomResources { resource } = &pending.count else {
        panic!("{:?}", pending.count);
    };
    assert_eq!(
        (
            resource.api_version.as_str(),
            resource.plural.as_str(),
            resource.kind.as_str()
        ),
        ("example.com/v1", "widgets", "Widget")
    );
    assert!(
        pending
            .finish(Ok(1))
            .result
            .message
            .ends_with("Cascading and active CRs 1>0")
    );

    let mut legacy = crd(Value::Null);
    legacy["spec"]["version"] = json!("v1beta2");
    let Judgement::Count(pending) = judge(&request(
        "apiextensions.k8s.io",
        "v1beta1",
        "customresourcedefinitions",
        "",
        legacy,
    )) else {
        panic!("a CRD needs a count");
    };
    assert!(
        matches!(&pending.count, Count::CustomResources { resource } if resource.version == "v1beta2")
    );

    let mut broken = crd(json!([]));
    broken["spec"]["names"] = json!({});
    let response = answered(judge(&request(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "",
        broken,
    )));
    assert_eq!(response.result.code, 400);
    assert!(
        response
            .result
            .message
            .contains("spec.names.plural is missing"),
        "{}",
        response.result.message
    );
}

#[test]
fn the_webhook_sends_only_labelled_deletions_of_the_protected_kinds() {
    let options = WebhookOptions {
        failure_policy: FailurePolicy::Ignore,
        target: ClientTarget::Url("https://127.0.0.1:9443/mutate-pod".into()),
        ..WebhookOptions::default()
    };
    let webhook = serde_json::to_value(deletion_protection_webhook(&options, b"CA")).unwrap();
    assert_eq!(webhook["name"], DELETION_PROTECTION_WEBHOOK_NAME);
    assert_eq!(webhook["failurePolicy"], "Ignore");
    assert_eq!(
        webhook["clientConfig"]["url"],
        "https://127.0.0.1:9443/validate-deletion-protection"
    );
    assert_eq!(
        webhook["objectSelector"],
        json!({"matchExpressions": [{"key": "policy.kruise.io/delete-protection", "operator": "In",
            "values": ["Always", "Cascading"]}]})
    );
    let rules = webhook["rules"].as_array().unwrap();
    assert_eq!(rules.len(), ProtectedKind::ALL.len());
    assert_eq!(
        rules[0],
        json!({"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"],
            "resources": ["namespaces"], "scope": "Cluster"})
    );
    assert!(
        rules
            .iter()
            .any(|rule| rule["apiGroups"] == json!(["apps.kruise.io"])
                && rule["resources"] == json!(["statefulsets"])
                && rule["apiVersions"] == json!(["v1alpha1", "v1beta1"]))
    );
}
