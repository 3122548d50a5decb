//! The fuzz corpus of the in-place annotation parsers (`fuzz/seeds/inplace_state`), run deterministically so
//! that the normal test command exercises the fuzz harness.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

use crate::support::annotation_harness as harness;

#[test]
fn corpus() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/inplace_state");
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    assert!(
        entries.len() >= 40,
        "the corpus holds {} inputs",
        entries.len()
    );
    for path in entries {
        let data = std::fs::read(&path).unwrap();
        let result = std::panic::catch_unwind(|| harness::run(&data));
        assert!(result.is_ok(), "{} panicked", path.display());
    }
}

#[test]
fn generated_inputs() {
    // Truncations and byte flips of a realistic input, as a cheap stand-in for fuzzing.
    let state = r#"{"revision":"r","updateTimestamp":"2024-05-01T09:59:00Z","lastContainerStatuses":{"c1":{"imageID":"x"}},"updateImages":true,"nextContainerImages":{"c2":"b:2"},"nextContainerRefMetadata":{"c2":{"creationTimestamp":null,"labels":{"k":"v"}}},"preCheckBeforeNext":{"containersRequiredReady":["c1"]},"containerBatchesRecord":[{"timestamp":"2024-05-01T09:59:00Z","containers":["c1"]}]}"#;
    let grace = r#"{"revision":"r","containerImages":{"c1":"a:2"},"containerResources":{"c1":{"requests":{"cpu":"2"}}},"metaDataPatch":"eyJtZXRhZGF0YSI6eyJsYWJlbHMiOnsiayI6InYifX19","graceSeconds":30}"#;
    let meta = r#"{"containers":[{"name":"c1","containerID":"c1","restartCount":1,"hashes":{"plainHash":123,"extractedEnvFromMetadataHash":4}}]}"#;
    let full = format!("{state}\u{0}{grace}\u{0}{meta}");
    let bytes = full.as_bytes();
    for cut in (0..bytes.len()).step_by(7) {
        harness::run(&bytes[..cut]);
    }
    for position in (0..bytes.len()).step_by(5) {
        let mut flipped = bytes.to_vec();
        flipped[position] ^= 0x21;
        harness::run(&flipped);
    }
    harness::run(state.as_bytes());
    harness::run(format!("{state}\u{0}").as_bytes());
}
