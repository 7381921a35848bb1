//! The client program the MCP conformance suite (`@modelcontextprotocol/conformance`) drives:
//! `conformance client --command "target/debug/examples/mcp_conformance"` runs it once per
//! scenario with the server's URL as the last argument, the scenario in
//! `MCP_CONFORMANCE_SCENARIO`, its data in `MCP_CONFORMANCE_CONTEXT` and (0.2 line) the protocol
//! generation in `MCP_CONFORMANCE_PROTOCOL_VERSION`. Everything goes through mypi's own MCP
//! module (`mypi::mcp::Manager`), exactly as the agent uses it: one Streamable HTTP entry, the
//! stateless generation selected by the entry's `protocol` field, elicitation answered
//! "accept" with no fields (the handler fills in the schema's defaults).
//!
//! OAuth (`auth/*`): the connection's first 401 marks the server as needing a login, which
//! runs as `mypi mcp login` does, its "browser" a GET of the authorization page whose redirect
//! is the answer (the suite's authorization server approves at once), tokens kept in a
//! temporary folder; then the server is connected again, and its tools called (a 403
//! `insufficient_scope` steps up through the same browser). The pre-registered client of
//! `auth/pre-registration` comes from the scenario's context, as the entry's `oauth` would
//! give it.

use std::sync::Arc;
use std::time::Duration;

use mypi::mcp::auth::{login, AuthContext, Browser, HeadlessBrowser, LoginOptions};
use mypi::mcp::config::oauth::OAuthSettings;
use mypi::mcp::config::{ServerConfig, Transport};
use mypi::mcp::{Elicited, Hooks, Manager, Registry};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

const SERVER: &str = "conformance";
/// The client ID metadata document the suite's authorization server expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let code = runtime.block_on(run());
    std::process::exit(code);
}

async fn run() -> i32 {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: mcp_conformance URL (scenario in MCP_CONFORMANCE_SCENARIO)");
        return 2;
    };
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(json!({}));
    let protocol = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok();
    let protocol = protocol.filter(|p| p.as_str() >= "2026-07-28");
    let tokens = std::env::temp_dir().join(format!("mypi-conformance-{}", std::process::id()));
    let manager = if scenario.starts_with("auth/") {
        connect_with_login(&url, protocol, &context, &tokens).await
    } else {
        // As the agent connects: through the OAuth client, which a server that needs no
        // login never notices.
        let ctx = Arc::new(AuthContext::new(tokens.clone()));
        connect(&url, protocol, Some((ctx, OAuthSettings::default()))).await
    };
    let result = match &manager {
        Ok(m) => drive(m, &scenario, &context).await,
        Err(e) => Err(e.clone()),
    };
    if let Ok(m) = &manager {
        m.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&tokens);
    match result {
        Ok(()) => {
            eprintln!("{scenario}: done");
            0
        }
        Err(e) => {
            eprintln!("{scenario}: {e}");
            1
        }
    }
}

/// A manager with the one server, connected (or the reason it is not).
async fn connect(
    url: &str,
    protocol: Option<String>,
    auth: Option<(Arc<AuthContext>, OAuthSettings)>,
) -> Result<Arc<Manager>, String> {
    let (auth, oauth) = match auth {
        Some((ctx, settings)) => (Some(ctx), settings),
        None => (None, OAuthSettings::default()),
    };
    let config = ServerConfig {
        name: SERVER.into(),
        transport: Transport::Http {
            url: url.into(),
            headers: Default::default(),
            sse: false,
        },
        enabled: true,
        timeout: Duration::from_secs(20),
        protocol,
        exposure: Default::default(),
        source: "conformance".into(),
        oauth,
    };
    let mut hooks = Hooks::quiet();
    hooks.auth = auth;
    hooks.elicit = Arc::new(|_, request| {
        eprintln!("elicitation: {}", request.message);
        Box::pin(async { Elicited::Accept(json!({})) })
    });
    let registry = Registry::new(
        mypi::tools::ToolRegistry::new(),
        mypi::commands::CommandTable::with_builtins(),
        Arc::new(|n| eprintln!("notice: {n}")),
    );
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let m = Manager::new(vec![config], cwd, hooks, registry);
    m.start();
    m.wait_connecting(Duration::from_secs(25)).await;
    m.conn(SERVER).await.map_err(|e| e.to_string())?;
    Ok(m)
}

