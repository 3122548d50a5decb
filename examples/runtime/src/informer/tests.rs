use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::Event;
use serde_json::json;

use super::{Change, Informer};

fn pod(name: &str, node: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": format!("uid-{name}"),
            "managedFields": [{"manager": "kubectl", "operation": "Update"}]
        },
        "spec": {"nodeName": node, "containers": []}
    }))
    .unwrap()
}

/// A whole-object informer and a packed one: every behaviour is the same.
fn both() -> [Informer<Pod>; 2] {
    [Informer::new("pods"), Informer::packed("pods")]
}

fn list(informer: &Informer<Pod>, pods: Vec<Pod>) {
    informer.apply(Event::Init);
    for pod in pods {
        informer.apply(Event::InitApply(pod));
    }
    informer.apply(Event::InitDone);
}

fn by_node(informer: &Informer<Pod>) -> super::Indexed<Pod> {
    informer.index(
        "node",
        Arc::new(|pod: &Pod| {
            pod.spec
                .iter()
                .filter_map(|s| s.node_name.clone())
                .collect()
        }),
    )
}

fn names(pods: &[Arc<Pod>]) -> Vec<String> {
    let mut names: Vec<String> = pods
        .iter()
        .filter_map(|pod| pod.metadata.name.clone())
        .collect();
    names.sort();
    names
}

/// Takes what the subscription has buffered, without waiting.
fn drain(changes: &mut (impl futures::Stream<Item = Change<Pod>> + Unpin)) -> Vec<(bool, String)> {
    let mut seen = Vec::new();
    while let Some(Some(change)) = changes.next().now_or_never() {
        let name = match change.object() {
            Some(object) => object.metadata.name.clone().unwrap_or_default(),
            None => "(listed)".into(),
        };
        seen.push((change.is_deleted(), name));
    }
    seen
}

use futures::FutureExt;

#[test]
fn stored_objects_have_no_managed_fields_and_are_found_by_index() {
    for informer in both() {
        let index = by_node(&informer);
        list(
            &informer,
            vec![pod("a", "n1"), pod("b", "n1"), pod("c", "n2")],
        );
        assert!(informer.is_synced());
        assert_eq!(names(&index.get("n1")), ["a", "b"]);
        assert_eq!(index.count("n2"), 1);
        assert!(index.get("n3").is_empty());
        assert_eq!(informer.len(), 3);
        assert!(
            index
                .get("n1")
                .iter()
                .all(|pod| pod.metadata.managed_fields.is_none())
        );
    }
}

#[test]
fn an_index_added_late_is_built_from_the_store() {
    for informer in both() {
        list(&informer, vec![pod("a", "n1"), pod("c", "n2")]);
        assert_eq!(names(&by_node(&informer).get("n2")), ["c"]);
    }
}

#[test]
fn indexes_follow_changes_and_deletes() {
    for informer in both() {
        let index = by_node(&informer);
        list(&informer, vec![pod("a", "n1")]);
        informer.apply(Event::Apply(pod("a", "n2")));
        assert!(index.get("n1").is_empty());
        assert_eq!(names(&index.get("n2")), ["a"]);
        informer.apply(Event::Delete(pod("a", "n2")));
        assert!(index.get("n2").is_empty());
        assert!(informer.is_empty());
    }
}

#[test]
fn a_late_subscriber_sees_every_stored_object_then_every_change() {
    for informer in both() {
        list(&informer, vec![pod("a", "n1"), pod("b", "n1")]);
        let mut changes = Box::pin(informer.subscribe());
        let mut first = drain(&mut changes);
        assert_eq!(first.pop(), Some((false, "(listed)".into())));
        first.sort();
        assert_eq!(first, [(false, "a".into()), (false, "b".into())]);
        informer.apply(Event::Apply(pod("c", "n1")));
        informer.apply(Event::Delete(pod("a", "n1")));
        assert_eq!(
            drain(&mut changes),
            [(false, "c".into()), (true, "a".into())]
        );
    }
}

#[test]
fn a_relist_tells_the_objects_that_vanished_as_deleted() {
    for informer in both() {
        let index = by_node(&informer);
        list(&informer, vec![pod("a", "n1"), pod("b", "n1")]);
        let mut changes = Box::pin(informer.subscribe());
        drain(&mut changes);
        // The watch restarted; "a" was deleted while it was down.
        list(&informer, vec![pod("b", "n1")]);
        let seen = drain(&mut changes);
        assert_eq!(
            seen,
            [
                (false, "b".into()),
                (true, "a".into()),
                (false, "(listed)".into())
            ]
        );
        assert_eq!(names(&index.get("n1")), ["b"]);
    }
}

