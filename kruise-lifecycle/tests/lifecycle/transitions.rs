//! The lifecycle-hook transitions of upstream `pkg/util/lifecycle/lifecycle_utils.go`, one row per transition edge
//! and workload difference: the decision, the next state, the exact metadata written, and the not-ready entries and
//! readiness afterwards.

// Test code: a panic is a failed test, and the tables index fixed arrays.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use crate::support::{
    NOW_ANNOTATION, PodBuilder, STATE, TIMESTAMP, finalizers, hook, lifecycle_keys, now, pod,
};
use kruise_api::lifecycle::{Lifecycle, LifecycleHook};
use kruise_lifecycle::{
    DeleteDecision, Error, Options, RefreshInput, Transition, UpdateDecision, Workload,
    WorkloadKind,
};

use WorkloadKind::{CloneSet, DaemonSet, StatefulSet};

#[derive(Clone, Copy, Debug)]
enum Trigger {
    Created,
    Scheduled,
    UpdateWanted,
    UpdateCompleted(bool),
    RolledBack(bool),
    HookRearmed,
    Refresh(RefreshInput),
    DeleteWanted,
    CancelDelete,
}

#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    /// Nothing to write; the state stays.
    Stay,
    /// The state moves to (or is written as) this value.
    Move(&'static str),
    /// An update/delete is held; the pod is (now) in this state.
    Hold(&'static str),
    /// Update now; `Some(state)` written with the in-place patch, `None` when no state is written.
    UpdateNow(Option<&'static str>),
    Delete,
    /// `cancel_delete` has nothing to cancel.
    NothingToCancel,
    /// An error whose message contains this text.
    Fails(&'static str),
}

struct Case {
    name: &'static str,
    kind: WorkloadKind,
    lifecycle: Option<Lifecycle>,
    options: Options,
    pod: PodBuilder,
    trigger: Trigger,
    outcome: Outcome,
    /// Lifecycle not-ready keys after applying the change (checked when `Some`).
    keys_after: Option<&'static [&'static str]>,
    /// `Ready` after applying the change (checked when `Some`).
    ready_after: Option<bool>,
    /// Labels (besides the state) and finalizers the change must write.
    extra_labels: &'static [(&'static str, &'static str)],
    added_finalizers: &'static [&'static str],
}

impl Case {
    fn new(
        name: &'static str,
        kind: WorkloadKind,
        pod: PodBuilder,
        trigger: Trigger,
        outcome: Outcome,
    ) -> Self {
        Self {
            name,
            kind,
            lifecycle: None,
            options: Options::default(),
            pod,
            trigger,
            outcome,
            keys_after: None,
            ready_after: None,
            extra_labels: &[],
            added_finalizers: &[],
        }
    }
    fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = Some(lifecycle);
        self
    }
    fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }
    fn keys_after(mut self, keys: &'static [&'static str]) -> Self {
        self.keys_after = Some(keys);
        self
    }
    fn ready_after(mut self, ready: bool) -> Self {
        self.ready_after = Some(ready);
        self
    }
    fn writes(
        mut self,
        labels: &'static [(&'static str, &'static str)],
        finalizers: &'static [&'static str],
    ) -> Self {
        self.extra_labels = labels;
        self.added_finalizers = finalizers;
        self
    }
}

const IN_PLACE_LABEL: (&str, &str) = ("example.com/unready-blocker-inplace", "true");
const DELETE_LABEL: (&str, &str) = ("example.com/unready-blocker-delete", "true");
const BLOCKER: &str = "example.io/unready-blocker";
const FOREIGN: &str = "kubernetes.io/foreign-owner";

