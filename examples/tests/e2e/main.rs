//! End-to-end tests against a real kube-apiserver v1.20 (+ etcd, + kube-controller-manager), with the node
//! simulator playing kubelet. Nothing is mocked.
//!
//! The control plane comes from `scripts/control-plane.sh` (started in a private run directory and
//! stopped at the end, also on failure or Ctrl-C), or from `KRUISE_E2E_KUBECONFIG`. When it is not
//! installed or cannot run here, the suite prints one line saying why and passes as skipped
//! (`scripts/test.sh` installs it first, so there the tests really run).
//!
//! Scenarios run in order on one control plane (the CRD layouts must come first); pass a substring to
//! run only the matching ones: `cargo test -p kruise-examples --test e2e -- leader`.

// Test code: a custom harness is compiled without `cfg(test)`, so clippy's test allowances do not apply.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod advanced_daemonset;
mod advanced_statefulset;
mod api_server_restart;
mod asts_env;
mod asts_storage;
mod audit_log;
mod cloneset_bounds;
mod cloneset_env;
mod cloneset_measure;
mod cloneset_predownload;
mod cloneset_rollout;
mod cloneset_scale;
mod cluster_examples;
mod container_image;
mod container_meta;
mod container_recreate;
mod crds;
mod custom_operator;
mod daemon_pod_watch;
mod daemon_restart;
mod daemonset_env;
mod deletion_protection;
mod ephemeral_job;
mod identities;
mod image_list_pull;
mod image_pull;
mod jobs;
mod kruise_binary;
mod kruise_live_verbs;
mod kruise_rollout_verbs;
mod kruise_set_verbs;
mod launch_priority;
mod leader;
mod leader_frozen;
mod manager_process;
mod node_agents;
mod persistent_pod_state;
mod pod_probe_marker;
mod pod_unavailable_budget;
mod pod_watch;
mod race;
mod registry_gate;
mod resource_distribution;
mod rollout_plot;
mod sidecar_terminator;
mod sidecarset;
mod sidecarset_measure;
mod sidecarset_validation;
mod simulator;
mod support;
mod united_deployment;
mod webhook;
mod webhook_certificates;
mod workload_spread;
mod workload_webhooks;

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use support::Cluster;

type Scenario = for<'a> fn(&'a Cluster) -> Pin<Box<dyn Future<Output = Result<()>> + 'a>>;

