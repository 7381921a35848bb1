//! Atomic replacement of a file's content, shared by `write` and `edit`. [`stage`] writes the
//! new content to a hidden temporary file next to the target, flushed, with the permissions and
//! owner of the file it replaces. [`Staged::commit_new`] then renames it into place only if
//! nothing has appeared there; [`Staged::commit_over`] swaps it with the existing entry in one
//! step and checks what it swapped out, so a target that became a device, FIFO, directory or
//! another file at the last moment is put back untouched instead of being replaced. The
//! temporary file never outlives a failed call.

use std::fs::{self, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a commit did not happen.
#[derive(Debug)]
pub(crate) enum CommitError {
    /// A system call failed.
    Io(io::Error),
    /// The caller's check refused what was at the target; the message says why.
    Refused(String),
    /// Something appeared at the target of a new file.
    Exists,
}

impl From<io::Error> for CommitError {
    fn from(e: io::Error) -> Self {
        CommitError::Io(e)
    }
}

/// New content waiting next to its target. Dropping it without a commit removes it.
#[derive(Debug)]
pub(crate) struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    /// Whether `tmp` no longer needs removing (committed, or kept on purpose).
    settled: bool,
}

/// Writes `bytes` to a temporary file in the target's folder (which must exist). With `like`,
/// the file being replaced, the new one gets its permissions and, where allowed, its owner.
pub(crate) fn stage(target: &Path, bytes: &[u8], like: Option<&Metadata>) -> io::Result<Staged> {
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(temp_name(&name.to_string_lossy()));
    // Private until the real permissions are set, so a 0600 file's new text is never readable
    // by others; a new file gets the usual 0666 less the umask.
    let mode = if like.is_some() { 0o600 } else { 0o666 };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)?;
    let staged = Staged {
        tmp,
        target: target.to_path_buf(),
        settled: false,
    };
    file.write_all(bytes)?;
    if let Some(old) = like {
        // Only root may give a file away; anyone else keeps the new file as their own.
        let _ = std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()));
        file.set_permissions(old.permissions())?;
    }
    file.sync_all()?;
    Ok(staged)
}

impl Staged {
    /// Moves the new file into place if the target still does not exist.
    pub(crate) fn commit_new(mut self) -> Result<(), CommitError> {
        match rename2(&self.tmp, &self.target, RenameMode::NoReplace) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(CommitError::Exists),
            Err(e) if unsupported(&e) => {
                if fs::symlink_metadata(&self.target).is_ok() {
                    return Err(CommitError::Exists);
                }
                fs::rename(&self.tmp, &self.target)?;
            }
            Err(e) => return Err(e.into()),
        }
        self.settled = true;
        Ok(())
    }

    /// Replaces the existing target. `check` judges the entry being replaced (metadata not
    /// following links): once just before the swap and once on what the swap took out; when it
    /// refuses the second time, the swap is undone and the target is left as it was.
    pub(crate) fn commit_over(
        mut self,
        check: impl Fn(&Metadata) -> Result<(), String>,
    ) -> Result<(), CommitError> {
        check(&fs::symlink_metadata(&self.target)?).map_err(CommitError::Refused)?;
        match rename2(&self.tmp, &self.target, RenameMode::Exchange) {
            Ok(()) => {}
            Err(e) if unsupported(&e) => {
                fs::rename(&self.tmp, &self.target)?;
                self.settled = true;
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        }
        // `tmp` now names what was at the target.
        let verdict = match fs::symlink_metadata(&self.tmp) {
            Ok(old) => check(&old),
            Err(e) => Err(format!("could not check the replaced file: {e}")),
        };
        let Err(why) = verdict else {
            let _ = fs::remove_file(&self.tmp);
            self.settled = true;
            return Ok(());
        };
        if let Err(e) = rename2(&self.tmp, &self.target, RenameMode::Exchange) {
            // Keep what was swapped out: it may be the only copy of someone's changes.
            self.settled = true;
            return Err(CommitError::Refused(format!(
                "{why}; putting the previous file back failed ({e}), so it is now at {}",
                self.tmp.display()
            )));
        }
        Err(CommitError::Refused(why))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.settled {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// The two uses of `renameat2`.
#[derive(Debug, Clone, Copy)]
enum RenameMode {
    /// Fail with `AlreadyExists` rather than replace.
    NoReplace,
    /// Swap the two entries.
    Exchange,
}

/// `renameat2(2)`: a rename that does not replace, or that swaps.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rename2(from: &Path, to: &Path, mode: RenameMode) -> io::Result<()> {
    use nix::fcntl::{renameat2, RenameFlags, AT_FDCWD};
    let flags = match mode {
        RenameMode::NoReplace => RenameFlags::RENAME_NOREPLACE,
        RenameMode::Exchange => RenameFlags::RENAME_EXCHANGE,
    };
    renameat2(AT_FDCWD, from, AT_FDCWD, to, flags).map_err(io::Error::from)
}

/// Elsewhere the callers fall back to a plain rename after their last check.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn rename2(_from: &Path, _to: &Path, _mode: RenameMode) -> io::Result<()> {
    Err(io::Error::from_raw_os_error(libc::ENOSYS))
}

/// Whether `renameat2` failed because the kernel or the file system lacks the flag.
fn unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
    )
}

