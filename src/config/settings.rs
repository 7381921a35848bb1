//! The configuration files: `~/.agents/config.toml` (the user's) and `.agents/config.toml`
//! (the project's, read only in a trusted folder, since it can point mypi at any endpoint and
//! its extensions run code). Layered built-in defaults < user < project < environment <
//! command line: every setting here has an environment variable ([`KEYS`]), and the files
//! are read as a lower layer of the environment ([`Files::lookup`]), so each value is
//! resolved in one place (`config.rs`).
//!
//! ```toml
//! provider = "local"            # openai, anthropic, faux, or a [providers.NAME]
//! model = "qwen2.5-coder"
//! [providers.local]
//! api = "openai"                # the API it speaks: openai or anthropic
//! base_url = "http://localhost:11434/v1"
//! api_key_env = "LOCAL_KEY"     # where its key is (optional)
//! models = ["qwen2.5-coder", { name = "llama3.3", context_window = 131072 }]
//! [extensions]
//! budget_ms = 2000
//! ```
//!
//! A key that is not a setting, or a value of the wrong type, is one error naming the file,
//! line and key, with the nearest key when one is close.

use std::path::{Path, PathBuf};

use toml_edit::{Document, Item, Table, Value};

use crate::config::trust::Listing;
use crate::config::ProviderKind;

/// What a setting holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Str,
    /// A whole number above 0.
    Count,
    /// A whole number, 0 or more.
    Number,
    Bool,
    /// A list of folder paths (`[trust]`, managed by `mypi trust`).
    Paths,
}

/// One setting: its dotted name, type, environment variable and default as shown.
#[derive(Debug)]
pub struct Key {
    pub name: &'static str,
    pub ty: Ty,
    pub env: Option<&'static str>,
    pub default: &'static str,
    /// Only in the user's file (the trust list: a project cannot trust itself).
    pub user_only: bool,
}

const fn key(name: &'static str, ty: Ty, env: &'static str, default: &'static str) -> Key {
    Key {
        name,
        ty,
        env: Some(env),
        default,
        user_only: false,
    }
}

const fn trust(name: &'static str) -> Key {
    Key {
        name,
        ty: Ty::Paths,
        env: None,
        default: "[]",
        user_only: true,
    }
}

/// Every setting a file may hold (besides `[providers.NAME]` tables).
pub const KEYS: &[Key] = &[
    key("provider", Ty::Str, "MYPI_PROVIDER", "(openai with OPENAI_API_KEY or OPENAI_BASE_URL, anthropic with ANTHROPIC_API_KEY, else faux)"),
    key("model", Ty::Str, "MYPI_MODEL", "(the provider's first configured model, else its default)"),
    key("base_url", Ty::Str, "MYPI_BASE_URL", "(the provider's base_url, OPENAI_BASE_URL / ANTHROPIC_BASE_URL, else the official endpoint)"),
    key("max_turns", Ty::Count, "MYPI_MAX_TURNS", "50"),
    key("context_window", Ty::Count, "MYPI_CONTEXT_WINDOW", "(the model's context_window in [providers.NAME], else a table of known models, else 128000)"),
    key("max_output_tokens", Ty::Count, "MYPI_MAX_OUTPUT_TOKENS", "(the model's max_output_tokens in [providers.NAME], else a table of known models, else 8192 for Anthropic and the server's own for others)"),
    key("thinking", Ty::Str, "MYPI_THINKING", "off (off, minimal, low, medium or high; a model with thinking = false in [providers.NAME] never thinks)"),
    key("read_timeout_s", Ty::Count, "MYPI_READ_TIMEOUT_S", "120"),
    key("retry_base_ms", Ty::Number, "MYPI_RETRY_BASE_MS", "500"),
    key("log", Ty::Bool, "MYPI_LOG", "false"),
    key("extensions.enabled", Ty::Bool, "MYPI_EXTENSIONS", "true"),
    key("extensions.builtin", Ty::Bool, "MYPI_BUILTIN_EXTENSIONS", "true"),
    key("extensions.watch", Ty::Bool, "MYPI_WATCH", "true"),
    key("extensions.budget_ms", Ty::Number, "MYPI_EXT_BUDGET_MS", "1000"),
    key("extensions.memory_mb", Ty::Count, "MYPI_EXT_MEMORY_MB", "64"),
    key("extensions.value_mb", Ty::Count, "MYPI_EXT_VALUE_MB", "16"),
    key("queue.max", Ty::Count, "MYPI_QUEUE_MAX", "100"),
    key("queue.max_follow_ups", Ty::Count, "MYPI_MAX_FOLLOW_UPS", "10"),
    key("mcp.enabled", Ty::Bool, "MYPI_MCP", "true"),
    key("mcp.direct_tools", Ty::Count, "MYPI_MCP_DIRECT_TOOLS", "40"),
    key("mcp.direct_kb", Ty::Count, "MYPI_MCP_DIRECT_KB", "20"),
    key("code_mode.enabled", Ty::Bool, "MYPI_CODE_MODE", "(on when an MCP tool is deferred or has code exposure)"),
    key("code_mode.budget_ms", Ty::Count, "MYPI_CODE_BUDGET_MS", "5000"),
    key("code_mode.memory_mb", Ty::Count, "MYPI_CODE_MEMORY_MB", "64"),
    key("code_mode.timeout_s", Ty::Count, "MYPI_CODE_TIMEOUT_S", "300"),
    key("skills.budget", Ty::Count, "MYPI_SKILLS_BUDGET", "16000"),
    key("sessions.dir", Ty::Str, "MYPI_SESSIONS_DIR", "(~/.agents/sessions/<project-folder-slug>; \"project\": .agents/sessions in the project)"),
    trust("trust.folders"),
    trust("trust.trees"),
    trust("trust.denied"),
];

