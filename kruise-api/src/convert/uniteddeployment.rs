//! UnitedDeployment v1alpha1 ⇄ v1beta1 (upstream `apis/apps/v1alpha1/uniteddeployment_conversion.go`).
//!
//! Spec:
//! * `template.cloneSetTemplate`: the embedded v1alpha1 CloneSet spec (with the template's metadata as the
//!   CloneSet's metadata, whose labels and annotations the CloneSet mapping reads) goes through the CloneSet
//!   mapping of [`convert`](super) both ways. The other templates (apps/v1 StatefulSet and Deployment, and the
//!   Advanced StatefulSet template, which embeds the v1beta1 spec in both versions) are copied.
//! * `topology.scheduleStrategy.adaptive`: v1alpha1 holds both v1.8's `unschedulableLastSeconds` and HEAD's
//!   `unschedulableDuration`. v1beta1 `unschedulableDuration` is `unschedulableDuration`, else
//!   `unschedulableLastSeconds`; going back always gives `unschedulableDuration` (HEAD's name), so an object
//!   that uses the v1.8 name round-trips through the conversion stash.
//! * Everything else (subsets, update strategy, ...) is copied.
//!
//! Status, as upstream:
//! * `updateStatus.updatedRevision` ⇄ `updatedRevision`.
//! * `subsetReplicas[name]` ⇒ `subsetStatuses[name].replicas` and `updateStatus.currentPartitions[name]` ⇒
//!   `subsetStatuses[name].partition`, overriding the entry's own value; a name without an entry gets a new
//!   entry at the end (in name order: first the `subsetReplicas` keys, then the `currentPartitions` keys).
//! * Back: `subsetReplicas` and `currentPartitions` are read off the named entries, which are kept as they are;
//!   `updateStatus` is absent only when there is neither an updated revision nor any entry.
//!
//! This is injective for statuses written by the HEAD controller (one entry per subset, whose replicas and
//! partition equal the two maps). A v1.8 status, whose entries leave replicas and partition at 0 while the maps
//! hold the values, needs the stash to come back unchanged.
//!
//! v1beta1 → v1alpha1 keeps everything v1beta1 has except what the CloneSet mapping drops from a CloneSet
//! template; only when two subset statuses share a name does going back up change the first one's replicas
//! and partition to the last one's.

use std::collections::BTreeMap;

use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::UnitedDeployment {
    type Hub = v1beta1::UnitedDeployment;

    fn to_hub_fields(&self) -> v1beta1::UnitedDeployment {
        let spec = &self.spec;
        let template = &spec.template;
        let schedule = &spec.topology.schedule_strategy;
        v1beta1::UnitedDeployment {
            metadata: self.metadata.clone(),
            spec: v1beta1::UnitedDeploymentSpec {
                replicas: spec.replicas,
                selector: spec.selector.clone(),
                template: v1beta1::SubsetTemplate {
                    stateful_set_template: template.stateful_set_template.clone(),
                    advanced_stateful_set_template: template.advanced_stateful_set_template.clone(),
                    clone_set_template: template
                        .clone_set_template
                        .as_ref()
                        .map(clone_set_template_to_hub),
                    deployment_template: template.deployment_template.clone(),
                },
                topology: v1beta1::Topology {
                    subsets: spec.topology.subsets.clone(),
                    schedule_strategy: v1beta1::UnitedDeploymentScheduleStrategy {
                        type_: schedule.type_.clone(),
                        adaptive: schedule.adaptive.as_ref().map(|adaptive| {
                            v1beta1::AdaptiveUnitedDeploymentStrategy {
                                reschedule_critical_seconds: adaptive.reschedule_critical_seconds,
                                unschedulable_duration: adaptive
                                    .unschedulable_duration
                                    .or(adaptive.unschedulable_last_seconds),
                                reserve_unschedulable_pods: adaptive.reserve_unschedulable_pods,
                            }
                        }),
                    },
                },
                update_strategy: spec.update_strategy.clone(),
                revision_history_limit: spec.revision_history_limit,
            },
            status: self.status.as_ref().map(status_to_hub),
        }
    }

    fn from_hub_fields(hub: &v1beta1::UnitedDeployment) -> Self {
        let spec = &hub.spec;
        let template = &spec.template;
        let schedule = &spec.topology.schedule_strategy;
        v1alpha1::UnitedDeployment {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::UnitedDeploymentSpec {
                replicas: spec.replicas,
                selector: spec.selector.clone(),
                template: v1alpha1::SubsetTemplate {
                    stateful_set_template: template.stateful_set_template.clone(),
                    advanced_stateful_set_template: template.advanced_stateful_set_template.clone(),
                    clone_set_template: template
                        .clone_set_template
                        .as_ref()
                        .map(clone_set_template_from_hub),
                    deployment_template: template.deployment_template.clone(),
                },
                topology: v1alpha1::Topology {
                    subsets: spec.topology.subsets.clone(),
                    schedule_strategy: v1alpha1::UnitedDeploymentScheduleStrategy {
                        type_: schedule.type_.clone(),
                        adaptive: schedule.adaptive.as_ref().map(|adaptive| {
                            v1alpha1::AdaptiveUnitedDeploymentStrategy {
                                reschedule_critical_seconds: adaptive.reschedule_critical_seconds,
                                unschedulable_last_seconds: None,
                                unschedulable_duration: adaptive.unschedulable_duration,
                                reserve_unschedulable_pods: adaptive.reserve_unschedulable_pods,
                            }
                        }),
                    },
                },
                update_strategy: spec.update_strategy.clone(),
                revision_history_limit: spec.revision_history_limit,
            },
            status: hub.status.as_ref().map(status_from_hub),
        }
    }
}

