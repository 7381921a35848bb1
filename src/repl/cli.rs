//! The command line (section 6 of the design doc), as a clap derive. Parsing only: turning it
//! into a configuration is `config.rs`'s job.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::Overrides;

/// mypi: a coding agent customised by Lua and Rhai scripts.
#[derive(Debug, Parser)]
#[command(name = "mypi", version, about, long_about = None)]
pub struct Cli {
    /// `--NAME[=VALUE]` options for extensions, taken out before parsing (`extflags`).
    #[arg(skip)]
    pub ext_flags: Vec<crate::config::extflags::Given>,

    /// Run one prompt (or /command), print the final answer and exit. Without PROMPT, the
    /// prompt is read from standard input.
    #[arg(short = 'p', long = "print", value_name = "PROMPT", num_args = 0..=1, default_missing_value = "")]
    pub print: Option<String>,

    /// With -p: print every agent event as one JSON object per line.
    #[arg(long, requires = "print")]
    pub json: bool,

    /// The prompt of -p given after other options (`mypi -p --json "hello"`).
    #[arg(value_name = "PROMPT", requires = "print")]
    pub prompt: Option<String>,

    /// Model API: openai (any Chat Completions server), anthropic, faux (offline), or a
    /// provider named in a config file's [providers.NAME]. Default: `provider` in the config
    /// (MYPI_PROVIDER), else openai when OPENAI_API_KEY or OPENAI_BASE_URL is set, else
    /// anthropic when ANTHROPIC_API_KEY is set, else faux.
    #[arg(long, value_name = "NAME", global = true)]
    pub provider: Option<String>,

    /// Model id (default: MYPI_MODEL, else the provider's default).
    #[arg(long, value_name = "NAME", global = true)]
    pub model: Option<String>,

    /// API endpoint (default: OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the official one).
    #[arg(long, value_name = "URL", global = true)]
    pub base_url: Option<String>,

    /// Replies for the faux model: a JSONL file, one reply per line.
    #[arg(long, value_name = "FILE", global = true)]
    pub faux_script: Option<PathBuf>,

    /// Resume the latest session in this folder (when another mypi has it open, start a new
    /// session instead).
    #[arg(long = "continue", short = 'c')]
    pub continue_session: bool,

