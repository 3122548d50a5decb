//! One worker of the node prober (upstream's `worker.doProbe` in `pkg/daemon/podprobe`): what to report
//! and whether to run the probe, given the container the runtime shows and the clock, and how a probe's
//! outcome becomes a reported state through the thresholds.
//!
//! * the worker runs every `periodSeconds` (at least 1); a container it sees for the first time (or a
//!   new incarnation: another container ID) is reported `Unknown` first;
//! * a container that is not running is reported `Failed` (`Container(<name>) is Non-running`), and the
//!   probe still runs, as upstream;
//! * no probe runs until `initialDelaySeconds` (at least 1) have passed since the container started;
//! * an outcome is reported once it has repeated `successThreshold` (`Succeeded`) or
//!   `failureThreshold` (`Failed`) times in a row (each at least 1); until then the last report stands;
//! * messages are cut to 1024 bytes (at a character boundary).
//!
//! ```
//! use k8s_openapi::api::core::v1::Probe;
//! use k8s_openapi::jiff::Timestamp;
//! use kruise_api::apps::v1alpha1::ProbeState;
//! use kruise_schedule::pod_probe::prober_state::{ContainerSeen, ProbeSettings, ProbeWorker};
//!
//! let settings = ProbeSettings::of(&Probe { failure_threshold: Some(2), ..Probe::default() });
//! let started: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
//! let now: Timestamp = "2026-01-01T00:00:05Z".parse().unwrap();
//! let mut worker = ProbeWorker::default();
//! let seen = ContainerSeen { id: "c1", name: "main", running: true, started_at: started };
//! let step = worker.observe(Some(&seen), &settings, now);
//! assert_eq!(step.reports[0].state, ProbeState::StateUnknown);
//! assert!(step.probe);
//! assert_eq!(worker.outcome(ProbeState::Failed, "no".into(), &settings), None);
//! assert_eq!(worker.outcome(ProbeState::Failed, "no".into(), &settings).unwrap().state, ProbeState::Failed);
//! ```

use std::time::Duration;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1alpha1::ProbeState;

/// The longest probe message kept, in bytes (upstream's `maxProbeMessageLength`).
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// A probe's timing and thresholds, each at least 1 as upstream's worker reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeSettings {
    /// Between two runs.
    pub period: Duration,
    /// From the container's start to the first run.
    pub initial_delay: Duration,
    /// The limit of one run.
    pub timeout: Duration,
    /// Successes in a row before `Succeeded` is reported.
    pub success_threshold: u32,
    /// Failures in a row before `Failed` is reported.
    pub failure_threshold: u32,
}

impl ProbeSettings {
    /// The settings of `probe`, with values below 1 (or absent) read as 1.
    #[must_use]
    pub fn of(probe: &Probe) -> Self {
        let at_least_one =
            |value: Option<i32>| u32::try_from(value.unwrap_or(1)).unwrap_or(1).max(1);
        let seconds = |value: Option<i32>| Duration::from_secs(u64::from(at_least_one(value)));
        Self {
            period: seconds(probe.period_seconds),
            initial_delay: seconds(probe.initial_delay_seconds),
            timeout: seconds(probe.timeout_seconds),
            success_threshold: at_least_one(probe.success_threshold),
            failure_threshold: at_least_one(probe.failure_threshold),
        }
    }
}

/// The container a worker probes, as the runtime shows it (the newest container of that name in the pod).
#[derive(Clone, Copy, Debug)]
pub struct ContainerSeen<'a> {
    /// The runtime's container ID.
    pub id: &'a str,
    /// The container's name.
    pub name: &'a str,
    /// Whether it is running.
    pub running: bool,
    /// When it started.
    pub started_at: Timestamp,
}

/// A result to report for the probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The state.
    pub state: ProbeState,
    /// The probe's output or error (at most [`MAX_MESSAGE_BYTES`]).
    pub message: String,
}

/// What one tick of a worker does before probing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Results to report now, in order.
    pub reports: Vec<Report>,
    /// Whether to run the probe now.
    pub probe: bool,
}

/// The memory of one worker: the container it last saw and the run of equal outcomes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeWorker {
    container_id: Option<String>,
    last_outcome: Option<ProbeState>,
    run: u32,
}

impl ProbeWorker {
    /// One tick: `container` is what the runtime shows (`None`: not there yet, nothing happens).
    pub fn observe(
        &mut self,
        container: Option<&ContainerSeen<'_>>,
        settings: &ProbeSettings,
        now: Timestamp,
    ) -> Step {
        let Some(container) = container else {
            return Step::default();
        };
        let mut step = Step::default();
        if self.container_id.as_deref() != Some(container.id) {
            self.container_id = Some(container.id.to_owned());
            step.reports.push(Report {
                state: ProbeState::StateUnknown,
                message: String::new(),
            });
        }
        if !container.running {
            step.reports.push(Report {
                state: ProbeState::Failed,
                message: format!("Container({}) is Non-running", container.name),
            });
        }
        // A start in the future (clock skew) counts as just now.
        let since_start =
            Duration::try_from(now.duration_since(container.started_at)).unwrap_or_default();
        step.probe = since_start >= settings.initial_delay;
        step
    }

    /// A probe's outcome (`Succeeded` or `Failed`) with its message: the report once the threshold of
    /// that outcome is reached, `None` while it is not.
    pub fn outcome(
        &mut self,
        state: ProbeState,
        message: String,
        settings: &ProbeSettings,
    ) -> Option<Report> {
        if self.last_outcome.as_ref() == Some(&state) {
            self.run = self.run.saturating_add(1);
        } else {
            self.last_outcome = Some(state.clone());
            self.run = 1;
        }
        let threshold = if state == ProbeState::Succeeded {
            settings.success_threshold
        } else {
            settings.failure_threshold
        };
        (self.run >= threshold).then(|| Report {
            state,
            message: truncated(message),
        })
    }

