//! PodProbeMarker defaults: none. Upstream only validates PodProbeMarkers, and copies each probe into the
//! NodePodProbe as written (kruise-daemon treats unset probe timings like Kubernetes does).

use super::ApplyDefaults;
use crate::apps::v1alpha1;

impl ApplyDefaults for v1alpha1::PodProbeMarker {
    fn apply_defaults(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changes() {
        let yaml = "
apiVersion: apps.kruise.io/v1alpha1
kind: PodProbeMarker
metadata: {name: ppm, namespace: default}
spec:
  selector: {matchLabels: {app: game}}
  probes:
  - {name: idle, containerName: main, probe: {exec: {command: [/idle.sh]}}, podConditionType: game.io/idle}
";
        let ppm: v1alpha1::PodProbeMarker = serde_saphyr::from_str(yaml).unwrap();
        let mut defaulted = ppm.clone();
        defaulted.apply_defaults();
        assert_eq!(defaulted, ppm);
        assert_eq!(
            ppm.spec.probes[0].probe.timeout_seconds, None,
            "probe timings stay unset"
        );
    }
}
