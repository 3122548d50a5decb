//! The WorkloadSpread a pod was assigned to.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// The JSON value of the `apps.kruise.io/matched-workloadspread` pod annotation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatchedWorkloadSpread {
    /// The WorkloadSpread's name.
    #[serde(default)]
    pub name: String,
    /// The subset the pod was assigned to.
    #[serde(default)]
    pub subset: String,
    /// A generated id, set when the pod had no name yet at admission.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uid: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape() {
        let value = MatchedWorkloadSpread {
            name: "ws".into(),
            subset: "zone-a".into(),
            uid: String::new(),
        };
        assert_eq!(
            crate::annotations::to_value(&value),
            r#"{"name":"ws","subset":"zone-a"}"#
        );
    }
}