hub_conversion!(v1alpha1::UnitedDeployment => v1beta1::UnitedDeployment);

fn clone_set_template_to_hub(
    template: &v1alpha1::CloneSetTemplateSpec,
) -> v1beta1::CloneSetTemplateSpec {
    let cloneset = v1alpha1::CloneSet {
        metadata: template.metadata.clone(),
        spec: template.spec.clone(),
        status: None,
    };
    let hub = cloneset.to_hub_fields();
    v1beta1::CloneSetTemplateSpec {
        metadata: hub.metadata,
        spec: hub.spec,
    }
}

fn clone_set_template_from_hub(
    template: &v1beta1::CloneSetTemplateSpec,
) -> v1alpha1::CloneSetTemplateSpec {
    let hub = v1beta1::CloneSet {
        metadata: template.metadata.clone(),
        spec: template.spec.clone(),
        status: None,
    };
    let cloneset = v1alpha1::CloneSet::from_hub_fields(&hub);
    v1alpha1::CloneSetTemplateSpec {
        metadata: cloneset.metadata,
        spec: cloneset.spec,
    }
}

/// Applies `update` to the first subset status named `name`, appending one when there is none (upstream's
/// lookup order).
fn update_subset_status(
    statuses: &mut Vec<v1beta1::UnitedDeploymentSubsetStatus>,
    name: &str,
    update: impl FnOnce(&mut v1beta1::UnitedDeploymentSubsetStatus),
) {
    if let Some(status) = statuses.iter_mut().find(|status| status.name == name) {
        update(status);
        return;
    }
    let mut status = v1beta1::UnitedDeploymentSubsetStatus {
        name: name.to_owned(),
        ..Default::default()
    };
    update(&mut status);
    statuses.push(status);
}

fn status_to_hub(status: &v1alpha1::UnitedDeploymentStatus) -> v1beta1::UnitedDeploymentStatus {
    let mut subset_statuses = status.subset_statuses.clone();
    for (name, replicas) in &status.subset_replicas {
        update_subset_status(&mut subset_statuses, name, |subset| {
            subset.replicas = *replicas;
        });
    }
    for (name, partition) in status
        .update_status
        .iter()
        .flat_map(|update| &update.current_partitions)
    {
        update_subset_status(&mut subset_statuses, name, |subset| {
            subset.partition = *partition;
        });
    }
    v1beta1::UnitedDeploymentStatus {
        observed_generation: status.observed_generation,
        ready_replicas: status.ready_replicas,
        replicas: status.replicas,
        updated_replicas: status.updated_replicas,
        reserved_pods: status.reserved_pods,
        updated_ready_replicas: status.updated_ready_replicas,
        collision_count: status.collision_count,
        current_revision: status.current_revision.clone(),
        updated_revision: status
            .update_status
            .as_ref()
            .map(|update| update.updated_revision.clone())
            .unwrap_or_default(),
        subset_statuses,
        conditions: status.conditions.clone(),
        label_selector: status.label_selector.clone(),
    }
}

