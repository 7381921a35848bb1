//! What a tool's path names, and the one place the built-in tools refuse what is not a regular
//! file. [`Target::resolve`] follows symbolic links (without opening anything) to the entry a
//! tool would really act on; [`Target::refusal`] words the error for a directory, named pipe,
//! socket or device; [`Target::open_regular`] opens a regular file for reading without ever
//! blocking on a FIFO or taking a terminal, and checks that what it opened is still that file.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Symbolic links followed before giving up (the kernel's own limit).
const MAX_LINK_HOPS: usize = 40;

/// The type of a file system entry, as far as the tools care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Regular,
    Directory,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    /// Anything else (a symlink only when links could not be followed).
    Other,
}

impl Kind {
    /// The kind of `meta` (metadata taken without following a final symlink reports `Other`).
    pub(crate) fn of(meta: &Metadata) -> Kind {
        let t = meta.file_type();
        if t.is_file() {
            Kind::Regular
        } else if t.is_dir() {
            Kind::Directory
        } else if t.is_fifo() {
            Kind::Fifo
        } else if t.is_socket() {
            Kind::Socket
        } else if t.is_char_device() {
            Kind::CharDevice
        } else if t.is_block_device() {
            Kind::BlockDevice
        } else {
            Kind::Other
        }
    }

    /// "a named pipe (FIFO)", "a character device", ...
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Regular => "a regular file",
            Kind::Directory => "a directory",
            Kind::Fifo => "a named pipe (FIFO)",
            Kind::Socket => "a socket",
            Kind::CharDevice => "a character device",
            Kind::BlockDevice => "a block device",
            Kind::Other => "a special file",
        }
    }
}

/// Which tool is asking; it decides the wording of a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Read,
    Write,
    Edit,
}

impl Action {
    fn verb(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Write => "write",
            Action::Edit => "edit",
        }
    }
}

/// Where a tool's path leads once symbolic links are followed.
#[derive(Debug)]
pub(crate) struct Target {
    /// The path as the model gave it, for messages.
    pub display: String,
    /// The entry the tool acts on: the given path, or where its chain of links ends.
    pub path: PathBuf,
    /// Whether the given path was a symbolic link.
    pub via_link: bool,
    /// The metadata of `path` (not following links); `None` when nothing is there.
    pub meta: Option<Metadata>,
}

impl Target {
    /// Follows `path` through symbolic links, looking at entries only (nothing is opened). A
    /// dangling link gives the missing path it points to, with `meta` `None`.
    pub(crate) fn resolve(path: &Path, display: &str, action: Action) -> Result<Target, String> {
        let fail = |e: io::Error| format!("could not {} {display}: {e}", action.verb());
        let mut current = path.to_path_buf();
        let mut hops = 0;
        loop {
            let meta = match fs::symlink_metadata(&current) {
                Ok(m) => Some(m),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(fail(e)),
            };
            if !meta.as_ref().is_some_and(|m| m.file_type().is_symlink()) {
                return Ok(Target {
                    display: display.to_string(),
                    path: current,
                    via_link: hops > 0,
                    meta,
                });
            }
            hops += 1;
            if hops > MAX_LINK_HOPS {
                return Err(format!(
                    "could not {} {display}: it is a chain of more than {MAX_LINK_HOPS} \
                     symbolic links (probably a loop); give the path of the real file",
                    action.verb()
                ));
            }
            let dest = fs::read_link(&current).map_err(fail)?;
            current = match current.parent() {
                Some(dir) if dest.is_relative() => dir.join(dest),
                _ => dest,
            };
        }
    }

    /// The kind of the final entry; `None` when it does not exist.
    pub(crate) fn kind(&self) -> Option<Kind> {
        self.meta.as_ref().map(Kind::of)
    }

    /// "x is" or, through a link, "x is a symbolic link to y, which is".
    fn subject(&self) -> String {
        if self.via_link {
            format!(
                "{} is a symbolic link to {}, which is",
                self.display,
                self.path.display()
            )
        } else {
            format!("{} is", self.display)
        }
    }

