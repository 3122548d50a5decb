//! ImagePullJob and NodeImage (upstream `pkg/controller/imagepulljob`, `pkg/controller/nodeimage`): the pure
//! decisions, and kruise-manager's controllers that run them.
//!
//! * [`reference`](mod@reference): image names as NodeImage keys them (pure);
//! * [`job`]: the ImagePullJob controller's decisions (pure); [`job_controller`] runs them;
//! * [`node_image`]: the NodeImage controller's decisions (pure); [`node_image_controller`] runs them;
//! * [`predownload`]: CloneSet image pre-download for in-place updates: whether to create an ImagePullJob, and
//!   the job (pure);
//! * [`node_pulls`]: kruise-daemon's decisions for its NodeImage (pure); `crate::daemon::image_puller` runs
//!   them.

pub mod job;
pub mod job_controller;
pub mod node_image;
pub mod node_image_controller;
pub mod node_pulls;
pub mod predownload;
pub mod reference;
