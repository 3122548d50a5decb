//! `ContainerRecreateRequest` v1alpha1 ⇄ v1beta1 (upstream
//! `apis/apps/v1alpha1/containerrecreaterequest_conversion.go`).
//!
//! * The annotation `crr.apps.kruise.io/sync-container-statuses` (a JSON list of
//!   [`ContainerStatusSnapshot`]) ⇒ `status.containerStatusSnapshot`, when it parses to a non-empty list.
//! * The annotation `crr.apps.kruise.io/unready-acquired` (an RFC 3339 time) ⇒ a `PreRecreateGrace`
//!   condition (status `True`, reason `PreRecreateGrace`) whose `lastTransitionTime` is that time, when it
//!   parses.
//! * Everything else has the same name and shape in both versions.
//!
//! As upstream, the annotations stay on the v1beta1 object (its metadata is copied unchanged), so a value
//! that does not parse is never lost. Back, a snapshot or condition overwrites its annotation only when the
//! annotation does not already say the same (same list; same instant to the second), so the annotation's
//! original text survives the round trip. Both annotations are read only when the v1alpha1 object has a
//! status (Go objects always have one, if only `{phase: ""}`); without one they stay mere annotations.
//!
//! v1beta1 → v1alpha1: conditions other than a `True` `PreRecreateGrace` one, and the reason and message of
//! that one, have no v1alpha1 form and are dropped.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use super::{HubConversion, hub_conversion};
use crate::annotations::{self, ContainerStatusSnapshot};
use crate::apps::{v1alpha1, v1beta1};
use crate::keys;

impl HubConversion for v1alpha1::ContainerRecreateRequest {
    type Hub = v1beta1::ContainerRecreateRequest;

    fn to_hub_fields(&self) -> v1beta1::ContainerRecreateRequest {
        let spec = &self.spec;
        let annotations = self.metadata.annotations.as_ref();
        let status = self
            .status
            .as_ref()
            .map(|status| v1beta1::ContainerRecreateRequestStatus {
                phase: status.phase.clone(),
                completion_time: status.completion_time.clone(),
                message: status.message.clone(),
                container_recreate_states: status.container_recreate_states.clone(),
                conditions: unready_acquired(annotations)
                    .map(pre_recreate_grace)
                    .into_iter()
                    .collect(),
                container_status_snapshot: synced_statuses(annotations).unwrap_or_default(),
            });
        v1beta1::ContainerRecreateRequest {
            metadata: self.metadata.clone(),
            spec: v1beta1::ContainerRecreateRequestSpec {
                pod_name: spec.pod_name.clone(),
                containers: spec.containers.clone(),
                strategy: spec.strategy.clone(),
                active_deadline_seconds: spec.active_deadline_seconds,
                ttl_seconds_after_finished: spec.ttl_seconds_after_finished,
            },
            status,
        }
    }

    fn from_hub_fields(hub: &v1beta1::ContainerRecreateRequest) -> Self {
        let spec = &hub.spec;
        let mut metadata = hub.metadata.clone();
        if let Some(status) = &hub.status {
            let annotations = metadata.annotations.as_ref();
            let snapshot = &status.container_status_snapshot;
            if !snapshot.is_empty() && synced_statuses(annotations).as_ref() != Some(snapshot) {
                metadata
                    .annotations
                    .get_or_insert_with(BTreeMap::new)
                    .insert(
                        keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION.to_owned(),
                        annotations::to_value(snapshot),
                    );
            }
            let annotations = metadata.annotations.as_ref();
            let grace_started = status
                .conditions
                .iter()
                .find(|condition| {
                    condition.type_ == keys::crr::PRE_RECREATE_GRACE_CONDITION
                        && condition.status == "True"
                })
                .and_then(|condition| format_time(&condition.last_transition_time));
            if let Some(grace_started) = grace_started
                && unready_acquired(annotations)
                    .as_ref()
                    .and_then(format_time)
                    .as_ref()
                    != Some(&grace_started)
            {
                metadata
                    .annotations
                    .get_or_insert_with(BTreeMap::new)
                    .insert(keys::crr::UNREADY_ACQUIRED_KEY.to_owned(), grace_started);
            }
        }
        v1alpha1::ContainerRecreateRequest {
            metadata,
            spec: v1alpha1::ContainerRecreateRequestSpec {
                pod_name: spec.pod_name.clone(),
                containers: spec.containers.clone(),
                strategy: spec.strategy.clone(),
                active_deadline_seconds: spec.active_deadline_seconds,
                ttl_seconds_after_finished: spec.ttl_seconds_after_finished,
            },
            status: hub
                .status
                .as_ref()
                .map(|status| v1alpha1::ContainerRecreateRequestStatus {
                    phase: status.phase.clone(),
                    completion_time: status.completion_time.clone(),
                    message: status.message.clone(),
                    container_recreate_states: status.container_recreate_states.clone(),
                }),
        }
    }
}