    /// The probe's handler changed: the state goes back to `Unknown` when a container was seen.
    #[must_use]
    pub fn handler_changed(&self) -> Option<Report> {
        self.container_id.as_ref().map(|_| Report {
            state: ProbeState::StateUnknown,
            message: String::new(),
        })
    }
}

/// `message` cut to at most [`MAX_MESSAGE_BYTES`] bytes, at a character boundary.
#[must_use]
pub fn truncated(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + second).unwrap()
    }

    fn container(id: &str, running: bool) -> ContainerSeen<'_> {
        ContainerSeen {
            id,
            name: "main",
            running,
            started_at: at(0),
        }
    }

    fn states(step: &Step) -> Vec<&str> {
        step.reports
            .iter()
            .map(|report| report.state.as_str())
            .collect()
    }

    #[test]
    fn settings_read_missing_and_low_values_as_one() {
        let rows = [
            (Probe::default(), (1, 1, 1, 1, 1)),
            (
                Probe {
                    period_seconds: Some(3),
                    initial_delay_seconds: Some(0),
                    timeout_seconds: Some(-2),
                    success_threshold: Some(2),
                    failure_threshold: Some(4),
                    ..Probe::default()
                },
                (3, 1, 1, 2, 4),
            ),
        ];
        for (probe, (period, delay, timeout, success, failure)) in rows {
            let settings = ProbeSettings::of(&probe);
            assert_eq!(
                (
                    settings.period.as_secs(),
                    settings.initial_delay.as_secs(),
                    settings.timeout.as_secs(),
                    settings.success_threshold,
                    settings.failure_threshold
                ),
                (period, delay, timeout, success, failure)
            );
        }
    }

    /// (case, container seen before, container now, now, states reported, probe runs)
    type ObserveRow<'a> = (
        &'a str,
        Option<&'a str>,
        Option<ContainerSeen<'a>>,
        i64,
        Vec<&'a str>,
        bool,
    );

    #[test]
    fn observe_table() {
        let settings = ProbeSettings::of(&Probe {
            initial_delay_seconds: Some(5),
            ..Probe::default()
        });
        // (case, previously seen container, container now, now, reports, probe)
        let rows: [ObserveRow<'_>; 6] = [
            ("no container yet", None, None, 10, vec![], false),
            (
                "first sight, in the initial delay",
                None,
                Some(container("c1", true)),
                4,
                vec!["Unknown"],
                false,
            ),
            (
                "first sight, after the delay",
                None,
                Some(container("c1", true)),
                5,
                vec!["Unknown"],
                true,
            ),
            (
                "same container",
                Some("c1"),
                Some(container("c1", true)),
                9,
                vec![],
                true,
            ),
            (
                "new incarnation",
                Some("c1"),
                Some(container("c2", true)),
                9,
                vec!["Unknown"],
                true,
            ),
            (
                "not running",
                Some("c1"),
                Some(container("c1", false)),
                9,
                vec!["Failed"],
                true,
            ),
        ];
        for (case, seen, now_seen, now, reports, probe) in rows {
            let mut worker = ProbeWorker {
                container_id: seen.map(str::to_owned),
                ..ProbeWorker::default()
            };
            let step = worker.observe(now_seen.as_ref(), &settings, at(now));
            assert_eq!((states(&step), step.probe), (reports, probe), "{case}");
        }
    }

    #[test]
    fn thresholds_hold_the_report_back() {
        let settings = ProbeSettings::of(&Probe {
            success_threshold: Some(2),
            failure_threshold: Some(3),
            ..Probe::default()
        });
        let mut worker = ProbeWorker::default();
        let outcomes = [
            ProbeState::Succeeded,
            ProbeState::Succeeded,
            ProbeState::Failed,
            ProbeState::Failed,
            ProbeState::Succeeded,
            ProbeState::Failed,
            ProbeState::Failed,
            ProbeState::Failed,
            ProbeState::Failed,
        ];
        let reported: Vec<Option<String>> = outcomes
            .into_iter()
            .map(|state| {
                worker
                    .outcome(state, String::new(), &settings)
                    .map(|report| report.state.as_str().to_owned())
            })
            .collect();
        let expected = [
            None,
            Some("Succeeded"),
            None,
            None,
            None,
            None,
            None,
            Some("Failed"),
            Some("Failed"),
        ];
        let expected: Vec<Option<String>> = expected
            .iter()
            .map(|state| state.map(str::to_owned))
            .collect();
        assert_eq!(reported, expected);
    }

    #[test]
    fn handler_change_resets_only_a_seen_container() {
        let mut worker = ProbeWorker::default();
        assert_eq!(worker.handler_changed(), None);
        let settings = ProbeSettings::of(&Probe::default());
        let _ = worker.observe(Some(&container("c1", true)), &settings, at(3));
        assert_eq!(
            worker.handler_changed().map(|report| report.state),
            Some(ProbeState::StateUnknown)
        );
    }

    #[test]
    fn long_messages_are_cut_at_a_character_boundary() {
        assert_eq!(truncated("short".into()), "short");
        let long = "é".repeat(600);
        let cut = truncated(long);
        assert!(cut.len() <= MAX_MESSAGE_BYTES);
        assert_eq!(cut.len(), 1024);
        let odd = format!("a{}", "é".repeat(600));
        assert_eq!(truncated(odd).len(), 1023);
    }
}