fn status_from_hub(status: &v1beta1::UnitedDeploymentStatus) -> v1alpha1::UnitedDeploymentStatus {
    let named = || {
        status
            .subset_statuses
            .iter()
            .filter(|subset| !subset.name.is_empty())
    };
    let subset_replicas: BTreeMap<String, i32> = named()
        .map(|subset| (subset.name.clone(), subset.replicas))
        .collect();
    let update_status = (!status.updated_revision.is_empty() || !status.subset_statuses.is_empty())
        .then(|| v1alpha1::UnitedDeploymentUpdateStatus {
            updated_revision: status.updated_revision.clone(),
            current_partitions: named()
                .map(|subset| (subset.name.clone(), subset.partition))
                .collect(),
        });
    v1alpha1::UnitedDeploymentStatus {
        observed_generation: status.observed_generation,
        ready_replicas: status.ready_replicas,
        replicas: status.replicas,
        updated_replicas: status.updated_replicas,
        reserved_pods: status.reserved_pods,
        updated_ready_replicas: status.updated_ready_replicas,
        collision_count: status.collision_count,
        current_revision: status.current_revision.clone(),
        subset_replicas,
        subset_statuses: status.subset_statuses.clone(),
        conditions: status.conditions.clone(),
        update_status,
        label_selector: status.label_selector.clone(),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;
    use crate::convert::STASH_ANNOTATION;
    use crate::keys;

    const BASE: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: UnitedDeployment
metadata: {name: sample-ud, namespace: default}
spec:
  replicas: 6
  revisionHistoryLimit: 10
  selector: {matchLabels: {app: sample}}
  topology:
    subsets:
    - name: subset-a
      nodeSelectorTerm:
        matchExpressions: [{key: node, operator: In, values: [zone-a]}]
      replicas: 1
    - name: subset-b
      nodeSelectorTerm:
        matchExpressions: [{key: node, operator: In, values: [zone-b]}]
      replicas: 50%
      patch: {metadata: {labels: {zone: b}}}
    - name: subset-c
      tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]
  updateStrategy:
    type: Manual
    manualUpdate: {partitions: {subset-a: 0, subset-b: 1}}
";

    fn with(extra: &str) -> v1alpha1::UnitedDeployment {
        serde_saphyr::from_str(&format!("{BASE}{extra}")).unwrap()
    }

    fn stashed<K: kube::Resource>(object: &K) -> bool {
        object
            .meta()
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(STASH_ANNOTATION))
    }

    fn round_trip(ud: &v1alpha1::UnitedDeployment) -> v1beta1::UnitedDeployment {
        let beta = v1beta1::UnitedDeployment::from(ud);
        assert_eq!(&v1alpha1::UnitedDeployment::from(&beta), ud, "round trip");
        beta
    }

    const CLONESET_TEMPLATE: &str = "  template:
    cloneSetTemplate:
      metadata:
        labels: {app: sample, apps.kruise.io/cloneset-scaling-exclude-preparing-delete: 'true'}
      spec:
        selector: {matchLabels: {app: sample}}
        template:
          metadata: {labels: {app: sample}}
          spec: {containers: [{name: main, image: 'nginx:1.25'}]}
        scaleStrategy: {disablePVCReuse: true}
        updateStrategy: {type: InPlaceIfPossible, partition: 1, maxUnavailable: 2}
