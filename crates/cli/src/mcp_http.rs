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

/// How the HTTP server is to run.
pub(crate) struct HttpOptions {
    /// `host:port` to bind.
    pub(crate) addr: String,
    /// The bearer token every request must carry, if any.
    pub(crate) token: Option<String>,
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
    if !addr.ip().is_loopback() && opts.token.is_none() && !opts.insecure_no_auth {
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
        token: opts.token.as_deref().map(|t| blake3::hash(t.as_bytes())),
        metadata_url: format!("{base}{METADATA_PATH}"),
        resource: url.clone(),
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

/// What stands before the MCP service: the metadata, the token check, the endpoint's path.
struct Gate<M> {
    /// The hash of the token required, compared as hashes so the comparison takes the same
    /// time whatever the token sent.
    token: Option<blake3::Hash>,
    metadata_url: String,
    resource: String,
    mcp: M,
}

impl<M> Gate<M>
where
    M: hyper::service::Service<Request<Incoming>, Response = Response<Body>, Error = Infallible>,
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
        if let Some(required) = &self.token {
            let sent = req
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            match sent {
                Some(sent) if blake3::hash(sent.trim().as_bytes()) == *required => {}
                // Without a token, the challenge alone; with a wrong one, why (RFC 6750).
                None => return self.challenge(None),
                Some(_) => return self.challenge(Some("invalid_token")),
            }
        }
        match self.mcp.call(req).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
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
