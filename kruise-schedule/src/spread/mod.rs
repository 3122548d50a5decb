//! Spreading the pods of a workload over groups of nodes, without I/O.
//!
//! * [`workload_spread`]: OpenKruise's WorkloadSpread: which subset a new pod goes to, what the pod gets
//!   injected, the subset status arithmetic, deletion costs and the `Adaptive` strategy.

pub mod workload_spread;
