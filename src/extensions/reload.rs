//! Hot reload: a watcher (notify) over every extension root and every module a script loaded;
//! changes are debounced (~100 ms of quiet), then the loaded set is brought in line with the
//! files: a new file loads, a deleted (or `_`-renamed) one unloads, a changed one reloads in a
//! fresh VM, and a changed module reloads the scripts that use it. Only what changed is
//! rebuilt; a failed reload keeps the previous version. `/reload` does the same on demand.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{EventKind as FsEvent, RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

use super::host::{fingerprint, short_path, ExtensionHost};

/// Quiet time after the last file event before a batch is processed.
pub const DEBOUNCE: Duration = Duration::from_millis(100);
/// A batch is processed at the latest this long after its first event.
const MAX_WAIT: Duration = Duration::from_millis(500);

impl ExtensionHost {
    /// Brings the loaded extensions in line with the files under `roots`. `changed` are the
    /// paths that changed (modules among them reload the scripts that use them). Returns one
    /// line per extension that was loaded, reloaded or unloaded.
    pub async fn sync(&self, roots: &[PathBuf], changed: &[PathBuf]) -> Vec<String> {
        let _one_at_a_time = self.reloading.lock().await;
        self.sync_locked(roots, changed, false).await
    }

    /// `sync` with the reload lock held; `all` reloads every extension still found (once),
    /// not only the changed ones.
    async fn sync_locked(&self, roots: &[PathBuf], changed: &[PathBuf], all: bool) -> Vec<String> {
        let found = super::builtin::discover(roots, self.context().builtins);
        let found_paths: HashSet<&Path> = found.iter().map(|i| i.path.as_path()).collect();
        let changed: HashSet<&Path> = changed.iter().map(PathBuf::as_path).collect();
        let mut lines = Vec::new();
        let gone: Vec<PathBuf> = self
            .lock()
            .iter()
            .filter(|l| !found_paths.contains(l.info.path.as_path()))
            .map(|l| l.info.path.clone())
            .collect();
        for path in gone {
            if let Some(i) = self.index_of(&path) {
                lines.extend(self.unload_at(i).await);
            }
        }
        // Only files named by the change are read again (all of them when none are named),
        // so one save costs the same with 1 or 200 extensions loaded.
        let candidates: Vec<(PathBuf, u64, bool)> = self
            .lock()
            .iter()
            .map(|l| {
                let module_changed = l.required.iter().any(|r| changed.contains(r.as_path()));
                (l.info.path.clone(), l.fingerprint, all || module_changed)
            })
            .collect();
        let stale: Vec<PathBuf> = candidates
            .into_iter()
            .filter(|(path, fp, forced)| {
                let named = changed.is_empty() || changed.contains(path.as_path());
                *forced || (named && *fp != fingerprint(path))
            })
            .map(|(path, ..)| path)
            .collect();
        for path in stale {
            if let Some(i) = self.index_of(&path) {
                lines.extend(self.reload_at(i).await);
            }
        }
        let known: HashSet<PathBuf> = self.lock().iter().map(|l| l.info.path.clone()).collect();
        let new: Vec<_> = found
            .into_iter()
            .filter(|i| !known.contains(&i.path))
            .collect();
        if !new.is_empty() {
            let shorts: Vec<String> = new.iter().map(short_path).collect();
            let summaries = self.load_all(new).await;
            self.announce(&summaries, crate::hooks::Reason::Reload)
                .await;
            for (s, file) in summaries.iter().zip(shorts) {
                lines.push(match &s.error {
                    Some(e) => format!("{file} failed to load: {e}"),
                    None => format!("loaded {file}: {}", s.counts()),
                });
            }
        }
        lines
    }

    /// `/reload`: re-discovers the roots and reloads every extension (each once: a new file
    /// is loaded, not loaded and then reloaded).
    pub async fn reload_all(&self, roots: &[PathBuf]) -> Vec<String> {
        let _one_at_a_time = self.reloading.lock().await;
        self.sync_locked(roots, &[], true).await
    }

    /// `/reload NAME`: reloads the extension called NAME (or whose file is NAME).
    pub async fn reload_named(&self, name: &str) -> Option<String> {
        let _one_at_a_time = self.reloading.lock().await;
        let index = self.lock().iter().position(|l| {
            l.info.name == name || short_path(&l.info) == name || l.info.path == Path::new(name)
        })?;
        self.reload_at(index).await
    }

