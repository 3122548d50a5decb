//! The election's I/O: reads and writes the Lease (optimistic concurrency on `resourceVersion`), runs the
//! leader's work while leading, stops it when leadership is lost, releases the Lease on shutdown.

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

/// How an election run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The process is shutting down (the lease was released if held).
    ShutDown,
    /// The lease could not be renewed within the renew deadline, or someone else took it.
    LostLeadership,
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
        })
    }

    /// Reports leadership in the `kruise_manager_leader` gauge.
    #[must_use]
    pub fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Waits for leadership, then runs `lead` (given a signal that fires when leading ends) while renewing;
    /// returns once shut down or once leadership is lost (after `lead` has finished, at most
    /// `stop_timeout` later).
    pub async fn run<F, Fut>(
        mut self,
        shutdown: Shutdown,
        stop_timeout: Duration,
        lead: F,
    ) -> Outcome
    where
        F: FnOnce(Shutdown) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let lease = format!("{}/{}", self.namespace, self.name);
        tracing::info!(%lease, identity = self.candidate.identity(), "waiting for leadership");
        let mut waiting_on = String::new();
        loop {
            if shutdown.is_triggered() {
                return Outcome::ShutDown;
            }
            match self.try_acquire_or_renew().await {
                Ok(Round::Holding) => break,
                Ok(Round::HeldBy(holder)) if holder != waiting_on => {
                    tracing::info!(%lease, %holder, "the lease is held; standing by");
                    waiting_on = holder;
                }
                Ok(Round::HeldBy(_) | Round::Raced) => {}
                Err(error) => tracing::warn!(%lease, %error, "leader election attempt failed"),
            }
            tokio::select! {
                () = shutdown.clone().wait() => return Outcome::ShutDown,
                () = tokio::time::sleep(self.timing.retry_period) => {}
            }
        }
        tracing::info!(%lease, identity = self.candidate.identity(), "became the leader");
        self.set_leader(true);
        let (stop_leading, leading) = shutdown::channel();
        let mut work = tokio::spawn(lead(leading));
        let mut last_renewal = Instant::now();
        let outcome = loop {
            tokio::select! {
                () = shutdown.clone().wait() => break Outcome::ShutDown,
                () = tokio::time::sleep(self.timing.retry_period) => {}
            }
            let budget = self
                .timing
                .renew_deadline
                .saturating_sub(last_renewal.elapsed());
            match tokio::time::timeout(
                budget.max(Duration::from_millis(100)),
                self.try_acquire_or_renew(),
            )
            .await
            {
                Ok(Ok(Round::Holding)) => last_renewal = Instant::now(),
                Ok(Ok(Round::HeldBy(holder))) => {
                    tracing::error!(%lease, %holder, "someone else holds the lease now");
                    break Outcome::LostLeadership;
                }
                Ok(Ok(Round::Raced)) => {
                    tracing::warn!(%lease, "the lease changed while renewing; retrying");
                }
                Ok(Err(error)) => tracing::warn!(%lease, %error, "renewing the lease failed"),
                Err(_) => tracing::warn!(%lease, "renewing the lease timed out"),
            }
            if last_renewal.elapsed() >= self.timing.renew_deadline {
                tracing::error!(%lease, deadline = ?self.timing.renew_deadline, "could not renew the lease in time");
                break Outcome::LostLeadership;
            }
        };
        stop_leading.trigger();
        if tokio::time::timeout(stop_timeout, &mut work).await.is_err() {
            tracing::warn!(timeout = ?stop_timeout, "the leader's work did not stop in time; aborting it");
            work.abort();
        }
        self.set_leader(false);
        if outcome == Outcome::ShutDown {
            match self.release().await {
                Ok(true) => tracing::info!(%lease, "released the lease"),
                Ok(false) => {}
                Err(error) => tracing::warn!(%lease, %error, "releasing the lease failed"),
            }
        }
        outcome
    }

    /// One read-decide-write round.
    async fn try_acquire_or_renew(&mut self) -> Result<Round, kube::Error> {
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