/// A hidden, unique temporary name next to the file, short enough for any file system.
fn temp_name(file_name: &str) -> String {
    let n = crate::vocab::owner::next_id();
    let mut stem: String = file_name.chars().take(64).collect();
    while stem.len() > 100 {
        stem.pop();
    }
    format!(".{stem}.mypi-{}-{n}.tmp", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;
    use std::cell::Cell;
    use std::os::unix::fs::PermissionsExt;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn commit_over_replaces_and_keeps_permissions() {
        let dir = TempDir::new("replace-over");
        let f = dir.0.join("f");
        fs::write(&f, "old").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o751)).unwrap();
        let meta = fs::metadata(&f).unwrap();
        let staged = stage(&f, b"new", Some(&meta)).unwrap();
        staged.commit_over(|_| Ok(())).unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "new");
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o751
        );
        assert_eq!(entries(&dir.0), ["f"]);
    }

    #[test]
    fn refusal_before_the_swap_leaves_the_target() {
        let dir = TempDir::new("replace-pre");
        let f = dir.0.join("f");
        fs::write(&f, "old").unwrap();
        let staged = stage(&f, b"new", None).unwrap();
        let err = staged.commit_over(|_| Err("no".into())).unwrap_err();
        assert!(matches!(err, CommitError::Refused(m) if m == "no"));
        assert_eq!(fs::read_to_string(&f).unwrap(), "old");
        assert_eq!(entries(&dir.0), ["f"]);
    }

    #[test]
    fn refusal_after_the_swap_puts_the_target_back() {
        let dir = TempDir::new("replace-post");
        let f = dir.0.join("f");
        fs::write(&f, "old").unwrap();
        let ino = fs::metadata(&f).unwrap().ino();
        let staged = stage(&f, b"new", None).unwrap();
        let calls = Cell::new(0);
        let err = staged
            .commit_over(|_| {
                calls.set(calls.get() + 1);
                if calls.get() == 1 {
                    Ok(())
                } else {
                    Err("changed meanwhile".into())
                }
            })
            .unwrap_err();
        assert!(matches!(err, CommitError::Refused(m) if m == "changed meanwhile"));
        assert_eq!(calls.get(), 2);
        assert_eq!(fs::read_to_string(&f).unwrap(), "old");
        assert_eq!(
            fs::metadata(&f).unwrap().ino(),
            ino,
            "the very same file is back"
        );
        assert_eq!(entries(&dir.0), ["f"]);
    }

    #[test]
    fn commit_new_does_not_replace_what_appeared() {
        let dir = TempDir::new("replace-new");
        let f = dir.0.join("f");
        let staged = stage(&f, b"mine", None).unwrap();
        fs::write(&f, "theirs").unwrap();
        assert!(matches!(staged.commit_new(), Err(CommitError::Exists)));
        assert_eq!(fs::read_to_string(&f).unwrap(), "theirs");
        assert_eq!(entries(&dir.0), ["f"]);
        let staged = stage(&dir.0.join("g"), b"mine", None).unwrap();
        staged.commit_new().unwrap();
        assert_eq!(fs::read_to_string(dir.0.join("g")).unwrap(), "mine");
    }

    #[test]
    fn temp_names_are_short_and_unique() {
        let long = "x".repeat(300);
        let a = temp_name(&long);
        assert!(a.len() < 140);
        assert_ne!(a, temp_name(&long));
    }
}