    /// Module files outside the roots that scripts loaded (the watcher adds them).
    pub fn required_files(&self) -> Vec<PathBuf> {
        let mut all: Vec<PathBuf> = self
            .lock()
            .iter()
            .flat_map(|l| l.required.clone())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    fn index_of(&self, path: &Path) -> Option<usize> {
        self.lock().iter().position(|l| l.info.path == path)
    }
}

/// Keeps the file watcher alive; dropping it stops watching.
pub struct Watcher {
    _watcher: Arc<Mutex<notify::RecommendedWatcher>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts watching `roots` (a missing one through its nearest existing folder, until it
/// appears) and the modules scripts loaded. Every settled
/// batch of changes is synced and each resulting line goes to the host's notices.
pub fn watch(host: Arc<ExtensionHost>, roots: Vec<PathBuf>) -> Result<Watcher, String> {
    let (tx, rx) = mpsc::unbounded_channel::<PathBuf>();
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res {
            if matters(&event.kind) {
                for path in event.paths {
                    let _ = tx.send(path);
                }
            }
        }
    })
    .map_err(|e| format!("cannot watch extension files: {e}"))?;
    let watcher = Arc::new(Mutex::new(watcher));
    let mut watched = Watched::new();
    for root in roots.iter() {
        let Some(id) = folder_id(root) else { continue };
        watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .watch(root, RecursiveMode::Recursive)
            .map_err(|e| format!("cannot watch {}: {e}", root.display()))?;
        watched.insert(root.clone(), id);
    }
    watch_for_missing_roots(&roots, &watched, &watcher);
    let task = tokio::spawn(run(host, roots, rx, watcher.clone(), watched));
    Ok(Watcher {
        _watcher: watcher,
        task,
    })
}

/// The roots being watched, each with the folder (device, inode) the watch is on: a root
/// deleted and created again is another folder, which the old watch does not see.
type Watched = HashMap<PathBuf, (u64, u64)>;

/// The (device, inode) of the folder at `path`; `None` when there is no folder there.
fn folder_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    meta.is_dir().then(|| (meta.dev(), meta.ino()))
}

/// Creations, writes, renames and removals; not reads (loading a script reads it).
fn matters(kind: &FsEvent) -> bool {
    matches!(
        kind,
        FsEvent::Create(_) | FsEvent::Modify(_) | FsEvent::Remove(_) | FsEvent::Any
    ) && !matches!(
        kind,
        FsEvent::Modify(notify::event::ModifyKind::Metadata(
            notify::event::MetadataKind::AccessTime
        ))
    )
}

/// A root that does not exist yet is watched through its nearest existing folder, so that
/// creating it (and files in it) is noticed.
fn watch_for_missing_roots(
    roots: &[PathBuf],
    watched: &Watched,
    watcher: &Mutex<notify::RecommendedWatcher>,
) {
    let mut w = watcher.lock().unwrap_or_else(|p| p.into_inner());
    for root in roots.iter().filter(|r| !watched.contains_key(*r)) {
        if let Some(existing) = root.ancestors().skip(1).find(|a| a.is_dir()) {
            let _ = w.watch(existing, RecursiveMode::NonRecursive);
        }
    }
}

/// Brings the watches in line with the roots on disk: a root that is gone, or was deleted
/// and created again, loses its old watch; a root that is there and not watched is watched
/// (true when one was: its files need a full sync); a still-missing root is watched through
/// its nearest existing folder. Folders created meanwhile are caught by looking again.
fn watch_new_roots(
    roots: &[PathBuf],
    watched: &mut Watched,
    watcher: &Mutex<notify::RecommendedWatcher>,
) -> bool {
    let mut appeared = false;
    for root in roots {
        let now = folder_id(root);
        if watched.get(root).is_some_and(|id| Some(*id) != now) {
            watched.remove(root);
            let _ = watcher
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .unwatch(root);
        }
    }
    // A folder on the way to a root may appear between a look and the watch on its parent.
    for _ in 0..3 {
        let mut added = false;
        let missing: Vec<&PathBuf> = roots.iter().filter(|r| !watched.contains_key(*r)).collect();
        for root in missing {
            let Some(id) = folder_id(root) else { continue };
            let mut w = watcher.lock().unwrap_or_else(|p| p.into_inner());
            if w.watch(root, RecursiveMode::Recursive).is_ok() {
                watched.insert(root.clone(), id);
                added = true;
            }
        }
        watch_for_missing_roots(roots, watched, watcher);
        appeared |= added;
        let still_missing = roots
            .iter()
            .filter(|r| !watched.contains_key(*r))
            .any(|r| r.is_dir());
        if !still_missing {
            break;
        }
    }
    appeared
}

async fn run(
    host: Arc<ExtensionHost>,
    roots: Vec<PathBuf>,
    mut rx: mpsc::UnboundedReceiver<PathBuf>,
    watcher: Arc<Mutex<notify::RecommendedWatcher>>,
    mut watched_roots: Watched,
) {
    let mut watched_modules: HashSet<PathBuf> = HashSet::new();
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + MAX_WAIT;
        loop {
            let quiet = tokio::time::sleep(DEBOUNCE);
            tokio::select! {
                more = rx.recv() => match more {
                    Some(p) => batch.push(p),
                    None => return,
                },
                _ = quiet => break,
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        batch.sort();
        batch.dedup();
        if watch_new_roots(&roots, &mut watched_roots, &watcher) {
            batch.clear();
        }
        for line in host.sync(&roots, &batch).await {
            (host.context().notice)(line);
        }
        watch_modules(&host, &roots, &watcher, &mut watched_modules);
    }
}

/// Adds a watch on the folder of every loaded module outside the roots.
fn watch_modules(
    host: &ExtensionHost,
    roots: &[PathBuf],
    watcher: &Mutex<notify::RecommendedWatcher>,
    watched: &mut HashSet<PathBuf>,
) {
    let mut w = watcher.lock().unwrap_or_else(|p| p.into_inner());
    for file in host.required_files() {
        let Some(dir) = file.parent().map(Path::to_path_buf) else {
            continue;
        };
        if roots.iter().any(|r| dir.starts_with(r)) || !watched.insert(dir.clone()) {
            continue;
        }
        let _ = w.watch(&dir, RecursiveMode::NonRecursive);
    }
}
