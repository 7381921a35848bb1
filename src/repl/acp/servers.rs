//! The editor's MCP servers (`mcpServers` of `session/new` and `session/load`) as mypi's
//! server entries: stdio and streamable HTTP servers start with the session's own (from
//! `~/.agents/mcp.json`, the trusted project's `.mcp.json`, `--mcp-config`), winning by name;
//! SSE servers are not taken (the initialize answer says so), and that is said.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::McpServer;

use crate::mcp::config::{ServerConfig, Transport, DEFAULT_TIMEOUT};

/// The entries of `servers` mypi can start, and a line for each it cannot.
pub fn from_editor(servers: &[McpServer]) -> (Vec<ServerConfig>, Vec<String>) {
    let mut taken = Vec::new();
    let mut refused = Vec::new();
    for server in servers {
        let (name, transport) = match server {
            McpServer::Stdio(s) => (
                s.name.clone(),
                Transport::Stdio {
                    command: s.command.display().to_string(),
                    args: s.args.clone(),
                    env: s
                        .env
                        .iter()
                        .map(|e| (e.name.clone(), e.value.clone()))
                        .collect(),
                    cwd: None,
                },
            ),
            McpServer::Http(h) => (
                h.name.clone(),
                Transport::Http {
                    url: h.url.clone(),
                    headers: h
                        .headers
                        .iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect(),
                    sse: false,
                },
            ),
            McpServer::Sse(s) => {
                refused.push(format!(
                    "the editor's MCP server {:?} speaks SSE, which mypi does not: it is not started",
                    s.name
                ));
                continue;
            }
            _ => {
                refused.push("an MCP server of a kind mypi does not know is not started".into());
                continue;
            }
        };
        taken.push(ServerConfig {
            name,
            transport,
            enabled: true,
            timeout: DEFAULT_TIMEOUT,
            protocol: None,
            exposure: Default::default(),
            source: PathBuf::from("the editor's session request"),
            oauth: Default::default(),
        });
    }
    (taken, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_and_http_servers_are_taken_and_sse_is_said_not_to_be() {
        let servers: Vec<McpServer> = serde_json::from_value(serde_json::json!([
            {"name": "files", "command": "/bin/srv", "args": ["-v"], "env": [{"name": "K", "value": "v"}]},
            {"type": "http", "name": "web", "url": "https://x.test/mcp", "headers": [{"name": "H", "value": "1"}]},
            {"type": "sse", "name": "old", "url": "https://x.test/sse", "headers": []}
        ]))
        .unwrap();
        let (taken, refused) = from_editor(&servers);
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0].name, "files");
        assert_eq!(
            taken[0].transport,
            Transport::Stdio {
                command: "/bin/srv".into(),
                args: vec!["-v".into()],
                env: [("K".to_string(), "v".to_string())].into(),
                cwd: None
            }
        );
        assert_eq!(
            taken[1].transport,
            Transport::Http {
                url: "https://x.test/mcp".into(),
                headers: [("H".to_string(), "1".to_string())].into(),
                sse: false
            }
        );
        assert_eq!(refused.len(), 1);
        assert!(refused[0].contains("\"old\" speaks SSE"), "{refused:?}");
    }
}