hub_conversion!(v1alpha1::ContainerRecreateRequest => v1beta1::ContainerRecreateRequest);

/// The container statuses of the sync annotation, when it is a non-empty JSON list of snapshots.
fn synced_statuses(
    annotations: Option<&BTreeMap<String, String>>,
) -> Option<Vec<ContainerStatusSnapshot>> {
    let raw = annotations?.get(keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION)?;
    annotations::parse::<Vec<ContainerStatusSnapshot>>(
        keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION,
        raw,
    )
    .ok()
    .filter(|statuses| !statuses.is_empty())
}

/// The time of the unready-acquired annotation, when it is an RFC 3339 time.
fn unready_acquired(annotations: Option<&BTreeMap<String, String>>) -> Option<Time> {
    let raw = annotations?.get(keys::crr::UNREADY_ACQUIRED_KEY)?;
    serde_json::from_value(serde_json::Value::String(raw.clone())).ok()
}

/// A time as `metav1.Time` writes it: RFC 3339 in UTC, to the second.
fn format_time(time: &Time) -> Option<String> {
    match serde_json::to_value(time) {
        Ok(serde_json::Value::String(text)) => Some(text),
        _ => None,
    }
}

/// The condition that records when the pod was made not-ready before the recreation.
fn pre_recreate_grace(since: Time) -> Condition {
    Condition {
        type_: keys::crr::PRE_RECREATE_GRACE_CONDITION.to_owned(),
        status: "True".to_owned(),
        reason: keys::crr::PRE_RECREATE_GRACE_CONDITION.to_owned(),
        message: String::new(),
        last_transition_time: since,
        observed_generation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    const BASE: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata:
  name: crr-demo
  namespace: default
spec:
  podName: pod-a
  containers: [{name: app}, {name: sidecar}]
  strategy: {failurePolicy: Fail, orderedRecreate: true, unreadyGracePeriodSeconds: 3}
status:
  phase: Recreating
  containerRecreateStates: [{name: app, phase: Recreating, isKilled: true}, {name: sidecar, phase: Pending}]
";

    fn with_annotations(pairs: &[(&str, &str)]) -> v1alpha1::ContainerRecreateRequest {
        let mut crr: v1alpha1::ContainerRecreateRequest = serde_saphyr::from_str(BASE).unwrap();
        crr.metadata.annotations = Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        crr
    }

    fn round_trip(alpha: &v1alpha1::ContainerRecreateRequest) -> v1beta1::ContainerRecreateRequest {
        let beta = v1beta1::ContainerRecreateRequest::from(alpha);
        assert_eq!(
            &v1alpha1::ContainerRecreateRequest::from(&beta),
            alpha,
            "round trip"
        );
        let stashed = beta
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(STASH_ANNOTATION));
        assert!(!stashed, "{:?}", beta.metadata.annotations);
        beta
    }

    const SYNCED: &str = r#"[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://b2"},{"name":"sidecar","ready":false,"restartCount":0}]"#;

    #[test]
    fn sync_container_statuses_become_the_snapshot() {
        let beta = round_trip(&with_annotations(&[(
            keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION,
            SYNCED,
        )]));
        let snapshot = &beta.status.as_ref().unwrap().container_status_snapshot;
        assert_eq!(snapshot.len(), 2);
        assert_eq!(snapshot[0].container_id, "containerd://b2");
        assert!(snapshot[0].ready);
        assert_eq!(snapshot[1].restart_count, 0);
    }

    #[test]
    fn unparsable_or_unusual_snapshots_are_kept_verbatim() {
        for raw in [
            "not json",
            "[]",
            "null",
            r#"[ {"restartCount": 2, "name": "app"} ]"#,
            "",
        ] {
            let beta = round_trip(&with_annotations(&[(
                keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION,
                raw,
            )]));
            assert_eq!(
                beta.metadata.annotations.as_ref().unwrap()
                    [keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION],
                raw
            );
        }
    }

    #[test]
    fn unready_acquired_becomes_the_pre_recreate_grace_condition() {
        let beta = round_trip(&with_annotations(&[(
            keys::crr::UNREADY_ACQUIRED_KEY,
            "2024-05-01T10:00:00Z",
        )]));
        let conditions = &beta.status.as_ref().unwrap().conditions;
        assert_eq!(conditions.len(), 1);
        let condition = &conditions[0];
        assert_eq!(condition.type_, "PreRecreateGrace");
        assert_eq!(condition.status, "True");
        assert_eq!(condition.reason, "PreRecreateGrace");
        assert_eq!(
            format_time(&condition.last_transition_time).as_deref(),
            Some("2024-05-01T10:00:00Z")
        );
        for raw in ["2024-05-01T18:00:00+08:00", "2024-05-01T10:00:00.25Z"] {
            let beta = round_trip(&with_annotations(&[(keys::crr::UNREADY_ACQUIRED_KEY, raw)]));
            assert_eq!(beta.status.as_ref().unwrap().conditions.len(), 1, "{raw}");
        }
        for raw in ["yesterday", ""] {
            let beta = round_trip(&with_annotations(&[(keys::crr::UNREADY_ACQUIRED_KEY, raw)]));
            assert!(beta.status.as_ref().unwrap().conditions.is_empty(), "{raw}");
        }
    }

    #[test]
    fn v1beta1_status_becomes_annotations() {
        let beta: v1beta1::ContainerRecreateRequest = serde_saphyr::from_str(&format!(
            "{}  conditions:
  - {{type: PreRecreateGrace, status: 'True', reason: PreRecreateGrace, message: '', lastTransitionTime: '2024-05-01T10:00:00Z'}}
  - {{type: Other, status: 'True', reason: X, message: '', lastTransitionTime: '2024-05-01T11:00:00Z'}}
  containerStatusSnapshot: [{{name: app, ready: true, restartCount: 1, containerID: 'containerd://b2'}}]
",
            BASE.replace("v1alpha1", "v1beta1")
        ))
        .unwrap();
        let alpha = v1alpha1::ContainerRecreateRequest::from(&beta);
        let annotations = alpha.metadata.annotations.unwrap();
        assert_eq!(
            annotations[keys::crr::UNREADY_ACQUIRED_KEY],
            "2024-05-01T10:00:00Z"
        );
        assert_eq!(
            annotations[keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION],
            r#"[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://b2"}]"#
        );
    }

    #[test]
    fn a_stale_annotation_is_overwritten_by_the_v1beta1_status() {
        let alpha = with_annotations(&[
            (keys::crr::UNREADY_ACQUIRED_KEY, "2024-05-01T10:00:00Z"),
            (keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION, SYNCED),
        ]);
        let mut beta = v1beta1::ContainerRecreateRequest::from(&alpha);
        let status = beta.status.as_mut().unwrap();
        status.container_status_snapshot.truncate(1);
        status.conditions[0].last_transition_time =
            serde_json::from_str("\"2024-05-01T10:05:00Z\"").unwrap();
        let back = v1alpha1::ContainerRecreateRequest::from(&beta);
        let annotations = back.metadata.annotations.unwrap();
        assert_eq!(
            annotations[keys::crr::UNREADY_ACQUIRED_KEY],
            "2024-05-01T10:05:00Z"
        );
        assert_eq!(
            annotations[keys::crr::SYNC_CONTAINER_STATUSES_ANNOTATION],
            r#"[{"name":"app","ready":true,"restartCount":1,"containerID":"containerd://b2"}]"#
        );
    }

    #[test]
    fn spec_is_copied() {
        let alpha: v1alpha1::ContainerRecreateRequest = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata: {name: crr, namespace: default}
spec:
  podName: pod-a
  containers:
  - name: app
    preStop: {httpGet: {path: /quit, port: 8080}}
    ports: [{containerPort: 8080, name: http}]
    statusContext: {containerID: 'containerd://a1', restartCount: 0}
  strategy: {failurePolicy: Ignore, forceRecreate: true, terminationGracePeriodSeconds: 30, minStartedSeconds: 10}
  activeDeadlineSeconds: 300
  ttlSecondsAfterFinished: 1800
",
        )
        .unwrap();
        let beta = round_trip(&alpha);
        assert_eq!(beta.spec.containers, alpha.spec.containers);
        assert_eq!(beta.spec.strategy, alpha.spec.strategy);
        assert_eq!(beta.status, None);
    }
}
