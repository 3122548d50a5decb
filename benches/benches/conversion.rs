// criterion's macros generate undocumented items.
#![allow(missing_docs)]
//! Cost of the v1alpha1 ⇄ v1beta1 conversion of a realistic CloneSet, next to a plain serde round trip.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kruise_api::apps::{v1alpha1, v1beta1};

fn conversion(c: &mut Criterion) {
    let alpha = kruise_benches::sample_cloneset(3);
    let json = serde_json::to_string(&alpha).unwrap_or_default();
    let mut group = c.benchmark_group("cloneset");
    group.bench_function("serde_json round trip (baseline)", |b| {
        b.iter(|| {
            let parsed: v1alpha1::CloneSet =
                serde_json::from_str(black_box(&json)).unwrap_or_default();
            serde_json::to_string(&parsed).unwrap_or_default()
        });
    });
    group.bench_function("v1alpha1 -> v1beta1", |b| {
        b.iter(|| v1beta1::CloneSet::from(black_box(&alpha)));
    });
    let beta = v1beta1::CloneSet::from(&alpha);
    group.bench_function("v1beta1 -> v1alpha1", |b| {
        b.iter(|| v1alpha1::CloneSet::from(black_box(&beta)));
    });
    group.finish();
}

criterion_group!(benches, conversion);
criterion_main!(benches);
