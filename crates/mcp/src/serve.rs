//! Starting a server: [`Server::new`] checks the configuration and gets the store ready
//! without a runtime, [`Server::serve`] serves on the caller's.
use std::future::Future;
use std::sync::Arc;

use merkle_store::Store;
use rmcp::ServiceExt;

use crate::config::{HttpConfig, ServeConfig};
use crate::error::{Error, Result};
use crate::server::{MerkleMcp, Shared};
use crate::store::{or_missing, watched};
use crate::streamable_http::{self, Roles, Writes};

/// A server ready to serve: its configuration checked, its store access (and file watcher)
/// started.
pub struct Server {
    handler: MerkleMcp,
    /// With HTTP: how, and the roles of the workspace's agents, read at start.
    http: Option<(HttpConfig, Writes)>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("http", &self.http.as_ref().map(|(config, _)| config))
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Checks `config` and readies the store. The server's agent (`--agent`) need not be
    /// registered: unless `quiet`, a warning on stderr says it is not and how to register it,
    /// and until it is the server only reads (it lists no write tool, and a write is the tool's
    /// error). Over HTTP, every agent's role is read now, to refuse at the door a write a
    /// token's agent may not make (and read again, one store handle at a time as for any
    /// request, when a token names an agent registered since); a static token that acts as an
    /// unknown agent is [`Error::UnknownTokenAgent`], and an address that is not loopback,
    /// without authentication and without [`HttpConfig::insecure_no_auth`], is
    /// [`Error::Unauthenticated`].
    pub fn new(config: ServeConfig) -> Result<Server> {
        let workspace = watched(config.workspace, config.quiet);
        let shared = Arc::new(Shared::new(workspace, config.agent.clone()));
        let handler = MerkleMcp::new(Arc::clone(&shared));
        let roles = roles_of(&shared)?;
        if let Some(agent) = &config.agent
            && !roles.contains_key(agent)
            && !config.quiet
        {
            eprintln!(
                "warning: no agent {agent:?} in this workspace, so `merkle mcp --agent {agent}` \
                 only reads until there is: register it with `merkle agent add {agent} --role \
                 writer` (or synthesis)"
            );
        }
        let http = match config.http {
            None => None,
            Some(http) => {
                let reload = Arc::clone(&shared);
                let reload_roles: streamable_http::ReloadRoles =
                    Arc::new(move || roles_of(&reload));
                for (token, t) in http.tokens.iter().enumerate() {
                    if let Some(agent) = &t.agent
                        && !roles.contains_key(agent)
                    {
                        return Err(Error::UnknownTokenAgent {
                            token,
                            agent: agent.clone(),
                        });
                    }
                }
                streamable_http::check(&http)?;
                let writes = Writes {
                    roles,
                    reload_roles,
                    default_agent: config.agent,
                };
                Some((http, writes))
            }
        };
        Ok(Server { handler, http })
    }

    /// Serves until `shutdown` completes, or on stdio until the client closes the connection.
    /// Over HTTP, `listening` is told the endpoint's URL once the socket listens (a caller that
    /// stops the server on a signal listens for it before that, so a harness that stops the
    /// server as soon as it has read the URL still gets a clean stop).
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()>,
        listening: impl FnOnce(&str) -> std::io::Result<()>,
    ) -> Result<()> {
        if let Some((config, writes)) = self.http {
            return streamable_http::serve(self.handler, config, writes, shutdown, listening).await;
        }
        let running = self
            .handler
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Session {
                what: "starting the MCP session on stdio".to_owned(),
                source: Box::new(e),
            })?;
        let stop = running.cancellation_token();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        let ended = tokio::select! {
            ended = &mut waiting => ended,
            () = shutdown => {
                stop.cancel();
                waiting.await
            }
        };
        ended.map_err(|e| Error::Task {
            what: "serving MCP on stdio".to_owned(),
            source: e,
        })?;
        Ok(())
    }
}

/// Every registered agent's role (none before the first scan).
fn roles_of(shared: &Shared) -> Result<Roles> {
    let read = shared.workspace().read_stored(|store: &Store| {
        Ok(store
            .agents()?
            .into_iter()
            .map(|a| (a.id, a.role))
            .collect())
    });
    or_missing(read, Some(Roles::default()))
}