fn in_place(hook: LifecycleHook) -> Lifecycle {
    Lifecycle {
        in_place_update: Some(hook),
        ..Default::default()
    }
}
fn pre_delete(hook: LifecycleHook) -> Lifecycle {
    Lifecycle {
        pre_delete: Some(hook),
        ..Default::default()
    }
}
fn pre_normal(hook: LifecycleHook) -> Lifecycle {
    Lifecycle {
        pre_normal: Some(hook),
        ..Default::default()
    }
}
fn label_hook(mark: bool) -> LifecycleHook {
    hook(&[IN_PLACE_LABEL], &[], mark)
}
fn finalizer_hook(mark: bool) -> LifecycleHook {
    hook(&[], &[BLOCKER], mark)
}
fn both_marked() -> Lifecycle {
    Lifecycle {
        in_place_update: Some(finalizer_hook(true)),
        pre_delete: Some(finalizer_hook(true)),
        ..Default::default()
    }
}

fn run(case: &Case) -> (Outcome, Option<Transition>) {
    let workload =
        Workload::new(case.kind, case.lifecycle.as_ref()).with_options(case.options.clone());
    let pod = case.pod.build();
    let now = now();
    let moved = |t: Transition| -> (Outcome, Option<Transition>) {
        if t.is_noop() {
            (Outcome::Stay, Some(t))
        } else {
            let to = t.to.as_ref().map_or("", |s| leak(s.as_str()));
            (Outcome::Move(to), Some(t))
        }
    };
    let result: Result<(Outcome, Option<Transition>), Error> = match case.trigger {
        Trigger::Created => Ok(moved(workload.created(&pod, &now))),
        Trigger::Scheduled => workload.scheduled(&pod, &now).map(moved),
        Trigger::UpdateCompleted(done) => workload.update_completed(&pod, done, &now).map(moved),
        Trigger::RolledBack(at) => workload.rolled_back(&pod, at, &now).map(moved),
        Trigger::HookRearmed => workload.hook_rearmed(&pod, &now).map(moved),
        Trigger::Refresh(input) => workload.refresh(&pod, input, &now).map(moved),
        Trigger::UpdateWanted => {
            workload
                .update_wanted(&pod, &now)
                .map(|decision| match decision {
                    UpdateDecision::Hold(t) => {
                        let to = t.to.as_ref().map_or("", |s| leak(s.as_str()));
                        (Outcome::Hold(to), Some(t))
                    }
                    UpdateDecision::UpdateNow(t) => {
                        let to = if t.is_noop() {
                            None
                        } else {
                            t.to.as_ref().map(|s| leak(s.as_str()))
                        };
                        (Outcome::UpdateNow(to), Some(t))
                    }
                })
        }
        Trigger::DeleteWanted => {
            workload
                .delete_wanted(&pod, &now)
                .map(|decision| match decision {
                    DeleteDecision::Hold(t) => {
                        let to = t.to.as_ref().map_or("", |s| leak(s.as_str()));
                        (Outcome::Hold(to), Some(t))
                    }
                    DeleteDecision::Delete => (Outcome::Delete, None),
                })
        }
        Trigger::CancelDelete => workload
            .cancel_delete(&pod, &now)
            .map(|cancel| match cancel {
                None => (Outcome::NothingToCancel, None),
                Some(t) => moved(t),
            }),
    };
    result.unwrap_or_else(|error| (Outcome::Fails(leak(&error.to_string())), None))
}

fn leak(value: &str) -> &'static str {
    Box::leak(value.to_owned().into_boxed_str())
}

