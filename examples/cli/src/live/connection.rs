//! kubectl's connection flags: `--kubeconfig`, `--context` and `-n/--namespace`, the namespace defaulting to
//! the context's (else `default`).

use std::path::PathBuf;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::CliError;

/// Which cluster, as kubectl's flags say.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ClusterArgs {
    /// The kubeconfig file (default: `KUBECONFIG`, else `~/.kube/config`, else in-cluster).
    #[arg(long, value_name = "PATH", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long, value_name = "NAME", global = true)]
    pub context: Option<String>,
    /// The namespace (default: the context's namespace, else `default`).
    #[arg(short, long, value_name = "NS", global = true)]
    pub namespace: Option<String>,
}

/// A client of the chosen cluster and the namespace to work in.
#[derive(Clone)]
pub struct Connection {
    /// The client.
    pub client: Client,
    /// `-n`, else the context's namespace.
    pub namespace: String,
}

fn cluster(error: impl std::fmt::Display) -> CliError {
    CliError::Cluster(error.to_string())
}

impl ClusterArgs {
    /// The configuration the flags name.
    ///
    /// # Errors
    /// The kubeconfig cannot be read, or names no such context.
    pub async fn config(&self) -> Result<Config, CliError> {
        let options = KubeConfigOptions {
            context: self.context.clone(),
            ..KubeConfigOptions::default()
        };
        match (&self.kubeconfig, &self.context) {
            (Some(path), _) => {
                let kubeconfig = Kubeconfig::read_from(path).map_err(|error| {
                    cluster(format!("--kubeconfig {}: {error}", path.display()))
                })?;
                Config::from_custom_kubeconfig(kubeconfig, &options)
                    .await
                    .map_err(|error| cluster(format!("--kubeconfig {}: {error}", path.display())))
            }
            (None, Some(context)) => Config::from_kubeconfig(&options)
                .await
                .map_err(|error| cluster(format!("--context {context}: {error}"))),
            (None, None) => Config::infer().await.map_err(cluster),
        }
    }

    /// Connects: the client and the namespace (`-n`, else the context's).
    ///
    /// # Errors
    /// See [`ClusterArgs::config`]; the client cannot be built.
    pub async fn connect(&self) -> Result<Connection, CliError> {
        let config = self.config().await?;
        let namespace = self
            .namespace
            .clone()
            .unwrap_or_else(|| config.default_namespace.clone());
        let client = Client::try_from(config).map_err(cluster)?;
        Ok(Connection { client, namespace })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECONFIG: &str = "apiVersion: v1
kind: Config
current-context: one
clusters:
- name: c
  cluster: {server: 'https://127.0.0.1:6443'}
users:
- name: u
  user: {token: abc}
contexts:
- name: one
  context: {cluster: c, user: u, namespace: team-one}
- name: two
  context: {cluster: c, user: u}
";

    fn args(
        file: &tempfile::NamedTempFile,
        context: Option<&str>,
        namespace: Option<&str>,
    ) -> ClusterArgs {
        ClusterArgs {
            kubeconfig: Some(file.path().to_owned()),
            context: context.map(str::to_owned),
            namespace: namespace.map(str::to_owned),
        }
    }

    #[tokio::test]
    async fn the_namespace_follows_flag_then_context_then_default() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, KUBECONFIG.as_bytes()).unwrap();
        let namespace = |context, namespace| {
            let args = args(&file, context, namespace);
            async move { args.connect().await.map(|c| c.namespace) }
        };
        assert_eq!(namespace(None, None).await.unwrap(), "team-one");
        assert_eq!(namespace(Some("two"), None).await.unwrap(), "default");
        assert_eq!(namespace(Some("two"), Some("mine")).await.unwrap(), "mine");
        let error = namespace(Some("three"), None)
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("three"), "{error}");
        let missing = ClusterArgs {
            kubeconfig: Some("/nonexistent/kubeconfig".into()),
            ..ClusterArgs::default()
        };
        let error = missing.connect().await.err().unwrap().to_string();
        assert!(error.contains("/nonexistent/kubeconfig"), "{error}");
    }
}
