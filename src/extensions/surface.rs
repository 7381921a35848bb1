//! The script API, defined once. Every member of `api`, `api.mcp`, `ctx` and `ctx.ui` is a
//! [`Member`] here: its name, its parameters and their types, and a one-line summary; the
//! functions' validation, error texts and effects live here too ([`call`](mod@call)). The Lua
//! and Rhai engines only convert their values into [`Arg`]s as a member's [`Ty`]s ask
//! (keeping script functions as callbacks), call [`call`](fn@call), and convert the [`Ret`]
//! back. So both languages accept the same arguments and fail with the same messages; the
//! reference (`stdlib/README.md`) and the LuaLS stubs are checked against [`MEMBERS`].
//!
//! Each function member's row names the function that does what it does (its [`Act`]): a
//! call checks its arguments against the row's parameters and runs the row's act; there is
//! no dispatch by name. The acts live by area: registrations and `ctx` in `surface/call.rs`,
//! the dialogs and the screen in `surface/ui.rs`, `api.mcp` in `surface/mcp.rs`, what
//! reaches the app in `surface/host.rs`, children in `surface/agents.rs`, skills in
//! `surface/skills.rs`; the argument values and their check are in `surface/args.rs`.

mod agents;
mod args;
mod call;
mod host;
mod mcp;
mod members;
mod providers;
mod skills;
mod ui;

use serde_json::{json, Value as Json};

use super::script::ExtensionInfo;
use crate::vocab::run::RunContext;

use args::checked;
pub use args::{Arg, Args, Ret};
pub use call::call;
pub use members::MEMBERS;

/// Where a member lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    Api,
    Ctx,
    /// `ctx.ui`.
    Ui,
    /// `api.mcp`.
    Mcp,
    /// `ctx.session`.
    Session,
    /// `api.events`.
    Events,
    /// What `api.builtin_tool(name)` returns.
    Builtin,
}

impl Object {
    pub fn prefix(self) -> &'static str {
        match self {
            Object::Api => "api",
            Object::Ctx => "ctx",
            Object::Ui => "ctx.ui",
            Object::Mcp => "api.mcp",
            Object::Session => "ctx.session",
            Object::Events => "api.events",
            Object::Builtin => "api.builtin_tool(name)",
        }
    }
}

/// The type a parameter (or a field of a table parameter) takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ty {
    /// A string (numbers are taken as their text).
    Str,
    /// A script function, kept as a callback.
    Func,
    Int,
    Bool,
    /// Plain data (a table / map, converted to JSON).
    Table,
    /// A list of strings (numbers are taken as their text).
    StrList,
    /// Anything; shown as text.
    Any,
    /// A table with these fields.
    Record(&'static [Field]),
}

/// A parameter, or a field of a [`Ty::Record`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
}

const fn req(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        required: true,
    }
}

const fn opt(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        required: false,
    }
}

/// One call of a function member as its [`Act`] sees it: the extension's link, the checked
/// arguments, and the run the call was made in (none for `api.*` outside a handler).
pub struct Call<'a> {
    pub link: &'a crate::extensions::api::ApiLink,
    pub args: Args<'static>,
    pub ctx: Option<&'a std::sync::Arc<RunContext>>,
}

impl Call<'_> {
    /// Refuses what asks the user or the app (a dialog, leaving, reloading) while extensions
    /// are only checked (the members that run a process, a model or an MCP call are refused
    /// by the link once their arguments are read).
    fn acting(&self) -> Result<(), String> {
        match self.link.host().checking {
            true => Err(crate::extensions::services::CHECKING.to_string()),
            false => Ok(()),
        }
    }
}

/// What a function member does; the error is the message to raise (the caller puts the
/// member's name before it).
pub type Act = fn(&mut Call<'_>) -> Result<Ret, String>;

/// What a member is.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// A function: its parameters, and what it does.
    Function(&'static [Field], Act),
    /// A data field the engine holds (`api.state`, `ctx.cwd`, ...).
    Data,
}

/// One member of the script API.
#[derive(Debug, Clone, Copy)]
pub struct Member {
    pub object: Object,
    pub name: &'static str,
    pub shape: Shape,
    pub summary: &'static str,
}

impl Member {
    /// `api.on`, `ctx.ui.confirm`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.object.prefix(), self.name)
    }

    pub fn params(&self) -> &'static [Field] {
        match self.shape {
            Shape::Function(params, _) => params,
            Shape::Data => &[],
        }
    }
}

