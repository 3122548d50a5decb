//! Properties over random hook configurations and random event sequences (controller triggers, a user's
//! operator adding and removing hook labels and finalizers, other owners' finalizers, a `ContainerRecreateRequest`
//! holding the pod not-ready):
//!
//! * a pod is never deleted while its preDelete hook holds it;
//! * a pod is never updated in place while its inPlaceUpdate hook holds it before the update
//!   (`PreparingUpdate` and the states that lead to it);
//! * every not-ready entry the lifecycle added is removed once the hooks are done (or the pod is deleted);
//! * no finalizer of another owner, and no other writer's not-ready entry, is ever touched;
//! * the rendered patches (strategic merge and JSON merge) do exactly what `apply` does;
//! * deciding again on a held pod writes nothing, and refresh reaches a fixpoint within two steps.

// Test code: a panic is a failed test, and the tables index fixed arrays.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::collections::BTreeMap;

use crate::support::{KRUISE_POD_READY, STATE, now};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::lifecycle::{Lifecycle, LifecycleHook, LifecycleStateType as State};
use kruise_lifecycle::not_ready::{self, container_recreate_request_entry};
use kruise_lifecycle::{
    DeleteDecision, Error, Options, RefreshInput, Transition, UpdateDecision, Workload,
    WorkloadKind, hook::arm, is_hooked, state::state,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

const HOOK_LABEL_KEYS: [&str; 2] = ["hook.example.com/a", "hook.example.com/b"];
/// Handler values, including the awkward ones: empty (matches an absent label), quotes, backslashes.
const HOOK_LABEL_VALUES: [&str; 5] = ["true", "", "say \"hi\"", "back\\slash", "é"];
const HOOK_FINALIZERS: [&str; 2] = ["hook.example.com/f1", "hook.example.com/f2"];
const FOREIGN_FINALIZERS: [&str; 2] = ["foreign.example.com/x", "kubernetes.io/pvc-protection"];

fn hook_strategy() -> impl Strategy<Value = LifecycleHook> {
    (
        prop::collection::btree_map(
            prop::sample::select(HOOK_LABEL_KEYS.to_vec()),
            prop::sample::select(HOOK_LABEL_VALUES.to_vec()),
            0..=2,
        ),
        prop::sample::subsequence(HOOK_FINALIZERS.to_vec(), 0..=2),
        any::<bool>(),
    )
        .prop_map(|(labels, finalizers, mark)| LifecycleHook {
            labels_handler: labels
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            finalizers_handler: finalizers.into_iter().map(str::to_owned).collect(),
            mark_pod_not_ready: mark,
        })
}

fn lifecycle_strategy() -> impl Strategy<Value = Option<Lifecycle>> {
    prop::option::weighted(
        0.9,
        (
            prop::option::of(hook_strategy()),
            prop::option::of(hook_strategy()),
            prop::option::of(hook_strategy()),
        )
            .prop_map(|(pre_delete, in_place_update, pre_normal)| Lifecycle {
                pre_delete,
                in_place_update,
                pre_normal,
            }),
    )
}

#[derive(Clone, Debug)]
enum Event {
    Refresh {
        completed: bool,
        at_update_revision: bool,
    },
    UpdateWanted,
    DeleteWanted,
    CancelDelete,
    Schedule,
    SetLabel(usize, usize),
    RemoveLabel(usize),
    AddHookFinalizer(usize),
    RemoveHookFinalizer(usize),
    AddForeignFinalizer(usize),
    RemoveForeignFinalizer(usize),
    CrrHold(bool),
}

fn event_strategy() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => (any::<bool>(), any::<bool>())
            .prop_map(|(completed, at_update_revision)| Event::Refresh { completed, at_update_revision }),
        3 => Just(Event::UpdateWanted),
        2 => Just(Event::DeleteWanted),
        1 => Just(Event::CancelDelete),
        1 => Just(Event::Schedule),
        2 => (0..HOOK_LABEL_KEYS.len(), 0..HOOK_LABEL_VALUES.len() + 1).prop_map(|(k, v)| Event::SetLabel(k, v)),
        1 => (0..HOOK_LABEL_KEYS.len()).prop_map(Event::RemoveLabel),
        2 => (0..HOOK_FINALIZERS.len()).prop_map(Event::AddHookFinalizer),
        2 => (0..HOOK_FINALIZERS.len()).prop_map(Event::RemoveHookFinalizer),
        1 => (0..FOREIGN_FINALIZERS.len()).prop_map(Event::AddForeignFinalizer),
        1 => (0..FOREIGN_FINALIZERS.len()).prop_map(Event::RemoveForeignFinalizer),
        1 => any::<bool>().prop_map(Event::CrrHold),
    ]
}