#[test]
fn every_subscriber_gets_every_change_and_dropped_ones_are_forgotten() {
    for informer in both() {
        list(&informer, Vec::new());
        let mut one = Box::pin(informer.subscribe());
        assert_eq!(drain(&mut one), [(false, "(listed)".into())]);
        let two = informer.subscribe();
        assert_eq!(informer.subscribers(), 2);
        drop(two);
        informer.apply(Event::Apply(pod("a", "n1")));
        assert_eq!(drain(&mut one), [(false, "a".into())]);
        assert_eq!(informer.subscribers(), 1);
    }
}

#[test]
fn deleted_objects_are_told_with_their_last_copy() {
    for informer in both() {
        list(&informer, vec![pod("a", "n1")]);
        let mut changes = Box::pin(informer.subscribe());
        drain(&mut changes);
        informer.apply(Event::Delete(pod("a", "n1")));
        let change = changes.next().now_or_never().flatten().unwrap();
        assert!(change.is_deleted());
        assert!(change.object().unwrap().metadata.managed_fields.is_none());
    }
}

#[test]
fn a_subscriber_before_the_first_list_is_told_when_it_is_complete() {
    for informer in both() {
        let mut changes = Box::pin(informer.subscribe());
        assert!(drain(&mut changes).is_empty());
        list(&informer, vec![pod("a", "n1")]);
        assert_eq!(
            drain(&mut changes),
            [(false, "a".into()), (false, "(listed)".into())]
        );
    }
}

/// Several tasks wait for the first list at once (two controllers sharing an informer): every one of them
/// must wake. kube-runtime's own store readiness wakes only the last waiter; this test fails with it.
#[tokio::test]
async fn every_task_waiting_for_the_first_list_wakes_when_it_is_stored() {
    for informer in both() {
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let informer = informer.clone();
                tokio::spawn(async move {
                    let store = informer.synced_store().await;
                    if informer.is_packed() {
                        informer.len()
                    } else {
                        store.state().len()
                    }
                })
            })
            .collect();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(waiting.iter().all(|task| !task.is_finished()));
        list(&informer, vec![pod("a", "n1")]);
        for task in waiting {
            let stored = tokio::time::timeout(std::time::Duration::from_secs(5), task)
                .await
                .expect("every waiter wakes after the first list")
                .unwrap();
            assert_eq!(stored, 1);
        }
    }
}

#[test]
fn objects_are_found_by_the_uid_of_their_controller() {
    let owned = |name: &str, controller: Option<bool>| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "job", "uid": "job-uid",
                 "controller": controller}
            ]}
        }))
        .unwrap()
    };
    for informer in both() {
        let by_controller =
            informer.index("controller-uid", Arc::new(super::controller_uid::<Pod>));
        list(
            &informer,
            vec![
                owned("a", Some(true)),
                owned("b", Some(false)),
                owned("c", None),
            ],
        );
        assert_eq!(names(&by_controller.get("job-uid")), ["a"]);
    }
}

