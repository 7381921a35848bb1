//! The `mypi` binary: parse the command line, resolve the configuration, build the app, run
//! the REPL or print mode, and map the outcome to an exit code (0 ok, 1 the prompt failed,
//! 2 bad usage or configuration).

use std::sync::Arc;

use mypi::app::{check, App};
use mypi::config::{Config, Mode};
use mypi::repl;
use mypi::repl::cli::{Cli, Command, ExtAction, McpAction};
use mypi::repl::render::{stderr_line, stdout_line, Printer};
use mypi::vocab::protocol::AgentEvent;

fn main() {
    if std::env::args_os().nth(1).as_deref() == Some(mypi::platform::process::reaper::ARG.as_ref())
    {
        mypi::platform::process::reaper::serve();
    }
    // Every child process group mypi starts is killed by the reaper if mypi dies unawares.
    mypi::platform::process::reaper::enable();
    // clap's command is built once, for the split and the parse.
    let command = <Cli as clap::CommandFactory>::command();
    let (args, ext_flags) =
        mypi::config::extflags::split_for(&command, std::env::args_os().collect());
    let parsed = Cli::parse_with(command, &args).and_then(Cli::checked);
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            let _ = e.print();
            // The other options say where extensions are (--extensions-dir, --trust, ...).
            let rest: Vec<_> = args
                .iter()
                .filter(|a| *a != "-h" && *a != "--help")
                .cloned()
                .collect();
            let overrides = Cli::parse_with(<Cli as clap::CommandFactory>::command(), &rest)
                .map(|c| c.overrides())
                .unwrap_or_default();
            stdout_line(extension_help(&overrides).trim_end());
            std::process::exit(0);
        }
        Err(e) => e.exit(),
    };
    let cli = Cli { ext_flags, ..cli };
    let code = std::panic::catch_unwind(|| run(cli)).unwrap_or(101);
    // Exit runs no destructors: whatever child is still alive (an `api.exec` in an
    // extension's thread, say) is killed here.
    mypi::platform::process::kill_all();
    mypi::platform::stdio::restore_terminal();
    std::process::exit(code);
}

