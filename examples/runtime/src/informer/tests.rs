use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
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
    let informer = Informer::<Pod>::new("pods");
    let index = by_node(&informer);
    list(
        &informer,
        vec![pod("a", "n1"), pod("b", "n1"), pod("c", "n2")],
    );
    assert!(informer.is_synced());
    assert_eq!(names(&index.get("n1")), ["a", "b"]);
    assert_eq!(index.count("n2"), 1);
    assert!(index.get("n3").is_empty());
    assert!(
        informer
            .store()
            .state()
            .iter()
            .all(|pod| pod.metadata.managed_fields.is_none())
    );
}

#[test]
fn an_index_added_late_is_built_from_the_store() {
    let informer = Informer::<Pod>::new("pods");
    list(&informer, vec![pod("a", "n1"), pod("c", "n2")]);
    assert_eq!(names(&by_node(&informer).get("n2")), ["c"]);
}

#[test]
fn indexes_follow_changes_and_deletes() {
    let informer = Informer::<Pod>::new("pods");
    let index = by_node(&informer);
    list(&informer, vec![pod("a", "n1")]);
    informer.apply(Event::Apply(pod("a", "n2")));
    assert!(index.get("n1").is_empty());
    assert_eq!(names(&index.get("n2")), ["a"]);
    informer.apply(Event::Delete(pod("a", "n2")));
    assert!(index.get("n2").is_empty());
    assert!(informer.store().state().is_empty());
}

#[test]
fn a_late_subscriber_sees_every_stored_object_then_every_change() {
    let informer = Informer::<Pod>::new("pods");
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

#[test]
fn a_relist_tells_the_objects_that_vanished_as_deleted() {
    let informer = Informer::<Pod>::new("pods");
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

#[test]
fn every_subscriber_gets_every_change_and_dropped_ones_are_forgotten() {
    let informer = Informer::<Pod>::new("pods");
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

#[test]
fn deleted_objects_are_told_with_their_last_copy() {
    let informer = Informer::<Pod>::new("pods");
    list(&informer, vec![pod("a", "n1")]);
    let mut changes = Box::pin(informer.subscribe());
    drain(&mut changes);
    informer.apply(Event::Delete(pod("a", "n1")));
    let change = changes.next().now_or_never().flatten().unwrap();
    assert!(change.is_deleted());
    assert!(change.object().unwrap().metadata.managed_fields.is_none());
}

#[test]
fn a_subscriber_before_the_first_list_is_told_when_it_is_complete() {
    let informer = Informer::<Pod>::new("pods");
    let mut changes = Box::pin(informer.subscribe());
    assert!(drain(&mut changes).is_empty());
    list(&informer, vec![pod("a", "n1")]);
    assert_eq!(
        drain(&mut changes),
        [(false, "a".into()), (false, "(listed)".into())]
    );
}

/// Several tasks wait for the first list at once (two controllers sharing an informer): every one of them
/// must wake. kube-runtime's own store readiness wakes only the last waiter; this test fails with it.
#[tokio::test]
async fn every_task_waiting_for_the_first_list_wakes_when_it_is_stored() {
    let informer = Informer::<Pod>::new("pods");
    let waiting: Vec<_> = (0..3)
        .map(|_| {
            let informer = informer.clone();
            tokio::spawn(async move { informer.synced_store().await.state().len() })
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
    let informer = Informer::<Pod>::new("pods");
    let by_controller = informer.index("controller-uid", Arc::new(super::controller_uid::<Pod>));
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