/// An injected pod of the SidecarSet measurement: six containers and an init container with env, probes,
/// resources and mounts, five volumes.
fn injected_pod(name: &str) -> Pod {
    let container = |index: usize| {
        json!({"name": format!("c{index}"), "image": format!("registry.example.com/app-{index}:1.0"),
            "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                {"name": "REGION", "value": "eu-1"}, {"name": "LOG_LEVEL", "value": "info"}],
            "ports": [{"containerPort": 8080 + index, "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080 + index, "scheme": "HTTP"},
                "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
            "volumeMounts": [{"name": format!("data{index}"), "mountPath": format!("/data/{index}")},
                {"name": "kube-api-access", "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]})
    };
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "resourceVersion": "12",
            "labels": {"app": "bench", "tier": "backend", "version": "v1"},
            "annotations": {"kruise.io/sidecarset-injected-list": "log-agent,mesh"}},
        "spec": {
            "initContainers": [container(9)],
            "containers": (0..6).map(container).collect::<Vec<_>>(),
            "volumes": [{"name": "data0", "emptyDir": {}}, {"name": "data1", "emptyDir": {}},
                {"name": "data2", "emptyDir": {}}, {"name": "agent-conf", "configMap": {"name": "agent-conf"}},
                {"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}],
            "nodeName": "node-a"},
        "status": {"phase": "Pending", "qosClass": "Burstable"}
    }))
    .unwrap()
}

#[test]
fn a_packed_informer_hands_out_the_pods_it_was_given() {
    let informer = Informer::<Pod>::packed("pods");
    let index = by_node(&informer);
    list(&informer, vec![injected_pod("a"), pod("b", "n1")]);
    informer.apply(Event::Apply(injected_pod("c")));
    assert!(informer.is_packed());
    assert!(informer.store().state().is_empty(), "no kube-runtime store");
    assert_eq!(informer.len(), 3);
    assert_eq!(names(&index.get("node-a")), ["a", "c"]);
    let stored = informer
        .get(&ObjectRef::new("a").within("default"))
        .unwrap();
    assert_eq!(*stored, injected_pod("a"));
    assert!(informer.contains(&ObjectRef::new("b").within("default")));
    assert!(!informer.contains(&ObjectRef::new("b").within("other")));
}

#[test]
fn a_held_copy_is_handed_out_again_and_a_dropped_one_is_decoded_anew() {
    let informer = Informer::<Pod>::packed("pods");
    let reference = ObjectRef::new("a").within("default");
    let mut changes = Box::pin(informer.subscribe());
    list(&informer, vec![injected_pod("a")]);
    let told = changes.next().now_or_never().flatten().unwrap();
    let first = informer.get(&reference).unwrap();
    assert!(
        Arc::ptr_eq(&first, told.object().unwrap()),
        "the told copy is the stored one"
    );
    drop(told);
    drop(changes);
    let again = informer.get(&reference).unwrap();
    assert!(Arc::ptr_eq(&first, &again), "held: not decoded again");
    drop((first, again));
    let decoded = informer.get(&reference).unwrap();
    assert_eq!(*decoded, injected_pod("a"));
}

#[test]
fn a_packed_pod_takes_a_fraction_of_its_struct_form() {
    let informer = Informer::<Pod>::packed("pods");
    list(&informer, vec![injected_pod("a")]);
    let packed = informer.shared.packed.as_ref().unwrap().packed_bytes();
    // The structs alone (before any string or map data): the pod, 7 containers, 5 volumes, 21 env vars.
    let structs = std::mem::size_of::<Pod>()
        + 7 * std::mem::size_of::<k8s_openapi::api::core::v1::Container>()
        + 5 * std::mem::size_of::<k8s_openapi::api::core::v1::Volume>()
        + 21 * std::mem::size_of::<k8s_openapi::api::core::v1::EnvVar>();
    assert!(
        packed * 4 < structs,
        "packed {packed} bytes, structs {structs} bytes"
    );
}

#[test]
fn a_filtered_store_holds_the_objects_that_pass() {
    for informer in both() {
        let (store, stream) = informer.applied_where(|pod: &Pod| {
            pod.spec.as_ref().and_then(|spec| spec.node_name.as_deref()) == Some("n1")
        });
        let mut stream = Box::pin(stream);
        list(&informer, vec![pod("a", "n1"), pod("b", "n2")]);
        let passed = stream.next().now_or_never().flatten().unwrap();
        assert_eq!(passed.metadata.name.as_deref(), Some("a"));
        assert!(stream.next().now_or_never().is_none(), "b does not pass");
        assert!(store.get(&ObjectRef::new("a").within("default")).is_some());
        assert_eq!(store.state().len(), 1);
        informer.apply(Event::Apply(pod("a", "n2")));
        assert!(stream.next().now_or_never().is_none());
        assert!(store.state().is_empty(), "a no longer passes");
        informer.apply(Event::Apply(pod("b", "n1")));
        assert!(stream.next().now_or_never().flatten().is_some());
        informer.apply(Event::Delete(pod("b", "n1")));
        assert!(stream.next().now_or_never().is_none());
        assert!(store.state().is_empty(), "b is deleted");
    }
}

#[test]
fn versions_are_listed_without_decoding() {
    for informer in both() {
        let index = by_node(&informer);
        let versioned = |name: &str, version: &str| {
            let mut pod = pod(name, "n1");
            pod.metadata.resource_version = Some(version.to_owned());
            pod
        };
        list(&informer, vec![versioned("a", "1"), pod("b", "n1")]);
        informer.apply(Event::Apply(versioned("a", "7")));
        let mut versions: Vec<(String, String)> = index
            .versions("n1")
            .into_iter()
            .map(|(reference, version)| (reference.name, version))
            .collect();
        versions.sort();
        assert_eq!(
            versions,
            [
                ("a".to_owned(), "7".to_owned()),
                ("b".to_owned(), String::new())
            ]
        );
        assert_eq!(
            informer.version(&ObjectRef::new("a").within("default")),
            Some("7".to_owned())
        );
        assert_eq!(informer.version(&ObjectRef::new("a").within("other")), None);
        assert!(index.versions("n2").is_empty());
        if informer.is_packed() {
            // Nothing was handed out: the next lookup decodes (a fresh `Arc`, not one kept by `versions`).
            let first = informer
                .get(&ObjectRef::new("a").within("default"))
                .unwrap();
            assert_eq!(Arc::strong_count(&first), 1);
        }
    }
}
