//! What `edit` read from a file, and whether the file is still exactly that. [`Snapshot::take`]
//! keeps the open file, its metadata from before the read and the bytes read;
//! [`Snapshot::unchanged`] compares the file again (same file at the path, same size and times,
//! same bytes) just before the new content goes in, and [`Snapshot::check_entry`] is the
//! quick check [`super::replace::Staged::commit_over`] makes right before and after its swap.
//! Every failure says [`CHANGED`], so the model knows to read the file again.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{FileExt, MetadataExt};

use super::fsguard::{same_file, Action, Kind, Target};

/// The words every "changed meanwhile" error contains.
pub(crate) const CHANGED: &str = "the file changed; read it again";

/// Bytes compared per read when checking the content again.
const COMPARE_CHUNK: usize = 64 * 1024;

/// A regular file as it was read.
#[derive(Debug)]
pub(crate) struct Snapshot {
    file: File,
    /// The metadata taken before reading.
    pub meta: Metadata,
    /// Everything read.
    pub bytes: Vec<u8>,
    display: String,
}

impl Snapshot {
    /// Opens and reads the regular file `target` leads to.
    pub(crate) fn take(target: &Target) -> Result<Snapshot, String> {
        let (mut file, meta) = target.open_regular(Action::Edit)?;
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.read_to_end(&mut bytes)
            .map_err(|e| format!("could not read {}: {e}", target.display))?;
        Ok(Snapshot {
            file,
            meta,
            bytes,
            display: target.display.clone(),
        })
    }

    /// The error for a file that changed since it was read.
    pub(crate) fn changed(&self) -> String {
        format!(
            "{} was changed by something else after edit read it, so the edit was not written \
             (it would have lost those changes): {CHANGED} and redo the edit",
            self.display
        )
    }

    /// Whether the open file still has the size, times and bytes it had when read.
    pub(crate) fn unchanged(&self) -> Result<(), String> {
        let fail = |e: io::Error| format!("could not check {}: {e}", self.display);
        if !self.same_bytes().map_err(fail)? {
            return Err(self.changed());
        }
        let now = self.file.metadata().map_err(fail)?;
        if !self.same_stamp(&now) || (now.ctime(), now.ctime_nsec()) != self.ctime() {
            return Err(self.changed());
        }
        Ok(())
    }

    /// The check around the swap: `entry` (the entry at the path, or the one swapped out) is the
    /// file read, and its size and modification time are as read. The change time is left out,
    /// since the swap itself updates it.
    pub(crate) fn check_entry(&self, entry: &Metadata) -> Result<(), String> {
        if Kind::of(entry) != Kind::Regular || !same_file(entry, &self.meta) {
            return Err(self.changed());
        }
        match self.file.metadata() {
            Ok(now) if self.same_stamp(&now) => Ok(()),
            Ok(_) => Err(self.changed()),
            Err(e) => Err(format!("could not check {}: {e}", self.display)),
        }
    }

    fn same_stamp(&self, now: &Metadata) -> bool {
        now.len() == self.meta.len()
            && (now.mtime(), now.mtime_nsec()) == (self.meta.mtime(), self.meta.mtime_nsec())
    }

    fn ctime(&self) -> (i64, i64) {
        (self.meta.ctime(), self.meta.ctime_nsec())
    }

    /// Reads the file again from the start and compares it with what was read (a change within
    /// the file system's timestamp granularity keeps the times).
    fn same_bytes(&self) -> io::Result<bool> {
        let mut buf = vec![0u8; COMPARE_CHUNK];
        let mut pos = 0usize;
        loop {
            let n = self.file.read_at(&mut buf, pos as u64)?;
            if n == 0 {
                return Ok(pos == self.bytes.len());
            }
            match self.bytes.get(pos..pos + n) {
                Some(old) if old == &buf[..n] => pos += n,
                _ => return Ok(false),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;
    use std::fs::{self, OpenOptions};
    use std::io::Write;
    use std::path::Path;

    fn take(path: &Path) -> Snapshot {
        let target = Target::resolve(path, "f", Action::Edit).unwrap();
        Snapshot::take(&target).unwrap()
    }

    #[test]
    fn unchanged_file_passes_both_checks() {
        let dir = TempDir::new("snap-same");
        let f = dir.0.join("f");
        fs::write(&f, "one\ntwo\n").unwrap();
        let snap = take(&f);
        assert_eq!(snap.bytes, b"one\ntwo\n");
        assert_eq!(snap.unchanged(), Ok(()));
        assert_eq!(snap.check_entry(&fs::symlink_metadata(&f).unwrap()), Ok(()));
    }

    #[test]
    fn appended_line_is_noticed() {
        let dir = TempDir::new("snap-append");
        let f = dir.0.join("f");
        fs::write(&f, "one\n").unwrap();
        let snap = take(&f);
        let mut w = OpenOptions::new().append(true).open(&f).unwrap();
        w.write_all(b"two\n").unwrap();
        let err = snap.unchanged().unwrap_err();
        assert!(err.contains(CHANGED), "{err}");
        let err = snap
            .check_entry(&fs::symlink_metadata(&f).unwrap())
            .unwrap_err();
        assert!(err.contains(CHANGED), "{err}");
    }

    #[test]
    fn same_size_rewrite_is_noticed_by_content() {
        let dir = TempDir::new("snap-rewrite");
        let f = dir.0.join("f");
        fs::write(&f, "aaaa").unwrap();
        let snap = take(&f);
        let old = fs::metadata(&f).unwrap();
        fs::OpenOptions::new()
            .write(true)
            .open(&f)
            .unwrap()
            .write_all(b"bbbb")
            .unwrap();
        // Put the times back, as a change within one timestamp tick would leave them.
        let times = fs::FileTimes::new().set_modified(old.modified().unwrap());
        fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_times(times)
            .unwrap();
        let err = snap.unchanged().unwrap_err();
        assert!(err.contains(CHANGED), "{err}");
    }

    #[test]
    fn replaced_file_is_noticed() {
        let dir = TempDir::new("snap-replaced");
        let f = dir.0.join("f");
        fs::write(&f, "one\n").unwrap();
        let snap = take(&f);
        fs::write(dir.0.join("g"), "one\n").unwrap();
        fs::rename(dir.0.join("g"), &f).unwrap();
        let err = snap
            .check_entry(&fs::symlink_metadata(&f).unwrap())
            .unwrap_err();
        assert!(err.contains(CHANGED), "{err}");
    }
}
