//! How a connection to an MCP server starts: the stdio server spawned in its own process
//! group (or the Streamable HTTP transport set up on mypi's HTTP client), the handshake in the
//! lifecycle mode the entry asks for, and a failed start told as a [`StartError`].

use std::path::Path;
use std::sync::Arc;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use tokio_util::sync::CancellationToken;

use super::anyhttp::AnyHttp;
use super::config::{ServerConfig, Transport};
pub(super) use super::failure::readable;
pub use super::failure::StartError;
use super::handler::Handler;
use super::noticing::{unerased, Noticing};
use super::reports::Hooks;
use super::stdio::{self, StderrTail};

/// The child process of a stdio server (a task owns the `Child` and waits for its exit).
pub struct Process {
    pub group: crate::platform::process::Group,
    pub pgid: i32,
    /// Cancelled when the child has exited.
    pub exited: CancellationToken,
}

/// The running client side of a connection.
pub(super) type Service = RunningService<RoleClient, Handler>;

/// Which handshake to use: `protocol` in the entry (`"2026-07-28"` or `"discover"`: the
/// stateless generation; `"auto"`: try it, fall back to `initialize`); otherwise
/// `initialize` with [`LEGACY_VERSION`](super::handler::LEGACY_VERSION).
fn lifecycle(config: &ServerConfig) -> ClientLifecycleMode {
    let modern = vec![ProtocolVersion::V_2026_07_28];
    let legacy = ProtocolVersion::V_2025_11_25;
    match config.protocol.as_deref() {
        Some("2026-07-28" | "discover") => ClientLifecycleMode::Discover {
            preferred_versions: modern,
        },
        Some("auto") => ClientLifecycleMode::Auto {
            preferred_versions: modern,
            legacy_version: Some(legacy),
        },
        _ => ClientLifecycleMode::Initialize,
    }
}

/// Starts the server's process or dials its URL, and makes the handshake within the entry's
/// timeout: the running service, the child process (stdio) and its stderr tail.
pub(super) async fn handshake(
    config: &ServerConfig,
    cwd: &Path,
    hooks: &Hooks,
    handler: Handler,
) -> Result<(Service, Option<Process>, StderrTail), StartError> {
    // Values from commands (`"!op read …"`) are run now, not when the file was read.
    let resolved = super::commands::resolve(config, cwd).await.map_err(bad)?;
    let config = resolved.as_ref();
    let mode = lifecycle(config);
    match &config.transport {
        Transport::Stdio { .. } => {
            let (mut transport, process, stderr) = spawn(config, cwd, hooks)?;
            transport.read_tasks(handler.tasks.clone());
            let served = serve(transport, config, handler, mode).await;
            let service = finish_start(served, config, &stderr)?;
            // A refused version drops `process`: its group is killed.
            supported_version(&service, &stderr)?;
            Ok((service, Some(process), stderr))
        }
        Transport::Http {
            url,
            headers,
            sse: true,
        } => {
            let log = log_to(hooks, config);
            let tasks = handler.tasks.clone();
            let dialed = super::legacy_sse::connect(url, headers, http_client(headers)?, log);
            let mut transport = tokio::time::timeout(config.timeout, dialed)
                .await
                .map_err(|_| timed_out(config, &StderrTail::default()))??;
            transport.read_tasks(tasks);
            let served = serve(transport, config, handler, mode).await;
            let service = finish_start(served, config, &StderrTail::default())?;
            supported_version(&service, &StderrTail::default())?;
            Ok((service, None, StderrTail::default()))
        }
        Transport::Http { url, headers, .. } => {
            let service = http_handshake(config, url, headers, hooks, handler, mode).await?;
            let stderr = StderrTail::default();
            supported_version(&service, &stderr)?;
            Ok((service, None, stderr))
        }
    }
}

