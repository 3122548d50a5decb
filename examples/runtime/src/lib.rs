//! The runtime layer of kruise-rs controllers: what every controller of a process shares.
//!
//! * [`informer`]: one watch and one in-memory copy per kind for the whole process ([`Informers`]), with
//!   secondary indexes (owner UID, node name, ...) and a change stream every controller can subscribe to.
//!   Objects are stored once, without `managedFields`, as `Arc`s.
//! * [`open_watches`]: a client layer counting the watch requests the process has open, by resource (the
//!   `api_open_watches` metric), so "one pod watch per process" is checked, not assumed.
//! * [`write_fence`]: a client wrapper that refuses writes once a leadership term may be over (on the
//!   monotonic clock), over a connection pool of its own whose sockets refuse to write then too, so a
//!   deposed or frozen-then-resumed leader writes nothing more.
//!
//! The decisions themselves live in the libraries (`kruise-schedule`, `kruise-sidecar`, ...); this crate
//! does the I/O around them.

pub mod actions;
pub mod controllers;
pub mod cri;
pub mod duration;
pub mod events;
pub mod expectations;
pub mod harness;
pub mod informer;
pub mod logging;
pub mod metrics;
pub mod open_watches;
pub mod process_metrics;
pub mod queue_depth;
pub mod shutdown;
pub mod write_fence;

pub use informer::{Change, Indexed, Informer, Informers};
pub use open_watches::{OpenWatches, OpenWatchesLayer};
pub use write_fence::WriteFence;
