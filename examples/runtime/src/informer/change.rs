//! What a subscriber of an [`Informer`](super::Informer) is told.

use std::sync::Arc;

/// One change of a watched object, as the informer's store has it.
#[derive(Debug)]
pub enum Change<K> {
    /// The object was created or changed (or listed again after the watch restarted): its stored copy.
    Applied(Arc<K>),
    /// The object is gone: its last known copy.
    Deleted(Arc<K>),
    /// Every stored object has been told: sent after the changes of each (re)list, and right after the
    /// objects a subscriber gets when it joins a synced informer. A subscriber that has seen it holds
    /// everything the store holds.
    Listed,
}

impl<K> Clone for Change<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Applied(object) => Self::Applied(Arc::clone(object)),
            Self::Deleted(object) => Self::Deleted(Arc::clone(object)),
            Self::Listed => Self::Listed,
        }
    }
}

impl<K> Change<K> {
    /// The object the change is about (`None` for [`Change::Listed`]).
    #[must_use]
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Self::Applied(object) | Self::Deleted(object) => Some(object),
            Self::Listed => None,
        }
    }

    /// The object the change is about, taken out (`None` for [`Change::Listed`]).
    #[must_use]
    pub fn into_object(self) -> Option<Arc<K>> {
        match self {
            Self::Applied(object) | Self::Deleted(object) => Some(object),
            Self::Listed => None,
        }
    }

    /// Whether the object is gone.
    #[must_use]
    pub fn is_deleted(&self) -> bool {
        matches!(self, Self::Deleted(_))
    }
}
