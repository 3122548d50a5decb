//! The webhooks and flags of kruise-manager driven with untrusted input: arbitrary bytes, reviews whose text
//! was edited, and well-formed reviews carrying objects with a value replaced by arbitrary JSON. The pod
//! webhook (with and without SidecarSet injection), the SidecarSet validating webhook, the CRD conversion
//! webhook, the ContainerRecreateRequest webhook (on the paths that make no API call), the defaulting and
//! validating webhooks of the workload kinds and the
//! `--feature-gates` parsers always answer (the PodUnavailableBudget webhook's reading of pods never panics): HTTP 200 with a review for the request's `uid`, or HTTP 400 with a
//! review that says why, and a patch in an answer applies to the object it was made for. The bodies of
//! oversized reviews are covered in `webhook::review_body`. `KRUISE_FUZZ_CASES` sets the number of cases.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)] // test code

use base64::Engine as _;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Value, json};

use crate::webhook::admission::{self, Answer, Mutator};
use crate::webhook::conversion;
use crate::webhook::sidecarset_admission::SidecarSetValidator;
use crate::webhook::workload_admission;
use crate::webhook::workload_kind::WorkloadKind;
use kruise_fuzz_inputs::fuzz_cases;
use kruise_fuzz_inputs::json_values::{json_value, replaced};
use kruise_fuzz_inputs::text_edits::edited;

const UID: &str = "705ab4f5-6393-11e8-b7cc-42010a800002";

fn admission_review(
    resource: (&str, &str, &str),
    operation: &str,
    object: &Value,
    old: &Value,
) -> Value {
    let (group, version, kind) = resource;
    let plural = format!("{}s", kind.to_lowercase());
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": UID, "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": plural},
            "namespace": "default", "operation": operation, "userInfo": {"username": "admin"},
            "object": object, "oldObject": old, "dryRun": false
        }
    })
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "demo-abcde", "namespace": "default", "labels": {"app": "nginx"},
            "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo",
                "uid": "6e3e1b35", "controller": true}]},
        "spec": {"containers": [
            {"name": "a", "image": "x", "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "3"}]},
            {"name": "b", "image": "y"}]}
    })
}

fn sidecarset(api_version: &str) -> Value {
    json!({
        "apiVersion": api_version, "kind": "SidecarSet",
        "metadata": {"name": "s", "labels": {"a": "b"}},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "namespace": "default",
            "containers": [{"name": "c", "image": "busybox", "podInjectPolicy": "BeforeAppContainer",
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
                "resourcesPolicy": {"targetContainerMode": "sum",
                    "resourcesExpr": {"limits": {"cpu": "max(cpu*50%, 50m)"}}}}],
            "patchPodMetadata": [{"annotations": {"k": "v"}, "patchPolicy": "MergePatchJson"}],
            "updateStrategy": {"maxUnavailable": "20%", "partition": 1}}
    })
}

/// `crr()` naming the pod the test stores hold.
fn crr_of_pod() -> Value {
    let mut crr = crr();
    crr["spec"]["podName"] = json!("web-0");
    crr
}

fn crr() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": "r", "namespace": "default",
            "labels": {"crr.apps.kruise.io/pod-uid": "u", "crr.apps.kruise.io/node-name": "n"}},
        "spec": {"podName": "", "containers": [{"name": "app"}],
            "strategy": {"failurePolicy": "Fail", "unreadyGracePeriodSeconds": 3}, "activeDeadlineSeconds": 5}
    })
}

fn resource_distribution(api_version: &str, selector: &str) -> Value {
    json!({"apiVersion": api_version, "kind": "ResourceDistribution", "metadata": {"name": "shared"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "game"},
                "data": {"k": "v"}},
            "targets": {"includedNamespaces": {"list": [{"name": "web"}]},
                "excludedNamespaces": {"list": [{"name": "db"}]},
                selector: {"matchLabels": {"team": "a"}}}}})
}

