//! `merkle mcp`: the flags of the MCP server (the `mcp` crate), read into its configuration;
//! the runtime it serves on, and the signals that stop it over HTTP; its errors as the CLI's
//! (a configuration it refuses is a usage error, exit 2).
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::llm::Shutdown;
use crate::{Global, usage};

/// `merkle mcp`.
#[derive(Args, Debug)]
pub(crate) struct McpArgs {
    /// The agent that put_frame and synthesize write as (registered with `merkle agent add`);
    /// without one the server only reads. If it is not registered, a warning on stderr says so
    /// and the server only reads until it is (tools/list shows no write tool meanwhile)
    #[arg(long, env = "MERKLE_AGENT")]
    agent: Option<String>,
    /// Serve Streamable HTTP at ADDR (IP:PORT; port 0 takes a free one) on the endpoint
    /// `/mcp`, instead of stdio; the URL goes to stderr (and, in JSON mode, `{url}` to stdout)
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    http: Option<String>,
    /// With --http: require `Authorization: Bearer TOKEN`, TOKEN being the value of this
    /// environment variable (never given on the command line). NAME=AGENT: that token acts as
    /// AGENT (its role decides what it may write; a refused write is 403 and is audited), else
    /// as --agent. Repeatable: one per token
    #[arg(long, value_name = "NAME[=AGENT]", requires = "http")]
    token_env: Vec<String>,
    /// With --http: take OAuth 2.1 access tokens (JWTs) issued by this authorization server
    /// (their `iss`); needs --audience and --jwks-file or --jwks-url. A token acts as the
    /// agent its `sub` names (see --agent-claim), which must be registered; its scopes
    /// (merkle:read, merkle:write, merkle:synthesize) and the agent's role bound what it may do
    #[arg(long, value_name = "URL", requires_all = ["http", "audience"])]
    issuer: Option<String>,
    /// With --issuer: the resource this server is (RFC 8707), which a token's `aud` must
    /// name; clients know the server by it, so give the URL of the endpoint they reach (e.g.
    /// https://merkle.example.com/mcp)
    #[arg(long, value_name = "URI", requires = "issuer")]
    audience: Option<String>,
    /// With --issuer: the issuer's keys, a JWK Set in this file (read again when a token
    /// names a key it lacks, at most once a minute)
    #[arg(
        long,
        value_name = "PATH",
        requires = "issuer",
        conflicts_with = "jwks_url"
    )]
    jwks_file: Option<PathBuf>,
    /// With --issuer: the issuer's keys, a JWK Set fetched from this URL at start (and again
    /// when a token names a key it lacks, at most once a minute)
    #[arg(long, value_name = "URL", requires = "issuer")]
    jwks_url: Option<String>,
    /// With --issuer: the claim that names a token's merkle agent
    #[arg(long, value_name = "NAME", requires = "issuer", default_value = "sub")]
    agent_claim: String,
    /// With --http: serve an address that is not loopback without a token (anyone who
    /// reaches it reads, and as --agent writes, the store)
    #[arg(long, requires = "http")]
    insecure_no_auth: bool,
    /// With --http: a host name (or host:port) clients may use in `Host`, besides the
    /// loopback names and the address served (repeatable)
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    allowed_hosts: Vec<String>,
    /// The global --json, hidden here: the server speaks JSON-RPC whatever it says (an arg of
    /// the same id keeps clap from copying the global one, and its help, into this command).
    #[arg(id = "json", long = "json", hide = true)]
    _json: bool,
}