/// The largest configuration file read (anything bigger is a mistake, not a configuration).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The fields of a `[providers.NAME]` table.
const PROVIDER_FIELDS: &[&str] = &["api", "base_url", "api_key_env", "models"];
/// The fields of a model given as a table.
const MODEL_FIELDS: &[&str] = &[
    "name",
    "context_window",
    "max_output_tokens",
    "thinking",
    "input_price",
    "output_price",
    "cache_read_price",
    "cache_write_price",
];

/// A file could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}:{line}: not valid TOML: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{path}:{line}: {message}")]
    Key {
        path: String,
        line: usize,
        message: String,
    },
}

/// A model a configured provider serves, with what is known of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelInfo {
    pub name: String,
    pub context_window: Option<u64>,
    /// The longest reply the model may write, in tokens (sent as `max_tokens`).
    pub max_output_tokens: Option<u64>,
    /// `thinking = false`: the model cannot think, so no thinking parameters are sent.
    pub thinking: Option<bool>,
    /// US dollars per million tokens.
    pub input_price: Option<f64>,
    pub output_price: Option<f64>,
    /// US dollars per million input tokens read from the prompt cache (default: a share of
    /// the input price, see [`crate::vocab::protocol::Prices`]).
    pub cache_read_price: Option<f64>,
    /// US dollars per million input tokens written to the prompt cache.
    pub cache_write_price: Option<f64>,
}

/// A `[providers.NAME]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedProvider {
    pub name: String,
    pub api: ProviderKind,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub models: Vec<ModelInfo>,
    /// `file:line` of its table.
    pub source: String,
    /// It is the project's (`.agents/config.toml`): it may not send a key of the user's to a
    /// host the user did not name ([`crate::config::keyguard`]).
    pub project: bool,
}

/// One setting as a file gives it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub key: &'static Key,
    /// The value as an environment variable would give it (`1`/`0` for booleans).
    pub value: String,
    pub source: String,
    /// It is the project's file's.
    pub project: bool,
}

/// The configuration files read, lowest layer first.
#[derive(Debug, Clone, Default)]
pub struct Files {
    pub entries: Vec<Entry>,
    pub providers: Vec<NamedProvider>,
    /// Said once at start (an untrusted project's file that was not read).
    pub notices: Vec<String>,
    /// The user's file's `[trust]` lists, read with the rest of it (`None`: no user file).
    pub user_trust: Option<Listing>,
}

impl Files {
    /// Reads the user's file (`None`: absent).
    pub fn load_user(user: Option<&Path>) -> Result<Files, SettingsError> {
        let mut files = Files::default();
        if let Some(path) = user.filter(|p| p.exists()) {
            files.read(path, true)?;
        }
        Ok(files)
    }

    /// Reads the project's file when `trusted`, or says it was not read (`None`: absent).
    pub fn load_project(
        &mut self,
        project: Option<&Path>,
        trusted: bool,
    ) -> Result<(), SettingsError> {
        if let Some(path) = project.filter(|p| p.exists()) {
            if trusted {
                self.read(path, false)?;
            } else {
                self.notices.push(format!(
                    "{} is not read: this folder is not trusted (`mypi trust` trusts it)",
                    path.display()
                ));
            }
        }
        Ok(())
    }

