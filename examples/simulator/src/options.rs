//! The simulator's settings (also its command-line flags).

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::binding::Strategy;
use super::node::NodeShape;
use kruise_runtime::duration::parse_duration;

/// How many nodes to play, how to place pods on them and how fast (or badly) they behave.
#[derive(Clone, Debug, clap::Args)]
pub struct SimulatorConfig {
    /// Number of simulated nodes.
    #[arg(long, default_value_t = 3)]
    pub nodes: usize,
    /// Node names are `<prefix>-<index>`.
    #[arg(long, default_value = "kruise-sim")]
    pub node_prefix: String,
    /// How pending pods are placed on the nodes.
    #[arg(long, value_enum, default_value_t)]
    pub binding: Strategy,
    /// Most pods per node.
    #[arg(long, default_value_t = 110)]
    pub max_pods: usize,
    /// CPU capacity of each node.
    #[arg(long, default_value = "8")]
    pub node_cpu: String,
    /// Memory capacity of each node.
    #[arg(long, default_value = "32Gi")]
    pub node_memory: String,
    /// From a pod's first status to its containers running and ready (e.g. 500ms, 2s).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub ready_delay: Duration,
    /// From an in-place image change to the restarted container running.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub restart_delay: Duration,
    /// How long a job pod's containers (`restartPolicy` Never/OnFailure) run before they exit with the
    /// code of the pod annotation `simulator.kruise.io/exit-code` (default 0).
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub job_run_duration: Duration,
    /// From a pod's deletion request to its removal (capped by its grace period).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub termination_delay: Duration,
    /// Failure injection: pods matching this label selector (`kubectl -l` syntax) run but never become
    /// ready.
    #[arg(long, value_name = "SELECTOR", value_parser = parse_selector)]
    pub never_ready: Option<LabelSelector>,
    /// Failure injection: a slow node (repeatable); its pods start and restart `--slow-node-delay` later.
    #[arg(long = "slow-node", value_name = "NODE")]
    pub slow_nodes: Vec<String>,
    /// The extra delay of slow nodes.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub slow_node_delay: Duration,
    /// Only bind and run pods of this namespace (default: all namespaces).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Only bind pods that ask for this scheduler.
    #[arg(long, default_value = "default-scheduler")]
    pub scheduler_name: String,
    /// How often node heartbeats are renewed.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub heartbeat_interval: Duration,
    /// Delete the simulated Node objects on exit (by default they stay, like a stopped kubelet's).
    #[arg(long)]
    pub delete_nodes_on_exit: bool,
    /// Pods reconciled at the same time.
    #[arg(long, default_value_t = 16)]
    pub concurrency: u16,
    /// containerd-backed mode for a node (repeatable): its pods run as real sandboxes and containers on the
    /// CRI v1 runtime at this endpoint (see `scripts/containerd.sh`).
    #[arg(long = "cri-endpoint", value_name = "NODE=unix:///PATH", value_parser = parse_cri_endpoint)]
    pub cri_endpoints: Vec<(String, String)>,
    /// Where containerd-backed pods write their container logs.
    #[arg(long, default_value = "/tmp/kruise-sim-pod-logs")]
    pub pod_log_dir: std::path::PathBuf,
    /// An extra label of a node (repeatable), e.g. `kruise-sim-0:topology.kubernetes.io/zone=zone-a`: pods
    /// with a required node affinity (or nodeSelector) are bound only to nodes whose labels match it, and a
    /// pod no node matches is marked `PodScheduled=False`, reason `Unschedulable`.
    #[arg(long = "node-label", value_name = "NODE:KEY=VALUE", value_parser = parse_node_label)]
    pub node_labels: Vec<(String, String, String)>,
}

impl Default for SimulatorConfig {
    fn default() -> Self {
        let shape = NodeShape::default();
        Self {
            nodes: 3,
            node_prefix: "kruise-sim".into(),
            binding: Strategy::default(),
            max_pods: shape.max_pods,
            node_cpu: shape.cpu,
            node_memory: shape.memory,
            ready_delay: Duration::from_secs(1),
            restart_delay: Duration::from_secs(2),
            job_run_duration: Duration::from_secs(2),
            termination_delay: Duration::ZERO,
            never_ready: None,
            slow_nodes: Vec::new(),
            slow_node_delay: Duration::from_secs(5),
            namespace: None,
            scheduler_name: "default-scheduler".into(),
            heartbeat_interval: Duration::from_secs(30),
            delete_nodes_on_exit: false,
            concurrency: 16,
            cri_endpoints: Vec::new(),
            pod_log_dir: "/tmp/kruise-sim-pod-logs".into(),
            node_labels: Vec::new(),
        }
    }
}

