//! Upstream's `TestCalculateDiffsWithExpectation` cases (`pkg/controller/cloneset/sync/cloneset_sync_utils_test.go`),
//! one row each, plus rows for the rules upstream's table does not cover.
//!
//! Pods are tokens `<rev><state><ready><deleted>` (see `support::rollout::pod`). As upstream's test does, rows run with
//! `CloneSetPartitionRollback` on (unless marked `no_rollback`) and `PreparingUpdateAsUpdate` on; the current
//! revision is `old_rev` unless the row is `consistent`.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::rollout;

use crate::support::rollout::{cloneset, ios, pods};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_schedule::cloneset::{Diff, Options, RevisionMatch, calculate_diffs};

#[derive(Clone, Copy, Default)]
struct Flags {
    consistent: bool,
    no_rollback: bool,
    exclude_label: bool,
    is_pod_update: bool,
    paused: bool,
    scale_max_unavailable: Option<&'static str>,
    exclude_field: bool,
    exclude_flag: bool,
    pods_to_delete: &'static [&'static str],
}

const F: Flags = Flags {
    consistent: false,
    no_rollback: false,
    exclude_label: false,
    is_pod_update: false,
    paused: false,
    scale_max_unavailable: None,
    exclude_field: false,
    exclude_flag: false,
    pods_to_delete: &[],
};

struct Case {
    name: &'static str,
    set: (i32, &'static str, &'static str, &'static str),
    pods: &'static str,
    flags: Flags,
    expect: &'static [(&'static str, i64)],
}

fn diff(fields: &[(&str, i64)]) -> Diff {
    let mut d = Diff::default();
    for (name, value) in fields {
        let slot = match *name {
            "scaleUpNum" => &mut d.scale_up_num,
            "scaleUpNumOldRevision" => &mut d.scale_up_num_old_revision,
            "scaleDownNum" => &mut d.scale_down_num,
            "scaleDownNumOldRevision" => &mut d.scale_down_num_old_revision,
            "scaleUpLimit" => &mut d.scale_up_limit,
            "deleteReadyLimit" => &mut d.delete_ready_limit,
            "useSurge" => &mut d.use_surge,
            "useSurgeOldRevision" => &mut d.use_surge_old_revision,
            "updateNum" => &mut d.update_num,
            "updateMaxUnavailable" => &mut d.update_max_unavailable,
            other => panic!("unknown field {other}"),
        };
        *slot = *value;
    }
    d
}

fn build(case: &Case) -> (CloneSet, Options) {
    let (replicas, partition, unavailable, surge) = case.set;
    let mut cs = cloneset(replicas, partition, unavailable, surge);
    let f = case.flags;
    if f.exclude_label {
        cs.metadata.labels = Some(
            [(
                "apps.kruise.io/cloneset-scaling-exclude-preparing-delete".to_owned(),
                "true".to_owned(),
            )]
            .into(),
        );
    }
    if let Some(value) = f.scale_max_unavailable {
        cs.spec.scale_strategy.max_unavailable = Some(ios(value));
    }
    if f.paused {
        cs.spec
            .update_strategy
            .rolling_update
            .as_mut()
            .unwrap()
            .paused = true;
    }
    cs.spec.scale_strategy.exclude_preparing_delete = f.exclude_field;
    cs.spec.scale_strategy.pods_to_delete =
        f.pods_to_delete.iter().map(|s| (*s).to_owned()).collect();
    let mut options = Options::default();
    options.partition_rollback = !f.no_rollback;
    options.preparing_update_as_update = true;
    options.exclude_preparing_delete = f.exclude_flag;
    (cs, options)
}

const EXCL: Flags = Flags {
    exclude_label: true,
    ..F
};