/// An auth scenario: connect (a 401 marks the server as needing a login), log in with the
/// headless browser, connect again.
async fn connect_with_login(
    url: &str,
    protocol: Option<String>,
    context: &Value,
    tokens: &std::path::Path,
) -> Result<Arc<Manager>, String> {
    let browser: Arc<dyn Browser> = Arc::new(HeadlessBrowser::default());
    let ctx = Arc::new(AuthContext {
        dir: tokens.to_path_buf(),
        step_up: Some(browser.clone()),
    });
    let text = |k: &str| context[k].as_str().map(str::to_string);
    let settings = OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        client_metadata_url: Some(CLIENT_METADATA_URL.into()),
        ..Default::default()
    };
    // A second login when the first one's token is refused (the server moved to another
    // authorization server, whose client and token are new).
    for _ in 0..2 {
        let m = connect(url, protocol.clone(), Some((ctx.clone(), settings.clone()))).await;
        match &m {
            Err(e) if e.contains("needs login") => eprintln!("connection: {e}"),
            _ => return m,
        }
        let store = ctx.store(SERVER);
        login(url, &settings, &store, &LoginOptions::new(browser.clone()))
            .await
            .map_err(|e| format!("login: {e}"))?;
        eprintln!("logged in; connecting again");
    }
    connect(url, protocol, Some((ctx, settings))).await
}

/// Runs one scenario on a connected manager.
async fn drive(m: &Manager, scenario: &str, context: &Value) -> Result<(), String> {
    let tools = tool_names(m).await?;
    eprintln!("tools: {tools:?}");
    match scenario {
        "initialize" | "request-metadata" | "json-schema-ref-no-deref" => Ok(()),
        "tools_call" => call(m, "add_numbers", json!({"a": 5, "b": 10})).await,
        "elicitation-sep1034-client-defaults" => {
            call(m, "test_client_elicitation_defaults", json!({})).await
        }
        "sse-retry" => call(m, "test_reconnection", json!({})).await,
        "json-schema-2020-12-preservation" => {
            let schema = input_schema(m, "json_schema_2020_12_tool").await?;
            call(m, "json_schema_echo", json!({ "schema": schema })).await
        }
        "sep-2322-client-request-state" => {
            for tool in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                call(m, tool, json!({})).await?;
            }
            Ok(())
        }
        "http-standard-headers" => standard_headers(m, &tools).await,
        "http-custom-headers" => {
            let calls = context["toolCalls"].as_array().cloned().unwrap_or_default();
            for c in calls {
                let name = c["name"].as_str().unwrap_or_default();
                call(m, name, c["arguments"].clone()).await?;
            }
            Ok(())
        }
        "http-invalid-tool-headers" => {
            // The SDK drops tools whose x-mcp-header annotations are invalid; call what is left.
            for tool in &tools {
                call(m, tool, json!({"region": "us-west1"})).await?;
            }
            Ok(())
        }
        auth if auth.starts_with("auth/") => {
            for tool in &tools {
                call(m, tool, json!({})).await?;
            }
            Ok(())
        }
        other => Err(format!("unknown scenario '{other}'")),
    }
}

/// Every kind of request the header scenario looks at: tool calls, resource reads, a prompt.
async fn standard_headers(m: &Manager, tools: &[String]) -> Result<(), String> {
    for tool in tools {
        call(m, tool, json!({})).await?;
    }
    let conn = m.conn(SERVER).await.map_err(|e| e.to_string())?;
    let lists = conn.lists();
    for r in &lists.resources {
        let uri = r["uri"].as_str().unwrap_or_default();
        m.read_resource(SERVER, uri)
            .await
            .map_err(|e| e.to_string())?;
    }
    for p in &lists.prompts {
        let name = p["name"].as_str().unwrap_or_default();
        m.get_prompt(SERVER, name, Default::default())
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

async fn tool_names(m: &Manager) -> Result<Vec<String>, String> {
    let conn = m.conn(SERVER).await.map_err(|e| e.to_string())?;
    Ok(conn
        .lists()
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect())
}

async fn input_schema(m: &Manager, tool: &str) -> Result<Value, String> {
    let conn = m.conn(SERVER).await.map_err(|e| e.to_string())?;
    conn.lists()
        .tools
        .iter()
        .find(|t| t["name"] == tool)
        .map(|t| t["inputSchema"].clone())
        .ok_or_else(|| format!("the server lists no tool '{tool}'"))
}

async fn call(m: &Manager, tool: &str, args: Value) -> Result<(), String> {
    let result = m
        .call_tool(SERVER, tool, args, &CancellationToken::new())
        .await
        .map_err(|e| format!("{tool}: {e}"))?;
    eprintln!("{tool} -> {result}");
    Ok(())
}
