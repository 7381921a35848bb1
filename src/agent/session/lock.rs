//! The lock that keeps two mypi processes from writing one session file: an exclusive
//! `flock` (std's [`File::try_lock`]) on a sidecar `<id>.jsonl.lock` that holds the holder's pid.
//!
//! The kernel drops a `flock` when the process dies, however it dies (kill -9 included), so a
//! lock file left behind by a killed process is taken over by the next one; the pid in it only
//! serves the message of a process that finds the session busy. The file is opened close-on-exec,
//! so tools' child processes never hold the lock after mypi is gone. A lock removes its file
//! while it still holds the lock; a process that had opened that file before checks, once it
//! holds the lock, that the path still names the file it locked, and starts over otherwise.

use std::fs::{self, File, Metadata, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An exclusive hold on a session file, released when dropped (or when the process ends).
#[derive(Debug)]
pub struct SessionLock {
    path: PathBuf,
    _file: File,
}

/// Why a session could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it: its pid, when the lock file names one.
    Held { pid: Option<u32> },
    /// Locking failed (for example on a file system without `flock`).
    Io(io::Error),
}

/// How often acquiring starts over when the lock file was replaced under it.
const ATTEMPTS: usize = 8;

impl SessionLock {
    /// Locks the session file `session` (which need not exist yet) without waiting.
    pub fn acquire(session: &Path) -> Result<SessionLock, LockError> {
        let path = lock_path(session);
        for _ in 0..ATTEMPTS {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(LockError::Io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(LockError::Held {
                        pid: read_pid(&mut file),
                    })
                }
                Err(TryLockError::Error(e)) => return Err(LockError::Io(e)),
            }
            let ours = file.metadata().map_err(LockError::Io)?;
            match fs::metadata(&path) {
                Ok(now) if same_file(&ours, &now) => {}
                // The holder before us removed the file: lock the one that is there now.
                _ => continue,
            }
            write_pid(&mut file).map_err(LockError::Io)?;
            return Ok(SessionLock { path, _file: file });
        }
        Err(LockError::Io(io::Error::other(
            "the lock file kept being replaced while mypi tried to lock it",
        )))
    }

    /// The sidecar file this lock holds.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        // Removed while still locked; the file handle (and the lock) goes right after.
        let _ = fs::remove_file(&self.path);
    }
}

/// `<session>.lock`, next to the session file.
pub fn lock_path(session: &Path) -> PathBuf {
    let mut name = session.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    session.with_file_name(name)
}

fn write_pid(file: &mut File) -> io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(format!("{}\n", std::process::id()).as_bytes())
}

/// The pid in a lock file held by someone else. The holder writes it right after locking, so
/// an empty file is read again a few times before giving up.
fn read_pid(file: &mut File) -> Option<u32> {
    for _ in 0..5 {
        let mut text = String::new();
        if file.seek(SeekFrom::Start(0)).is_ok() && file.read_to_string(&mut text).is_ok() {
            if let Ok(pid) = text.trim().parse() {
                return Some(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &Metadata, _: &Metadata) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;

    #[test]
    fn a_second_lock_names_the_holder_and_a_dropped_one_is_free() {
        let tmp = TempDir::new("lock");
        let session = tmp.0.join("s.jsonl");
        let first = SessionLock::acquire(&session).unwrap();
        assert_eq!(first.path(), tmp.0.join("s.jsonl.lock"));
        let text = fs::read_to_string(first.path()).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
        match SessionLock::acquire(&session) {
            Err(LockError::Held { pid }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected Held, got {other:?}"),
        }
        drop(first);
        assert!(
            !tmp.0.join("s.jsonl.lock").exists(),
            "the lock file is removed"
        );
        let again = SessionLock::acquire(&session).unwrap();
        drop(again);
    }

    #[test]
    fn a_lock_file_left_behind_is_taken_over() {
        let tmp = TempDir::new("stale");
        let session = tmp.0.join("s.jsonl");
        fs::write(lock_path(&session), "999999\n").unwrap();
        let lock = SessionLock::acquire(&session).unwrap();
        let text = fs::read_to_string(lock.path()).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
    }
}