const SCENARIOS: &[(&str, Scenario)] = &[
    ("crds_are_accepted_and_fixtures_round_trip", |c| {
        Box::pin(crds::crds_are_accepted_and_fixtures_round_trip(c))
    }),
    ("an_older_manager_keeps_a_newer_crd", |c| {
        Box::pin(crds::an_older_manager_keeps_a_newer_crd(c))
    }),
    ("webhook_injects_readiness_gates", |c| {
        Box::pin(webhook::webhook_injects_readiness_gates(c))
    }),
    ("webhook_ca_bundle_follows_the_secret", |c| {
        Box::pin(webhook_certificates::webhook_ca_bundle_follows_the_secret(
            c,
        ))
    }),
    ("simulator_runs_pods", |c| {
        Box::pin(simulator::simulator_runs_pods(c))
    }),
    ("two_managers_elect_one_leader", |c| {
        Box::pin(leader::two_managers_elect_one_leader(c))
    }),
    ("controllers_run_only_on_the_leader", |c| {
        Box::pin(leader::controllers_run_only_on_the_leader(c))
    }),
    ("a_leader_whose_controller_dies_releases_the_lease", |c| {
        Box::pin(leader::a_leader_whose_controller_dies_releases_the_lease(c))
    }),
    ("a_frozen_leader_writes_nothing_after_it_is_deposed", |c| {
        Box::pin(leader_frozen::a_frozen_leader_writes_nothing_after_it_is_deposed(c))
    }),
    ("daemon_recreates_containers", |c| {
        Box::pin(container_recreate::daemon_recreates_containers(c))
    }),
    ("pod_probe_marker_marks_pods_by_probe", |c| {
        Box::pin(pod_probe_marker::pod_probe_marker_marks_pods_by_probe(c))
    }),
    ("daemon_pulls_images", |c| {
        Box::pin(image_pull::daemon_pulls_images(c))
    }),
    ("image_list_pull_job_pulls_every_image", |c| {
        Box::pin(image_list_pull::image_list_pull_job_pulls_every_image(c))
    }),
    ("daemon_killed_mid_request_resumes", |c| {
        Box::pin(daemon_restart::daemon_killed_mid_request_resumes(c))
    }),
    ("container_meta_restarts_on_env_from_metadata", |c| {
        Box::pin(container_meta::container_meta_restarts_on_env_from_metadata(c))
    }),
    ("launch_priority_starts_containers_in_order", |c| {
        Box::pin(launch_priority::launch_priority_starts_containers_in_order(
            c,
        ))
    }),
    ("job_with_sidecar_completes", |c| {
        Box::pin(sidecar_terminator::job_with_sidecar_completes(c))
    }),
    ("conversion_webhook_round_trips", |c| {
        Box::pin(jobs::conversion_webhook_round_trips(c))
    }),
    ("broadcast_job_runs_on_every_eligible_node", |c| {
        Box::pin(jobs::broadcast_job_runs_on_every_eligible_node(c))
    }),
    ("advanced_cron_job_schedules_broadcast_jobs", |c| {
        Box::pin(jobs::advanced_cron_job_schedules_broadcast_jobs(c))
    }),
    (
        "ephemeral_job_reports_a_cluster_without_ephemeral_containers",
        |c| {
            Box::pin(ephemeral_job::ephemeral_job_reports_a_cluster_without_ephemeral_containers(c))
        },
    ),
    ("cloneset_creates_ready_pods", |c| {
        Box::pin(cloneset_scale::cloneset_creates_ready_pods(c))
    }),
    ("cloneset_scales_down_by_rank_and_specified_delete", |c| {
        Box::pin(cloneset_scale::cloneset_scales_down_by_rank_and_specified_delete(c))
    }),
    ("cloneset_pre_delete_hook_holds_deletion", |c| {
        Box::pin(cloneset_scale::cloneset_pre_delete_hook_holds_deletion(c))
    }),
    ("cloneset_huge_replicas_scale_in_bounded_steps", |c| {
        Box::pin(cloneset_bounds::cloneset_huge_replicas_scale_in_bounded_steps(c))
    }),
    ("cloneset_invalid_max_unavailable_is_reported", |c| {
        Box::pin(cloneset_bounds::cloneset_invalid_max_unavailable_is_reported(c))
    }),
    ("cloneset_updates_in_place_within_max_unavailable", |c| {
        Box::pin(cloneset_rollout::cloneset_updates_in_place_within_max_unavailable(c))
    }),
    ("cloneset_partition_holds_old_pods", |c| {
        Box::pin(cloneset_rollout::cloneset_partition_holds_old_pods(c))
    }),
    ("cloneset_max_surge_adds_and_removes_pods", |c| {
        Box::pin(cloneset_rollout::cloneset_max_surge_adds_and_removes_pods(
            c,
        ))
    }),
    ("cloneset_recreates_when_not_in_place", |c| {
        Box::pin(cloneset_rollout::cloneset_recreates_when_not_in_place(c))
    }),
    ("cloneset_in_place_update_hook_holds_update", |c| {
        Box::pin(cloneset_rollout::cloneset_in_place_update_hook_holds_update(c))
    }),
    ("cloneset_rollout_survives_manager_restart", |c| {
        Box::pin(cloneset_rollout::cloneset_rollout_survives_manager_restart(
            c,
        ))
    }),
    ("kruise_live_verbs_change_workloads", |c| {
        Box::pin(kruise_live_verbs::kruise_live_verbs_change_workloads(c))
    }),
    ("kruise_rollout_verbs_follow_and_undo", |c| {
        Box::pin(kruise_rollout_verbs::kruise_rollout_verbs_follow_and_undo(
            c,
        ))
    }),
    ("kruise_rollout_verbs_on_an_advanced_statefulset", |c| {
        Box::pin(kruise_rollout_verbs::kruise_rollout_verbs_on_an_advanced_statefulset(c))
    }),
    ("kruise_set_env_resources_and_create_job", |c| {
        Box::pin(kruise_set_verbs::kruise_set_env_resources_and_create_job(c))
    }),
    ("cluster_examples_run_against_the_api_server", |c| {
        Box::pin(cluster_examples::cluster_examples_run_against_the_api_server(c))
    }),
    ("custom_operator_rolls_out_its_own_crd", |c| {
        Box::pin(custom_operator::custom_operator_rolls_out_its_own_crd(c))
    }),
    (
        "advanced_statefulset_seed_demo_partition_holds_and_releases",
        |c| {
            Box::pin(
                advanced_statefulset::advanced_statefulset_seed_demo_partition_holds_and_releases(
                    c,
                ),
            )
        },
    ),
    (
        "advanced_statefulset_ordered_ready_creates_one_at_a_time",
        |c| {
            Box::pin(
                advanced_statefulset::advanced_statefulset_ordered_ready_creates_one_at_a_time(c),
            )
        },
    ),
    (
        "advanced_statefulset_in_place_parallel_within_max_unavailable",
        |c| {
            Box::pin(
                advanced_statefulset::advanced_statefulset_in_place_parallel_within_max_unavailable(
                    c,
                ),
            )
        },
    ),
    ("advanced_statefulset_reserve_ordinals_skip_ordinals", |c| {
        Box::pin(advanced_statefulset::advanced_statefulset_reserve_ordinals_skip_ordinals(c))
    }),
    (
        "advanced_statefulset_scale_down_deletes_highest_ordinals_and_claims",
        |c| {
            Box::pin(advanced_statefulset::advanced_statefulset_scale_down_deletes_highest_ordinals_and_claims(c))
        },
    ),
    (
        "advanced_statefulset_min_ready_seconds_spaces_ordered_creations",
        |c| {
            Box::pin(advanced_statefulset::advanced_statefulset_min_ready_seconds_spaces_ordered_creations(c))
        },
    ),
    (
        "advanced_statefulset_claims_deleted_with_the_set_when_deleted_delete",
        |c| {
            Box::pin(advanced_statefulset::advanced_statefulset_claims_deleted_with_the_set_when_deleted_delete(c))
        },
    ),
    (
        "advanced_statefulset_v1alpha1_through_the_conversion_webhook",
        |c| {
            Box::pin(
                advanced_statefulset::advanced_statefulset_v1alpha1_through_the_conversion_webhook(
                    c,
                ),
            )
        },
    ),
    (
        "advanced_statefulset_volume_claims_resize_on_rolling_update",
        |c| {
            Box::pin(
                advanced_statefulset::advanced_statefulset_volume_claims_resize_on_rolling_update(
                    c,
                ),
            )
        },
    ),
    ("advanced_statefulset_start_ordinal_with_its_gate", |c| {
        Box::pin(advanced_statefulset::advanced_statefulset_start_ordinal_with_its_gate(c))
    }),
    (
        "advanced_statefulset_in_place_only_with_a_grace_period",
        |c| {
            Box::pin(
                advanced_statefulset::advanced_statefulset_in_place_only_with_a_grace_period(c),
            )
        },
    ),
    (
        "advanced_statefulset_pre_delete_hook_holds_scale_down",
        |c| {
            Box::pin(advanced_statefulset::advanced_statefulset_pre_delete_hook_holds_scale_down(c))
        },
    ),
    (
        "advanced_statefulset_rollout_survives_manager_restart",
        |c| {
            Box::pin(advanced_statefulset::advanced_statefulset_rollout_survives_manager_restart(c))
        },
    ),
    ("cloneset_survives_an_api_server_restart", |c| {
        Box::pin(api_server_restart::cloneset_survives_an_api_server_restart(
            c,
        ))
    }),
    ("cloneset_pre_downloads_images", |c| {
        Box::pin(cloneset_predownload::cloneset_pre_downloads_images(c))
    }),
    ("advanced_daemonset_runs_the_demo_on_every_node", |c| {
        Box::pin(advanced_daemonset::advanced_daemonset_runs_the_demo_on_every_node(c))
    }),
    ("advanced_daemonset_surge_stays_within_max_surge", |c| {
        Box::pin(advanced_daemonset::advanced_daemonset_surge_stays_within_max_surge(c))
    }),
    (
        "advanced_daemonset_updates_in_place_within_max_unavailable",
        |c| {
            Box::pin(
                advanced_daemonset::advanced_daemonset_updates_in_place_within_max_unavailable(c),
            )
        },
    ),
    (
        "advanced_daemonset_selector_and_partition_hold_old_pods",
        |c| {
            Box::pin(advanced_daemonset::advanced_daemonset_selector_and_partition_hold_old_pods(c))
        },
    ),
    (
        "advanced_daemonset_node_added_mid_rollout_gets_the_update",
        |c| {
            Box::pin(
                advanced_daemonset::advanced_daemonset_node_added_mid_rollout_gets_the_update(c),
            )
        },
    ),
    ("advanced_daemonset_follows_taints_and_cordons", |c| {
        Box::pin(advanced_daemonset::advanced_daemonset_follows_taints_and_cordons(c))
    }),
    ("advanced_daemonset_pre_delete_hook_holds_deletion", |c| {
        Box::pin(advanced_daemonset::advanced_daemonset_pre_delete_hook_holds_deletion(c))
    }),
    ("sidecarset_injects_and_upgrades_in_place", |c| {
        Box::pin(sidecarset::sidecarset_injects_and_upgrades_in_place(c))
    }),
    ("sidecarset_hot_upgrade_keeps_a_working_sidecar", |c| {
        Box::pin(sidecarset::sidecarset_hot_upgrade_keeps_a_working_sidecar(
            c,
        ))
    }),
    ("sidecarset_webhook_rejects_invalid_sidecarsets", |c| {
        Box::pin(sidecarset_validation::sidecarset_webhook_rejects_invalid_sidecarsets(c))
    }),
    ("workload_webhooks_default_and_validate", |c| {
        Box::pin(workload_webhooks::workload_webhooks_default_and_validate(c))
    }),
    ("deletion_protection_refuses_protected_deletes", |c| {
        Box::pin(deletion_protection::deletion_protection_refuses_protected_deletes(c))
    }),
    ("pod_unavailable_budget_limits_concurrent_evictions", |c| {
        Box::pin(pod_unavailable_budget::pod_unavailable_budget_limits_concurrent_evictions(c))
    }),
    ("pod_unavailable_budget_limits_in_place_rollout", |c| {
        Box::pin(pod_unavailable_budget::pod_unavailable_budget_limits_in_place_rollout(c))
    }),
    ("pod_unavailable_budget_limits_sidecar_upgrades", |c| {
        Box::pin(pod_unavailable_budget::pod_unavailable_budget_limits_sidecar_upgrades(c))
    }),
    ("persistent_pod_state_returns_pods_to_their_zone", |c| {
        Box::pin(persistent_pod_state::persistent_pod_state_returns_pods_to_their_zone(c))
    }),
    ("workload_spread_spreads_a_cloneset_over_zones", |c| {
        Box::pin(workload_spread::workload_spread_spreads_a_cloneset_over_zones(c))
    }),
    (
        "workload_spread_adaptive_reschedules_unschedulable_pods",
        |c| Box::pin(workload_spread::workload_spread_adaptive_reschedules_unschedulable_pods(c)),
    ),
    ("resource_distribution_distributes_a_secret", |c| {
        Box::pin(resource_distribution::resource_distribution_distributes_a_secret(c))
    }),
    ("united_deployment_spreads_subsets_over_zones", |c| {
        Box::pin(united_deployment::united_deployment_spreads_subsets_over_zones(c))
    }),
    ("united_deployment_adapts_to_unschedulable_subsets", |c| {
        Box::pin(united_deployment::united_deployment_adapts_to_unschedulable_subsets(c))
    }),
    ("united_deployment_reserves_unschedulable_pods", |c| {
        Box::pin(united_deployment::united_deployment_reserves_unschedulable_pods(c))
    }),
    ("container_images_run_their_entrypoints", |c| {
        Box::pin(container_image::container_images_run_their_entrypoints(c))
    }),
    ("sidecarset_measure_webhook_and_memory", |c| {
        Box::pin(sidecarset_measure::sidecarset_measure_webhook_and_memory(c))
    }),
    ("race_against_kube_controller_manager", |c| {
        Box::pin(race::race_against_kube_controller_manager(c))
    }),
    ("cloneset_measure_1000_pods", |c| {
        Box::pin(cloneset_measure::cloneset_measure_1000_pods(c))
    }),
];

