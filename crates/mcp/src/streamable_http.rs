//! The same MCP server over Streamable HTTP (`merkle mcp --http`: rmcp's tower service on
//! hyper's HTTP/1.1 connections), so that one long-lived server can serve many clients.
//!
//! - **Where.** The address configured (the CLI's default: `127.0.0.1:0`, a free port); the
//!   endpoint is `/mcp`, and its URL goes to the caller once the socket listens (the CLI prints
//!   it to stderr, and with `--json` `{"url"}` to stdout).
//! - **Who.** With `--token-env NAME`, a request to `/mcp` may carry `Authorization: Bearer
//!   <the variable's value>` (compared in constant time). With `--issuer URL --audience URI`
//!   (and the issuer's keys), it may carry an OAuth access token, a JWT checked by
//!   [`crate::oauth`]. A bearer that is one of the static tokens is that token; otherwise
//!   it is checked as a JWT. With either configured, a request without a token is answered
//!   401 with `WWW-Authenticate: Bearer resource_metadata="<url of the metadata>"`, one with a
//!   bad token 401 `invalid_token` saying which check failed. The metadata (RFC 9728) is
//!   published, unauthenticated, at `/.well-known/oauth-protected-resource/mcp`; with OAuth it
//!   names the issuer and the scopes. A token never appears on the command line, and is never
//!   passed on: the `Authorization` header is removed before the request reaches rmcp and the
//!   handler. A bind to an address that is not loopback without authentication is refused at
//!   start ([`crate::Error::Unauthenticated`]), unless `--insecure-no-auth` says it is meant.
//! - **As whom.** `--token-env NAME=AGENT` (repeatable) makes a static token act as that agent
//!   (else the server's `--agent`); a JWT acts as the agent its `sub` (or `--agent-claim`)
//!   names, which must be registered. The gate tells the handler (`x-merkle-agent`; any such
//!   header a client sends is dropped).
//! - **What.** A JWT's scopes bound what it may call: `merkle:read` every read tool and
//!   resource, `merkle:write` `put_frame`, `merkle:synthesize` `synthesize` (`initialize`,
//!   `ping` and notifications need none). On top of that, for JWTs and static tokens alike,
//!   the agent's role bounds what it may write (`put_frame` needs a writer, `synthesize` the
//!   synthesis role). A scope refused is 403 `insufficient_scope` naming the scope the call
//!   needs (for the client to ask for it), with a JSON-RPC error in the body that says why; a
//!   role refused is the tool's own error (`isError`, as on stdio: no token would change it),
//!   which the handler answers without running the tool (`writes::Refused`). Either is recorded in
//!   the workspace's audit log as blocked.
//! - **Hosts.** rmcp checks each request's `Host` against the loopback names, the address
//!   bound and each `--allowed-host` (against DNS rebinding): a foreign host gets 403.
//! - **Stopping.** When the caller's shutdown future completes (the CLI's: Ctrl-C or SIGTERM),
//!   the server stops accepting connections; requests in flight get two seconds to finish, then
//!   the sessions (and their event streams) are closed.
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::config::{HttpConfig, StaticToken};
use crate::error::{Error, Result};
use crate::oauth::Verifier;
use crate::writes::{AGENT_HEADER, Refused, no_agent, role_needed};

/// The MCP endpoint's path.
pub const ENDPOINT: &str = "/mcp";

/// Where the protected resource's metadata is published (RFC 9728: the well-known prefix
/// before the resource's path).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The scope of every read tool and resource.
const SCOPE_READ: &str = "merkle:read";
/// The scope of `put_frame`.
const SCOPE_WRITE: &str = "merkle:write";
/// The scope of `synthesize`, which writes directory frames from their children's.
const SCOPE_SYNTHESIZE: &str = "merkle:synthesize";

/// Each registered agent's role.
pub(crate) type Roles = HashMap<String, merkle_store::Role>;

/// Reads every registered agent's role from the store.
pub(crate) type ReloadRoles = Arc<dyn Fn() -> Result<Roles> + Send + Sync>;