/// The options extensions declare, for `mypi --help` (the project's own only when it is
/// trusted).
fn extension_help(overrides: &mypi::config::Overrides) -> String {
    let Ok(cwd) = std::env::current_dir() else {
        return String::new();
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let mut roots = mypi::config::extension_roots(overrides, &cwd, home.as_deref());
    if !overrides.trust {
        if let Some(root) = mypi::app::untrusted_project_root(&cwd, home.as_deref()) {
            roots.retain(|r| r != &root);
        }
    }
    let Some(runtime) = runtime() else {
        return String::new();
    };
    let builtins = !overrides.no_extensions && !overrides.no_builtin_extensions;
    let flags = runtime.block_on(check::declared_flags(&roots, cwd, builtins));
    mypi::config::extflags::help(&flags)
}

/// Options neither mypi nor any extension it could load declares are an error before
/// anything else is printed (a mistyped `--modle`). The extensions are read in check mode,
/// which runs nothing they ask for; the check after they load stays the one that counts.
fn early_flag_check(config: &Config, runtime: &tokio::runtime::Runtime) -> Result<(), String> {
    if config.ext_flags.is_empty() {
        return Ok(());
    }
    let declared = runtime.block_on(check::declared_flags(
        &config.extension_roots,
        config.cwd.clone(),
        config.builtin_extensions,
    ));
    mypi::config::extflags::check(&config.ext_flags, &declared)
}

/// Runs a subcommand that needs no agent (`ext`, `trust`, `config`, `sessions`, `mcp`): its
/// exit code; `None` for the agent's own modes.
fn run_subcommand(cli: &Cli, cwd: &std::path::Path) -> Option<i32> {
    Some(match &cli.command {
        Some(Command::Ext { action }) => run_ext(action, cli, cwd.to_path_buf()),
        Some(Command::Trust(args)) => run_trust(args, cwd),
        Some(Command::Config) => run_config(cli, cwd.to_path_buf()),
        Some(Command::Sessions) => run_sessions(cli, cwd.to_path_buf()),
        Some(Command::Mcp {
            action: McpAction::List,
        }) => run_mcp_list(cli, cwd.to_path_buf()),
        Some(Command::Mcp {
            action: McpAction::Login { name },
        }) => run_mcp_login(cli, cwd.to_path_buf(), name),
        Some(Command::Mcp {
            action: McpAction::Logout { name },
        }) => {
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            let (text, code) = mypi::app::mcp_login::logout_command(home.as_deref(), name);
            stdout_line(&text);
            code
        }
        Some(Command::Acp) | None => return None,
    })
}

/// What `--json` prints when a signal stops it: it ends with a closing event however it
/// ends. `None` in the other modes.
fn last_words(mode: &Mode) -> Option<mypi::platform::signals::LastWords> {
    match mode {
        Mode::Print { json: true, .. } => Some(Box::new(|name: &str| {
            let event = AgentEvent::Error {
                message: format!("stopped by {name}"),
            };
            if let Ok(line) = serde_json::to_string(&event) {
                mypi::repl::render::json_line(&line);
            }
        })),
        _ => None,
    }
}

fn run(cli: Cli) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            stderr_line(&format!("mypi: cannot read the current folder: {e}"));
            return 1;
        }
    };
    if let Some(code) = run_subcommand(&cli, &cwd) {
        return code;
    }
    let mut config = match Config::resolve(&cli.overrides(), &|k| std::env::var(k).ok(), cwd) {
        Ok(c) => c,
        Err(e) => {
            stderr_line(&format!("mypi: {e}"));
            return 2;
        }
    };
    config.ext_flags = cli.ext_flags.clone();
    for notice in &config.files.notices {
        stderr_line(&format!("mypi: {notice}"));
    }
    let Some(runtime) = runtime() else {
        return 1;
    };
    if let Err(e) = early_flag_check(&config, &runtime) {
        stderr_line(&format!("mypi: {e}"));
        return 2;
    }
    if config.mode == Mode::Acp {
        let overrides = cli.overrides();
        return runtime.block_on(async move {
            if let Err(e) = mypi::platform::signals::install(true, None) {
                stderr_line(&format!("mypi: cannot watch for signals: {e}"));
            }
            tokio::spawn(Box::pin(repl::run_acp(config, overrides)))
                .await
                .unwrap_or_else(|e| {
                    stderr_line(&format!("mypi: internal error: {e}"));
                    1
                })
        });
    }
    // The front end runs as a task on the runtime's worker rather than on this thread: a
    // worker that waits for an extension's reply parks the way the runtime does, which makes
    // the round trip about twice as fast as from `block_on`'s thread.
    let repl = config.mode == Mode::Repl;
    let last_words = last_words(&config.mode);
    if repl {
        mypi::platform::stdio::save_terminal();
    }
    let app = async move {
        let printer = Printer::new();
        let outlet = outlet_for(&config.mode, &printer);
        let repl_mode = config.mode == Mode::Repl;
        let app = match App::build(config, outlet) {
            Ok(app) => app,
            Err(e) => {
                stderr_line(&format!("mypi: {e}"));
                return e.exit_code();
            }
        };
        // Each mode's future on the heap: the REPL's is ~13 KiB, and a future held inline is
        // copied (and its stack pages touched) at every move on the way to its worker.
        if repl_mode {
            Box::pin(repl::run_repl(app, printer)).await
        } else {
            Box::pin(repl::run_print(app)).await
        }
    };
    runtime.block_on(async move {
        if let Err(e) = mypi::platform::signals::install(!repl, last_words) {
            stderr_line(&format!("mypi: cannot watch for signals: {e}"));
        }
        match tokio::spawn(app).await {
            Ok(code) => code,
            Err(e) => {
                stderr_line(&format!("mypi: internal error: {e}"));
                1
            }
        }
    })
}

/// The front end's outlet for what happens outside a run: JSON events in `--json` mode,
/// stderr in print mode, `!` lines in the REPL.
fn outlet_for(mode: &Mode, printer: &Arc<Printer>) -> Arc<dyn mypi::agent::EventSink> {
    use mypi::repl::render::{JsonSink, OutletSink, PrintSink};
    match mode {
        Mode::Print { json: true, .. } => Arc::new(JsonSink),
        Mode::Print { .. } => Arc::new(PrintSink),
        Mode::Repl | Mode::Acp => Arc::new(OutletSink(printer.clone())),
    }
}

