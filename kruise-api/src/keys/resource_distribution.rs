//! ResourceDistribution (upstream `pkg/webhook/resourcedistribution`).

/// Annotation on a distributed resource: the hash code of the source resource.
pub const RESOURCE_HASH_CODE_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.hashcode";

/// Annotation on a distributed resource: the ResourceDistribution it came from.
pub const RESOURCE_FROM_ANNOTATION: &str = "kruise.io/resourcedistribution.resource.from";

/// Annotation on a distributed resource: when it was last written, in Go's `time.Time.String()` form (e.g.
/// `2021-09-06 08:44:52.7861421 +0000 UTC m=+12896.810364601`). Written by older upstream versions (it
/// appears in the user guide's example); informational only.
pub const RESOURCE_DISTRIBUTED_TIMESTAMP_ANNOTATION: &str =
    "kruise.io/resourcedistribution.resource.distributed.timestamp";
