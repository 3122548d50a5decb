//! The election's I/O: reads and writes the Lease (optimistic concurrency on `resourceVersion`), runs the
//! leader's work while leading and keeps its [`WriteFence`] open while the lease is surely ours; aborts
//! that work at once when leadership is lost (a standby may lead already), drains it on shutdown, and
//! releases the Lease on shutdown or when the work ended on its own.

use kruise_runtime::actions::is_conflict;
use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::time::Instant;

use super::decision::{Attempt, Candidate, LeaderTiming};
use crate::metrics::Metrics;
use kruise_runtime::shutdown::{self, Shutdown};
use kruise_runtime::write_fence::WriteFence;

/// How an election run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The process is shutting down (the leader's work drained, the lease released if held).
    ShutDown,
    /// The lease could not be renewed within the renew deadline (a process frozen past it included), or
    /// someone else took it: the leader's work was aborted at once, nothing more was written.
    LostLeadership,
    /// The leader's work ended on its own while leading (a controller died, the webhook configuration
    /// could not be written): it was stopped and the lease released so a standby takes over at once.
    WorkFailed(String),
}

/// Why leading ended.
enum Ending {
    /// Asked to stop (SIGTERM): drain gracefully.
    Stop,
    /// Leadership may be gone: abort at once.
    Lost,
    /// The work ended by itself, with this reason.
    WorkEnded(String),
}

/// The result of one read-decide-write round.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Round {
    /// We hold the lease.
    Holding,
    /// Someone else validly holds it.
    HeldBy(String),
    /// Someone wrote between our read and our write (409): decide again next round.
    Raced,
    /// The renewal's write would have gone out after the renew deadline (the process was frozen, or the
    /// read was slow): nothing was written, the lease may be someone else's.
    TooLate,
}

/// Why the election could not run at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ElectionError {
    /// The timing is inconsistent.
    #[error("leader election: {0}")]
    Timing(String),
}

/// An election on the Lease `namespace/name`.
pub struct LeaderElector {
    api: Api<Lease>,
    name: String,
    namespace: String,
    timing: LeaderTiming,
    candidate: Candidate,
    metrics: Option<Metrics>,
    started: Instant,
    fence: WriteFence,
}

impl LeaderElector {
    /// A participant `identity` in the election on `namespace/name`.
    ///
    /// # Errors
    /// The timing breaks client-go's rules (see [`LeaderTiming::validate`]).
    pub fn new(
        client: Client,
        namespace: &str,
        name: &str,
        identity: &str,
        timing: LeaderTiming,
    ) -> Result<Self, ElectionError> {
        timing.validate().map_err(ElectionError::Timing)?;
        Ok(Self {
            api: Api::namespaced(client, namespace),
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            timing,
            candidate: Candidate::new(identity, timing.lease_duration),
            metrics: None,
            started: Instant::now(),
            fence: WriteFence::closed(),
        })
    }

    /// Reports leadership in the `kruise_manager_leader` gauge.
    #[must_use]
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Opens `fence` for the terms this elector leads: until the start of the last successful renewal
    /// plus the renew deadline, closed when leading ends. Give the leader's work a client guarded by it
    /// ([`WriteFence::guard`]) so nothing it writes lands after the term.
    #[must_use]
    pub fn with_fence(mut self, fence: WriteFence) -> Self {
        self.fence = fence;
        self
    }

