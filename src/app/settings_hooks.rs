//! Settings hooks at start-up: Claude Code's and Codex's command hooks
//! ([`crate::config::claude_hooks`]) read once the trust gate has decided (the project's files
//! only in a trusted project; the gate's notice names them when it is not), put on the hook
//! bus ([`crate::hooks::command`]), and listed by `/hooks`. A line's hook runs reach its
//! event sink as `hook_run` events ([`forward`]).

use std::future::Future;
use std::sync::{Arc, OnceLock};

use super::App;
use crate::agent::EventSink;
use crate::config::claude_hooks;
use crate::hooks::command::{self, HookEnv, Registered};
use crate::hooks::NoticeFn;
use crate::vocab::protocol::AgentEvent;
use crate::vocab::run::RunContext;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

/// The settings hooks of this process, once loaded, and where notices reach their
/// `Notification` hooks.
#[derive(Default)]
pub struct SettingsHooks {
    registered: OnceLock<Registered>,
    notify: Arc<OnceLock<NoticeFn>>,
}

impl SettingsHooks {
    /// `notice`, also telling the `Notification` hooks once they are loaded.
    pub fn notifying(&self, notice: NoticeFn) -> NoticeFn {
        let notify = self.notify.clone();
        Arc::new(move |message: String| {
            if let Some(n) = notify.get() {
                n(message.clone());
            }
            notice(message);
        })
    }
}

impl App {
    /// Reads the settings hooks and puts them on the bus (once; the project's files only
    /// when the folder is trusted now). Each problem with a file is one notice.
    pub fn load_settings_hooks(&self) {
        let home = self.config.home.as_deref();
        let context = self.extensions.context();
        // Trusted now: at start, or by the REPL's answer (the trust list is not read again).
        let trusted = context.control.project_trusted();
        let loaded = claude_hooks::load(home, &self.config.cwd, trusted);
        let problems = loaded.problems;
        let say = |problems: Vec<String>| problems.into_iter().for_each(|p| (context.notice)(p));
        if loaded.hooks.is_empty() {
            return say(problems);
        }
        let (control, services) = (context.control.clone(), context.clone());
        let sessions = (!self.config.no_session).then(|| self.config.sessions_dir());
        let session_of = services.clone();
        // The session file, or where it will be before its first line is written.
        let transcript = move || {
            control.session_file().or_else(|| {
                let id = session_of.session().session_id.clone();
                let dir = sessions.as_ref().filter(|_| !id.is_empty())?;
                Some(dir.join(format!("{id}.jsonl")))
            })
        };
        let env = HookEnv {
            project_dir: self.config.cwd.clone(),
            notice: context.notice.clone(),
            ui: self.ui.clone(),
            transcript: Arc::new(transcript),
            session: Arc::new(move || services.session()),
        };
        let registered = command::register(&self.hooks, loaded.hooks, env);
        if let Some(n) = registered.notifier() {
            let _ = self.settings_hooks.notify.set(n);
        }
        if let Err(again) = self.settings_hooks.registered.set(registered) {
            // Loaded twice: the first stays.
            again.remove();
        }
        // Said once the hooks are on: a `Notification` hook hears them too.
        say(problems);
    }

    /// Passes the `hook_run` events of runs outside a line (the session's start) to `sink`.
    pub(super) fn pending_hook_runs(&self, sink: &dyn EventSink) {
        if let Some(r) = self.settings_hooks.registered.get() {
            r.take_pending().into_iter().for_each(|e| sink.emit(e));
        }
    }

    /// `/hooks`.
    pub(super) fn hooks_text(&self) -> String {
        let hooks = self
            .settings_hooks
            .registered
            .get()
            .map(|r| r.hooks.as_slice())
            .unwrap_or_default();
        command::listing(hooks)
    }
}

/// The project's settings files with hooks, as the trust gate lists them.
pub(super) fn project_hook_files(app: &App) -> Vec<String> {
    claude_hooks::project_files_with_hooks(&app.config.cwd, app.config.home.as_deref())
        .into_iter()
        .map(|p| {
            p.strip_prefix(&app.config.cwd)
                .unwrap_or(&p)
                .display()
                .to_string()
        })
        .collect()
}

/// `ctx` sending its events (see [`RunContext::emit`]) to the returned receiver.
pub(super) fn with_events(
    ctx: Arc<RunContext>,
) -> (Arc<RunContext>, UnboundedReceiver<AgentEvent>) {
    let (tx, rx) = unbounded_channel();
    let ctx = Arc::unwrap_or_clone(ctx).with_events(tx);
    (Arc::new(ctx), rx)
}

/// Runs `work`, passing the events sent to `events` meanwhile on to `sink` as they come,
/// and the last ones once it is done.
pub(super) async fn forward<T>(
    mut events: UnboundedReceiver<AgentEvent>,
    sink: &dyn EventSink,
    mut work: impl Future<Output = T> + Unpin,
) -> T {
    loop {
        tokio::select! {
            biased;
            out = &mut work => {
                while let Ok(event) = events.try_recv() {
                    sink.emit(event);
                }
                return out;
            }
            Some(event) = events.recv() => sink.emit(event),
        }
    }
}
