//! What the front end does for the rest of mypi when it needs the user ([`Ui`]): ask a yes/no
//! question, a choice among options, or for a line of text, or open their editor. Scripts
//! reach it through `ctx.ui.*`, MCP elicitation through [`Ui::ask`]. The REPL asks on its
//! input line; an editor (`mypi acp`) shows yes/no questions and choices as permission
//! requests; print mode and checks have nobody to ask ([`NoUi`]).

use futures_util::future::BoxFuture;

/// Who asks a question and what it is about, for a front end that shows a question with the
/// tool call it concerns or remembers answers (an editor's "always allow").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asker {
    /// The extension that asks.
    pub extension: String,
    /// The question as the script gave it (the one shown is prefixed with the extension).
    pub question: String,
    /// The tool call the question is about: the one running the script's tool, or the one a
    /// `tool_call` handler decides on; `None` outside a tool call (and in a child agent's).
    pub call_id: Option<String>,
    /// Whether the front end was told of that call already (a running tool's is; the one a
    /// `tool_call` handler decides on is not yet).
    pub call_shown: bool,
}

/// The user, as far as the core can ask them something.
pub trait Ui: Send + Sync {
    /// Asks a yes/no question; resolves to false when nobody can answer (print mode).
    fn confirm(&self, question: &str) -> BoxFuture<'static, bool>;

    /// [`Ui::confirm`] for `asker`: a front end that knows who asks may show it, or answer
    /// from what the user said to the same question before. The default asks as `confirm`.
    fn confirm_from(&self, question: &str, _asker: &Asker) -> BoxFuture<'static, bool> {
        self.confirm(question)
    }

    /// One of `options` (its index), when this front end shows choices itself (an editor's
    /// permission request); the answer is `None` when the user chose none. `None` here: it
    /// does not, and the caller lists the options numbered and asks a line ([`Ui::ask`]).
    /// Nothing is asked before the future is first polled.
    fn choose(
        &self,
        _title: &str,
        _options: &[String],
        _asker: &Asker,
    ) -> Option<BoxFuture<'static, Option<usize>>> {
        None
    }

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