    /// Waits for leadership, then runs `lead` (given a signal that fires when leading ends) while renewing.
    ///
    /// * Shut down while leading: `lead` gets `stop_timeout` to drain, then is aborted; the fence closes and
    ///   the lease is released.
    /// * Leadership lost (renew deadline passed, found on waking from a freeze too, or another holder):
    ///   the fence closes and `lead` is aborted at once, without a drain (a standby may already lead).
    /// * `lead` ended while leading (its error, a panic, or even `Ok`): the fence closes and the lease is
    ///   released.
    pub async fn run<F, Fut, E>(
        mut self,
        shutdown: Shutdown,
        stop_timeout: Duration,
        lead: F,
    ) -> Outcome
    where
        F: FnOnce(Shutdown) -> Fut,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        let lease = format!("{}/{}", self.namespace, self.name);
        tracing::info!(%lease, identity = self.candidate.identity(), "waiting for leadership");
        let mut waiting_on = String::new();
        let acquired_at = loop {
            if shutdown.is_triggered() {
                return Outcome::ShutDown;
            }
            let round_started = Instant::now();
            match self.try_acquire_or_renew(None).await {
                Ok(Round::Holding) => break round_started,
                Ok(Round::HeldBy(holder)) if holder != waiting_on => {
                    tracing::info!(%lease, %holder, "the lease is held; standing by");
                    waiting_on = holder;
                }
                Ok(Round::HeldBy(_) | Round::Raced | Round::TooLate) => {}
                Err(error) => tracing::warn!(%lease, %error, "leader election attempt failed"),
            }
            tokio::select! {
                () = shutdown.clone().wait() => return Outcome::ShutDown,
                () = tokio::time::sleep(self.timing.retry_period) => {}
            }
        };
        tracing::info!(%lease, identity = self.candidate.identity(), "became the leader");
        self.extend_fence(acquired_at);
        // When the lease was last written (client-go's observed time): the elector gives up leading
        // `renew_deadline` after it. The fence counts from the start of that round instead, which is
        // earlier: it may shut for a moment before a slow renewal lands, never after a standby can lead.
        let mut last_renewal = Instant::now();
        self.set_leader(true);
        let (stop_leading, leading) = shutdown::channel();
        let mut work = tokio::spawn(lead(leading));
        let ending = loop {
            tokio::select! {
                () = shutdown.clone().wait() => break Ending::Stop,
                ended = &mut work => break Ending::WorkEnded(match ended {
                    Ok(Ok(())) => "it returned while leading".to_owned(),
                    Ok(Err(error)) => error.to_string(),
                    Err(error) => error.to_string(),
                }),
                () = tokio::time::sleep(self.timing.retry_period) => {}
            }
            // Checked before anything else on waking: after a freeze the lease may be someone else's.
            if last_renewal.elapsed() >= self.timing.renew_deadline {
                tracing::error!(%lease, deadline = ?self.timing.renew_deadline, since = ?last_renewal.elapsed(), "the last renewal is older than the renew deadline (was this process frozen?)");
                break Ending::Lost;
            }
            let budget = self
                .timing
                .renew_deadline
                .saturating_sub(last_renewal.elapsed());
            let round_started = Instant::now();
            let write_by = last_renewal + self.timing.renew_deadline;
            match tokio::time::timeout(budget, self.try_acquire_or_renew(Some(write_by))).await {
                Ok(Ok(Round::Holding)) => {
                    last_renewal = Instant::now();
                    self.extend_fence(round_started);
                }
                Ok(Ok(Round::HeldBy(holder))) => {
                    tracing::error!(%lease, %holder, "someone else holds the lease now");
                    break Ending::Lost;
                }
                Ok(Ok(Round::TooLate)) => {
                    tracing::error!(%lease, "the renew deadline passed before the renewal could be written");
                    break Ending::Lost;
                }
                Ok(Ok(Round::Raced)) => {
                    tracing::warn!(%lease, "the lease changed while renewing; retrying");
                }
                Ok(Err(error)) => tracing::warn!(%lease, %error, "renewing the lease failed"),
                Err(_) => tracing::warn!(%lease, "renewing the lease timed out"),
            }
            if last_renewal.elapsed() >= self.timing.renew_deadline {
                tracing::error!(%lease, deadline = ?self.timing.renew_deadline, "could not renew the lease in time");
                break Ending::Lost;
            }
        };
        stop_leading.trigger();
        let outcome = match ending {
            Ending::Stop => {
                if tokio::time::timeout(stop_timeout, &mut work).await.is_err() {
                    tracing::warn!(timeout = ?stop_timeout, "the leader's work did not stop in time; aborting it");
                    work.abort();
                }
                self.fence.close();
                Outcome::ShutDown
            }
            Ending::Lost => {
                self.fence.close();
                work.abort();
                let _ = work.await;
                tracing::error!(%lease, "stopped leading: aborted the leader's work without a drain");
                Outcome::LostLeadership
            }
            Ending::WorkEnded(reason) => {
                self.fence.close();
                tracing::error!(%lease, %reason, "the leader's work ended; giving up the lease");
                Outcome::WorkFailed(reason)
            }
        };
        self.set_leader(false);
        if outcome != Outcome::LostLeadership {
            match self.release().await {
                Ok(true) => tracing::info!(%lease, "released the lease"),
                Ok(false) => {}
                Err(error) => tracing::warn!(%lease, %error, "releasing the lease failed"),
            }
        }
        outcome
    }

    /// Admits the leader's writes until `round_started` (the start of a successful round, before its
    /// read) + the renew deadline.
    fn extend_fence(&self, round_started: Instant) {
        self.fence
            .open_until(round_started.into_std() + self.timing.renew_deadline);
    }

    /// One read-decide-write round; with `write_by`, the write is skipped once that instant has passed.
    async fn try_acquire_or_renew(
        &mut self,
        write_by: Option<Instant>,
    ) -> Result<Round, kube::Error> {
        let current = self.api.get_opt(&self.name).await?;
        let spec = current
            .as_ref()
            .map(|lease| lease.spec.clone().unwrap_or_default());
        let monotonic = self.started.elapsed();
        let wanted = match self
            .candidate
            .attempt(spec.as_ref(), monotonic, Timestamp::now())
        {
            Attempt::Held { holder } => return Ok(Round::HeldBy(holder)),
            Attempt::Write(spec) => spec,
        };
        if write_by.is_some_and(|deadline| Instant::now() >= deadline) {
            return Ok(Round::TooLate);
        }
        let result = match current {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        namespace: Some(self.namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(wanted.clone()),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            Some(mut lease) => {
                lease.spec = Some(wanted.clone());
                self.api
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match result {
            Ok(_) => {
                self.candidate.written(&wanted, monotonic);
                Ok(Round::Holding)
            }
            Err(error) if is_conflict(&error) => Ok(Round::Raced),
            Err(error) => Err(error),
        }
    }

    /// Gives the lease up if we hold it: `Ok(true)` when released.
    async fn release(&self) -> Result<bool, kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            return Ok(false);
        };
        let spec: LeaseSpec = lease.spec.clone().unwrap_or_default();
        let Some(released) = self.candidate.release(&spec, Timestamp::now()) else {
            return Ok(false);
        };
        lease.spec = Some(released);
        self.api
            .replace(&self.name, &PostParams::default(), &lease)
            .await?;
        Ok(true)
    }

    fn set_leader(&self, leading: bool) {
        if let Some(metrics) = &self.metrics {
            metrics.set_leader(leading);
        }
    }
}

#[cfg(test)]
mod tests;
