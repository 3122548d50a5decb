//! Structured logs for the binaries: `tracing` to standard error, as text or JSON lines, filtered by
//! `RUST_LOG` (default `info`, with the chatty HTTP and TLS crates at `warn`).

use tracing_subscriber::EnvFilter;

/// How log lines look.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (for log collectors).
    Json,
}

/// The filter used when `RUST_LOG` is not set.
pub const DEFAULT_FILTER: &str =
    "info,hyper=warn,rustls=warn,tower=warn,kube_client=warn,kube_runtime=warn";

/// Installs the global subscriber; a second call (tests) does nothing.
pub fn init(format: LogFormat) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    // An error means a subscriber is already installed, which is fine.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
    };
}
