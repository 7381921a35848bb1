//! Resolves the configuration from the command line, the environment and the configuration
//! files under it ([`crate::config::settings`]): which provider and model ([`pick`]), the endpoint and
//! key, the mode (REPL, print, JSON), the limits, and where sessions live.
//! Problems are [`ConfigError`]s, which the binary reports with exit code 2.

use std::path::PathBuf;
use std::time::Duration;

use crate::vocab::run::queue::QueueLimits;

pub mod claude_hooks;
pub mod extflags;
pub mod keyguard;
mod limits;
pub mod pick;
mod session_dirs;
pub mod settings;
pub mod sources;
pub mod trust;
pub use limits::{CodeMode, RetryPolicy};
use pick::{load_files, pick_provider};
pub use session_dirs::SessionSources;

/// The provider to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    Faux,
}

impl ProviderKind {
    /// The API's official endpoint (`None` for the offline model).
    pub const fn official_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("https://api.openai.com/v1"),
            ProviderKind::Anthropic => Some("https://api.anthropic.com"),
            ProviderKind::Faux => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Faux => "faux",
        }
    }

    /// The environment variables of its API key and base URL (none for faux).
    pub fn env_vars(self) -> (&'static str, &'static str) {
        match self {
            ProviderKind::OpenAi => ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
            ProviderKind::Anthropic => ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
            ProviderKind::Faux => ("", ""),
        }
    }

    /// `openai`, `anthropic`, `faux`.
    pub fn parse(name: &str) -> Option<ProviderKind> {
        match name {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            "faux" => Some(ProviderKind::Faux),
            _ => None,
        }
    }

    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "gpt-4.1-mini",
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::Faux => "faux",
        }
    }
}

/// What the command line asks for, in the configuration's terms (the `cli` module turns its
/// flags into this, so the configuration does not depend on the argument parser).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `-p`: `Some("")` reads the prompt from standard input.
    pub print: Option<String>,
    pub json: bool,
    /// `mypi acp`: an editor drives mypi over the Agent Client Protocol on stdio.
    pub acp: bool,
    /// `--provider NAME`: a built-in API or a configured provider.
    pub provider: Option<String>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub faux_script: Option<PathBuf>,
    pub continue_session: bool,
    /// `-r/--resume [ID]`: `Some("")` asks which.
    pub resume: Option<String>,
    pub no_session: bool,
    pub extensions_dir: Vec<PathBuf>,
    pub no_extensions: bool,
    pub no_builtin_extensions: bool,
    pub no_watch: bool,
    /// `--max-turns N`.
    pub max_turns: Option<u32>,
    /// `--thinking LEVEL`.
    pub thinking: Option<crate::vocab::thinking::Thinking>,
    /// `--trust`: project code loads without asking, for this run.
    pub trust: bool,
    /// `--mcp-config FILE` (repeatable).
    pub mcp_config: Vec<PathBuf>,
    /// `--no-mcp`.
    pub no_mcp: bool,
}

/// How mypi talks to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Repl,
    /// `mypi acp`: an editor's sessions over the Agent Client Protocol (stdio).
    Acp,
    /// One prompt; `None` means read it from standard input.
    Print {
        prompt: Option<String>,
        json: bool,
    },
}

impl ConfigError {
    /// The variable whose missing key this error is about, if it is one.
    pub fn missing_key_var(&self) -> Option<String> {
        match self {
            ConfigError::MissingOpenAiKey => Some("OPENAI_API_KEY".into()),
            ConfigError::MissingAnthropicKey => Some("ANTHROPIC_API_KEY".into()),
            ConfigError::MissingKey { var, .. } => Some(var.clone()),
            _ => None,
        }
    }
}

