//! The pod-template revisions the operator has seen, by name, with their data (what an in-place update
//! compares: `{"spec":{"template":...}}`). Names and data come from `kruise_inplace::revision::for_template`,
//! so they are the ones kruise-manager and upstream OpenKruise give the same template.
//!
//! They are kept in memory only, to keep the example short: after a restart the operator knows only the
//! revisions of the specs it sees from then on, and the planner recreates pods at an unknown revision
//! instead of updating them in place. kruise-manager stores each revision as a ControllerRevision owned by
//! the CloneSet instead.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use kruise_api::apps::v1beta1::CloneSet;
use kruise_inplace::revision::{self, RevisionError};
use kube::ResourceExt as _;
use serde_json::Value;

/// Revision names and their data.
#[derive(Debug, Default)]
pub struct RevisionMemory {
    known: Mutex<BTreeMap<String, Value>>,
}

impl RevisionMemory {
    /// The revision of `cloneset`'s pod template (the update revision), remembered from now on.
    ///
    /// # Errors
    /// The template holds a value that cannot be hashed (an invalid quantity).
    pub fn remember(&self, cloneset: &CloneSet) -> Result<String, RevisionError> {
        let revision = revision::for_template(&cloneset.name_any(), &cloneset.spec.template, 0)?;
        let data = serde_json::from_str(&revision.data)
            .map_err(|error| RevisionError::Template(error.to_string()))?;
        self.lock().insert(revision.name.clone(), data);
        Ok(revision.name)
    }

    /// Whether the data of the revision `name` is known.
    pub fn knows(&self, name: &str) -> bool {
        self.lock().contains_key(name)
    }

    /// Every known revision, as `(name, data)`.
    pub fn all(&self) -> Vec<(String, Value)> {
        self.lock()
            .iter()
            .map(|(name, data)| (name.clone(), data.clone()))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Value>> {
        // The map stays consistent even if a holder panicked: every change is a single insert.
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
