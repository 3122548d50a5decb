//! ImagePullJob and NodeImage (spec 3f): the pure decisions, and kruise-manager's controllers that run them.
//!
//! * [`reference`]: image names as NodeImage keys them (pure);
//! * [`job`]: the ImagePullJob controller's decisions (pure); [`job_controller`] runs them;
//! * [`node_image`]: the NodeImage controller's decisions (pure); [`node_image_controller`] runs them;
//! * [`predownload`]: CloneSet image pre-download for in-place updates: whether to create an ImagePullJob, and
//!   the job (pure);
//! * the pulls themselves are kruise-daemon's (`crate::daemon::image_puller`).

pub mod job;
pub mod node_image;
pub mod reference;