/// The handshake with an HTTP server: through the OAuth client when the server may need a
/// login (see [`oauth_context`]), else straight.
async fn http_handshake(
    config: &ServerConfig,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    hooks: &Hooks,
    handler: Handler,
    mode: ClientLifecycleMode,
) -> Result<Service, StartError> {
    let settings = http_config(url, headers)?;
    let http = super::listing::ListingHttp {
        http: http_client(headers)?,
        tasks: handler.tasks.clone(),
    };
    let Some(ctx) = oauth_context(config, headers, hooks) else {
        let transport = StreamableHttpClientTransport::with_client(AnyHttp::new(http), settings);
        return serve_http(transport, config, handler, mode, false).await;
    };
    let client = super::auth::client::for_server(&config.name, url, &config.oauth, ctx, http)
        .await
        .map_err(|e| StartError {
            message: format!("cannot use the stored login: {e}"),
            stderr: String::new(),
            transient: false,
        })?;
    let transport = StreamableHttpClientTransport::with_client(AnyHttp::new(client), settings);
    serve_http(transport, config, handler, mode, true).await
}

/// OAuth's context for `config`, when mypi signs in to it: an HTTP server with no
/// `Authorization` header of its own and no `"oauth": false`, in a session that keeps
/// tokens.
fn oauth_context<'a>(
    config: &ServerConfig,
    headers: &std::collections::BTreeMap<String, String>,
    hooks: &'a Hooks,
) -> Option<&'a super::auth::AuthContext> {
    let own = headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"));
    let legacy = matches!(config.transport, Transport::Http { sse: true, .. });
    (!own && !legacy && !config.oauth.disabled)
        .then_some(hooks.auth.as_deref())
        .flatten()
}

/// Whether mypi signs in to the server of `config` (OAuth).
pub(super) fn uses_oauth(config: &ServerConfig, hooks: &Hooks) -> bool {
    match &config.transport {
        Transport::Http { headers, .. } => oauth_context(config, headers, hooks).is_some(),
        Transport::Stdio { .. } => false,
    }
}

/// "Needs login" for a server mypi signs in to whose request failed on a 401 (`text` is the
/// failure as said), e.g. while listing its tools right after a handshake it let through.
pub(super) fn login_instead(config: &ServerConfig, hooks: &Hooks, text: &str) -> Option<String> {
    let Transport::Http { headers, .. } = &config.transport else {
        return None;
    };
    oauth_context(config, headers, hooks)?;
    text.contains("Auth required")
        .then(|| super::auth::needs_login(&config.name))
}

/// Runs the handshake over an HTTP transport; a 401 with `oauth` is a server that needs a
/// login.
async fn serve_http(
    transport: StreamableHttpClientTransport<AnyHttp>,
    config: &ServerConfig,
    handler: Handler,
    mode: ClientLifecycleMode,
    oauth: bool,
) -> Result<Service, StartError> {
    let served = serve(transport, config, handler, mode).await;
    if oauth {
        if let Ok(Err(e)) = &served {
            if auth_required(e) {
                return Err(StartError {
                    message: super::auth::needs_login(&config.name),
                    stderr: String::new(),
                    transient: false,
                });
            }
        }
    }
    finish_start(served, config, &StderrTail::default())
}

/// The handshake over `transport` within the entry's timeout, the server's progress and
/// list changes read off it as they arrive ([`Noticing`]).
async fn serve<T>(
    transport: T,
    config: &ServerConfig,
    handler: Handler,
    mode: ClientLifecycleMode,
) -> Result<Result<Service, rmcp::service::ClientInitializeError>, tokio::time::error::Elapsed>
where
    T: rmcp::transport::Transport<RoleClient> + Send + 'static,
{
    let transport = Noticing::new(transport, handler.changes.clone(), handler.progress.clone());
    tokio::time::timeout(
        config.timeout,
        handler.serve_with_lifecycle(transport, mode),
    )
    .await
}

/// Whether the handshake failed on a 401 (or a 403 asking for more scopes).
fn auth_required(e: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = e else {
        return false;
    };
    matches!(
        unerased(error).downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(
            StreamableHttpError::AuthRequired(_)
                | StreamableHttpError::InsufficientScope(_)
                | StreamableHttpError::Auth(
                    rmcp::transport::auth::AuthError::AuthorizationRequired
                )
        )
    )
}

