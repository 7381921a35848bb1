//! The extension host: loads discovered extensions (each on its own worker thread, all at
//! once), rolls back whatever a failed load registered, lists what each one registered or why
//! it failed, and unloads them. Everything an extension registers is owned by it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use super::api::{ApiLink, EngineFactory, ExtensionInfo, Language, ScriptError};
use super::proxies::{HostContext, HostRegistrar};
use super::worker::{Waited, Worker};
use crate::hooks::{EventKind, HookEvent, Reason};
use crate::owner::Owner;

/// One extension as listed by the banner, `/extensions` and `mypi ext check`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub name: String,
    pub path: String,
    pub language: Language,
    pub tools: Vec<String>,
    pub commands: Vec<String>,
    pub handlers: usize,
    /// Set when the extension failed to load.
    pub error: Option<String>,
}

impl Summary {
    /// `2 tools, 1 command, 3 handlers`.
    pub fn counts(&self) -> String {
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        format!(
            "{}, {}, {}",
            plural(self.tools.len(), "tool"),
            plural(self.commands.len(), "command"),
            plural(self.handlers, "handler")
        )
    }

    /// One line: `todo (lua, path): 1 tool, ...` or the error.
    pub fn line(&self) -> String {
        match &self.error {
            Some(e) => format!("✗ {} ({}): {e}", self.name, self.language.name()),
            None => {
                let mut line = format!(
                    "{} ({}, {}): {}",
                    self.name,
                    self.language.name(),
                    self.path,
                    self.counts()
                );
                if !self.tools.is_empty() {
                    line.push_str(&format!(" — tools {}", self.tools.join(", ")));
                }
                if !self.commands.is_empty() {
                    let c: Vec<String> = self.commands.iter().map(|c| format!("/{c}")).collect();
                    line.push_str(&format!(" — commands {}", c.join(", ")));
                }
                line
            }
        }
    }
}

struct Loaded {
    info: ExtensionInfo,
    owner: Owner,
    worker: Option<Arc<Worker>>,
    error: Option<String>,
}

/// All extensions of this process.
pub struct ExtensionHost {
    ctx: Arc<HostContext>,
    loaded: Mutex<Vec<Loaded>>,
    generation: AtomicU64,
}

fn factory(language: Language) -> EngineFactory {
    match language {
        Language::Lua => super::lua::new_engine,
        Language::Rhai => super::rhai::new_engine,
    }
}

impl ExtensionHost {
    pub fn new(ctx: Arc<HostContext>) -> Self {
        ExtensionHost {
            ctx,
            loaded: Mutex::new(Vec::new()),
            generation: AtomicU64::new(1),
        }
    }

    pub fn context(&self) -> &Arc<HostContext> {
        &self.ctx
    }

    /// Loads every extension (concurrently) and returns their summaries in load order.
    pub async fn load_all(&self, infos: Vec<ExtensionInfo>) -> Vec<Summary> {
        let base = self.lock().len() as u64;
        let mut pending = Vec::new();
        for (i, info) in infos.into_iter().enumerate() {
            let owner = Owner::new(info.name.clone(), base + i as u64 + 1)
                .with_generation(self.generation.fetch_add(1, Ordering::Relaxed));
            let (worker, rx) = self.spawn(&info, &owner, Value::Object(Default::default()));
            pending.push((info, owner, worker, rx));
        }
        let mut summaries = Vec::new();
        for (info, owner, worker, mut rx) in pending {
            let outcome = match worker.wait(&mut rx, worker.limits.budget).await {
                Waited::Answer(r) => r,
                Waited::TimedOut => Err(ScriptError::new(
                    super::api::ErrorKind::Unavailable,
                    format!(
                        "{}: loading did not finish in time (stuck in native code?)",
                        info.path.display()
                    ),
                )),
                Waited::Gone => Err(ScriptError::runtime(format!(
                    "{}: the extension's thread stopped while loading",
                    info.path.display()
                ))),
            };
            let loaded = match outcome {
                Ok(()) => Loaded {
                    info,
                    owner,
                    worker: Some(worker),
                    error: None,
                },
                Err(e) => {
                    self.remove_registrations(&owner);
                    Loaded {
                        info,
                        owner,
                        worker: None,
                        error: Some(e.message),
                    }
                }
            };
            summaries.push(self.summary(&loaded));
            self.lock().push(loaded);
        }
        summaries
    }

    /// Emits `extension_loaded` for each loaded extension.
    pub async fn announce(&self, summaries: &[Summary], reason: Reason) {
        if !self.ctx.hooks.has(EventKind::ExtensionLoaded) {
            return;
        }
        for s in summaries.iter().filter(|s| s.error.is_none()) {
            let event = HookEvent::ExtensionLoaded {
                name: s.name.clone(),
                path: s.path.clone(),
                reason,
            };
            self.ctx.hooks.emit(event).await;
        }
    }

    fn spawn(
        &self,
        info: &ExtensionInfo,
        owner: &Owner,
        state: Value,
    ) -> (
        Arc<Worker>,
        tokio::sync::oneshot::Receiver<Result<(), ScriptError>>,
    ) {
        let ctx = self.ctx.clone();
        let (info2, owner2) = (info.clone(), owner.clone());
        Worker::spawn(
            info.name.clone(),
            self.ctx.limits,
            factory(info.language),
            move |worker| {
                let registrar = HostRegistrar {
                    ctx,
                    worker: Arc::downgrade(worker),
                };
                Arc::new(ApiLink::new(info2, owner2, Arc::new(registrar), state))
            },
        )
    }

    fn remove_registrations(&self, owner: &Owner) {
        self.ctx.hooks.remove_owner(owner);
        self.ctx.tools.remove_owner(owner);
        self.ctx.commands.remove_owner(owner);
    }

    fn summary(&self, l: &Loaded) -> Summary {
        let tools = self
            .ctx
            .tools
            .active()
            .iter()
            .filter(|e| e.owner == l.owner)
            .map(|e| e.spec().name.clone())
            .collect();
        let commands = self
            .ctx
            .commands
            .all()
            .iter()
            .filter(|c| c.owner == l.owner)
            .map(|c| c.name.clone())
            .collect();
        Summary {
            name: l.info.name.clone(),
            path: l.info.path.display().to_string(),
            language: l.info.language,
            tools,
            commands,
            handlers: self.ctx.hooks.count_owner(&l.owner),
            error: l.error.clone(),
        }
    }

    /// Every extension, in load order, with what it registered now.
    pub fn summaries(&self) -> Vec<Summary> {
        let loaded = self.lock();
        loaded
            .iter()
            .map(|l| {
                let mut s = self.summary(l);
                if let Some(w) = &l.worker {
                    if w.is_disabled() {
                        s.error = Some("disabled after repeated failures".into());
                    } else if w.is_busy() {
                        s.error = Some("busy (a call is stuck in native code)".into());
                    }
                }
                s
            })
            .collect()
    }

    /// Unloads every extension: its registrations go, its thread ends.
    pub fn unload_all(&self) {
        let all: Vec<Loaded> = self.lock().drain(..).collect();
        for l in all {
            self.remove_registrations(&l.owner);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Loaded>> {
        self.loaded.lock().unwrap_or_else(|p| p.into_inner())
    }
}
