//! One shutdown signal for every task of a process: triggered once (by SIGINT/SIGTERM, by losing a lease,
//! by a test), observed by many.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use kruise_runtime::shutdown;
//!
//! let (trigger, shutdown) = shutdown::channel();
//! let waiter = tokio::spawn(shutdown.clone().wait());
//! assert!(!shutdown.is_triggered());
//! trigger.trigger();
//! waiter.await.unwrap();
//! assert!(shutdown.is_triggered());
//! # });
//! ```

use tokio::sync::watch;

/// Starts the shutdown (cloneable; any clone can trigger it).
#[derive(Clone, Debug)]
pub struct Trigger {
    sender: std::sync::Arc<watch::Sender<bool>>,
}

/// Observes the shutdown (cloneable).
#[derive(Clone, Debug)]
pub struct Shutdown {
    receiver: watch::Receiver<bool>,
}

/// A new, untriggered shutdown signal.
#[must_use]
pub fn channel() -> (Trigger, Shutdown) {
    let (sender, receiver) = watch::channel(false);
    (
        Trigger {
            sender: std::sync::Arc::new(sender),
        },
        Shutdown { receiver },
    )
}

impl Trigger {
    /// Starts the shutdown; later calls do nothing.
    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    /// A receiver for this signal.
    #[must_use]
    pub fn subscribe(&self) -> Shutdown {
        Shutdown {
            receiver: self.sender.subscribe(),
        }
    }

    /// Triggers the shutdown on the first SIGINT or SIGTERM (in a background task). Call inside a Tokio
    /// runtime.
    pub fn on_signals(&self) {
        let trigger = self.clone();
        tokio::spawn(async move {
            let name = wait_for_signal().await;
            tracing::info!(signal = name, "shutting down");
            trigger.trigger();
        });
    }
}

impl Shutdown {
    /// Whether the shutdown has started.
    #[must_use]
    pub fn is_triggered(&self) -> bool {
        *self.receiver.borrow()
    }

    /// Resolves once the shutdown has started (at once if it already has, or if every trigger is gone).
    pub async fn wait(mut self) {
        // An error means every sender is gone: nobody can trigger any more, so treat it as shut down.
        let _ = self.receiver.wait_for(|triggered| *triggered).await;
    }
}

#[cfg(unix)]
async fn wait_for_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut interrupt), Ok(mut terminate)) => tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
        },
        _ => {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}
