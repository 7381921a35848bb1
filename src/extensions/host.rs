//! The extension host: loads extensions (each on its own worker thread, all at once), stages
//! what each registers until its top level succeeds, reloads one extension in a fresh VM and
//! swaps its registrations in at once (keeping the previous version when the new one fails),
//! unloads, and lists what each registered or why it failed.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use super::api::{ApiLink, EngineFactory, LinkHost};
use super::script::{ErrorKind, ExtensionInfo, Language, ScriptError};
use super::services::HostContext;
use super::staging::HostRegistrar;
use super::worker::{LoadReceiver, Waited, Worker};
use crate::hooks::{EventKind, HookEvent, Reason};
use crate::vocab::owner::Owner;

/// One extension as listed by the banner, `/extensions` and `mypi ext check`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub name: String,
    pub path: String,
    pub language: Language,
    pub tools: Vec<String>,
    pub commands: Vec<String>,
    pub handlers: usize,
    /// The tools whose REPL lines it renders (`api.renderer`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub renderers: Vec<String>,
    /// Its timers, file watches and event handlers (`api.timer`, `api.watch`,
    /// `api.events.on`).
    #[serde(skip_serializing_if = "is_zero")]
    pub background: usize,
    /// The command-line options it declared (`api.flag`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Set when the extension failed to load (or is busy / disabled).
    pub error: Option<String>,
    /// Why its last reload failed, when the previous version was kept running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_error: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// `2 tools, 1 command, 3 handlers`.
    pub fn counts(&self) -> String {
        let plural = |n: usize, one: &str| crate::vocab::text::plural(n as u64, one);
        format!(
            "{}, {}, {}",
            plural(self.tools.len(), "tool"),
            plural(self.commands.len(), "command"),
            plural(self.handlers, "handler")
        )
    }

    /// One line: `todo (lua, path): 1 tool, ...` or the error.
    pub fn line(&self) -> String {
        let Some(e) = &self.error else {
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
            if !self.renderers.is_empty() {
                line.push_str(&format!(" — renders {}", self.renderers.join(", ")));
            }
            if self.background > 0 {
                let n = self.background;
                let s = if n == 1 { "" } else { "s" };
                line.push_str(&format!(
                    " — {n} timer{s}, watch{} or event handler{s}",
                    if n == 1 { "" } else { "es" }
                ));
            }
            if !self.options.is_empty() {
                let o: Vec<String> = self.options.iter().map(|o| format!("--{o}")).collect();
                line.push_str(&format!(" — options {}", o.join(", ")));
            }
            if let Some(e) = &self.reload_error {
                line.push_str(&format!(
                    " — its last reload failed, the previous version runs: {e}"
                ));
            }
            return line;
        };
        format!("✗ {} ({}): {e}", self.name, self.language.name())
    }
}

/// A loaded (or failed) extension.
#[derive(Clone)]
pub(super) struct Loaded {
    pub info: ExtensionInfo,
    pub owner: Owner,
    pub worker: Option<Arc<Worker>>,
    pub error: Option<String>,
    /// Why the last reload failed, when the previous version was kept running.
    pub reload_error: Option<String>,
    /// Hash of the script's source when it was (last tried to be) loaded.
    pub fingerprint: u64,
    /// Module files it `require`d / `import`ed.
    pub required: Vec<PathBuf>,
}

/// A finished load of one extension, not yet swapped in.
struct Attempt {
    owner: Owner,
    worker: Arc<Worker>,
    registrar: Arc<HostRegistrar>,
    outcome: Result<Vec<PathBuf>, ScriptError>,
}

/// All extensions of this process.
pub struct ExtensionHost {
    pub(super) ctx: Arc<HostContext>,
    pub(super) loaded: Mutex<Vec<Loaded>>,
    generation: AtomicU64,
    next_order: AtomicU64,
    /// Serialises reloads (watcher and `/reload`).
    pub(super) reloading: tokio::sync::Mutex<()>,
    /// Loads given up on whose top level may still run (stuck in native code), by file: no
    /// new load of that file starts until the thread returns, so saves do not pile up
    /// spinning threads.
    stuck_loads: Mutex<Vec<(PathBuf, Arc<Worker>)>>,
}

fn factory(language: Language) -> EngineFactory {
    match language {
        Language::Lua => super::lua::new_engine,
        Language::Rhai => super::rhai::new_engine,
    }
}

/// A cheap content hash of a file (0 when it cannot be read).
pub(super) fn fingerprint(path: &Path) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(path).unwrap_or_default().hash(&mut h);
    h.finish()
}

