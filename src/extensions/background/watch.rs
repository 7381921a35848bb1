//! `api.watch(path, fn)`: a notify watcher over one file or folder (a folder with what is in
//! it, recursively), whose changes are debounced (quiet for
//! [`WATCH_DEBOUNCE`], at most [`MAX_WAIT`] after the first)
//! and handed to the script as one call `fn({paths = {...}}, ctx)`. The watcher lives as long
//! as its task; cancelling the task drops it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{RecursiveMode, Watcher as _};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{changed, Caller, WATCH_DEBOUNCE};

/// A batch is handed over at the latest this long after its first change.
const MAX_WAIT: Duration = Duration::from_millis(1000);
/// The most paths one call names (the rest are left out).
const MAX_PATHS: usize = 1000;

/// Starts watching `path`; its changes go to `tx`.
pub(super) fn watch(
    path: &Path,
    tx: mpsc::UnboundedSender<PathBuf>,
) -> Result<notify::RecommendedWatcher, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot watch {}: {e}", path.display()))?;
    let mode = if meta.is_dir() {
        RecursiveMode::Recursive
    } else {
        RecursiveMode::NonRecursive
    };
    let mut watcher = notify::recommended_watcher(move |r: notify::Result<notify::Event>| {
        if let Ok(event) = r {
            if matches!(event.kind, notify::EventKind::Access(_)) {
                return;
            }
            for p in event.paths {
                let _ = tx.send(p);
            }
        }
    })
    .map_err(|e| format!("cannot watch {}: {e}", path.display()))?;
    watcher
        .watch(path, mode)
        .map_err(|e| format!("cannot watch {}: {e}", path.display()))?;
    Ok(watcher)
}

/// Waits for changes and calls the script with each debounced batch, until `stop`.
pub(super) async fn run(
    watcher: notify::RecommendedWatcher,
    mut rx: mpsc::UnboundedReceiver<PathBuf>,
    call: Caller,
    stop: CancellationToken,
) {
    let _watching = watcher;
    let mut failures = 0;
    loop {
        let first = tokio::select! {
            _ = stop.cancelled() => return,
            p = rx.recv() => match p {
                Some(p) => p,
                None => return,
            },
        };
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + MAX_WAIT;
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                more = rx.recv() => match more {
                    Some(p) => {
                        if batch.len() < MAX_PATHS {
                            batch.push(p);
                        }
                    }
                    None => return,
                },
                _ = tokio::time::sleep(WATCH_DEBOUNCE) => break,
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        batch.sort();
        batch.dedup();
        if !call
            .call("a file watch", vec![changed(&batch)], &mut failures)
            .await
        {
            return;
        }
    }
}
