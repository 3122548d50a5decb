//! The lifecycle state machine of one workload's pods (upstream `pkg/util/lifecycle/lifecycle_utils.go` and each
//! workload's `refreshPodState`): one method per trigger.
//!
//! | Trigger | Method | `CloneSet` | Advanced `StatefulSet` | Advanced `DaemonSet` |
//! |---|---|---|---|---|
//! | pod about to be created | [`Workload::created`] | `PreparingNormal` | `Normal`, or `PreparingNormal` while a preNormal hook is not all-hooked | no state |
//! | created pod settles | [`Workload::scheduled`] | `PreparingNormal → Normal` once scheduled (no preNormal hook) or all-hooked | `→ Normal` when no preNormal hook or all-hooked | — |
//! | in-place update wanted | [`Workload::update_wanted`] | hold in `PreparingUpdate` while hooked, else update (`→ Updating`) | same; `Updating` only written on pods that have a state label | update, no state |
//! | inPlaceUpdate hook released | [`Workload::update_wanted`] in `PreparingUpdate` | `→ Updating` with the update | same | — |
//! | update completed | [`Workload::update_completed`] | `Updating → Updated` (hook not all-hooked) or `→ Normal` | same | — |
//! | rollback while held | [`Workload::rolled_back`] | `PreparingUpdate → Updated`/`Normal` | same | — |
//! | hook re-armed | [`Workload::hook_rearmed`] | `Updated → Normal` | same | — |
//! | newer revision while `Updated` | [`Workload::update_wanted`] in `Updated` | `→ PreparingUpdate`, re-arming the hook's labels and finalizers | same | — |
//! | delete wanted | [`Workload::delete_wanted`] | hold in `PreparingDelete` while hooked, else delete | same | same |
//! | scale-up | [`Workload::cancel_delete`] | `PreparingDelete → PreparingNormal` unless a hook marks pods not-ready | — | — |
//!
//! [`Workload::refresh`] runs the refresh-time triggers (`scheduled`, `rolled_back`, `update_completed`,
//! `hook_rearmed`) for whatever state the pod is in, as upstream's `refreshPodState` does every reconcile.
//!
//! Not-ready entries ([`crate::not_ready`]): entering `PreparingUpdate` adds `{Lifecycle, preUpdateHook}` and
//! entering (or staying in) `PreparingDelete` adds `{Lifecycle, preDeleteHook}` when the hook has
//! `markPodNotReady`; entering any state where an entry no longer belongs removes it (`preUpdateHook` belongs
//! to `PreparingUpdate`, `Updating` and `PreparingDelete`, `preDeleteHook` to `PreparingDelete` only).

use std::fmt;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Zoned;
use kruise_api::lifecycle::{Lifecycle, LifecycleHook, LifecycleStateType};

use crate::change::{MetadataChange, PodChange, StatusChange};
use crate::error::{Error, PodName};
use crate::hook::{arm, is_all_hooked, is_hooked};
use crate::not_ready::{
    add_not_ready_key, has_gate, pre_delete_entry, pre_update_entry, remove_not_ready_key,
};
use crate::state::{set_state, state};
use crate::transition::{DeleteDecision, RefreshInput, Transition, UpdateDecision, UpdateGate};

/// The workload kinds whose pods have a lifecycle; their state machines differ in the details listed in
/// the [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// `apps.kruise.io` `CloneSet`.
    CloneSet,
    /// `apps.kruise.io` `StatefulSet` (Advanced `StatefulSet`).
    StatefulSet,
    /// `apps.kruise.io` `DaemonSet` (Advanced `DaemonSet`): only the preDelete hook is honoured.
    DaemonSet,
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CloneSet => "CloneSet",
            Self::StatefulSet => "Advanced StatefulSet",
            Self::DaemonSet => "Advanced DaemonSet",
        })
    }
}

/// Switches that change lifecycle decisions.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// `CloneSet` without a preNormal hook moves a pod from `PreparingNormal` to `Normal` only once it is
    /// scheduled (`spec.nodeName` set), so that the label change does not race an old kube-scheduler's bind
    /// (upstream issue #1485; upstream HEAD behaviour, default `true`). `false` gives the v1.4–v1.5
    /// behaviour: `Normal` at the first refresh.
    pub wait_for_scheduling: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            wait_for_scheduling: true,
        }
    }
}