fn check(case: &Case) {
    let name = case.name;
    let (outcome, transition) = run(case);
    match (&case.outcome, &outcome) {
        (Outcome::Fails(expected), Outcome::Fails(actual)) => {
            assert!(
                actual.contains(expected),
                "{name}: error {actual:?} lacks {expected:?}"
            );
            return;
        }
        (expected, actual) => assert_eq!(expected, actual, "{name}"),
    }
    let Some(transition) = transition else {
        return;
    };
    let before = case.pod.build();
    let after = transition.apply(&before);
    let metadata = &transition.change.metadata;

    // The state label and its timestamp are written exactly when the state changes, and with every in-place
    // update that writes `Updating` (upstream re-applies it on every re-patch).
    if transition.changes_state() || matches!(outcome, Outcome::UpdateNow(Some(_))) {
        let to = transition.to.as_ref().unwrap().as_str();
        assert_eq!(
            metadata.labels.get(STATE).map(String::as_str),
            Some(to),
            "{name}"
        );
        assert_eq!(
            metadata.annotations.get(TIMESTAMP).map(String::as_str),
            Some(NOW_ANNOTATION),
            "{name}"
        );
        assert_eq!(kruise_api::pod::label(&after, STATE), Some(to), "{name}");
    } else {
        assert!(
            !metadata.labels.contains_key(STATE),
            "{name}: state rewritten"
        );
        assert!(
            metadata.annotations.is_empty(),
            "{name}: timestamp without a state change"
        );
    }
    for (key, value) in case.extra_labels {
        assert_eq!(
            metadata.labels.get(*key).map(String::as_str),
            Some(*value),
            "{name}"
        );
    }
    let written: Vec<&str> = metadata
        .labels
        .keys()
        .map(String::as_str)
        .filter(|k| *k != STATE)
        .collect();
    let expected: Vec<&str> = case.extra_labels.iter().map(|(k, _)| *k).collect();
    assert_eq!(written, expected, "{name}: labels written");
    assert_eq!(
        metadata.finalizers, case.added_finalizers,
        "{name}: finalizers added"
    );

    // Nothing is ever taken away from the pod's finalizers.
    let kept = finalizers(&after);
    for finalizer in finalizers(&before) {
        assert!(kept.contains(&finalizer), "{name}: lost {finalizer}");
    }
    if let Some(keys) = case.keys_after {
        assert_eq!(lifecycle_keys(&after), keys, "{name}: not-ready keys");
        let kpr = kruise_api::pod::condition(&after, support::KRUISE_POD_READY).unwrap();
        assert_eq!(
            kpr.status,
            if keys.is_empty() { "True" } else { "False" },
            "{name}"
        );
    }
    if let Some(ready) = case.ready_after {
        assert_eq!(kruise_api::pod::is_ready(&after), ready, "{name}: Ready");
    }
}