const fn function(
    object: Object,
    name: &'static str,
    act: Act,
    params: &'static [Field],
    summary: &'static str,
) -> Member {
    Member {
        object,
        name,
        shape: Shape::Function(params, act),
        summary,
    }
}

const fn data(object: Object, name: &'static str, summary: &'static str) -> Member {
    Member {
        object,
        name,
        shape: Shape::Data,
        summary,
    }
}

/// The member `name` of `object`.
pub fn member(object: Object, name: &str) -> Option<&'static Member> {
    MEMBERS
        .iter()
        .find(|m| m.object == object && m.name == name)
}

/// `api.version`: mypi's version, for scripts that depend on a feature of a later one.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `api.extension`: who the script is.
pub fn extension_value(info: &ExtensionInfo) -> Json {
    json!({
        "name": info.name,
        "path": info.path.display().to_string(),
        "language": info.language.name(),
    })
}

/// The data fields of `ctx` for a run.
pub fn ctx_fields(ctx: &RunContext) -> [(&'static str, Json); 6] {
    [
        ("cwd", json!(ctx.cwd.display().to_string())),
        ("mode", json!(ctx.mode.name())),
        ("session_id", json!(ctx.session_id)),
        ("model", json!(ctx.model)),
        ("thinking", json!(ctx.thinking.name())),
        ("depth", json!(ctx.depth)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> &'static Member {
        member(Object::Api, "on").unwrap()
    }

    #[test]
    fn arguments_are_checked_with_one_wording() {
        let e = checked(on(), vec![Arg::Str("input".into())]).err().unwrap();
        assert_eq!(e, "api.on: the handler (a function) is missing");
        let e = checked(on(), vec![Arg::Str("input".into()), Arg::Int(3)])
            .err()
            .unwrap();
        assert_eq!(e, "api.on: the handler must be a function, not a number");
        let e = checked(on(), vec![Arg::Nil, Arg::Nil, Arg::Nil])
            .err()
            .unwrap();
        assert_eq!(e, "api.on takes 2 arguments (event, handler), got 3");
        let tool = member(Object::Api, "tool").unwrap();
        let e = checked(
            tool,
            vec![Arg::Record(vec![("name".into(), Arg::Str("t".into()))])],
        )
        .err()
        .unwrap();
        assert_eq!(e, "api.tool: 'execute' (a function) is required");
        let e = checked(
            tool,
            vec![Arg::Record(vec![("nmae".into(), Arg::Str("t".into()))])],
        )
        .err()
        .unwrap();
        assert!(
            e.contains("unknown field 'nmae'; the fields are name, "),
            "{e}"
        );
    }

    #[test]
    fn every_function_member_is_dispatched() {
        // Called with no arguments, each function member either runs (it needs none) or
        // names its first missing argument; none falls through to "is not a function".
        let dir = crate::platform::testutil::TempDir::new("surface");
        let info = ExtensionInfo {
            name: "t".into(),
            path: dir.0.join("t.lua"),
            language: crate::extensions::script::Language::Lua,
            root: dir.0.clone(),
            embedded: None,
        };
        let registrar = crate::extensions::registrar::Recording::new(dir.0.clone());
        let owner = crate::vocab::owner::Owner::new("t", 1);
        let link =
            crate::extensions::api::ApiLink::new(info, owner, registrar.link_host(), json!({}));
        let ctx = crate::platform::testutil::run_ctx(&dir.0);
        for m in MEMBERS
            .iter()
            .filter(|m| matches!(m.shape, Shape::Function(..)))
        {
            let out = call(&link, m, Vec::new(), Some(&ctx));
            match m.params().iter().find(|p| p.required) {
                Some(p) => {
                    let e = out.expect_err(&m.full_name());
                    assert!(e.contains(&format!("the {} (", p.name)), "{e}");
                }
                // Without MCP servers, api.mcp.servers() says so.
                None if m.object == Object::Mcp => {
                    let e = out.expect_err(&m.full_name());
                    assert!(e.contains("no MCP servers are configured"), "{e}");
                }
                None => assert!(out.is_ok(), "{}: {out:?}", m.full_name()),
            }
        }
        assert!(ctx.cancel.is_cancelled(), "ctx.abort() cancelled the run");
    }
}
