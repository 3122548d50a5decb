// criterion's macros generate undocumented items.
#![allow(missing_docs)]
//! The full CloneSet plan (diffs, candidates, ordering, limiting, actions) at 1k, 10k and 100k pods with a
//! realistic mix (old and new revisions, unready pods, PreparingDelete pods held by a hook, a weight priority
//! and a scatter term), next to a baseline that only walks the pods once reading their revision label and
//! Ready condition.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use kruise_benches::rollout::{Fleet, baseline};
use kruise_schedule::cloneset::{
    PlanInput, RevisionMatch, Revisions, SeededIds, calculate_diffs, plan,
};

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
        let input = PlanInput::new(
            &fleet.cloneset,
            &fleet.pods,
            revisions,
            &fleet.now,
            &fleet.options,
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
        group.bench_with_input(BenchmarkId::new("plan", size), &input, |b, input| {
            b.iter(|| plan(black_box(input), &mut SeededIds::new(1)));
        });
    }
    group.finish();
}

criterion_group!(benches, rollout);
criterion_main!(benches);
