//! A workload's ControllerRevisions as `kruise rollout history` and `undo` read them (pure).
//!
//! The revisions are those whose owner reference names the workload's uid, in `.revision` order. Their
//! `data` is `{"spec":{"template":{<pod template>,"$patch":"replace"}}}` for the three kinds, both as
//! kruise-rs's controllers write it (`kruise_inplace::revision`) and as the Go OpenKruise does, so the
//! template of a revision is `data.spec.template` without `$patch`, and a revision holds the workload's
//! current template when its data equals the data of that template.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kruise_inplace::revision::template_data_value;
use serde_json::Value;

use super::merge_diff::{merge_diff, without_nulls};
use super::strategy::conditional;

/// The annotation holding why a revision was made.
pub const CHANGE_CAUSE: &str = "kubernetes.io/change-cause";

/// One ControllerRevision of the workload.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnedRevision {
    /// `metadata.name`.
    pub name: String,
    /// `.revision`.
    pub number: i64,
    /// The `kubernetes.io/change-cause` annotation.
    pub change_cause: Option<String>,
    /// `data`.
    pub data: Value,
}

/// The revisions among `items` (ControllerRevisions as JSON) owned by the object with `uid`, sorted by
/// number (then name).
#[must_use]
pub fn owned_revisions(items: &[Value], uid: &str) -> Vec<OwnedRevision> {
    let mut owned: Vec<OwnedRevision> = items
        .iter()
        .filter(|item| {
            item.pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .is_some_and(|owners| {
                    owners
                        .iter()
                        .any(|owner| owner.get("uid").and_then(Value::as_str) == Some(uid))
                })
        })
        .map(|item| OwnedRevision {
            name: item
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            number: item.get("revision").and_then(Value::as_i64).unwrap_or(0),
            change_cause: item
                .pointer("/metadata/annotations")
                .and_then(|annotations| annotations.get(CHANGE_CAUSE))
                .and_then(Value::as_str)
                .map(str::to_owned),
            data: item.get("data").cloned().unwrap_or(Value::Null),
        })
        .collect();
    owned.sort_by(|a, b| a.number.cmp(&b.number).then_with(|| a.name.cmp(&b.name)));
    owned
}

/// The history table as kubectl prints it: a `REVISION  CHANGE-CAUSE` header and one row per revision
/// (`<none>` without a change cause).
#[must_use]
pub fn history_table(revisions: &[OwnedRevision]) -> String {
    let mut table = String::from("REVISION  CHANGE-CAUSE\n");
    for revision in revisions {
        let cause = revision.change_cause.as_deref().unwrap_or("<none>");
        table.push_str(&format!("{:<9} {cause}\n", revision.number));
    }
    table
}

/// The pod template a revision holds: `data.spec.template` without `$patch`.
///
/// # Errors
/// The data holds no template (the message names the revision).
pub fn revision_template(revision: &OwnedRevision) -> Result<Value, String> {
    let mut template = revision
        .data
        .pointer("/spec/template")
        .filter(|template| template.is_object())
        .cloned()
        .ok_or_else(|| {
            format!(
                "ControllerRevision {} (revision {}): data holds no spec.template",
                revision.name, revision.number
            )
        })?;
    if let Some(fields) = template.as_object_mut() {
        fields.remove("$patch");
    }
    Ok(template)
}

/// The revision data of the workload's current `spec.template`, as its controller writes it.
///
/// # Errors
/// The template does not decode, or holds a value Go cannot write.
pub fn current_data(object: &Value) -> Result<Value, String> {
    let template = object
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    let template: PodTemplateSpec =
        serde_json::from_value(template).map_err(|error| format!("spec.template: {error}"))?;
    template_data_value(&template).map_err(|error| format!("spec.template: {error}"))
}

/// The revision `number`, if the workload has it.
#[must_use]
pub fn find(revisions: &[OwnedRevision], number: i64) -> Option<&OwnedRevision> {
    revisions.iter().find(|revision| revision.number == number)
}

/// Why `undo` does nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UndoRefusal {
    /// `--to-revision N` names no revision of the workload (bad input).
    NotFound(i64),
    /// No revision precedes the current one.
    NoPrevious,
    /// A revision's data or the workload's template cannot be read.
    Unreadable(String),
}

impl std::fmt::Display for UndoRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound(number) => {
                write!(f, "unable to find specified revision {number} in history")
            }
            Self::NoPrevious => write!(f, "no previous revision to roll back to"),
            Self::Unreadable(error) => f.write_str(error),
        }
    }
}

/// What `undo` does.
#[derive(Clone, Debug, PartialEq)]
pub enum UndoDecision {
    /// Send `patch` to restore revision `number`'s template.
    Restore {
        /// The revision restored.
        number: i64,
        /// The conditional merge patch of `spec.template`.
        patch: Value,
    },
    /// The template already is revision `number`'s.
    AlreadyCurrent(i64),
}

