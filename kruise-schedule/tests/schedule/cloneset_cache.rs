//! The incremental path of the CloneSet planner: a plan from a `PodFactsCache` (facts only, whole pods read
//! from a `PodSource` for the steps that act on them) is exactly the plan from the cache's pods (same
//! order), for random fleets, random CloneSet settings and `now`, also after random pod updates, inserts and
//! deletes applied to the cache one event at a time, and after the CloneSet's priority or scatter strategy
//! changes (stale cached keys, then `set_ordering`); the pods it reads whole are the pods it acts on. Plus
//! unit tests of the cache's bookkeeping (insert, update, `resourceVersion` skip, remove, relist).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::rollout;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::support::rollout::planning::cloneset;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodReadinessGate};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp, tz::TimeZone};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::cloneset::{
    Applied, Options, Plan, PlanInput, PodFactsCache, PodSource, PodVersion, Revisions, SeededIds,
    Synced, plan,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// One generated pod: a `support::rollout::pod` token plus the extras the orderings and availability read.
#[derive(Clone, Debug)]
struct PodGen {
    /// `<rev><state><ready><deleted>` as `support::rollout::pod` reads it (rev `o`/`n`; `x` → a third revision).
    token: String,
    zone: u8,
    rack: u8,
    batch: Option<u8>,
    restarts: i32,
    ready_secs_ago: Option<u16>,
    created_secs_ago: Option<u16>,
    node: Option<u8>,
    phase: u8,
    terminating: bool,
    no_template_hash: bool,
    grace: bool,
    in_place_gate: u8,
    cost: Option<i8>,
    pre_delete_finalizer: bool,
}

fn pod_gen() -> impl Strategy<Value = PodGen> {
    (
        (
            prop::sample::select(vec!['o', 'n', 'x']),
            prop::sample::select("NNNNNNNNNNN------UDPPQT".chars().collect::<Vec<_>>()),
            prop::bool::weighted(0.8),
            prop::bool::weighted(0.03),
            0u8..3,
            0u8..4,
            prop::option::weighted(0.5, 0u8..4),
            0i32..3,
        ),
        (
            prop::option::weighted(0.9, 0u16..120),
            prop::option::weighted(0.9, 0u16..600),
            prop::option::weighted(0.9, 0u8..3),
            prop::sample::select(vec![0u8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3]),
            prop::bool::weighted(0.02),
            prop::bool::weighted(0.03),
            prop::bool::weighted(0.05),
            prop::sample::select(vec![0u8, 0, 1, 2, 2, 3]),
        ),
        (
            prop::option::weighted(0.2, any::<i8>()),
            prop::bool::weighted(0.15),
        ),
    )
        .prop_map(
            |(
                (rev, state, ready, deleted, zone, rack, batch, restarts),
                (ready_ago, created_ago, node, phase, terminating, no_hash, grace, gate),
                (cost, finalizer),
            )| PodGen {
                token: format!(
                    "{rev}{state}{}{}",
                    if ready { 'r' } else { '-' },
                    if deleted { 'd' } else { '-' }
                ),
                zone,
                rack,
                batch,
                restarts,
                ready_secs_ago: ready_ago,
                created_secs_ago: created_ago,
                node,
                phase,
                terminating,
                no_template_hash: no_hash,
                grace,
                in_place_gate: gate,
                cost,
                pre_delete_finalizer: finalizer,
            },
        )
}

fn now_at(offset: u16) -> Timestamp {
    rollout::at("2024-05-01T10:00:00Z") + SignedDuration::from_secs(i64::from(offset))
}

