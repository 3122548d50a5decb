//! The order of the steps of one container kill, chosen so that a daemon that dies at any point (SIGKILL,
//! node agent restart) never stops the same container twice for one request:
//!
//! 1. the preStop hook ([`KillSteps::pre_stop`]);
//! 2. the request's status records the stop ([`KillSteps::record`]: the container `Recreating` with
//!    `isKilled`), conditional on the request's `resourceVersion`;
//! 3. CRI `StopContainer` ([`KillSteps::stop`]), only once the record is written.
//!
//! A daemon started again finds what it needs in the request and the runtime. Died before step 2: nothing
//! says the container was stopped, and it was not (the same incarnation still runs), so the kill starts over,
//! hook included: hooks are delivered at least once, as Kubernetes' lifecycle hooks are. Died after step 2:
//! the request says the container was killed, so a newer incarnation is the recreated container, even with
//! `forceRecreate` (which otherwise kills any incarnation the request has not killed); if the stop never
//! reached the runtime, the same incarnation still runs and is stopped again. Upstream's daemon
//! (`pkg/daemon/containerrecreate`) writes `isKilled` only after the stop, and a daemon that dies in between
//! kills the restarted container a second time under `forceRecreate`.

use std::future::Future;
use std::time::Duration;

/// The three steps of a kill, as the worker performs them.
pub trait KillSteps {
    /// The request as the record wrote it.
    type Recorded;
    /// Why the record could not be written (the pass fails and is retried).
    type Error;
    /// Runs the container's preStop hook: how long it took (`None`: no hook ran).
    fn pre_stop(&mut self) -> impl Future<Output = Option<Duration>> + Send;
    /// Writes the states that record the stop. `Ok(None)` when the request changed so that the decision
    /// no longer holds (or it is gone): nothing is stopped, the next pass decides again.
    fn record(
        &mut self,
    ) -> impl Future<Output = Result<Option<Self::Recorded>, Self::Error>> + Send;
    /// Stops the container, with the grace left after a hook that took `hook_took`.
    fn stop(
        &mut self,
        hook_took: Option<Duration>,
    ) -> impl Future<Output = Result<(), String>> + Send;
}

/// How a kill ended.
#[derive(Debug, PartialEq, Eq)]
pub enum KillOutcome<R> {
    /// Recorded, then stopped.
    Stopped(R),
    /// Recorded, but the runtime failed to stop the container (the error).
    StopFailed {
        /// The request as the record wrote it.
        recorded: R,
        /// The runtime's error.
        error: String,
    },
    /// The stop could not be recorded: nothing was stopped.
    NotRecorded,
}

/// Runs the steps of one kill in their order: hook, record, stop (the stop only once recorded).
///
/// # Errors
/// The record's error; nothing was stopped then.
pub async fn kill_in_order<S: KillSteps>(
    steps: &mut S,
) -> Result<KillOutcome<S::Recorded>, S::Error> {
    let hook_took = steps.pre_stop().await;
    let Some(recorded) = steps.record().await? else {
        return Ok(KillOutcome::NotRecorded);
    };
    Ok(match steps.stop(hook_took).await {
        Ok(()) => KillOutcome::Stopped(recorded),
        Err(error) => KillOutcome::StopFailed { recorded, error },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps that note what ran, in order; the record answers `record`.
    struct Noted {
        ran: Vec<String>,
        record: Result<Option<u32>, &'static str>,
        stop: Result<(), String>,
    }

    impl Noted {
        fn new(record: Result<Option<u32>, &'static str>, stop: Result<(), String>) -> Self {
            Self {
                ran: Vec::new(),
                record,
                stop,
            }
        }
    }

    impl KillSteps for Noted {
        type Recorded = u32;
        type Error = &'static str;

        async fn pre_stop(&mut self) -> Option<Duration> {
            self.ran.push("hook".into());
            Some(Duration::from_secs(3))
        }

        async fn record(&mut self) -> Result<Option<u32>, &'static str> {
            self.ran.push("record".into());
            self.record
        }

        async fn stop(&mut self, hook_took: Option<Duration>) -> Result<(), String> {
            self.ran.push(format!("stop after {hook_took:?}"));
            self.stop.clone()
        }
    }

    #[tokio::test]
    async fn the_stop_is_recorded_before_it_is_made() {
        let mut steps = Noted::new(Ok(Some(7)), Ok(()));
        assert_eq!(kill_in_order(&mut steps).await, Ok(KillOutcome::Stopped(7)));
        assert_eq!(steps.ran, ["hook", "record", "stop after Some(3s)"]);
    }

    #[tokio::test]
    async fn nothing_is_stopped_unless_recorded() {
        let mut changed = Noted::new(Ok(None), Ok(()));
        assert_eq!(
            kill_in_order(&mut changed).await,
            Ok(KillOutcome::NotRecorded)
        );
        assert_eq!(changed.ran, ["hook", "record"]);
        let mut failed = Noted::new(Err("API server unavailable"), Ok(()));
        assert_eq!(
            kill_in_order(&mut failed).await,
            Err("API server unavailable")
        );
        assert_eq!(failed.ran, ["hook", "record"]);
    }

    #[tokio::test]
    async fn a_failed_stop_keeps_the_record_for_the_next_write() {
        let mut steps = Noted::new(Ok(Some(8)), Err("stop signal SIGBOGUS".into()));
        assert_eq!(
            kill_in_order(&mut steps).await,
            Ok(KillOutcome::StopFailed {
                recorded: 8,
                error: "stop signal SIGBOGUS".into()
            })
        );
    }
}
