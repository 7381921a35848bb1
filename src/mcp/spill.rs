//! The private folder that holds MCP results too big for the model (and binary data), named
//! in the model's note: created once per process in the temporary folder with mode 0700 and
//! an unguessable name, exclusively (a folder or link planted under that name is never used),
//! its files created exclusively with mode 0600 without following a link, and the whole
//! folder removed when mypi ends ([`remove`] at the normal end, [`crate::platform::process::kill_all`]
//! on a signal's).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::Mutex;

/// The folder once made (`None`: not yet, or removed).
static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Folder names tried before giving up (each is new and unguessable).
const ATTEMPTS: u32 = 16;

/// A name no other process can predict: the pid and 64 bits from the OS's random source
/// (through the random keys std seeds each `RandomState` with).
fn unguessable(attempt: u32) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    format!("mypi-mcp-{}-{:016x}", std::process::id(), h.finish())
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