/// What the gate must know of the workspace's agents to refuse a write.
pub(crate) struct Writes {
    /// Each known agent's role, read at start.
    pub(crate) roles: Roles,
    /// Reads the roles again: a JWT may name an agent registered since the server started.
    pub(crate) reload_roles: ReloadRoles,
    /// The agent a token without one acts as.
    pub(crate) default_agent: Option<String>,
}

type Body = BoxBody<Bytes, Infallible>;

/// Refuses a configuration that would serve an address that is not loopback to anyone who
/// reaches it, unless it says that is meant.
pub(crate) fn check(config: &HttpConfig) -> Result<()> {
    if !config.addr.ip().is_loopback()
        && config.tokens.is_empty()
        && config.oauth.is_none()
        && !config.insecure_no_auth
    {
        return Err(Error::Unauthenticated { addr: config.addr });
    }
    Ok(())
}

/// Serves `server` over Streamable HTTP until `shutdown` completes; `listening` is told the
/// endpoint's URL once the socket listens.
pub(crate) async fn serve<S>(
    server: S,
    config: HttpConfig,
    writes: Writes,
    shutdown: impl Future<Output = ()>,
    listening: impl FnOnce(&str) -> std::io::Result<()>,
) -> Result<()>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    let addr = config.addr;
    // The issuer's keys first: a server that cannot check tokens does not start.
    let oauth = match config.oauth {
        Some(oauth) => Some(Verifier::start(oauth).await?),
        None => None,
    };
    let listener = TcpListener::bind(addr).await.map_err(|e| Error::Io {
        what: format!("listening on {addr}"),
        source: e,
    })?;
    let local = listener.local_addr().map_err(|e| Error::Io {
        what: "the address listened on".to_owned(),
        source: e,
    })?;
    let base = format!("http://{local}");
    let url = format!("{base}{ENDPOINT}");

    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .map(str::to_owned)
        .to_vec();
    if !local.ip().is_unspecified() {
        hosts.push(local.ip().to_string());
    }
    hosts.extend(config.allowed_hosts.iter().cloned());
    let service_config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    let cancel = service_config.cancellation_token.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        service_config,
    );
    let (resource, metadata_url, metadata_paths) = resource_of(oauth.as_ref(), &base, &url);
    let gate = Arc::new(Gate {
        tokens: config
            .tokens
            .iter()
            .map(|t: &StaticToken| (blake3::hash(t.secret.as_bytes()), t.agent.clone()))
            .collect(),
        oauth,
        metadata_url,
        metadata_paths,
        resource,
        roles: RwLock::new(writes.roles),
        reload_roles: writes.reload_roles,
        default_agent: writes.default_agent,
        audit: config.audit_log,
        mcp: TowerToHyperService::new(mcp),
    });

    // The caller listens for its stop before the URL goes out, so a harness that stops us as
    // soon as it has read it still gets a clean stop.
    listening(&url).map_err(Error::Announce)?;

    let mut connections = JoinSet::new();
    let stop = shutdown;
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                // A failed accept (a client that went away, out of descriptors) ends only that
                // connection.
                let Ok((stream, _)) = accepted else { continue };
                // An answer goes out in several writes (headers, then each event of its
                // stream): without this, Nagle's algorithm holds the last one back until the
                // client's delayed ACK, 40 ms a call.
                let _ = stream.set_nodelay(true);
                let gate = Arc::clone(&gate);
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let gate = Arc::clone(&gate);
                        async move { Ok::<_, Infallible>(gate.answer(req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            () = &mut stop => break,
        }
    }
    drop(listener);
    // Requests in flight finish; event streams, which never do, are closed after a grace.
    let drained = tokio::time::timeout(Duration::from_secs(2), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        cancel.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(3), async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        connections.abort_all();
    }
    Ok(())
}