impl Options {
    /// Sets [`Options::wait_for_scheduling`].
    #[must_use]
    pub fn wait_for_scheduling(mut self, wait: bool) -> Self {
        self.wait_for_scheduling = wait;
        self
    }
}

/// One workload's lifecycle configuration: its kind and `spec.lifecycle`. Every method is a pure decision
/// for one pod at `now`; `now` also gives the time zone of the lifecycle timestamp (upstream uses the
/// controller's local zone).
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
/// use kruise_api::lifecycle::{Lifecycle, LifecycleHook};
/// use kruise_lifecycle::{DeleteDecision, LifecycleStateType, Workload};
///
/// let lifecycle = Lifecycle {
///     pre_delete: Some(LifecycleHook {
///         finalizers_handler: vec!["example.com/unregister".into()],
///         ..Default::default()
///     }),
///     ..Default::default()
/// };
/// let daemonset = Workload::daemon_set(Some(&lifecycle));
/// let now = Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC);
///
/// let mut pod = Pod::default();
/// pod.metadata.finalizers = Some(vec!["example.com/unregister".into()]);
/// let DeleteDecision::Hold(held) = daemonset.delete_wanted(&pod, &now)? else { panic!() };
/// assert_eq!(held.to, Some(LifecycleStateType::PreparingDelete));
/// let pod = held.apply(&pod);
///
/// // The user's operator unregisters the pod and removes its finalizer: now it may go.
/// let mut released = pod.clone();
/// released.metadata.finalizers = Some(vec![]);
/// assert_eq!(daemonset.delete_wanted(&released, &now)?, DeleteDecision::Delete);
/// # Ok::<(), kruise_lifecycle::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Workload<'a> {
    kind: WorkloadKind,
    lifecycle: Option<&'a Lifecycle>,
    options: Options,
}

impl<'a> Workload<'a> {
    /// A workload of `kind` with `spec.lifecycle` (`None` when unset) and default options.
    #[must_use]
    pub fn new(kind: WorkloadKind, lifecycle: Option<&'a Lifecycle>) -> Self {
        Self {
            kind,
            lifecycle,
            options: Options::default(),
        }
    }

    /// A `CloneSet` with `spec.lifecycle`.
    #[must_use]
    pub fn cloneset(lifecycle: Option<&'a Lifecycle>) -> Self {
        Self::new(WorkloadKind::CloneSet, lifecycle)
    }

    /// An Advanced `StatefulSet` with `spec.lifecycle`.
    #[must_use]
    pub fn stateful_set(lifecycle: Option<&'a Lifecycle>) -> Self {
        Self::new(WorkloadKind::StatefulSet, lifecycle)
    }

    /// An Advanced `DaemonSet` with `spec.lifecycle` (only `preDelete` is honoured).
    #[must_use]
    pub fn daemon_set(lifecycle: Option<&'a Lifecycle>) -> Self {
        Self::new(WorkloadKind::DaemonSet, lifecycle)
    }

    /// Replaces the options.
    #[must_use]
    pub fn with_options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The workload kind.
    #[must_use]
    pub fn kind(&self) -> WorkloadKind {
        self.kind
    }