#[derive(Clone, Debug)]
struct Scenario {
    kind: WorkloadKind,
    lifecycle: Option<Lifecycle>,
    wait_for_scheduling: bool,
    /// `None`: the pod is created by the workload; else a state to start from.
    start: Option<Option<State>>,
    gate: bool,
    labels: BTreeMap<usize, usize>,
    hook_finalizers: Vec<usize>,
    foreign: Vec<usize>,
    events: Vec<Event>,
}

fn state_strategy(kind: WorkloadKind) -> BoxedStrategy<Option<Option<State>>> {
    let states: Vec<Option<State>> = match kind {
        WorkloadKind::DaemonSet => vec![None, Some(State::PreparingDelete)],
        _ => vec![
            None,
            Some(State::PreparingNormal),
            Some(State::Normal),
            Some(State::PreparingUpdate),
            Some(State::Updating),
            Some(State::Updated),
            Some(State::PreparingDelete),
        ],
    };
    prop::option::of(prop::sample::select(states)).boxed()
}

fn scenario_strategy() -> impl Strategy<Value = Scenario> {
    prop::sample::select(vec![
        WorkloadKind::CloneSet,
        WorkloadKind::StatefulSet,
        WorkloadKind::DaemonSet,
    ])
    .prop_flat_map(|kind| {
        (
            Just(kind),
            lifecycle_strategy(),
            any::<bool>(),
            state_strategy(kind),
            any::<bool>(),
            prop::collection::btree_map(
                0..HOOK_LABEL_KEYS.len(),
                0..HOOK_LABEL_VALUES.len(),
                0..=2,
            ),
            prop::sample::subsequence(vec![0, 1], 0..=2),
            prop::sample::subsequence(vec![0, 1], 0..=2),
            prop::collection::vec(event_strategy(), 0..40),
        )
    })
    .prop_map(
        |(
            kind,
            lifecycle,
            wait_for_scheduling,
            start,
            gate,
            labels,
            hook_finalizers,
            foreign,
            events,
        )| {
            Scenario {
                kind,
                lifecycle,
                wait_for_scheduling,
                start,
                gate,
                labels,
                hook_finalizers,
                foreign,
                events,
            }
        },
    )
}

/// The simulated world: one pod, and what the other parties expect of it.
struct World<'a> {
    workload: Workload<'a>,
    pod: Pod,
    deleted: bool,
    foreign: Vec<String>,
    crr_holds: bool,
}

fn label_value(index: usize) -> String {
    // One past the handler values: a value no handler uses.
    HOOK_LABEL_VALUES
        .get(index)
        .map_or_else(|| "released".to_owned(), |v| (*v).to_owned())
}