fn cases() -> Vec<Case> {
    use Outcome::*;
    use Trigger::*;
    let completed = RefreshInput {
        update_completed: true,
        ..Default::default()
    };
    let rolled_back = RefreshInput {
        at_update_revision: true,
        ..Default::default()
    };
    vec![
        // --- pod created ---
        Case::new(
            "cloneset creates in PreparingNormal",
            CloneSet,
            pod(),
            Created,
            Move("PreparingNormal"),
        ),
        Case::new(
            "cloneset creates in PreparingNormal even when all-hooked",
            CloneSet,
            pod().label(IN_PLACE_LABEL.0, IN_PLACE_LABEL.1),
            Created,
            Move("PreparingNormal"),
        )
        .lifecycle(pre_normal(label_hook(false))),
        Case::new(
            "asts creates in Normal without preNormal",
            StatefulSet,
            pod(),
            Created,
            Move("Normal"),
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "asts creates in PreparingNormal while preNormal is not all-hooked",
            StatefulSet,
            pod(),
            Created,
            Move("PreparingNormal"),
        )
        .lifecycle(pre_normal(label_hook(false))),
        Case::new(
            "asts creates in Normal when the template is all-hooked",
            StatefulSet,
            pod().label(IN_PLACE_LABEL.0, IN_PLACE_LABEL.1),
            Created,
            Move("Normal"),
        )
        .lifecycle(pre_normal(label_hook(false))),
        Case::new(
            "ads creates without a state",
            DaemonSet,
            pod(),
            Created,
            Stay,
        )
        .lifecycle(pre_delete(label_hook(false))),
        // --- scheduled / preNormal done: PreparingNormal -> Normal ---
        Case::new(
            "cloneset waits for scheduling",
            CloneSet,
            pod().state("PreparingNormal"),
            Scheduled,
            Stay,
        ),
        Case::new(
            "cloneset scheduled -> Normal",
            CloneSet,
            pod().state("PreparingNormal").scheduled(),
            Scheduled,
            Move("Normal"),
        ),
        Case::new(
            "cloneset without the scheduling wait -> Normal",
            CloneSet,
            pod().state("PreparingNormal"),
            Scheduled,
            Move("Normal"),
        )
        .options(Options::default().wait_for_scheduling(false)),
        Case::new(
            "cloneset preNormal not all-hooked stays",
            CloneSet,
            pod().state("PreparingNormal").scheduled(),
            Scheduled,
            Stay,
        )
        .lifecycle(pre_normal(hook(&[IN_PLACE_LABEL], &[BLOCKER], false))),
        Case::new(
            "cloneset preNormal all-hooked -> Normal (scheduling not required)",
            CloneSet,
            pod()
                .state("PreparingNormal")
                .label(IN_PLACE_LABEL.0, "true")
                .finalizer(BLOCKER),
            Scheduled,
            Move("Normal"),
        )
        .lifecycle(pre_normal(hook(&[IN_PLACE_LABEL], &[BLOCKER], false))),
        Case::new(
            "asts -> Normal without scheduling",
            StatefulSet,
            pod().state("PreparingNormal"),
            Scheduled,
            Move("Normal"),
        ),
        Case::new(
            "asts preNormal not all-hooked stays",
            StatefulSet,
            pod().state("PreparingNormal"),
            Scheduled,
            Stay,
        )
        .lifecycle(pre_normal(label_hook(false))),
        Case::new(
            "ads never leaves a state it does not write",
            DaemonSet,
            pod().state("PreparingNormal"),
            Scheduled,
            Stay,
        ),
        Case::new(
            "scheduled is a no-op outside PreparingNormal",
            CloneSet,
            pod().state("Updated").scheduled(),
            Scheduled,
            Stay,
        ),
        // --- in-place update wanted ---
        Case::new(
            "cloneset Normal unhooked updates now",
            CloneSet,
            pod().state("Normal"),
            UpdateWanted,
            UpdateNow(Some("Updating")),
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "cloneset without state updates now, writing Updating",
            CloneSet,
            pod(),
            UpdateWanted,
            UpdateNow(Some("Updating")),
        ),
        Case::new(
            "asts without state updates now, writing no state",
            StatefulSet,
            pod(),
            UpdateWanted,
            UpdateNow(None),
        ),
        Case::new(
            "asts Normal updates now, writing Updating",
            StatefulSet,
            pod().state("Normal"),
            UpdateWanted,
            UpdateNow(Some("Updating")),
        ),
        Case::new(
            "PreparingNormal hooked -> PreparingUpdate",
            CloneSet,
            pod()
                .state("PreparingNormal")
                .label(IN_PLACE_LABEL.0, "true"),
            UpdateWanted,
            Hold("PreparingUpdate"),
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "Normal hooked (one finalizer of two is enough) -> PreparingUpdate",
            StatefulSet,
            pod().state("Normal").finalizer("b"),
            UpdateWanted,
            Hold("PreparingUpdate"),
        )
        .lifecycle(in_place(hook(&[], &["a", "b"], false))),
        Case::new(
            "markPodNotReady: PreparingUpdate adds preUpdateHook and drops Ready",
            CloneSet,
            pod().state("Normal").finalizer(BLOCKER).gated(),
            UpdateWanted,
            Hold("PreparingUpdate"),
        )
        .lifecycle(both_marked())
        .keys_after(&["preUpdateHook"])
        .ready_after(false),
        Case::new(
            "markPodNotReady without the gate writes no condition",
            CloneSet,
            pod().state("Normal").finalizer(BLOCKER),
            UpdateWanted,
            Hold("PreparingUpdate"),
        )
        .lifecycle(both_marked()),
        Case::new(
            "PreparingUpdate still hooked waits",
            CloneSet,
            pod()
                .state("PreparingUpdate")
                .label(IN_PLACE_LABEL.0, "true"),
            UpdateWanted,
            Hold("PreparingUpdate"),
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "hook released: PreparingUpdate -> Updating",
            CloneSet,
            pod()
                .state("PreparingUpdate")
                .label(IN_PLACE_LABEL.0, "false"),
            UpdateWanted,
            UpdateNow(Some("Updating")),
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "hook released keeps the pod not-ready while Updating",
            StatefulSet,
            pod()
                .state("PreparingUpdate")
                .gated()
                .entry("preUpdateHook"),
            UpdateWanted,
            UpdateNow(Some("Updating")),
        )
        .lifecycle(both_marked())
        .keys_after(&["preUpdateHook"])
        .ready_after(false),
        Case::new(
            "Updating updates again",
            CloneSet,
            pod().state("Updating"),
            UpdateWanted,
            UpdateNow(Some("Updating")),
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "newer revision while Updated re-arms the hook in the same patch",
            CloneSet,
            pod()
                .state("Updated")
                .label(IN_PLACE_LABEL.0, "false")
                .finalizer(FOREIGN),
            UpdateWanted,
            Hold("PreparingUpdate"),
        )
        .lifecycle(in_place(hook(&[IN_PLACE_LABEL], &[BLOCKER], false)))
        .writes(&[IN_PLACE_LABEL], &[BLOCKER]),
        Case::new(
            "newer revision while Updated with markPodNotReady",
            StatefulSet,
            pod().state("Updated").finalizer(FOREIGN).gated(),
            UpdateWanted,
            Hold("PreparingUpdate"),
        )
        .lifecycle(both_marked())
        .writes(&[], &[BLOCKER])
        .keys_after(&["preUpdateHook"])
        .ready_after(false),
        Case::new(
            "newer revision while Updated, label-only hook: no finalizers written",
            CloneSet,
            pod().state("Updated").finalizer(FOREIGN),
            UpdateWanted,
            Hold("PreparingUpdate"),
        )
        .lifecycle(in_place(label_hook(false)))
        .writes(&[IN_PLACE_LABEL], &[]),
        Case::new(
            "Updated without an inPlaceUpdate hook waits for refresh",
            CloneSet,
            pod().state("Updated"),
            UpdateWanted,
            Hold("Updated"),
        )
        .lifecycle(pre_delete(label_hook(false))),
        Case::new(
            "no update in PreparingDelete",
            CloneSet,
            pod().state("PreparingDelete"),
            UpdateWanted,
            Fails(
                "pod demo/web-x7k2p: in-place update is not allowed in lifecycle state \"PreparingDelete\"",
            ),
        ),
        Case::new(
            "no update in an unknown state",
            StatefulSet,
            pod().state("Hibernating"),
            UpdateWanted,
            Fails("\"Hibernating\""),
        ),
        Case::new(
            "ads ignores the inPlaceUpdate hook",
            DaemonSet,
            pod().label(IN_PLACE_LABEL.0, "true"),
            UpdateWanted,
            UpdateNow(None),
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "ads does not update a pod being deleted",
            DaemonSet,
            pod().state("PreparingDelete"),
            UpdateWanted,
            Fails("PreparingDelete"),
        ),
        // --- update completed: Updating -> Updated / Normal ---
        Case::new(
            "Updating waits for completion",
            CloneSet,
            pod().state("Updating"),
            UpdateCompleted(false),
            Stay,
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "completed, hook not re-armed -> Updated, preUpdateHook removed",
            CloneSet,
            pod().state("Updating").gated().entry("preUpdateHook"),
            UpdateCompleted(true),
            Move("Updated"),
        )
        .lifecycle(both_marked())
        .keys_after(&[])
        .ready_after(true),
        Case::new(
            "completed, hook already re-armed -> Normal, preUpdateHook removed",
            StatefulSet,
            pod()
                .state("Updating")
                .finalizer(BLOCKER)
                .gated()
                .entry("preUpdateHook"),
            UpdateCompleted(true),
            Move("Normal"),
        )
        .lifecycle(both_marked())
        .keys_after(&[])
        .ready_after(true),
        Case::new(
            "completed without a lifecycle -> Normal",
            CloneSet,
            pod().state("Updating"),
            UpdateCompleted(true),
            Move("Normal"),
        ),
        Case::new(
            "completed with a lifecycle but no inPlaceUpdate hook -> Updated",
            CloneSet,
            pod().state("Updating"),
            UpdateCompleted(true),
            Move("Updated"),
        )
        .lifecycle(pre_delete(label_hook(false))),
        Case::new(
            "completion only matters in Updating",
            CloneSet,
            pod().state("Normal"),
            UpdateCompleted(true),
            Stay,
        ),
        // --- rollback while held in PreparingUpdate ---
        Case::new(
            "rollback, hook released -> Updated",
            CloneSet,
            pod()
                .state("PreparingUpdate")
                .gated()
                .entry("preUpdateHook"),
            RolledBack(true),
            Move("Updated"),
        )
        .lifecycle(both_marked())
        .keys_after(&[]),
        Case::new(
            "rollback, still all-hooked -> Normal, preUpdateHook removed",
            CloneSet,
            pod()
                .state("PreparingUpdate")
                .finalizer(BLOCKER)
                .gated()
                .entry("preUpdateHook"),
            RolledBack(true),
            Move("Normal"),
        )
        .lifecycle(both_marked())
        .keys_after(&[])
        .ready_after(true),
        Case::new(
            "not at the update revision: no rollback",
            StatefulSet,
            pod().state("PreparingUpdate"),
            RolledBack(false),
            Stay,
        )
        .lifecycle(both_marked()),
        // --- hook re-armed: Updated -> Normal ---
        Case::new(
            "Updated, hook not re-armed, stays",
            CloneSet,
            pod().state("Updated").label(IN_PLACE_LABEL.0, "false"),
            HookRearmed,
            Stay,
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "Updated, hook re-armed -> Normal",
            CloneSet,
            pod().state("Updated").label(IN_PLACE_LABEL.0, "true"),
            HookRearmed,
            Move("Normal"),
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "Updated, every finalizer needed to count as re-armed",
            StatefulSet,
            pod().state("Updated").finalizer("a"),
            HookRearmed,
            Stay,
        )
        .lifecycle(in_place(hook(&[], &["a", "b"], false))),
        Case::new(
            "Updated without an inPlaceUpdate hook -> Normal",
            CloneSet,
            pod().state("Updated"),
            HookRearmed,
            Move("Normal"),
        )
        .lifecycle(pre_delete(label_hook(false))),
        Case::new(
            "Updated without a lifecycle -> Normal",
            StatefulSet,
            pod().state("Updated"),
            HookRearmed,
            Move("Normal"),
        ),
        // --- refresh dispatches by state ---
        Case::new(
            "refresh in PreparingNormal",
            CloneSet,
            pod().state("PreparingNormal").scheduled(),
            Refresh(RefreshInput::default()),
            Move("Normal"),
        ),
        Case::new(
            "refresh in PreparingUpdate at the update revision",
            CloneSet,
            pod().state("PreparingUpdate"),
            Refresh(rolled_back),
            Move("Normal"),
        ),
        Case::new(
            "refresh in Updating once completed",
            StatefulSet,
            pod().state("Updating"),
            Refresh(completed),
            Move("Normal"),
        ),
        Case::new(
            "refresh in Updated",
            CloneSet,
            pod().state("Updated"),
            Refresh(RefreshInput::default()),
            Move("Normal"),
        ),
        Case::new(
            "refresh leaves Normal alone",
            CloneSet,
            pod().state("Normal"),
            Refresh(completed),
            Stay,
        ),
        Case::new(
            "refresh leaves PreparingDelete alone",
            CloneSet,
            pod().state("PreparingDelete"),
            Refresh(completed),
            Stay,
        ),
        Case::new(
            "refresh does nothing for ads",
            DaemonSet,
            pod().state("Updated"),
            Refresh(completed),
            Stay,
        ),
        // --- delete wanted ---
        Case::new(
            "no preDelete hook: delete",
            CloneSet,
            pod().state("Normal"),
            DeleteWanted,
            Delete,
        )
        .lifecycle(in_place(label_hook(false))),
        Case::new(
            "hooked: PreparingDelete instead of deleting",
            CloneSet,
            pod().state("Normal").label(DELETE_LABEL.0, "true"),
            DeleteWanted,
            Hold("PreparingDelete"),
        )
        .lifecycle(pre_delete(hook(&[DELETE_LABEL], &[], false))),
        Case::new(
            "hooked with markPodNotReady: preDeleteHook added",
            StatefulSet,
            pod().state("Normal").finalizer(BLOCKER).gated(),
            DeleteWanted,
            Hold("PreparingDelete"),
        )
        .lifecycle(both_marked())
        .keys_after(&["preDeleteHook"])
        .ready_after(false),
        Case::new(
            "hooked while Updating keeps preUpdateHook too",
            CloneSet,
            pod()
                .state("Updating")
                .finalizer(BLOCKER)
                .gated()
                .entry("preUpdateHook"),
            DeleteWanted,
            Hold("PreparingDelete"),
        )
        .lifecycle(both_marked())
        .keys_after(&["preDeleteHook", "preUpdateHook"]),
        Case::new(
            "still hooked in PreparingDelete: nothing to write",
            CloneSet,
            pod()
                .state("PreparingDelete")
                .finalizer(BLOCKER)
                .gated()
                .entry("preDeleteHook"),
            DeleteWanted,
            Hold("PreparingDelete"),
        )
        .lifecycle(both_marked()),
        Case::new(
            "still hooked in PreparingDelete: a lost entry is re-added",
            CloneSet,
            pod().state("PreparingDelete").finalizer(BLOCKER).gated(),
            DeleteWanted,
            Hold("PreparingDelete"),
        )
        .lifecycle(both_marked())
        .keys_after(&["preDeleteHook"]),
        Case::new(
            "hook released in PreparingDelete: delete",
            StatefulSet,
            pod()
                .state("PreparingDelete")
                .gated()
                .entry("preDeleteHook"),
            DeleteWanted,
            Delete,
        )
        .lifecycle(both_marked()),
        Case::new(
            "ads honours preDelete",
            DaemonSet,
            pod().label(DELETE_LABEL.0, "true"),
            DeleteWanted,
            Hold("PreparingDelete"),
        )
        .lifecycle(pre_delete(hook(&[DELETE_LABEL], &[], false))),
        Case::new(
            "ads released: delete",
            DaemonSet,
            pod().state("PreparingDelete"),
            DeleteWanted,
            Delete,
        )
        .lifecycle(pre_delete(hook(&[DELETE_LABEL], &[], false))),
        // --- scale-up cancels PreparingDelete (CloneSet) ---
        Case::new(
            "scale-up cancels: PreparingDelete -> PreparingNormal",
            CloneSet,
            pod().state("PreparingDelete").label(DELETE_LABEL.0, "true"),
            CancelDelete,
            Move("PreparingNormal"),
        )
        .lifecycle(pre_delete(hook(&[DELETE_LABEL], &[], false))),
        Case::new(
            "no cancel once a hook marks pods not-ready",
            CloneSet,
            pod().state("PreparingDelete"),
            CancelDelete,
            NothingToCancel,
        )
        .lifecycle(Lifecycle {
            in_place_update: Some(label_hook(true)),
            pre_delete: Some(hook(&[DELETE_LABEL], &[], false)),
            ..Default::default()
        }),
        Case::new(
            "nothing to cancel outside PreparingDelete",
            CloneSet,
            pod().state("Normal"),
            CancelDelete,
            NothingToCancel,
        ),
        Case::new(
            "cancel drops a preDeleteHook left from an older configuration",
            CloneSet,
            pod()
                .state("PreparingDelete")
                .gated()
                .entry("preDeleteHook"),
            CancelDelete,
            Move("PreparingNormal"),
        )
        .lifecycle(pre_delete(label_hook(false)))
        .keys_after(&[])
        .ready_after(true),
        Case::new(
            "asts never cancels",
            StatefulSet,
            pod().state("PreparingDelete"),
            CancelDelete,
            Fails("Advanced StatefulSet does not cancel a PreparingDelete on scale-up"),
        ),
        Case::new(
            "ads never cancels",
            DaemonSet,
            pod().state("PreparingDelete"),
            CancelDelete,
            Fails("Advanced DaemonSet does not cancel"),
        ),
    ]
}

