//! The example binaries of kruise-rs and the pieces they share.
//!
//! * `kruise`: the offline command-line tool ([`cli`]): `kruise crds` prints every OpenKruise
//!   CustomResourceDefinition; `kruise inplace diff` shows what an in-place update between two revisions
//!   changes, or why the pod must be recreated; later subcommands show what the controllers would do to a
//!   manifest.
//! * `kruise-manager` ([`manager`]): CRD installation, leader election on a Lease, health and metrics
//!   endpoints, the controller registration point, and the pod mutating [`webhook`].
//! * `kruise-daemon` ([`daemon`]): the node agent: ContainerRecreateRequests and NodeImage pulls through
//!   CRI ([`cri`]); the decisions are in `kruise_lifecycle::container_recreate` and `kruise_schedule::image_pull`
//!   ([`crr`] and [`imagepull`] are kruise-manager's CRR webhook and controllers); the Job
//!   [`sidecar_terminator`] (decisions in `kruise_sidecar::terminator`) runs in kruise-manager.
//! * `kruise-node-simulator` ([`simulator`]): plays kubelet for simulated nodes on a control plane without
//!   real ones (`scripts/control-plane.sh`).
//!
//! ```
//! use kruise_examples::cli::input::parse_objects;
//!
//! let objects = parse_objects("apiVersion: v1\nkind: List\nitems:\n- {kind: Pod}\n- {kind: Pod}\n", "<inline>").unwrap();
//! assert_eq!(objects.len(), 2);
//! ```

pub mod cli;
pub mod cri;
pub mod crr;
pub mod daemon;
pub mod duration;
pub mod imagepull;
pub mod logging;
pub mod manager;
pub mod shutdown;
pub mod sidecar_terminator;
pub mod simulator;
pub mod webhook;