/// The path of an extension relative to its root (`git/guard.lua`), for notices.
pub fn short_path(info: &ExtensionInfo) -> String {
    info.path
        .strip_prefix(&info.root)
        .unwrap_or(&info.path)
        .display()
        .to_string()
}

impl ExtensionHost {
    pub fn new(ctx: Arc<HostContext>) -> Self {
        ExtensionHost {
            ctx,
            loaded: Mutex::new(Vec::new()),
            generation: AtomicU64::new(1),
            next_order: AtomicU64::new(1),
            reloading: tokio::sync::Mutex::new(()),
            stuck_loads: Mutex::new(Vec::new()),
        }
    }

    pub fn context(&self) -> &Arc<HostContext> {
        &self.ctx
    }

    /// Loads extensions (concurrently), adds them in order, returns their summaries.
    pub async fn load_all(&self, infos: Vec<ExtensionInfo>) -> Vec<Summary> {
        let mut pending = Vec::new();
        for info in infos {
            let order = self.next_order.fetch_add(1, Ordering::Relaxed);
            let owner = Owner::new(info.name.clone(), order);
            let fp = fingerprint(&info.path);
            let started = self.start(&info, owner, Value::Object(Default::default()));
            pending.push((info, fp, started));
        }
        let mut summaries = Vec::new();
        for (info, fp, started) in pending {
            let attempt = self.finish(&info, started).await;
            let loaded = self.settle(info, fp, attempt, None);
            summaries.push(self.summary(&loaded));
            self.lock().push(loaded);
        }
        summaries
    }

    /// Starts loading `info` as `owner` (a fresh generation) with `state` as `api.state`.
    fn start(
        &self,
        info: &ExtensionInfo,
        owner: Owner,
        state: Value,
    ) -> (Owner, Arc<Worker>, Arc<HostRegistrar>, LoadReceiver) {
        let owner = owner.with_generation(self.generation.fetch_add(1, Ordering::Relaxed));
        let registrar = HostRegistrar::staging(self.ctx.clone());
        if self.still_stuck(&info.path) {
            let message = format!(
                "{}: an earlier load is still stuck in native code; it loads again once that \
                 thread returns (or restart mypi)",
                info.path.display()
            );
            let (worker, rx) = Worker::not_started(info.name.clone(), self.ctx.limits, message);
            return (owner, worker, registrar, rx);
        }
        let (info2, owner2, reg2) = (info.clone(), owner.clone(), registrar.clone());
        let context = self.ctx.clone();
        let (worker, rx) = Worker::spawn(
            info.name.clone(),
            self.ctx.limits,
            factory(info.language),
            move |worker| {
                reg2.attach(worker);
                Arc::new(ApiLink::new(
                    info2,
                    owner2,
                    LinkHost::of(reg2, context),
                    state,
                ))
            },
        );
        (owner, worker, registrar, rx)
    }

    /// Whether an earlier load of `path` is still running after it was given up on.
    fn still_stuck(&self, path: &std::path::Path) -> bool {
        let mut stuck = self.stuck_loads.lock().unwrap_or_else(|p| p.into_inner());
        stuck.retain(|(_, w)| w.is_loading());
        stuck.iter().any(|(p, _)| p == path)
    }

    /// Waits for a started load with the load deadline.
    async fn finish(
        &self,
        info: &ExtensionInfo,
        (owner, worker, registrar, mut rx): (Owner, Arc<Worker>, Arc<HostRegistrar>, LoadReceiver),
    ) -> Attempt {
        let outcome = match worker.wait(&mut rx).await {
            Waited::Answer(r) => r,
            Waited::TimedOut(_) => Err({
                self.stuck_loads
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((info.path.clone(), worker.clone()));
                ScriptError::new(
                    ErrorKind::Unavailable,
                    format!(
                        "{}: loading did not finish in time (stuck in native code?)",
                        info.path.display()
                    ),
                )
            }),
            Waited::Gone | Waited::Cancelled => Err(ScriptError::runtime(format!(
                "{}: the extension's thread stopped while loading",
                info.path.display()
            ))),
        };
        Attempt {
            owner,
            worker,
            registrar,
            outcome,
        }
    }