/// The resource the server is, the URL of its metadata, and the paths the metadata is served
/// at, for a server at `base` whose endpoint is `url`. With OAuth, the resource is the
/// audience its tokens are minted for, which is the URL clients know the server by (behind a
/// proxy, not the address bound here); so is the metadata's, when the audience is an http(s)
/// URL.
fn resource_of(oauth: Option<&Verifier>, base: &str, url: &str) -> (String, String, Vec<String>) {
    let local = || format!("{base}{METADATA_PATH}");
    match oauth {
        Some(v) => match well_known_of(v.audience()) {
            Some((metadata_url, path)) => (
                v.audience().to_owned(),
                metadata_url,
                vec![METADATA_PATH.to_owned(), path],
            ),
            None => (
                v.audience().to_owned(),
                local(),
                vec![METADATA_PATH.to_owned()],
            ),
        },
        None => (url.to_owned(), local(), vec![METADATA_PATH.to_owned()]),
    }
}

/// The most bytes of a request body the gate reads (rmcp's own cap is larger than any
/// JSON-RPC message merkle takes).
const MAX_BODY: usize = 16 << 20;

/// The metadata URL and path for a resource that is an http(s) URL (RFC 9728 section 3.1:
/// the well-known prefix between the host and the resource's path); `None` for any other URI.
fn well_known_of(resource: &str) -> Option<(String, String)> {
    let (scheme, rest) = resource.split_once("://")?;
    if !(scheme == "http" || scheme == "https") || rest.contains(['?', '#']) {
        return None;
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return None;
    }
    let path = format!(
        "/.well-known/oauth-protected-resource{}",
        if path.is_empty() {
            String::new()
        } else {
            format!("/{}", path.trim_end_matches('/'))
        }
    );
    Some((format!("{scheme}://{authority}{path}"), path))
}

/// Whom a request acts as, and what it may call, once its token is checked.
struct Grant {
    /// The agent named by its token; `None`: the server's `--agent`.
    agent: Option<String>,
    /// The scopes of an OAuth token; `None` (a static token, or no authentication): all.
    scopes: Option<Vec<String>>,
}

/// The JSON-RPC call a request body makes, as far as the gate needs it.
struct Call {
    /// The request's id; `None` for a notification.
    id: Option<serde_json::Value>,
    /// The tool for `tools/call`, else the method.
    name: String,
    /// The scope it needs; `None` for the session's own messages.
    scope: Option<&'static str>,
    /// The role it needs, for the tools that write.
    role: Option<merkle_store::Role>,
    arguments: serde_json::Value,
}

impl Call {
    /// The call `body` makes; `None` when it makes none (a response to the server, or not a
    /// JSON-RPC message at all, which rmcp refuses).
    fn of(body: &Bytes) -> Option<Call> {
        let message: serde_json::Value = serde_json::from_slice(body).ok()?;
        let method = message.get("method")?.as_str()?;
        let params = &message["params"];
        let id = message.get("id").cloned();
        if method == "tools/call" {
            let tool = params["name"].as_str().unwrap_or_default();
            let scope = match tool {
                "put_frame" => SCOPE_WRITE,
                "synthesize" => SCOPE_SYNTHESIZE,
                _ => SCOPE_READ,
            };
            return Some(Call {
                id,
                name: tool.to_owned(),
                scope: Some(scope),
                role: role_needed(tool),
                arguments: params["arguments"].clone(),
            });
        }
        let session =
            method == "initialize" || method == "ping" || method.starts_with("notifications/");
        Some(Call {
            id,
            name: method.to_owned(),
            scope: (!session).then_some(SCOPE_READ),
            role: None,
            arguments: params.clone(),
        })
    }
}

/// Why the gate refuses a call.
enum Refusal {
    /// The token lacks the scope the call needs: 403 `insufficient_scope`, for the client to
    /// ask for it.
    Scope {
        scope: &'static str,
        message: String,
    },
    /// The agent's role does not allow the write: the tool's error ([`Refused`]).
    Role(String),
}

/// What stands before the MCP service: the metadata, the token check, the endpoint's path,
/// and the refusal of calls a token's scopes or its agent's role do not allow.
struct Gate<M> {
    /// The hashes of the tokens taken, with the agent each acts as, compared as hashes so the
    /// comparison takes the same time whatever the token sent.
    tokens: Vec<(blake3::Hash, Option<String>)>,
    /// Checks OAuth access tokens, when configured. Without it and without `tokens`, no token
    /// is asked for.
    oauth: Option<Verifier>,
    metadata_url: String,
    /// Where the metadata is served (besides the bare well-known path).
    metadata_paths: Vec<String>,
    resource: String,
    roles: RwLock<Roles>,
    reload_roles: ReloadRoles,
    default_agent: Option<String>,
    audit: std::path::PathBuf,
    mcp: M,
}

