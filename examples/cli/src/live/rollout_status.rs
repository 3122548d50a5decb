//! What a workload's status says about its rollout (`kruise rollout status`): complete or not, the
//! sentence saying what is still missing, and one progress bar per revision. Pure: the watch that feeds
//! it is in [`super::status_follow`].
//!
//! The decision follows the status viewers of OpenKruise's `kubectl kruise` (`CloneSetStatusViewer`,
//! `AdvancedStatefulSetStatusViewer`) and kubectl's DaemonSet viewer: first the controller must have
//! observed the latest generation; a partition that holds pods back ends the rollout once the pods it
//! lets through are updated and every pod is ready ("partitioned rollout complete"); otherwise every pod
//! must be updated, no old pod left, and every updated pod ready.

use serde_json::Value;

use super::strategy::{desired_pods, held_back, is_paused};
use super::target::WorkloadKind;

/// The counts of a workload's status that its rollout is judged by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    /// `metadata.generation`.
    pub generation: i64,
    /// `status.observedGeneration`.
    pub observed_generation: i64,
    /// The pods it should run: `spec.replicas`, or `status.desiredNumberScheduled` (DaemonSet).
    pub desired: i64,
    /// The pods it runs: `status.replicas`, or `status.currentNumberScheduled` (DaemonSet).
    pub replicas: i64,
    /// Ready pods: `status.readyReplicas`, or `status.numberReady` (DaemonSet).
    pub ready: i64,
    /// Available pods (DaemonSet: `status.numberAvailable`; others: `status.availableReplicas`).
    pub available: i64,
    /// Pods at the update revision.
    pub updated: i64,
    /// Ready pods at the update revision (a DaemonSet's status does not count them).
    pub updated_ready: Option<i64>,
    /// `status.currentRevision` (empty for a DaemonSet, whose status has none).
    pub current_revision: String,
    /// `status.updateRevision` (v1alpha1 DaemonSet: `status.daemonSetHash`).
    pub update_revision: String,
    /// Pods the partition keeps at old revisions.
    pub held_back: i64,
    /// Whether the rollout is paused.
    pub paused: bool,
}

fn int(object: &Value, pointer: &str) -> i64 {
    object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn text(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Observed {
    /// Reads the counts from the workload of `kind` served at `version`.
    ///
    /// # Errors
    /// The partition is neither a number nor a percentage.
    pub fn read(object: &Value, kind: WorkloadKind, version: &str) -> Result<Self, String> {
        let common = Self {
            generation: int(object, "/metadata/generation"),
            observed_generation: int(object, "/status/observedGeneration"),
            desired: desired_pods(object, kind),
            held_back: held_back(object, kind, version)?,
            paused: is_paused(object, kind, version),
            ..Self::default()
        };
        Ok(match kind {
            WorkloadKind::DaemonSet => {
                let mut update_revision = text(object, "/status/updateRevision");
                if update_revision.is_empty() {
                    update_revision = text(object, "/status/daemonSetHash");
                }
                Self {
                    replicas: int(object, "/status/currentNumberScheduled"),
                    ready: int(object, "/status/numberReady"),
                    available: int(object, "/status/numberAvailable"),
                    updated: int(object, "/status/updatedNumberScheduled"),
                    updated_ready: None,
                    update_revision,
                    ..common
                }
            }
            WorkloadKind::CloneSet | WorkloadKind::StatefulSet => Self {
                replicas: int(object, "/status/replicas"),
                ready: int(object, "/status/readyReplicas"),
                available: int(object, "/status/availableReplicas"),
                updated: int(object, "/status/updatedReplicas"),
                updated_ready: Some(int(object, "/status/updatedReadyReplicas")),
                current_revision: text(object, "/status/currentRevision"),
                update_revision: text(object, "/status/updateRevision"),
                ..common
            },
        })
    }
}

/// The pods of one revision, drawn as a bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevisionBar {
    /// `current` or `update`.
    pub role: &'static str,
    /// The revision's name (`old` when the status does not name it).
    pub revision: String,
    /// Its pods.
    pub pods: i64,
    /// Its ready pods, when the status counts them.
    pub ready: Option<i64>,
    /// The pods the workload should run (the bar's full length).
    pub desired: i64,
}

/// Width of a bar between its brackets.
const BAR_WIDTH: i64 = 20;

impl RevisionBar {
    /// `update  web-7d9f  [#######=====........] 2/3 pods, 1 ready`: `#` ready pods, `=` pods not ready
    /// (or not counted), `.` missing pods.
    #[must_use]
    pub fn render(&self) -> String {
        let cells = |count: i64| {
            if self.desired <= 0 {
                0
            } else {
                (count.clamp(0, self.desired) * BAR_WIDTH) / self.desired
            }
        };
        let pods = cells(self.pods);
        let ready = cells(self.ready.unwrap_or(0)).min(pods);
        let mut bar = String::new();
        for cell in 0..BAR_WIDTH {
            bar.push(if cell < ready {
                '#'
            } else if cell < pods {
                '='
            } else {
                '.'
            });
        }
        let ready = self
            .ready
            .map(|ready| format!(", {ready} ready"))
            .unwrap_or_default();
        format!(
            "{:<7} {}  [{bar}] {}/{} pods{ready}",
            self.role, self.revision, self.pods, self.desired
        )
    }

    /// `update web-7d9f 2/3 pods (1 ready)`, for one-line output.
    #[must_use]
    pub fn summary(&self) -> String {
        let ready = self
            .ready
            .map(|ready| format!(" ({ready} ready)"))
            .unwrap_or_default();
        format!(
            "{} {} {}/{} pods{ready}",
            self.role, self.revision, self.pods, self.desired
        )
    }
}

/// What the status says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Whether the rollout is complete.
    pub complete: bool,
    /// What is still missing, or that it is complete.
    pub message: String,
    /// One bar per revision that has (or should have) pods.
    pub bars: Vec<RevisionBar>,
}