    /// The value the files give the environment variable `name` (the last file wins).
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.key.env == Some(name))
            .map(|e| e.value.clone())
    }

    /// Where the files set `key`, and to what.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| e.key.name == key)
    }

    /// The configured provider `name` (a later file's table replaces an earlier one's).
    pub fn provider(&self, name: &str) -> Option<&NamedProvider> {
        self.providers.iter().rev().find(|p| p.name == name)
    }

    fn read(&mut self, path: &Path, user: bool) -> Result<(), SettingsError> {
        let shown = path.display().to_string();
        let fail = |message: String| SettingsError::Read {
            path: shown.clone(),
            message,
        };
        let text = read_capped(path, MAX_FILE_BYTES).map_err(fail)?;
        let doc = Document::parse(text.as_str()).map_err(|e| SettingsError::Parse {
            path: shown.clone(),
            line: line_of(&text, e.span().map_or(0, |s| s.start)),
            message: e.message().to_string(),
        })?;
        if user {
            self.user_trust = Listing::of(doc.as_table(), path).ok();
        }
        let file = FileCtx {
            path: &shown,
            text: &text,
            user,
        };
        walk(&file, doc.as_table(), "", self)
    }
}

/// The text of the regular file `path`, read with bounded memory and time: a FIFO or a device
/// is refused without waiting on it (opened non-blocking), and a file over `cap` bytes is
/// refused with its size, however it grows while read.
pub fn read_capped(path: &Path, cap: u64) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    let too_big =
        |len: u64| format!("it is {len} bytes; a configuration file may have at most {cap}");
    if meta.len() > cap {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > cap {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".into())
}

struct FileCtx<'a> {
    path: &'a str,
    text: &'a str,
    user: bool,
}

impl FileCtx<'_> {
    fn fail(&self, span: Option<usize>, message: String) -> SettingsError {
        SettingsError::Key {
            path: self.path.to_string(),
            line: line_of(self.text, span.unwrap_or(0)),
            message,
        }
    }

    fn at(&self, span: Option<usize>) -> String {
        format!("{}:{}", self.path, line_of(self.text, span.unwrap_or(0)))
    }
}

/// The 1-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The sections a key can be in.
fn is_section(path: &str) -> bool {
    KEYS.iter()
        .any(|k| k.name.starts_with(path) && k.name[path.len()..].starts_with('.'))
}

fn walk(file: &FileCtx, table: &Table, prefix: &str, out: &mut Files) -> Result<(), SettingsError> {
    for (name, item) in table.iter() {
        let span = table.key(name).and_then(|k| k.span()).map(|r| r.start);
        let path = if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        };
        if path == "providers" {
            let Some(providers) = item.as_table_like() else {
                return Err(file.fail(
                    span,
                    "`providers` must be a table of [providers.NAME] tables".into(),
                ));
            };
            for (pname, pitem) in providers.iter() {
                let pspan = providers.key(pname).and_then(|k| k.span()).map(|r| r.start);
                out.providers.push(provider(file, pname, pitem, pspan)?);
            }
            continue;
        }
        if let (Some(sub), true) = (item.as_table(), is_section(&path)) {
            walk(file, sub, &path, out)?;
            continue;
        }
        let Some(key) = KEYS.iter().find(|k| k.name == path) else {
            return Err(file.fail(span, unknown(&path)));
        };
        if key.user_only && !file.user {
            return Err(file.fail(
                span,
                format!("`{path}` belongs in ~/.agents/config.toml: a project cannot trust itself"),
            ));
        }
        let value = typed(key, item).ok_or_else(|| {
            file.fail(
                span,
                format!("`{path}` must be {}, not {}", ty_name(key.ty), shown(item)),
            )
        })?;
        out.entries.push(Entry {
            key,
            value,
            source: file.at(span),
            project: !file.user,
        });
    }
    Ok(())
}

/// The value of `item` for `key`, as an environment variable would say it.
fn typed(key: &Key, item: &Item) -> Option<String> {
    let v = item.as_value()?;
    match key.ty {
        Ty::Str => v.as_str().map(str::to_string),
        Ty::Count => v.as_integer().filter(|n| *n > 0).map(|n| n.to_string()),
        Ty::Number => v.as_integer().filter(|n| *n >= 0).map(|n| n.to_string()),
        Ty::Bool => v.as_bool().map(|b| if b { "1" } else { "0" }.to_string()),
        Ty::Paths => v
            .as_array()
            .filter(|a| a.iter().all(|x| x.as_str().is_some()))
            .map(|a| a.to_string()),
    }
}

fn ty_name(ty: Ty) -> &'static str {
    match ty {
        Ty::Str => "a string",
        Ty::Count => "a whole number above 0",
        Ty::Number => "a whole number (0 or more)",
        Ty::Bool => "true or false",
        Ty::Paths => "a list of folder paths",
    }
}

/// What a value is, for an error message.
fn shown(item: &Item) -> String {
    match item {
        Item::Table(_) | Item::Value(Value::InlineTable(_)) => "a table".into(),
        Item::ArrayOfTables(_) => "an array of tables".into(),
        Item::Value(v) => format!("{}", v.clone().decorated("", "")),
        Item::None => "nothing".into(),
    }
}

