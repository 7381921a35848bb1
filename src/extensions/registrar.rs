//! The two small interfaces an extension's [`ApiLink`](super::api::ApiLink) reaches the host
//! through: [`Registrar`], registering into the Rust registries under the extension's owner,
//! and [`Services`], what a script may ask of the agent (queue a message, log and notify, ask
//! the user, the working folder, MCP servers, child agents and model calls) as futures the
//! worker waits on. The host implements both per extension (so a registration can call back
//! into that extension's worker, and a request knows which worker waits); tests use
//! `Recording`.

use crate::config::sources::catalog::Skill;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::script::CallbackId;
use crate::vocab::owner::{Handle, Owner};
use crate::vocab::run::queue::Queues;

/// `api.tool{...}` as the engine read it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// A JSON Schema object.
    pub parameters: Value,
    pub parallel_safe: bool,
    /// The tool's own budget (default: the extension's).
    pub timeout_ms: Option<u64>,
}

/// What `api.mcp.*` says where no MCP server is configured.
pub const NO_MCP: &str =
    "no MCP servers are configured (.mcp.json, ~/.agents/mcp.json, --mcp-config FILE)";

/// What `api.run_agent` and `api.complete` say where there is no agent.
pub const NO_AGENT: &str = "there is no agent here to run a model (mypi ext check)";

/// What an extension registers: hook handlers, tools, commands, renderers and background
/// callbacks, each under the extension's owner, staged while its top level runs.
pub trait Registrar: Send + Sync {
    fn on(&self, owner: &Owner, event: &str, cb: CallbackId) -> Result<Handle, String>;
    fn tool(&self, owner: &Owner, def: ToolDef, cb: CallbackId) -> Result<Handle, String>;
    fn command(
        &self,
        owner: &Owner,
        name: &str,
        description: &str,
        cb: CallbackId,
    ) -> Result<Handle, String>;
    /// `api.renderer(tool, {call, result})`: at least one of the callbacks is set.
    fn renderer(
        &self,
        _owner: &Owner,
        _tool: &str,
        _call: Option<CallbackId>,
        _result: Option<CallbackId>,
    ) -> Result<Handle, String> {
        Err("renderers cannot be registered here".to_string())
    }

    /// `api.skill{name, description, path}`: a skill for the model's list.
    fn skill(&self, _owner: &Owner, _skill: Skill) -> Result<Handle, String> {
        Err("skills cannot be added here".to_string())
    }

    /// Drops a registration made during loading that was not committed yet; false when
    /// there is none with that id.
    fn unstage(&self, _id: u64) -> bool {
        false
    }

    /// `api.events.on`, `api.timer`, `api.watch`: a registration that calls `cb` outside
    /// any run.
    fn background(&self, owner: &Owner, what: Background, cb: CallbackId)
        -> Result<Handle, String>;
}

/// What a script may ask of the agent besides registering.
pub trait Services: Send + Sync {
    /// Queues `text` on `queues` (the calling run's), or the session's when `None`.
    fn send_message(
        &self,
        text: &str,
        deliver_as: &str,
        queues: Option<Arc<Queues>>,
    ) -> Result<(), String>;
    fn log(&self, line: &str);
    fn notify(&self, line: &str);
    /// Asks the user; the caller waits on the runtime for the answer.
    fn confirm(&self, question: &str) -> BoxFuture<'static, bool>;

    /// [`Services::confirm`] knowing who asks (see [`crate::vocab::ui::Ui::confirm_from`]).
    fn confirm_from(
        &self,
        question: &str,
        _asker: &crate::vocab::ui::Asker,
    ) -> BoxFuture<'static, bool> {
        self.confirm(question)
    }

    /// A choice the front end shows itself, or `None` (see
    /// [`crate::vocab::ui::Ui::choose`]).
    fn choose(
        &self,
        _title: &str,
        _options: &[String],
        _asker: &crate::vocab::ui::Asker,
    ) -> Option<BoxFuture<'static, Option<usize>>> {
        None
    }

    /// Asks the user for a line (`None`: nobody can answer).
    fn ask(&self, _question: &str) -> BoxFuture<'static, Option<String>> {
        Box::pin(async { None })
    }

    /// Opens the user's editor on `initial` (`None`: nobody can, or it was cancelled).
    fn edit(&self, _initial: &str) -> BoxFuture<'static, Option<String>> {
        Box::pin(async { None })
    }
    fn cwd(&self) -> PathBuf;

    /// `api.mcp.*` for extension `extension`, in the run `ctx` (the session's when `None`).
    fn mcp(
        &self,
        _extension: &str,
        _request: crate::vocab::mcp::McpRequest,
        _ctx: Option<Arc<crate::vocab::run::RunContext>>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        Box::pin(async { Err(NO_MCP.to_string()) })
    }

    /// `api.run_agent` / `api.run_agents`: children of the run `ctx` (the session's when
    /// `None`), at most `concurrency` at once; outcomes in order.
    fn run_agents(
        &self,
        _specs: Vec<crate::agent::child::ChildSpec>,
        _concurrency: usize,
        _ctx: Option<Arc<crate::vocab::run::RunContext>>,
    ) -> BoxFuture<'static, Result<Vec<crate::vocab::protocol::ChildOutcome>, String>> {
        Box::pin(async { Err(NO_AGENT.to_string()) })
    }

    /// `api.complete`: one model call without tools.
    fn complete(
        &self,
        _request: crate::agent::child::CompleteRequest,
        _ctx: Option<Arc<crate::vocab::run::RunContext>>,
    ) -> BoxFuture<'static, Result<crate::agent::child::Completion, String>> {
        Box::pin(async { Err(NO_AGENT.to_string()) })
    }
}