fn initial_pod(scenario: &Scenario, workload: &Workload<'_>) -> Pod {
    let mut builder = support::pod();
    if scenario.gate {
        builder = builder.gated();
    }
    let mut pod = builder.build();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    for (key, value) in &scenario.labels {
        labels.insert(HOOK_LABEL_KEYS[*key].to_owned(), label_value(*value));
    }
    let finalizers = pod.metadata.finalizers.get_or_insert_with(Vec::new);
    finalizers.extend(
        scenario
            .foreign
            .iter()
            .map(|i| FOREIGN_FINALIZERS[*i].to_owned()),
    );
    finalizers.extend(
        scenario
            .hook_finalizers
            .iter()
            .map(|i| HOOK_FINALIZERS[*i].to_owned()),
    );
    match &scenario.start {
        None => workload.created(&pod, &now()).change.apply_to(&mut pod),
        Some(None) => {}
        Some(Some(start)) => {
            labels_mut(&mut pod).insert(STATE.into(), start.as_str().into());
            // Entries consistent with the state, as the lifecycle would have left them.
            let marks = |hook: Option<&LifecycleHook>| hook.is_some_and(|h| h.mark_pod_not_ready);
            let lifecycle = workload.lifecycle();
            let in_place = lifecycle.and_then(|l| l.in_place_update.as_ref());
            let pre_delete = lifecycle.and_then(|l| l.pre_delete.as_ref());
            let mut entries = Vec::new();
            if matches!(start, State::PreparingUpdate | State::Updating) && marks(in_place) {
                entries.push(not_ready::pre_update_entry());
            }
            if *start == State::PreparingDelete && marks(pre_delete) {
                entries.push(not_ready::pre_delete_entry());
            }
            for entry in entries {
                let change = not_ready::add_not_ready_key(&pod, &entry, now().timestamp()).unwrap();
                change.apply_to(&mut pod);
            }
        }
    }
    pod
}

fn labels_mut(pod: &mut Pod) -> &mut BTreeMap<String, String> {
    pod.metadata.labels.get_or_insert_with(BTreeMap::new)
}

fn finalizers_mut(pod: &mut Pod) -> &mut Vec<String> {
    pod.metadata.finalizers.get_or_insert_with(Vec::new)
}