    /// Turns an attempt into the extension's new entry: on success its registrations replace
    /// `previous`'s at once; on failure they are dropped and `previous` (if it worked) stays.
    fn settle(
        &self,
        info: ExtensionInfo,
        fp: u64,
        attempt: Attempt,
        previous: Option<&Loaded>,
    ) -> Loaded {
        match attempt.outcome {
            Ok(required) => {
                if let Some(prev) = previous {
                    self.remove_registrations(&prev.owner);
                }
                attempt.registrar.commit();
                Loaded {
                    info,
                    owner: attempt.owner,
                    worker: Some(attempt.worker),
                    error: None,
                    reload_error: None,
                    fingerprint: fp,
                    required,
                }
            }
            Err(e) => {
                attempt.registrar.discard();
                match previous {
                    Some(prev) if prev.error.is_none() => Loaded {
                        fingerprint: fp,
                        reload_error: Some(e.message),
                        ..prev.clone()
                    },
                    _ => Loaded {
                        info,
                        owner: attempt.owner,
                        worker: None,
                        error: Some(e.message),
                        reload_error: None,
                        fingerprint: fp,
                        required: previous.map(|p| p.required.clone()).unwrap_or_default(),
                    },
                }
            }
        }
    }

    /// Reloads the extension at `index` in a fresh VM, carrying `api.state` over. Returns the
    /// line to show the user.
    pub(super) async fn reload_at(&self, index: usize) -> Option<String> {
        let old = self.lock().get(index).cloned()?;
        let state = match &old.worker {
            Some(w) => {
                let (state, left_out) = w.state().await;
                for why in left_out {
                    (self.ctx.notice)(format!("{}: {why}", old.info.path.display()));
                }
                state
            }
            None => Value::Object(Default::default()),
        };
        let fp = fingerprint(&old.info.path);
        let started = self.start(&old.info, old.owner.clone(), state.clone());
        let attempt = self.finish(&old.info, started).await;
        let failed = attempt.outcome.as_ref().err().map(|e| e.message.clone());
        if failed.is_none() && old.error.is_none() {
            let event = HookEvent::SessionShutdown {
                reason: Reason::Reload,
            };
            self.ctx
                .hooks
                .emit_owner(&old.owner, event, &self.ctx.session())
                .await;
            self.hand_over_state(&old, &attempt.worker, &state).await;
        }
        let new = self.settle(old.info.clone(), fp, attempt, Some(&old));
        let summary = self.summary(&new);
        let new_owner = new.owner.clone();
        if let Some(slot) = self.lock().get_mut(index) {
            *slot = new;
        }
        let file = short_path(&old.info);
        Some(match failed {
            Some(e) if old.error.is_none() => format!("{e} — kept the previous version of {file}"),
            Some(e) => format!("{file} still fails: {e}"),
            None => {
                let start = HookEvent::SessionStart {
                    reason: Reason::Reload,
                };
                self.ctx
                    .hooks
                    .emit_owner(&new_owner, start, &self.ctx.session())
                    .await;
                self.announce(std::slice::from_ref(&summary), Reason::Reload)
                    .await;
                format!("reloaded {file}: {}", summary.counts())
            }
        })
    }

    /// Gives the new version what the old one's `api.state` holds now, when it changed after
    /// the snapshot the new version loaded with (its `session_shutdown` handler, or calls that
    /// ran meanwhile, may have written to it). Fields the new version's top level changed keep
    /// the new version's values ([`merge_state`]).
    async fn hand_over_state(&self, old: &Loaded, new: &Worker, snapshot: &Value) {
        let Some(old_worker) = &old.worker else {
            return;
        };
        let (now, _) = old_worker.state().await;
        if &now == snapshot {
            return;
        }
        let (mine, _) = new.state().await;
        if let Err(e) = new.set_state(merge_state(snapshot, mine, now)).await {
            (self.ctx.notice)(format!(
                "{}: api.state was not carried over: {e}",
                old.info.name
            ));
        }
    }