/// How long one scenario may take.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(240);

fn main() -> ExitCode {
    // libtest-style flags (and their numeric values, as in `--test-threads 1`) are accepted and ignored.
    let filter: Option<String> = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with('-') && !arg.bytes().all(|b| b.is_ascii_digit()));
    let selected: Vec<_> = SCENARIOS
        .iter()
        .filter(|(name, _)| filter.as_deref().is_none_or(|filter| name.contains(filter)))
        .collect();
    // `cargo test -- --list` and filters that match nothing must not start a control plane.
    if std::env::args().any(|arg| arg == "--list") {
        for (name, _) in SCENARIOS {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    if selected.is_empty() {
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("e2e: cannot start a Tokio runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(&selected))
}

async fn run(selected: &[&(&str, Scenario)]) -> ExitCode {
    let started = Instant::now();
    let mut cluster = match Cluster::acquire().await {
        Ok(Ok(cluster)) => cluster,
        Ok(Err(support::Skip(reason))) => {
            if support::skipping_forbidden() {
                eprintln!("e2e: FAILED, no control plane and CI=true forbids skipping: {reason}");
                return ExitCode::FAILURE;
            }
            eprintln!("e2e: SKIPPED, no control plane: {reason}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("e2e: FAILED to start the control plane: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(run_dir) = cluster.run_dir() {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("e2e: interrupted; stopping the control plane");
                support::stop_control_plane(&run_dir);
                std::process::exit(130);
            }
        });
    }
    let mut failed = Vec::new();
    for (name, scenario) in selected {
        eprintln!("e2e {name} ...");
        let begun = Instant::now();
        // `KRUISE_E2E_SCENARIO_TIMEOUT` (seconds) lengthens it for measurements.
        let limit = std::env::var("KRUISE_E2E_SCENARIO_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(SCENARIO_TIMEOUT, Duration::from_secs);
        let outcome = tokio::time::timeout(limit, scenario(&cluster)).await;
        let seconds = begun.elapsed().as_secs_f64();
        match outcome {
            Ok(Ok(())) => eprintln!("e2e {name} ok ({seconds:.1}s)"),
            Ok(Err(error)) => {
                eprintln!("e2e {name} FAILED ({seconds:.1}s): {error:#}");
                failed.push(*name);
            }
            Err(_) => {
                eprintln!("e2e {name} FAILED: timed out after {limit:?}");
                failed.push(*name);
            }
        }
    }
    if failed.is_empty() {
        cluster.teardown();
    } else {
        cluster.teardown_keeping_logs();
    }
    let total = started.elapsed().as_secs_f64();
    if failed.is_empty() {
        eprintln!("e2e: {} scenarios passed in {total:.1}s", selected.len());
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "e2e: {} of {} scenarios failed in {total:.1}s: {}",
            failed.len(),
            selected.len(),
            failed.join(", ")
        );
        ExitCode::FAILURE
    }
}