impl World<'_> {
    fn hook(&self, pick: fn(&Lifecycle) -> Option<&LifecycleHook>) -> Option<&LifecycleHook> {
        self.workload.lifecycle().and_then(pick)
    }

    /// Applies a lifecycle transition after checking everything it must not do.
    fn write(&mut self, transition: &Transition) -> Result<(), TestCaseError> {
        let before = self.pod.clone();
        let after = transition.apply(&before);
        check_patches(&before, transition, &after)?;
        for finalizer in before.metadata.finalizers.iter().flatten() {
            prop_assert!(
                after
                    .metadata
                    .finalizers
                    .iter()
                    .flatten()
                    .any(|f| f == finalizer),
                "finalizer {finalizer} removed"
            );
        }
        for added in &transition.change.metadata.finalizers {
            prop_assert!(
                HOOK_FINALIZERS.contains(&added.as_str()),
                "added a non-hook finalizer {added}"
            );
        }
        let foreign: Vec<String> = after
            .metadata
            .finalizers
            .iter()
            .flatten()
            .filter(|f| FOREIGN_FINALIZERS.contains(&f.as_str()))
            .cloned()
            .collect();
        prop_assert_eq!(&foreign, &self.foreign, "foreign finalizers touched");
        let crr = container_recreate_request_entry("demo", "restart");
        prop_assert_eq!(
            not_ready::entries(&after).unwrap().contains(&crr),
            self.crr_holds,
            "another writer's not-ready entry touched"
        );
        if !transition.change.status.is_empty() {
            check_readiness(&after)?;
        }
        self.pod = after;
        Ok(())
    }

    fn step(&mut self, event: &Event) -> Result<(), TestCaseError> {
        let now = now();
        match event {
            Event::Refresh {
                completed,
                at_update_revision,
            } => {
                let input = RefreshInput {
                    update_completed: *completed,
                    at_update_revision: *at_update_revision,
                };
                let first = self.workload.refresh(&self.pod, input, &now).unwrap();
                self.write(&first)?;
                let second = self.workload.refresh(&self.pod, input, &now).unwrap();
                self.write(&second)?;
                let third = self.workload.refresh(&self.pod, input, &now).unwrap();
                prop_assert!(
                    third.is_noop(),
                    "refresh has no fixpoint after two steps: {third:?}"
                );
            }
            Event::UpdateWanted => {
                let current = state(&self.pod);
                let hooked = is_hooked(self.hook(|l| l.in_place_update.as_ref()), &self.pod);
                match self.workload.update_wanted(&self.pod, &now) {
                    Ok(UpdateDecision::UpdateNow(transition)) => {
                        if self.workload.kind() != WorkloadKind::DaemonSet {
                            let before_update = matches!(
                                current,
                                None | Some(
                                    State::PreparingNormal | State::Normal | State::PreparingUpdate
                                )
                            );
                            prop_assert!(
                                !(before_update && hooked),
                                "updated while the inPlaceUpdate hook holds the pod in {current:?}"
                            );
                            prop_assert_ne!(current, Some(State::Updated), "updated from Updated");
                        }
                        self.write(&transition)?;
                    }
                    Ok(UpdateDecision::Hold(transition)) => {
                        self.write(&transition)?;
                        // Deciding again on a pod the hook holds writes nothing. (An empty hook re-armed
                        // from Updated holds nothing: the pod passes through PreparingUpdate, as upstream.)
                        if is_hooked(self.hook(|l| l.in_place_update.as_ref()), &self.pod) {
                            let again = self.workload.update_wanted(&self.pod, &now).unwrap();
                            prop_assert!(
                                !again.is_update_now() && again.transition().is_noop(),
                                "{again:?}"
                            );
                        }
                    }
                    Err(Error::UpdateNotAllowed { .. }) => {
                        prop_assert!(matches!(
                            current,
                            Some(State::PreparingDelete | State::Unknown(_))
                        ));
                    }
                    Err(other) => return Err(TestCaseError::fail(other.to_string())),
                }
            }
            Event::DeleteWanted => {
                let hooked = is_hooked(self.hook(|l| l.pre_delete.as_ref()), &self.pod);
                match self.workload.delete_wanted(&self.pod, &now).unwrap() {
                    DeleteDecision::Delete => {
                        prop_assert!(!hooked, "deleted while the preDelete hook holds the pod");
                        self.deleted = true;
                    }
                    DeleteDecision::Hold(transition) => {
                        prop_assert!(hooked);
                        self.write(&transition)?;
                        prop_assert_eq!(state(&self.pod), Some(State::PreparingDelete));
                        let again = self.workload.delete_wanted(&self.pod, &now).unwrap();
                        prop_assert!(
                            matches!(&again, DeleteDecision::Hold(t) if t.is_noop()),
                            "{again:?}"
                        );
                    }
                }
            }
            Event::CancelDelete => match self.workload.cancel_delete(&self.pod, &now) {
                Ok(Some(transition)) => {
                    prop_assert_eq!(self.workload.kind(), WorkloadKind::CloneSet);
                    prop_assert!(
                        !self
                            .workload
                            .lifecycle()
                            .is_some_and(Lifecycle::mark_pod_not_ready)
                    );
                    self.write(&transition)?;
                }
                Ok(None) => {}
                Err(Error::Unsupported { .. }) => {
                    prop_assert_ne!(self.workload.kind(), WorkloadKind::CloneSet);
                }
                Err(other) => return Err(TestCaseError::fail(other.to_string())),
            },
            Event::Schedule => {
                self.pod.spec.get_or_insert_with(Default::default).node_name =
                    Some("node-1".into());
            }
            Event::SetLabel(key, value) => {
                labels_mut(&mut self.pod).insert(HOOK_LABEL_KEYS[*key].into(), label_value(*value));
            }
            Event::RemoveLabel(key) => {
                labels_mut(&mut self.pod).remove(HOOK_LABEL_KEYS[*key]);
            }
            Event::AddHookFinalizer(index) => {
                let finalizer = HOOK_FINALIZERS[*index].to_owned();
                let finalizers = finalizers_mut(&mut self.pod);
                if !finalizers.contains(&finalizer) {
                    finalizers.push(finalizer);
                }
            }
            Event::RemoveHookFinalizer(index) => {
                finalizers_mut(&mut self.pod).retain(|f| f != HOOK_FINALIZERS[*index]);
            }
            Event::AddForeignFinalizer(index) => {
                let finalizer = FOREIGN_FINALIZERS[*index].to_owned();
                if !self.foreign.contains(&finalizer) {
                    self.foreign.push(finalizer.clone());
                    finalizers_mut(&mut self.pod).push(finalizer);
                }
            }
            Event::RemoveForeignFinalizer(index) => {
                let finalizer = FOREIGN_FINALIZERS[*index];
                self.foreign.retain(|f| f != finalizer);
                finalizers_mut(&mut self.pod).retain(|f| f != finalizer);
            }
            Event::CrrHold(hold) => {
                let entry = container_recreate_request_entry("demo", "restart");
                let change = if *hold {
                    not_ready::add_not_ready_key(&self.pod, &entry, now.timestamp()).unwrap()
                } else {
                    not_ready::remove_not_ready_key(&self.pod, &entry, now.timestamp()).unwrap()
                };
                change.apply_to(&mut self.pod);
                self.crr_holds = *hold && not_ready::has_gate(&self.pod);
            }
        }
        Ok(())
    }

    /// A cooperative operator: releases the hook that holds the pod, re-arms the one that waits for it.
    fn operator(&mut self) {
        let release = |pod: &mut Pod, hook: &LifecycleHook| {
            for key in hook.labels_handler.keys() {
                labels_mut(pod).insert(key.clone(), "released".into());
            }
            finalizers_mut(pod).retain(|f| !hook.finalizers_handler.contains(f));
        };
        let lifecycle = self.workload.lifecycle();
        match state(&self.pod) {
            Some(State::PreparingNormal) => {
                self.pod.spec.get_or_insert_with(Default::default).node_name =
                    Some("node-1".into());
                if let Some(hook) = lifecycle.and_then(|l| l.pre_normal.as_ref()) {
                    arm(hook).apply_to(&mut self.pod);
                }
            }
            Some(State::PreparingUpdate) => {
                if let Some(hook) = lifecycle.and_then(|l| l.in_place_update.as_ref()) {
                    release(&mut self.pod, hook);
                }
            }
            Some(State::Updated) => {
                if let Some(hook) = lifecycle.and_then(|l| l.in_place_update.as_ref()) {
                    arm(hook).apply_to(&mut self.pod);
                }
            }
            Some(State::PreparingDelete) => {
                if let Some(hook) = lifecycle.and_then(|l| l.pre_delete.as_ref()) {
                    release(&mut self.pod, hook);
                }
            }
            _ => {}
        }
    }

    /// The controller keeps reconciling and the operator keeps cooperating until nothing moves.
    fn settle(&mut self) -> Result<(), TestCaseError> {
        let now = now();
        for _ in 0..30 {
            if self.deleted {
                return Ok(());
            }
            let before = self.pod.clone();
            match state(&self.pod) {
                Some(State::PreparingDelete) => self.step(&Event::DeleteWanted)?,
                Some(State::PreparingUpdate) => self.step(&Event::UpdateWanted)?,
                _ => {
                    let done = RefreshInput {
                        update_completed: true,
                        at_update_revision: false,
                    };
                    let transition = self.workload.refresh(&self.pod, done, &now).unwrap();
                    self.write(&transition)?;
                }
            }
            self.operator();
            if self.pod == before && matches!(state(&self.pod), None | Some(State::Normal)) {
                break;
            }
        }
        if self.deleted {
            return Ok(());
        }
        let settled = state(&self.pod);
        prop_assert!(
            matches!(settled, None | Some(State::Normal)),
            "stuck in {settled:?}"
        );
        let lifecycle_entries: Vec<_> = not_ready::entries(&self.pod)
            .unwrap()
            .into_iter()
            .filter(|e| e.user_agent == "Lifecycle")
            .collect();
        prop_assert!(
            lifecycle_entries.is_empty(),
            "left behind: {lifecycle_entries:?}"
        );
        if let Some(kpr) = kruise_api::pod::condition(&self.pod, KRUISE_POD_READY) {
            prop_assert_eq!(
                kpr.status == "True",
                !self.crr_holds,
                "KruisePodReady status"
            );
        }
        Ok(())
    }
}

