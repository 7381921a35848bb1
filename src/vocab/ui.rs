//! What the front end does for the rest of mypi when it needs the user ([`Ui`]): ask a yes/no
//! question or for a line of text, or open their editor. Scripts reach it through `ctx.ui.confirm`; MCP elicitation will too. The REPL
//! asks on its input line; print mode and checks have nobody to ask ([`NoUi`]).

use futures_util::future::BoxFuture;

/// The user, as far as the core can ask them something.
pub trait Ui: Send + Sync {
    /// Asks a yes/no question; resolves to false when nobody can answer (print mode).
    fn confirm(&self, question: &str) -> BoxFuture<'static, bool>;

    /// Asks for a line of text; `None` when nobody can answer (print mode) or the user
    /// cancelled.
    fn ask(&self, _question: &str) -> BoxFuture<'static, Option<String>> {
        Box::pin(async { None })
    }

    /// Opens the user's editor (`$VISUAL`, `$EDITOR`) on `initial`; the text saved, or
    /// `None` when nobody can edit (print mode) or the editor failed.
    fn edit(&self, _initial: &str) -> BoxFuture<'static, Option<String>> {
        Box::pin(async { None })
    }
}

/// A `Ui` for print mode and checks: never confirms.
pub struct NoUi;

impl Ui for NoUi {
    fn confirm(&self, _question: &str) -> BoxFuture<'static, bool> {
        Box::pin(async { false })
    }
}
