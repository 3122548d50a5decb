//! `InPlaceIfPossible` (upstream `inPlaceUpdatePods`): a chosen old pod is updated in place when it has the
//! `InPlaceUpdateReady` readiness gate, its revision (found by its `controller-revision-hash`) is known, and
//! `kruise_inplace` finds an update spec from it to the update revision (image changes, env-from-metadata
//! labels and annotations, metadata; cpu/memory with vertical scaling). Otherwise it is deleted and
//! recreated.

use std::collections::HashMap;
use std::sync::Arc;

use kruise_api::keys;
use kruise_inplace::calculate::{RevisionRef, calculate_data};
use kruise_inplace::{RevisionLabels, UpdateOptions, UpdateSpec};
use kruise_lifecycle::UpdateDecision;
use serde_json::Value;

use super::action::{Action, ActionKind, Rule};
use super::error::Error;
use super::facts::PodFacts;
use super::plan::{Ctx, Requeue};

/// The in-place options of an Advanced DaemonSet: the caller's gates, the update hash as the revision written
/// to pods, exact revision labels, no grace period.
pub(crate) fn update_options(ctx: &Ctx<'_>) -> UpdateOptions {
    UpdateOptions {
        gates: ctx.input.options.in_place,
        revision: Some(ctx.input.revisions.update_hash.to_owned()),
        revision_labels: RevisionLabels::Exact,
        ..UpdateOptions::default()
    }
}

/// Computes each old revision's update spec once.
pub(crate) struct InPlace<'c, 'a> {
    ctx: &'c Ctx<'a>,
    options: UpdateOptions,
    update_data: Option<Result<Value, String>>,
    specs: HashMap<String, Result<Arc<UpdateSpec>, String>>,
}

impl<'c, 'a> InPlace<'c, 'a> {
    pub(crate) fn new(ctx: &'c Ctx<'a>) -> Self {
        Self {
            ctx,
            options: update_options(ctx),
            update_data: None,
            specs: HashMap::new(),
        }
    }

    /// The update spec for the pod, or why it must be recreated.
    pub(crate) fn spec_for(&mut self, facts: &PodFacts<'_>) -> Result<Arc<UpdateSpec>, String> {
        if !facts.has_in_place_gate {
            return Err("the pod has no InPlaceUpdateReady readiness gate".to_owned());
        }
        let revisions = self.ctx.input.revisions;
        let hash =
            kruise_api::pod::label(facts.pod, keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL)
                .unwrap_or("");
        let Some(old) = revisions.get(hash).filter(|_| !hash.is_empty()) else {
            return Err(format!(
                "the pod's revision {hash:?} is not among the known revisions"
            ));
        };
        if let Some(cached) = self.specs.get(hash) {
            return cached.clone();
        }
        let update_hash = revisions.update_hash;
        let result = match revisions
            .get(update_hash)
            .filter(|r| r.revision.data.is_some())
        {
            Some(known) => calculate_data(old.revision, known.revision, &self.options)
                .map_err(|reason| reason.to_string()),
            None => {
                let template = &self.ctx.input.daemonset.spec.template;
                let data = self.update_data.get_or_insert_with(|| {
                    kruise_inplace::revision::template_data_value(template)
                        .map_err(|error| format!("the update revision's template: {error}"))
                });
                match data {
                    Ok(data) => calculate_data(
                        old.revision,
                        RevisionRef {
                            name: update_hash,
                            data: Some(data),
                            annotations: None,
                        },
                        &self.options,
                    )
                    .map_err(|reason| reason.to_string()),
                    Err(reason) => Err(reason.clone()),
                }
            }
        }
        .map(Arc::new);
        self.specs.insert(hash.to_owned(), result.clone());
        result
    }

    /// Records the in-place update of the pod.
    pub(crate) fn update(
        &self,
        facts: &PodFacts<'_>,
        spec: Arc<UpdateSpec>,
        rule: Rule,
        actions: &mut Vec<Action>,
        requeue: &mut Requeue,
    ) -> Result<(), Error> {
        match self
            .ctx
            .workload
            .update_wanted(facts.pod, self.ctx.input.now)?
        {
            UpdateDecision::Hold(transition) => {
                if !transition.is_noop() {
                    actions.push(Action {
                        kind: ActionKind::Lifecycle {
                            pod: facts.index,
                            transition,
                        },
                        rule,
                    });
                }
            }
            UpdateDecision::UpdateNow(_) => {
                if spec.grace_seconds > 0 {
                    requeue.push(std::time::Duration::from_secs(
                        u64::try_from(spec.grace_seconds).unwrap_or(0),
                    ));
                }
                actions.push(Action {
                    kind: ActionKind::UpdateInPlace {
                        pod: facts.index,
                        spec,
                        lifecycle: None,
                    },
                    rule,
                });
            }
        }
        Ok(())
    }
}
