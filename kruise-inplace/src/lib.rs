//! In-place update of pods, as OpenKruise does it (spec 3a and the revision rules of 3.0), without I/O.
//!
//! This crate grows with issue "kruise-inplace" (update-spec calculation, batched patching, grace period,
//! refresh, completion checks). It starts with the piece everything else keys on: the names Kubernetes and
//! OpenKruise give ControllerRevisions.
//!
//! ```
//! use kruise_inplace::revision::{hash, name};
//!
//! let data = br#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null}}}}"#;
//! let hash = hash(data, Some(0));
//! assert_eq!(name("demo", &hash), format!("demo-{hash}"));
//! ```

pub mod revision;