    /// Unloads the extension at `index`: its registrations go, its thread ends when its
    /// running calls finish. Returns the line to show the user.
    pub(super) async fn unload_at(&self, index: usize) -> Option<String> {
        let old = {
            let mut loaded = self.lock();
            (index < loaded.len()).then(|| loaded.remove(index))?
        };
        if old.error.is_none() {
            let event = HookEvent::SessionShutdown {
                reason: Reason::Reload,
            };
            self.ctx
                .hooks
                .emit_owner(&old.owner, event, &self.ctx.session())
                .await;
        }
        self.remove_registrations(&old.owner);
        self.ctx
            .control
            .clear_status(&crate::agent::control::status_key(&old.info.name, ""));
        self.ctx.control.remove_providers(&old.info.name);
        self.ctx.control.remove_flags(&old.info.name);
        Some(format!("unloaded {}", short_path(&old.info)))
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
            self.ctx.hooks.emit(event, &self.ctx.session()).await;
        }
    }

    fn remove_registrations(&self, owner: &Owner) {
        self.ctx.hooks.remove_owner(owner);
        self.ctx.tools.remove_owner(owner);
        self.ctx.commands.remove_owner(owner);
        self.ctx.background.remove_owner(owner);
        self.ctx.renderers.remove_owner(owner);
        self.ctx.skills.remove_owner(owner);
    }

    fn summary(&self, l: &Loaded) -> Summary {
        let tools = self.ctx.tools.all();
        let tools = tools.iter().map(|(e, _)| e).filter(|e| e.owner == l.owner);
        let commands = self.ctx.commands.all();
        let commands = commands.iter().filter(|c| c.owner == l.owner);
        let mut error = l.error.clone();
        if let Some(w) = &l.worker {
            if w.is_disabled() {
                error = Some("disabled after repeated failures".into());
            } else if w.is_busy() {
                error = Some("busy (a call is stuck in native code)".into());
            }
        }
        Summary {
            name: l.info.name.clone(),
            path: l.info.path.display().to_string(),
            language: l.info.language,
            tools: tools.map(|e| e.spec().name.clone()).collect(),
            commands: commands.map(|c| c.name.clone()).collect(),
            handlers: self.ctx.hooks.count_owner(&l.owner),
            renderers: self.ctx.renderers.tools_of(&l.owner),
            background: self.ctx.background.count_owner(&l.owner),
            options: self
                .ctx
                .control
                .declared_flags()
                .into_iter()
                .filter(|d| d.extension == l.info.name)
                .map(|d| d.name)
                .collect(),
            error,
            reload_error: l.reload_error.clone(),
        }
    }

    /// Every extension, in load order, with what it registered now.
    pub fn summaries(&self) -> Vec<Summary> {
        let loaded = self.lock().clone();
        loaded.iter().map(|l| self.summary(l)).collect()
    }

    /// Unloads every extension.
    pub fn unload_all(&self) {
        let all: Vec<Loaded> = self.lock().drain(..).collect();
        for l in all {
            self.remove_registrations(&l.owner);
        }
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Loaded>> {
        self.loaded.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The state a reloaded extension goes on with: what the old version left (`now`: the state
/// after its `session_shutdown` ran), except the top-level fields the new version's own top
/// level changed from the `snapshot` it loaded with (`mine`), which keep the new values. So
/// `api.state.n = (api.state.n or 0) + 1` at the top level counts reloads, and what the
/// shutdown handler wrote still arrives.
fn merge_state(snapshot: &Value, mine: Value, now: Value) -> Value {
    let (mine, mut merged) = match (mine, now) {
        (Value::Object(mine), Value::Object(now)) => (mine, now),
        (mine, now) => return if &mine != snapshot { mine } else { now },
    };
    let before = snapshot.as_object();
    let was = |k: &str| before.and_then(|b| b.get(k));
    for (k, v) in &mine {
        if was(k) != Some(v) {
            merged.insert(k.clone(), v.clone());
        }
    }
    if let Some(before) = before {
        for k in before.keys().filter(|k| !mine.contains_key(*k)) {
            merged.remove(k);
        }
    }
    Value::Object(merged)
}

#[cfg(test)]
mod tests {
    use super::merge_state;
    use serde_json::json;

    #[test]
    fn the_new_top_levels_changes_win_and_the_old_versions_last_writes_arrive() {
        let snapshot = json!({"n": 1, "keep": [1], "gone": true, "same": "x"});
        let mine = json!({"n": 2, "keep": [1], "same": "x", "added": 5});
        let now = json!({"n": 1, "keep": [1, 2], "gone": true, "same": "x", "downs": 1});
        assert_eq!(
            merge_state(&snapshot, mine, now),
            json!({"n": 2, "keep": [1, 2], "same": "x", "added": 5, "downs": 1})
        );
    }

    #[test]
    fn a_state_that_is_not_a_map_is_taken_whole() {
        assert_eq!(
            merge_state(&json!({}), json!([3]), json!({"a": 1})),
            json!([3])
        );
        assert_eq!(
            merge_state(&json!([3]), json!([3]), json!({"a": 1})),
            json!({"a": 1})
        );
        assert_eq!(
            merge_state(&json!(null), json!({"a": 1}), json!({"b": 2})),
            json!({"a": 1, "b": 2})
        );
    }
}
