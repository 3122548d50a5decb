//! NodePodProbe defaults: none. NodePodProbes are written by the PodProbeMarker controller, which copies the
//! probes as they are.

use super::ApplyDefaults;
use crate::apps::v1alpha1;

impl ApplyDefaults for v1alpha1::NodePodProbe {
    fn apply_defaults(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changes() {
        let yaml = "
apiVersion: apps.kruise.io/v1alpha1
kind: NodePodProbe
metadata: {name: node-1}
spec:
  podProbes:
  - {name: p, namespace: ns, uid: u, IP: 10.0.0.1, probes: [{name: ppm#idle, containerName: main, probe: {tcpSocket: {port: 80}}}]}
";
        let npp: v1alpha1::NodePodProbe = serde_saphyr::from_str(yaml).unwrap();
        let mut defaulted = npp.clone();
        defaulted.apply_defaults();
        assert_eq!(defaulted, npp);
    }
}
