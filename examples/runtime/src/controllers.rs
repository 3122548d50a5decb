//! Where controllers plug into kruise-manager. A controller is anything that, given a
//! [`ControllerContext`], runs until the context's `shutdown` fires. The manager starts every registered
//! controller when it becomes the leader and signals them to stop when it shuts down; a controller that
//! ends on its own (returns, fails, panics) ends the whole set, so the leader gives up its lease.
//!
//! ```
//! use kruise_runtime::controllers::{ControllerSet, ManagedController};
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register_fn("noop", |context| async move {
//!     context.shutdown.wait().await;
//!     Ok(())
//! });
//! assert_eq!(controllers.names(), ["noop"]);
//! ```
//!
//! A controller implements [`ManagedController`] (or is a function registered with
//! [`ControllerSet::register_fn`]): it takes the objects it watches from `context.informers` (one watch per
//! kind for the whole process; indexes such as [`crate::informer::controller_uid`] instead of scans), builds
//! a `kube::runtime::Controller` on their change streams, runs it with [`crate::harness::drive`], records
//! Events through `context.event_sink(component)`, executes its plans with [`crate::actions`] and guards
//! against stale caches with [`crate::expectations`].

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::events::EventSink;
use crate::informer::Informers;
use kube::Client;
use kube::runtime::events::Reporter;

use crate::metrics::{ControllerMetrics, Metrics};
use crate::shutdown::Shutdown;

/// A boxed controller run.
pub type ControllerFuture = Pin<Box<dyn Future<Output = Result<(), ControllerError>> + Send>>;

/// Why a controller stopped before it was asked to.
#[derive(Debug, thiserror::Error)]
#[error("controller {controller}: {message}")]
pub struct ControllerError {
    /// The controller.
    pub controller: String,
    /// What happened.
    pub message: String,
}

/// What a controller gets when it starts.
#[derive(Clone)]
pub struct ControllerContext {
    /// A client for the cluster.
    pub client: Client,
    /// This controller's metrics (reconciles, errors, durations, queue depth).
    pub metrics: ControllerMetrics,
    /// The reporter to record Kubernetes Events as (`kruise-manager`, this instance's identity).
    pub reporter: Reporter,
    /// Fires when the controller must stop (leadership ended or the process is shutting down).
    pub shutdown: Shutdown,
    /// The informers every controller of this run shares: one watch and one stored copy per kind (ask
    /// for pods with `context.informers.get::<Pod>()`, never start a pod watch of your own).
    pub informers: Informers,
}

impl ControllerContext {
    /// The Event sink of a controller, reporting as `component` (upstream's component name, e.g.
    /// `cloneset-controller`) from this instance.
    #[must_use]
    pub fn event_sink(&self, component: &str) -> EventSink {
        EventSink::spawn(
            self.client.clone(),
            Reporter {
                controller: component.to_owned(),
                instance: self.reporter.instance.clone(),
            },
        )
    }
}

/// A controller the manager runs while leading.
pub trait ManagedController: Send + Sync {
    /// Its name (metrics label, logs).
    fn name(&self) -> &str;
    /// Runs it until `context.shutdown` fires.
    fn run(&self, context: ControllerContext) -> ControllerFuture;
}

struct FnController<F> {
    name: String,
    run: F,
}

impl<F, Fut> ManagedController for FnController<F>
where
    F: Fn(ControllerContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<(), ControllerError>> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin((self.run)(context))
    }
}

/// The registered controllers.
#[derive(Clone, Default)]
pub struct ControllerSet {
    controllers: Vec<Arc<dyn ManagedController>>,
}

impl ControllerSet {
    /// No controller yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a controller.
    pub fn register(&mut self, controller: impl ManagedController + 'static) -> &mut Self {
        self.controllers.push(Arc::new(controller));
        self
    }

    /// Adds a controller given as a function of its context.
    pub fn register_fn<F, Fut>(&mut self, name: &str, run: F) -> &mut Self
    where
        F: Fn(ControllerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), ControllerError>> + Send + 'static,
    {
        self.register(FnController {
            name: name.to_owned(),
            run,
        })
    }

    /// The names, in registration order.
    #[must_use]
    pub fn names(&self) -> Vec<&str> {
        self.controllers
            .iter()
            .map(|controller| controller.name())
            .collect()
    }

    /// Runs every controller until `shutdown`.
    ///
    /// Once `shutdown` fires, the controllers get `stop_within` to finish; the ones still running then are
    /// aborted (and named in a warning). A kube-runtime `Controller` asked to stop gracefully before its
    /// store has finished its first list (a watch still retrying) waits for that list forever; this bound
    /// keeps such a controller from holding the whole process.
    ///
    /// The controllers write with `client` (the leader's, guarded by its term's
    /// [`crate::write_fence::WriteFence`]) and read watched objects from `informers` (the process's: they
    /// outlive a leadership term, so a new term starts from warm caches and the webhooks read the same
    /// copies).
    ///
    /// # Errors
    /// A controller ended (returned, failed or panicked) before `shutdown`: the others are aborted at once
    /// and the error names it. A leader missing a controller must not go on holding the lease.
    pub async fn run_all(
        &self,
        client: Client,
        informers: &Informers,
        metrics: &Metrics,
        reporter: &Reporter,
        shutdown: Shutdown,
        stop_within: Duration,
    ) -> Result<(), ControllerError> {
        let mut tasks = tokio::task::JoinSet::new();
        let mut running = BTreeMap::new();
        for controller in &self.controllers {
            let context = ControllerContext {
                client: client.clone(),
                metrics: metrics.controller(controller.name()),
                reporter: reporter.clone(),
                shutdown: shutdown.clone(),
                informers: informers.clone(),
            };
            let name = controller.name().to_owned();
            let run = controller.run(context);
            tracing::info!(controller = %name, "starting controller");
            let task = tasks.spawn(run);
            running.insert(task.id(), name);
        }
        if tasks.is_empty() {
            shutdown.wait().await;
            return Ok(());
        }
        let deadline = async {
            shutdown.clone().wait().await;
            tokio::time::sleep(stop_within).await;
        };
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                joined = tasks.join_next_with_id() => {
                    let Some(joined) = joined else { break };
                    let (id, ended) = match joined {
                        Ok((id, Ok(()))) => (id, None),
                        Ok((id, Err(error))) => (id, Some(error.message)),
                        Err(error) => (error.id(), Some(error.to_string())),
                    };
                    let name = running.remove(&id).unwrap_or_default();
                    if !shutdown.is_triggered() {
                        let message = match ended {
                            Some(reason) => format!("ended while leading: {reason}"),
                            None => "ended while leading".to_owned(),
                        };
                        tracing::error!(controller = %name, %message, "stopping every controller");
                        tasks.shutdown().await;
                        return Err(ControllerError {
                            controller: name,
                            message,
                        });
                    }
                    match ended {
                        None => tracing::info!(controller = %name, "controller stopped"),
                        Some(error) => tracing::error!(controller = %name, %error, "controller failed"),
                    }
                }
                () = &mut deadline => {
                    for name in running.values() {
                        tracing::warn!(
                            controller = %name,
                            timeout = ?stop_within,
                            "controller did not stop in time; aborting it"
                        );
                    }
                    tasks.shutdown().await;
                    break;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable_client() -> kube::Client {
        kube::Client::try_from(kube::Config::new(
            "http://127.0.0.1:9".parse().expect("a valid URL"),
        ))
        .expect("a client needs no connection")
    }

    fn reporter() -> Reporter {
        Reporter {
            controller: "test".into(),
            instance: None,
        }
    }

    /// A controller that waits for its shutdown, counting in `aborted` when it is dropped without one.
    fn register_waiting(
        controllers: &mut ControllerSet,
        aborted: &Arc<std::sync::atomic::AtomicUsize>,
    ) {
        let aborted = Arc::clone(aborted);
        controllers.register_fn("waiting", move |context| {
            let guard = AbortCounter(Arc::clone(&aborted), context.shutdown.clone());
            async move {
                context.shutdown.wait().await;
                drop(guard);
                Ok(())
            }
        });
    }

    struct AbortCounter(Arc<std::sync::atomic::AtomicUsize>, Shutdown);

    impl Drop for AbortCounter {
        fn drop(&mut self) {
            if !self.1.is_triggered() {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }

    async fn run_until_it_ends(controllers: &ControllerSet) -> Result<(), ControllerError> {
        let (_trigger, shutdown) = crate::shutdown::channel();
        let metrics = Metrics::new();
        let reporter = reporter();
        let informers = Informers::new(unreachable_client());
        let run = controllers.run_all(
            unreachable_client(),
            &informers,
            &metrics,
            &reporter,
            shutdown,
            Duration::from_secs(3600),
        );
        tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("run_all returned when a controller ended while leading")
    }

    #[tokio::test]
    async fn a_controller_that_panics_while_leading_ends_the_set() {
        let mut controllers = ControllerSet::new();
        let aborted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        register_waiting(&mut controllers, &aborted);
        controllers.register_fn("fragile", |_context| async {
            panic!("the fragile controller breaks");
        });
        let error = run_until_it_ends(&controllers)
            .await
            .expect_err("a panicked controller is an error");
        assert_eq!(error.controller, "fragile");
        assert!(error.message.contains("panic"), "{}", error.message);
        assert_eq!(
            aborted.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the other controller was aborted"
        );
    }

    #[tokio::test]
    async fn a_controller_that_returns_while_leading_ends_the_set() {
        for fails in [false, true] {
            let mut controllers = ControllerSet::new();
            let aborted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            register_waiting(&mut controllers, &aborted);
            controllers.register_fn("quitter", move |_context| async move {
                if fails {
                    Err(ControllerError {
                        controller: "quitter".into(),
                        message: "cannot go on".into(),
                    })
                } else {
                    Ok(())
                }
            });
            let error = run_until_it_ends(&controllers)
                .await
                .expect_err("a controller ending early is an error");
            assert_eq!(error.controller, "quitter");
            assert_eq!(
                error.message.contains("cannot go on"),
                fails,
                "{}",
                error.message
            );
            assert_eq!(aborted.load(std::sync::atomic::Ordering::SeqCst), 1);
        }
    }

    #[tokio::test]
    async fn no_controller_runs_until_shutdown() {
        let (trigger, shutdown) = crate::shutdown::channel();
        let controllers = ControllerSet::new();
        let run = tokio::spawn(async move {
            controllers
                .run_all(
                    unreachable_client(),
                    &Informers::new(unreachable_client()),
                    &Metrics::new(),
                    &reporter(),
                    shutdown,
                    Duration::from_secs(3600),
                )
                .await
        });
        tokio::task::yield_now().await;
        assert!(!run.is_finished(), "an empty set is not a failed one");
        trigger.trigger();
        let ended = tokio::time::timeout(Duration::from_secs(30), run).await;
        assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
    }

    /// A controller that never looks at its shutdown signal (as a kube-runtime `Controller` whose store
    /// never became ready): `run_all` must still return once the grace period after shutdown is over.
    #[tokio::test]
    async fn controllers_that_ignore_shutdown_are_aborted_after_the_grace_period() {
        let mut controllers = ControllerSet::new();
        let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
        controllers.register_fn("stuck", |_context| async {
            std::future::pending::<()>().await;
            Ok(())
        });
        let stopped_tx = std::sync::Mutex::new(Some(stopped_tx));
        controllers.register_fn("polite", move |context| {
            let stopped_tx = stopped_tx.lock().ok().and_then(|mut tx| tx.take());
            async move {
                context.shutdown.wait().await;
                if let Some(tx) = stopped_tx {
                    let _ = tx.send(());
                }
                Ok(())
            }
        });
        let (trigger, shutdown) = crate::shutdown::channel();
        let metrics = Metrics::new();
        let reporter = reporter();
        let informers = Informers::new(unreachable_client());
        let run = controllers.run_all(
            unreachable_client(),
            &informers,
            &metrics,
            &reporter,
            shutdown,
            Duration::from_millis(200),
        );
        trigger.trigger();
        let finished = tokio::time::timeout(Duration::from_secs(30), run).await;
        assert!(
            matches!(finished, Ok(Ok(()))),
            "run_all waited for a controller that never stops: {finished:?}"
        );
        assert!(
            stopped_rx.await.is_ok(),
            "the polite controller saw the shutdown"
        );
    }
}
