//! How the informers' watches fare: how often each kind was listed in full, and why its watch broke.
//!
//! A watch resumes from the last resource version it saw. When the API server no longer has that version
//! (it restarted, its watch cache moved on, etcd compacted) it answers `410 Gone` and the informer lists
//! the kind again: `informer_lists_total` counts every full list stored (1 at start, +1 per relist) and
//! `informer_watch_errors_total{reason}` every broken or refused watch, so an operator can tell a
//! relisting storm (`gone`), missing RBAC (`forbidden`) and an unreachable API server (`transport`)
//! apart.
//!
//! ```
//! use kruise_runtime::informer::{InformerHealth, WatchErrorReason};
//!
//! let health = InformerHealth::new();
//! health.count_list("pods");
//! health.count_error("pods", WatchErrorReason::Gone);
//! assert_eq!(health.lists("pods"), 1);
//! assert_eq!(health.errors("pods", WatchErrorReason::Gone), 1);
//! assert_eq!(health.errors("pods", WatchErrorReason::Forbidden), 0);
//! ```

use kube::runtime::watcher;
use std::fmt::Write as _;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// Why a watch broke or could not start (the metric's `reason` label: `gone`, `forbidden`, `api`,
/// `transport`).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum WatchErrorReason {
    /// `410 Gone` (reason `Expired`): the resource version to resume from is no longer available; the
    /// informer lists again.
    Gone,
    /// `403 Forbidden`: the process's RBAC does not allow the list or watch.
    Forbidden,
    /// Another status from the API server.
    Api,
    /// No answer: the connection failed or broke (the API server is down or unreachable).
    Transport,
}

impl WatchErrorReason {
    /// The reason of a watcher error.
    #[must_use]
    pub fn of(error: &watcher::Error) -> Self {
        match error {
            watcher::Error::WatchError(status) => Self::of_code(status.code),
            watcher::Error::InitialListFailed(error)
            | watcher::Error::WatchStartFailed(error)
            | watcher::Error::WatchFailed(error) => match error {
                kube::Error::Api(status) => Self::of_code(status.code),
                _ => Self::Transport,
            },
            watcher::Error::NoResourceVersion => Self::Api,
        }
    }

    /// The label value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gone => "gone",
            Self::Forbidden => "forbidden",
            Self::Api => "api",
            Self::Transport => "transport",
        }
    }

    fn of_code(code: u16) -> Self {
        match code {
            410 => Self::Gone,
            403 => Self::Forbidden,
            _ => Self::Api,
        }
    }
}

impl EncodeLabelValue for WatchErrorReason {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabels {
    resource: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    resource: String,
    reason: WatchErrorReason,
}

/// The lists and watch errors of a process's informers, by resource. Cloning shares the counts.
#[derive(Clone, Debug, Default)]
pub struct InformerHealth {
    lists: Family<ResourceLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
}

impl InformerHealth {
    /// Nothing counted yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `informer_lists_total` and `informer_watch_errors_total` (under the registry's prefix).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "informer_lists",
            "Full lists an informer stored, by resource (one at start, one more per relist)",
            self.lists.clone(),
        );
        registry.register(
            "informer_watch_errors",
            "Broken or refused list and watch requests of an informer, by resource and reason",
            self.errors.clone(),
        );
    }

    /// Counts a full list of `resource` stored.
    pub fn count_list(&self, resource: &str) {
        self.lists
            .get_or_create(&ResourceLabels {
                resource: resource.to_owned(),
            })
            .inc();
    }

    /// Counts a watch error of `resource`.
    pub fn count_error(&self, resource: &str, reason: WatchErrorReason) {
        self.errors
            .get_or_create(&ErrorLabels {
                resource: resource.to_owned(),
                reason,
            })
            .inc();
    }

    /// The full lists of `resource` stored so far.
    #[must_use]
    pub fn lists(&self, resource: &str) -> u64 {
        self.lists
            .get_or_create(&ResourceLabels {
                resource: resource.to_owned(),
            })
            .get()
    }

    /// The watch errors of `resource` with `reason` so far.
    #[must_use]
    pub fn errors(&self, resource: &str, reason: WatchErrorReason) -> u64 {
        self.errors
            .get_or_create(&ErrorLabels {
                resource: resource.to_owned(),
                reason,
            })
            .get()
    }
}

#[cfg(test)]
mod tests {
    use kube::core::Status;
    use kube::runtime::watcher;

    use super::{InformerHealth, WatchErrorReason};

    fn status(code: u16) -> Box<Status> {
        Box::new(Status::failure("refused", "Reason").with_code(code))
    }

    #[test]
    fn a_gone_watch_is_told_from_forbidden_and_other_statuses() {
        let gone = watcher::Error::WatchError(status(410));
        let forbidden = watcher::Error::WatchStartFailed(kube::Error::Api(status(403)));
        let other = watcher::Error::InitialListFailed(kube::Error::Api(status(500)));
        let no_version = watcher::Error::NoResourceVersion;
        let transport = watcher::Error::WatchFailed(kube::Error::LinesCodecMaxLineLengthExceeded);
        assert_eq!(WatchErrorReason::of(&gone), WatchErrorReason::Gone);
        assert_eq!(
            WatchErrorReason::of(&forbidden),
            WatchErrorReason::Forbidden
        );
        assert_eq!(WatchErrorReason::of(&other), WatchErrorReason::Api);
        assert_eq!(WatchErrorReason::of(&no_version), WatchErrorReason::Api);
        assert_eq!(
            WatchErrorReason::of(&transport),
            WatchErrorReason::Transport
        );
    }

    #[test]
    fn counts_are_kept_per_resource_and_encoded() {
        let health = InformerHealth::new();
        let mut registry = prometheus_client::registry::Registry::with_prefix("kruise_manager");
        health.register(&mut registry);
        health.count_list("pods");
        health.count_list("pods");
        health.count_error("pods", WatchErrorReason::Gone);
        health.count_error("nodes", WatchErrorReason::Transport);
        assert_eq!(health.lists("pods"), 2);
        assert_eq!(health.lists("nodes"), 0);
        assert_eq!(health.errors("nodes", WatchErrorReason::Transport), 1);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains(r#"kruise_manager_informer_lists_total{resource="pods"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"kruise_manager_informer_watch_errors_total{resource="pods",reason="gone"} 1"#
            ),
            "{text}"
        );
    }
}