/// `mypi sessions`: this project's sessions, newest first.
fn run_sessions(cli: &Cli, cwd: std::path::PathBuf) -> i32 {
    let config = match Config::resolve(&cli.overrides(), &|k| std::env::var(k).ok(), cwd) {
        Ok(c) => c,
        Err(e) => {
            stderr_line(&format!("mypi: {e}"));
            return 2;
        }
    };
    let (sessions, skipped) = mypi::agent::session::list::readable(&config.session_sources());
    if let Some(skipped) = skipped {
        stderr_line(&format!("mypi: {skipped}"));
    }
    if sessions.is_empty() {
        stdout_line(&format!(
            "No sessions of this project yet (they go in {}).",
            config.sessions_dir().display()
        ));
        return 0;
    }
    let width = mypi::repl::style::terminal_width().unwrap_or(120);
    for s in &sessions {
        stdout_line(&mypi::agent::session::list::line(s, width));
    }
    stdout_line("Resume one with: mypi --resume ID (a unique start of the id is enough)");
    0
}

/// `mypi config`: the effective configuration (exit 2 when it does not resolve).
fn run_config(cli: &Cli, cwd: std::path::PathBuf) -> i32 {
    let env = |k: &str| std::env::var(k).ok();
    let overrides = cli.overrides();
    let mut resolved = Config::resolve(&overrides, &env, cwd.clone());
    // A missing key is what `mypi config` is run to find out about: print the settings, and
    // mark it.
    let mut missing = None;
    let missing_var = resolved.as_ref().err().and_then(|e| {
        missing = Some(format!("# {e}"));
        e.missing_key_var()
    });
    match missing_var {
        Some(var) => {
            let stand_in = |k: &str| {
                if k == var {
                    Some("unset".into())
                } else {
                    env(k)
                }
            };
            resolved = Config::resolve(&overrides, &stand_in, cwd);
        }
        None => missing = None,
    }
    match resolved {
        Ok(config) => {
            if let Some(line) = missing {
                stdout_line(&line);
            }
            stdout_line(&mypi::config::settings::effective(
                &overrides,
                &env,
                &config.files,
            ));
            stdout_line(&format!(
                "# using {} ({}) with model {}{}",
                config.provider_name,
                config.provider.name(),
                config.model,
                config
                    .base_url
                    .as_ref()
                    .map(|u| format!(" at {u}"))
                    .unwrap_or_default()
            ));
            0
        }
        Err(e) => {
            stderr_line(&format!("mypi: {e}"));
            2
        }
    }
}

/// `mypi mcp list`: no extensions, no model; the project's `.mcp.json` only when the folder
/// is trusted (or `--trust`).
/// The configuration `mypi mcp ...` reads: the MCP files, the project's only when trusted.
fn mcp_config(cli: &Cli, cwd: std::path::PathBuf) -> Result<Config, i32> {
    let mut config = match Config::resolve(&cli.overrides(), &|k| std::env::var(k).ok(), cwd) {
        Ok(c) => c,
        Err(e) => {
            stderr_line(&format!("mypi: {e}"));
            return Err(2);
        }
    };
    if let Some(project) = config.project_mcp.clone() {
        let trusted = config.trust
            || mypi::config::trust::TrustStore::in_home(config.home.as_deref())
                .and_then(|s| s.decision(&config.cwd))
                .is_ok_and(|d| d == mypi::config::trust::Decision::Trusted);
        if !trusted {
            stderr_line(&format!(
                "mypi: {} skipped: the folder is not trusted (pass --trust, or run `mypi trust`)",
                project.display()
            ));
            config.mcp_files.retain(|f| f != &project);
        }
    }
    Ok(config)
}

fn run_mcp_list(cli: &Cli, cwd: std::path::PathBuf) -> i32 {
    let config = match mcp_config(cli, cwd) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some(runtime) = runtime() else {
        return 1;
    };
    let (text, code) = runtime.block_on(mypi::app::mcp::list(
        &config.mcp_files,
        config.project_mcp.as_deref(),
        config.cwd,
        config.home.as_deref(),
        config.mcp_off.as_deref(),
    ));
    stdout_line(&text);
    code
}

/// `mypi mcp login NAME`.
fn run_mcp_login(cli: &Cli, cwd: std::path::PathBuf, name: &str) -> i32 {
    let config = match mcp_config(cli, cwd) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some(runtime) = runtime() else {
        return 1;
    };
    let (text, code) = runtime.block_on(mypi::app::mcp_login::login_command(
        &config.mcp_files,
        config.project_mcp.as_deref(),
        config.home.as_deref(),
        name,
    ));
    match code {
        0 => stdout_line(&text),
        _ => stderr_line(&format!("mypi: {text}")),
    }
    code
}

