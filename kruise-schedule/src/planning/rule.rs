//! Why an action was chosen: the rule trait every planner's rule enum implements, and the words the rules
//! share (the revision a pod moves to, how an update is carried out, which hook holds a pod).

use std::fmt;

/// A rule of an upstream controller that chose an action: a short identifier, the words of its
/// [`Display`](fmt::Display), and which lifecycle hook holds a pod when the rule's action is a lifecycle
/// transition instead of the deletion or update the rule wanted.
pub trait PlanRule: fmt::Display {
    /// A short identifier of the rule (`scale-up`, `condemned`, `replace`, …).
    fn id(&self) -> &'static str;

    /// The hook that holds a pod this rule wanted to delete or update, when the plan writes a lifecycle
    /// transition for it instead; `None` for rules whose lifecycle transitions are no hook's (refreshes).
    fn holding_hook(&self) -> Option<Hook>;
}

/// A lifecycle hook that holds a pod before a deletion or an in-place update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    /// `lifecycle.preDelete`: the pod waits in `PreparingDelete`.
    PreDelete,
    /// `lifecycle.inPlaceUpdate`: the pod waits in `PreparingUpdate`.
    InPlaceUpdate,
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::PreDelete => "preDelete",
            Self::InPlaceUpdate => "inPlaceUpdate",
        })
    }
}

/// Which revision something is at or moves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `status.currentRevision`.
    Current,
    /// The update revision (`status.updateRevision`).
    Update,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Current => "current",
            Self::Update => "update",
        })
    }
}

/// How a pod chosen by an update is carried to its new revision.
///
/// One enum for every workload: CloneSet and Advanced StatefulSet recreate a pod (delete it, or mark it for
/// deletion, and create it again) where Advanced DaemonSet deletes it and the next pass creates the new pod,
/// which is the same decision. The words differ (`ReCreate` policy, `podUpdatePolicy`, the `Standard`
/// strategy), so each workload's rule renders them itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpdateHow {
    /// In place.
    InPlace,
    /// Recreated because the policy says so: CloneSet `updateStrategy.type: ReCreate`, Advanced StatefulSet
    /// `podUpdatePolicy: ReCreate`, Advanced DaemonSet `rollingUpdate.type: Standard`.
    RecreatePolicy,
    /// Recreated because the change cannot be made in place (`InPlaceIfPossible`): why.
    RecreateRequired(String),
}
