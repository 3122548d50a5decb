// criterion's macros generate undocumented items.
#![allow(missing_docs)]
//! The full CloneSet plan (diffs, candidates, ordering, limiting, actions) at 1k, 10k and 100k pods with a
//! realistic mix (old and new revisions, unready pods, PreparingDelete pods held by a hook, a weight priority
//! and a scatter term), next to a baseline that only walks the pods once reading their revision label and
//! Ready condition. `plan_cached` is the same plan from a `PodFactsCache` built outside the timed loop (the
//! incremental path of a controller that keeps the cache beside its pod store), and `cache_update` the cost
//! of one pod event (a new resourceVersion of one pod) applied to that cache.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use kruise_benches::rollout::{Fleet, baseline};
use kruise_schedule::cloneset::{
    PlanInput, PodFactsCache, PodSource, RevisionMatch, Revisions, SeededIds, calculate_diffs, plan,
};

/// The time `iters` plans of `input` take, each plan from a fresh id stream and dropped after its time is
/// taken.
fn timed_plans(input: &PlanInput<'_>, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let ids = SeededIds::new(1);
        let input = input.with_ids(&ids);
        let start = Instant::now();
        let planned = plan(black_box(&input));
        total += start.elapsed();
        drop(black_box(planned));
    }
    total
}

fn rollout(c: &mut Criterion) {
    let mut group = c.benchmark_group("cloneset_plan");
    group.sample_size(20);
    for size in [1_000, 10_000, 100_000] {
        let fleet = Fleet::new(size);
        let refs = fleet.revision_refs();
        let revisions = Revisions {
            current: &fleet.current,
            update: &fleet.update,
            known: &refs,
        };
        let ids = SeededIds::new(1);
        let input = PlanInput::new(
            &fleet.cloneset,
            &fleet.pods,
            revisions,
            &fleet.now,
            &fleet.options,
            &ids,
        );
        group.bench_with_input(
            BenchmarkId::new("baseline", size),
            &fleet.pods,
            |b, pods: &Vec<Pod>| {
                b.iter(|| baseline(black_box(pods), &fleet.update));
            },
        );
        group.bench_with_input(BenchmarkId::new("diffs", size), &input, |b, input| {
            b.iter(|| {
                calculate_diffs(
                    input.cloneset,
                    black_box(input.pods),
                    input.revisions.current,
                    input.revisions.update,
                    RevisionMatch::Hash,
                    input.options,
                    fleet.now.timestamp(),
                )
            });
        });
        // Each plan is dropped outside the timed span (`timed_plans`): freeing the actions is the caller's,
        // after it has carried them out.
        group.bench_with_input(BenchmarkId::new("plan", size), &input, |b, input| {
            b.iter_custom(|iters| timed_plans(input, iters));
        });
        let mut cache = PodFactsCache::for_cloneset(&fleet.cloneset);
        cache.replace_all(&fleet.pods);
        let store = FleetStore::of(&fleet.pods);
        let cached = PlanInput::from_cache(
            &fleet.cloneset,
            (&cache, &store),
            revisions,
            &fleet.now,
            &fleet.options,
            &ids,
        );
        group.bench_with_input(
            BenchmarkId::new("plan_cached", size),
            &cached,
            |b, input| {
                b.iter_custom(|iters| timed_plans(input, iters));
            },
        );
        // One pod event: alternate two versions of the pod in the middle (different resourceVersions, so
        // each apply re-reads the pod).
        let middle = fleet.pods.get(size / 2).cloned().unwrap_or_default();
        let mut next = middle.clone();
        next.metadata.resource_version = Some("next".to_owned());
        let versions = [Arc::new(middle), Arc::new(next)];
        let mut updates = cache.clone();
        let mut turn = 0usize;
        group.bench_function(BenchmarkId::new("cache_update", size), |b| {
            b.iter(|| {
                turn += 1;
                let version = versions.get(turn % 2).cloned().unwrap_or_default();
                black_box(updates.apply(&*version))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, rollout);
criterion_main!(benches);

/// The fleet's pods by name, as the plan from the cache reads the pods it acts on.
struct FleetStore<'a>(std::collections::HashMap<&'a str, Arc<Pod>>);

impl<'a> FleetStore<'a> {
    fn of(pods: &'a [Pod]) -> Self {
        Self(
            pods.iter()
                .map(|pod| {
                    (
                        pod.metadata.name.as_deref().unwrap_or_default(),
                        Arc::new(pod.clone()),
                    )
                })
                .collect(),
        )
    }
}

impl PodSource for FleetStore<'_> {
    fn pod_at(&self, _namespace: &str, name: &str, _version: &str) -> Option<Arc<Pod>> {
        self.0.get(name).cloned()
    }
}