/// `mypi trust [PATH] [--list | --revoke | --children]`.
fn run_trust(args: &mypi::repl::cli::TrustArgs, cwd: &std::path::Path) -> i32 {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let store = match mypi::config::trust::TrustStore::in_home(home.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            stderr_line(&format!("mypi: {e}"));
            return 2;
        }
    };
    let folder = args
        .path
        .as_ref()
        .map_or(cwd.to_path_buf(), |p| cwd.join(p));
    let outcome = if args.list {
        store.list().map(|l| {
            let mut lines = Vec::new();
            for (what, paths) in [
                ("trusted", &l.folders),
                ("trusted with its children", &l.trees),
                ("not trusted", &l.denied),
            ] {
                lines.extend(paths.iter().map(|p| format!("{what}: {}", p.display())));
            }
            if lines.is_empty() {
                lines.push(format!(
                    "no folder is trusted yet ({})",
                    store.path().display()
                ));
            }
            lines.join("\n")
        })
    } else if args.revoke {
        store.revoke(&folder).map(|found| match found {
            true => format!("{} is no longer trusted", folder.display()),
            false => format!("{} was not in the trust settings", folder.display()),
        })
    } else {
        store
            .trust(&folder, args.children)
            .map(|p| match args.children {
                true => format!("trusted {} and every folder below it", p.display()),
                false => format!("trusted {}", p.display()),
            })
    };
    match outcome {
        Ok(text) => {
            stdout_line(&text);
            0
        }
        Err(e) => {
            stderr_line(&format!("mypi: {e}"));
            2
        }
    }
}

/// `mypi ext check|list`: no agent, no provider.
fn run_ext(action: &ExtAction, cli: &Cli, cwd: std::path::PathBuf) -> i32 {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let mut configured = mypi::config::extension_roots(&cli.overrides(), &cwd, home.as_deref());
    if cli.extensions_dir.is_empty() && !cli.trust {
        if let Some(root) = mypi::app::untrusted_project_root(&cwd, home.as_deref()) {
            if configured.contains(&root) {
                stderr_line(&format!(
                    "mypi: {} skipped: the folder is not trusted (pass --trust, or run `mypi trust`)",
                    root.display()
                ));
                configured.retain(|r| r != &root);
            }
        }
    }
    let builtins = !cli.no_extensions && !cli.no_builtin_extensions;
    match action {
        ExtAction::List => {
            stdout_line(&check::list(&configured, builtins, &cwd));
            0
        }
        ExtAction::Types { dir } => {
            let dir = cwd.join(
                dir.as_deref()
                    .unwrap_or(std::path::Path::new(".agents/extensions")),
            );
            match mypi::app::types::write_types(&dir) {
                Ok(lines) => {
                    stdout_line(&check::relative_to(&lines.join("\n"), &cwd));
                    0
                }
                Err(e) => {
                    stderr_line(&format!("mypi: {e}"));
                    1
                }
            }
        }
        ExtAction::Check { paths } => {
            let explicit = !paths.is_empty();
            let roots: Vec<_> = if explicit {
                paths.iter().map(|p| cwd.join(p)).collect()
            } else {
                configured
            };
            let Some(runtime) = runtime() else {
                return 1;
            };
            let trusted = mypi::app::folder_trusted(&cwd, home.as_deref(), cli.trust);
            let builtins = builtins && !explicit;
            let (report, ok) =
                runtime.block_on(check::check(&roots, cwd, explicit, builtins, trusted));
            stdout_line(&report);
            i32::from(!ok)
        }
    }
}

/// The async runtime; `None` after saying why it could not start. One worker: scripts run on
/// threads of their own, the blocking pool takes file work, and the front end's task is what
/// the worker runs (see above), so a second worker mostly woke to find nothing to steal. One
/// worker is a thread, a malloc arena and cross-thread wake-ups fewer: in
/// `benches/scripts/bench-lean.py`, start-up -6 to -7 % and a print task's CPU -12 % against
/// two; 100 extensions' load within the noise.
fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        // Address space, not memory (pages are touched only as deep as a call goes): room for
        // a debug build's large futures, which a 2 MiB stack overflowed once.
        .thread_stack_size(8 * 1024 * 1024)
        .enable_all()
        .build()
    {
        Ok(r) => Some(r),
        Err(e) => {
            stderr_line(&format!("mypi: cannot start the async runtime: {e}"));
            None
        }
    }
}