/// The configuration could not be resolved.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ConfigError {
    #[error("--provider openai needs an API key: set OPENAI_API_KEY, or pass --base-url for a local server (Ollama, llama.cpp, vLLM) that needs none")]
    MissingOpenAiKey,
    #[error("--provider anthropic needs an API key: set ANTHROPIC_API_KEY")]
    MissingAnthropicKey,
    #[error("{name}={value:?} is not a number of milliseconds")]
    BadNumber { name: &'static str, value: String },
    #[error("{name}={value:?} is not a whole number above 0")]
    BadCount { name: &'static str, value: String },
    #[error("thinking = {0:?} is not a thinking level: the levels are off, minimal, low, medium and high")]
    BadThinking(String),
    #[error(transparent)]
    Settings(#[from] crate::config::settings::SettingsError),
    #[error("unknown provider {name:?}: the providers are openai, anthropic, faux{configured}")]
    UnknownProvider { name: String, configured: String },
    #[error("provider {provider:?} needs an API key: set {var}")]
    MissingKey { provider: String, var: String },
    #[error("{at}: this project's configuration would send your {var} to {host}, a host your own configuration does not name, so mypi stops; if you mean it, move that setting to ~/.agents/config.toml (or pass --base-url / set the *_BASE_URL variable for that host)")]
    KeyToProjectHost {
        /// `file:line` of the project's setting.
        at: String,
        var: String,
        host: String,
    },
    #[error("{from} {url:?} is not an http:// or https:// address; did you mean {suggestion:?}?")]
    BadBaseUrl {
        from: &'static str,
        url: String,
        suggestion: String,
    },
}

/// Everything resolved.
#[derive(Debug, Clone)]
pub struct Config {
    pub provider: ProviderKind,
    /// The provider's name: its API's (`openai`) or a configured one's (`local`).
    pub provider_name: String,
    /// The configuration files that were read.
    pub files: crate::config::settings::Files,
    /// The origins of the endpoints the user named (see [`keyguard::user_hosts`]): where a
    /// project's provider may send a key of the user's.
    pub user_hosts: Vec<String>,
    /// `context_window` (`MYPI_CONTEXT_WINDOW`): the window of every model, overriding what
    /// is known of it.
    pub context_window: Option<u64>,
    /// `max_output_tokens` (`MYPI_MAX_OUTPUT_TOKENS`): the longest reply of every model,
    /// overriding what is known of it.
    pub max_output_tokens: Option<u64>,
    /// `thinking` (`MYPI_THINKING`, `--thinking`): how much the model reasons.
    pub thinking: crate::vocab::thinking::Thinking,
    /// Where this project's sessions are kept (`sessions.dir`; by default
    /// `~/.agents/sessions/<project-folder-slug>/`).
    pub sessions: PathBuf,
    /// `--model` or `--provider` was given: a resumed session does not switch back to its own.
    pub model_from_flag: bool,
    /// `--provider` (or `provider`) names a provider no configuration knows: an extension
    /// may register it (`api.provider`); until they have loaded, the faux model stands in.
    pub provider_pending: bool,
    /// Options the command line gave for extensions (`--NAME[=VALUE]`, see `extflags`).
    pub ext_flags: Vec<crate::config::extflags::Given>,
    pub model: String,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub faux_script: Option<PathBuf>,
    /// True when no provider was configured and mypi fell back to faux.
    pub fell_back_to_faux: bool,
    pub mode: Mode,
    pub continue_session: bool,
    /// `-r/--resume [ID]`: `Some("")` asks which.
    pub resume: Option<String>,
    pub no_session: bool,
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub retry: RetryPolicy,
    /// Where extensions are discovered (empty: none).
    pub extension_roots: Vec<PathBuf>,
    /// Whether the extensions that ship with mypi load (off with `--no-builtin-extensions`
    /// and `--no-extensions`).
    pub builtin_extensions: bool,
    /// `api.log` lines are shown (`MYPI_LOG=1`).
    pub log: bool,
    /// Reload extensions when their files change (REPL only; off with `--no-watch`).
    pub watch: bool,
    /// The time budget of one script call (`MYPI_EXT_BUDGET_MS`, default 1 s).
    pub ext_budget: Duration,
    /// Model turns one run may take (`--max-turns`, `MYPI_MAX_TURNS`, default 50).
    pub max_turns: u32,
    /// Queue sizes and the chain of queued prompts (`MYPI_QUEUE_MAX`, `MYPI_MAX_FOLLOW_UPS`).
    pub queue: QueueLimits,
    /// A model stream with no byte for this long fails (`MYPI_READ_TIMEOUT_S`, default 120).
    pub read_timeout: Duration,
    /// `--trust`: this run trusts the project folder.
    pub trust: bool,
    /// The project folder is trusted at start (`--trust`, the trust list, or it is HOME):
    /// its own session files may be read ([`Config::session_sources`]).
    pub project_trusted: bool,
    /// The project's own extension folder, `<cwd>/.agents/extensions`, when it is one of the
    /// roots (not with `--extensions-dir`, `--no-extensions`, or when cwd is HOME).
    pub project_extensions: Option<PathBuf>,
    /// An extension VM's memory cap (`MYPI_EXT_MEMORY_MB`, default 64).
    pub ext_memory_bytes: usize,
    /// The largest value a script may hand to mypi (`MYPI_EXT_VALUE_MB`, default 16).
    pub ext_value_bytes: usize,
    /// MCP configuration files, later ones winning by server name: `~/.agents/mcp.json`,
    /// the project's `.mcp.json`, then `--mcp-config` files (none with `--no-mcp`).
    pub mcp_files: Vec<PathBuf>,
    /// The project's `.mcp.json` when it is among [`Config::mcp_files`] (it starts processes,
    /// so it is read only in a trusted project).
    pub project_mcp: Option<PathBuf>,
    /// What turned MCP off, as the user names it (`--no-mcp`, `MYPI_MCP=0`, a file's line).
    pub mcp_off: Option<String>,
    /// Characters of the skills list in each request (`[skills] budget`, default 16000).
    pub skills_budget: usize,
    /// MCP tools and bytes offered directly before servers are deferred (`[mcp] direct_*`).
    pub mcp_direct: (usize, usize),
    /// `[code_mode]`: the `code` tool and its scripts' budgets.
    pub code_mode: CodeMode,
}

impl Config {
    /// Resolves the command line's `cli` against environment lookups from `env`.
    pub fn resolve(
        cli: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
        cwd: PathBuf,
    ) -> Result<Config, ConfigError> {
        let real = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let home = real("HOME").map(PathBuf::from);
        let files = load_files(cli, &cwd, home.as_deref())?;
        // The files are the environment's lower layer.
        let var = |k: &str| real(k).or_else(|| files.lookup(k));
        let on = |k: &str| var(k).is_none_or(|v| !matches!(v.trim(), "0" | "false"));
        let mut cli = cli.clone();
        cli.no_extensions |= !on("MYPI_EXTENSIONS");
        cli.no_builtin_extensions |= !on("MYPI_BUILTIN_EXTENSIONS");
        cli.no_watch |= !on("MYPI_WATCH");
        let mcp_off = mcp_off(&cli, &real, &files);
        cli.no_mcp |= mcp_off.is_some();
        let cli = &cli;
        let picked = pick_provider(cli, &real, &files, !cli.no_extensions)?;
        let (provider, fell_back_to_faux, api_key, base_url) = (
            picked.kind,
            picked.fell_back,
            picked.api_key,
            picked.base_url,
        );
        let model = cli
            .model
            .clone()
            .or_else(|| var("MYPI_MODEL"))
            .or(picked.first_model)
            // A provider an extension registers gives its own default once it has.
            .unwrap_or_else(|| match picked.pending {
                true => String::new(),
                false => provider.default_model().to_string(),
            });
        let limits = limits::limits(cli, &var)?;
        let extension_roots = extension_roots(cli, &cwd, home.as_deref());
        let project_extensions = project_root(cli, &cwd, home.as_deref());
        let (mcp_files, project_mcp) = mcp_files(cli, &cwd, home.as_deref());
        let sessions = sessions_dir(var("MYPI_SESSIONS_DIR").as_deref(), &cwd, home.as_deref());
        Ok(Config {
            sessions,
            context_window: limits.context_window,
            max_output_tokens: limits.max_output_tokens,
            thinking: limits.thinking,
            skills_budget: limits.skills_budget,
            mcp_direct: limits.mcp_direct,
            code_mode: limits.code_mode,
            mcp_files,
            project_mcp,
            mcp_off,
            trust: cli.trust,
            project_trusted: pick::project_trusted(cli, &cwd, home.as_deref(), &files),
            project_extensions,
            ext_memory_bytes: limits.ext_memory_bytes,
            ext_value_bytes: limits.ext_value_bytes,
            max_turns: limits.max_turns,
            queue: limits.queue,
            read_timeout: limits.read_timeout,
            extension_roots,
            builtin_extensions: !cli.no_extensions && !cli.no_builtin_extensions,
            log: var("MYPI_LOG").is_some_and(|v| v != "0"),
            provider_name: picked.name,
            provider_pending: picked.pending,
            user_hosts: picked.user_hosts,
            ext_flags: Vec::new(),
            files,
            model_from_flag: cli.model.is_some() || cli.provider.is_some(),
            ext_budget: limits.ext_budget,
            watch: !cli.no_watch,
            provider,
            model,
            base_url,
            api_key,
            faux_script: cli.faux_script.clone(),
            fell_back_to_faux,
            mode: mode(cli),
            continue_session: cli.continue_session,
            resume: cli.resume.clone(),
            no_session: cli.no_session,
            home,
            cwd,
            retry: limits.retry,
        })
    }

    /// Where session files go.
    pub fn sessions_dir(&self) -> PathBuf {
        self.sessions.clone()
    }

    /// Where sessions went before they moved out of the project (`--continue` and `mypi
    /// sessions` still find them), when that is not [`Config::sessions_dir`].
    pub fn legacy_sessions_dir(&self) -> Option<PathBuf> {
        let old = self.cwd.join(".agents").join("sessions");
        (old != self.sessions).then_some(old)
    }

    /// The REPL's history file.
    pub fn history_file(&self) -> Option<PathBuf> {
        self.home
            .as_ref()
            .map(|h| h.join(".agents").join("mypi_history"))
    }
}

/// The folder of this project's sessions: `setting` (`sessions.dir`) is `project` (the
/// project's own `.agents/sessions`) or a folder that holds one folder per project;
/// unset, `~/.agents/sessions` (the project's folder when there is no HOME).
fn sessions_dir(
    setting: Option<&str>,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
) -> PathBuf {
    let project = cwd.join(".agents").join("sessions");
    let root = match (setting.map(str::trim), home) {
        (Some("project"), _) => return project,
        (Some(dir), home) => match (dir.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => cwd.join(dir),
        },
        (None, Some(h)) => h.join(".agents").join("sessions"),
        (None, None) => return project,
    };
    root.join(project_slug(cwd))
}

/// The name of a project's folder of sessions: its path with `/` (and anything outside
/// `[A-Za-z0-9._-]`) as `-`, between `--` (`/home/me/app` is `--home-me-app--`), as pi names them.
pub fn project_slug(cwd: &std::path::Path) -> String {
    let path = cwd.to_string_lossy();
    let inner: String = path
        .trim_start_matches('/')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("--{inner}--")
}

/// REPL, print mode (`-p ""` reads the prompt from standard input) or `mypi acp`.
fn mode(cli: &Overrides) -> Mode {
    if cli.acp {
        return Mode::Acp;
    }
    match &cli.print {
        None => Mode::Repl,
        Some(p) => Mode::Print {
            prompt: (!p.is_empty()).then(|| p.clone()),
            json: cli.json,
        },
    }
}

/// Where extensions are discovered: `--extensions-dir` roots, none with `--no-extensions`,
/// else the project's and the user's `.agents/extensions`.
/// `<cwd>/.agents/extensions` when it is a project root of its own (see
/// [`Config::project_extensions`]).
fn project_root(
    cli: &Overrides,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Option<PathBuf> {
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    };
    let is_home = home.is_some_and(|h| same(h, cwd));
    (!cli.no_extensions && cli.extensions_dir.is_empty() && !is_home)
        .then(|| cwd.join(".agents").join("extensions"))
}

/// What turns MCP off, if anything: `--no-mcp`, then `MYPI_MCP`, then `[mcp] enabled` in a
/// config file (see [`Config::mcp_off`]).
fn mcp_off(
    cli: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    files: &crate::config::settings::Files,
) -> Option<String> {
    let off = |v: &str| matches!(v.trim(), "0" | "false");
    if cli.no_mcp {
        return Some("--no-mcp".into());
    }
    if let Some(v) = env("MYPI_MCP") {
        return off(&v).then(|| format!("MYPI_MCP={}", v.trim()));
    }
    let e = files.entry("mcp.enabled")?;
    off(&e.value).then(|| format!("`enabled = false` in [mcp] at {}", e.source))
}

/// The MCP files to read and which of them is the project's (see [`Config::mcp_files`]).
fn mcp_files(
    cli: &Overrides,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
) -> (Vec<PathBuf>, Option<PathBuf>) {
    if cli.no_mcp {
        return (Vec::new(), None);
    }
    let mut files = Vec::new();
    if let Some(h) = home {
        let user = h.join(".agents").join("mcp.json");
        if user.is_file() {
            files.push(user);
        }
    }
    let project = cwd.join(".mcp.json");
    let is_home = home.is_some_and(|h| h == cwd);
    let project = (!is_home && project.is_file()).then_some(project);
    files.extend(project.clone());
    files.extend(cli.mcp_config.iter().map(|f| cwd.join(f)));
    (files, project)
}

/// The default roots: the project's `.agents/extensions`, then the user's.
pub fn default_roots(cwd: &std::path::Path, home: Option<&std::path::Path>) -> Vec<PathBuf> {
    let mut roots = vec![cwd.join(".agents").join("extensions")];
    if let Some(home) = home {
        let user = home.join(".agents").join("extensions");
        if !roots.contains(&user) {
            roots.push(user);
        }
    }
    roots
}

/// The extension roots the command line asks for.
pub fn extension_roots(
    cli: &Overrides,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Vec<PathBuf> {
    if cli.no_extensions {
        Vec::new()
    } else if !cli.extensions_dir.is_empty() {
        cli.extensions_dir.iter().map(|d| cwd.join(d)).collect()
    } else {
        default_roots(cwd, home)
    }
}

#[cfg(test)]
mod tests;
