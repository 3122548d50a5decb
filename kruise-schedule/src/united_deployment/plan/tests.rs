use serde_json::{Value, json};

use super::*;
use crate::united_deployment::status::condition;

fn time(seconds: i64) -> Time {
    Time(k8s_openapi::jiff::Timestamp::from_second(seconds).unwrap())
}

fn ud(subsets: &Value, extra: Value) -> UnitedDeployment {
    let mut value = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "ns", "uid": "ud-uid", "generation": 1},
        "spec": {
            "replicas": 6,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"cloneSetTemplate": {"spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "main", "image": "nginx:1"}]}}}}},
            "topology": {"subsets": subsets}
        }
    });
    if let (Some(spec), Value::Object(extra)) = (value["spec"].as_object_mut(), extra) {
        spec.extend(extra);
    }
    serde_json::from_value(value).unwrap()
}

fn three_subsets() -> Value {
    json!([{"name": "a", "replicas": 1}, {"name": "b", "replicas": "50%"}, {"name": "c"}])
}

/// A CloneSet as the API server would hold it after creating `desired` under `name`.
fn existing(desired: &SubsetWorkload, name: &str, created: i64) -> SubsetWorkload {
    let mut workload = desired.clone();
    let metadata = workload.metadata_mut();
    metadata.name = Some(name.to_owned());
    metadata.generate_name = None;
    metadata.resource_version = Some("7".to_owned());
    metadata.creation_timestamp = Some(time(created));
    workload
}

fn cloneset(workload: &SubsetWorkload) -> &kruise_api::apps::v1beta1::CloneSet {
    match workload {
        SubsetWorkload::CloneSet(set) => set,
        other => panic!("not a CloneSet: {other:?}"),
    }
}

fn first_plan(ud: &UnitedDeployment) -> Plan {
    plan(&PlanInput {
        united_deployment: ud,
        workloads: &[],
        update_revision: "web-r1",
        collision_count: 0,
        pods: &BTreeMap::new(),
        now: &time(10),
    })
    .unwrap()
}

#[test]
fn a_new_united_deployment_creates_one_workload_per_subset() {
    let ud = ud(&three_subsets(), json!({}));
    let plan = first_plan(&ud);
    let replicas: Vec<_> = plan
        .create
        .iter()
        .map(|w| {
            (
                w.observe().subset.unwrap(),
                cloneset(w).spec.replicas.unwrap(),
            )
        })
        .collect();
    assert_eq!(
        replicas,
        [("a".into(), 1), ("b".into(), 3), ("c".into(), 2)]
    );
    assert!(plan.update.is_empty() && plan.delete.is_empty());
    let provisioned = condition(
        &plan.status,
        &UnitedDeploymentConditionType::SubsetProvisioned,
    )
    .unwrap();
    assert_eq!(provisioned.status, "True");
    let statuses: Vec<_> = plan
        .status
        .subset_statuses
        .iter()
        .map(|s| s.replicas)
        .collect();
    assert_eq!(statuses, [1, 3, 2]);
}

#[test]
fn only_workloads_that_differ_are_updated() {
    let before = ud(&three_subsets(), json!({}));
    let created = first_plan(&before).create;
    let workloads: Vec<_> = created
        .iter()
        .enumerate()
        .map(|(i, w)| existing(w, &format!("web-{i}"), 1))
        .collect();
    // Nothing changed: nothing to do, and no SubsetProvisioned.
    let same = plan(&PlanInput {
        united_deployment: &before,
        workloads: &workloads,
        update_revision: "web-r1",
        collision_count: 0,
        pods: &BTreeMap::new(),
        now: &time(20),
    })
    .unwrap();
    assert!(same.create.is_empty() && same.update.is_empty() && same.delete.is_empty());
    assert!(!same.settled, "no workload has reported a status yet");
    assert!(
        condition(
            &same.status,
            &UnitedDeploymentConditionType::SubsetProvisioned
        )
        .is_none()
    );
    // Scaled to 10 and a partition for `c`: b (50%) and c are rewritten, a (fixed 1) is not.
    let scaled = ud(
        &three_subsets(),
        json!({"replicas": 10, "updateStrategy": {"manualUpdate": {"partitions": {"c": 2}}}}),
    );
    let rescaled = plan(&PlanInput {
        united_deployment: &scaled,
        workloads: &workloads,
        update_revision: "web-r1",
        collision_count: 0,
        pods: &BTreeMap::new(),
        now: &time(20),
    })
    .unwrap();
    let names: Vec<_> = rescaled
        .update
        .iter()
        .map(SubsetWorkload::observe)
        .collect();
    let summary: Vec<_> = names
        .iter()
        .map(|o| (o.name.as_str(), o.replicas, o.partition))
        .collect();
    assert_eq!(summary, [("web-1", 5, 0), ("web-2", 4, 2)]);
    assert_eq!(
        rescaled.update[0].metadata().resource_version.as_deref(),
        Some("7"),
        "an update replaces the observed object"
    );
    // A new revision rewrites every subset.
    let revised = plan(&PlanInput {
        united_deployment: &before,
        workloads: &workloads,
        update_revision: "web-r2",
        collision_count: 0,
        pods: &BTreeMap::new(),
        now: &time(20),
    })
    .unwrap();
    assert_eq!(revised.update.len(), 3);
    assert!(
        revised
            .update
            .iter()
            .all(|w| w.observe().revision == "web-r2")
    );
}