/// "unknown key", with the nearest key when one is close.
fn unknown(path: &str) -> String {
    let near = KEYS
        .iter()
        .map(|k| (crate::vocab::text::edit_distance(path, k.name), k.name))
        .filter(|(d, name)| *d <= 3.max(path.len() / 4) || name.ends_with(path))
        .min();
    match near {
        Some((_, name)) => format!("unknown key `{path}`; did you mean `{name}`?"),
        None => format!("unknown key `{path}` (`mypi config` lists the settings)"),
    }
}

/// A `[providers.NAME]` table.
fn provider(
    file: &FileCtx,
    name: &str,
    item: &Item,
    span: Option<usize>,
) -> Result<NamedProvider, SettingsError> {
    let at = |field: &str| format!("providers.{name}.{field}");
    let Some(table) = item.as_table_like() else {
        return Err(file.fail(span, format!("`providers.{name}` must be a table")));
    };
    if ["openai", "anthropic", "faux"].contains(&name) || name.contains('/') {
        return Err(file.fail(
            span,
            format!("`providers.{name}`: that name is taken; choose another"),
        ));
    }
    for (field, _) in table.iter() {
        if !PROVIDER_FIELDS.contains(&field) {
            let fspan = table.key(field).and_then(|k| k.span()).map(|r| r.start);
            let near = PROVIDER_FIELDS
                .iter()
                .min_by_key(|f| crate::vocab::text::edit_distance(field, f))
                .map(|f| format!("; did you mean `{}`?", at(f)))
                .unwrap_or_default();
            return Err(file.fail(fspan, format!("unknown key `{}`{near}", at(field))));
        }
    }
    let text = |field: &str| -> Result<Option<String>, SettingsError> {
        match table.get(field) {
            None => Ok(None),
            Some(i) => i.as_str().map(|s| Some(s.to_string())).ok_or_else(|| {
                file.fail(
                    span,
                    format!("`{}` must be a string, not {}", at(field), shown(i)),
                )
            }),
        }
    };
    let api = match text("api")?.as_deref() {
        Some("openai") => ProviderKind::OpenAi,
        Some("anthropic") => ProviderKind::Anthropic,
        other => {
            return Err(file.fail(
                span,
                format!(
                    "`{}` must be \"openai\" or \"anthropic\"{}",
                    at("api"),
                    other.map(|o| format!(", not {o:?}")).unwrap_or_default()
                ),
            ))
        }
    };
    Ok(NamedProvider {
        name: name.to_string(),
        api,
        base_url: text("base_url")?,
        api_key_env: text("api_key_env")?,
        models: models(file, name, table.get("models"), span)?,
        source: file.at(span),
        project: !file.user,
    })
}

/// `models = ["a", { name = "b", context_window = 8192 }]`.
fn models(
    file: &FileCtx,
    provider: &str,
    item: Option<&Item>,
    span: Option<usize>,
) -> Result<Vec<ModelInfo>, SettingsError> {
    let Some(item) = item else {
        return Ok(Vec::new());
    };
    let what = format!("`providers.{provider}.models` must be a list of model names or {{ name = …, context_window = … }} tables");
    let Some(list) = item.as_array() else {
        return Err(file.fail(span, what));
    };
    let mut out = Vec::new();
    for v in list.iter() {
        let model = match v {
            Value::String(s) => ModelInfo {
                name: s.value().clone(),
                ..ModelInfo::default()
            },
            Value::InlineTable(t) => {
                if let Some((bad, _)) = t.iter().find(|(k, _)| !MODEL_FIELDS.contains(k)) {
                    return Err(file.fail(span, format!("unknown key `{bad}` in a model of `providers.{provider}.models` (the keys are {})", MODEL_FIELDS.join(", "))));
                }
                let num = |k: &str| {
                    t.get(k)
                        .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
                };
                ModelInfo {
                    name: t
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| file.fail(span, what.clone()))?
                        .to_string(),
                    context_window: t
                        .get("context_window")
                        .and_then(Value::as_integer)
                        .and_then(|n| u64::try_from(n).ok()),
                    max_output_tokens: t
                        .get("max_output_tokens")
                        .and_then(Value::as_integer)
                        .and_then(|n| u64::try_from(n).ok())
                        .filter(|n| *n > 0),
                    thinking: t.get("thinking").and_then(Value::as_bool),
                    input_price: num("input_price"),
                    output_price: num("output_price"),
                    cache_read_price: num("cache_read_price"),
                    cache_write_price: num("cache_write_price"),
                }
            }
            _ => return Err(file.fail(span, what)),
        };
        out.push(model);
    }
    Ok(out)
}

/// The user's file.
pub fn user_file(home: Option<&Path>) -> Option<PathBuf> {
    home.map(|h| h.join(".agents").join("config.toml"))
}

/// The project's file.
pub fn project_file(cwd: &Path) -> PathBuf {
    cwd.join(".agents").join("config.toml")
}

mod show;
pub use show::effective;

#[cfg(test)]
mod tests;
