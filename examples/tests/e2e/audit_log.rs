//! The API server's audit log of the run (`scripts/control-plane.sh` writes every write request at level
//! Metadata to `RUN_DIR/audit.log`, one JSON event a line): who wrote what, and when the server received
//! it. A write that reached the API server cannot be missing from it (the log backend blocks the request
//! until the event is written).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use k8s_openapi::jiff::Timestamp;
use serde::Deserialize;

use crate::support::Cluster;

/// One audited write request.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEvent {
    /// `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub verb: String,
    /// The client's `User-Agent` (kruise-manager sends `kruise-manager/VERSION (IDENTITY)`).
    #[serde(default)]
    pub user_agent: String,
    /// When the API server received the request (RFC 3339, microseconds).
    pub request_received_timestamp: String,
    /// The object written.
    #[serde(default)]
    pub object_ref: Option<AuditObject>,
    /// The answer's status code.
    #[serde(default)]
    pub response_status: Option<AuditStatus>,
}

/// The object of an [`AuditEvent`].
#[derive(Clone, Debug, Default, Deserialize)]
pub struct AuditObject {
    /// The resource (plural).
    #[serde(default)]
    pub resource: String,
    /// Its namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Its name.
    #[serde(default)]
    pub name: Option<String>,
    /// The subresource written (`status`, `binding`, ...), if any.
    #[serde(default)]
    pub subresource: Option<String>,
}

/// The status of an [`AuditEvent`]'s answer.
#[derive(Clone, Debug, Deserialize)]
pub struct AuditStatus {
    /// The HTTP status code.
    #[serde(default)]
    pub code: Option<u16>,
}

impl AuditEvent {
    /// When the API server received the request.
    pub fn received(&self) -> Result<Timestamp> {
        self.request_received_timestamp.parse().with_context(|| {
            format!(
                "requestReceivedTimestamp {:?}",
                self.request_received_timestamp
            )
        })
    }

    /// Whether kruise-manager `identity` sent it.
    pub fn sent_by(&self, identity: &str) -> bool {
        self.user_agent.starts_with("kruise-manager/")
            && self.user_agent.ends_with(&format!("({identity})"))
    }

    /// `verb resource namespace/name (code) at time`, for failure messages.
    pub fn describe(&self) -> String {
        let object = self.object_ref.clone().unwrap_or_default();
        format!(
            "{} {} {}/{} ({}) received {}",
            self.verb,
            object.resource,
            object.namespace.unwrap_or_default(),
            object.name.unwrap_or_default(),
            self.response_status
                .as_ref()
                .and_then(|status| status.code)
                .map_or_else(|| "?".to_owned(), |code| code.to_string()),
            self.request_received_timestamp
        )
    }
}

/// Where this run's audit log is (`None` against an external cluster, which has no known one).
pub fn audit_log_path(cluster: &Cluster) -> Option<PathBuf> {
    cluster.run_dir().map(|dir| dir.join("audit.log"))
}

/// Every audited write so far.
pub fn read_audit_log(path: &Path) -> Result<Vec<AuditEvent>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the audit log {}", path.display()))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .with_context(|| format!("{}: not an audit event: {line:.200}", path.display()))
        })
        .collect()
}
