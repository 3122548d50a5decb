//! kruise-manager's ImagePullJob and NodeImage controllers: they run the decisions of
//! `kruise_schedule::image_pull` against the API server (kruise-daemon's side is `kruise_daemon::image_puller`).
//!
//! * [`job_controller`]: the ImagePullJob controller;
//! * [`node_image_controller`]: the NodeImage controller;
//! * [`pull_secrets`]: the copies of job pull secrets kruise-daemon reads in `kruise-daemon-config`.

pub mod job_controller;
pub mod list_job;
pub mod node_image_controller;
pub mod pull_secrets;
