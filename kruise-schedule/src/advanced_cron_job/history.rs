//! History cleanup: which finished children to delete.

use super::child::Child;

/// The children of one outcome (all failed, or all successful) that a history limit removes: sorted by
/// `status.startTime` with unset first (ties by name, where upstream's sort is unstable), the first
/// `len - limit`. No limit removes nothing; a negative limit removes everything, and the difference is
/// taken in 32-bit arithmetic as upstream does.
pub(crate) fn beyond_limit(mut children: Vec<&Child>, limit: Option<i32>) -> Vec<&Child> {
    let Some(limit) = limit else {
        return Vec::new();
    };
    children.sort_by(|a, b| {
        a.start_time
            .cmp(&b.start_time)
            .then_with(|| a.name().cmp(b.name()))
    });
    // Go: `int32(i) >= int32(len(children)) - limit` stops the deletion loop.
    let length = i32::try_from(children.len()).unwrap_or(i32::MAX);
    let keep_from = length.wrapping_sub(limit);
    let remove = usize::try_from(keep_from.max(0)).unwrap_or_default();
    children.truncate(remove);
    children
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advanced_cron_job::ChildState;
    use k8s_openapi::api::core::v1::ObjectReference;
    use k8s_openapi::jiff::Timestamp;

    fn child(name: &str, start: Option<i64>) -> Child {
        Child {
            reference: ObjectReference {
                name: Some(name.into()),
                ..ObjectReference::default()
            },
            state: ChildState::Succeeded,
            start_time: start.map(|seconds| Timestamp::from_second(seconds).unwrap()),
            scheduled_at: None,
        }
    }

    fn names(children: Vec<&Child>) -> Vec<&str> {
        children.into_iter().map(Child::name).collect()
    }

    #[test]
    fn oldest_go_first_unset_before_set() {
        let all = [
            child("c", Some(30)),
            child("a", Some(10)),
            child("none", None),
            child("b", Some(20)),
            child("b2", Some(20)),
        ];
        let refs = || all.iter().collect::<Vec<_>>();
        assert_eq!(names(beyond_limit(refs(), Some(3))), ["none", "a"]);
        assert_eq!(
            names(beyond_limit(refs(), Some(1))),
            ["none", "a", "b", "b2"]
        );
        assert_eq!(names(beyond_limit(refs(), Some(5))), Vec::<&str>::new());
        assert_eq!(names(beyond_limit(refs(), Some(9))), Vec::<&str>::new());
        assert_eq!(names(beyond_limit(refs(), None)), Vec::<&str>::new());
        assert_eq!(beyond_limit(refs(), Some(0)).len(), 5);
        assert_eq!(beyond_limit(refs(), Some(-3)).len(), 5);
        // 5 - i32::MIN wraps around to a negative number: nothing is deleted.
        assert_eq!(beyond_limit(refs(), Some(i32::MIN)).len(), 0);
    }
}