/// Serves MCP on stdin/stdout until the client closes the connection, or with `--http` over
/// Streamable HTTP until Ctrl-C or SIGTERM.
pub(crate) fn serve(g: &Global, root: &Path, args: &McpArgs) -> Result<ExitCode> {
    let http = match &args.http {
        Some(addr) => Some(http_config(root, addr, args)?),
        None => None,
    };
    let over_http = http.is_some();
    let config = mcp::ServeConfig {
        workspace: crate::workspace(g, root),
        agent: args.agent.clone(),
        quiet: g.quiet,
        http,
    };
    let server = mcp::Server::new(config).map_err(|e| refused(e, args))?;
    // HTTP serves many clients at once; stdio one, on this thread.
    let runtime = if over_http {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    }
    .enable_all()
    .build()
    .context("starting the async runtime")?;
    let json = g.json || args._json;
    runtime.block_on(async {
        if over_http {
            // Listening for signals before the URL goes out, so a harness that stops us as soon
            // as it has read it still gets a clean stop.
            let shutdown = Shutdown::listen()?;
            server
                .serve(shutdown.wait(), |url| {
                    eprintln!("merkle mcp: serving MCP over Streamable HTTP at {url}");
                    if json {
                        let mut stdout = std::io::stdout().lock();
                        writeln!(stdout, "{}", serde_json::json!({"url": url}))
                            .and_then(|()| stdout.flush())?;
                    }
                    Ok(())
                })
                .await
                .map_err(|e| refused(e, args))?;
        } else {
            // On stdio the client's closing ends the session; Ctrl-C keeps its default.
            server
                .serve(std::future::pending(), |_| Ok(()))
                .await
                .map_err(|e| refused(e, args))?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The HTTP flags, checked: the address, the tokens' variables, the issuer's keys.
fn http_config(root: &Path, addr: &str, args: &McpArgs) -> Result<mcp::HttpConfig> {
    let mut tokens = Vec::new();
    for spec in &args.token_env {
        let (name, agent) = match spec.split_once('=') {
            Some((name, agent)) => (name, Some(agent.to_owned())),
            None => (spec.as_str(), None),
        };
        let secret = match std::env::var(name) {
            Ok(token) if !token.trim().is_empty() => token.trim().to_owned(),
            Ok(_) => usage!("--token-env {name}: the variable is empty"),
            Err(_) => usage!("--token-env {name}: no such environment variable"),
        };
        tokens.push(mcp::StaticToken { secret, agent });
    }
    let oauth = match &args.issuer {
        None => None,
        Some(issuer) => {
            let keys = match (&args.jwks_file, &args.jwks_url) {
                (Some(path), None) => mcp::KeySource::File(path.clone()),
                (None, Some(url)) => mcp::KeySource::Url {
                    url: url.clone(),
                    fetch: jwks_fetcher(),
                },
                _ => usage!(
                    "--issuer {issuer}: give the issuer's keys with --jwks-file PATH or \
                     --jwks-url URL"
                ),
            };
            let audience = args
                .audience
                .clone()
                .expect("clap requires --audience with --issuer");
            if issuer.trim().is_empty() || audience.trim().is_empty() {
                usage!("--issuer and --audience must not be empty");
            }
            Some(mcp::OAuthConfig {
                issuer: issuer.clone(),
                audience,
                keys,
                agent_claim: args.agent_claim.clone(),
            })
        }
    };
    let Ok(addr) = addr.parse::<SocketAddr>() else {
        usage!(
            "--http {addr:?} is not an address to listen on: give IP:PORT, e.g. 127.0.0.1:8080 \
             (port 0: a free one)"
        );
    };
    Ok(mcp::HttpConfig {
        addr,
        tokens,
        oauth,
        insecure_no_auth: args.insecure_no_auth,
        allowed_hosts: args.allowed_hosts.clone(),
        audit_log: crate::governance_cmds::audit_path(root),
    })
}

/// The server's error as the CLI's: a configuration it refuses is a usage error naming the
/// flags at fault; a store's error stays one, for `--json`'s `kind`.
fn refused(e: mcp::Error, args: &McpArgs) -> anyhow::Error {
    match e {
        mcp::Error::UnknownTokenAgent { token, .. } => {
            let spec = args.token_env.get(token).map_or("", String::as_str);
            anyhow::Error::new(crate::Usage(format!("--token-env {spec}: {e}")))
        }
        mcp::Error::Unauthenticated { .. } => anyhow::Error::new(crate::Usage(format!(
            "{e}: give --token-env NAME or --issuer URL --audience URI, or --insecure-no-auth if \
             anyone who can reach it may read and write the store"
        ))),
        mcp::Error::Store(e) => e.into(),
        mcp::Error::Context(e) => e.into(),
        e => e.into(),
    }
}

/// The issuer's key set fetched through llm-core, the one crate that speaks HTTP out: the MCP
/// server is given it rather than holding a client of its own.
fn jwks_fetcher() -> mcp::FetchJson {
    mcp::FetchJson(std::sync::Arc::new(|url, timeout, max_bytes| {
        Box::pin(async move {
            llm_core::fetch_json(&url, timeout, max_bytes)
                .await
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
        })
    }))
}
