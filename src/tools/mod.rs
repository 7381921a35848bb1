//! Tools the model can call: the [`Tool`] trait, the [`ToolRegistry`] (owned registrations
//! with handles, later registrations override earlier ones of the same name) and argument
//! validation against each tool's JSON Schema. One built-in tool per file; where `read`,
//! `write` and `edit` get and put text (the disk, or a front end's [`files::TextFiles`]) is
//! in `files`; the file handling they share is in `fsguard` (what a path names, refusing what is not a regular file),
//! `replace` (atomic replacement), `snapshot` (did the file change since it was read) and `page`
//! (cutting what `read` shows, with bounded memory). How a tool reaches the model (direct,
//! deferred, hidden) is in `exposure`, the `tool_search` tool for deferred ones in `search`.

pub mod bash;
pub mod edit;
pub mod exposure;
pub mod files;
mod fsguard;
mod page;
pub mod read;
pub mod renderers;
mod replace;
pub mod search;
mod snapshot;
pub mod write;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock, Weak};

use serde_json::Value;

use crate::vocab::owner::{next_id, Handle, Owner, Unregister};
use crate::vocab::protocol::{ToolOutput, ToolSpec};
use crate::vocab::run::RunContext;
use crate::vocab::text::json_len;
use futures_util::future::BoxFuture;

pub use exposure::{Exposure, SEARCH_TOOL};

/// Most bytes of tool output the model receives; more is cut in the middle with a note.
pub const MAX_OUTPUT_BYTES: usize = 50 * 1024;

/// What a running tool may use: the context of the run that called it (working folder,
/// cancellation, depth, ...).
pub type ToolContext = Arc<RunContext>;

/// A tool. `call` gets arguments already validated against `spec().parameters`.
pub trait Tool: Send + Sync {
    fn spec(&self) -> &ToolSpec;

    /// Whether calls of this tool may run at the same time as other parallel-safe calls.
    fn parallel_safe(&self) -> bool {
        false
    }

    /// Hints about the tool from its author (MCP annotations), shown to hooks as `hints`.
    fn hints(&self) -> Option<&Value> {
        None
    }

    /// Whether arguments are checked against the schema before the call (false for a schema
    /// mypi's validator cannot compile, which is then sent to the model as it is).
    fn prevalidate(&self) -> bool {
        true
    }

    /// Whether the tool can run in the run `ctx` (a script tool cannot while its extension
    /// waits for that run): a child agent is not offered the ones that cannot.
    fn usable(&self, _ctx: &RunContext) -> bool {
        true
    }

    /// How the tool reaches the model (see [`exposure`]).
    fn exposure(&self) -> Exposure {
        Exposure::Direct
    }

    /// Whether the tool is offered only while some tool is deferred or `code`-only (the
    /// `code` tool left to its default: it is the way to those tools).
    fn with_indirect(&self) -> bool {
        false
    }

    /// Where the tool comes from, when that is a named service (an MCP tool's server).
    fn server(&self) -> Option<&str> {
        None
    }

    /// The same tool bound to another registry, for a tool that works on the registry it
    /// is in (`tool_search`): a child's registry gets its own. `None`: shared as it is.
    fn rebind(&self, _registry: Weak<ToolRegistry>) -> Option<Arc<dyn Tool>> {
        None
    }

    /// Runs the tool. Failures are returned as error outputs, never panics.
    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, ToolOutput>;
}

/// Where tools may come from in a moment: MCP servers still connecting, whose tools are not
/// known yet. A call of a name no tool has waits for it before it is answered as unknown.
pub trait LateTools: Send + Sync {
    /// A wait for whatever could still add the tool `name`, or `None` when nothing could.
    /// The wait ends with why the tool is still missing, if it may still come.
    fn wait_for<'a>(&'a self, name: &'a str) -> Option<BoxFuture<'a, Option<String>>>;

    /// A wait for everything that could still add tools (a search looks at all of them), or
    /// `None` when nothing could.
    fn wait_all(&self) -> Option<BoxFuture<'_, ()>> {
        None
    }

    /// Whether anything could still add tools.
    fn pending(&self) -> bool {
        false
    }
}

/// A registered tool with its owner and compiled argument validator.
pub struct ToolEntry {
    pub id: u64,
    pub owner: Owner,
    pub tool: Arc<dyn Tool>,
    validator: OnceLock<Result<jsonschema::Validator, String>>,
    /// The length of the spec as the model reads it ([`ToolEntry::spec_chars`]).
    spec_chars: OnceLock<usize>,
}

impl ToolEntry {
    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    /// Characters of the tool's name, description and parameter schema (as JSON): what the
    /// context estimate counts for it, worked out once.
    pub fn spec_chars(&self) -> usize {
        *self.spec_chars.get_or_init(|| {
            let spec = self.spec();
            spec.name.len() + spec.description.len() + json_len(&spec.parameters)
        })
    }