impl<M> Gate<M>
where
    M: hyper::service::Service<Request<Full<Bytes>>, Response = Response<Body>, Error = Infallible>,
{
    async fn answer<B>(&self, req: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes>,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let path = req.uri().path();
        if path == "/.well-known/oauth-protected-resource"
            || self.metadata_paths.iter().any(|p| p == path)
        {
            return self.metadata();
        }
        if path != ENDPOINT {
            return text(
                StatusCode::NOT_FOUND,
                &format!("no such endpoint: use {ENDPOINT}"),
            );
        }
        let grant = match self.authenticate(req.headers()).await {
            Ok(grant) => grant,
            Err(refusal) => return refusal,
        };
        let (mut parts, body) = req.into_parts();
        // The token stops here: neither rmcp nor the handler (which sees these headers) has
        // any use for it.
        parts.headers.remove(header::AUTHORIZATION);
        parts.headers.remove(AGENT_HEADER);
        if let Some(agent) = &grant.agent {
            let Ok(v) = header::HeaderValue::from_str(agent) else {
                // Never the server's own agent in its place.
                return text(
                    StatusCode::FORBIDDEN,
                    &format!("the token's agent {agent:?} cannot be passed on in a header"),
                );
            };
            parts.headers.insert(AGENT_HEADER, v);
        }
        let body = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => {
                return text(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "the request body is too large",
                );
            }
        };
        if let Some(call) = Call::of(&body) {
            match self.refusal(&grant, &call).await {
                None => {}
                Some(Refusal::Scope { scope, message }) => {
                    return self.insufficient_scope(scope, call.id.as_ref(), &message);
                }
                Some(Refusal::Role(message)) => {
                    parts.extensions.insert(Refused(message));
                }
            }
        }
        match self
            .mcp
            .call(Request::from_parts(parts, Full::new(body)))
            .await
        {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// The grant of the request's token, or the answer that refuses it.
    async fn authenticate(&self, headers: &http::HeaderMap) -> Result<Grant, Response<Body>> {
        if self.tokens.is_empty() && self.oauth.is_none() {
            return Ok(Grant {
                agent: None,
                scopes: None,
            });
        }
        let sent = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                // The scheme is case-insensitive (RFC 9110 section 11.1).
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|t| !t.is_empty());
        let Some(sent) = sent else {
            // Without a token, the challenge alone (RFC 6750 section 3.1).
            return Err(self.challenge(None));
        };
        let hash = blake3::hash(sent.as_bytes());
        // Every token compared, so the time says nothing of which one matched.
        let mut found = None;
        for (taken, as_agent) in &self.tokens {
            if *taken == hash {
                found = Some(as_agent.clone());
            }
        }
        if let Some(agent) = found {
            return Ok(Grant {
                agent,
                scopes: None,
            });
        }
        let Some(oauth) = &self.oauth else {
            return Err(self.challenge(Some("the token is not one this server takes")));
        };
        let claims = oauth
            .verify(sent)
            .await
            .map_err(|why| self.challenge(Some(&why)))?;
        if !self.is_registered(&claims.agent).await {
            let agent = &claims.agent;
            return Err(text(
                StatusCode::FORBIDDEN,
                &format!(
                    "the token acts as {agent:?}, which is not a merkle agent: register it with \
                     `merkle agent add {agent} --role reader` (or writer, or synthesis)"
                ),
            ));
        }
        Ok(Grant {
            agent: Some(claims.agent),
            scopes: Some(claims.scopes),
        })
    }

    /// Whether `agent` is registered, reading the roles again when it is not yet known.
    async fn is_registered(&self, agent: &str) -> bool {
        if self.role_of(agent).is_none() {
            self.reload_roles().await;
        }
        self.role_of(agent).is_some()
    }

    /// Reads every agent's role from the store again, on tokio's blocking pool; a failure
    /// leaves the roles as they were.
    async fn reload_roles(&self) {
        let reload = Arc::clone(&self.reload_roles);
        match tokio::task::spawn_blocking(move || reload()).await {
            Ok(Ok(roles)) => *self.roles.write().unwrap_or_else(|e| e.into_inner()) = roles,
            Ok(Err(e)) => eprintln!("merkle mcp: reading the agents again failed: {}", e.chain()),
            Err(e) => eprintln!("merkle mcp: reading the agents again failed: {e}"),
        }
    }

    fn role_of(&self, agent: &str) -> Option<merkle_store::Role> {
        self.roles
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(agent)
            .copied()
    }

    /// Why `call` is refused for the token's scopes or its agent's role, recorded in the audit
    /// log; `None` for a call allowed. Before a write is refused for the role, the roles are
    /// read again, in case the agent was registered, or given another role, since; so the
    /// gate refuses what `tools/list` (which reads them each time) does not offer.
    async fn refusal(&self, grant: &Grant, call: &Call) -> Option<Refusal> {
        let agent = grant.agent.clone().or_else(|| self.default_agent.clone());
        let name = &call.name;
        let shown = agent.as_deref().unwrap_or("(none)");
        if let (Some(scope), Some(scopes)) = (call.scope, &grant.scopes)
            && !scopes.iter().any(|s| s == scope)
        {
            let role = agent.as_deref().and_then(|a| self.role_of(a));
            self.audit_refusal(
                shown,
                role,
                call,
                format!("mcp-http: the token lacks the scope {scope}"),
            );
            return Some(Refusal::Scope {
                scope,
                message: format!(
                    "{name} needs the scope {scope}, which this token (acting as {shown:?}) lacks"
                ),
            });
        }
        let needed = call.role?;
        let allows = |role: Option<merkle_store::Role>| role.is_some_and(|r| r >= needed);
        let mut role = agent.as_deref().and_then(|a| self.role_of(a));
        if let Some(a) = agent.as_deref()
            && !allows(role)
        {
            self.reload_roles().await;
            role = self.role_of(a);
        }
        if allows(role) {
            return None;
        }
        let message = match (&agent, role) {
            (None, _) => no_agent(name),
            (Some(a), None) => format!(
                "{name} refused: the request acts as {a:?}, which is not a merkle agent: \
                 register it with `merkle agent add {a} --role {needed}`"
            ),
            (Some(a), Some(r)) => format!(
                "{name} refused: the request acts as {a:?}, whose role {r} does not allow it \
                 ({name} needs the {needed} role)"
            ),
        };
        self.audit_refusal(
            shown,
            role,
            call,
            "mcp-http: the token's agent may not write".to_owned(),
        );
        Some(Refusal::Role(message))
    }

    /// 403 `insufficient_scope` naming `scope`, and in its body the JSON-RPC error (for the
    /// request `id`) that says why, which clients show (plain text for a notification).
    fn insufficient_scope(
        &self,
        scope: &str,
        id: Option<&serde_json::Value>,
        message: &str,
    ) -> Response<Body> {
        let mut response = match id {
            Some(id) => jsonrpc_error(StatusCode::FORBIDDEN, id, message),
            None => text(StatusCode::FORBIDDEN, message),
        };
        let value = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{}\"",
            self.metadata_url
        );
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }

    /// Records a refused call as blocked; a log that cannot be written does not change the
    /// answer.
    fn audit_refusal(
        &self,
        agent: &str,
        role: Option<merkle_store::Role>,
        call: &Call,
        rule: String,
    ) {
        if let Ok(log) = governance::AuditLog::open(&self.audit, Box::new(governance::SystemClock))
        {
            let _ = log.append(&governance::Entry {
                conversation: "mcp-http".to_owned(),
                agent: agent.to_owned(),
                role: role.unwrap_or(merkle_store::Role::Reader),
                intent: None,
                tool: call.name.clone(),
                args_hash: governance::args_hash(&call.arguments),
                decision: governance::DecisionKind::Deny,
                rule,
                outcome: governance::Outcome::Blocked,
            });
        }
    }

    /// The Protected Resource Metadata (RFC 9728) of the endpoint.
    fn metadata(&self) -> Response<Body> {
        let mut body = json!({
            "resource": self.resource,
            "bearer_methods_supported": ["header"],
            "authorization_servers": [],
            "resource_name": "merkle",
        });
        if let Some(oauth) = &self.oauth {
            body["authorization_servers"] = json!([oauth.issuer()]);
            body["scopes_supported"] = json!([SCOPE_READ, SCOPE_WRITE, SCOPE_SYNTHESIZE]);
        }
        let mut response = Response::new(full(body.to_string()));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        response
    }

    /// 401 with the challenge that names the metadata: with no token, the challenge alone
    /// (and, with OAuth, the scope to ask for first); with a bad one, `invalid_token` and why.
    fn challenge(&self, invalid: Option<&str>) -> Response<Body> {
        let metadata = &self.metadata_url;
        let (value, message) = match invalid {
            None => {
                let mut value = format!("Bearer resource_metadata=\"{metadata}\"");
                if self.oauth.is_some() {
                    value.push_str(&format!(", scope=\"{SCOPE_READ}\""));
                }
                (
                    value,
                    "this server needs a bearer token (Authorization: Bearer ...)".to_owned(),
                )
            }
            Some(why) => (
                format!(
                    "Bearer error=\"invalid_token\", error_description=\"{}\", \
                     resource_metadata=\"{metadata}\"",
                    quotable(why)
                ),
                format!("the bearer token is refused: {why}"),
            ),
        };
        let mut response = text(StatusCode::UNAUTHORIZED, &message);
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }
}