/// `Ready` agrees with the readiness gates whenever kubelet has reported containers ready.
fn check_readiness(pod: &Pod) -> Result<(), TestCaseError> {
    let containers_ready =
        kruise_api::pod::condition(pod, "ContainersReady").is_some_and(|c| c.status == "True");
    if !containers_ready || kruise_api::pod::condition(pod, "Ready").is_none() {
        return Ok(());
    }
    let entries = not_ready::entries(pod).unwrap();
    let kpr = kruise_api::pod::condition(pod, KRUISE_POD_READY).unwrap();
    prop_assert_eq!(kpr.status == "False", !entries.is_empty());
    prop_assert_eq!(kruise_api::pod::is_ready(pod), entries.is_empty());
    Ok(())
}

/// The patches, applied the way the API server applies them, give exactly `after`.
fn check_patches(before: &Pod, transition: &Transition, after: &Pod) -> Result<(), TestCaseError> {
    let expected = serde_json::to_value(after).unwrap();
    let change = &transition.change;

    let mut strategic = serde_json::to_value(before).unwrap();
    if let Some(patch) = change.status.strategic_merge_patch(before) {
        strategic_merge(&mut strategic, &patch);
    }
    if let Some(patch) = change.metadata.strategic_merge_patch() {
        strategic_merge(&mut strategic, &patch);
    }
    prop_assert_eq!(
        &strategic,
        &expected,
        "strategic merge patches disagree with apply"
    );

    let mut merged = serde_json::to_value(before).unwrap();
    if let Some(patch) = change.status.merge_patch(before) {
        json_patch::merge(&mut merged, &patch);
    }
    if let Some(patch) = change.metadata.merge_patch(before) {
        json_patch::merge(&mut merged, &patch);
    }
    prop_assert_eq!(&merged, &expected, "JSON merge patches disagree with apply");
    Ok(())
}