    /// Resume the session whose id is ID or starts with it; without ID, list this project's
    /// sessions and ask which (REPL).
    #[arg(short = 'r', long, value_name = "ID", num_args = 0..=1, default_missing_value = "",
          conflicts_with_all = ["continue_session", "no_session"])]
    pub resume: Option<String>,

    /// Write no session file.
    #[arg(long, conflicts_with = "continue_session")]
    pub no_session: bool,

    /// Load extensions from DIR instead of .agents/extensions and ~/.agents/extensions
    /// (repeatable).
    #[arg(long = "extensions-dir", value_name = "DIR", global = true)]
    pub extensions_dir: Vec<PathBuf>,

    /// Load no extensions (neither discovered nor shipped).
    #[arg(long, conflicts_with = "extensions_dir", global = true)]
    pub no_extensions: bool,

    /// Do not load the extensions that ship with mypi (the subagent tool).
    #[arg(long, global = true)]
    pub no_builtin_extensions: bool,

    /// Do not reload extensions when their files change.
    #[arg(long, global = true)]
    pub no_watch: bool,

    /// Trust this project folder for this run: load its .agents/extensions without asking.
    #[arg(long, global = true)]
    pub trust: bool,

    /// Read MCP servers from FILE too (the `mcpServers` shape; repeatable; later files win
    /// by server name over ~/.agents/mcp.json and the project's .mcp.json).
    #[arg(long = "mcp-config", value_name = "FILE", global = true)]
    pub mcp_config: Vec<PathBuf>,

    /// Start no MCP servers.
    #[arg(long, conflicts_with = "mcp_config", global = true)]
    pub no_mcp: bool,

    /// Stop a run after N model turns (default: MYPI_MAX_TURNS, else 50).
    #[arg(long, value_name = "N", global = true)]
    pub max_turns: Option<u32>,

    /// How much the model reasons before it answers: off, minimal, low, medium or high
    /// (default: `thinking` in the config, MYPI_THINKING, else off).
    #[arg(long, value_name = "LEVEL", global = true,
          value_parser = clap::builder::PossibleValuesParser::new(crate::vocab::thinking::LEVELS))]
    pub thinking: Option<String>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The command to parse `args` (the command line after `extflags::split_for`) with:
    /// `command` itself when `args` name a subcommand (or `help`), else `command` with the
    /// `global` options made plain. A global option is copied into every subcommand when
    /// clap builds the command (13 options into 6 subcommands: about a sixth of a start's
    /// instructions), which only a command line naming a subcommand needs; without one, a
    /// global option parses as the plain option it is at the top level.
    fn command_for(command: clap::Command, args: &[std::ffi::OsString]) -> clap::Command {
        let names_one = args
            .iter()
            .skip(1)
            .any(|a| a == "help" || command.find_subcommand(a).is_some());
        if names_one {
            command
        } else {
            command.mut_args(|a| a.global(false))
        }
    }

    /// Parses `args` (`argv[0]` first) with `command` (`Cli::command()`, which start-up also
    /// splits the extensions' options with): the answers of `Cli::try_parse_from`, faster.
    pub fn parse_with(
        command: clap::Command,
        args: &[std::ffi::OsString],
    ) -> Result<Self, clap::Error> {
        Self::command_for(command, args)
            .try_get_matches_from(args)
            // `_mut` takes the values out of the matches instead of cloning them all.
            .and_then(|mut m| <Self as clap::FromArgMatches>::from_arg_matches_mut(&mut m))
    }

    /// What clap cannot check: a prompt given both to -p and after the options.
    pub fn checked(self) -> Result<Self, clap::Error> {
        match (&self.print, &self.prompt) {
            (Some(p), Some(later)) if !p.is_empty() => {
                Err(<Cli as clap::CommandFactory>::command().error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!(
                        "two prompts: '{p}' (after -p) and '{later}'; quote the whole prompt as one argument"
                    ),
                ))
            }
            _ => Ok(self),
        }
    }

    /// What the flags ask of the configuration.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            print: match (&self.print, &self.prompt) {
                (Some(p), Some(later)) if p.is_empty() => Some(later.clone()),
                (print, _) => print.clone(),
            },
            json: self.json,
            acp: matches!(self.command, Some(Command::Acp)),
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            faux_script: self.faux_script.clone(),
            continue_session: self.continue_session,
            resume: self.resume.clone(),
            no_session: self.no_session,
            extensions_dir: self.extensions_dir.clone(),
            no_extensions: self.no_extensions,
            no_builtin_extensions: self.no_builtin_extensions,
            no_watch: self.no_watch,
            max_turns: self.max_turns,
            thinking: self
                .thinking
                .as_deref()
                .and_then(crate::vocab::thinking::Thinking::parse),
            trust: self.trust,
            mcp_config: self.mcp_config.clone(),
            no_mcp: self.no_mcp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options extensions may not declare are exactly the command line's.
    #[test]
    fn the_own_options_list_is_the_command_lines() {
        let command = <Cli as clap::CommandFactory>::command();
        let mut longs = crate::config::extflags::names_of(&command);
        longs.sort();
        let mut own = crate::config::extflags::own_names();
        own.sort();
        assert_eq!(own, longs);
    }

    #[test]
    fn the_prompt_may_come_after_other_options() {
        let cli = Cli::try_parse_from(["mypi", "-p", "--json", "hello there"]).unwrap();
        let o = cli.overrides();
        assert_eq!(o.print.as_deref(), Some("hello there"));
        assert!(o.json);
        let cli = Cli::try_parse_from(["mypi", "-p", "first"]).unwrap();
        assert_eq!(cli.overrides().print.as_deref(), Some("first"));
        let two = Cli::try_parse_from(["mypi", "-p", "first", "second"]).unwrap();
        let e = two.checked().unwrap_err();
        assert!(e.to_string().contains("two prompts"), "{e}");
        assert!(Cli::try_parse_from(["mypi", "hello"]).is_err());
        let cli = Cli::try_parse_from(["mypi", "sessions"]).unwrap();
        assert!(cli.command.is_some());
    }

    #[test]
    fn thinking_takes_a_level_and_a_bad_one_names_the_levels() {
        use crate::vocab::thinking::Thinking;
        let cli = Cli::try_parse_from(["mypi", "--thinking", "high"]).unwrap();
        assert_eq!(cli.overrides().thinking, Some(Thinking::High));
        assert_eq!(
            Cli::try_parse_from(["mypi"]).unwrap().overrides().thinking,
            None
        );
        let e = Cli::try_parse_from(["mypi", "--thinking", "max"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
        let text = e.to_string();
        assert!(text.contains("off, minimal, low, medium, high"), "{text}");
    }

    #[test]
    fn json_needs_print_and_flags_become_overrides() {
        assert!(Cli::try_parse_from(["mypi", "--json"]).is_err());
        let cli = Cli::try_parse_from(["mypi", "-p", "--json", "--provider", "anthropic"]).unwrap();
        let o = cli.overrides();
        assert_eq!(o.print.as_deref(), Some(""));
        assert!(o.json);
        assert_eq!(o.provider.as_deref(), Some("anthropic"));
    }

    /// What `parse_with` answers for `args`, as text: the parsed command line, or the error's
    /// kind and message.
    fn answer(args: &[&str], lean: bool) -> String {
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let parsed = if lean {
            Cli::parse_with(<Cli as clap::CommandFactory>::command(), &args)
        } else {
            Cli::try_parse_from(&args)
        };
        match parsed {
            Ok(cli) => format!("{cli:?}"),
            Err(e) => format!("{:?}: {}", e.kind(), e.render()),
        }
    }

    /// The lean parse (global options plain when no subcommand is named) answers every kind
    /// of command line as clap's own does: options before and after a subcommand, nested
    /// subcommands, a subcommand's name as a value, help, typos, bad values and conflicts.
    #[test]
    fn the_lean_parse_answers_as_clap_does() {
        let lines: &[&[&str]] = &[
            &["mypi"],
            &[
                "mypi",
                "-p",
                "hi",
                "--provider",
                "faux",
                "--no-session",
                "--no-extensions",
            ],
            &[
                "mypi",
                "-p",
                "--json",
                "x",
                "--model",
                "m",
                "--thinking",
                "low",
            ],
            &[
                "mypi",
                "--mcp-config",
                "a.json",
                "--mcp-config",
                "b.json",
                "--trust",
            ],
            &["mypi", "-p", "config"],
            &["mypi", "-p", "acp", "--model", "m"],
            &["mypi", "--model", "m", "acp"],
            &[
                "mypi",
                "acp",
                "--model",
                "m",
                "--no-mcp",
                "--max-turns",
                "3",
            ],
            &["mypi", "mcp", "list", "--mcp-config", "a.json"],
            &["mypi", "ext", "check", "x.lua", "--extensions-dir", "d"],
            &["mypi", "trust", "--list", "--trust"],
            &["mypi", "sessions", "--json"],
            &["mypi", "--help"],
            &["mypi", "-h", "--model", "m"],
            &["mypi", "help"],
            &["mypi", "help", "acp"],
            &["mypi", "acp", "--help"],
            &["mypi", "--version"],
            &["mypi", "sesions"],
            &["mypi", "hello"],
            &["mypi", "--modle", "m"],
            &["mypi", "--thinking", "max"],
            &["mypi", "acp", "--thinking", "max"],
            &["mypi", "--max-turns", "many"],
            &["mypi", "--no-mcp", "--mcp-config", "a.json"],
            &["mypi", "config", "--no-extensions", "--extensions-dir", "d"],
            &["mypi", "-c", "--no-session"],
            &["mypi", "--json"],
            &["mypi", "--", "acp"],
        ];
        for line in lines {
            assert_eq!(answer(line, true), answer(line, false), "{line:?}");
        }
        // Not vacuous: a global option after a subcommand parses, and one the top level
        // lacks is refused at the top level.
        assert!(answer(&["mypi", "acp", "--model", "m"], true).contains("Some(\"m\")"));
        assert!(answer(&["mypi", "--modle", "m"], true).starts_with("UnknownArgument"));
    }

    /// A deferred subcommand's own help says what its line in `mypi --help` says.
    #[test]
    fn a_subcommands_help_says_what_its_line_says() {
        let abouts = |c: &clap::Command| -> Vec<String> {
            c.get_subcommands()
                .map(|s| {
                    format!(
                        "{}: {:?}",
                        s.get_name(),
                        s.get_about().map(|a| a.to_string())
                    )
                })
                .collect()
        };
        let mut command = <Cli as clap::CommandFactory>::command();
        let listed = abouts(&command);
        command.build();
        let built = abouts(&command);
        // Building adds clap's own `help` subcommand at the end.
        assert_eq!(listed, built[..built.len() - 1]);
        assert!(listed.iter().all(|l| !l.ends_with("None")), "{listed:?}");
    }

    #[test]
    fn mcp_flags_are_taken_after_a_subcommand_too() {
        let cli = Cli::try_parse_from(["mypi", "mcp", "list", "--mcp-config", "a.json"]).unwrap();
        assert_eq!(cli.mcp_config, [PathBuf::from("a.json")]);
        assert!(matches!(
            cli.command,
            Some(Command::Mcp {
                action: McpAction::List
            })
        ));
        let cli = Cli::try_parse_from(["mypi", "config", "--no-mcp"]).unwrap();
        assert!(cli.no_mcp);
    }
}

/// Subcommands. `defer`: a subcommand's own options are made only when it is used (or its
/// help shown), not at every start.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Work with extension scripts.
    Ext {
        #[command(subcommand)]
        action: ExtAction,
    },
    /// Work with MCP servers.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Serve an editor over the Agent Client Protocol (JSON-RPC on stdin and stdout): Zed,
    /// JetBrains IDEs, Neovim and Emacs clients start `mypi acp` as their agent. Takes the
    /// model and project options (--provider, --model, --trust, --no-extensions, ...).
    Acp,
    /// List this project's sessions, newest first: id, time, turns, model, first prompt.
    Sessions,
    /// Print the effective configuration: every setting with the flag, environment
    /// variable, file and line, or default it came from.
    Config,
    /// Trust a project folder, so its own extensions load (the answer is kept in
    /// ~/.agents/config.toml); --list shows the trusted folders, --revoke forgets one.
    Trust(TrustArgs),
}

