//! Shared test machinery: values generated from CRD schemas, the "nothing lost" comparison, and the
//! structural-schema checker.

#![allow(
    dead_code,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

pub mod conversion_harness;
pub mod lossless;
pub mod schema_values;
pub mod structural;
