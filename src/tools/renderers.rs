//! Renderers: how the REPL shows one tool's call line and result lines, registered by
//! scripts with `api.renderer(tool, {call = fn, result = fn})`. The [`RendererRegistry`] holds
//! them by tool name (the newest registration wins, and removing it brings back the one it
//! replaced, as with tools); every registration has an owner and a handle.
//!
//! # Where a renderer runs
//!
//! The REPL's printer asks, and the agent waits for it. The agent hands a call's line and its
//! result to its sink with [`EventSink::deliver`](crate::vocab::run::EventSink::deliver),
//! which it awaits; the REPL's sink awaits [`RendererRegistry::call_line`] or
//! [`RendererRegistry::result_lines`] there and prints the text instead of its own lines. So
//! the agent's events carry no display text, the call line always comes before its result
//! line, and there is no queue or reordering in the printer; the wait for the script happens
//! in the agent's task, as for a hook (a renderer's `ctx.ui.confirm` works, and nothing
//! blocks a runtime thread).
//!
//! Only runs of the REPL ask (`ctx.mode == repl`): print and JSON mode and editors show no
//! script's tool lines and never call a renderer. With no renderer registered, asking costs
//! one atomic load; with renderers, a tool that has none costs a lookup in a short list.
//!
//! # Limits and failures
//!
//! A renderer returns a string (the line, or several lines) or nil (the default line). Its
//! text is cut to [`clean::MAX_RENDERED_BYTES`] and stripped of control sequences other than
//! colours ([`clean::clean`]). An error result is always shown the default way (a renderer
//! cannot hide a failure). A renderer that raises, runs past its extension's budget or returns
//! something else than a string or nil gets the default lines, and the user one notice per
//! renderer per run (the run of one prompt), naming the extension and the script's file and
//! line. A renderer's extension busy with another call (a tool of its own running in parallel)
//! delays the line until it is free, as it would delay a hook.

pub mod clean;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak};

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::vocab::owner::{next_id, Handle, Owner, Unregister};
use crate::vocab::run::{RunContext, RunMode};

/// What a renderer gives back: the text to print, `None` for the default, or why it failed
/// (the script's `path:line: message`).
pub type RenderFuture = BoxFuture<'static, Result<Option<String>, String>>;

/// One tool's renderer. Each method returns `None` when the renderer does not render that
/// line (the script gave no such function), so nothing is called.
pub trait Renderer: Send + Sync {
    /// The call line for the arguments the tool runs with.
    fn call(&self, args: &Value, ctx: &Arc<RunContext>) -> Option<RenderFuture>;

    /// The result lines for the result text (as the model reads it) and the tool's
    /// `details`.
    fn result(
        &self,
        content: &str,
        details: Option<&Value>,
        ctx: &Arc<RunContext>,
    ) -> Option<RenderFuture>;
}

/// What asking for a line gave: the text to print instead of the default (`None`: the
/// default), and a notice to show first when the renderer failed.
#[derive(Debug, Default, PartialEq)]
pub struct Rendered {
    pub text: Option<String>,
    pub notice: Option<String>,
}

/// A registered renderer.
struct Entry {
    id: u64,
    owner: Owner,
    tool: String,
    renderer: Arc<dyn Renderer>,
    /// The run (its context's id) this renderer's failure was last reported in.
    noticed_in: AtomicU64,
}

/// What registering a renderer did: its handle, and a notice when it replaces another.
pub struct Registered {
    pub handle: Handle,
    pub notice: Option<String>,
}

/// All renderers, by tool name.
#[derive(Default)]
pub struct RendererRegistry {
    entries: RwLock<Vec<Arc<Entry>>>,
    /// How many entries there are (read without the lock, on every tool call).
    count: AtomicUsize,
    /// Itself, for the handles it gives out.
    weak_self: Weak<RendererRegistry>,
}

impl RendererRegistry {
    pub fn new() -> Arc<Self> {
        Arc::new_cyclic(|weak| RendererRegistry {
            weak_self: weak.clone(),
            ..Default::default()
        })
    }

    /// Registers `renderer` for `tool` under `owner`.
    pub fn register(&self, owner: Owner, tool: &str, renderer: Arc<dyn Renderer>) -> Registered {
        self.register_with_id(next_id(), owner, tool, renderer)
    }

    /// Registers with an id allocated beforehand (see `HookBus::on_with_id`).
    pub fn register_with_id(
        &self,
        id: u64,
        owner: Owner,
        tool: &str,
        renderer: Arc<dyn Renderer>,
    ) -> Registered {
        let mut entries = self.write();
        let notice = entries.iter().rev().find(|e| e.tool == tool).map(|prev| {
            format!(
                "the renderer of tool '{tool}' from {owner} replaces the one from {}",
                prev.owner
            )
        });
        entries.push(Arc::new(Entry {
            id,
            owner,
            tool: tool.to_string(),
            renderer,
            noticed_in: AtomicU64::new(0),
        }));
        self.count.store(entries.len(), Ordering::Release);
        drop(entries);
        let target: Weak<dyn Unregister> = self.weak_self.clone();
        Registered {
            handle: Handle::new(id, target),
            notice,
        }
    }

    /// Whether any renderer is registered.
    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// The tools `owner` renders, sorted, each once.
    pub fn tools_of(&self, owner: &Owner) -> Vec<String> {
        let mut tools: Vec<String> = self
            .read()
            .iter()
            .filter(|e| &e.owner == owner)
            .map(|e| e.tool.clone())
            .collect();
        tools.sort();
        tools.dedup();
        tools
    }

    /// Removes everything `owner` registered; returns how many went.
    pub fn remove_owner(&self, owner: &Owner) -> usize {
        self.retain(|e| &e.owner != owner)
    }