#[test]
fn other_kinds_duplicates_and_removed_subsets_are_deleted() {
    let full = ud(&three_subsets(), json!({}));
    let created = first_plan(&full).create;
    let mut workloads: Vec<_> = created
        .iter()
        .enumerate()
        .map(|(i, w)| existing(w, &format!("web-{i}"), 5))
        .collect();
    workloads.push(existing(&created[0], "web-a-younger", 9));
    let mut older_twin = existing(&created[1], "web-b-older", 1);
    older_twin.metadata_mut().deletion_timestamp = Some(time(2));
    workloads.push(older_twin);
    let deployment: SubsetWorkload = SubsetWorkload::Deployment(Box::new(
        serde_json::from_value(json!({"metadata": {"name": "web-old-kind",
            "labels": {"apps.kruise.io/subset-name": "a"}},
            "spec": {"selector": {}, "template": {}}}))
        .unwrap(),
    ));
    workloads.push(deployment);
    let shrunk = ud(
        &json!([{"name": "a", "replicas": 1}, {"name": "b"}]),
        json!({}),
    );
    let plan = plan(&PlanInput {
        united_deployment: &shrunk,
        workloads: &workloads,
        update_revision: "web-r1",
        collision_count: 0,
        pods: &BTreeMap::new(),
        now: &time(20),
    })
    .unwrap();
    let deleted: Vec<_> = plan
        .delete
        .iter()
        .map(|d| (d.kind, d.name.as_str()))
        .collect();
    assert_eq!(
        deleted,
        [
            (WorkloadKind::Deployment, "web-old-kind"),
            (WorkloadKind::CloneSet, "web-a-younger"),
            (WorkloadKind::CloneSet, "web-2"),
        ]
    );
    assert!(plan.create.is_empty());
    let provisioned = condition(
        &plan.status,
        &UnitedDeploymentConditionType::SubsetProvisioned,
    )
    .unwrap();
    assert_eq!(provisioned.status, "True");
}

#[test]
fn adaptive_moves_the_replicas_of_an_unschedulable_subset_on() {
    let strategy = json!({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 10}});
    let subsets = json!([{"name": "a", "maxReplicas": 6}, {"name": "b", "minReplicas": 0}]);
    let mut ud = ud(&subsets, json!({}));
    ud.spec.topology.schedule_strategy = serde_json::from_value(strategy).unwrap();
    let first = first_plan(&ud);
    assert!(first.events.is_empty(), "{:?}", first.events);
    let workloads: Vec<SubsetWorkload> = first
        .create
        .iter()
        .enumerate()
        .map(|(index, desired)| {
            let mut workload = existing(desired, &format!("web-{index}"), 5);
            if let SubsetWorkload::CloneSet(set) = &mut workload {
                let replicas = set.spec.replicas.unwrap_or(0);
                set.status = Some(serde_json::from_value(json!({"replicas": replicas})).unwrap());
            }
            workload
        })
        .collect();
    let unschedulable = PodSchedule {
        created_ms: Some(5_000),
        unschedulable: true,
        ..PodSchedule::default()
    };
    let pods = BTreeMap::from([("a".to_owned(), vec![unschedulable; 6])]);
    let at = |seconds: i64, ud: &UnitedDeployment| {
        plan(&PlanInput {
            united_deployment: ud,
            workloads: &workloads,
            update_revision: "web-r1",
            collision_count: 0,
            pods: &pods,
            now: &time(seconds),
        })
        .unwrap()
    };
    let replicas_of = |plan: &Plan| -> Vec<(String, i32)> {
        plan.status
            .subset_statuses
            .iter()
            .map(|subset| (subset.name.clone(), subset.replicas))
            .collect()
    };
    // Before the critical time nothing moves, and the plan asks to look again when it passes.
    let early = at(12, &ud);
    assert_eq!(
        replicas_of(&early),
        [("a".to_owned(), 6), ("b".to_owned(), 0)]
    );
    assert_eq!(early.recheck_after, Some(Duration::from_secs(3)));
    // After it, subset a keeps what runs (nothing) and b takes the rest; a is marked unschedulable.
    let late = at(15, &ud);
    assert_eq!(
        replicas_of(&late),
        [("a".to_owned(), 0), ("b".to_owned(), 6)]
    );
    let marked = &late.status.subset_statuses[0].conditions;
    assert_eq!(marked.len(), 1);
    assert_eq!(
        (marked[0].status.as_str(), marked[0].reason.as_str()),
        ("False", "reschedule")
    );
    assert_eq!(late.recheck_after, Some(Duration::from_secs(300)));
    assert_eq!(late.update.len(), 2, "both CloneSets are rescaled");
    // The same UnitedDeployment under Fixed ignores the pods.
    ud.spec.topology.schedule_strategy = Default::default();
    let fixed = at(15, &ud);
    assert_eq!(
        replicas_of(&fixed),
        [("a".to_owned(), 6), ("b".to_owned(), 0)]
    );
    assert_eq!(fixed.recheck_after, None);
}

