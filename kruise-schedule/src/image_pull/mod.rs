//! ImagePullJob and NodeImage (upstream `pkg/controller/imagepulljob`, `pkg/controller/nodeimage`,
//! `pkg/daemon/imagepuller`): the decisions of the two controllers and of the node agent that pulls, and CloneSet
//! image pre-download. Time comes in as an argument; the callers read and write the objects.
//!
//! * [`reference`](mod@reference): image names as NodeImage keys them;
//! * [`job`]: the ImagePullJob controller's decisions;
//! * [`node_image`]: the NodeImage controller's decisions;
//! * [`node_pulls`]: the node agent's decisions for its NodeImage, and how its reports merge into it;
//! * [`pull_secret_copies`]: the copies of job pull secrets in `kruise-daemon-config`, the only namespace
//!   whose Secrets kruise-daemon may read;
//! * [`predownload`]: CloneSet image pre-download for in-place updates: whether to create ImagePullJobs, and
//!   the jobs.

pub mod job;
pub mod list_job;
pub mod node_image;
pub mod node_pulls;
pub mod predownload;
pub mod pull_secret_copies;
pub mod reference;
