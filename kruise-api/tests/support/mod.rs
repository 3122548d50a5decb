//! Shared test machinery: values generated from CRD schemas, the "nothing lost" comparison, and the
//! structural-schema checker.

#![allow(dead_code)]

pub mod lossless;
pub mod schema_values;
pub mod structural;
