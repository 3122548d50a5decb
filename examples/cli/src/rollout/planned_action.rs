//! Actions in the planners' shared vocabulary (`kruise_schedule::planning`), as JSON and as text lines:
//! used by the Advanced StatefulSet and Advanced DaemonSet plans.

use std::io::Write;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL;
use kruise_api::lifecycle::LifecycleStateType;
use kruise_schedule::planning::{Action, ActionKind, PlanRule, SpecificAction};
use serde_json::{Value, json};

/// The objects an action's indexes refer to.
#[derive(Clone, Copy)]
pub(super) struct ActionObjects<'a> {
    /// The input pods.
    pub(super) pods: &'a [Pod],
    /// The input claims.
    pub(super) claims: &'a [PersistentVolumeClaim],
}

impl ActionObjects<'_> {
    /// The name of the object acted on; for a new pod without a name (a DaemonSet's), its `generateName`.
    fn object_name<R: PlanRule, S: SpecificAction>(&self, action: &Action<R, S>) -> String {
        let name = action.object_name(self.pods, self.claims);
        match &action.kind {
            ActionKind::CreatePod { pod, .. } if name.is_empty() => {
                pod.metadata.generate_name.clone().unwrap_or_default()
            }
            _ => name.to_owned(),
        }
    }

    /// `{kind, pod|claim, rule, reason}` and, by kind, `batch`, `revision`, `node` (creations) or
    /// `lifecycle: {from, to}`.
    pub(super) fn json<R: PlanRule, S: SpecificAction>(&self, action: &Action<R, S>) -> Value {
        let mut value = serde_json::Map::new();
        value.insert("kind".into(), json!(action.kind.name()));
        let name = self.object_name(action);
        let is_claim = matches!(action.kind, ActionKind::CreateClaim { .. })
            || action
                .kind
                .specific()
                .is_some_and(|specific| specific.claim().is_some());
        value.insert(if is_claim { "claim" } else { "pod" }.into(), json!(name));
        value.insert("rule".into(), json!(action.rule.id()));
        value.insert("reason".into(), json!(action.reason()));
        match &action.kind {
            ActionKind::CreatePod { pod, batch, node } => {
                value.insert("batch".into(), json!(batch));
                let revision = pod
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|labels| labels.get(CONTROLLER_REVISION_HASH_LABEL));
                value.insert("revision".into(), json!(revision));
                value.insert("node".into(), json!(node));
            }
            ActionKind::Lifecycle { transition, .. } => {
                let name = |state: &Option<LifecycleStateType>| {
                    state.as_ref().map(|state| state.as_str().to_owned())
                };
                value.insert(
                    "lifecycle".into(),
                    json!({"from": name(&transition.from), "to": name(&transition.to)}),
                );
            }
            _ => {}
        }
        Value::Object(value)
    }

    /// `  kind object: reason`, with ` (node N)` for a creation bound to a node.
    pub(super) fn write_line<R: PlanRule, S: SpecificAction>(
        &self,
        out: &mut impl Write,
        action: &Action<R, S>,
    ) -> std::io::Result<()> {
        let mut object = self.object_name(action);
        if let ActionKind::CreatePod {
            node: Some(node), ..
        } = &action.kind
        {
            object = format!("{object} (node {node})");
        }
        writeln!(
            out,
            "  {} {}: {}",
            action.kind.name(),
            object,
            action.reason()
        )
    }

    /// `actions: none`, or `actions:` and one line per action.
    pub(super) fn write_lines<R: PlanRule, S: SpecificAction>(
        &self,
        out: &mut impl Write,
        actions: &[Action<R, S>],
    ) -> std::io::Result<()> {
        if actions.is_empty() {
            return writeln!(out, "actions: none");
        }
        writeln!(out, "actions:")?;
        actions
            .iter()
            .try_for_each(|action| self.write_line(out, action))
    }
}
