//! How many cases each property over untrusted input runs: `KRUISE_FUZZ_CASES` (default 256), so that a
//! longer run needs no code change, e.g.
//! `KRUISE_FUZZ_CASES=20000 cargo test --workspace untrusted_input`.

use proptest::test_runner::Config;

/// The proptest configuration of the untrusted-input properties.
pub fn config() -> Config {
    let cases = std::env::var("KRUISE_FUZZ_CASES")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(256);
    Config {
        cases,
        ..Config::default()
    }
}