";

    #[test]
    fn cloneset_template_uses_the_cloneset_mapping() {
        let ud = with(CLONESET_TEMPLATE);
        let beta = round_trip(&ud);
        assert!(!stashed(&beta));
        let template = beta.spec.template.clone_set_template.as_ref().unwrap();
        let strategy = &template.spec.update_strategy;
        assert_eq!(
            strategy.type_,
            Some(v1beta1::CloneSetUpdateStrategyType::RollingUpdate)
        );
        let rolling = strategy.rolling_update.as_ref().unwrap();
        assert_eq!(
            rolling.pod_update_policy,
            Some(v1beta1::CloneSetPodUpdatePolicy::InPlaceIfPossible)
        );
        assert_eq!(rolling.partition, Some(IntOrString::Int(1)));
        assert!(!template.spec.scale_strategy.enable_pvc_reuse);
        assert!(
            template.spec.scale_strategy.exclude_preparing_delete,
            "the template's labels are the CloneSet's"
        );
        assert!(
            template.metadata.labels.as_ref().unwrap()
                [keys::cloneset::SCALING_EXCLUDE_PREPARING_DELETE_LABEL]
                == "true"
        );
    }

    #[test]
    fn other_templates_are_copied() {
        let ud = with(
            "  template:
    statefulSetTemplate:
      metadata: {labels: {app: sample}}
      spec:
        selector: {matchLabels: {app: sample}}
        serviceName: sample
        template: {metadata: {labels: {app: sample}}, spec: {containers: [{name: main, image: nginx}]}}
    advancedStatefulSetTemplate:
      metadata: {labels: {app: sample}}
      spec:
        selector: {matchLabels: {app: sample}}
        reserveOrdinals: [1]
        template: {metadata: {labels: {app: sample}}}
    deploymentTemplate:
      metadata: {labels: {app: sample}}
      spec:
        selector: {matchLabels: {app: sample}}
        template: {metadata: {labels: {app: sample}}}
",
        );
        let beta = round_trip(&ud);
        assert!(!stashed(&beta));
        assert_eq!(
            beta.spec.template.stateful_set_template,
            ud.spec.template.stateful_set_template
        );
        assert_eq!(
            beta.spec
                .template
                .advanced_stateful_set_template
                .as_ref()
                .unwrap()
                .spec
                .reserve_ordinals,
            vec![IntOrString::Int(1)]
        );
        assert_eq!(
            beta.spec.template.deployment_template,
            ud.spec.template.deployment_template
        );
        assert_eq!(beta.spec.topology.subsets, ud.spec.topology.subsets);
        assert_eq!(beta.spec.update_strategy, ud.spec.update_strategy);
    }

    #[test]
    fn adaptive_duration_names() {
        let mut head = with("");
        head.spec.topology.schedule_strategy = serde_saphyr::from_str(
            "{type: Adaptive, adaptive: {rescheduleCriticalSeconds: 20, unschedulableDuration: 120, reserveUnschedulablePods: true}}",
        )
        .unwrap();
        let beta = round_trip(&head);
        assert!(!stashed(&beta));
        let adaptive = beta.spec.topology.schedule_strategy.adaptive.unwrap();
        assert_eq!(adaptive.unschedulable_duration, Some(120));
        assert!(adaptive.reserve_unschedulable_pods);

        let mut legacy = with("");
        legacy.spec.topology.schedule_strategy =
            serde_saphyr::from_str("{type: Adaptive, adaptive: {unschedulableLastSeconds: 60}}")
                .unwrap();
        let beta = round_trip(&legacy);
        assert_eq!(
            beta.spec
                .topology
                .schedule_strategy
                .adaptive
                .as_ref()
                .unwrap()
                .unschedulable_duration,
            Some(60),
            "the v1.8 name is read when HEAD's is absent"
        );
        assert!(
            stashed(&beta),
            "going back gives HEAD's name; the stash restores v1.8's"
        );

        let mut both = with("");
        both.spec.topology.schedule_strategy = serde_saphyr::from_str(
            "{type: Adaptive, adaptive: {unschedulableLastSeconds: 60, unschedulableDuration: 90}}",
        )
        .unwrap();
        let beta = round_trip(&both);
        assert_eq!(
            beta.spec
                .topology
                .schedule_strategy
                .adaptive
                .unwrap()
                .unschedulable_duration,
            Some(90),
            "HEAD's name wins"
        );
    }

    const HEAD_STATUS: &str = "status:
  observedGeneration: 2
  replicas: 6
  readyReplicas: 5
  updatedReplicas: 4
  updatedReadyReplicas: 3
  reservedPods: 1
  currentRevision: sample-ud-6d9f7b8c5d
  labelSelector: app=sample
  subsetReplicas: {subset-a: 1, subset-b: 3, subset-c: 2}
  subsetStatuses:
  - {name: subset-a, replicas: 1, readyReplicas: 1}
  - name: subset-b
    replicas: 3
    readyReplicas: 2
    partition: 1
    reservedPods: 1
    conditions: [{type: Schedulable, status: 'False', reason: reschedule, lastTransitionTime: '2024-05-01T10:00:00Z'}]
  - {name: subset-c, replicas: 2, readyReplicas: 2}
  updateStatus:
    updatedRevision: sample-ud-7c8d9e6f4b
    currentPartitions: {subset-a: 0, subset-b: 1, subset-c: 0}
  conditions: [{type: SubsetProvisioned, status: 'True', lastTransitionTime: '2024-05-01T10:00:00Z'}]