/// Keeps the connection only when mypi speaks the protocol version the server chose (the
/// spec has a client disconnect otherwise): any version the SDK knows, 2024-11-05 to
/// 2026-07-28.
fn supported_version(service: &Service, stderr: &StderrTail) -> Result<(), StartError> {
    let Some(info) = service.peer_info() else {
        return Ok(());
    };
    let version = &info.protocol_version;
    if ProtocolVersion::KNOWN_VERSIONS.contains(version) {
        return Ok(());
    }
    service.cancellation_token().cancel();
    let known: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(ProtocolVersion::as_str)
        .collect();
    Err(StartError {
        message: format!(
            "the server answered with MCP protocol version {}, which mypi does not support \
             (it supports {}); disconnected",
            version.as_str(),
            known.join(", ")
        ),
        stderr: stderr.tail(5),
        transient: false,
    })
}

/// Starts a stdio server in its own process group, its stderr lines going to the MCP log;
/// a task waits for its exit.
fn spawn(
    config: &ServerConfig,
    cwd: &Path,
    hooks: &Hooks,
) -> Result<(stdio::StdioTransport, Process, StderrTail), StartError> {
    let spawned =
        stdio::spawn(&config.transport, cwd, log_to(hooks, config)).map_err(|e| StartError {
            message: format!("cannot start {}: {e}", command_of(config)),
            stderr: String::new(),
            transient: false,
        })?;
    let exited = CancellationToken::new();
    let mut child = spawned.child;
    let done = exited.clone();
    tokio::spawn(async move {
        let _ = child.wait().await;
        done.cancel();
    });
    let process = Process {
        group: spawned.group,
        pgid: spawned.pgid,
        exited,
    };
    Ok((spawned.transport, process, spawned.stderr))
}

/// Where a transport says what it skipped: the MCP log, under the server's name.
fn log_to(hooks: &Hooks, config: &ServerConfig) -> stdio::LineLog {
    let (hooks, name) = (hooks.clone(), config.name.clone());
    Arc::new(move |line: &str| super::reports::append_log(&hooks, &name, line))
}

fn command_of(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, .. } => format!("'{command}'"),
        Transport::Http { url, .. } => url.clone(),
    }
}

/// The outcome of the handshake, as a connection or a start error.
fn finish_start(
    served: Result<
        Result<Service, rmcp::service::ClientInitializeError>,
        tokio::time::error::Elapsed,
    >,
    config: &ServerConfig,
    stderr: &StderrTail,
) -> Result<Service, StartError> {
    match served {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => {
            let text = match &e {
                rmcp::service::ClientInitializeError::TransportError { error, context } => {
                    format!("{} ({context})", readable(unerased(error)))
                }
                other => other.to_string(),
            };
            let transient = text.contains("500")
                || text.contains("502")
                || text.contains("503")
                || text.contains("504")
                || text.to_lowercase().contains("connect");
            Err(StartError {
                message: format!("the handshake failed: {text}"),
                stderr: stderr.tail(5),
                transient,
            })
        }
        Err(_) => Err(timed_out(config, stderr)),
    }
}

/// A handshake not done within the entry's timeout.
fn timed_out(config: &ServerConfig, stderr: &StderrTail) -> StartError {
    StartError {
        message: format!(
            "no answer to the handshake within {} s (the entry's timeout)",
            config.timeout.as_secs()
        ),
        stderr: stderr.tail(5),
        transient: false,
    }
}

/// The transport's settings: the url, the entry's headers, mypi's size limits.
fn http_config(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, StartError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| bad(format!("header {k:?}: {e}")))?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|e| bad(format!("header {k:?}: {e}")))?;
        if name == reqwest::header::AUTHORIZATION {
            config.auth_header = Some(v.trim_start_matches("Bearer ").to_string());
        } else {
            config.custom_headers.insert(name, value);
        }
    }
    config.max_json_response_size = stdio::MAX_LINE;
    config.max_sse_event_size = stdio::MAX_LINE;
    Ok(config)
}

/// mypi's shared HTTP client; pinned to the url's origin when the entry has headers of its
/// own (an API key), which go to the configured origin only.
fn http_client(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<reqwest::Client, StartError> {
    let client = match headers.is_empty() {
        true => crate::platform::http::streaming_client(),
        false => crate::platform::http::pinned_streaming_client(),
    };
    client.map_err(bad)
}

fn bad(message: String) -> StartError {
    StartError {
        message,
        stderr: String::new(),
        transient: false,
    }
}