impl Progress {
    /// The message and the bars on one line (for output that is not a terminal).
    #[must_use]
    pub fn line(&self) -> String {
        std::iter::once(self.message.clone())
            .chain(self.bars.iter().map(RevisionBar::summary))
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

fn bars(observed: &Observed) -> Vec<RevisionBar> {
    let update = RevisionBar {
        role: "update",
        revision: observed.update_revision.clone(),
        pods: observed.updated,
        ready: observed.updated_ready,
        desired: observed.desired,
    };
    if observed.updated >= observed.replicas
        && observed.current_revision == observed.update_revision
    {
        return vec![update];
    }
    let old_pods = (observed.replicas - observed.updated).max(0);
    let current = RevisionBar {
        role: "current",
        revision: if observed.current_revision.is_empty() {
            "old".to_owned()
        } else {
            observed.current_revision.clone()
        },
        pods: old_pods,
        ready: observed
            .updated_ready
            .map(|updated_ready| (observed.ready - updated_ready).clamp(0, old_pods)),
        desired: observed.desired,
    };
    vec![current, update]
}

/// What `observed` says about the rollout of `workload` (`cloneset.apps.kruise.io/web`).
#[must_use]
pub fn progress(workload: &str, observed: &Observed) -> Progress {
    let (complete, message) = decide(workload, observed);
    let message = if !complete && observed.paused {
        format!("{message} (paused)")
    } else {
        message
    };
    Progress {
        complete,
        message,
        bars: bars(observed),
    }
}

fn decide(workload: &str, o: &Observed) -> (bool, String) {
    if o.observed_generation == 0 || o.generation > o.observed_generation {
        return (
            false,
            format!("Waiting for {workload} spec update to be observed..."),
        );
    }
    let waiting = |what: String| {
        (
            false,
            format!("Waiting for {workload} rollout to finish: {what}"),
        )
    };
    let held = o.held_back.min(o.desired);
    if held > 0 && o.updated < o.desired {
        let target = o.desired - held;
        if o.updated < target {
            return waiting(format!(
                "{} out of {target} new pods have been updated (partition holds back {held})...",
                o.updated
            ));
        }
        if let Some(updated_ready) = o.updated_ready.filter(|ready| *ready < target) {
            return waiting(format!(
                "{updated_ready} of {target} updated pods are ready..."
            ));
        }
        if o.ready < o.desired {
            return waiting(format!("{} of {} pods are ready...", o.ready, o.desired));
        }
        return (
            true,
            format!(
                "{workload} partitioned rollout complete: {} of {} pods updated",
                o.updated, o.desired
            ),
        );
    }
    if o.updated < o.desired {
        return waiting(format!(
            "{} out of {} new pods have been updated...",
            o.updated, o.desired
        ));
    }
    if o.replicas > o.updated {
        return waiting(format!(
            "{} old pods are pending termination...",
            o.replicas - o.updated
        ));
    }
    let updated_ready = o.updated_ready.unwrap_or(o.available);
    if updated_ready < o.desired {
        return waiting(format!(
            "{updated_ready} of {} updated pods are ready...",
            o.desired
        ));
    }
    (
        true,
        format!(
            "{workload} successfully rolled out: {} pods at revision {}",
            o.updated, o.update_revision
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const WEB: &str = "cloneset.apps.kruise.io/web";

    fn rolling(updated: i64, updated_ready: i64, replicas: i64) -> Observed {
        Observed {
            generation: 2,
            observed_generation: 2,
            desired: 3,
            replicas,
            ready: 3,
            available: 3,
            updated,
            updated_ready: Some(updated_ready),
            current_revision: "web-old".into(),
            update_revision: "web-new".into(),
            held_back: 0,
            paused: false,
        }
    }

    #[test]
    fn a_rollout_is_complete_only_when_every_pod_is_updated_and_ready() {
        let unobserved = Observed {
            generation: 3,
            ..rolling(3, 3, 3)
        };
        let waiting = progress(WEB, &unobserved);
        assert!(!waiting.complete);
        assert!(
            waiting.message.contains("spec update to be observed"),
            "{}",
            waiting.message
        );

        let started = progress(WEB, &rolling(1, 0, 3));
        assert!(!started.complete);
        assert!(
            started.message.contains("1 out of 3 new pods"),
            "{}",
            started.message
        );
        assert_eq!(started.bars.len(), 2);
        assert_eq!(
            (
                started.bars[0].role,
                started.bars[0].revision.as_str(),
                started.bars[0].pods
            ),
            ("current", "web-old", 2)
        );
        assert_eq!((started.bars[1].pods, started.bars[1].ready), (1, Some(0)));

        let surplus = progress(WEB, &rolling(3, 3, 4));
        assert!(
            surplus
                .message
                .contains("1 old pods are pending termination"),
            "{}",
            surplus.message
        );
        let unready = progress(WEB, &rolling(3, 2, 3));
        assert!(!unready.complete);
        assert!(
            unready.message.contains("2 of 3 updated pods are ready"),
            "{}",
            unready.message
        );

        let done = progress(
            WEB,
            &Observed {
                current_revision: "web-new".into(),
                ..rolling(3, 3, 3)
            },
        );
        assert!(done.complete);
        assert_eq!(
            done.message,
            "cloneset.apps.kruise.io/web successfully rolled out: 3 pods at revision web-new"
        );
        assert_eq!(done.bars.len(), 1, "one revision left");
        let paused = progress(
            WEB,
            &Observed {
                paused: true,
                ..rolling(0, 0, 3)
            },
        );
        assert!(paused.message.ends_with("(paused)"), "{}", paused.message);
    }

    #[test]
    fn a_partition_ends_the_rollout_once_the_released_pods_are_updated() {
        let held = |updated, updated_ready| Observed {
            held_back: 2,
            ..rolling(updated, updated_ready, 3)
        };
        let waiting = progress(WEB, &held(0, 0));
        assert!(!waiting.complete);
        assert!(
            waiting.message.contains("0 out of 1 new pods"),
            "{}",
            waiting.message
        );
        assert!(
            !progress(WEB, &held(1, 0)).complete,
            "the updated pod is not ready"
        );
        let done = progress(WEB, &held(1, 1));
        assert!(done.complete);
        assert_eq!(
            done.message,
            "cloneset.apps.kruise.io/web partitioned rollout complete: 1 of 3 pods updated"
        );
        let everything = Observed {
            held_back: 5,
            ..rolling(0, 0, 3)
        };
        assert!(
            progress(WEB, &everything).complete,
            "a partition above replicas holds all pods"
        );
    }

    #[test]
    fn counts_are_read_per_kind() {
        let cloneset = json!({
            "metadata": {"generation": 4},
            "spec": {"replicas": 3, "updateStrategy": {"rollingUpdate": {"partition": "34%", "paused": true}}},
            "status": {"observedGeneration": 4, "replicas": 3, "readyReplicas": 2, "updatedReplicas": 1,
                       "updatedReadyReplicas": 1, "currentRevision": "a", "updateRevision": "b"}
        });
        let observed = Observed::read(&cloneset, WorkloadKind::CloneSet, "v1beta1").unwrap();
        assert_eq!(
            (
                observed.desired,
                observed.ready,
                observed.updated,
                observed.held_back,
                observed.paused
            ),
            (3, 2, 1, 2, true)
        );
        assert_eq!(observed.updated_ready, Some(1));
        let daemonset = json!({
            "metadata": {"generation": 1},
            "status": {"observedGeneration": 1, "desiredNumberScheduled": 2, "currentNumberScheduled": 2,
                       "numberReady": 2, "numberAvailable": 1, "updatedNumberScheduled": 2, "daemonSetHash": "h"}
        });
        let observed = Observed::read(&daemonset, WorkloadKind::DaemonSet, "v1alpha1").unwrap();
        assert_eq!((observed.desired, observed.updated_ready), (2, None));
        assert_eq!(observed.update_revision, "h");
        let waiting = progress("daemonset.apps.kruise.io/agent", &observed);
        assert!(
            waiting.message.contains("1 of 2 updated pods are ready"),
            "{}",
            waiting.message
        );
    }

    #[test]
    fn bars_draw_ready_unready_and_missing_pods() {
        let bar = RevisionBar {
            role: "update",
            revision: "web-b".into(),
            pods: 2,
            ready: Some(1),
            desired: 4,
        };
        assert_eq!(
            bar.render(),
            "update  web-b  [#####=====..........] 2/4 pods, 1 ready"
        );
        assert_eq!(bar.summary(), "update web-b 2/4 pods (1 ready)");
        let line = progress(WEB, &rolling(1, 0, 3)).line();
        assert!(
            line.contains(
                " | current web-old 2/3 pods (2 ready) | update web-new 1/3 pods (0 ready)"
            ),
            "{line}"
        );
    }
}