/// `text` with only the characters RFC 6750 allows in `error_description` (printable ASCII
/// but `"` and `\`).
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}

fn full(body: String) -> Body {
    Full::new(Bytes::from(body)).boxed()
}

/// A JSON-RPC error answering the request `id`, at `status`.
fn jsonrpc_error(status: StatusCode, id: &serde_json::Value, message: &str) -> Response<Body> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": rmcp::model::ErrorCode::INVALID_REQUEST.0, "message": message},
    });
    let mut response = Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn text(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(full(format!("{message}\n")));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What reaches the MCP service is all the integration tests cannot see: the token must
    /// not, and the agent header must be the gate's, not the client's.
    #[tokio::test]
    async fn the_token_is_not_passed_on_and_the_agent_header_is_the_gates() {
        let seen = Arc::new(std::sync::Mutex::new(None));
        let recorder = {
            let seen = Arc::clone(&seen);
            hyper::service::service_fn(move |req: Request<Full<Bytes>>| {
                *seen.lock().expect("not poisoned") = Some(req.headers().clone());
                async { Ok::<_, Infallible>(Response::new(full(String::new()))) }
            })
        };
        let gate = Gate {
            tokens: vec![(blake3::hash(b"the-secret"), Some("bob".to_owned()))],
            oauth: None,
            metadata_url: "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp".to_owned(),
            metadata_paths: vec![METADATA_PATH.to_owned()],
            resource: "http://127.0.0.1:1/mcp".to_owned(),
            roles: RwLock::new(Roles::new()),
            reload_roles: Arc::new(|| Ok(Roles::new())),
            default_agent: None,
            audit: std::path::PathBuf::from("unused-audit.jsonl"),
            mcp: recorder,
        };
        let request = Request::post(ENDPOINT)
            .header(header::AUTHORIZATION, "Bearer the-secret")
            .header(AGENT_HEADER, "mallory")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            )))
            .expect("a request");
        let answer = gate.answer(request).await;
        assert_eq!(answer.status(), StatusCode::OK);
        let headers = seen
            .lock()
            .expect("not poisoned")
            .take()
            .expect("the request reached the service");
        assert_eq!(headers.get(header::AUTHORIZATION), None);
        assert_eq!(
            headers.get(AGENT_HEADER).and_then(|v| v.to_str().ok()),
            Some("bob")
        );
        assert_eq!(
            headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
    }
}
