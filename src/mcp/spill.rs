//! The private folder that holds MCP results too big for the model (and binary data), named
//! in the model's note: created once per process in the temporary folder with mode 0700 and
//! an unguessable name, exclusively (a folder or link planted under that name is never used),
//! its files created exclusively with mode 0600 without following a link, and the whole
//! folder removed when mypi ends ([`remove`] at the normal end, [`crate::platform::process::kill_all`]
//! on a signal's). What a mypi killed with `kill -9` (or a crash, or a power cut) left is
//! removed by the next one that spills ([`sweep`]): the folders of the user's whose process
//! no longer runs.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::Mutex;

/// The folder once made (`None`: not yet, or removed).
static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Folder names tried before giving up (each is new and unguessable).
const ATTEMPTS: u32 = 16;

/// What every spill folder's name starts with (then the pid, then the random part).
const PREFIX: &str = "mypi-mcp-";

/// A name no other process can predict: the pid and 64 bits from the OS's random source
/// (through the random keys std seeds each `RandomState` with).
fn unguessable(attempt: u32) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    format!("{PREFIX}{}-{:016x}", std::process::id(), h.finish())
}

/// The folder, made now if it is not yet.
fn dir() -> Result<PathBuf, String> {
    let mut held = DIR.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(d) = held.as_ref() {
        return Ok(d.clone());
    }
    let tmp = std::env::temp_dir();
    let mut last = String::new();
    for attempt in 0..ATTEMPTS {
        let d = tmp.join(unguessable(attempt));
        match std::fs::DirBuilder::new().mode(0o700).create(&d) {
            Ok(()) => {
                sweep(&tmp, &d);
                *held = Some(d.clone());
                // Gone on a signal's exit too, not only at the normal end.
                crate::platform::process::remove_at_exit(d.clone());
                return Ok(d);
            }
            Err(e) => last = format!("cannot create {}: {e}", d.display()),
        }
    }
    Err(last)
}

/// Writes `bytes` to a new file named `name` (made of safe characters) in the folder.
pub fn write(name: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let n = crate::vocab::owner::next_id();
    let path = dir()?.join(format!("{n}-{name}"));
    create_new(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Creates `path` with `bytes`, readable by the user only; fails when anything (a file, a
/// link) is there already.
fn create_new(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    file.write_all(bytes)
}

/// Removes the spill folders in `tmp` that processes no longer running left (killed before
/// they could), when they are folders (not links) of the owner of `mine`.
fn sweep(tmp: &std::path::Path, mine: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(me) = std::fs::symlink_metadata(mine) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<i32>().ok());
        let Some(pid) = pid.filter(|p| *p as u32 != std::process::id()) else {
            continue;
        };
        let path = entry.path();
        let theirs = std::fs::symlink_metadata(&path);
        let left = theirs.is_ok_and(|m| m.is_dir() && m.uid() == me.uid());
        if left && !crate::platform::process::running(pid) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Removes the folder and what is in it (at exit).
pub fn remove() {
    let mut held = DIR.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(d) = held.take() {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn folders_of_processes_gone_are_swept_and_the_others_kept() {
        let tmp = crate::platform::testutil::TempDir::new("spill-sweep");
        let mine = tmp
            .0
            .join(format!("{}{}-aa", super::PREFIX, std::process::id()));
        let gone = tmp.0.join(format!("{}2147483000-bb", super::PREFIX));
        let alive = tmp.0.join(format!("{}1-cc", super::PREFIX));
        let other = tmp.0.join("mypi-other-2147483000");
        for d in [&mine, &gone, &alive, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("f"), b"x").unwrap();
        }
        super::sweep(&tmp.0, &mine);
        assert!(!gone.exists(), "a dead process's folder is swept");
        assert!(mine.exists() && alive.exists() && other.exists());
    }

    #[test]
    fn the_folder_and_files_are_private_and_a_link_is_never_followed() {
        let p = super::write("a.txt", b"one").unwrap();
        let dir = p.parent().unwrap().to_path_buf();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&dir), mode(&p)), (0o700, 0o600));
        // A link planted under a file's name is not followed, nor is a file replaced.
        let planted = dir.join("planted.txt");
        let target = dir.join("target");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        assert!(super::create_new(&planted, b"two").is_err());
        assert!(!target.exists());
        assert!(super::create_new(&p, b"two").is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
    }
}
