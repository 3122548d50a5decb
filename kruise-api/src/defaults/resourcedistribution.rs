//! ResourceDistribution defaults: none. Upstream has no mutating webhook and no CRD `default`s for it, and
//! the distributed resource is copied as it is.

use super::ApplyDefaults;
use crate::apps::{v1alpha1, v1beta1};

impl ApplyDefaults for v1alpha1::ResourceDistribution {
    fn apply_defaults(&mut self) {}
}

impl ApplyDefaults for v1beta1::ResourceDistribution {
    fn apply_defaults(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changes() {
        let yaml = "
apiVersion: apps.kruise.io/v1alpha1
kind: ResourceDistribution
metadata: {name: sample}
spec:
  resource: {apiVersion: v1, kind: ConfigMap, metadata: {name: game-demo}, data: {a: b}}
  targets: {allNamespaces: true}
";
        let alpha: v1alpha1::ResourceDistribution = serde_saphyr::from_str(yaml).unwrap();
        let mut defaulted = alpha.clone();
        defaulted.apply_defaults();
        assert_eq!(defaulted, alpha);
        let beta = v1beta1::ResourceDistribution::from(&alpha);
        let mut defaulted = beta.clone();
        defaulted.apply_defaults();
        assert_eq!(defaulted, beta);
    }
}