    /// The renderer in effect for `tool` in the run `ctx`: none outside the REPL.
    fn get(&self, tool: &str, ctx: &RunContext) -> Option<Arc<Entry>> {
        if ctx.mode != RunMode::Repl || self.is_empty() {
            return None;
        }
        self.read().iter().rev().find(|e| e.tool == tool).cloned()
    }

    /// The call line of tool `tool` run with `args`, when a renderer gives one.
    pub async fn call_line(&self, tool: &str, args: &Value, ctx: &Arc<RunContext>) -> Rendered {
        let Some(entry) = self.get(tool, ctx) else {
            return Rendered::default();
        };
        match entry.renderer.call(args, ctx) {
            Some(asked) => settle(&entry, "call", asked.await, ctx),
            None => Rendered::default(),
        }
    }

    /// The result lines of tool `tool`, when a renderer gives them (never for an error).
    pub async fn result_lines(
        &self,
        tool: &str,
        content: &str,
        details: Option<&Value>,
        is_error: bool,
        ctx: &Arc<RunContext>,
    ) -> Rendered {
        if is_error {
            return Rendered::default();
        }
        let Some(entry) = self.get(tool, ctx) else {
            return Rendered::default();
        };
        match entry.renderer.result(content, details, ctx) {
            Some(asked) => settle(&entry, "result", asked.await, ctx),
            None => Rendered::default(),
        }
    }

    fn retain(&self, keep: impl Fn(&Entry) -> bool) -> usize {
        let mut entries = self.write();
        let before = entries.len();
        entries.retain(|e| keep(e));
        self.count.store(entries.len(), Ordering::Release);
        before - entries.len()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Entry>>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Arc<Entry>>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner())
    }
}

impl Unregister for RendererRegistry {
    fn unregister(&self, id: u64) -> bool {
        self.retain(|e| e.id != id) > 0
    }
}

/// A renderer's answer as what to print: its text made safe, or the default with a notice
/// the first time it fails in this run.
fn settle(
    entry: &Entry,
    which: &str,
    answer: Result<Option<String>, String>,
    ctx: &RunContext,
) -> Rendered {
    match answer {
        Ok(text) => Rendered {
            text: text.map(|t| clean::clean(&t)),
            notice: None,
        },
        Err(why) => {
            let first = entry.noticed_in.swap(ctx.id, Ordering::Relaxed) != ctx.id;
            Rendered {
                text: None,
                notice: first.then(|| {
                    format!(
                        "the renderer of tool '{}' from {} failed in its {which} function, so \
                         the default lines are shown (said once per run): {why}",
                        entry.tool, entry.owner
                    )
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Renders calls as `<< args >>` and results as their length; `fail` makes it raise.
    struct Fixed {
        fail: bool,
    }

    impl Renderer for Fixed {
        fn call(&self, args: &Value, _ctx: &Arc<RunContext>) -> Option<RenderFuture> {
            let (fail, text) = (self.fail, format!("<< {args} >>"));
            Some(Box::pin(async move {
                if fail {
                    Err("x.lua:3: boom".to_string())
                } else {
                    Ok(Some(text))
                }
            }))
        }

        fn result(
            &self,
            content: &str,
            _details: Option<&Value>,
            _ctx: &Arc<RunContext>,
        ) -> Option<RenderFuture> {
            let n = content.len();
            Some(Box::pin(
                async move { Ok(Some(format!("{n} bytes\x1b[2J"))) },
            ))
        }
    }

    fn repl_ctx() -> Arc<RunContext> {
        let mut ctx = RunContext::detached(std::env::temp_dir());
        ctx.mode = RunMode::Repl;
        Arc::new(ctx)
    }

    #[tokio::test]
    async fn the_newest_renderer_of_a_tool_renders_in_the_repl_only() {
        let reg = RendererRegistry::new();
        let ctx = repl_ctx();
        assert_eq!(
            reg.call_line("t", &json!(1), &ctx).await,
            Rendered::default()
        );
        let a = reg.register(Owner::new("a", 1), "t", Arc::new(Fixed { fail: false }));
        assert!(a.notice.is_none());
        assert_eq!(reg.tools_of(&Owner::new("a", 1)), ["t"]);
        let b = reg.register(Owner::new("b", 2), "t", Arc::new(Fixed { fail: true }));
        assert!(b.notice.unwrap().contains("from b replaces the one from a"));
        let out = reg.call_line("t", &json!(1), &ctx).await;
        assert_eq!(out.text, None);
        let notice = out.notice.unwrap();
        assert!(notice.contains("'t' from b") && notice.contains("x.lua:3: boom"));
        // Once per run.
        assert_eq!(
            reg.call_line("t", &json!(1), &ctx).await,
            Rendered::default()
        );
        assert!(reg
            .call_line("t", &json!(1), &repl_ctx())
            .await
            .notice
            .is_some());
        assert!(b.handle.remove());
        let out = reg.call_line("t", &json!(1), &ctx).await;
        assert_eq!(out.text.as_deref(), Some("<< 1 >>"));
        let out = reg.result_lines("t", "abc", None, false, &ctx).await;
        assert_eq!(out.text.as_deref(), Some("3 bytes^[[2J"), "cleaned");
        let out = reg.result_lines("t", "abc", None, true, &ctx).await;
        assert_eq!(out, Rendered::default(), "errors keep the default");
        let print = Arc::new(RunContext::detached(std::env::temp_dir()));
        assert_eq!(
            reg.call_line("t", &json!(1), &print).await,
            Rendered::default()
        );
        assert_eq!(reg.remove_owner(&Owner::new("a", 1)), 1);
        assert!(reg.is_empty());
        assert!(!a.handle.remove());
    }
}
