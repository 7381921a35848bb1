//! Slash commands: one table of built-ins and script-registered commands (name, aliases,
//! description, owner, action), `/help` generated from it, lookup with near-match
//! suggestions, and completion candidates for the REPL. Commands answer without the model and
//! add nothing to the session.
//!
//! Built-in actions need the running agent, so the table only names them ([`Builtin`]); the
//! front end carries them out. Script commands are [`CommandHandler`]s.

use std::sync::{Arc, RwLock, Weak};

use crate::vocab::owner::{next_id, Handle, Owner, Unregister};
use crate::vocab::run::RunContext;
use futures_util::future::BoxFuture;

/// The commands mypi itself answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Help,
    Tools,
    Model,
    New,
    Resume,
    Fork,
    Compact,
    Session,
    Extensions,
    Reload,
    Mcp,
    /// `/hooks`: the settings hooks loaded (Claude Code's, Codex's).
    Hooks,
    Last,
    Skills,
    /// `/thinking [LEVEL|show]`: the thinking level, or the last reasoning whole.
    Thinking,
    Quit,
}

/// A command's failure, shown to the user.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{0}")]
pub struct CommandError(pub String);

/// A command registered by an extension: gets the text after the name, returns its output.
pub trait CommandHandler: Send + Sync {
    /// Runs the command with the text after its name, for the run `ctx`.
    fn call(
        &self,
        args: &str,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<String, CommandError>>;
}

/// What running a command does.
#[derive(Clone)]
pub enum Action {
    Builtin(Builtin),
    Handler(Arc<dyn CommandHandler>),
    /// The handler's output is sent to the model as the user's message (MCP prompts).
    Prompt(Arc<dyn CommandHandler>),
}

/// One entry of the table.
#[derive(Clone)]
pub struct Command {
    pub id: u64,
    pub name: String,
    pub aliases: Vec<String>,
    pub description: String,
    /// What the arguments are (a prompt file's `argument-hint`), shown after the name.
    pub hint: String,
    pub owner: Owner,
    pub action: Action,
}

/// What registering did: the handle, the name it got, and a notice when the name was taken.
pub struct Registered {
    pub handle: Handle,
    pub name: String,
    pub notice: Option<String>,
}

/// A line that was not a known command.
#[derive(Debug, Clone, PartialEq)]
pub struct Unknown {
    pub name: String,
    pub near: Vec<String>,
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown command /{}", self.name)?;
        if self.near.is_empty() {
            write!(f, "; /help lists the commands")
        } else {
            let near: Vec<String> = self.near.iter().map(|n| format!("/{n}")).collect();
            write!(f, "; did you mean {}?", near.join(", "))
        }
    }
}

/// The command table.
#[derive(Default)]
pub struct CommandTable {
    entries: RwLock<Vec<Arc<Command>>>,
    /// Itself, for the handles it gives out.
    weak_self: Weak<CommandTable>,
}

/// Splits `/name rest` into `("name", "rest")`; `None` when the line is not a command: it
/// does not start with `/`, starts with `//` (a prompt that starts with a slash), or its first
/// word is a path (`/etc/hosts is odd`).
pub fn parse_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim().strip_prefix('/')?;
    if rest.is_empty() || rest.starts_with('/') || rest.starts_with(char::is_whitespace) {
        return None;
    }
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((name, args)) => (name, args.trim()),
        None => (rest, ""),
    };
    if name.contains('/') {
        return None;
    }
    Some((name, args))
}

/// The built-in commands: name, aliases, description.
const BUILTINS: &[(&str, &[&str], &str, Builtin)] = &[
    ("help", &["?"], "list the commands", Builtin::Help),
    (
        "tools",
        &[],
        "list the tools the model can call",
        Builtin::Tools,
    ),
    (
        "model",
        &[],
        "show the models, or switch: /model NAME, /model PROVIDER/NAME",
        Builtin::Model,
    ),
    ("new", &[], "start a new session", Builtin::New),
    (
        "resume",
        &[],
        "go back to a session of this project: /resume lists them, /resume ID",
        Builtin::Resume,
    ),
    (
        "compact",
        &[],
        "summarise the older turns to free context: /compact [what to keep]",
        Builtin::Compact,
    ),
    (
        "fork",
        &[],
        "copy this session into a new one that goes on from here",
        Builtin::Fork,
    ),
    (
        "session",
        &[],
        "show the session file, messages and usage",
        Builtin::Session,
    ),
    (
        "extensions",
        &["ext"],
        "list the extensions, what each registered, and failures",
        Builtin::Extensions,
    ),
    (
        "reload",
        &[],
        "reload every extension (re-discovering files), or one: /reload NAME",
        Builtin::Reload,
    ),
    (
        "mcp",
        &[],
        "show the MCP servers; /mcp reconnect|login|logout NAME",
        Builtin::Mcp,
    ),
    (
        "hooks",
        &[],
        "list the settings hooks (Claude Code's .claude/settings.json, Codex's hooks.json)",
        Builtin::Hooks,
    ),
    (
        "last",
        &[],
        "show the last tool result whole, as the model got it",
        Builtin::Last,
    ),
    (
        "skills",
        &[],
        "list the skills the model is told about; /skill:NAME [text] runs one",
        Builtin::Skills,
    ),
    (
        "thinking",
        &[],
        "show or set the thinking level: /thinking off|minimal|low|medium|high; /thinking show prints the last reasoning",
        Builtin::Thinking,
    ),
    ("quit", &["exit", "q"], "leave mypi", Builtin::Quit),
];

