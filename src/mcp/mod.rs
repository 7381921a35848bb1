//! The MCP client (issue 9, in progress): servers from `.mcp.json` become agent tools and are
//! callable from scripts, through one manager that hides the SDK. So far: the configuration
//! ([`config`]); the connections, the tool registry entries and `api.mcp` come next.

pub mod config;
