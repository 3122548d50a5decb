//! The feature gates of the CloneSet controller (`--cloneset-feature-gates`): the planner's gates
//! ([`Options`], upstream names and defaults) plus `PreDownloadImageForInPlaceUpdate` (default off, as
//! upstream), which only this controller reads: create ImagePullJobs for the new images of an in-place
//! update (see [`super::predownload`]).
//!
//! ```
//! use kruise_manager::cloneset::gates::CloneSetGates;
//!
//! let gates: CloneSetGates = "PreDownloadImageForInPlaceUpdate=true,CloneSetPartitionRollback=true".parse().unwrap();
//! assert!(gates.pre_download_image && gates.options.partition_rollback);
//! assert!(!CloneSetGates::default().pre_download_image);
//! assert!("Nope=true".parse::<CloneSetGates>().unwrap_err().to_string().contains("PreDownloadImageForInPlaceUpdate"));
//! ```

use std::str::FromStr;

use kruise_schedule::cloneset::Options;

/// Upstream's name of [`CloneSetGates::pre_download_image`].
pub const PRE_DOWNLOAD_IMAGE: &str = "PreDownloadImageForInPlaceUpdate";

/// Every gate the CloneSet controller reads: the planner's and [`PRE_DOWNLOAD_IMAGE`].
pub const GATE_NAMES: [&str; 7] = [
    Options::GATE_NAMES[0],
    Options::GATE_NAMES[1],
    Options::GATE_NAMES[2],
    Options::GATE_NAMES[3],
    Options::GATE_NAMES[4],
    Options::GATE_NAMES[5],
    PRE_DOWNLOAD_IMAGE,
];

/// The CloneSet controller's gates. [`Default`] is upstream's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CloneSetGates {
    /// The planner's gates and flags.
    pub options: Options,
    /// Gate `PreDownloadImageForInPlaceUpdate` (default off): pre-download the new images of an in-place
    /// update with ImagePullJobs.
    pub pre_download_image: bool,
}

/// A `--cloneset-feature-gates` entry that is not understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// The entry is not `Name=true` or `Name=false`.
    #[error("invalid feature gate setting {entry:?}: expected Name=true or Name=false")]
    Invalid {
        /// The entry given.
        entry: String,
    },
    /// The name is not a gate of the CloneSet controller.
    #[error("unknown feature gate {name:?} (known: {known}, {PRE_DOWNLOAD_IMAGE})", known = Options::GATE_NAMES.join(", "))]
    Unknown {
        /// The name given.
        name: String,
    },
}

impl FromStr for CloneSetGates {
    type Err = GateError;

    /// Parses `Name=true,Name=false,...` (values as Go's `strconv.ParseBool`) over the defaults.
    fn from_str(list: &str) -> Result<Self, GateError> {
        let mut gates = Self::default();
        for entry in kruise_api::feature_gate::gate_entries(list) {
            let (name, enabled) = entry.map_err(|entry| GateError::Invalid {
                entry: entry.to_owned(),
            })?;
            if name == PRE_DOWNLOAD_IMAGE {
                gates.pre_download_image = enabled;
            } else {
                gates
                    .options
                    .set_gate(name, enabled)
                    .map_err(|_| GateError::Unknown {
                        name: name.to_owned(),
                    })?;
            }
        }
        Ok(gates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pre_download_gate_is_parsed_next_to_the_planner_gates() {
        let gates: CloneSetGates = "CloneSetShortHash=true, PreDownloadImageForInPlaceUpdate=1"
            .parse()
            .unwrap();
        assert!(gates.pre_download_image);
        assert!(gates.options.short_hash, "the planner gate is kept");
        let off: CloneSetGates =
            "PreDownloadImageForInPlaceUpdate=true,PreDownloadImageForInPlaceUpdate=F"
                .parse()
                .unwrap();
        assert!(!off.pre_download_image, "the last setting wins");
        assert_eq!(
            "".parse::<CloneSetGates>().unwrap(),
            CloneSetGates::default()
        );
        assert_eq!(
            "PreDownloadImageForInPlaceUpdate=yes".parse::<CloneSetGates>(),
            Err(GateError::Invalid {
                entry: "PreDownloadImageForInPlaceUpdate=yes".into()
            })
        );
        assert_eq!(
            "PreDownloadImageForInPlaceUpdate".parse::<CloneSetGates>(),
            Err(GateError::Invalid {
                entry: "PreDownloadImageForInPlaceUpdate".into()
            })
        );
        assert_eq!(
            "CloneSetShortHash".parse::<CloneSetGates>(),
            Err(GateError::Invalid {
                entry: "CloneSetShortHash".into()
            })
        );
        assert_eq!(
            "Nope=true".parse::<CloneSetGates>(),
            Err(GateError::Unknown {
                name: "Nope".into()
            })
        );
    }
}