#[rustfmt::skip]
const CASES: &[Case] = &[
    Case { name: "an empty cloneset", set: (0, "0", "1", "0"), pods: "", flags: F, expect: &[] },
    Case { name: "increase replicas to 5 (step 1/2)", set: (5, "0", "1", "0"), pods: "", flags: F, expect: &[("scaleUpNum", 5), ("scaleUpLimit", 5)] },
    Case { name: "increase replicas to 5 (step 2/2)", set: (5, "0", "1", "0"), pods: "nNr- nNr- nNr- nNr- nNr-", flags: F, expect: &[] },
    Case { name: "specified delete 1 pod (all ready) (step 1/3)", set: (5, "0", "1", "0"), pods: "nNrd nNr- nNr- nNr- nNr-", flags: F, expect: &[("deleteReadyLimit", 1)] },
    Case { name: "specified delete 1 pod (all ready) (step 2/3)", set: (5, "0", "1", "0"), pods: "nNr- nNr- nNr- nNr-", flags: F, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "specified delete 1 pod (all ready) (step 3/3)", set: (5, "0", "1", "0"), pods: "nNr- nNr- nNr- nNr- nNr-", flags: F, expect: &[] },
    Case { name: "specified delete 2 pod (all ready) (step 1/6)", set: (5, "0", "1", "0"), pods: "nNrd nNrd nNr- nNr- nNr-", flags: F, expect: &[("deleteReadyLimit", 1)] },
    Case { name: "specified delete 2 pod (all ready) (step 2/6)", set: (5, "0", "1", "0"), pods: "nNrd nNr- nNr- nNr-", flags: F, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "specified delete 2 pod (all ready) (step 3/6)", set: (5, "0", "1", "0"), pods: "nNrd nNr- nNr- nNr- nN--", flags: F, expect: &[] },
    Case { name: "specified delete 2 pod (all ready) (step 4/6)", set: (5, "0", "1", "0"), pods: "nNrd nNr- nNr- nNr- nNr-", flags: F, expect: &[("deleteReadyLimit", 1)] },
    Case { name: "specified delete 2 pod (all ready) (step 5/6)", set: (5, "0", "1", "0"), pods: "nNr- nNr- nNr- nNr-", flags: F, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "specified delete 2 pod (all ready) (step 6/6)", set: (5, "0", "1", "0"), pods: "nNr- nNr- nNr- nNr- nNr-", flags: F, expect: &[] },
    Case { name: "specified delete 2 pod and replicas to 4 (step 1/3)", set: (4, "0", "1", "0"), pods: "nN-d nN-d nNr- nNr- nNr-", flags: F, expect: &[("deleteReadyLimit", 2)] },
    Case { name: "specified delete 2 pod and replicas to 4 (step 2/3)", set: (4, "0", "1", "0"), pods: "nNr- nNr- nNr-", flags: F, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "specified delete 2 pod and replicas to 4 (step 3/3)", set: (4, "0", "1", "0"), pods: "nNr- nNr- nNr- nNr-", flags: F, expect: &[] },
    Case { name: "update partition=3 (step 1/3)", set: (5, "3", "1", "0"), pods: "oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("updateNum", 2), ("updateMaxUnavailable", 1)] },
    Case { name: "update partition=3 (step 2/3)", set: (5, "3", "1", "0"), pods: "nNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("updateNum", 1), ("updateMaxUnavailable", 1)] },
    Case { name: "update partition=3 (step 3/3)", set: (5, "3", "1", "0"), pods: "nNr- nNr- oNr- oNr- oNr-", flags: F, expect: &[] },
    Case { name: "rollback partition=4 (step 1/3)", set: (5, "4", "2", "0"), pods: "nNr- nNr- nNr- nNr- oNr-", flags: F, expect: &[("updateNum", -3), ("updateMaxUnavailable", 2)] },
    Case { name: "rollback partition=4 (step 2/3)", set: (5, "4", "2", "0"), pods: "nNr- nNr- oNr- oNr- oNr-", flags: F, expect: &[("updateNum", -1), ("updateMaxUnavailable", 2)] },
    Case { name: "rollback partition=4 (step 3/3)", set: (5, "4", "2", "0"), pods: "nNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[] },
    Case { name: "specified delete with maxSurge (step 1/4)", set: (5, "0", "0", "1"), pods: "nNrd nNr- nNr- nNr- nNr-", flags: F, expect: &[("scaleUpNum", 1), ("useSurge", 1), ("scaleUpLimit", 1)] },
    Case { name: "specified delete with maxSurge (step 2/4)", set: (5, "0", "0", "1"), pods: "nNrd nNr- nNr- nNr- nNr- nN--", flags: F, expect: &[("useSurge", 1)] },
    Case { name: "specified delete with maxSurge (step 3/4)", set: (5, "0", "0", "1"), pods: "nNrd nNr- nNr- nNr- nNr- nNr-", flags: F, expect: &[("deleteReadyLimit", 1), ("useSurge", 1)] },
    Case { name: "specified delete with maxSurge (step 4/4)", set: (5, "0", "0", "1"), pods: "nNr- nNr- nNr- nNr- nNr-", flags: F, expect: &[] },
    Case { name: "update in-place partition=3 with maxSurge (step 1/4)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("scaleUpNum", 1), ("useSurge", 1), ("updateNum", 2), ("updateMaxUnavailable", 1), ("scaleUpLimit", 1)] },
    Case { name: "update in-place partition=3 with maxSurge (step 2/4)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[("useSurge", 1), ("updateNum", 1), ("updateMaxUnavailable", 2)] },
    Case { name: "update in-place partition=3 with maxSurge (step 3/4)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- nU-- nN--", flags: F, expect: &[("scaleDownNum", 1), ("scaleDownNumOldRevision", 1)] },
    Case { name: "update in-place partition=3 with maxSurge (step 4/4)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- nNr- nN--", flags: F, expect: &[("scaleDownNum", 1), ("scaleDownNumOldRevision", 1), ("deleteReadyLimit", 1)] },
    Case { name: "update recreate partition=3 with maxSurge (step 1/7)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("scaleUpNum", 1), ("useSurge", 1), ("updateNum", 2), ("updateMaxUnavailable", 1), ("scaleUpLimit", 1)] },
    Case { name: "update recreate partition=3 with maxSurge (step 2/7)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[("useSurge", 1), ("updateNum", 1), ("updateMaxUnavailable", 2)] },
    Case { name: "update recreate partition=3 with maxSurge (step 3/7)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- oNrd nN--", flags: F, expect: &[("useSurge", 1), ("useSurgeOldRevision", 1), ("deleteReadyLimit", 1), ("updateNum", 1), ("updateMaxUnavailable", 2)] },
    Case { name: "update recreate partition=3 with maxSurge (step 4/7)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[("useSurge", 1), ("scaleUpNum", 1), ("updateNum", 1), ("updateMaxUnavailable", 1), ("scaleUpLimit", 1)] },
    Case { name: "update recreate partition=3 with maxSurge (step 5/7)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- nN-- nN--", flags: F, expect: &[("scaleDownNum", 1), ("scaleDownNumOldRevision", 1)] },
    Case { name: "update recreate partition=3 with maxSurge (step 6/7)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- oNr- nNr- nN--", flags: F, expect: &[("scaleDownNum", 1), ("scaleDownNumOldRevision", 1), ("deleteReadyLimit", 1)] },
    Case { name: "update recreate partition=3 with maxSurge (step 7/7)", set: (5, "3", "1", "1"), pods: "oNr- oNr- oNr- nNr- nNr-", flags: F, expect: &[] },
    Case { name: "update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 1/3)", set: (5, "99%", "3", "2"), pods: "oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("scaleUpNum", 1), ("useSurge", 1), ("updateNum", 1), ("updateMaxUnavailable", 3), ("scaleUpLimit", 1)] },
    Case { name: "update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 2/3)", set: (5, "99%", "3", "2"), pods: "oNr- oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[("scaleDownNum", 1), ("scaleDownNumOldRevision", 1), ("deleteReadyLimit", 3)] },
    Case { name: "update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 3/3)", set: (5, "99%", "3", "2"), pods: "oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[] },
    Case { name: "update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 1/3)", set: (5, "99%", "40%", "30%"), pods: "oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("scaleUpNum", 1), ("useSurge", 1), ("updateNum", 1), ("updateMaxUnavailable", 2), ("scaleUpLimit", 1)] },
    Case { name: "update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 2/3)", set: (5, "99%", "40%", "30%"), pods: "oNr- oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[("scaleDownNum", 1), ("scaleDownNumOldRevision", 1), ("deleteReadyLimit", 2)] },
    Case { name: "update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 3/3)", set: (5, "99%", "40%", "30%"), pods: "oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[] },
    Case { name: "update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 1/3)", set: (5, "99%", "30%", "30%"), pods: "oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("scaleUpNum", 1), ("useSurge", 1), ("updateNum", 1), ("updateMaxUnavailable", 1), ("scaleUpLimit", 1)] },
    Case { name: "update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 2/3)", set: (5, "99%", "30%", "30%"), pods: "oNr- oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[("scaleDownNum", 1), ("scaleDownNumOldRevision", 1), ("deleteReadyLimit", 1)] },
    Case { name: "update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 3/3)", set: (5, "99%", "30%", "30%"), pods: "oNr- oNr- oNr- oNr- nN--", flags: F, expect: &[] },
    Case { name: "revision consistent 1", set: (5, "0", "1", "0"), pods: "nNr- nNr- nNr- nNr- nNr-", flags: Flags { consistent: true, ..F }, expect: &[] },
    Case { name: "revision consistent 2", set: (5, "3", "1", "0"), pods: "nNr- nNr- nNr- nNr- nNr-", flags: Flags { consistent: true, ..F }, expect: &[] },
    Case { name: "revision consistent 3", set: (5, "3", "1", "0"), pods: "oNr- oNr- nNr- nNr- nNr-", flags: Flags { consistent: true, ..F }, expect: &[] },
    Case { name: "revision consistent 4", set: (5, "1", "1", "0"), pods: "oNr- oNr- oNr- nNr- nNr-", flags: Flags { consistent: true, ..F }, expect: &[("updateNum", 2), ("updateMaxUnavailable", 1)] },
    Case { name: "allow to update when fail to scale out normally", set: (5, "1", "2", "0"), pods: "oNr- oNr- nNr- nNr-", flags: Flags { consistent: true, ..F }, expect: &[("scaleUpNum", 1), ("updateNum", 1), ("updateMaxUnavailable", 1), ("scaleUpLimit", 1)] },
    Case { name: "allow to update when fail to scale in normally", set: (5, "1", "1", "0"), pods: "oNr- oNr- oNr- nNr- nNr- nNr-", flags: Flags { consistent: true, ..F }, expect: &[("scaleDownNum", 1), ("scaleDownNumOldRevision", 2), ("deleteReadyLimit", 2), ("updateNum", 1), ("updateMaxUnavailable", 2)] },
    Case { name: "disable rollback feature-gate", set: (5, "4", "1", "0"), pods: "oNr- nNr- nNr- nNr- nNr-", flags: Flags { no_rollback: true, ..F }, expect: &[] },
    Case { name: "increase replicas 0 to 5 with scale maxUnavailable = 2", set: (5, "0", "1", "0"), pods: "", flags: Flags { scale_max_unavailable: Some("2"), ..F }, expect: &[("scaleUpNum", 5), ("scaleUpLimit", 2)] },
    Case { name: "increase replicas 3 to 6 with scale maxUnavailable = 2, not ready pod = 1", set: (6, "0", "1", "0"), pods: "nNr- nNr- nN--", flags: Flags { scale_max_unavailable: Some("2"), ..F }, expect: &[("scaleUpNum", 3), ("scaleUpLimit", 1)] },
    Case { name: "increase replicas 3 to 6 with scale maxUnavailable = 2, not ready pod = 2", set: (6, "0", "1", "0"), pods: "nNr- nN-- nN--", flags: Flags { scale_max_unavailable: Some("2"), ..F }, expect: &[("scaleUpNum", 3), ("scaleUpLimit", 0)] },
    Case { name: "[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 1/4)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nNrd", flags: F, expect: &[("deleteReadyLimit", 1)] },
    Case { name: "[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 2/4)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd", flags: F, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 3/4)", set: (3, "0", "1", "0"), pods: "nNr- nNr-", flags: F, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 4/4)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nN--", flags: F, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 1/4)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nNrd", flags: EXCL, expect: &[("deleteReadyLimit", 1)] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 2/4)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd", flags: EXCL, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 3/4)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd nN--", flags: EXCL, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 4/4)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd nN--", flags: EXCL, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 1/5)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nNrd", flags: EXCL, expect: &[("deleteReadyLimit", 1)] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 2/5)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd", flags: EXCL, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 3/5)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd nN--", flags: EXCL, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 4/5)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nNr- nN--", flags: EXCL, expect: &[("scaleDownNum", 1), ("deleteReadyLimit", 1)] },
    Case { name: "[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 5/5)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nNr-", flags: EXCL, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 1/6)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nNr-", flags: EXCL, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 2/6)", set: (2, "0", "1", "0"), pods: "nNr- nNr- nNrd", flags: EXCL, expect: &[("deleteReadyLimit", 2)] },
    Case { name: "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 3/6)", set: (2, "0", "1", "0"), pods: "nNr- nNr- nDrd", flags: EXCL, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 4/6)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd", flags: EXCL, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 5/6)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd nN--", flags: EXCL, expect: &[] },
    Case { name: "[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 6/6)", set: (3, "0", "1", "0"), pods: "nNr- nNr- nN--", flags: EXCL, expect: &[] },
    Case { name: "[scalingWithPreparingUpdate=true] scaling up when a preparing pod is not updated, and expected-updated is 1", set: (4, "90%", "1", "0"), pods: "oPr- oNr- oNr-", flags: Flags { is_pod_update: true, ..EXCL }, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1), ("scaleUpNumOldRevision", 1)] },
    Case { name: "[scalingWithPreparingUpdate=true] scaling up when a preparing pod is not updated, and expected-updated is 2", set: (4, "2", "1", "0"), pods: "oPr- oNr- oNr-", flags: Flags { is_pod_update: true, ..EXCL }, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "[UpdateStrategyPaused=true] scale up pods with maxSurge=3,maxUnavailable=0", set: (5, "0", "0", "3"), pods: "oNr- oNr- oNr-", flags: Flags { paused: true, ..F }, expect: &[("scaleUpNum", 2), ("scaleUpLimit", 2), ("updateNum", 3), ("updateMaxUnavailable", -2)] },
    Case { name: "[UpdateStrategyPaused=true] scale down pods with maxSurge=3,maxUnavailable=0", set: (3, "0", "0", "3"), pods: "oNr- oNr- oNr- oNr- oNr-", flags: Flags { paused: true, ..F }, expect: &[("scaleDownNum", 2), ("scaleDownNumOldRevision", 5), ("deleteReadyLimit", 2), ("updateNum", 3), ("updateMaxUnavailable", 2)] },
    Case { name: "[UpdateStrategyPaused=true] create 0 newRevision pods with maxSurge=3,maxUnavailable=0", set: (5, "0", "0", "3"), pods: "oNr- oNr- oNr- oNr- oNr- nN-- nN-- nN--", flags: Flags { paused: true, ..F }, expect: &[("scaleDownNum", 3), ("scaleDownNumOldRevision", 5), ("updateNum", 2), ("updateMaxUnavailable", 3)] },
    Case { name: "[UpdateStrategyPaused=true] create 0 newRevision pods with maxSurge=3,maxUnavailable=0 and partition 2", set: (5, "2", "0", "3"), pods: "oNr- oNr- oNr- oNr- oNr- nN-- nN-- nN--", flags: Flags { paused: true, ..F }, expect: &[("scaleDownNum", 3), ("scaleDownNumOldRevision", 3)] },
    // Rows for rules upstream's table does not exercise.
    Case { name: "[kruise-rs] v1beta1 excludePreparingDelete field works like the label", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd", flags: Flags { exclude_field: true, ..F }, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "[kruise-rs] the controller flag works like the label", set: (3, "0", "1", "0"), pods: "nNr- nNr- nDrd", flags: Flags { exclude_flag: true, ..F }, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1)] },
    Case { name: "[kruise-rs] podsToDelete names count as specified delete", set: (5, "0", "1", "0"), pods: "nNr- nNr- nNr- nNr- nNr-", flags: Flags { pods_to_delete: &["p0", "missing"], ..F }, expect: &[("deleteReadyLimit", 1)] },
    Case { name: "[kruise-rs] PreparingDelete pods count as unavailable", set: (4, "0", "2", "0"), pods: "nNr- nNr- nNr- nDr-", flags: F, expect: &[] },
    Case { name: "[kruise-rs] PreparingUpdate is old for the update step", set: (4, "90%", "1", "0"), pods: "oPr- oNr- oNr-", flags: EXCL, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1), ("scaleUpNumOldRevision", 0)] },
    Case { name: "[kruise-rs] rollback gate off keeps partition growth from rolling back", set: (5, "4", "2", "0"), pods: "nNr- nNr- nNr- nNr- oNr-", flags: Flags { no_rollback: true, ..F }, expect: &[] },
    Case { name: "[kruise-rs] rollback needs different revisions even with the gate", set: (5, "4", "2", "0"), pods: "nNr- nNr- nNr- nNr- oNr-", flags: Flags { consistent: true, ..F }, expect: &[] },
    Case { name: "[kruise-rs] an invalid maxSurge reads as 0", set: (5, "0", "1", "12.5%"), pods: "nNrd nNr- nNr- nNr- nNr-", flags: F, expect: &[("deleteReadyLimit", 1)] },
    Case { name: "[kruise-rs] an invalid partition reads as 0", set: (5, "3", "1", "0"), pods: "oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("updateNum", 5), ("updateMaxUnavailable", 1)] },
    Case { name: "[kruise-rs] maxUnavailable rounds up without surge", set: (7, "0", "20%", "0"), pods: "oNr- oNr- oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("updateNum", 7), ("updateMaxUnavailable", 2)] },
    Case { name: "[kruise-rs] maxUnavailable rounds down with surge", set: (7, "0", "20%", "1"), pods: "oNr- oNr- oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("scaleUpNum", 1), ("scaleUpLimit", 1), ("useSurge", 1), ("updateNum", 7), ("updateMaxUnavailable", 1)] },
    Case { name: "[kruise-rs] legacy percentages: a bare number is a percentage", set: (10, "0", "'50", "0"), pods: "oNr- oNr- oNr- oNr- oNr- oNr- oNr- oNr- oNr- oNr-", flags: F, expect: &[("updateNum", 10), ("updateMaxUnavailable", 5)] },
];

#[test]
fn upstream_calculate_diffs_table() {
    let now = rollout::at("2024-05-01T10:00:00Z");
    let mut failures = Vec::new();
    for case in CASES {
        let (cs, options) = build(case);
        let mut pods = pods(case.pods);
        if case.name == "[kruise-rs] an invalid partition reads as 0" {
            let mut cs = cs.clone();
            cs.spec
                .update_strategy
                .rolling_update
                .as_mut()
                .unwrap()
                .partition = Some(ios("three"));
            let got = calculate_diffs(
                &cs,
                &pods,
                "old_rev",
                "new_rev",
                RevisionMatch::Hash,
                &options,
                now,
            );
            check(case, got, &mut failures);
            continue;
        }
        if case.flags.pods_to_delete.is_empty() {
            pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        }
        let current = if case.flags.consistent {
            "new_rev"
        } else {
            "old_rev"
        };
        let matching = if case.flags.is_pod_update {
            RevisionMatch::IsPodUpdate
        } else {
            RevisionMatch::Hash
        };
        let got = calculate_diffs(&cs, &pods, current, "new_rev", matching, &options, now);
        check(case, got, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "{} failing rows:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(CASES.len() >= 80, "{} rows", CASES.len());
}

fn check(case: &Case, got: Diff, failures: &mut Vec<String>) {
    let want = diff(case.expect);
    if got != want {
        failures.push(format!("{}:\n  got  {got}\n  want {want}", case.name));
    }
}
