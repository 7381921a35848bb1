//! `mypi acp`: the third front end. An editor (Zed, a JetBrains IDE, Neovim, Emacs) starts
//! mypi as a subprocess and drives it over the Agent Client Protocol, version 1: JSON-RPC
//! 2.0, one message a line, on stdin and stdout (agentclientprotocol.com). The protocol's
//! types and the JSON-RPC connection are Zed's `agent-client-protocol` crate's.
//!
//! Only protocol messages reach stdout: as in print mode, the real stdout is kept for mypi
//! and descriptors 0 and 1 point at `/dev/null` ([`crate::platform::stdio`]); the protocol
//! is read from a private copy of stdin ([`transport`]). Logs and what mypi has to say
//! outside a session go to stderr. When stdin closes, the running prompts are cancelled,
//! the sessions shut down, and mypi exits (its children with it).
//!
//! What mypi asks, it asks the editor where the protocol has a way: a script's yes/no
//! question or choice is a permission request ([`asks`]); a request for text (a script's
//! `ctx.ui.input` / `ctx.ui.editor`, an MCP server's elicitation) has none, so it gets no
//! answer (input its default, editor nil, elicitation declined) and the editor a notice
//! saying so. When the editor offers its files, the built-in file tools use its buffers
//! ([`files`]). `bash` runs as in the REPL, never in an editor's terminal (its output
//! already streams to the editor as the call's content).
//!
//! - [`session`]: the sessions of the connection, one [`crate::app::App`] each;
//! - [`updates`]: mypi's events as `session/update` notifications;
//! - [`asks`]: what scripts ask the user, as `session/request_permission`;
//! - [`files`]: the editor's buffers, which `read`, `write` and `edit` use when it offers
//!   them (`fs/read_text_file`, `fs/write_text_file`);
//! - [`prompt`]: the editor's content blocks as a prompt;
//! - [`servers`]: the editor's MCP servers as mypi's.

mod asks;
mod files;
mod prompt;
mod servers;
mod session;
mod transport;
mod updates;

use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, SessionId,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{on_receive_notification, on_receive_request, Agent, Client, Lines};

use crate::config::{Config, Overrides};
use session::Sessions;

/// Says `text` on stderr, as mypi's.
fn say(text: &str) {
    crate::repl::render::stderr_line(&format!("mypi: {text}"));
}

/// What mypi offers: sessions that load, prompts with images and embedded context
/// (resources), MCP servers over http besides stdio.
fn initialize(request: &InitializeRequest) -> InitializeResponse {
    let version = std::cmp::min(request.protocol_version, ProtocolVersion::V1);
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true));
    InitializeResponse::new(version)
        .agent_capabilities(capabilities)
        .agent_info(Implementation::new("mypi", env!("CARGO_PKG_VERSION")).title("mypi"))
}

/// A `session/new` or `session/load`.
struct Opening {
    cwd: std::path::PathBuf,
    /// The session to load.
    load: Option<String>,
    /// The editor's MCP servers, started with the session's own.
    servers: Vec<McpServer>,
}

impl Opening {
    /// Opens the session in a task of its own (loading extensions and replaying a
    /// conversation take a while; the connection keeps reading meanwhile) and answers with
    /// `response` of its id.
    fn answer<T: agent_client_protocol::JsonRpcResponse + 'static>(
        self,
        sessions: Arc<Sessions>,
        connection: ConnectionTo<Client>,
        responder: Responder<T>,
        response: impl FnOnce(SessionId) -> T + Send + 'static,
    ) -> Result<(), agent_client_protocol::Error> {
        tokio::spawn(async move {
            let opened = sessions
                .open(self.cwd, self.load, &self.servers, connection)
                .await;
            let sent = match opened {
                Ok((id, sink)) => {
                    let sent = responder.respond(response(id));
                    sink.release();
                    sent
                }
                Err(e) => responder.respond_with_error(e),
            };
            if let Err(e) = sent {
                say(&format!("cannot answer a session request: {e}"));
            }
        });
        Ok(())
    }
}

impl From<NewSessionRequest> for Opening {
    fn from(request: NewSessionRequest) -> Opening {
        Opening {
            cwd: request.cwd,
            load: None,
            servers: request.mcp_servers,
        }
    }
}

impl From<LoadSessionRequest> for Opening {
    fn from(request: LoadSessionRequest) -> Opening {
        Opening {
            cwd: request.cwd,
            load: Some(request.session_id.to_string()),
            servers: request.mcp_servers,
        }
    }
}

/// Serves one editor until stdin closes. Returns the exit code.
pub async fn run_acp(config: Config, overrides: Overrides) -> i32 {
    let input = match crate::platform::stdio::take_input() {
        Ok(input) => input,
        Err(e) => {
            say(&format!("cannot read standard input: {e}"));
            return 1;
        }
    };
    if let Err(e) = crate::platform::stdio::isolate() {
        say(&format!("cannot set up standard output: {e}"));
        return 1;
    }
    if overrides.continue_session || overrides.resume.is_some() {
        say("--continue and --resume do not apply to mypi acp: the editor opens sessions (session/load)");
    }
    let sessions = Arc::new(Sessions::new(overrides, config.ext_flags.clone()));
    let (outgoing, written) = transport::outgoing();
    let transport = Lines::new(outgoing, transport::incoming(input));
    let served = Box::pin(serve(sessions.clone(), transport)).await;
    sessions.close_all().await;
    written.wait().await;
    match served {
        Ok(()) => 0,
        Err(e) => {
            say(&format!("the connection failed: {e}"));
            1
        }
    }
}

/// The connection: a handler per method; what takes time runs in a task of its own, so the
/// connection keeps reading (a `session/cancel` reaches a running prompt).
async fn serve(
    sessions: Arc<Sessions>,
    transport: impl agent_client_protocol::ConnectTo<Agent> + 'static,
) -> Result<(), agent_client_protocol::Error> {
    let (init, new, load, prompt, cancel) = (
        sessions.clone(),
        sessions.clone(),
        sessions.clone(),
        sessions.clone(),
        sessions,
    );
    Agent
        .v1()
        .name("mypi")
        .on_receive_request(
            async move |request: InitializeRequest, responder: Responder<InitializeResponse>, _| {
                init.set_client_fs(request.client_capabilities.fs.clone());
                responder.respond(initialize(&request))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest,
                        responder: Responder<NewSessionResponse>,
                        connection: ConnectionTo<Client>| {
                let opening = Opening::from(request);
                opening.answer(new.clone(), connection, responder, NewSessionResponse::new)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest,
                        responder: Responder<LoadSessionResponse>,
                        connection: ConnectionTo<Client>| {
                let loaded = |_| LoadSessionResponse::new();
                Opening::from(request).answer(load.clone(), connection, responder, loaded)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder: Responder<PromptResponse>, _| {
                prompt.prompt(request, responder);
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |note: CancelNotification, _| {
                cancel.cancel(&note.session_id);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}