    /// The error for an entry of `kind` that `action` will not touch.
    pub(crate) fn refusal_for(&self, kind: Kind, action: Action) -> String {
        let subject = self.subject();
        let verb = action.verb();
        match (kind, action) {
            (Kind::Directory, Action::Read) => {
                format!("{subject} a directory now; call read again to list it")
            }
            (Kind::Directory, _) => {
                format!("{subject} a directory, not a file; give the path of a file to {verb}")
            }
            (_, Action::Read) => format!(
                "{subject} {}, not a regular file; read only shows regular files and lists \
                 directories",
                kind.describe()
            ),
            _ => format!(
                "{subject} {}, not a regular file; {verb} only changes regular files, so it was \
                 left untouched",
                kind.describe()
            ),
        }
    }

    /// The error for the final entry's own kind (see [`Target::refusal_for`]).
    pub(crate) fn refusal(&self, action: Action) -> String {
        self.refusal_for(self.kind().unwrap_or(Kind::Other), action)
    }

    /// The error when nothing is at the final path.
    pub(crate) fn missing(&self) -> String {
        if self.via_link {
            format!(
                "no such file: {} is a symbolic link to {}, which does not exist",
                self.display,
                self.path.display()
            )
        } else {
            format!("no such file: {}", self.display)
        }
    }

    /// Opens the regular file for reading. The open never blocks (a FIFO swapped in since
    /// `resolve` would otherwise wait for a writer) and never takes a controlling terminal;
    /// what was opened must be the very file `resolve` saw, else the call is refused.
    pub(crate) fn open_regular(&self, action: Action) -> Result<(File, Metadata), String> {
        let fail = |e: io::Error| format!("could not {} {}: {e}", action.verb(), self.display);
        let Some(seen) = self.meta.as_ref().filter(|m| Kind::of(m) == Kind::Regular) else {
            return Err(self.refusal(action));
        };
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&self.path)
            .map_err(fail)?;
        let meta = file.metadata().map_err(fail)?;
        if Kind::of(&meta) != Kind::Regular {
            return Err(self.refusal_for(Kind::of(&meta), action));
        }
        if !same_file(&meta, seen) {
            return Err(format!(
                "{} was replaced by another file while {} opened it; call {} again",
                self.display,
                action.verb(),
                action.verb()
            ));
        }
        Ok((file, meta))
    }
}

/// Whether two metadata describe the same file (device and inode).
pub(crate) fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Special files for the tools' unit tests, made inside their temporary folders only.
#[cfg(test)]
pub(super) mod special {
    use nix::sys::stat::{Mode, SFlag};
    use std::path::Path;

    /// Makes a named pipe at `path`.
    pub fn mkfifo(path: &Path) {
        nix::unistd::mkfifo(path, Mode::from_bits_truncate(0o644)).unwrap();
    }

    /// Makes a character device like the null device (1, 3) at `path`; false when not
    /// permitted (not root), and the test should skip its device part.
    pub fn mknod_null(path: &Path) -> bool {
        let dev = nix::sys::stat::makedev(1, 3);
        let mode = Mode::from_bits_truncate(0o644);
        nix::sys::stat::mknod(path, SFlag::S_IFCHR, mode, dev).is_ok()
    }

    /// Whether `path` is still a character device (not replaced by a regular file).
    pub fn is_char_device(path: &Path) -> bool {
        use std::os::unix::fs::FileTypeExt;
        std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_char_device())
    }
}

#[cfg(test)]
mod tests {
    use super::special::mkfifo;
    use super::*;
    use crate::platform::testutil::TempDir;
    use std::os::unix::fs::symlink;
    use std::os::unix::net::UnixListener;

    fn resolve(dir: &TempDir, name: &str) -> Target {
        Target::resolve(&dir.0.join(name), name, Action::Write).unwrap()
    }

