//! Host control ([`Control`]): what scripts ask of the app and the front end beyond the
//! registries, and what they may read of them. Scripts run on their own threads while the app
//! owns the agent, so the two meet here:
//!
//! - **requests** the app carries out at its next safe point (when the line or run that made
//!   them has ended): a new session, a reload, a model switch, leaving mypi. The REPL waits on
//!   [`Control::wait`] too, so a request made while it is idle (a timer) is seen at once;
//! - **a view** the app keeps current: whether the agent is running, the system prompt in
//!   effect, the context's size and window, the session's file and name;
//! - **session entries** scripts add (`api.append_entry`, `ctx.session.set_name`), written to
//!   the session file by the agent as soon as it next writes, or by the app after the line;
//! - **status texts** and the terminal title, drawn by the front end's [`Screen`].
//!
//! Every queue here is bounded: a script that asks too often gets an error, never memory.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use serde::Serialize;
use serde_json::Value;

use crate::vocab::run::EventSink;

/// Requests waiting for the app at most; beyond, a request is refused.
pub const MAX_REQUESTS: usize = 64;
/// Session entries waiting to be written at most.
pub const MAX_PENDING_ENTRIES: usize = 1024;
/// The longest `kind` of a custom entry and the longest session name.
pub const MAX_NAME_BYTES: usize = 200;
/// The largest custom entry (its data as JSON).
pub const MAX_ENTRY_BYTES: usize = 1024 * 1024;
/// Status keys at most; the longest status text.
pub const MAX_STATUS_KEYS: usize = 32;
pub const MAX_STATUS_BYTES: usize = 200;

/// What a script asked the app to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `ctx.new_session()`.
    NewSession,
    /// `ctx.shutdown()`.
    Shutdown,
    /// `ctx.reload()`.
    Reload,
    /// `api.set_model(model, {provider?})`.
    SetModel {
        model: String,
        provider: Option<String>,
    },
    /// `api.set_thinking(level)`.
    SetThinking(crate::vocab::thinking::Thinking),
}

/// A line a script adds to the session file.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    /// `api.append_entry(kind, data)`.
    Custom { kind: String, data: Value },
    /// `ctx.session.set_name(name)`.
    Name(String),
}

/// `ctx.context_usage()`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ContextUsage {
    /// About how many tokens the next request would send.
    pub tokens: u64,
    /// The model's context window.
    pub window: u64,
    /// `tokens` as a share of `window`, in percent.
    pub percent: f64,
}

/// What the app shows scripts of itself.
#[derive(Debug, Clone, Default)]
struct View {
    running: bool,
    system_prompt: String,
    context: ContextUsage,
    session_file: Option<PathBuf>,
    session_name: Option<String>,
}

/// Where status texts and the title are drawn (the REPL; nothing in print mode).
pub trait Screen: Send + Sync {
    /// The status line: every extension's texts joined, or `None` to clear it.
    fn status(&self, line: Option<String>);
    /// The terminal title.
    fn title(&self, text: &str);
}

/// What waits for the app: requests and session lines.
#[derive(Default)]
struct Queued {
    requests: VecDeque<Request>,
    pending: Vec<Pending>,
}

/// What the front end shows: the status texts by key, where they are drawn, and where
/// events from scripts outside a line go (the front end's outlet).
#[derive(Default)]
struct Shown {
    status: BTreeMap<String, String>,
    screen: Option<Arc<dyn Screen>>,
    outlet: Option<Arc<dyn EventSink>>,
}

/// What extensions added to the app's configuration, and the options for them.
#[derive(Default)]
struct Added {
    /// Providers extensions registered (`api.provider`), with the extension's name.
    providers: Vec<(String, crate::config::settings::NamedProvider)>,
    /// The command line's options for extensions.
    given: Vec<crate::config::extflags::Given>,
    /// The flags extensions declared.
    flags: Vec<crate::config::extflags::Declared>,
}

