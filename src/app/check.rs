//! `mypi ext check` and `mypi ext list`: load extensions without starting the agent and say,
//! per file, what each registered or why it failed (for extension authors and their CI).

use std::path::PathBuf;
use std::sync::Arc;

use crate::extensions::builtin;
use crate::extensions::host::ExtensionHost;
use crate::extensions::services::HostContext;
use crate::hooks::NoticeFn;
use crate::tools;

/// The options the extensions under `roots` declare (for `mypi --help`): they are loaded
/// without an agent, as `mypi ext check` does, and unloaded again.
pub async fn declared_flags(
    roots: &[PathBuf],
    cwd: PathBuf,
    builtins: bool,
) -> Vec<crate::config::extflags::Declared> {
    let infos = builtin::discover(roots, builtins);
    if infos.is_empty() {
        return Vec::new();
    }
    let ctx = Arc::new(HostContext::checking(cwd, Arc::new(|_| {})));
    let host = ExtensionHost::new(ctx.clone());
    host.load_all(infos).await;
    let flags = ctx.control.declared_flags();
    host.unload_all();
    flags
}

/// Loads the extensions under `roots` (files or folders), and the shipped ones when
/// `builtins`; returns the report and whether all loaded. Finding none is a failure when
/// `explicit` (the user named the paths). `trusted`: the project folder is.
pub async fn check(
    roots: &[PathBuf],
    cwd: PathBuf,
    explicit: bool,
    builtins: bool,
    trusted: bool,
) -> (String, bool) {
    let infos = builtin::discover(roots, builtins);
    if infos.is_empty() {
        let looked: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        return (
            format!("no extensions found in {}", looked.join(", ")),
            !explicit,
        );
    }
    let notices = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = notices.clone();
    let notice: NoticeFn =
        Arc::new(move |m| sink.lock().unwrap_or_else(|p| p.into_inner()).push(m));
    let ctx = HostContext::checking(cwd.clone(), notice);
    // What the shipped extensions read of the project (its agent files) as a run would.
    ctx.control.set_project_trusted(trusted);
    tools::register_builtins(&ctx.tools);
    let host = ExtensionHost::new(Arc::new(ctx));
    let summaries = host.load_all(infos).await;
    let mut out = String::new();
    let mut ok = true;
    for s in &summaries {
        let status = if s.error.is_some() { "FAIL" } else { "ok  " };
        ok &= s.error.is_none();
        out.push_str(&format!("{status} {}\n", s.line()));
    }
    for n in notices.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        out.push_str(&format!("note: {n}\n"));
    }
    let failed = summaries.iter().filter(|s| s.error.is_some()).count();
    out.push_str(&format!(
        "{} extension{} checked, {failed} failed",
        summaries.len(),
        if summaries.len() == 1 { "" } else { "s" }
    ));
    host.unload_all();
    (relative_to(&out, &cwd), ok)
}

/// `text` with paths inside `cwd` shown relative to it (what the user typed).
pub fn relative_to(text: &str, cwd: &std::path::Path) -> String {
    let prefix = format!("{}/", cwd.display());
    if prefix.len() <= 1 {
        return text.to_string();
    }
    text.replace(&prefix, "")
}

/// The extensions that would load from `roots` (and the shipped ones when `builtins`), one
/// per line.
pub fn list(roots: &[PathBuf], builtins: bool, cwd: &std::path::Path) -> String {
    let infos = builtin::discover(roots, builtins);
    if infos.is_empty() {
        return "no extensions found".to_string();
    }
    infos
        .iter()
        .map(|i| {
            let line = format!("{} ({}, {})", i.name, i.language.name(), i.path.display());
            relative_to(&line, cwd)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
