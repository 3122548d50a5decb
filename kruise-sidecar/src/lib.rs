//! SidecarSet, as OpenKruise does it (spec 3c), without I/O.
//!
//! This crate grows with issue "kruise-sidecar" (matching, injection, revisions, upgrades, hot upgrade). It
//! starts with the SidecarSet hash encoding, checked against upstream's own test vectors.
//!
//! ```
//! use kruise_sidecar::hash::hash_of_json;
//!
//! let json = br#"{"containers":[{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}]}"#;
//! assert_eq!(hash_of_json(json), "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78");
//! ```

pub mod hash;