/// The strategic-merge rules for the fields these patches touch: `metadata.labels`/`annotations` merge key
/// by key (`null` deletes), `metadata.finalizers` is a set merged by union, `status.conditions` merges by
/// `type` and each condition field by field (`null` deletes).
fn strategic_merge(target: &mut Value, patch: &Value) {
    let Some(target) = target.as_object_mut() else {
        panic!("pod JSON is an object");
    };
    if let Some(meta) = patch.get("metadata").and_then(Value::as_object) {
        let metadata = object(target, "metadata");
        for (key, value) in meta {
            match key.as_str() {
                "labels" | "annotations" => merge_fields(object(metadata, key), value),
                "finalizers" => {
                    let list = metadata
                        .entry(key.clone())
                        .or_insert_with(|| Value::Array(vec![]));
                    let list = list.as_array_mut().unwrap();
                    for item in value.as_array().unwrap() {
                        if !list.contains(item) {
                            list.push(item.clone());
                        }
                    }
                }
                _ => {
                    metadata.insert(key.clone(), value.clone());
                }
            }
        }
    }
    if let Some(conditions) = patch
        .pointer("/status/conditions")
        .and_then(Value::as_array)
    {
        let status = object(target, "status");
        let list = status
            .entry("conditions")
            .or_insert_with(|| Value::Array(vec![]));
        let list = list.as_array_mut().unwrap();
        for condition in conditions {
            match list.iter_mut().find(|c| c["type"] == condition["type"]) {
                Some(existing) => merge_fields(existing.as_object_mut().unwrap(), condition),
                None => {
                    let mut fresh = Map::new();
                    merge_fields(&mut fresh, condition);
                    list.push(Value::Object(fresh));
                }
            }
        }
    }
}

fn object<'a>(parent: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    parent
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .unwrap()
}

