//! The fuzz corpus of the SidecarSet annotation parsers (`fuzz/seeds/sidecar_annotations`), run
//! deterministically so that the normal test command exercises the fuzz harness.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support::annotation_harness as harness;

#[test]
fn every_seed_and_its_mutations_return() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuzz/seeds/sidecar_annotations"
    );
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let result = std::panic::catch_unwind(|| harness::run(&bytes));
        assert!(result.is_ok(), "{} panicked", path.display());
        for cut in (0..bytes.len()).step_by(7) {
            harness::run(&bytes[..cut]);
        }
        let flipped: Vec<u8> = bytes
            .iter()
            .map(|b| if *b == b'"' { b'\'' } else { *b })
            .collect();
        harness::run(&flipped);
        count += 1;
    }
    assert!(count >= 8, "only {count} seeds");
}
