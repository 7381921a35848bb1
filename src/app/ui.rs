//! What scripts can ask of the front end ([`Ui`]): a yes/no question on the REPL (never in
//! print mode) and cancelling the running prompt. The REPL plugs its confirm prompt in once
//! its input thread runs.

use std::sync::{Arc, Mutex};

use crate::cancel::CancelToken;
use crate::extensions::proxies::Ui;

/// Asks the user a question and returns the answer.
pub type ConfirmFn = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// The app's `Ui`: cancels the prompt in `cancel`, confirms through `confirm` when set.
#[derive(Default)]
pub struct AppUi {
    pub cancel: Arc<Mutex<CancelToken>>,
    confirm: Mutex<Option<ConfirmFn>>,
}

impl AppUi {
    /// Lets scripts ask the user (the REPL sets this).
    pub fn set_confirm(&self, f: ConfirmFn) {
        *self.confirm.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
    }

    /// A fresh token for the next prompt; `abort` and Ctrl-C cancel it.
    pub fn new_prompt(&self) -> CancelToken {
        let token = CancelToken::new();
        *self.cancel.lock().unwrap_or_else(|p| p.into_inner()) = token.clone();
        token
    }

    /// The token of the running prompt.
    pub fn current(&self) -> CancelToken {
        self.cancel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Ui for AppUi {
    fn confirm(&self, question: &str) -> bool {
        match &*self.confirm.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(f) => f(question),
            None => false,
        }
    }

    fn abort(&self) {
        self.current().cancel();
    }
}