    /// The workload's `spec.lifecycle`.
    #[must_use]
    pub fn lifecycle(&self) -> Option<&'a Lifecycle> {
        self.lifecycle
    }

    /// The options in use.
    #[must_use]
    pub fn options(&self) -> &Options {
        &self.options
    }

    fn pre_normal(&self) -> Option<&'a LifecycleHook> {
        self.lifecycle.and_then(|l| l.pre_normal.as_ref())
    }

    fn in_place_update(&self) -> Option<&'a LifecycleHook> {
        self.lifecycle.and_then(|l| l.in_place_update.as_ref())
    }

    fn pre_delete(&self) -> Option<&'a LifecycleHook> {
        self.lifecycle.and_then(|l| l.pre_delete.as_ref())
    }

    /// The state a pod is created in, written into the pod about to be created (`pod` is the new pod, built
    /// from the template, so its labels and finalizers are the template's).
    ///
    /// `CloneSet`: always `PreparingNormal`. Advanced `StatefulSet`: `Normal`, unless a preNormal hook exists and
    /// the new pod is not all-hooked, then `PreparingNormal`. Advanced `DaemonSet`: no state (nothing to write).
    #[must_use]
    pub fn created(&self, pod: &Pod, now: &Zoned) -> Transition {
        let to = match self.kind {
            WorkloadKind::CloneSet => LifecycleStateType::PreparingNormal,
            WorkloadKind::StatefulSet => match self.pre_normal() {
                Some(hook) if !is_all_hooked(Some(hook), pod) => {
                    LifecycleStateType::PreparingNormal
                }
                _ => LifecycleStateType::Normal,
            },
            WorkloadKind::DaemonSet => return Transition::stay(pod),
        };
        Transition {
            from: state(pod),
            change: PodChange {
                metadata: set_state(&to, now),
                ..PodChange::default()
            },
            to: Some(to),
        }
    }

    /// `PreparingNormal → Normal` (refresh): `CloneSet` without a preNormal hook once the pod is scheduled
    /// (see [`Options::wait_for_scheduling`]), with one once it is all-hooked; Advanced `StatefulSet` when there
    /// is no preNormal hook or the pod is all-hooked. A no-op in any other state, and for Advanced `DaemonSet`.
    ///
    /// # Errors
    /// [`Error::NotReadyMessage`] when a stale lifecycle not-ready entry must be removed and the pod's
    /// `KruisePodReady` message does not parse.
    pub fn scheduled(&self, pod: &Pod, now: &Zoned) -> Result<Transition, Error> {
        if self.kind == WorkloadKind::DaemonSet
            || state(pod) != Some(LifecycleStateType::PreparingNormal)
        {
            return Ok(Transition::stay(pod));
        }
        let ready = match self.pre_normal() {
            Some(hook) => is_all_hooked(Some(hook), pod),
            None => {
                self.kind != WorkloadKind::CloneSet
                    || !self.options.wait_for_scheduling
                    || is_scheduled(pod)
            }
        };
        if ready {
            self.move_to(pod, &LifecycleStateType::Normal, now, None)
        } else {
            Ok(Transition::stay(pod))
        }
    }

    /// The caller wants to update `pod` in place now (it can be updated in place, and the rollout picked it).
    ///
    /// * no state, `PreparingNormal`, `Normal`: when the inPlaceUpdate hook holds the pod, hold it in
    ///   `PreparingUpdate` (adding `preUpdateHook` when the hook marks pods not-ready); otherwise update now.
    /// * `Updated` (a newer revision arrived): hold it in `PreparingUpdate`, re-arming the hook's labels and
    ///   finalizers in the same write; with no inPlaceUpdate hook, hold without writing anything (the next
    ///   [`refresh`](Self::refresh) moves the pod to `Normal`).
    /// * `PreparingUpdate`: hold while hooked; once the hook is released, update now.
    /// * `Updating`: update now (re-patch).
    ///
    /// "Update now" carries the `Updating` state (`CloneSet` always; Advanced `StatefulSet` only for a pod that
    /// already has a state label) to write together with the in-place patch. Advanced `DaemonSet` ignores the
    /// inPlaceUpdate hook: update now, writing no state.
    ///
    /// # Errors
    /// [`Error::UpdateNotAllowed`] in `PreparingDelete` or an unknown state; [`Error::NotReadyMessage`] when
    /// the pod's `KruisePodReady` message does not parse.
    pub fn update_wanted(&self, pod: &Pod, now: &Zoned) -> Result<UpdateDecision, Error> {
        self.update_wanted_in(pod, state(pod), now)
    }

    /// [`update_wanted`](Self::update_wanted) for a pod whose lifecycle state the caller already read:
    /// `current` must be the pod's state as [`crate::state::state`] reads it. Planners that keep per-pod
    /// facts use it so as not to look the label up again.
    ///
    /// # Errors
    /// As [`update_wanted`](Self::update_wanted).
    pub fn update_wanted_in(
        &self,
        pod: &Pod,
        current: Option<LifecycleStateType>,
        now: &Zoned,
    ) -> Result<UpdateDecision, Error> {
        Ok(match self.update_gate_in(pod, current.clone(), now)? {
            UpdateGate::Hold(held) => UpdateDecision::Hold(held),
            UpdateGate::Proceed => {
                UpdateDecision::UpdateNow(self.updating_transition(current, now))
            }
        })
    }

    /// [`update_wanted_in`](Self::update_wanted_in) without building the "update now" transition, which
    /// depends only on the pod's state and `now`: [`UpdateGate::Proceed`] stands for
    /// `UpdateDecision::UpdateNow(self.updating_transition(current, now))`. A planner updating thousands of
    /// pods builds that transition once per state instead of once per pod.
    ///
    /// # Errors
    /// As [`update_wanted`](Self::update_wanted).
    pub fn update_gate_in(
        &self,
        pod: &Pod,
        current: Option<LifecycleStateType>,
        now: &Zoned,
    ) -> Result<UpdateGate, Error> {
        if self.kind == WorkloadKind::DaemonSet {
            return match current {
                Some(LifecycleStateType::PreparingDelete) => Err(not_allowed(pod, current)),
                _ => Ok(UpdateGate::Proceed),
            };
        }
        let hook = self.in_place_update();
        match current {
            None | Some(LifecycleStateType::PreparingNormal | LifecycleStateType::Normal) => {
                if is_hooked(hook, pod) {
                    let held =
                        self.move_to(pod, &LifecycleStateType::PreparingUpdate, now, None)?;
                    Ok(UpdateGate::Hold(held))
                } else {
                    Ok(UpdateGate::Proceed)
                }
            }
            Some(LifecycleStateType::Updated) => match hook {
                None => Ok(UpdateGate::Hold(Transition::stay(pod))),
                Some(hook) => {
                    let held = self.move_to(
                        pod,
                        &LifecycleStateType::PreparingUpdate,
                        now,
                        Some(arm(hook)),
                    )?;
                    Ok(UpdateGate::Hold(held))
                }
            },
            Some(LifecycleStateType::PreparingUpdate) => {
                if is_hooked(hook, pod) {
                    Ok(UpdateGate::Hold(Transition::stay(pod)))
                } else {
                    Ok(UpdateGate::Proceed)
                }
            }
            Some(LifecycleStateType::Updating) => Ok(UpdateGate::Proceed),
            Some(LifecycleStateType::PreparingDelete | LifecycleStateType::Unknown(_)) => {
                Err(not_allowed(pod, current))
            }
        }
    }

    /// The transition written with an in-place patch ("update now") for a pod in state `from`: `Updating`
    /// with its timestamp (`CloneSet`; Advanced `StatefulSet` only from a state label), or nothing (Advanced
    /// `DaemonSet`, and a `StatefulSet` pod without a state label).
    #[must_use]
    pub fn updating_transition(&self, from: Option<LifecycleStateType>, now: &Zoned) -> Transition {
        let stays = self.kind == WorkloadKind::DaemonSet
            || (self.kind == WorkloadKind::StatefulSet && from.is_none());
        if stays {
            return Transition {
                to: from.clone(),
                from,
                change: PodChange::default(),
            };
        }
        let to = LifecycleStateType::Updating;
        Transition {
            from,
            change: PodChange {
                metadata: set_state(&to, now),
                ..PodChange::default()
            },
            to: Some(to),
        }
    }

    /// `Updating → Updated` or `→ Normal` once the in-place update has `completed` (refresh): `Updated` when
    /// the workload has a lifecycle and the inPlaceUpdate hook is not all-hooked (the user's operator has work
    /// to do), else `Normal`. Leaving the update removes the `preUpdateHook` not-ready entry. A no-op in any
    /// other state, before completion, and for Advanced `DaemonSet`.
    ///
    /// # Errors
    /// [`Error::NotReadyMessage`] when the pod's `KruisePodReady` message does not parse.
    pub fn update_completed(
        &self,
        pod: &Pod,
        completed: bool,
        now: &Zoned,
    ) -> Result<Transition, Error> {
        if self.kind == WorkloadKind::DaemonSet
            || !completed
            || state(pod) != Some(LifecycleStateType::Updating)
        {
            return Ok(Transition::stay(pod));
        }
        self.move_to(pod, &self.after_update(pod), now, None)
    }

    /// `PreparingUpdate → Updated` or `→ Normal` when the pod already carries the update revision because
    /// the workload rolled back while the pod was held (upstream issue #1156; refresh). The target state
    /// follows [`update_completed`](Self::update_completed). A no-op otherwise.
    ///
    /// # Errors
    /// [`Error::NotReadyMessage`] when the pod's `KruisePodReady` message does not parse.
    pub fn rolled_back(
        &self,
        pod: &Pod,
        at_update_revision: bool,
        now: &Zoned,
    ) -> Result<Transition, Error> {
        if self.kind == WorkloadKind::DaemonSet
            || !at_update_revision
            || state(pod) != Some(LifecycleStateType::PreparingUpdate)
        {
            return Ok(Transition::stay(pod));
        }
        self.move_to(pod, &self.after_update(pod), now, None)
    }

    /// `Updated → Normal` once the user's operator has re-armed the inPlaceUpdate hook (all-hooked), or when
    /// there is no such hook (refresh). A no-op otherwise.
    ///
    /// # Errors
    /// [`Error::NotReadyMessage`] when the pod's `KruisePodReady` message does not parse.
    pub fn hook_rearmed(&self, pod: &Pod, now: &Zoned) -> Result<Transition, Error> {
        if self.kind == WorkloadKind::DaemonSet || state(pod) != Some(LifecycleStateType::Updated) {
            return Ok(Transition::stay(pod));
        }
        match self.in_place_update() {
            Some(hook) if !is_all_hooked(Some(hook), pod) => Ok(Transition::stay(pod)),
            _ => self.move_to(pod, &LifecycleStateType::Normal, now, None),
        }
    }

    /// The refresh step run for every pod on every reconcile before updates are planned (upstream
    /// `refreshPodState`): [`scheduled`](Self::scheduled) in `PreparingNormal`,
    /// [`rolled_back`](Self::rolled_back) in `PreparingUpdate`, [`update_completed`](Self::update_completed)
    /// in `Updating`, [`hook_rearmed`](Self::hook_rearmed) in `Updated`; nothing in other states or for
    /// Advanced `DaemonSet`.
    ///
    /// # Errors
    /// [`Error::NotReadyMessage`] when the pod's `KruisePodReady` message does not parse.
    pub fn refresh(
        &self,
        pod: &Pod,
        input: RefreshInput,
        now: &Zoned,
    ) -> Result<Transition, Error> {
        match state(pod) {
            Some(LifecycleStateType::PreparingNormal) => self.scheduled(pod, now),
            Some(LifecycleStateType::PreparingUpdate) => {
                self.rolled_back(pod, input.at_update_revision, now)
            }
            Some(LifecycleStateType::Updating) => {
                self.update_completed(pod, input.update_completed, now)
            }
            Some(LifecycleStateType::Updated) => self.hook_rearmed(pod, now),
            _ => Ok(Transition::stay(pod)),
        }
    }

    /// The caller wants to delete `pod` (scale-in, specified delete, recreate update, Advanced `StatefulSet`
    /// condemn or failed-pod replacement). While the preDelete hook holds the pod, hold it in
    /// `PreparingDelete` (adding `preDeleteHook` when the hook marks pods not-ready, also when it is already
    /// there); once released, delete it. The same for every workload kind.
    ///
    /// # Errors
    /// [`Error::NotReadyMessage`] when the pod's `KruisePodReady` message does not parse.
    pub fn delete_wanted(&self, pod: &Pod, now: &Zoned) -> Result<DeleteDecision, Error> {
        if is_hooked(self.pre_delete(), pod) {
            let held = self.move_to(pod, &LifecycleStateType::PreparingDelete, now, None)?;
            Ok(DeleteDecision::Hold(held))
        } else {
            Ok(DeleteDecision::Delete)
        }
    }

    /// `CloneSet` scale-up cancels a pending deletion: `PreparingDelete → PreparingNormal`, unless the preDelete
    /// or inPlaceUpdate hook marks pods not-ready (then a pod in `PreparingDelete` never comes back). `None`
    /// when there is nothing to cancel. Which and how many pods to bring back (not specified-delete ones, up
    /// to the replica shortfall) is the scale planner's decision.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for Advanced `StatefulSet` and Advanced `DaemonSet`, which never cancel;
    /// [`Error::NotReadyMessage`] when the pod's `KruisePodReady` message does not parse.
    pub fn cancel_delete(&self, pod: &Pod, now: &Zoned) -> Result<Option<Transition>, Error> {
        if self.kind != WorkloadKind::CloneSet {
            return Err(Error::Unsupported {
                pod: PodName::of(pod),
                workload: self.kind,
                trigger: "cancel a PreparingDelete on scale-up",
            });
        }
        if state(pod) != Some(LifecycleStateType::PreparingDelete)
            || self.lifecycle.is_some_and(Lifecycle::mark_pod_not_ready)
        {
            return Ok(None);
        }
        self.move_to(pod, &LifecycleStateType::PreparingNormal, now, None)
            .map(Some)
    }

    /// Where a pod goes when its in-place update is over.
    fn after_update(&self, pod: &Pod) -> LifecycleStateType {
        if self.lifecycle.is_some() && !is_all_hooked(self.in_place_update(), pod) {
            LifecycleStateType::Updated
        } else {
            LifecycleStateType::Normal
        }
    }

    /// Moves `pod` to `to`: the state label and timestamp when the state changes (plus `extra` metadata),
    /// and the not-ready entries of the target state.
    fn move_to(
        &self,
        pod: &Pod,
        to: &LifecycleStateType,
        now: &Zoned,
        extra: Option<MetadataChange>,
    ) -> Result<Transition, Error> {
        let from = state(pod);
        let entering = from.as_ref() != Some(to);
        let mut change = PodChange::default();
        if has_gate(pod) {
            change.status = self.not_ready_entries(pod, to, entering, now)?;
        }
        if entering {
            change.metadata = set_state(to, now);
            if let Some(extra) = extra {
                change.metadata.merge(&extra);
            }
        }
        Ok(Transition {
            from,
            to: Some(to.clone()),
            change,
        })
    }

    /// The `KruisePodReady` changes for moving `pod` to `to`: add the entry of the target state when its
    /// hook marks pods not-ready; when `entering` the state, remove the lifecycle entries that do not belong
    /// to it.
    fn not_ready_entries(
        &self,
        pod: &Pod,
        to: &LifecycleStateType,
        entering: bool,
        now: &Zoned,
    ) -> Result<StatusChange, Error> {
        let instant = now.timestamp();
        let mut current = pod.clone();
        let mut change = StatusChange::default();
        let add = match to {
            LifecycleStateType::PreparingUpdate if marks(self.in_place_update()) => {
                Some(pre_update_entry())
            }
            LifecycleStateType::PreparingDelete if marks(self.pre_delete()) => {
                Some(pre_delete_entry())
            }
            _ => None,
        };
        if let Some(entry) = add {
            let status = add_not_ready_key(&current, &entry, instant)?;
            record(&mut current, &mut change, &status);
        }
        if entering {
            let stale = match to {
                LifecycleStateType::PreparingUpdate | LifecycleStateType::Updating => {
                    vec![pre_delete_entry()]
                }
                LifecycleStateType::PreparingDelete => vec![],
                _ => vec![pre_update_entry(), pre_delete_entry()],
            };
            for entry in stale {
                let status = remove_not_ready_key(&current, &entry, instant)?;
                record(&mut current, &mut change, &status);
            }
        }
        Ok(change)
    }
}

/// Applies a status change to the working copy and records it in the decision.
fn record(current: &mut Pod, change: &mut StatusChange, status: &StatusChange) {
    status.apply_to(current);
    change.merge(status);
}

fn marks(hook: Option<&LifecycleHook>) -> bool {
    hook.is_some_and(|hook| hook.mark_pod_not_ready)
}

fn is_scheduled(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.node_name.as_deref())
        .is_some_and(|node| !node.is_empty())
}

fn not_allowed(pod: &Pod, state: Option<LifecycleStateType>) -> Error {
    Error::UpdateNotAllowed {
        pod: PodName::of(pod),
        state: state.map(|s| s.as_str().to_owned()).unwrap_or_default(),
    }
}