/// The meeting point of scripts and the app: one lock per concern (what waits for the app,
/// what it shows of itself, what the front end draws, what extensions added), each held
/// only to copy in or out.
#[derive(Default)]
pub struct Control {
    queued: Mutex<Queued>,
    wake: tokio::sync::Notify,
    view: RwLock<View>,
    shown: Mutex<Shown>,
    added: Mutex<Added>,
    /// The project folder is trusted (`api.project_trusted()`): the app sets it from the
    /// trust gate's decision.
    project_trusted: std::sync::atomic::AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Control {
    pub fn new() -> Arc<Self> {
        Arc::new(Control::default())
    }

    /// Whether the project folder is trusted, as the trust gate decided.
    pub fn project_trusted(&self) -> bool {
        self.project_trusted
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records the trust gate's decision.
    pub fn set_project_trusted(&self, trusted: bool) {
        self.project_trusted
            .store(trusted, std::sync::atomic::Ordering::Relaxed);
    }

    /// Queues a request for the app; refused when too many wait already.
    pub fn request(&self, request: Request) -> Result<(), String> {
        let mut queued = lock(&self.queued);
        let requests = &mut queued.requests;
        if requests.len() >= MAX_REQUESTS {
            return Err(format!(
                "{MAX_REQUESTS} requests are already waiting for mypi; try again later"
            ));
        }
        // Asking twice for the same thing before it happened is asking once.
        if !requests.contains(&request) {
            requests.push_back(request);
        }
        drop(queued);
        self.wake.notify_one();
        Ok(())
    }

    /// The requests made since the last call, in order.
    pub fn take_requests(&self) -> Vec<Request> {
        lock(&self.queued).requests.drain(..).collect()
    }

    /// Whether requests wait.
    pub fn has_requests(&self) -> bool {
        !lock(&self.queued).requests.is_empty()
    }

    /// Resolves when a request is made (at once if one waits).
    pub async fn wait(&self) {
        loop {
            let notified = self.wake.notified();
            if self.has_requests() {
                return;
            }
            notified.await;
        }
    }

    /// Queues a line for the session file.
    pub fn append(&self, entry: Pending) -> Result<(), String> {
        let mut queued = lock(&self.queued);
        if queued.pending.len() >= MAX_PENDING_ENTRIES {
            return Err(format!(
                "{MAX_PENDING_ENTRIES} entries are already waiting to be written; try again \
                 after the run"
            ));
        }
        if let Pending::Name(name) = &entry {
            self.write_view(|v| v.session_name = Some(name.clone()));
        }
        queued.pending.push(entry);
        Ok(())
    }

    /// The lines waiting for the session file, taken.
    pub fn take_pending(&self) -> Vec<Pending> {
        std::mem::take(&mut lock(&self.queued).pending)
    }

    /// The lines waiting for the session file, copied (for `ctx.session.entries()`).
    pub fn pending(&self) -> Vec<Pending> {
        lock(&self.queued).pending.clone()
    }

    fn write_view(&self, f: impl FnOnce(&mut View)) {
        f(&mut self.view.write().unwrap_or_else(|p| p.into_inner()));
    }

    fn read_view<T>(&self, f: impl FnOnce(&View) -> T) -> T {
        f(&self.view.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The agent starts or ends a run.
    pub fn set_running(&self, running: bool) {
        self.write_view(|v| v.running = running);
    }

    /// `ctx.is_idle()`: no run of the user's agent is going on.
    pub fn is_idle(&self) -> bool {
        self.read_view(|v| !v.running)
    }

    /// The system prompt in effect (as the last run sent it, rewrites included).
    pub fn set_system_prompt(&self, text: &str) {
        self.write_view(|v| {
            if v.system_prompt != text {
                v.system_prompt = text.to_string();
            }
        });
    }

    pub fn system_prompt(&self) -> String {
        self.read_view(|v| v.system_prompt.clone())
    }

    /// The context's size now and the model's window.
    pub fn set_context(&self, tokens: u64, window: u64) {
        let percent = if window == 0 {
            0.0
        } else {
            (tokens as f64 * 1000.0 / window as f64).round() / 10.0
        };
        self.write_view(|v| {
            v.context = ContextUsage {
                tokens,
                window,
                percent,
            }
        });
    }

    pub fn context_usage(&self) -> ContextUsage {
        self.read_view(|v| v.context)
    }

    /// The session's file (none until it is written) and name.
    pub fn set_session(&self, file: Option<PathBuf>, name: Option<String>) {
        self.write_view(|v| {
            v.session_file = file;
            v.session_name = name;
        });
    }

    /// The session's file changed (its first line was written): the name stays.
    pub fn set_session_file(&self, file: Option<PathBuf>) {
        self.write_view(|v| v.session_file = file);
    }

    /// The session file, once it exists.
    pub fn session_file(&self) -> Option<PathBuf> {
        self.read_view(|v| v.session_file.clone())
    }

    pub fn session_name(&self) -> Option<String> {
        self.read_view(|v| v.session_name.clone())
    }

    /// Lets the front end draw status texts and the title.
    pub fn set_screen(&self, screen: Arc<dyn Screen>) {
        lock(&self.shown).screen = Some(screen);
    }

    /// Where [`Control::show`] sends what no line takes (the app's outlet).
    pub fn set_outlet(&self, outlet: Arc<dyn EventSink>) {
        lock(&self.shown).outlet = Some(outlet);
    }

    /// Shows a script's `event` (a plan): to the sink of the line running in `ctx`, else to
    /// the front end's outlet.
    pub fn show(
        &self,
        event: crate::vocab::protocol::AgentEvent,
        ctx: Option<&crate::vocab::run::RunContext>,
    ) {
        if ctx.is_some_and(|c| c.emit(event.clone())) {
            return;
        }
        let outlet = lock(&self.shown).outlet.clone();
        if let Some(outlet) = outlet {
            outlet.emit(event);
        }
    }

    fn screen(&self) -> Option<Arc<dyn Screen>> {
        lock(&self.shown).screen.clone()
    }

    /// `ctx.ui.set_status(key, text | nil)`: sets or clears one status text, then redraws
    /// the line (texts in key order, joined by ` · `).
    pub fn set_status(&self, key: &str, text: Option<&str>) -> Result<(), String> {
        if key.is_empty() || key.len() > MAX_NAME_BYTES {
            return Err(format!("the key must be 1 to {MAX_NAME_BYTES} bytes long"));
        }
        let (line, screen) = {
            let mut shown = lock(&self.shown);
            let status = &mut shown.status;
            match text.map(one_line).filter(|t| !t.is_empty()) {
                Some(t) => {
                    if !status.contains_key(key) && status.len() >= MAX_STATUS_KEYS {
                        return Err(format!(
                            "{MAX_STATUS_KEYS} status texts are shown already; clear one first"
                        ));
                    }
                    status.insert(key.to_string(), t);
                }
                None => {
                    if status.remove(key).is_none() {
                        // Nothing was shown under that key: nothing to redraw.
                        return Ok(());
                    }
                }
            }
            (status_line_of(status), shown.screen.clone())
        };
        if let Some(screen) = screen {
            screen.status(line);
        }
        Ok(())
    }

    /// Clears the status texts whose keys start with `prefix` (an extension unloaded).
    pub fn clear_status(&self, prefix: &str) {
        let (line, screen) = {
            let mut shown = lock(&self.shown);
            let before = shown.status.len();
            shown.status.retain(|k, _| !k.starts_with(prefix));
            if shown.status.len() == before {
                return;
            }
            (status_line_of(&shown.status), shown.screen.clone())
        };
        if let Some(screen) = screen {
            screen.status(line);
        }
    }

    /// The status line as it is now.
    pub fn status_line(&self) -> Option<String> {
        status_line_of(&lock(&self.shown).status)
    }

    /// `api.provider{...}` of extension `owner`: replaces one of the same name.
    pub fn add_provider(&self, owner: &str, provider: crate::config::settings::NamedProvider) {
        let all = &mut lock(&self.added).providers;
        all.retain(|(_, p)| p.name != provider.name);
        all.push((owner.to_string(), provider));
    }

    /// Forgets the providers of extension `owner` (it was unloaded).
    pub fn remove_providers(&self, owner: &str) {
        lock(&self.added).providers.retain(|(o, _)| o != owner);
    }

    /// The providers extensions registered, in order.
    pub fn providers(&self) -> Vec<crate::config::settings::NamedProvider> {
        lock(&self.added)
            .providers
            .iter()
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// The options the command line gave for extensions.
    pub fn set_flags_given(&self, given: Vec<crate::config::extflags::Given>) {
        lock(&self.added).given = given;
    }

    pub fn flags_given(&self) -> Vec<crate::config::extflags::Given> {
        lock(&self.added).given.clone()
    }

    /// `api.flag{...}`: a name another extension declared is refused; the same extension
    /// declaring it again (a reload) replaces it.
    pub fn declare_flag(&self, flag: crate::config::extflags::Declared) -> Result<(), String> {
        let all = &mut lock(&self.added).flags;
        if let Some(other) = all
            .iter()
            .find(|d| d.name == flag.name && d.extension != flag.extension)
        {
            return Err(format!(
                "--{} is declared by {} already",
                flag.name, other.extension
            ));
        }
        all.retain(|d| d.name != flag.name);
        all.push(flag);
        Ok(())
    }

    /// `api.flags.NAME`: the value of a declared flag, `None` for an undeclared one.
    pub fn flag_value(&self, name: &str) -> Option<serde_json::Value> {
        let added = lock(&self.added);
        let d = added.flags.iter().find(|d| d.name == name)?;
        Some(crate::config::extflags::value(d, &added.given))
    }

    /// The declared flags, in order.
    pub fn declared_flags(&self) -> Vec<crate::config::extflags::Declared> {
        lock(&self.added).flags.clone()
    }

    /// Forgets the flags of extension `owner` (it was unloaded).
    pub fn remove_flags(&self, owner: &str) {
        lock(&self.added).flags.retain(|d| d.extension != owner);
    }

    /// `ctx.ui.set_title(text)`.
    pub fn set_title(&self, text: &str) {
        if let Some(screen) = self.screen() {
            screen.title(&one_line(text));
        }
    }
}

/// The status texts in key order, joined by ` · `; none without texts.
fn status_line_of(status: &BTreeMap<String, String>) -> Option<String> {
    if status.is_empty() {
        return None;
    }
    Some(status.values().cloned().collect::<Vec<_>>().join(" · "))
}

/// The status key `key` of extension `extension` (each extension has its own keys; with an
/// empty `key`, the prefix of all of them).
pub fn status_key(extension: &str, key: &str) -> String {
    format!("{extension}\u{0}{key}")
}

/// A script's text made safe for one line of the terminal: newlines and tabs as spaces,
/// other control characters (escape sequences included) shown visibly
/// ([`crate::vocab::text::inert()`]), cut to [`MAX_STATUS_BYTES`].
pub fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .collect();
    let clean = crate::vocab::text::inert(&flat);
    let clean = clean.trim();
    if clean.len() <= MAX_STATUS_BYTES {
        return clean.to_string();
    }
    let end = crate::vocab::text::floor_char_boundary(clean, MAX_STATUS_BYTES);
    format!("{}…", &clean[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Seen(Mutex<Vec<String>>);
    impl Screen for Seen {
        fn status(&self, line: Option<String>) {
            lock(&self.0).push(line.unwrap_or_else(|| "-".into()));
        }
        fn title(&self, text: &str) {
            lock(&self.0).push(format!("title {text}"));
        }
    }

    #[test]
    fn requests_are_bounded_and_a_repeat_is_asked_once() {
        let c = Control::new();
        c.request(Request::Reload).unwrap();
        c.request(Request::Reload).unwrap();
        assert_eq!(c.take_requests(), vec![Request::Reload]);
        for i in 0..MAX_REQUESTS {
            c.request(Request::SetModel {
                model: i.to_string(),
                provider: None,
            })
            .unwrap();
        }
        let e = c.request(Request::Shutdown).unwrap_err();
        assert!(e.contains("already waiting"), "{e}");
    }

    #[test]
    fn status_texts_join_in_key_order_and_escape_sequences_are_dropped() {
        let c = Control::new();
        let seen = Arc::new(Seen(Mutex::new(Vec::new())));
        c.set_screen(seen.clone());
        c.set_status("b", Some("second")).unwrap();
        c.set_status("a", Some("\x1b[31mfirst\nline")).unwrap();
        c.set_status("b", None).unwrap();
        c.set_title("t\x07");
        c.clear_status("a");
        assert_eq!(
            *lock(&seen.0),
            vec![
                "second",
                "^[[31mfirst line · second",
                "^[[31mfirst line",
                "title t^G",
                "-"
            ]
        );
        assert!(c.set_status("", Some("x")).is_err());
        let long = "é".repeat(500);
        assert!(one_line(&long).len() <= MAX_STATUS_BYTES + 3);
    }

    #[tokio::test]
    async fn wait_wakes_on_a_request_made_before_or_after() {
        let c = Control::new();
        c.request(Request::Shutdown).unwrap();
        c.wait().await;
        c.take_requests();
        let c2 = c.clone();
        let waiter = tokio::spawn(async move { c2.wait().await });
        tokio::task::yield_now().await;
        c.request(Request::Reload).unwrap();
        waiter.await.unwrap();
    }
}