fn merge_fields(target: &mut Map<String, Value>, patch: &Value) {
    for (key, value) in patch.as_object().unwrap() {
        if value.is_null() {
            target.remove(key);
        } else {
            target.insert(key.clone(), value.clone());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn lifecycle_holds_and_releases(scenario in scenario_strategy()) {
        let workload = Workload::new(scenario.kind, scenario.lifecycle.as_ref())
            .with_options(Options::default().wait_for_scheduling(scenario.wait_for_scheduling));
        let pod = initial_pod(&scenario, &workload);
        let foreign = scenario.foreign.iter().map(|i| FOREIGN_FINALIZERS[*i].to_owned()).collect();
        let mut world = World { workload, pod, deleted: false, foreign, crr_holds: false };
        for event in &scenario.events {
            world.step(event)?;
            if world.deleted {
                return Ok(());
            }
        }
        world.settle()?;
    }

    #[test]
    fn not_ready_entries_of_many_writers(
        gate in any::<bool>(),
        ops in prop::collection::vec((any::<bool>(), 0..4usize), 0..30),
    ) {
        // Several writers add and remove entries in any order: the message always lists exactly the entries
        // held, sorted; the condition is False exactly while one is held.
        let writers = [
            not_ready::pre_delete_entry(),
            not_ready::pre_update_entry(),
            container_recreate_request_entry("demo", "a"),
            container_recreate_request_entry("demo", "b"),
        ];
        let mut builder = support::pod();
        if gate {
            builder = builder.gated();
        }
        let mut pod = builder.build();
        let mut held = std::collections::BTreeSet::new();
        for (add, writer) in ops {
            let entry = &writers[writer];
            let change = if add {
                not_ready::add_not_ready_key(&pod, entry, now().timestamp()).unwrap()
            } else {
                not_ready::remove_not_ready_key(&pod, entry, now().timestamp()).unwrap()
            };
            change.apply_to(&mut pod);
            if gate {
                if add { held.insert(entry.clone()); } else { held.remove(entry); }
            }
            let listed = not_ready::entries(&pod).unwrap();
            prop_assert_eq!(listed.iter().cloned().collect::<std::collections::BTreeSet<_>>(), held.clone());
            let mut sorted = listed.clone();
            sorted.sort();
            prop_assert_eq!(&listed, &sorted);
            if let Some(kpr) = kruise_api::pod::condition(&pod, KRUISE_POD_READY) {
                prop_assert_eq!(kpr.status == "False", !held.is_empty());
            }
            if gate {
                prop_assert_eq!(kruise_api::pod::is_ready(&pod), held.is_empty());
            }
        }
    }
}

#[test]
fn the_seed_configuration_settles() {
    // The markPodNotReady example of the seed (one finalizer shared by both hooks), driven by hand through a
    // full update and a deletion.
    let hook = support::hook(&[], &["example.io/unready-blocker"], true);
    let lifecycle = Lifecycle {
        pre_delete: Some(hook.clone()),
        in_place_update: Some(hook),
        ..Default::default()
    };
    let mut world = World {
        workload: Workload::cloneset(Some(&lifecycle)),
        pod: support::pod()
            .state("Normal")
            .finalizer("example.io/unready-blocker")
            .gated()
            .build(),
        deleted: false,
        foreign: vec![],
        crr_holds: false,
    };
    world.step(&Event::UpdateWanted).unwrap();
    assert_eq!(state(&world.pod), Some(State::PreparingUpdate));
    assert!(!kruise_api::pod::is_ready(&world.pod));
    world.settle().unwrap();
    assert_eq!(state(&world.pod), Some(State::Normal));
    assert!(kruise_api::pod::is_ready(&world.pod));
    world.step(&Event::DeleteWanted).unwrap();
    assert_eq!(state(&world.pod), Some(State::PreparingDelete));
    assert_eq!(
        kruise_api::pod::condition(&world.pod, KRUISE_POD_READY)
            .unwrap()
            .message
            .as_deref(),
        Some(r#"[{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#)
    );
    world.settle().unwrap();
    assert!(world.deleted);
}