fn build_pod(name: &str, version: u64, g: &PodGen, now: Timestamp) -> Pod {
    let token = g.token.replacen('x', "o", 1);
    let mut pod = rollout::pod(name, &token);
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    if g.token.starts_with('x') {
        labels.insert("controller-revision-hash".into(), "cs-older_rev".into());
    }
    labels.insert("zone".into(), ["a", "b", "c"][usize::from(g.zone)].into());
    labels.insert("rack".into(), format!("r{}", g.rack));
    labels.insert(
        "apps.kruise.io/cloneset-instance-id".into(),
        name.trim_start_matches('p').to_owned(),
    );
    if let Some(batch) = g.batch {
        labels.insert("batch".into(), format!("b-{batch}"));
    }
    if g.no_template_hash {
        labels.remove("pod-template-hash");
    }
    pod.metadata.resource_version = Some(version.to_string());
    pod.metadata.creation_timestamp = g
        .created_secs_ago
        .map(|ago| Time(now - SignedDuration::from_secs(i64::from(ago) + 60)));
    if g.terminating {
        pod.metadata.deletion_timestamp = Some(Time(now));
    }
    if g.pre_delete_finalizer {
        pod.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    }
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if g.grace {
        annotations.insert(
            "apps.kruise.io/inplace-update-grace".into(),
            r#"{"revision":"new_rev","containerImages":{"c":"nginx:2"},"graceSeconds":30}"#.into(),
        );
    }
    if let Some(cost) = g.cost {
        annotations.insert(
            "controller.kubernetes.io/pod-deletion-cost".into(),
            cost.to_string(),
        );
    }
    let spec = pod.spec.get_or_insert_with(Default::default);
    spec.node_name = g.node.map(|n| format!("node-{n}"));
    spec.containers = vec![k8s_openapi::api::core::v1::Container {
        name: "c".into(),
        image: Some("nginx:1".into()),
        ..Default::default()
    }];
    if g.in_place_gate > 0 {
        spec.readiness_gates = Some(vec![PodReadinessGate {
            condition_type: "InPlaceUpdateReady".into(),
        }]);
    }
    let status = pod.status.get_or_insert_with(Default::default);
    status.phase =
        Some(["Running", "Pending", "Unknown", "Succeeded"][usize::from(g.phase)].into());
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    for condition in conditions.iter_mut() {
        if condition.type_ == "Ready" {
            condition.last_transition_time = g
                .ready_secs_ago
                .map(|ago| Time(now - SignedDuration::from_secs(i64::from(ago))));
        }
    }
    match g.in_place_gate {
        2 => conditions.push(PodCondition {
            type_: "InPlaceUpdateReady".into(),
            status: "True".into(),
            ..Default::default()
        }),
        3 => conditions.push(PodCondition {
            type_: "InPlaceUpdateReady".into(),
            status: "False".into(),
            reason: Some("StartInPlaceUpdate".into()),
            ..Default::default()
        }),
        _ => {}
    }
    status.container_statuses = Some(vec![ContainerStatus {
        name: "c".into(),
        restart_count: g.restarts,
        ..Default::default()
    }]);
    pod
}

/// Random CloneSet settings.
#[derive(Clone, Debug)]
struct SetGen {
    /// `None`: as many replicas as pods plus `replicas_delta`; else this many.
    replicas: Option<i64>,
    replicas_delta: i64,
    partition: i64,
    max_unavailable: Value,
    max_surge: Value,
    min_ready_seconds: i32,
    priority: u8,
    scatter: u8,
    delete_names: Vec<u8>,
    paused: bool,
    lifecycle: u8,
    in_place: bool,
    on_delete: bool,
    scale_max_unavailable: Option<i64>,
}

fn set_gen() -> impl Strategy<Value = SetGen> {
    (
        (
            prop::option::weighted(0.3, 0i64..14),
            (
                prop::sample::select(vec![0i64, 0, 0, 0, 0, -1, 1, -2, 2]),
                0i64..14,
            ),
            prop::sample::select(vec![
                json!(0),
                json!(1),
                json!(2),
                json!("30%"),
                json!("50%"),
            ]),
            prop::sample::select(vec![json!(0), json!(1), json!("20%")]),
            prop::sample::select(vec![0, 0, 10, 60, 3600]),
            0u8..3,
            0u8..3,
        ),
        (
            prop::option::weighted(0.2, prop::collection::vec(0u8..16, 0..3)),
            prop::bool::weighted(0.1),
            0u8..3,
            any::<bool>(),
            prop::bool::weighted(0.05),
            prop::option::weighted(0.2, 0i64..3),
        ),
    )
        .prop_map(
            |(
                (
                    replicas,
                    (replicas_delta, partition),
                    max_unavailable,
                    max_surge,
                    min_ready,
                    priority,
                    scatter,
                ),
                (delete_names, paused, lifecycle, in_place, on_delete, scale_max),
            )| SetGen {
                replicas,
                replicas_delta,
                partition,
                max_unavailable,
                max_surge,
                min_ready_seconds: min_ready,
                priority,
                scatter,
                delete_names: delete_names.unwrap_or_default(),
                paused,
                lifecycle,
                in_place,
                on_delete,
                scale_max_unavailable: scale_max,
            },
        )
}

