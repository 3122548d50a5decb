//! The upstream feature gates the container meta worker reads from kruise-daemon's `--feature-gates`.

use kruise_api::feature_gate::gate_entries;

/// `DaemonWatchingPod` and `InPlaceUpdateEnvFromMetadata`, both on by default as upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerMetaGates {
    /// `DaemonWatchingPod`: the daemon watches its node's pods and reports their container meta.
    pub daemon_watching_pod: bool,
    /// `InPlaceUpdateEnvFromMetadata`: env hashes are reported and containers whose env from pod metadata
    /// changed during an in-place update are restarted.
    pub in_place_update_env_from_metadata: bool,
}

impl Default for ContainerMetaGates {
    fn default() -> Self {
        Self {
            daemon_watching_pod: true,
            in_place_update_env_from_metadata: true,
        }
    }
}

impl ContainerMetaGates {
    /// Upstream's name of [`Self::daemon_watching_pod`].
    pub const DAEMON_WATCHING_POD: &'static str = "DaemonWatchingPod";
    /// Upstream's name of [`Self::in_place_update_env_from_metadata`].
    pub const ENV_FROM_METADATA: &'static str = "InPlaceUpdateEnvFromMetadata";

    /// The defaults with a `--feature-gates` list (`Name=true,...`) applied; gates of other workers are
    /// left to them.
    ///
    /// # Errors
    /// A message naming the first entry that is not `Name=bool`.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut gates = Self::default();
        for entry in gate_entries(list) {
            let (name, enabled) = entry.map_err(|entry| {
                format!("--feature-gates {entry:?}: expected Name=true or Name=false")
            })?;
            match name {
                Self::DAEMON_WATCHING_POD => gates.daemon_watching_pod = enabled,
                Self::ENV_FROM_METADATA => gates.in_place_update_env_from_metadata = enabled,
                _ => {}
            }
        }
        Ok(gates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(
            ContainerMetaGates::parse(""),
            Ok(ContainerMetaGates::default())
        );
        let gates = ContainerMetaGates::parse(
            "InPlaceUpdateEnvFromMetadata=false, PodProbeMarkerGate=true",
        )
        .unwrap();
        assert!(gates.daemon_watching_pod);
        assert!(!gates.in_place_update_env_from_metadata);
        assert!(
            !ContainerMetaGates::parse("DaemonWatchingPod=0")
                .unwrap()
                .daemon_watching_pod
        );
        assert_eq!(
            ContainerMetaGates::parse("DaemonWatchingPod").unwrap_err(),
            "--feature-gates \"DaemonWatchingPod\": expected Name=true or Name=false"
        );
    }
}