impl SimulatorConfig {
    /// The node names, in order: `<prefix>-0`, `<prefix>-1`, ...
    #[must_use]
    pub fn node_names(&self) -> Vec<String> {
        (0..self.nodes)
            .map(|index| format!("{}-{index}", self.node_prefix))
            .collect()
    }

    /// The extra labels of `node` (`--node-label`).
    #[must_use]
    pub fn extra_labels(&self, node: &str) -> std::collections::BTreeMap<String, String> {
        self.node_labels
            .iter()
            .filter(|(name, _, _)| name == node)
            .map(|(_, key, value)| (key.clone(), value.clone()))
            .collect()
    }

    /// The resources of each node.
    #[must_use]
    pub fn node_shape(&self) -> NodeShape {
        NodeShape {
            cpu: self.node_cpu.clone(),
            memory: self.node_memory.clone(),
            max_pods: self.max_pods,
        }
    }
}

/// `NODE:KEY=VALUE`.
fn parse_node_label(text: &str) -> Result<(String, String, String), String> {
    let (node, label) = text
        .split_once(':')
        .ok_or_else(|| format!("node label {text:?}: expected NODE:KEY=VALUE"))?;
    let (key, value) = label
        .split_once('=')
        .ok_or_else(|| format!("node label {text:?}: expected NODE:KEY=VALUE"))?;
    if node.is_empty() || key.is_empty() {
        return Err(format!(
            "node label {text:?}: the node and the key must not be empty"
        ));
    }
    Ok((node.to_owned(), key.to_owned(), value.to_owned()))
}

fn parse_cri_endpoint(text: &str) -> Result<(String, String), String> {
    super::cri_node::parse_endpoint_flag(text)
}

fn parse_selector(text: &str) -> Result<LabelSelector, String> {
    super::selector::parse(text).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        config: SimulatorConfig,
    }

    #[test]
    fn flags_parse_into_the_config() {
        let cli = Cli::try_parse_from([
            "sim",
            "--nodes=2",
            "--node-prefix=n",
            "--binding=least-loaded",
            "--ready-delay=250ms",
            "--never-ready=app=broken",
            "--slow-node=n-1",
            "--cri-endpoint=n-0=unix:///run/c.sock",
            "--node-label=n-1:topology.kubernetes.io/zone=zone-b",
        ])
        .unwrap();
        assert_eq!(cli.config.node_names(), ["n-0", "n-1"]);
        assert_eq!(cli.config.binding, Strategy::LeastLoaded);
        assert_eq!(cli.config.ready_delay, Duration::from_millis(250));
        assert!(cli.config.never_ready.is_some());
        assert_eq!(cli.config.slow_nodes, ["n-1"]);
        assert_eq!(
            cli.config.cri_endpoints,
            [("n-0".to_owned(), "unix:///run/c.sock".to_owned())]
        );
        assert_eq!(
            cli.config.extra_labels("n-1"),
            [(
                "topology.kubernetes.io/zone".to_owned(),
                "zone-b".to_owned()
            )]
            .into()
        );
        assert!(cli.config.extra_labels("n-0").is_empty());
    }

    #[test]
    fn flag_defaults_equal_the_default_config() {
        let cli = Cli::try_parse_from(["sim"]).unwrap();
        let defaults = SimulatorConfig::default();
        assert_eq!(cli.config.node_names(), defaults.node_names());
        assert_eq!(cli.config.node_shape(), defaults.node_shape());
        assert_eq!(
            (
                cli.config.ready_delay,
                cli.config.restart_delay,
                cli.config.heartbeat_interval
            ),
            (
                defaults.ready_delay,
                defaults.restart_delay,
                defaults.heartbeat_interval
            )
        );
    }

    #[test]
    fn bad_flags_are_rejected() {
        assert!(Cli::try_parse_from(["sim", "--ready-delay=soon"]).is_err());
        assert!(Cli::try_parse_from(["sim", "--never-ready==x"]).is_err());
        assert!(Cli::try_parse_from(["sim", "--binding=random"]).is_err());
        assert!(Cli::try_parse_from(["sim", "--node-label=n-0"]).is_err());
        assert!(Cli::try_parse_from(["sim", "--node-label=n-0:zone"]).is_err());
        assert!(Cli::try_parse_from(["sim", "--node-label=:zone=a"]).is_err());
    }
}