fn build_cloneset(s: &SetGen, pods: usize) -> CloneSet {
    let replicas = s
        .replicas
        .unwrap_or_else(|| (i64::try_from(pods).unwrap() + s.replicas_delta).max(0));
    let mut rolling = json!({
        "partition": s.partition.min(replicas),
        "maxUnavailable": s.max_unavailable,
        "maxSurge": s.max_surge,
        "paused": s.paused,
        "podUpdatePolicy": if s.in_place { "InPlaceIfPossible" } else { "ReCreate" },
    });
    match s.priority {
        1 => {
            rolling["priorityStrategy"] = json!({"weightPriority": [
                {"weight": 50, "matchSelector": {"matchLabels": {"zone": "a"}}},
                {"weight": 20, "matchSelector": {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1", "r2"]}]}},
            ]});
        }
        2 => rolling["priorityStrategy"] = json!({"orderPriority": [{"orderedKey": "batch"}]}),
        _ => {}
    }
    match s.scatter {
        1 => rolling["scatterStrategy"] = json!([{"key": "rack", "value": "r1"}]),
        2 => {
            rolling["scatterStrategy"] =
                json!([{"key": "rack", "value": "r1"}, {"key": "zone", "value": "b"}]);
        }
        _ => {}
    }
    let mut update_strategy = json!({"rollingUpdate": rolling});
    if s.on_delete {
        update_strategy["type"] = json!("OnDelete");
    }
    let mut scale = json!({
        "podsToDelete": s.delete_names.iter().map(|i| format!("p{i}")).collect::<Vec<_>>(),
    });
    if let Some(max) = s.scale_max_unavailable {
        scale["maxUnavailable"] = json!(max);
    }
    let mut spec = json!({
        "replicas": replicas,
        "minReadySeconds": s.min_ready_seconds,
        "updateStrategy": update_strategy,
        "scaleStrategy": scale,
    });
    match s.lifecycle {
        1 => spec["lifecycle"] = json!({"preDelete": {"finalizersHandler": ["example.com/hold"]}}),
        2 => {
            spec["lifecycle"] = json!({
                "preDelete": {"finalizersHandler": ["example.com/hold"], "markPodNotReady": true},
                "inPlaceUpdate": {"labelsHandler": {"zone": "c"}},
            });
        }
        _ => {}
    }
    let mut cs = cloneset(&spec);
    cs.status = Some(Default::default());
    cs
}

/// The revisions' data: `old_rev` runs `nginx:0`, `cs-older_rev` `nginx:00`, `new_rev` the CloneSet's.
struct Data {
    old: Value,
    older: Value,
}

fn data(cs: &CloneSet) -> Data {
    let with_image = |image: &str| {
        let mut template = cs.spec.template.clone();
        template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
        kruise_inplace::revision::template_data_value(&template).unwrap()
    };
    Data {
        old: with_image("nginx:0"),
        older: with_image("nginx:00"),
    }
}

/// The whole pods behind a cache, as a controller's pod store holds them; remembers which pods a plan read.
#[derive(Default)]
struct Store {
    pods: HashMap<(String, String), Arc<Pod>>,
    reads: RefCell<BTreeSet<String>>,
}

impl PodSource for Store {
    fn pod_at(&self, namespace: &str, name: &str, resource_version: &str) -> Option<Arc<Pod>> {
        self.reads.borrow_mut().insert(name.to_owned());
        let pod = self.pods.get(&(namespace.to_owned(), name.to_owned()))?;
        (pod.metadata.resource_version.as_deref().unwrap_or("") == resource_version)
            .then(|| Arc::clone(pod))
    }
}

impl Store {
    /// Applies `pod` to the cache and, unless the cache skipped it, to the store.
    fn apply(&mut self, cache: &mut PodFactsCache, pod: Pod) -> Applied {
        let applied = cache.apply(&pod);
        if applied != Applied::Unchanged {
            self.put(pod);
        }
        applied
    }

    fn put(&mut self, pod: Pod) {
        let key = (
            pod.metadata.namespace.clone().unwrap_or_default(),
            pod.metadata.name.clone().unwrap_or_default(),
        );
        self.pods.insert(key, Arc::new(pod));
    }

    fn remove(&mut self, cache: &mut PodFactsCache, name: &str) -> bool {
        self.pods.remove(&("default".to_owned(), name.to_owned()));
        cache.remove("default", name)
    }

    /// The whole pod of `version`.
    fn whole(&self, version: PodVersion<'_>) -> Arc<Pod> {
        Arc::clone(&self.pods[&(version.namespace.to_owned(), version.name.to_owned())])
    }

    /// The cache's pods, whole, in the cache's order.
    fn in_order(&self, cache: &PodFactsCache) -> Vec<Pod> {
        cache
            .pods()
            .map(|version| (*self.whole(version)).clone())
            .collect()
    }

    fn take_reads(&self) -> BTreeSet<String> {
        std::mem::take(&mut *self.reads.borrow_mut())
    }
}

/// The pods a plan writes to or holds: every pod its actions name.
fn acted_on(plan: &Plan, cache: &PodFactsCache) -> BTreeSet<String> {
    plan.actions
        .iter()
        .filter_map(|action| action.kind.pod())
        .map(|index| cache.pod(index).unwrap().name.to_owned())
        .collect()
}

fn plan_both(
    cs: &CloneSet,
    cache: &PodFactsCache,
    store: &Store,
    known: bool,
    options: &Options,
    now: Timestamp,
) -> (Plan, Plan, Vec<Pod>) {
    let data = data(cs);
    let refs = [
        RevisionRef {
            name: "old_rev",
            data: Some(&data.old),
            annotations: None,
        },
        RevisionRef {
            name: "cs-older_rev",
            data: Some(&data.older),
            annotations: None,
        },
    ];
    let revisions = Revisions {
        current: "old_rev",
        update: "new_rev",
        known: if known { &refs } else { &[] },
    };
    let zoned = now.to_zoned(TimeZone::UTC);
    let pods = store.in_order(cache);
    let cold = plan(&PlanInput::new(
        cs,
        &pods,
        revisions,
        &zoned,
        options,
        &SeededIds::new(3),
    ));
    store.take_reads();
    let cached = plan(&PlanInput::from_cache(
        cs,
        (cache, store),
        revisions,
        &zoned,
        options,
        &SeededIds::new(3),
    ));
    (cold, cached, pods)
}

/// Compares the plans for `cs` and for `cs` with as many replicas as active pods (so that the scale step
/// mostly leaves the update step to act).
fn check_same(
    cs: &CloneSet,
    cache: &PodFactsCache,
    store: &Store,
    known: bool,
    options: &Options,
    now: Timestamp,
) -> Result<(), TestCaseError> {
    let mut steady = cs.clone();
    let active = store
        .in_order(cache)
        .iter()
        .filter(|pod| kruise_api::pod::is_active(pod))
        .count();
    steady.spec.replicas = Some(i32::try_from(active).unwrap());
    for cs in [cs, &steady] {
        let (cold, cached, pods) = plan_both(cs, cache, store, known, options, now);
        prop_assert!(cached.unavailable.is_empty());
        prop_assert_eq!(format!("{cold:#?}"), format!("{cached:#?}"));
        prop_assert_eq!(cold.expectations(&pods), cached.expectations(&pods));
    }
    Ok(())
}

/// One event applied to the cache.
#[derive(Clone, Debug)]
enum Event {
    /// A new version of pod `i % len` with new facts.
    Update(u8, PodGen),
    /// The same `resourceVersion` with other content (skipped by the cache).
    Replay(u8, PodGen),
    /// Pod `i % len` deleted.
    Delete(u8),
    /// A new pod.
    Insert(PodGen),
    /// The CloneSet's settings change (the cache's ordering may go stale); `true`: then `set_ordering`.
    Settings(SetGen, bool),
    /// A controller's view handed to `sync`: the stored pods whose position's bit is set in the mask (the
    /// same `Arc`s), one of them at a new version, and a new pod.
    Sync(u32, u8, PodGen, PodGen),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (any::<u8>(), pod_gen()).prop_map(|(i, g)| Event::Update(i, g)),
        1 => (any::<u8>(), pod_gen()).prop_map(|(i, g)| Event::Replay(i, g)),
        2 => any::<u8>().prop_map(Event::Delete),
        2 => pod_gen().prop_map(Event::Insert),
        1 => (set_gen(), any::<bool>()).prop_map(|(s, follow)| Event::Settings(s, follow)),
        2 => (any::<u32>(), any::<u8>(), pod_gen(), pod_gen()).prop_map(|(m, i, u, n)| Event::Sync(m, i, u, n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// The cached plan equals the cold plan, at first and after every event.
    #[test]
    fn cached_plan_equals_cold_plan(
        pods in prop::collection::vec(pod_gen(), 0..24),
        settings in set_gen(),
        events in prop::collection::vec(event(), 0..12),
        now_offset in 0u16..90,
        known in any::<bool>(),
        gates in (any::<bool>(), any::<bool>(), any::<bool>()),
        follow_ordering in any::<bool>(),
    ) {
        let mut options = Options::default();
        options.preparing_update_as_update = gates.0;
        options.partition_rollback = gates.1;
        options.exclude_preparing_delete = gates.2;
        let now = now_at(now_offset);
        let mut cs = build_cloneset(&settings, pods.len());
        let mut cache = if follow_ordering {
            PodFactsCache::for_cloneset(&cs)
        } else {
            PodFactsCache::new()
        };
        let mut store = Store::default();
        let mut version = 1u64;
        let mut next_name = 0usize;
        for g in &pods {
            prop_assert_eq!(store.apply(&mut cache, build_pod(&format!("p{next_name}"), version, g, now)), Applied::Inserted);
            next_name += 1;
            version += 1;
        }
        check_same(&cs, &cache, &store, known, &options, now)?;
        for event in events {
            let replay = matches!(event, Event::Replay(..));
            match event {
                Event::Update(i, g) | Event::Replay(i, g) if !cache.is_empty() => {
                    let at = usize::from(i) % cache.len();
                    let old = store.whole(cache.pod(at).unwrap());
                    let name = old.metadata.name.clone().unwrap();
                    let rv = if replay {
                        old.metadata.resource_version.clone().unwrap().parse().unwrap()
                    } else {
                        version += 1;
                        version
                    };
                    let applied = store.apply(&mut cache, build_pod(&name, rv, &g, now));
                    prop_assert_eq!(applied, if replay { Applied::Unchanged } else { Applied::Updated });
                    if replay {
                        let old_version = old.metadata.resource_version.as_deref().unwrap();
                        prop_assert!(cache.is_current("default", &name, old_version));
                    }
                }
                Event::Delete(i) if !cache.is_empty() => {
                    let at = usize::from(i) % cache.len();
                    let name = cache.pod(at).unwrap().name.to_owned();
                    let len = cache.len();
                    prop_assert!(store.remove(&mut cache, &name));
                    prop_assert_eq!(cache.len(), len - 1);
                    prop_assert!(cache.position("default", &name).is_none());
                }
                Event::Insert(g) => {
                    version += 1;
                    let applied = store.apply(&mut cache, build_pod(&format!("p{next_name}"), version, &g, now));
                    prop_assert_eq!(applied, Applied::Inserted);
                    next_name += 1;
                }
                Event::Settings(s, follow) => {
                    cs = build_cloneset(&s, cache.len());
                    if follow {
                        cache.set_ordering(&cs, &store);
                    }
                }
                Event::Sync(mask, updated, update, insert) => {
                    let mut view: Vec<Arc<Pod>> = cache
                        .pods()
                        .enumerate()
                        .filter(|(at, _)| mask & (1 << (at % 32)) != 0)
                        .map(|(_, pod)| store.whole(pod))
                        .collect();
                    let kept = view.len();
                    let mut applied = 0;
                    if !view.is_empty() {
                        let at = usize::from(updated) % view.len();
                        version += 1;
                        let name = view[at].metadata.name.clone().unwrap();
                        view[at] = Arc::new(build_pod(&name, version, &update, now));
                        applied += 1;
                    }
                    version += 1;
                    view.push(Arc::new(build_pod(&format!("p{next_name}"), version, &insert, now)));
                    next_name += 1;
                    applied += 1;
                    let removed = cache.len() - kept;
                    view.reverse();
                    // A controller's view as whole pods (`sync`) or as versions, read when changed (`sync_with`).
                    let synced = if mask & (1 << 31) == 0 {
                        cache.sync(view.iter().cloned())
                    } else {
                        let versions: Vec<PodVersion<'_>> = view
                            .iter()
                            .map(|pod| PodVersion {
                                namespace: "default",
                                name: pod.metadata.name.as_deref().unwrap(),
                                resource_version: pod.metadata.resource_version.as_deref().unwrap(),
                            })
                            .collect();
                        let mut reads = 0;
                        let synced = cache.sync_with(versions, |version| {
                            reads += 1;
                            view.iter().find(|pod| pod.metadata.name.as_deref() == Some(version.name)).cloned()
                        });
                        // Only the changed and the new pod are read.
                        prop_assert_eq!(reads, applied);
                        synced
                    };
                    prop_assert_eq!(synced, Synced { applied, removed });
                    store.pods.clear();
                    for pod in &view {
                        store.put((**pod).clone());
                    }
                    let mut names: Vec<_> = cache.pods().map(|p| Some(p.name.to_owned())).collect();
                    let mut expected: Vec<_> = view.iter().map(|p| p.metadata.name.clone()).collect();
                    names.sort();
                    expected.sort();
                    prop_assert_eq!(names, expected);
                    for pod in &view {
                        let (name, version) = (pod.metadata.name.as_deref().unwrap(), pod.metadata.resource_version.as_deref().unwrap());
                        prop_assert!(cache.is_current("default", name, version));
                    }
                }
                _ => {}
            }
            check_same(&cs, &cache, &store, known, &options, now)?;
            // Every stored pod is found under its name, at its position.
            for (position, pod) in cache.pods().enumerate() {
                prop_assert_eq!(cache.position(pod.namespace, pod.name), Some(position));
            }
        }
    }
}

fn simple_pod(name: &str, rv: Option<&str>, revision: &str) -> Pod {
    let mut pod = rollout::pod(name, "oNr-");
    pod.metadata.resource_version = rv.map(str::to_owned);
    pod.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("controller-revision-hash".into(), revision.into());
    pod
}

#[test]
fn apply_inserts_updates_and_skips_the_same_resource_version() {
    let mut cache = PodFactsCache::new();
    assert_eq!(
        cache.apply(simple_pod("a", Some("1"), "old_rev")),
        Applied::Inserted
    );
    assert_eq!(
        cache.apply(simple_pod("b", Some("2"), "old_rev")),
        Applied::Inserted
    );
    // Same resourceVersion: skipped even though the content differs.
    assert_eq!(
        cache.apply(simple_pod("a", Some("1"), "new_rev")),
        Applied::Unchanged
    );
    assert_eq!(cache.revision(0), Some("old_rev"));
    // A new resourceVersion replaces the pod's facts in place.
    assert_eq!(
        cache.apply(simple_pod("a", Some("3"), "new_rev")),
        Applied::Updated
    );
    assert_eq!(cache.len(), 2);
    assert_eq!(
        cache.pod(0),
        Some(PodVersion {
            namespace: "default",
            name: "a",
            resource_version: "3"
        })
    );
    assert_eq!(cache.revision(0), Some("new_rev"));
    assert!(cache.is_current("default", "a", "3"));
    assert!(!cache.is_current("default", "a", "1"));
    // Without a resourceVersion a pod is always taken.
    assert_eq!(
        cache.apply(simple_pod("b", None, "new_rev")),
        Applied::Updated
    );
    assert_eq!(
        cache.apply(simple_pod("b", None, "new_rev")),
        Applied::Updated
    );
    assert!(!cache.is_current("default", "b", ""));
    // Another namespace is another pod.
    let mut other = simple_pod("a", Some("1"), "old_rev");
    other.metadata.namespace = Some("other".into());
    assert_eq!(cache.apply(&other), Applied::Inserted);
    assert_eq!(cache.len(), 3);
    assert_eq!(cache.pod(2).map(|pod| pod.namespace), Some("other"));
}

#[test]
fn remove_moves_the_last_pod_into_the_hole() {
    let mut cache = PodFactsCache::new();
    for (i, name) in ["a", "b", "c", "d"].iter().enumerate() {
        cache.apply(simple_pod(name, Some(&i.to_string()), "old_rev"));
    }
    assert!(cache.remove("default", "b"));
    let names: Vec<_> = cache.pods().map(|p| p.name).collect();
    assert_eq!(names, ["a", "d", "c"]);
    assert_eq!(cache.position("default", "d"), Some(1));
    assert!(!cache.remove("default", "b"));
    assert!(!cache.remove("elsewhere", "a"));
    assert!(cache.remove_pod(&simple_pod("d", None, "x")));
    assert!(cache.remove_pod(&simple_pod("c", None, "x")));
    assert!(cache.remove("default", "a"));
    assert!(cache.is_empty());
    // Re-inserting after everything was removed works (positions and interned strings were released).
    assert_eq!(
        cache.apply(simple_pod("a", Some("9"), "new_rev")),
        Applied::Inserted
    );
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.revision(0), Some("new_rev"));
}

#[test]
fn plans_from_the_cache_follow_pod_events() {
    let cs = cloneset(&json!({
        "replicas": 3,
        "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}},
    }));
    let options = Options::default();
    let now = rollout::planning::now();
    let mut cache = PodFactsCache::for_cloneset(&cs);
    let mut store = Store::default();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        store.apply(
            &mut cache,
            simple_pod(name, Some(&i.to_string()), "old_rev"),
        );
    }
    let revisions = Revisions::named("old_rev", "new_rev");
    let first = plan(&PlanInput::from_cache(
        &cs,
        (&cache, &store),
        revisions,
        &now,
        &options,
        &SeededIds::new(1),
    ));
    // One pod is updated (recreate: marked for deletion), within maxUnavailable 1.
    assert_eq!(first.actions.len(), 1);
    let marked: Vec<_> = acted_on(&first, &cache).into_iter().collect();
    assert_eq!(marked.len(), 1);
    let marked = marked[0].clone();
    // The pod comes back at the new revision: the next plan takes the next one.
    store.remove(&mut cache, &marked);
    store.apply(&mut cache, simple_pod(&marked, Some("10"), "new_rev"));
    let second = plan(&PlanInput::from_cache(
        &cs,
        (&cache, &store),
        revisions,
        &now,
        &options,
        &SeededIds::new(1),
    ));
    assert_eq!(second.status.updated_replicas, 1);
    assert_eq!(second.actions.len(), 1);
    assert!(!acted_on(&second, &cache).contains(&marked));
}

#[test]
fn replace_all_relists() {
    let mut cache = PodFactsCache::new();
    cache.apply(simple_pod("gone", Some("1"), "old_rev"));
    cache.replace_all(
        ["a", "b"]
            .iter()
            .map(|name| Arc::new(simple_pod(name, Some("5"), "new_rev"))),
    );
    assert_eq!(cache.len(), 2);
    assert!(cache.position("default", "gone").is_none());
    assert!(cache.position("default", "b").is_some());
}

/// A fleet of `ready` Ready pods at `old_rev`, all `Normal`, in the cache and the store.
fn ready_fleet(count: usize) -> (PodFactsCache, Store) {
    let mut cache = PodFactsCache::new();
    let mut store = Store::default();
    for i in 0..count {
        let mut pod = simple_pod(&format!("p{i:02}"), Some(&(i + 1).to_string()), "old_rev");
        pod.metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("lifecycle.apps.kruise.io/state".into(), "Normal".into());
        store.apply(&mut cache, pod);
    }
    (cache, store)
}

#[test]
fn a_plan_from_the_cache_reads_whole_only_the_pods_it_acts_on() {
    let cs = cloneset(&json!({
        "replicas": 20,
        "updateStrategy": {"type": "InPlaceIfPossible", "rollingUpdate": {"maxUnavailable": 3}},
    }));
    let options = Options::default();
    let now = rollout::planning::now();
    let (mut cache, store) = ready_fleet(20);
    cache.set_ordering(&cs, &store);
    // At rest (every pod at the update revision): nothing is read whole.
    let rest = plan(&PlanInput::from_cache(
        &cs,
        (&cache, &store),
        Revisions::named("old_rev", "old_rev"),
        &now,
        &options,
        &SeededIds::new(1),
    ));
    assert_eq!(rest.actions.len(), 0);
    assert_eq!(rest.status.ready_replicas, 20);
    assert_eq!(store.take_reads(), BTreeSet::new());
    // A rollout: the three pods within maxUnavailable are read whole, and only they.
    let rollout = plan(&PlanInput::from_cache(
        &cs,
        (&cache, &store),
        Revisions::named("old_rev", "new_rev"),
        &now,
        &options,
        &SeededIds::new(1),
    ));
    let acted = acted_on(&rollout, &cache);
    assert_eq!(acted.len(), 3);
    assert_eq!(store.take_reads(), acted);
    // The same decisions as the plan of the whole pods.
    let pods = store.in_order(&cache);
    let cold = plan(&PlanInput::new(
        &cs,
        &pods,
        Revisions::named("old_rev", "new_rev"),
        &now,
        &options,
        &SeededIds::new(1),
    ));
    assert_eq!(format!("{cold:#?}"), format!("{rollout:#?}"));
}

#[test]
fn a_pod_changed_since_the_cache_read_it_leaves_the_plan_without_actions() {
    let cs = cloneset(&json!({
        "replicas": 4,
        "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}},
    }));
    let options = Options::default();
    let now = rollout::planning::now();
    let (cache, mut store) = ready_fleet(4);
    // The store moved on for every pod (newer versions the cache has not seen yet).
    let newer: Vec<Pod> = store
        .pods
        .values()
        .map(|pod| {
            let mut pod = (**pod).clone();
            pod.metadata.resource_version = Some("99".into());
            pod
        })
        .collect();
    for pod in newer {
        store.put(pod);
    }
    let planned = plan(&PlanInput::from_cache(
        &cs,
        (&cache, &store),
        Revisions::named("old_rev", "new_rev"),
        &now,
        &options,
        &SeededIds::new(1),
    ));
    assert_eq!(planned.unavailable.len(), 1);
    assert!(planned.actions.is_empty());
    assert_eq!(planned.step, kruise_schedule::cloneset::Step::Idle);
    // The status still comes from the facts.
    assert_eq!(planned.status.ready_replicas, 4);
}

#[test]
fn set_ordering_drops_the_pods_the_source_no_longer_holds() {
    let cs = cloneset(&json!({
        "replicas": 3,
        "updateStrategy": {"rollingUpdate": {"priorityStrategy": {"weightPriority": [
            {"weight": 10, "matchSelector": {"matchLabels": {"zone": "a"}}}
        ]}}},
    }));
    let (mut cache, mut store) = ready_fleet(3);
    store.pods.remove(&("default".to_owned(), "p01".to_owned()));
    assert!(cache.set_ordering(&cs, &store));
    assert_eq!(cache.len(), 2);
    assert!(cache.position("default", "p01").is_none());
    assert!(!cache.set_ordering(&cs, &store));
}