    #[test]
    fn kinds_of_entries() {
        let dir = TempDir::new("guard-kinds");
        fs::write(dir.0.join("f"), "x").unwrap();
        fs::create_dir(dir.0.join("d")).unwrap();
        mkfifo(&dir.0.join("p"));
        let _sock = UnixListener::bind(dir.0.join("s")).unwrap();
        if special::mknod_null(&dir.0.join("c")) {
            assert_eq!(resolve(&dir, "c").kind(), Some(Kind::CharDevice));
        }
        assert_eq!(resolve(&dir, "f").kind(), Some(Kind::Regular));
        assert_eq!(resolve(&dir, "d").kind(), Some(Kind::Directory));
        assert_eq!(resolve(&dir, "p").kind(), Some(Kind::Fifo));
        assert_eq!(resolve(&dir, "s").kind(), Some(Kind::Socket));
        assert_eq!(resolve(&dir, "none").kind(), None);
    }

    #[test]
    fn links_are_followed_to_the_final_entry() {
        let dir = TempDir::new("guard-links");
        fs::write(dir.0.join("real"), "x").unwrap();
        symlink("real", dir.0.join("l1")).unwrap();
        symlink(dir.0.join("l1"), dir.0.join("l2")).unwrap();
        symlink("gone", dir.0.join("dangling")).unwrap();
        let t = resolve(&dir, "l2");
        assert!(t.via_link);
        assert_eq!(t.path, dir.0.join("real"));
        assert_eq!(t.kind(), Some(Kind::Regular));
        let t = resolve(&dir, "dangling");
        assert_eq!((t.kind(), t.path), (None, dir.0.join("gone")));
        assert!(!resolve(&dir, "real").via_link);
    }

    #[test]
    fn link_loop_is_an_error() {
        let dir = TempDir::new("guard-loop");
        symlink("b", dir.0.join("a")).unwrap();
        symlink("a", dir.0.join("b")).unwrap();
        let err = Target::resolve(&dir.0.join("a"), "a", Action::Edit).unwrap_err();
        assert!(err.contains("more than 40 symbolic links"), "{err}");
    }

    #[test]
    fn refusals_name_the_kind_and_the_link() {
        let dir = TempDir::new("guard-words");
        mkfifo(&dir.0.join("p"));
        symlink("p", dir.0.join("lp")).unwrap();
        let msg = resolve(&dir, "p").refusal(Action::Write);
        assert_eq!(
            msg,
            "p is a named pipe (FIFO), not a regular file; write only changes regular files, \
             so it was left untouched"
        );
        let msg = resolve(&dir, "lp").refusal(Action::Read);
        assert!(
            msg.starts_with("lp is a symbolic link to ") && msg.contains("which is a named pipe"),
            "{msg}"
        );
        let msg = resolve(&dir, "p").refusal_for(Kind::Directory, Action::Edit);
        assert!(msg.contains("is a directory, not a file"), "{msg}");
    }

    #[test]
    fn open_regular_refuses_fifo_without_blocking() {
        let dir = TempDir::new("guard-open");
        fs::write(dir.0.join("f"), "x").unwrap();
        let mut t = resolve(&dir, "f");
        assert!(t.open_regular(Action::Read).is_ok());
        // The file is swapped for a FIFO after it was looked at: the open must not block.
        fs::remove_file(dir.0.join("f")).unwrap();
        mkfifo(&dir.0.join("f"));
        let err = t.open_regular(Action::Read).unwrap_err();
        assert!(err.contains("named pipe"), "{err}");
        // Swapped for another regular file (made while the FIFO exists, so a new inode): refused.
        fs::write(dir.0.join("g"), "y").unwrap();
        fs::rename(dir.0.join("g"), dir.0.join("f")).unwrap();
        let err = t.open_regular(Action::Edit).unwrap_err();
        assert!(err.contains("was replaced by another file"), "{err}");
        t.meta = None;
        assert!(t.open_regular(Action::Read).is_err());
    }
}
