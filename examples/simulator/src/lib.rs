//! The node simulator: plays kubelet (and the scheduler's binding step) for N simulated nodes, so pods on a
//! control plane without real nodes progress. Nothing else makes a pod Running there.
//!
//! * [`node`]: the Node objects (Ready, capacity, addresses), registered at start, heartbeats renewed;
//! * [`binding`]: pending pods are bound through `pods/binding`, round-robin or least-loaded (a pod whose
//!   required node affinity names one node, as a daemon pod's does, to that node only; a pod with a
//!   nodeSelector or required node affinity to a node whose labels match, [`node_fit`], else it is marked
//!   `PodScheduled=False`, reason `Unschedulable`);
//! * [`pod_status`]: the status a kubelet would report now (pure): Pending, then Running with deterministic
//!   [`identity`] (image IDs per image, container IDs per start), `Ready` honouring readiness gates, and a
//!   restart of just the changed container after an in-place image update;
//! * [`job_exit`]: job pods (`restartPolicy` Never/OnFailure) exit with a code after the job run duration;
//! * [`termination`]: terminating pods are removed (grace period 0) after the termination delay;
//! * containerd-backed mode ([`cri_node`], [`runtime_status`]): on nodes given `--cri-endpoint`, pods run as
//!   real sandboxes and containers on a CRI runtime, restarted as kubelet would, with the environment kubelet
//!   builds ([`container_env`]);
//! * failure injection ([`SimulatorConfig::never_ready`], [`SimulatorConfig::slow_nodes`]);
//! * [`Simulator`]: the I/O loop (kube-runtime reflector + controller over pods, optimistic concurrency).
//!
//! Use it from a test or a binary:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kruise_runtime::shutdown;
//! use kruise_simulator::{Simulator, SimulatorConfig};
//!
//! let client = kube::Client::try_default().await?;
//! let (trigger, signal) = shutdown::channel();
//! let config = SimulatorConfig { nodes: 2, node_prefix: "test".into(), ..SimulatorConfig::default() };
//! let task = tokio::spawn(Simulator::new(client, config).run(signal));
//! // ... create pods, watch them become Running and Ready ...
//! trigger.trigger();
//! task.await??;
//! # Ok(()) }
//! ```

pub mod binding;
pub mod container_env;
pub mod cri_node;
pub mod identity;
pub mod job_exit;
pub mod node;
pub mod node_fit;
pub mod options;
pub mod pod_status;
pub mod runner;
pub mod runtime_status;
pub mod selector;
pub mod termination;

pub use options::SimulatorConfig;
pub use runner::{Simulator, SimulatorError};