    /// Checks arguments against the tool's schema; the error lists every problem found.
    pub fn validate(&self, args: &Value) -> Result<(), String> {
        if !self.tool.prevalidate() {
            return Ok(());
        }
        let validator = self
            .validator
            .get_or_init(|| {
                jsonschema::validator_for(&self.tool.spec().parameters)
                    .map_err(|e| format!("the tool's parameter schema is invalid: {e}"))
            })
            .as_ref()?;
        let problems: Vec<String> = validator
            .iter_errors(args)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// What registering a tool did: its handle, and a notice when it overrides another.
pub struct Registered {
    pub handle: Handle,
    pub notice: Option<String>,
}

/// All tools, by name. Several registrations of one name stack up: the newest is offered,
/// and removing it brings back the one it overrode.
#[derive(Default)]
pub struct ToolRegistry {
    entries: RwLock<Vec<Arc<ToolEntry>>>,
    /// `api.set_active_tools(names)`: only these are offered (and callable); `None`: all.
    only: RwLock<Option<Vec<String>>>,
    /// Itself, for the handles it gives out.
    weak_self: Weak<ToolRegistry>,
    /// What may still add tools (see [`LateTools`]).
    late: RwLock<Option<Weak<dyn LateTools>>>,
    /// Bumped by every registration and removal (a search index is rebuilt after it).
    generation: AtomicU64,
    /// A child's registry made from a list of names: every tool in it is direct.
    pinned: AtomicBool,
}

impl ToolRegistry {
    pub fn new() -> Arc<Self> {
        Arc::new_cyclic(|weak| ToolRegistry {
            weak_self: weak.clone(),
            ..Default::default()
        })
    }

    /// Registers a tool for `owner`.
    pub fn register(&self, owner: Owner, tool: Arc<dyn Tool>) -> Registered {
        self.register_with_id(next_id(), owner, tool)
    }

    /// Registers with an id allocated beforehand (see `HookBus::on_with_id`).
    pub fn register_with_id(&self, id: u64, owner: Owner, tool: Arc<dyn Tool>) -> Registered {
        let name = tool.spec().name.clone();
        let mut entries = self.write();
        let notice = entries
            .iter()
            .rev()
            .find(|e| e.spec().name == name)
            .map(|prev| {
                format!(
                    "tool '{name}' from {owner} overrides the one from {}",
                    prev.owner
                )
            });
        entries.push(Arc::new(ToolEntry {
            id,
            owner,
            tool,
            validator: OnceLock::new(),
            spec_chars: OnceLock::new(),
        }));
        drop(entries);
        self.bump();
        let target: Weak<dyn Unregister> = self.weak_self.clone();
        Registered {
            handle: Handle::new(id, target),
            notice,
        }
    }

    /// The tool offered under `name` (the newest registration), unless it was made
    /// inactive.
    pub fn get(&self, name: &str) -> Option<Arc<ToolEntry>> {
        if !self.is_active(name) {
            return None;
        }
        self.read()
            .iter()
            .rev()
            .find(|e| e.spec().name == name)
            .cloned()
    }

    /// [`ToolRegistry::get`], or, when no tool has that name yet but one may come (see
    /// [`LateTools`]), the tool once what could add it is ready. Without a tool: why it is
    /// still missing, when it may still come.
    /// Hidden tools are never found (see [`ToolRegistry::callable`]).
    pub async fn get_or_wait(&self, name: &str) -> Result<Arc<ToolEntry>, Option<String>> {
        if let Some(entry) = self.callable(name) {
            return Ok(entry);
        }
        let late = self
            .late
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(Weak::upgrade);
        let Some(wait) = late.as_ref().and_then(|l| l.wait_for(name)) else {
            return Err(None);
        };
        let why = wait.await;
        self.callable(name).ok_or(why)
    }

    fn late(&self) -> Option<Arc<dyn LateTools>> {
        self.late
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(Weak::upgrade)
    }

    /// Whether tools may still come (see [`LateTools::pending`]).
    pub fn late_pending(&self) -> bool {
        self.late().is_some_and(|l| l.pending())
    }

    /// Waits for whatever could still add tools (see [`LateTools::wait_all`]).
    pub async fn settle_late(&self) {
        let late = self.late();
        let wait = late.as_ref().and_then(|l| l.wait_all());
        if let Some(wait) = wait {
            wait.await;
        }
    }

    /// The tool a model most likely meant by a name no tool has: the same name with the
    /// characters tool names cannot have as `_` (`mcp__everything__get-sum` for
    /// `mcp__everything__get_sum`), or the one MCP tool whose own name it is (`get-sum`).
    pub fn by_alias(&self, name: &str) -> Option<Arc<ToolEntry>> {
        let wanted = crate::vocab::text::identifier(name);
        let mut active = self.active();
        active.retain(|e| !matches!(self.exposure_of(e), Exposure::Hidden | Exposure::Code));
        if let Some(e) = active.iter().find(|e| e.spec().name == wanted) {
            return Some(e.clone());
        }
        let mut own = active.iter().filter(|e| {
            let n = &e.spec().name;
            n.strip_prefix("mcp__")
                .and_then(|rest| rest.split_once("__"))
                .is_some_and(|(_, tool)| tool == wanted)
        });
        match (own.next(), own.next()) {
            (Some(e), None) => Some(e.clone()),
            _ => None,
        }
    }

    /// Counts registrations and removals: unchanged, the same tools are registered.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    fn pinned(&self) -> bool {
        self.pinned.load(Ordering::Relaxed)
    }

    /// Sets what may still add tools (see [`LateTools`]).
    pub fn set_late(&self, late: Weak<dyn LateTools>) {
        *self.late.write().unwrap_or_else(|p| p.into_inner()) = Some(late);
    }

    /// The built-in tool `name` (the core's own registration, even when overridden).
    pub fn builtin(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.read()
            .iter()
            .find(|e| e.spec().name == name && e.owner.name.as_ref() == "core")
            .cloned()
    }

    pub fn is_active(&self, name: &str) -> bool {
        match &*self.only.read().unwrap_or_else(|p| p.into_inner()) {
            Some(names) => names.iter().any(|n| n == name),
            None => true,
        }
    }

    /// Every tool, one per name (the newest registration), sorted by name, with whether it
    /// is offered.
    pub fn all(&self) -> Vec<(Arc<ToolEntry>, bool)> {
        let entries = self.read();
        let mut seen: HashMap<&str, Arc<ToolEntry>> = HashMap::new();
        for e in entries.iter() {
            seen.insert(e.spec().name.as_str(), e.clone());
        }
        let mut out: Vec<_> = seen.into_values().collect();
        drop(entries);
        out.sort_by(|a, b| a.spec().name.cmp(&b.spec().name));
        out.into_iter()
            .map(|e| {
                let active = self.is_active(&e.spec().name);
                (e, active)
            })
            .collect()
    }

    /// The tools offered to the model, one per name, sorted by name.
    pub fn active(&self) -> Vec<Arc<ToolEntry>> {
        self.all()
            .into_iter()
            .filter_map(|(e, active)| active.then_some(e))
            .collect()
    }

    /// Offers only the tools `names` (`None`: all of them again). A name no tool has is an
    /// error listing the ones there are; nothing changes then.
    pub fn set_only(&self, names: Option<Vec<String>>) -> Result<(), String> {
        if let Some(names) = &names {
            let there: Vec<String> = self
                .all()
                .into_iter()
                .map(|(e, _)| e.spec().name.clone())
                .collect();
            if let Some(unknown) = names.iter().find(|n| !there.contains(n)) {
                return Err(format!(
                    "there is no tool '{unknown}'; the tools are: {}",
                    there.join(", ")
                ));
            }
        }
        *self.only.write().unwrap_or_else(|p| p.into_inner()) = names;
        Ok(())
    }

    /// A registry of the tools offered now that can run in `ctx`: all of them (with their
    /// exposures), or those named in `names`, all direct then (an unknown, hidden or unusable
    /// name is an error listing the ones there are). The tools are shared, not copied, except
    /// the ones that work on their registry ([`Tool::rebind`]).
    pub fn subset(&self, names: Option<&[String]>, ctx: &RunContext) -> Result<Arc<Self>, String> {
        let mut active = self.active();
        if names.is_some() {
            active.retain(|e| self.exposure_of(e) != Exposure::Hidden);
        }
        let (usable, busy): (Vec<Arc<ToolEntry>>, Vec<Arc<ToolEntry>>) =
            active.into_iter().partition(|e| e.tool.usable(ctx));
        let chosen = match names {
            None => usable,
            Some(names) => {
                let mut chosen = Vec::with_capacity(names.len());
                for name in names {
                    match usable.iter().find(|e| &e.spec().name == name) {
                        Some(e) => chosen.push(e.clone()),
                        None if busy.iter().any(|e| &e.spec().name == name) => {
                            return Err(format!(
                                "the {name} tool does not nest: its extension is busy with the \
                                 call that starts this child agent, so the child cannot call it; \
                                 leave '{name}' out of the child's tools"
                            ));
                        }
                        None => {
                            let there: Vec<&str> =
                                usable.iter().map(|e| e.spec().name.as_str()).collect();
                            return Err(format!(
                                "unknown tool '{name}' for a child agent; the tools are: {}",
                                there.join(", ")
                            ));
                        }
                    }
                }
                chosen
            }
        };
        let registry = ToolRegistry::new();
        registry.pinned.store(names.is_some(), Ordering::Relaxed);
        let weak = Arc::downgrade(&registry);
        *registry.write() = chosen
            .into_iter()
            .map(|e| match e.tool.rebind(weak.clone()) {
                Some(tool) => Arc::new(ToolEntry {
                    id: e.id,
                    owner: e.owner.clone(),
                    tool,
                    validator: OnceLock::new(),
                    spec_chars: OnceLock::new(),
                }),
                None => e,
            })
            .collect();
        Ok(registry)
    }

    /// Removes everything `owner` registered; returns how many registrations went.
    pub fn remove_owner(&self, owner: &Owner) -> usize {
        let mut entries = self.write();
        let before = entries.len();
        entries.retain(|e| &e.owner != owner);
        let gone = before - entries.len();
        drop(entries);
        self.bump();
        gone
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<ToolEntry>>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Arc<ToolEntry>>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner())
    }
}