impl CommandTable {
    /// A table holding the built-ins.
    pub fn with_builtins() -> Arc<Self> {
        let table = Arc::new_cyclic(|weak| CommandTable {
            weak_self: weak.clone(),
            ..Default::default()
        });
        for &(name, aliases, description, b) in BUILTINS {
            table.insert(Command {
                id: next_id(),
                name: name.into(),
                aliases: aliases.iter().map(|a| a.to_string()).collect(),
                description: description.into(),
                hint: String::new(),
                owner: Owner::core(),
                action: Action::Builtin(b),
            });
        }
        table
    }

    fn insert(&self, command: Command) -> u64 {
        let id = command.id;
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::new(command));
        id
    }

    fn taken(&self, name: &str) -> Option<Arc<Command>> {
        self.lookup(name)
    }

    /// Registers a script command. A name already taken gets a `:2` (`:3`, ...) suffix and a
    /// notice, so both stay reachable.
    pub fn register(
        &self,
        owner: Owner,
        name: &str,
        description: &str,
        handler: Arc<dyn CommandHandler>,
    ) -> Registered {
        self.register_with_id(next_id(), owner, name, description, handler)
    }

    /// Registers with an id allocated beforehand (see `HookBus::on_with_id`).
    pub fn register_with_id(
        &self,
        id: u64,
        owner: Owner,
        name: &str,
        description: &str,
        handler: Arc<dyn CommandHandler>,
    ) -> Registered {
        self.register_action(id, owner, name, description, Action::Handler(handler))
    }

    /// Registers a command with any action; a taken name gets a `:N` suffix.
    pub fn register_action(
        &self,
        id: u64,
        owner: Owner,
        name: &str,
        description: &str,
        action: Action,
    ) -> Registered {
        let mut final_name = name.to_string();
        let mut notice = None;
        if let Some(prev) = self.taken(name) {
            let mut n = 2;
            while self.taken(&format!("{name}:{n}")).is_some() {
                n += 1;
            }
            final_name = format!("{name}:{n}");
            notice = Some(format!(
                "command /{name} from {owner} is also defined by {}; it is reachable as /{final_name}",
                prev.owner
            ));
        }
        self.insert(Command {
            id,
            name: final_name.clone(),
            aliases: Vec::new(),
            description: description.to_string(),
            hint: String::new(),
            owner,
            action,
        });
        let target: Weak<dyn Unregister> = self.weak_self.clone();
        Registered {
            handle: Handle::new(id, target),
            name: final_name,
            notice,
        }
    }

    /// Registers a prompt file's command (its text goes to the model) unless `name` is
    /// taken: a built-in or a script's command wins, and the error names whose it is.
    pub fn register_prompt(
        &self,
        owner: Owner,
        (name, description, hint): (&str, &str, &str),
        handler: Arc<dyn CommandHandler>,
    ) -> Result<(), String> {
        if let Some(prev) = self.lookup(name) {
            return Err(format!("/{name} is taken by {}", prev.owner));
        }
        self.insert(Command {
            id: next_id(),
            name: name.to_string(),
            aliases: Vec::new(),
            description: description.to_string(),
            hint: hint.to_string(),
            owner,
            action: Action::Prompt(handler),
        });
        Ok(())
    }

    /// Removes every command `owner` registered; returns how many went.
    pub fn remove_owner(&self, owner: &Owner) -> usize {
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        let before = entries.len();
        entries.retain(|c| &c.owner != owner);
        before - entries.len()
    }

    /// The command called `name` (or with that alias).
    pub fn lookup(&self, name: &str) -> Option<Arc<Command>> {
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        entries
            .iter()
            .find(|c| c.name == name)
            .or_else(|| entries.iter().find(|c| c.aliases.iter().any(|a| a == name)))
            .cloned()
    }

    /// Resolves a command name, or says which names are near.
    pub fn resolve(&self, name: &str) -> Result<Arc<Command>, Unknown> {
        self.lookup(name).ok_or_else(|| Unknown {
            name: name.to_string(),
            near: self.near(name),
        })
    }

    /// All commands, sorted by name.
    pub fn all(&self) -> Vec<Arc<Command>> {
        let mut all = self
            .entries
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// The `/help` text, generated from the table.
    pub fn help(&self) -> String {
        let all = self.all();
        let shown = |c: &Command| match c.hint.is_empty() {
            true => c.name.clone(),
            false => format!("{} {}", c.name, c.hint),
        };
        let width = all.iter().map(|c| shown(c).len()).max().unwrap_or(0) + 1;
        let mut out = String::from("Commands:\n");
        for c in all {
            let mut line = format!("  /{:<width$} {}", shown(&c), c.description);
            if !c.aliases.is_empty() {
                let aliases: Vec<String> = c.aliases.iter().map(|a| format!("/{a}")).collect();
                line.push_str(&format!(" (also {})", aliases.join(", ")));
            }
            if c.owner != Owner::core() {
                line.push_str(&format!(" [{}]", c.owner));
            }
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(
            "!cmd runs cmd in the shell and gives its output to the model with your next \
             prompt; !!cmd only runs it.\n",
        );
        out.push_str("Anything else is sent to the model.");
        out
    }

    /// Command names starting with `prefix` (for tab completion), sorted.
    pub fn complete(&self, prefix: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .all()
            .iter()
            .flat_map(|c| std::iter::once(c.name.clone()).chain(c.aliases.iter().cloned()))
            .filter(|n| n.starts_with(prefix))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Names within a small edit distance of `name`, or sharing its prefix.
    fn near(&self, name: &str) -> Vec<String> {
        let mut scored: Vec<(usize, String)> = self
            .all()
            .iter()
            .map(|c| c.name.clone())
            .filter_map(|n| {
                let d = crate::vocab::text::edit_distance(name, &n);
                let close =
                    d <= 2.max(name.len() / 3) || n.starts_with(name) || name.starts_with(&n);
                close.then_some((d, n))
            })
            .collect();
        scored.sort();
        scored.into_iter().take(3).map(|(_, n)| n).collect()
    }
}

impl Unregister for CommandTable {
    fn unregister(&self, id: u64) -> bool {
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        let before = entries.len();
        entries.retain(|c| c.id != id);
        before != entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Reply(&'static str);
    impl CommandHandler for Reply {
        fn call(
            &self,
            _args: &str,
            _ctx: &Arc<RunContext>,
        ) -> BoxFuture<'static, Result<String, CommandError>> {
            let s = self.0.to_string();
            Box::pin(async move { Ok(s) })
        }
    }

    #[test]
    fn parse_lines() {
        assert_eq!(parse_line("/help"), Some(("help", "")));
        assert_eq!(parse_line("  /model  gpt-x "), Some(("model", "gpt-x")));
        assert_eq!(parse_line("hello /x"), None);
        assert_eq!(parse_line("/"), None);
        assert_eq!(parse_line("//comment"), None);
    }

    #[test]
    fn help_lists_every_command_from_the_table() {
        let t = CommandTable::with_builtins();
        let help = t.help();
        for name in ["help", "tools", "model", "new", "session", "quit"] {
            assert!(help.contains(&format!("/{name} ")), "{help}");
        }
        assert!(help.contains("(also /exit, /q)"));
        assert!(help.contains("\n!cmd runs cmd in the shell"), "{help}");
        assert!(
            help.ends_with("\nAnything else is sent to the model."),
            "{help}"
        );
        assert_eq!(t.lookup("exit").unwrap().name, "quit");
    }

    #[test]
    fn unknown_commands_suggest_near_matches() {
        let t = CommandTable::with_builtins();
        let err = t.resolve("hepl").err().unwrap();
        assert_eq!(err.near[0], "help");
        assert!(err.to_string().contains("did you mean /help"));
        let err = t.resolve("zzzzzzzz").err().unwrap();
        assert!(err.to_string().contains("/help lists the commands"));
    }

    #[test]
    fn a_prompt_files_command_shows_its_hint_and_yields_a_taken_name() {
        let t = CommandTable::with_builtins();
        let owner = Owner::new("user prompt", 0);
        let entry = ("fe:card", "Make a card", "<name>");
        assert!(t
            .register_prompt(owner.clone(), entry, Arc::new(Reply("x")))
            .is_ok());
        assert!(
            t.help()
                .contains("  /fe:card <name>  Make a card [user prompt]\n"),
            "{}",
            t.help()
        );
        let taken = t.register_prompt(owner, ("help", "h", ""), Arc::new(Reply("x")));
        assert_eq!(taken.err().as_deref(), Some("/help is taken by core"));
        assert!(matches!(
            t.lookup("help").unwrap().action,
            Action::Builtin(_)
        ));
    }

    #[test]
    fn duplicate_script_commands_stay_reachable() {
        let t = CommandTable::with_builtins();
        let a = t.register(Owner::new("a", 1), "todos", "a", Arc::new(Reply("a")));
        let b = t.register(Owner::new("b", 2), "todos", "b", Arc::new(Reply("b")));
        assert!(a.notice.is_none());
        assert_eq!(b.name, "todos:2");
        assert!(b.notice.unwrap().contains("/todos:2"));
        assert!(b.handle.remove());
        assert!(t.lookup("todos:2").is_none());
        assert_eq!(t.complete("to"), vec!["todos", "tools"]);
        assert_eq!(t.remove_owner(&Owner::new("a", 1)), 1);
    }
}
