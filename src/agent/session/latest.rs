//! Choosing the session `--continue` resumes: the `*.jsonl` entries of the sessions folder,
//! newest first. Only regular files (or links to them) can be sessions; a folder, FIFO, socket
//! or device that happens to be named `*.jsonl` is listed with the reason it is passed over,
//! and is never opened (opening a FIFO could block).

use std::fs::{self, FileType};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// One `*.jsonl` entry of the sessions folder.
#[derive(Debug)]
pub struct Candidate {
    pub path: PathBuf,
    modified: SystemTime,
    /// Why this entry cannot be a session, if it cannot.
    pub not_a_file: Option<String>,
}

/// The `*.jsonl` entries of `dir` and of the folder sessions were kept in before (`legacy`),
/// the most recently modified first (none from a folder that cannot be read, e.g. because it
/// does not exist).
pub fn candidates(dir: &Path, legacy: Option<&Path>) -> Vec<Candidate> {
    let mut found: Vec<Candidate> = std::iter::once(dir)
        .chain(legacy)
        .filter_map(|d| fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(candidate)
        .collect();
    found.sort_by(|a, b| (b.modified, &b.path).cmp(&(a.modified, &a.path)));
    found
}

impl Candidate {
    pub fn modified(&self) -> SystemTime {
        self.modified
    }
}

fn candidate(path: PathBuf) -> Candidate {
    // `metadata` follows a link; a dangling one is read through the link itself.
    let (modified, not_a_file) = match fs::metadata(&path) {
        Ok(meta) => (
            meta.modified().ok(),
            (!meta.is_file()).then(|| format!("it is {}, not a file", kind(meta.file_type()))),
        ),
        Err(e) => (
            fs::symlink_metadata(&path).and_then(|m| m.modified()).ok(),
            Some(format!("cannot read it: {e}")),
        ),
    };
    Candidate {
        path,
        modified: modified.unwrap_or(UNIX_EPOCH),
        not_a_file,
    }
}

fn kind(t: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "something else"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;
    use std::fs::File;
    use std::time::Duration;

    #[test]
    fn newest_first_and_folders_are_marked() {
        let tmp = TempDir::new("latest");
        let old = tmp.0.join("a.jsonl");
        fs::write(&old, "{}\n").unwrap();
        File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
        fs::create_dir(tmp.0.join("b.jsonl")).unwrap();
        fs::write(tmp.0.join("c.txt"), "").unwrap();
        let found = candidates(&tmp.0, None);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].path, tmp.0.join("b.jsonl"));
        assert_eq!(
            found[0].not_a_file.as_deref(),
            Some("it is a folder, not a file")
        );
        assert_eq!(found[1].path, old);
        assert!(found[1].not_a_file.is_none());
        assert!(candidates(&tmp.0.join("missing"), None).is_empty());
    }
}