impl Unregister for ToolRegistry {
    fn unregister(&self, id: u64) -> bool {
        let mut entries = self.write();
        let before = entries.len();
        entries.retain(|e| e.id != id);
        let gone = before != entries.len();
        drop(entries);
        self.bump();
        gone
    }
}

/// The names of the built-in tools.
pub const BUILTINS: [&str; 4] = ["read", "write", "edit", "bash"];

/// Registers the four built-in tools for the core, on the disk.
pub fn register_builtins(registry: &ToolRegistry) {
    register_builtins_through(registry, None);
}

/// Registers the four built-in tools for the core; `read`, `write` and `edit` go through
/// `files` (a front end's, see [`files`]) when given.
pub fn register_builtins_through(registry: &ToolRegistry, files: files::Files) {
    let core = Owner::core();
    let tools: [Arc<dyn Tool>; 4] = [
        Arc::new(read::ReadTool::through(files.clone())),
        Arc::new(write::WriteTool::through(files.clone())),
        Arc::new(edit::EditTool::through(files)),
        Arc::new(bash::BashTool::new()),
    ];
    for tool in tools {
        registry.register(core.clone(), tool);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Fixed(ToolSpec, &'static str);

    impl Tool for Fixed {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
            let s = self.1;
            Box::pin(async move { ToolOutput::ok(s) })
        }
    }

    fn fixed(name: &str, out: &'static str) -> Arc<dyn Tool> {
        Arc::new(Fixed(
            ToolSpec {
                name: name.into(),
                description: String::new(),
                parameters: json!({"type":"object","properties":{"n":{"type":"integer"}},
                                   "required":["n"]}),
            },
            out,
        ))
    }

    #[test]
    fn override_and_handle_removal_restore_previous() {
        let reg = ToolRegistry::new();
        let a = reg.register(Owner::core(), fixed("t", "core"));
        assert!(a.notice.is_none());
        let b = reg.register(Owner::new("ext", 1), fixed("t", "ext"));
        assert!(b.notice.as_deref().unwrap().contains("overrides"));
        assert_eq!(reg.get("t").unwrap().owner.name.as_ref(), "ext");
        assert_eq!(reg.active().len(), 1);
        assert!(b.handle.remove());
        assert!(!b.handle.remove());
        assert_eq!(reg.get("t").unwrap().owner.name.as_ref(), "core");
        reg.register(Owner::new("ext", 1), fixed("u", "ext"));
        assert_eq!(reg.remove_owner(&Owner::new("ext", 1)), 1);
        assert!(reg.get("u").is_none());
    }

    #[test]
    fn validation_reports_every_problem() {
        let reg = ToolRegistry::new();
        reg.register(Owner::core(), fixed("t", "x"));
        let e = reg.get("t").unwrap();
        assert!(e.validate(&json!({"n": 3})).is_ok());
        let err = e.validate(&json!({"n": "three"})).unwrap_err();
        assert!(err.contains("/n"), "{err}");
        let err = e.validate(&json!({})).unwrap_err();
        assert!(err.contains("\"n\" is a required property"), "{err}");
    }

    #[test]
    fn spec_chars_counts_name_description_and_schema_as_json() {
        let reg = ToolRegistry::new();
        reg.register(Owner::core(), fixed("tool_name", "x"));
        let e = reg.get("tool_name").unwrap();
        let spec = e.spec();
        let expected = "tool_name".len() + spec.parameters.to_string().len();
        assert_eq!(e.spec_chars(), expected);
        assert_eq!(
            e.spec_chars(),
            expected,
            "the second answer is the kept one"
        );
    }
}
