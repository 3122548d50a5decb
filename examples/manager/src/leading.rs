//! What kruise-manager does while it leads: write its webhook configurations (retried every 5 s, but for
//! no longer than a bound), then run the controllers until leading ends. Either going wrong is a
//! [`LeadError`]: the manager then fails `/healthz` and the elector gives the lease up, so a standby
//! leads instead of a leader that renews its lease while doing nothing.

use std::time::Duration;

use kube::Client;

use crate::webhook::registration::{self, WebhookRegistration};
use kruise_runtime::controllers::ControllerError;
use kruise_runtime::shutdown::Shutdown;

/// How long the leader keeps retrying a webhook configuration before it gives up leading.
pub const WEBHOOK_CONFIGURATION_WITHIN: Duration = Duration::from_secs(60);

/// How long the leader waits between two attempts at a webhook configuration.
const RETRY_EVERY: Duration = Duration::from_secs(5);

/// Why the leader stopped doing its work while still leading.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeadError {
    /// A webhook configuration could not be written in time.
    #[error("could not write the {kind} {name} within {within:?}: {last_error}")]
    WebhookConfiguration {
        /// Its kind.
        kind: String,
        /// Its name.
        name: String,
        /// How long it was retried.
        within: Duration,
        /// The last refusal.
        last_error: String,
    },
    /// A controller ended while leading.
    #[error(transparent)]
    Controller(#[from] ControllerError),
}

/// Writes a webhook configuration, retrying every 5 s until it works, leading ends (`Ok` both), or
/// `within` has passed (`Err`).
///
/// # Errors
/// [`LeadError::WebhookConfiguration`] with the last error once `within` has passed.
pub async fn write_webhook_configuration<K: WebhookRegistration>(
    client: &Client,
    configuration: &K,
    leading: &Shutdown,
    within: Duration,
) -> Result<(), LeadError> {
    let kind = K::kind(&()).into_owned();
    let name = configuration.meta().name.clone().unwrap_or_default();
    let give_up = tokio::time::sleep(within);
    tokio::pin!(give_up);
    loop {
        let last_error = match registration::apply(client, configuration).await {
            Ok(()) => {
                tracing::info!(%kind, %name, "wrote the webhook configuration");
                return Ok(());
            }
            Err(error) => {
                tracing::error!(%kind, %name, %error, "writing the webhook configuration failed; retrying in 5s");
                error.to_string()
            }
        };
        tokio::select! {
            () = leading.clone().wait() => return Ok(()),
            () = &mut give_up => {
                return Err(LeadError::WebhookConfiguration { kind, name, within, last_error });
            }
            () = tokio::time::sleep(RETRY_EVERY) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
    use kube::api::ObjectMeta;

    use super::*;

    fn unreachable_client() -> Client {
        Client::try_from(kube::Config::new(
            "http://127.0.0.1:9".parse().expect("a valid URL"),
        ))
        .expect("a client needs no connection")
    }

    fn configuration() -> MutatingWebhookConfiguration {
        MutatingWebhookConfiguration {
            metadata: ObjectMeta {
                name: Some("kruise-mutating-webhook-configuration".into()),
                ..ObjectMeta::default()
            },
            webhooks: None,
        }
    }

    /// A leader stuck retrying its webhook configuration must not lead forever.
    #[tokio::test]
    async fn a_webhook_configuration_that_cannot_be_written_gives_up_after_the_bound() {
        let (_trigger, leading) = kruise_runtime::shutdown::channel();
        let (client, configuration) = (unreachable_client(), configuration());
        let written = write_webhook_configuration(
            &client,
            &configuration,
            &leading,
            Duration::from_millis(300),
        );
        let result = tokio::time::timeout(Duration::from_secs(60), written)
            .await
            .expect("gave up within the bound");
        let Err(LeadError::WebhookConfiguration { kind, name, .. }) = result else {
            panic!("expected a webhook configuration error, got {result:?}");
        };
        assert_eq!(kind, "MutatingWebhookConfiguration");
        assert_eq!(name, "kruise-mutating-webhook-configuration");
    }

    #[tokio::test]
    async fn retrying_stops_quietly_when_leading_ends() {
        let (trigger, leading) = kruise_runtime::shutdown::channel();
        trigger.trigger();
        let (client, configuration) = (unreachable_client(), configuration());
        let written = write_webhook_configuration(
            &client,
            &configuration,
            &leading,
            Duration::from_secs(3600),
        );
        let result = tokio::time::timeout(Duration::from_secs(60), written)
            .await
            .expect("stopped with leading");
        assert!(result.is_ok(), "{result:?}");
    }
}