/// What [`Registrar::background`] registers.
#[derive(Debug, Clone, PartialEq)]
pub enum Background {
    /// `api.events.on(name, fn)`.
    Event(String),
    /// `api.timer(ms, fn, {repeat?})`.
    Timer { ms: u64, repeat: bool },
    /// `api.watch(path, fn)` (the path resolved against the working folder).
    Watch(PathBuf),
}

#[cfg(test)]
pub use recording::Recording;

#[cfg(test)]
mod recording {
    use super::*;
    use crate::vocab::owner::{next_id, Unregister};
    use std::sync::{Mutex, Weak};

    /// A registrar for engine tests: records every call.
    #[derive(Default)]
    pub struct Recording {
        /// `("on", event, cb)`, `("tool", name, cb)`, `("command", name, cb)`,
        /// `("renderer", "tool:call", cb)` and `("renderer", "tool:result", cb)`,
        /// `("send_message", "deliver_as:text", 0)`, `("notify", line, 0)`, `("log", line, 0)`.
        pub calls: Mutex<Vec<(String, String, CallbackId)>>,
        pub tools: Mutex<Vec<ToolDef>>,
        pub removed: Mutex<Vec<u64>>,
        /// What `confirm` answers.
        pub confirm_answer: bool,
        pub cwd: PathBuf,
        weak: Mutex<Option<Weak<Recording>>>,
    }

    impl Recording {
        pub fn new(cwd: PathBuf) -> Arc<Self> {
            let r = Arc::new(Recording {
                cwd,
                ..Default::default()
            });
            *r.weak.lock().unwrap() = Some(Arc::downgrade(&r));
            r
        }

        fn record(&self, kind: &str, what: &str, cb: CallbackId) -> Handle {
            self.calls
                .lock()
                .unwrap()
                .push((kind.into(), what.into(), cb));
            let weak: Weak<dyn Unregister> = match self.weak.lock().unwrap().clone() {
                Some(w) => w,
                None => Weak::<Recording>::new(),
            };
            Handle::new(next_id(), weak)
        }

        /// What a link reaches: this registrar, and a host context of its own with no user
        /// to ask.
        pub fn link_host(self: &Arc<Self>) -> crate::extensions::api::LinkHost {
            let context = crate::extensions::services::HostContext::standalone(
                self.cwd.clone(),
                Arc::new(|_| {}),
            );
            crate::extensions::api::LinkHost::of(self.clone(), Arc::new(context))
        }

        /// The recorded calls of one kind, as `(what, cb)`.
        pub fn of(&self, kind: &str) -> Vec<(String, CallbackId)> {
            self.calls
                .lock()
                .unwrap()
                .iter()
                .filter(|c| c.0 == kind)
                .map(|c| (c.1.clone(), c.2))
                .collect()
        }
    }

    impl Unregister for Recording {
        fn unregister(&self, id: u64) -> bool {
            self.removed.lock().unwrap().push(id);
            true
        }
    }

    impl Registrar for Recording {
        fn on(&self, _o: &Owner, event: &str, cb: CallbackId) -> Result<Handle, String> {
            if crate::hooks::EventKind::parse(event).is_none() {
                return Err(format!("unknown event '{event}'"));
            }
            Ok(self.record("on", event, cb))
        }
        fn tool(&self, _o: &Owner, def: ToolDef, cb: CallbackId) -> Result<Handle, String> {
            let h = self.record("tool", &def.name, cb);
            self.tools.lock().unwrap().push(def);
            Ok(h)
        }
        fn command(
            &self,
            _o: &Owner,
            name: &str,
            _d: &str,
            cb: CallbackId,
        ) -> Result<Handle, String> {
            Ok(self.record("command", name, cb))
        }
        fn renderer(
            &self,
            _o: &Owner,
            tool: &str,
            call: Option<CallbackId>,
            result: Option<CallbackId>,
        ) -> Result<Handle, String> {
            let mut handle = None;
            for (which, cb) in [("call", call), ("result", result)] {
                if let Some(cb) = cb {
                    handle = Some(self.record("renderer", &format!("{tool}:{which}"), cb));
                }
            }
            handle.ok_or_else(|| "a renderer needs a function".to_string())
        }
        fn background(
            &self,
            _o: &Owner,
            what: Background,
            cb: CallbackId,
        ) -> Result<Handle, String> {
            Ok(self.record("background", &format!("{what:?}"), cb))
        }
    }

    impl Services for Recording {
        fn send_message(
            &self,
            text: &str,
            deliver_as: &str,
            _queues: Option<Arc<Queues>>,
        ) -> Result<(), String> {
            crate::vocab::run::queue::Delivery::parse(deliver_as).ok_or_else(|| {
                format!("deliver_as must be \"steer\" or \"follow_up\", not {deliver_as:?}")
            })?;
            self.record("send_message", &format!("{deliver_as}:{text}"), 0);
            Ok(())
        }
        fn log(&self, line: &str) {
            self.record("log", line, 0);
        }
        fn notify(&self, line: &str) {
            self.record("notify", line, 0);
        }
        fn confirm(&self, question: &str) -> BoxFuture<'static, bool> {
            self.record("confirm", question, 0);
            let answer = self.confirm_answer;
            Box::pin(async move { answer })
        }
        fn cwd(&self) -> PathBuf {
            self.cwd.clone()
        }
    }
}
