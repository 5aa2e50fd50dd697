//! `merkle mcp --http`: the same MCP server over Streamable HTTP (rmcp's tower service on
//! hyper's HTTP/1.1 connections), so that one long-lived server can serve many clients.
//!
//! - **Where.** `ADDR` defaults to `127.0.0.1:0` (a free port); the endpoint is `/mcp`, and its
//!   URL goes to stderr (with `--json`, `{"url"}` on stdout), once the socket listens.
//! - **Who.** With `--token-env NAME`, every request to `/mcp` must carry `Authorization:
//!   Bearer <the variable's value>` (compared in constant time); otherwise the answer is 401
//!   with `WWW-Authenticate: Bearer resource_metadata="<url of the metadata>"`, which is
//!   published, unauthenticated, at `/.well-known/oauth-protected-resource/mcp` (RFC 9728).
//!   The token never appears on the command line, and is never passed on. A bind to an address
//!   that is not loopback without a token is refused at start (exit 2), unless
//!   `--insecure-no-auth` says it is meant.
//! - **As whom.** `--token-env NAME=AGENT` (repeatable) makes a token act as that agent (else
//!   the server's `--agent`): the gate tells the handler (`x-merkle-agent`, any such header a
//!   client sends is dropped), and refuses a write its role does not allow (`put_frame` needs a
//!   writer, `synthesize` the synthesis role) with 403 `insufficient_scope`, recorded in the
//!   workspace's audit log as blocked.
//! - **Hosts.** rmcp checks each request's `Host` against the loopback names, the address
//!   bound and each `--allowed-host` (against DNS rebinding): a foreign host gets 403.
//! - **Stopping.** Ctrl-C or SIGTERM stops accepting connections; requests in flight get two
//!   seconds to finish, then the sessions (and their event streams) are closed.
use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::llm::Shutdown;
use crate::usage;

/// The MCP endpoint's path.
pub(crate) const ENDPOINT: &str = "/mcp";

/// Where the protected resource's metadata is published (RFC 9728: the well-known prefix
/// before the resource's path).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The header that tells the handler which agent a request acts as.
pub(crate) const AGENT_HEADER: &str = "x-merkle-agent";

/// A bearer token the server takes, and the agent it acts as (`None`: the server's own).
pub(crate) struct Token {
    pub(crate) secret: String,
    pub(crate) agent: Option<String>,
}

/// What the gate must know of the workspace to refuse a write and record it.
pub(crate) struct Writes {
    /// Each known agent's role, read at start.
    pub(crate) roles: std::collections::HashMap<String, merkle_store::Role>,
    /// The agent a token without one acts as.
    pub(crate) default_agent: Option<String>,
    /// The workspace's audit log.
    pub(crate) audit: std::path::PathBuf,
}

/// How the HTTP server is to run.
pub(crate) struct HttpOptions {
    /// `host:port` to bind.
    pub(crate) addr: String,
    /// The bearer tokens requests may carry; none: no token is asked for.
    pub(crate) tokens: Vec<Token>,
    pub(crate) writes: Writes,
    /// A bind to a non-loopback address without a token is meant.
    pub(crate) insecure_no_auth: bool,
    /// Hosts (or `host:port`) accepted in `Host` besides the loopback names and the address.
    pub(crate) allowed_hosts: Vec<String>,
}

type Body = BoxBody<Bytes, Infallible>;

/// Serves `server` over Streamable HTTP until Ctrl-C or SIGTERM.
pub(crate) fn serve<S>(server: S, opts: &HttpOptions, json: bool) -> Result<ExitCode>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    let Ok(addr) = opts.addr.parse::<SocketAddr>() else {
        usage!(
            "--http {:?} is not an address to listen on: give IP:PORT, e.g. 127.0.0.1:8080 \
             (port 0: a free one)",
            opts.addr
        );
    };
    if !addr.ip().is_loopback() && opts.tokens.is_empty() && !opts.insecure_no_auth {
        usage!(
            "refusing to serve {addr} (not a loopback address) without authentication: give \
             --token-env NAME, or --insecure-no-auth if anyone who can reach it may read and \
             write the store"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run(server, addr, opts, json))
}

async fn run<S>(server: S, addr: SocketAddr, opts: &HttpOptions, json: bool) -> Result<ExitCode>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("listening on {addr}"))?;
    let local = listener.local_addr().context("the address listened on")?;
    let base = format!("http://{local}");
    let url = format!("{base}{ENDPOINT}");

    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .map(str::to_owned)
        .to_vec();
    if !local.ip().is_unspecified() {
        hosts.push(local.ip().to_string());
    }
    hosts.extend(opts.allowed_hosts.iter().cloned());
    let config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    let cancel = config.cancellation_token.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let gate = Arc::new(Gate {
        tokens: opts
            .tokens
            .iter()
            .map(|t| (blake3::hash(t.secret.as_bytes()), t.agent.clone()))
            .collect(),
        metadata_url: format!("{base}{METADATA_PATH}"),
        resource: url.clone(),
        roles: opts.writes.roles.clone(),
        default_agent: opts.writes.default_agent.clone(),
        audit: opts.writes.audit.clone(),
        mcp: TowerToHyperService::new(mcp),
    });

    // Listening for signals before the URL goes out, so a harness that stops us as soon as it
    // has read it still gets a clean stop.
    let shutdown = Shutdown::listen()?;
    eprintln!("merkle mcp: serving MCP over Streamable HTTP at {url}");
    if json {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", json!({"url": url})).and_then(|()| stdout.flush())?;
    }

    let mut connections = JoinSet::new();
    let stop = shutdown.wait();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                // A failed accept (a client that went away, out of descriptors) ends only that
                // connection.
                let Ok((stream, _)) = accepted else { continue };
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
    Ok(ExitCode::SUCCESS)
}