#[test]
fn spec_3d_transition_table() {
    let cases = cases();
    for case in &cases {
        check(case);
    }
    assert!(cases.len() >= 60, "{} rows", cases.len());
}

#[test]
fn hold_decisions_that_stay_write_nothing() {
    let lifecycle = in_place(label_hook(false));
    let workload = Workload::cloneset(Some(&lifecycle));
    let pod = pod()
        .state("PreparingUpdate")
        .label(IN_PLACE_LABEL.0, "true")
        .build();
    let decision = workload.update_wanted(&pod, &now()).unwrap();
    assert!(!decision.is_update_now());
    assert!(decision.transition().is_noop());
    assert!(
        decision
            .transition()
            .change
            .metadata
            .strategic_merge_patch()
            .is_none()
    );
}

#[test]
fn hook_labels_with_quotes_survive_the_patch() {
    // Upstream builds this patch with Sprintf and would emit `"k":"a"b"`, which the API server rejects.
    let tricky = r#"say "hi" \ bye"#;
    let lifecycle = in_place(LifecycleHook {
        labels_handler: [("example.com/quote\"key".to_owned(), tricky.to_owned())].into(),
        ..Default::default()
    });
    let workload = Workload::cloneset(Some(&lifecycle));
    let pod = pod().state("Updated").build();
    let UpdateDecision::Hold(held) = workload.update_wanted(&pod, &now()).unwrap() else {
        panic!("must hold");
    };
    let patch = held.change.metadata.strategic_merge_patch().unwrap();
    let reparsed: serde_json::Value = serde_json::from_str(&patch.to_string()).unwrap();
    assert_eq!(
        reparsed["metadata"]["labels"]["example.com/quote\"key"],
        tricky
    );
    assert_eq!(reparsed["metadata"]["labels"][STATE], "PreparingUpdate");
    assert_eq!(
        reparsed["metadata"]["annotations"][TIMESTAMP],
        NOW_ANNOTATION
    );
    assert!(reparsed["metadata"].get("finalizers").is_none());
}

#[test]
fn status_patches_carry_the_resource_version() {
    let lifecycle = both_marked();
    let workload = Workload::stateful_set(Some(&lifecycle));
    let pod = pod().state("Normal").finalizer(BLOCKER).gated().build();
    let DeleteDecision::Hold(held) = workload.delete_wanted(&pod, &now()).unwrap() else {
        panic!("must hold");
    };
    let patch = held.change.status.strategic_merge_patch(&pod).unwrap();
    assert_eq!(patch["metadata"]["resourceVersion"], "1000");
    let conditions = patch["status"]["conditions"].as_array().unwrap();
    let kpr = conditions
        .iter()
        .find(|c| c["type"] == "KruisePodReady")
        .unwrap();
    assert_eq!(kpr["status"], "False");
    assert_eq!(
        kpr["message"],
        r#"[{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#
    );
    assert_eq!(kpr["lastTransitionTime"], "2024-05-01T02:00:00Z");
    let ready = conditions.iter().find(|c| c["type"] == "Ready").unwrap();
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "ReadinessGatesNotReady");
}
