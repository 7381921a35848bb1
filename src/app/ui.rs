//! The app's [`Ui`]: a yes/no question on the REPL (never in print mode), and the cancellation
//! token of the prompt running now, which Ctrl-C cancels. The REPL plugs its confirm prompt in
//! once its input thread runs; an editor's front end (`mypi acp`) plugs in a [`Ui`] of its
//! own ([`AppUi::set_front`]), which then answers every dialog.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::vocab::ui::{Asker, Ui};

/// Asks the user a question; resolves to the answer.
pub type ConfirmFn = Box<dyn Fn(&str) -> BoxFuture<'static, bool> + Send + Sync>;

/// Asks the user for a line; resolves to it (`None`: no answer).
pub type AskFn = Box<dyn Fn(&str) -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// Opens the user's editor on a text; resolves to what was saved (`None`: nothing).
pub type EditFn = Box<dyn Fn(&str) -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// The app's `Ui`: confirms through `confirm` and asks through `ask` when set; holds the
/// running prompt's token.
#[derive(Default)]
pub struct AppUi {
    cancel: Mutex<CancellationToken>,
    confirm: Mutex<Option<ConfirmFn>>,
    ask: Mutex<Option<AskFn>>,
    edit: Mutex<Option<EditFn>>,
    /// A front end's own dialogs, used instead of the functions above.
    front: Mutex<Option<Arc<dyn Ui>>>,
}

impl AppUi {
    /// Lets scripts ask the user (the REPL sets this).
    pub fn set_confirm(&self, f: ConfirmFn) {
        *self.confirm.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
    }

    /// Lets MCP elicitation ask the user for lines (the REPL sets this).
    pub fn set_ask(&self, f: AskFn) {
        *self.ask.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
    }

    /// Lets scripts open the user's editor (the REPL sets this).
    pub fn set_edit(&self, f: EditFn) {
        *self.edit.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
    }

    /// Lets a front end answer every dialog itself (an editor's, in `mypi acp`).
    pub fn set_front(&self, ui: Arc<dyn Ui>) {
        *self.front.lock().unwrap_or_else(|p| p.into_inner()) = Some(ui);
    }

    fn front(&self) -> Option<Arc<dyn Ui>> {
        self.front.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A fresh token for the next prompt; Ctrl-C cancels it.
    pub fn new_prompt(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *self.cancel.lock().unwrap_or_else(|p| p.into_inner()) = token.clone();
        token
    }

    /// The token of the running prompt.
    pub fn current(&self) -> CancellationToken {
        self.cancel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Ui for AppUi {
    fn confirm(&self, question: &str) -> BoxFuture<'static, bool> {
        if let Some(front) = self.front() {
            return front.confirm(question);
        }
        match &*self.confirm.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(f) => f(question),
            None => Box::pin(async { false }),
        }
    }

    fn confirm_from(&self, question: &str, asker: &Asker) -> BoxFuture<'static, bool> {
        match self.front() {
            Some(front) => front.confirm_from(question, asker),
            None => self.confirm(question),
        }
    }

    fn choose(
        &self,
        title: &str,
        options: &[String],
        asker: &Asker,
    ) -> Option<BoxFuture<'static, Option<usize>>> {
        self.front()?.choose(title, options, asker)
    }

    fn ask(&self, question: &str) -> BoxFuture<'static, Option<String>> {
        if let Some(front) = self.front() {
            return front.ask(question);
        }
        match &*self.ask.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(f) => f(question),
            None => Box::pin(async { None }),
        }
    }

    fn edit(&self, initial: &str) -> BoxFuture<'static, Option<String>> {
        if let Some(front) = self.front() {
            return front.edit(initial);
        }
        match &*self.edit.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(f) => f(initial),
            None => Box::pin(async { None }),
        }
    }
}