/// The most bytes of a request body the gate reads (rmcp's own cap is larger than any
/// JSON-RPC message merkle takes).
const MAX_BODY: usize = 16 << 20;

/// What stands before the MCP service: the metadata, the token check, the endpoint's path,
/// and the refusal of writes a token's agent may not make.
struct Gate<M> {
    /// The hashes of the tokens taken, with the agent each acts as, compared as hashes so the
    /// comparison takes the same time whatever the token sent. Empty: no token is asked for.
    tokens: Vec<(blake3::Hash, Option<String>)>,
    metadata_url: String,
    resource: String,
    roles: std::collections::HashMap<String, merkle_store::Role>,
    default_agent: Option<String>,
    audit: std::path::PathBuf,
    mcp: M,
}

impl<M> Gate<M>
where
    M: hyper::service::Service<Request<Full<Bytes>>, Response = Response<Body>, Error = Infallible>,
{
    async fn answer(&self, req: Request<Incoming>) -> Response<Body> {
        let path = req.uri().path();
        if path == METADATA_PATH || path == "/.well-known/oauth-protected-resource" {
            return self.metadata();
        }
        if path != ENDPOINT {
            return text(
                StatusCode::NOT_FOUND,
                &format!("no such endpoint: use {ENDPOINT}"),
            );
        }
        let mut agent = None;
        if !self.tokens.is_empty() {
            let sent = req
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            let Some(sent) = sent else {
                // Without a token, the challenge alone; with a wrong one, why (RFC 6750).
                return self.challenge(None);
            };
            let sent = blake3::hash(sent.trim().as_bytes());
            // Every token compared, so the time says nothing of which one matched.
            let mut found = None;
            for (hash, as_agent) in &self.tokens {
                if *hash == sent {
                    found = Some(as_agent.clone());
                }
            }
            let Some(as_agent) = found else {
                return self.challenge(Some("invalid_token"));
            };
            agent = as_agent;
        }
        let (mut parts, body) = req.into_parts();
        parts.headers.remove(AGENT_HEADER);
        if let Some(agent) = &agent
            && let Ok(v) = header::HeaderValue::from_str(agent)
        {
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
        let agent = agent.or_else(|| self.default_agent.clone());
        if let Some(refusal) = self.refuse_write(agent.as_deref(), &body) {
            return refusal;
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

    /// 403 for a tool call that writes as an agent whose role does not allow it, recorded in
    /// the audit log; `None` for anything else.
    fn refuse_write(&self, agent: Option<&str>, body: &Bytes) -> Option<Response<Body>> {
        let message: serde_json::Value = serde_json::from_slice(body).ok()?;
        if message["method"] != "tools/call" {
            return None;
        }
        let tool = message["params"]["name"].as_str()?;
        let needed = match tool {
            "put_frame" => merkle_store::Role::Writer,
            "synthesize" => merkle_store::Role::Synthesis,
            _ => return None,
        };
        let role = agent.and_then(|a| self.roles.get(a)).copied();
        if role.is_some_and(|r| r >= needed) {
            return None;
        }
        let agent = agent.unwrap_or("(none)");
        if let Ok(log) = governance::AuditLog::open(&self.audit, Box::new(governance::SystemClock))
        {
            let _ = log.append(&governance::Entry {
                conversation: "mcp-http".to_owned(),
                agent: agent.to_owned(),
                role: role.unwrap_or(merkle_store::Role::Reader),
                intent: None,
                tool: tool.to_owned(),
                args_hash: governance::args_hash(&message["params"]["arguments"]),
                decision: governance::DecisionKind::Deny,
                rule: "mcp-http: the token's agent may not write".to_owned(),
                outcome: governance::Outcome::Blocked,
            });
        }
        let mut response = text(
            StatusCode::FORBIDDEN,
            &format!(
                "{tool} writes, and this token acts as {agent:?}, whose role does not allow it"
            ),
        );
        let value = format!(
            "Bearer error=\"insufficient_scope\", scope=\"merkle:write\", \
             resource_metadata=\"{}\"",
            self.metadata_url
        );
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        Some(response)
    }

    /// The Protected Resource Metadata (RFC 9728) of the endpoint.
    fn metadata(&self) -> Response<Body> {
        let body = json!({
            "resource": self.resource,
            "bearer_methods_supported": ["header"],
            "authorization_servers": [],
            "resource_name": "merkle",
        });
        let mut response = Response::new(full(body.to_string()));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        response
    }

    /// 401 with the challenge that names the metadata.
    fn challenge(&self, error: Option<&str>) -> Response<Body> {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if let Some(error) = error {
            value.push_str(&format!(", error=\"{error}\""));
        }
        let mut response = text(
            StatusCode::UNAUTHORIZED,
            "this server needs a bearer token (Authorization: Bearer ...)",
        );
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }
}

fn full(body: String) -> Body {
    Full::new(Bytes::from(body)).boxed()
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
