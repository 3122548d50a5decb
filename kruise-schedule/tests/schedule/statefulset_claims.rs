//! Volume claim templates: claim names `<template>-<pod>`, missing claims created before the pod, and
//! `persistentVolumeClaimRetentionPolicy` owner references (gate `StatefulSetAutoDeletePVC`).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::asts;

use crate::support::asts::{phase, pod, run_with, summary};
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kruise_schedule::statefulset::{ActionKind, Error, Options, SpecificKind, Wait};
use serde_json::{Value, json};

fn set_with_claims(extra: Value) -> kruise_api::apps::v1beta1::StatefulSet {
    let mut spec = json!({
        "replicas": 2, "podManagementPolicy": "Parallel",
        "volumeClaimTemplates": [{"metadata": {"name": "data", "labels": {"x": "y"}}, "spec": {"accessModes": ["ReadWriteOnce"]}}],
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            spec[k] = v;
        }
    }
    asts::set(spec)
}

fn claim(name: &str, owners: &Value) -> PersistentVolumeClaim {
    serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": "default", "ownerReferences": owners}}),
    )
    .unwrap()
}

#[test]
fn missing_claims_are_created_before_their_pod() {
    let set = set_with_claims(json!({}));
    let claims = vec![claim("data-web-0", &json!([]))];
    let plan = run_with(&set, &[], &claims, &Options::default());
    assert_eq!(
        summary(&plan, &[], &claims),
        ["create web-0@r2", "claim data-web-1", "create web-1@r2"]
    );
    let ActionKind::CreateClaim { claim } = &plan.actions[1].kind else {
        panic!()
    };
    // Labels are the selector's matchLabels (not the template's), namespace the set's.
    assert_eq!(
        claim.metadata.labels.as_ref().unwrap(),
        &[("app".to_owned(), "web".to_owned())].into()
    );
    assert_eq!(claim.metadata.namespace.as_deref(), Some("default"));
    let ActionKind::CreatePod { pod, .. } = &plan.actions[2].kind else {
        panic!()
    };
    let volume = &pod.spec.as_ref().unwrap().volumes.as_ref().unwrap()[0];
    assert_eq!(volume.name, "data");
    assert_eq!(
        volume.persistent_volume_claim.as_ref().unwrap().claim_name,
        "data-web-1"
    );
}

#[test]
fn a_pending_pod_gets_its_missing_claim() {
    let set = set_with_claims(json!({"replicas": 1}));
    let mut p = phase(pod("web-0", "r2"), "Pending");
    p.spec.as_mut().unwrap().volumes = Some(vec![
        serde_json::from_value(
            json!({"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}),
        )
        .unwrap(),
    ]);
    let pods = vec![p];
    let plan = run_with(&set, &pods, &[], &Options::default());
    assert_eq!(summary(&plan, &pods, &[]), ["claim data-web-0"]);
}

#[test]
fn a_terminating_claim_stops_the_pass() {
    let set = set_with_claims(json!({"replicas": 1}));
    let mut terminating = claim("data-web-0", &json!([]));
    terminating.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(asts::NOW.parse().unwrap()),
    );
    let claims = vec![terminating];
    let plan = run_with(&set, &[], &claims, &Options::default());
    assert!(plan.actions.is_empty());
    assert!(matches!(plan.stopped, Some(Error::ClaimTerminating { .. })));
}

#[test]
fn retention_policy_owner_references() {
    let set = set_with_claims(json!({
        "replicas": 1,
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Delete"},
    }));
    let mut p0 = pod("web-0", "r2");
    p0.spec.as_mut().unwrap().volumes = Some(vec![
        serde_json::from_value(
            json!({"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}),
        )
        .unwrap(),
    ]);
    let mut p1 = pod("web-1", "r2");
    p1.spec = p0.spec.clone();
    p1.spec.as_mut().unwrap().volumes.as_mut().unwrap()[0]
        .persistent_volume_claim
        .as_mut()
        .unwrap()
        .claim_name = "data-web-1".into();
    let pods = vec![p0, p1];
    let claims = vec![
        claim("data-web-0", &json!([])),
        claim(
            "data-web-1",
            &json!([{"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web", "uid": "set-uid"}]),
        ),
    ];
    let plan = run_with(&set, &pods, &claims, &Options::default());
    assert_eq!(
        summary(&plan, &pods, &claims),
        ["owners data-web-0", "owners data-web-1", "delete web-1"]
    );
    let ActionKind::Specific(SpecificKind::UpdateClaimOwners {
        owner_references, ..
    }) = &plan.actions[0].kind
    else {
        panic!()
    };
    assert_eq!(
        owner_references
            .iter()
            .map(|o| o.uid.as_str())
            .collect::<Vec<_>>(),
        ["set-uid"]
    );
    let ActionKind::Specific(SpecificKind::UpdateClaimOwners {
        owner_references, ..
    }) = &plan.actions[1].kind
    else {
        panic!()
    };
    assert_eq!(
        owner_references
            .iter()
            .map(|o| o.uid.as_str())
            .collect::<Vec<_>>(),
        ["uid-web-1"],
        "scaled down: the pod owns it"
    );
    // Gate off: no owner changes.
    let options = Options::default()
        .with_feature_gates("StatefulSetAutoDeletePVC=false")
        .unwrap();
    let plan = run_with(&set, &pods, &claims, &options);
    assert_eq!(summary(&plan, &pods, &claims), ["delete web-1"]);
    // Retain/Retain: owners removed.
    let retain = set_with_claims(json!({"replicas": 2}));
    let plan = run_with(&retain, &pods, &claims, &Options::default());
    assert_eq!(summary(&plan, &pods, &claims), ["owners data-web-1"]);
}

#[test]
fn a_stale_claim_blocks_creation() {
    let set = set_with_claims(
        json!({"replicas": 1, "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete"}}),
    );
    let claims = vec![claim(
        "data-web-0",
        &json!([{"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": "old-uid"}]),
    )];
    let plan = run_with(&set, &[], &claims, &Options::default());
    assert!(plan.actions.is_empty());
    assert_eq!(
        plan.waiting,
        Some(Wait::StaleClaim {
            pod: "web-0".into(),
            claim: "data-web-0".into()
        })
    );
}