// A deferred subcommand's own help (`mypi trust --help`) comes from its type's doc, its line
// in `mypi --help` from the variant's: the two say the same.
/// Trust a project folder, so its own extensions load (the answer is kept in
/// ~/.agents/config.toml); --list shows the trusted folders, --revoke forgets one
#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// The project folder (default: the current folder).
    pub path: Option<PathBuf>,
    /// List the trusted (and refused) folders.
    #[arg(long, conflicts_with_all = ["revoke", "children"])]
    pub list: bool,
    /// Forget PATH: its project code is not loaded until it is trusted again.
    #[arg(long, conflicts_with = "children")]
    pub revoke: bool,
    /// Trust PATH and every folder below it.
    #[arg(long)]
    pub children: bool,
}

/// Work with MCP servers.
#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Connect to every configured server (no extensions, no model) and show each one's
    /// state; exit 1 if an enabled server failed or a config file or entry is unusable, 2 if
    /// that leaves no server. A server behind OAuth without a login shows "needs login".
    List,
    /// Sign in to the HTTP server NAME (OAuth): opens the browser (and prints the URL),
    /// waits up to 5 minutes for the answer (Ctrl-C ends it), keeps the token in
    /// ~/.agents/mcp-auth/ (mode 0600).
    Login { name: String },
    /// Delete the stored token of server NAME.
    Logout { name: String },
}

/// Work with extension scripts.
#[derive(Debug, Subcommand)]
pub enum ExtAction {
    /// Load extensions without starting the agent and print what each registered or its
    /// error (exit 1 if any failed). PATHs are files or folders; default: the extension roots.
    Check { paths: Vec<PathBuf> },
    /// List the extensions that would be loaded.
    List,
    /// Write the editor stubs (LuaLS annotations of the script API) to DIR/_types/mypi.lua
    /// and a .luarc.json pointing at them (default DIR: .agents/extensions).
    Types { dir: Option<PathBuf> },
}