#[test]
fn reserved_pods_stay_while_temporary_ones_run_in_the_next_subset() {
    let strategy = json!({"type": "Adaptive",
        "adaptive": {"rescheduleCriticalSeconds": 10, "reserveUnschedulablePods": true}});
    let mut ud = ud(&json!([{"name": "a"}, {"name": "b"}]), json!({}));
    ud.spec.replicas = Some(2);
    ud.spec.topology.schedule_strategy = serde_json::from_value(strategy).unwrap();
    let first = first_plan(&ud);
    assert!(first.events.is_empty(), "{:?}", first.events);
    let workloads: Vec<SubsetWorkload> = first
        .create
        .iter()
        .enumerate()
        .map(|(index, desired)| {
            let mut workload = existing(desired, &format!("web-{index}"), 5);
            if let SubsetWorkload::CloneSet(set) = &mut workload {
                let replicas = set.spec.replicas.unwrap_or(0);
                set.status = Some(serde_json::from_value(json!({"replicas": replicas})).unwrap());
            }
            workload
        })
        .collect();
    let pending = |name: &str, labelled: Option<bool>| PodSchedule {
        name: name.to_owned(),
        created_ms: Some(5_000),
        unschedulable: true,
        reserved_label: labelled,
        ..PodSchedule::default()
    };
    let at = |seconds: i64, pods: &BTreeMap<String, Vec<PodSchedule>>| {
        plan(&PlanInput {
            united_deployment: &ud,
            workloads: &workloads,
            update_revision: "web-r1",
            collision_count: 0,
            pods,
            now: &time(seconds),
        })
        .unwrap()
    };
    let replicas_of = |plan: &Plan| -> Vec<(String, i32, i32)> {
        plan.status
            .subset_statuses
            .iter()
            .map(|subset| (subset.name.clone(), subset.replicas, subset.reserved_pods))
            .collect()
    };
    let pods = BTreeMap::from([(
        "a".to_owned(),
        vec![pending("a-1", None), pending("a-2", Some(true))],
    )]);
    // Before the critical time only the labelled pod is reserved: one temporary pod in b.
    let early = at(12, &pods);
    assert_eq!(
        replicas_of(&early),
        [("a".to_owned(), 2, 1), ("b".to_owned(), 1, 0)]
    );
    assert_eq!(early.relabel, Vec::<(String, bool)>::new());
    assert_eq!(early.recheck_after, Some(Duration::from_secs(3)));
    // After it both are: a keeps its 2, b runs 2 temporary pods, a-1 gets the label.
    let late = at(15, &pods);
    assert_eq!(
        replicas_of(&late),
        [("a".to_owned(), 2, 2), ("b".to_owned(), 2, 0)]
    );
    assert_eq!(late.relabel, [("a-1".to_owned(), true)]);
    assert_eq!(late.status.reserved_pods, 2);
    assert_eq!(late.status.replicas, 0, "the reserved pods are not counted");
    let marked = &late.status.subset_statuses[0].conditions;
    assert_eq!(
        (marked[0].status.as_str(), marked[0].reason.as_str()),
        ("False", "reschedule")
    );
    // Once they are ready they are no longer reserved: the temporary pods go.
    let ready = |name: &str| PodSchedule {
        name: name.to_owned(),
        created_ms: Some(5_000),
        ready: true,
        reserved_label: Some(true),
        ..PodSchedule::default()
    };
    let pods = BTreeMap::from([("a".to_owned(), vec![ready("a-1"), ready("a-2")])]);
    let recovered = at(40, &pods);
    assert_eq!(
        replicas_of(&recovered),
        [("a".to_owned(), 2, 0), ("b".to_owned(), 0, 0)]
    );
    assert_eq!(
        recovered.relabel,
        [("a-1".to_owned(), false), ("a-2".to_owned(), false)]
    );
    assert_eq!(recovered.status.reserved_pods, 0);
}