/// A review body: well-formed around an object with one value replaced, its text edited, or arbitrary bytes.
fn body(review: Value) -> impl Strategy<Value = Vec<u8>> {
    let object_pointer = "/request/object";
    let text = review.to_string();
    prop_oneof![
        3 => (any::<Index>(), json_value()).prop_map(move |(at, value)| {
            let mut review = review.clone();
            let object = review.pointer(object_pointer).cloned().unwrap_or_default();
            if let Some(slot) = review.pointer_mut(object_pointer) {
                *slot = replaced(object, at, value);
            }
            serde_json::to_vec(&review).unwrap()
        }),
        2 => edited(text).prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..300),
    ]
}

/// The review kind of an answer: the usual one, or the one the request named (an edit may have changed it;
/// the answer echoes the request's type).
fn check_kind(response: &Value, request: &Value, usual: &str) -> Result<(), TestCaseError> {
    let kind = &response["kind"];
    prop_assert!(kind == usual || kind == &request["kind"], "{}", response);
    Ok(())
}

/// The answer is HTTP 200 with a review answering the request's `uid`, or HTTP 400 with a review saying
/// why; a patch applies to the object of the request.
fn check_admission(body: &[u8], answer: &Answer) -> Result<(), TestCaseError> {
    let response: Value = serde_json::from_slice(&answer.body)
        .map_err(|error| TestCaseError::fail(format!("the answer is not JSON: {error}")))?;
    let request: Value = serde_json::from_slice(body).unwrap_or_default();
    check_kind(&response, &request, "AdmissionReview")?;
    match answer.http_status {
        200 => {
            prop_assert_eq!(&response["response"]["uid"], &request["request"]["uid"]);
            if response["response"]["allowed"] == false {
                let message = response["response"]["status"]["message"]
                    .as_str()
                    .unwrap_or_default();
                prop_assert!(!message.is_empty(), "{}", response);
            }
            if let Some(encoded) = response["response"]["patch"].as_str() {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .unwrap();
                let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
                let mut object = request["request"]["object"].clone();
                json_patch::patch(&mut object, &patch).map_err(|error| {
                    TestCaseError::fail(format!("the patch does not apply: {error}"))
                })?;
            }
        }
        400 => {
            prop_assert_eq!(&response["response"]["allowed"], false);
            let message = response["response"]["status"]["message"]
                .as_str()
                .unwrap_or_default();
            prop_assert!(!message.is_empty(), "{}", response);
        }
        other => prop_assert!(false, "HTTP {}", other),
    }
    Ok(())
}

fn conversion_review(desired: &str, objects: &[Value]) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": UID, "desiredAPIVersion": desired, "objects": objects}
    })
}

fn cloneset(api_version: &str) -> Value {
    json!({
        "apiVersion": api_version, "kind": "CloneSet",
        "metadata": {"name": "demo", "namespace": "ns", "uid": "u-1", "resourceVersion": "5",
            "annotations": {"conversion.kruise-rs.io/v1alpha1-stash":
                r#"{"spec":{"fingerprint":"0","patch":{"spec":{"replicas":1}}}}"#}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "demo"}},
            "template": {"metadata": {"labels": {"app": "demo"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]}},
            "updateStrategy": {"type": "InPlaceOnly", "partition": "20%", "paused": true,
                "rollingUpdate": {"partition": "2147483648%", "maxSurge": " 5%"}}},
        "status": {"replicas": 3, "updateRevision": "demo-1"}
    })
}

/// A valid workload of `kind` at `version` (a CloneSet-like spec for the sets, a job spec for the jobs).
fn workload(version: &str, kind: &str) -> Value {
    let template = json!({"metadata": {"labels": {"app": "w"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "nginx:1.25"}]}});
    let spec = match kind {
        "BroadcastJob" => json!({"template": template, "parallelism": "50%"}),
        "AdvancedCronJob" => json!({"schedule": "TZ=Asia/Tokyo */5 * * * *",
            "template": {"broadcastJobTemplate": {"spec": {"template": template}}}}),
        "ImagePullJob" => json!({"image": "nginx:1.25", "selector": {"names": ["a"]},
            "completionPolicy": {"type": "Always", "activeDeadlineSeconds": 1200}}),
        _ => {
            json!({"selector": {"matchLabels": {"app": "w"}}, "serviceName": "w", "template": template,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}})
        }
    };
    json!({"apiVersion": format!("apps.kruise.io/{version}"), "kind": kind,
        "metadata": {"name": "w", "namespace": "default", "uid": "u-2"}, "spec": spec})
}

