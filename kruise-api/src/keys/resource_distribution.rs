//! ResourceDistribution (spec 2.4).

/// Annotation on a distributed resource: the hash code of the source resource.
pub const RESOURCE_HASH_CODE_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.hashcode";

/// Annotation on a distributed resource: the ResourceDistribution it came from.
pub const RESOURCE_FROM_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.from";