/// Decides `undo` of `object` (the workload as read) to `to` (default: the highest revision below the
/// current one, the current one being the revision that holds the current template, else the highest).
///
/// # Errors
/// See [`UndoRefusal`].
pub fn undo(
    object: &Value,
    revisions: &[OwnedRevision],
    to: Option<i64>,
) -> Result<UndoDecision, UndoRefusal> {
    let current = current_data(object).map_err(UndoRefusal::Unreadable)?;
    let holds_current = |revision: &&OwnedRevision| revision.data == current;
    let chosen = match to {
        Some(number) => find(revisions, number).ok_or(UndoRefusal::NotFound(number))?,
        None => {
            let current_number = revisions
                .iter()
                .find(holds_current)
                .or_else(|| revisions.last())
                .map(|revision| revision.number)
                .ok_or(UndoRefusal::NoPrevious)?;
            revisions
                .iter()
                .rev()
                .find(|revision| revision.number < current_number)
                .ok_or(UndoRefusal::NoPrevious)?
        }
    };
    if holds_current(&chosen) {
        return Ok(UndoDecision::AlreadyCurrent(chosen.number));
    }
    let target = without_nulls(&revision_template(chosen).map_err(UndoRefusal::Unreadable)?);
    let live = object
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    match merge_diff(&live, &target) {
        None => Ok(UndoDecision::AlreadyCurrent(chosen.number)),
        Some(change) => Ok(UndoDecision::Restore {
            number: chosen.number,
            patch: conditional(object, serde_json::json!({"spec": {"template": change}})),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn template(image: &str) -> Value {
        json!({"metadata": {"labels": {"app": "web"}},
               "spec": {"containers": [{"name": "main", "image": image}]}})
    }

    fn revision_item(name: &str, number: i64, owner: &str, image: &str) -> Value {
        let parsed: PodTemplateSpec = serde_json::from_value(template(image)).unwrap();
        json!({
            "metadata": {"name": name, "ownerReferences": [{"uid": owner}],
                         "annotations": {CHANGE_CAUSE: format!("image {image}")}},
            "revision": number,
            "data": template_data_value(&parsed).unwrap(),
        })
    }

    fn workload(image: &str) -> Value {
        json!({"metadata": {"uid": "u1", "resourceVersion": "77"},
               "spec": {"replicas": 3, "template": template(image)}})
    }

    fn history() -> Vec<OwnedRevision> {
        owned_revisions(
            &[
                revision_item("web-c", 3, "u1", "nginx:3"),
                revision_item("web-a", 1, "u1", "nginx:1"),
                revision_item("other", 2, "u2", "nginx:9"),
                revision_item("web-b", 2, "u1", "nginx:2"),
            ],
            "u1",
        )
    }

    #[test]
    fn history_lists_the_owned_revisions_in_order() {
        let revisions = history();
        let names: Vec<&str> = revisions.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["web-a", "web-b", "web-c"]);
        let mut without_cause = revisions.clone();
        without_cause[0].change_cause = None;
        assert_eq!(
            history_table(&without_cause),
            "REVISION  CHANGE-CAUSE\n1         <none>\n2         image nginx:2\n3         image nginx:3\n"
        );
        let restored = revision_template(&revisions[0]).unwrap();
        assert_eq!(restored["spec"]["containers"][0]["image"], "nginx:1");
        assert!(restored.get("$patch").is_none());
    }

    #[test]
    fn undo_restores_the_previous_or_named_revision() {
        let revisions = history();
        let UndoDecision::Restore { number, patch } =
            undo(&workload("nginx:3"), &revisions, None).unwrap()
        else {
            panic!("expected a restore");
        };
        assert_eq!(number, 2);
        assert_eq!(patch["metadata"]["resourceVersion"], "77");
        let mut restored = workload("nginx:3");
        json_patch::merge(&mut restored, &patch);
        assert_eq!(current_data(&restored).unwrap(), revisions[1].data);

        // Rolled back to 1 (the manager renumbers nothing here): the previous of the template at 1 is none.
        assert_eq!(
            undo(&workload("nginx:1"), &revisions, None),
            Err(UndoRefusal::NoPrevious)
        );
        // The current template is revision 2's: the default goes to 1.
        assert!(matches!(
            undo(&workload("nginx:2"), &revisions, None),
            Ok(UndoDecision::Restore { number: 1, .. })
        ));
        // A template that no revision holds yet: the newest revision counts as current.
        assert!(matches!(
            undo(&workload("nginx:4"), &revisions, None),
            Ok(UndoDecision::Restore { number: 2, .. })
        ));
        assert_eq!(
            undo(&workload("nginx:3"), &revisions, Some(3)),
            Ok(UndoDecision::AlreadyCurrent(3))
        );
        assert!(matches!(
            undo(&workload("nginx:3"), &revisions, Some(1)),
            Ok(UndoDecision::Restore { number: 1, .. })
        ));
        let missing = undo(&workload("nginx:3"), &revisions, Some(9)).unwrap_err();
        assert_eq!(missing, UndoRefusal::NotFound(9));
        assert!(missing.to_string().contains("revision 9"));
        assert_eq!(
            undo(&workload("nginx:3"), &[], None),
            Err(UndoRefusal::NoPrevious)
        );
    }
}