/// Up to three CloneSets of either version, each with one value replaced or not.
fn conversion_objects() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(
        (
            select(&["apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"][..]),
            any::<Index>(),
            prop::option::of(json_value()),
        )
            .prop_map(|(api_version, at, value)| match value {
                Some(value) => replaced(cloneset(api_version), at, value),
                None => cloneset(api_version),
            }),
        0..3,
    )
}

fn conversion_body() -> impl Strategy<Value = Vec<u8>> {
    let desired = || {
        select(
            &[
                "apps.kruise.io/v1alpha1",
                "apps.kruise.io/v1beta1",
                "apps.kruise.io/v9",
                "",
            ][..],
        )
    };
    prop_oneof![
        3 => (desired(), conversion_objects()).prop_map(|(desired, objects)| {
            serde_json::to_vec(&conversion_review(desired, &objects)).unwrap()
        }),
        2 => (desired(), conversion_objects())
            .prop_flat_map(|(desired, objects)| edited(conversion_review(desired, &objects).to_string()))
            .prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..300),
    ]
}

/// A runtime and a client for the ContainerRecreateRequest webhook, made once (a client per case made the
/// property the slowest of all). The client is never contacted: the reviews below take no path that reads
/// the pod or node. Its buffer task runs on this runtime, so it is made inside it.
/// The CRR webhook's stores: synced, with the pod `crr()` names running on a node.
fn crr_stores() -> crate::crr::admission::CrrStores {
    use kruise_runtime::Informer;
    use kube::runtime::watcher::Event;
    let pods = Informer::new("pods");
    pods.apply(Event::Init);
    pods.apply(Event::InitApply(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-0", "namespace": "default", "uid": "pod-uid"},
            "spec": {"nodeName": "node-a", "containers": [{"name": "main", "image": "nginx"}]},
            "status": {"containerStatuses": [{"name": "main", "image": "nginx", "imageID": "",
                "ready": true, "restartCount": 0, "containerID": "containerd://abc"}]}
        }))
        .unwrap(),
    ));
    pods.apply(Event::InitDone);
    let nodes = Informer::new("nodes");
    nodes.apply(Event::Init);
    nodes.apply(Event::InitDone);
    crate::crr::admission::CrrStores::from_informers(pods, nodes)
}