";

    #[test]
    fn updated_revision_and_subset_maps_move_into_subset_statuses() {
        let ud = with(HEAD_STATUS);
        let beta = round_trip(&ud);
        assert!(
            !stashed(&beta),
            "a HEAD controller's status converts without the stash"
        );
        let status = beta.status.as_ref().unwrap();
        assert_eq!(status.updated_revision, "sample-ud-7c8d9e6f4b");
        assert_eq!(status.reserved_pods, 1);
        let replicas: Vec<_> = status
            .subset_statuses
            .iter()
            .map(|s| (s.name.as_str(), s.replicas, s.partition))
            .collect();
        assert_eq!(
            replicas,
            [("subset-a", 1, 0), ("subset-b", 3, 1), ("subset-c", 2, 0)]
        );
    }

    #[test]
    fn subset_map_entries_without_a_status_get_one() {
        // A v1.8 controller's status: the maps hold the numbers, the entries only the conditions.
        let ud = with(
            "status:
  replicas: 3
  updatedReplicas: 3
  currentRevision: r1
  subsetReplicas: {subset-b: 2, subset-a: 1}
  subsetStatuses: [{name: subset-b, conditions: [{type: Schedulable, status: 'True'}]}]
  updateStatus: {updatedRevision: r1, currentPartitions: {subset-c: 0}}
",
        );
        let beta = round_trip(&ud);
        let status = beta.status.as_ref().unwrap();
        let entries: Vec<_> = status
            .subset_statuses
            .iter()
            .map(|s| (s.name.as_str(), s.replicas, s.conditions.len()))
            .collect();
        assert_eq!(
            entries,
            [("subset-b", 2, 1), ("subset-a", 1, 0), ("subset-c", 0, 0)],
            "existing entries first, then new ones in name order"
        );
        assert!(
            stashed(&beta),
            "v1beta1 cannot tell which entries v1alpha1 had"
        );
    }

    #[test]
    fn v1beta1_status_going_down() {
        let beta: v1beta1::UnitedDeployment = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1beta1
kind: UnitedDeployment
metadata: {name: ud}
spec: {selector: {}}
status:
  replicas: 2
  updatedReplicas: 2
  currentRevision: r1
  subsetStatuses: [{name: a, replicas: 2, partition: 1}, {replicas: 9}]
",
        )
        .unwrap();
        let alpha = v1alpha1::UnitedDeployment::from(&beta);
        let status = alpha.status.unwrap();
        assert_eq!(status.subset_replicas, [("a".to_owned(), 2)].into());
        let update = status.update_status.unwrap();
        assert_eq!(update.updated_revision, "");
        assert_eq!(update.current_partitions, [("a".to_owned(), 1)].into());
        assert_eq!(status.subset_statuses.len(), 2, "entries are kept");

        let empty: v1beta1::UnitedDeployment = serde_saphyr::from_str(
            "{apiVersion: apps.kruise.io/v1beta1, kind: UnitedDeployment, metadata: {name: ud}, spec: {selector: {}}, status: {currentRevision: r1}}",
        )
        .unwrap();
        assert_eq!(
            v1alpha1::UnitedDeployment::from(&empty)
                .status
                .unwrap()
                .update_status,
            None
        );
    }
}