#[test]
fn replicas_that_do_not_add_up_stop_the_plan() {
    let bad = ud(
        &json!([{"name": "a", "replicas": 4}, {"name": "b", "replicas": 4}]),
        json!({}),
    );
    let error = plan(&PlanInput {
        united_deployment: &bad,
        workloads: &[],
        update_revision: "web-r1",
        collision_count: 0,
        pods: &BTreeMap::new(),
        now: &time(1),
    })
    .unwrap_err();
    assert!(error.to_string().contains("8"), "{error}");
    let no_template: UnitedDeployment = serde_json::from_value(json!({
        "metadata": {"name": "web"}, "spec": {"selector": {}}}))
    .unwrap();
    assert!(matches!(
        plan(&PlanInput {
            united_deployment: &no_template,
            workloads: &[],
            update_revision: "r",
            collision_count: 0,
            pods: &BTreeMap::new(),
            now: &time(1),
        }),
        Err(UnitedDeploymentError::NoTemplate)
    ));
}

#[test]
fn a_plan_is_settled_once_every_workload_reports_its_replicas_ready_and_updated() {
    let ud = ud(&three_subsets(), json!({}));
    let created = first_plan(&ud).create;
    assert!(!first_plan(&ud).settled);
    let reported = |ready: i32| -> Vec<SubsetWorkload> {
        created
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let mut workload = existing(w, &format!("web-{i}"), 1);
                if let SubsetWorkload::CloneSet(set) = &mut workload {
                    let replicas = set.spec.replicas.unwrap();
                    set.status = Some(kruise_api::apps::v1beta1::CloneSetStatus {
                        replicas,
                        ready_replicas: replicas.min(ready),
                        updated_replicas: replicas,
                        updated_ready_replicas: replicas.min(ready),
                        ..Default::default()
                    });
                }
                workload
            })
            .collect()
    };
    let decide = |workloads: &[SubsetWorkload]| {
        plan(&PlanInput {
            united_deployment: &ud,
            workloads,
            update_revision: "web-r1",
            collision_count: 0,
            pods: &BTreeMap::new(),
            now: &time(30),
        })
        .unwrap()
    };
    let all_ready = decide(&reported(10));
    assert!(all_ready.settled);
    assert_eq!(all_ready.status.ready_replicas, 6);
    assert!(!decide(&reported(1)).settled, "pods still starting");
}

#[test]
fn an_on_delete_stateful_set_is_not_rewritten_for_a_partition_it_cannot_hold() {
    let ud = ud(
        &json!([{"name": "a"}]),
        json!({
            "replicas": 2,
            "updateStrategy": {"manualUpdate": {"partitions": {"a": 1}}},
            "template": {"statefulSetTemplate": {"spec": {
                "serviceName": "web", "updateStrategy": {"type": "OnDelete"},
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "main", "image": "nginx:1"}]}}}}}
        }),
    );
    let created = first_plan(&ud).create;
    let workloads = vec![existing(&created[0], "web-a", 1)];
    let again = plan(&PlanInput {
        united_deployment: &ud,
        workloads: &workloads,
        update_revision: "web-r1",
        collision_count: 0,
        pods: &BTreeMap::new(),
        now: &time(5),
    })
    .unwrap();
    assert!(again.update.is_empty(), "{:?}", again.update);
    // The same subset with a rolling update takes the partition, and an update when it changes.
    let mut rolling = ud.clone();
    if let Some(template) = rolling.spec.template.stateful_set_template.as_mut() {
        template.spec.update_strategy = None;
    }
    let created = first_plan(&rolling).create;
    assert_eq!(created[0].observe().partition, 1);
    let workloads = vec![existing(&created[0], "web-a", 1)];
    rolling.spec.update_strategy.manual_update = None;
    let changed = plan(&PlanInput {
        united_deployment: &rolling,
        workloads: &workloads,
        update_revision: "web-r1",
        collision_count: 0,
        pods: &BTreeMap::new(),
        now: &time(5),
    })
    .unwrap();
    assert_eq!(changed.update.len(), 1);
    assert_eq!(changed.update[0].observe().partition, 0);
}