proptest! {
    #![proptest_config(fuzz_cases::config())]

    #[test]
    fn pod_reviews(
        body in body(admission_review(("", "v1", "Pod"), "CREATE", &pod(), &Value::Null)),
        inject in any::<bool>(),
    ) {
        let mutator = if inject {
            use crate::webhook::sidecarset_injection::tests::{log_sidecarset, stores_with};
            Mutator { sidecarsets: Some(stores_with(&[log_sidecarset()], json!({}))), ..Mutator::default() }
        } else {
            Mutator::default()
        };
        let answer = admission::review(&body, &mutator);
        check_admission(&body, &answer)?;
    }

    #[test]
    fn sidecarset_reviews(
        body in prop_oneof![
            body(admission_review(("apps.kruise.io", "v1beta1", "SidecarSet"), "CREATE",
                &sidecarset("apps.kruise.io/v1beta1"), &Value::Null)),
            body(admission_review(("apps.kruise.io", "v1beta1", "SidecarSet"), "UPDATE",
                &sidecarset("apps.kruise.io/v1alpha1"), &sidecarset("apps.kruise.io/v1beta1"))),
        ],
        defaults_allowed in any::<bool>(),
    ) {
        let answer = SidecarSetValidator::empty(defaults_allowed).review(&body);
        check_admission(&body, &answer)?;
    }

    #[test]
    fn workload_reviews(
        (kind, body) in prop_oneof![
            Just(WorkloadKind::CloneSet).prop_flat_map(|kind| (Just(kind), prop_oneof![
                body(admission_review(("apps.kruise.io", "v1alpha1", "CloneSet"), "CREATE",
                    &cloneset("apps.kruise.io/v1alpha1"), &Value::Null)),
                body(admission_review(("apps.kruise.io", "v1beta1", "CloneSet"), "UPDATE",
                    &cloneset("apps.kruise.io/v1beta1"), &cloneset("apps.kruise.io/v1alpha1"))),
            ])),
            Just(WorkloadKind::StatefulSet).prop_flat_map(|kind| (Just(kind), body(admission_review(
                ("apps.kruise.io", "v1beta1", "StatefulSet"), "CREATE", &workload("v1beta1", "StatefulSet"),
                &Value::Null)))),
            Just(WorkloadKind::DaemonSet).prop_flat_map(|kind| (Just(kind), body(admission_review(
                ("apps.kruise.io", "v1alpha1", "DaemonSet"), "UPDATE", &workload("v1alpha1", "DaemonSet"),
                &workload("v1alpha1", "DaemonSet"))))),
            Just(WorkloadKind::BroadcastJob).prop_flat_map(|kind| (Just(kind), body(admission_review(
                ("apps.kruise.io", "v1alpha1", "BroadcastJob"), "CREATE", &workload("v1alpha1", "BroadcastJob"),
                &Value::Null)))),
            Just(WorkloadKind::AdvancedCronJob).prop_flat_map(|kind| (Just(kind), body(admission_review(
                ("apps.kruise.io", "v1beta1", "AdvancedCronJob"), "UPDATE", &workload("v1beta1", "AdvancedCronJob"),
                &workload("v1alpha1", "AdvancedCronJob"))))),
            Just(WorkloadKind::ImagePullJob).prop_flat_map(|kind| (Just(kind), body(admission_review(
                ("apps.kruise.io", "v1alpha1", "ImagePullJob"), "CREATE", &workload("v1alpha1", "ImagePullJob"),
                &Value::Null)))),
        ],
    ) {
        check_admission(&body, &workload_admission::mutate(kind, &body))?;
        check_admission(&body, &workload_admission::validate(kind, &body))?;
    }

    #[test]
    fn conversion_reviews(body in conversion_body()) {
        let answer = conversion::review(&body);
        let response: Value = serde_json::from_slice(&answer.body)
            .map_err(|error| TestCaseError::fail(format!("the answer is not JSON: {error}")))?;
        let request: Value = serde_json::from_slice(&body).unwrap_or_default();
        check_kind(&response, &request, "ConversionReview")?;
        let result = &response["response"]["result"];
        match answer.http_status {
            200 => {
                prop_assert_eq!(&response["response"]["uid"], &request["request"]["uid"]);
                let desired = &request["request"]["desiredAPIVersion"];
                if result["status"] == "Success" {
                    let converted = response["response"]["convertedObjects"].as_array().cloned().unwrap_or_default();
                    let sent = request["request"]["objects"].as_array().cloned().unwrap_or_default();
                    prop_assert_eq!(converted.len(), sent.len());
                    for object in &converted {
                        prop_assert_eq!(&object["apiVersion"], desired);
                    }
                } else {
                    prop_assert_eq!(&result["status"], "Failure");
                    prop_assert!(result["message"].as_str().is_some_and(|message| message.contains("objects[")));
                }
            }
            400 => {
                prop_assert_eq!(&result["status"], "Failure");
                prop_assert!(result["message"].as_str().is_some_and(|message| !message.is_empty()));
            }
            other => prop_assert!(false, "HTTP {}", other),
        }
    }

    #[test]
    fn container_recreate_request_reviews(
        body in prop_oneof![
            body(admission_review(("apps.kruise.io", "v1beta1", "ContainerRecreateRequest"), "UPDATE", &crr(), &crr())),
            body(admission_review(("apps.kruise.io", "v1beta1", "ContainerRecreateRequest"), "DELETE", &crr(), &crr())),
            body(admission_review(("apps.kruise.io", "v1beta1", "ContainerRecreateRequest"), "CREATE", &crr(), &Value::Null)),
            body(admission_review(("apps.kruise.io", "v1beta1", "ContainerRecreateRequest"), "CREATE", &crr_of_pod(), &Value::Null)),
        ],
    ) {
        // The pod is read from the (synced) informers: every CREATE is answered without I/O.
        let answer = crate::crr::admission::review(&body, &crr_stores());
        let response: Value = serde_json::from_slice(&answer.body)
            .map_err(|error| TestCaseError::fail(format!("the answer is not JSON: {error}")))?;
        prop_assert!(answer.http_status == 200 || answer.http_status == 400, "HTTP {}", answer.http_status);
        if answer.http_status == 400 || response["response"]["allowed"] == false {
            let message = response["response"]["status"]["message"].as_str().unwrap_or_default();
            prop_assert!(!message.is_empty(), "{}", response);
        }
    }

    /// The PodUnavailableBudget webhook reads pods out of DELETE, UPDATE and eviction reviews without
    /// panicking (its decisions and writes need a cluster: the end-to-end scenarios).
    #[test]
    fn pod_unavailable_budget_reviews(
        body in prop_oneof![
            body(admission_review(("", "v1", "Pod"), "DELETE", &Value::Null, &pod())),
            body(admission_review(("", "v1", "Pod"), "UPDATE", &pod(), &pod())),
        ],
        delete_gate in any::<bool>(),
        update_gate in any::<bool>(),
    ) {
        if let Ok(request) = admission::parse_request(&body) {
            let _ = crate::webhook::pod_unavailable_budget::classify(&request, delete_gate, update_gate);
        }
    }

    /// The ResourceDistribution webhook judges CREATE and UPDATE reviews of either version without
    /// panicking; a refusal names what is wrong (the conflict listing needs a cluster: the end-to-end
    /// scenario).
    #[test]
    fn resource_distribution_reviews(
        body in prop_oneof![
            body(admission_review(("apps.kruise.io", "v1alpha1", "ResourceDistribution"), "CREATE",
                &resource_distribution("apps.kruise.io/v1alpha1", "namespaceLabelSelector"), &Value::Null)),
            body(admission_review(("apps.kruise.io", "v1beta1", "ResourceDistribution"), "UPDATE",
                &resource_distribution("apps.kruise.io/v1beta1", "namespaceSelector"),
                &resource_distribution("apps.kruise.io/v1beta1", "namespaceSelector"))),
        ],
    ) {
        use crate::webhook::resource_distribution::{Judgement, judge};
        if let Ok(request) = admission::parse_request(&body) {
            let response = match judge(&request) {
                Judgement::Answer(response) => response,
                Judgement::Conflicts(pending) => pending.finish(Ok(vec!["web".to_owned()])),
            };
            prop_assert!(response.allowed || !response.result.message.is_empty());
        }
    }

    #[test]
    fn feature_gate_flags(text in prop_oneof![
        any::<String>(),
        prop::collection::vec((
            select(&["KruisePodReadinessGate", "PreDownloadImageForInPlaceUpdate", "SidecarSetPatchPodMetadataDefaultsAllowed",
                "InPlaceWorkloadVerticalScaling", "Unknown"][..]),
            select(&["true", "false", "1", "0", "yes", ""][..]),
        ), 0..4)
            .prop_map(|entries| entries.iter().map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>().join(","))
            .prop_flat_map(edited),
    ]) {
        if let Err(message) = crate::options::parse_feature_gates(&text) {
            prop_assert!(message.contains("feature gate"), "{}", message);
        }
        if let Err(error) = text.parse::<crate::cloneset::gates::CloneSetGates>() {
            prop_assert!(!error.to_string().is_empty());
        }
    }
}
