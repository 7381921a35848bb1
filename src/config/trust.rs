//! Which project folders may run their own code. A cloned repository's
//! `.agents/extensions` can run any command through `api.exec`, so project-level code loads
//! only in a trusted folder; user-level extensions (`~/.agents/extensions`) always load.
//!
//! The answers live in the user's config, `~/.agents/config.toml`, in a `[trust]` table that
//! this module edits in place (other settings and comments are kept):
//!
//! ```toml
//! [trust]
//! folders = ["/home/me/src/app"]   # these folders (the REPL's "yes", `mypi trust`)
//! trees = ["/home/me/work"]        # these folders and every folder below them
//! denied = ["/tmp/cloned"]          # the REPL's "no": not asked again
//! ```
//!
//! Paths are stored canonical (symbolic links resolved), so a folder is the same folder
//! whatever path led to it.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table};

/// A problem with the trust settings.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}; fix or remove it")]
    Parse { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: `trust.{key}` must be a list of folder paths")]
    Shape { path: PathBuf, key: &'static str },
    #[error("{path}: no such folder ({source})")]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("HOME is not set, so there is no user config to keep trust settings in")]
    NoHome,
}

/// What the settings say about one folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Listed in `folders`, or below a folder of `trees`.
    Trusted,
    /// Listed in `denied`.
    Denied,
    /// Not mentioned: the REPL asks.
    Unknown,
}

/// The lists of the `[trust]` table.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Listing {
    pub folders: Vec<PathBuf>,
    pub trees: Vec<PathBuf>,
    pub denied: Vec<PathBuf>,
}

impl Listing {
    /// The `[trust]` lists of the parsed config file at `path` (empty when the table is
    /// missing).
    pub fn of(file: &Table, path: &Path) -> Result<Listing, TrustError> {
        let paths = |key: &'static str| -> Result<Vec<PathBuf>, TrustError> {
            let Some(item) = file.get("trust").and_then(|t| t.get(key)) else {
                return Ok(Vec::new());
            };
            let shape = || TrustError::Shape {
                path: path.to_path_buf(),
                key,
            };
            let array = item.as_array().ok_or_else(shape)?;
            array
                .iter()
                .map(|v| v.as_str().map(PathBuf::from).ok_or_else(shape))
                .collect()
        };
        Ok(Listing {
            folders: paths("folders")?,
            trees: paths("trees")?,
            denied: paths("denied")?,
        })
    }

    /// Whether the lists trust `folder` (a folder that cannot be resolved is not trusted).
    pub fn trusts(&self, folder: &Path) -> bool {
        self.decision(folder).is_ok_and(|d| d == Decision::Trusted)
    }

    /// What the lists say about `folder`.
    pub fn decision(&self, folder: &Path) -> Result<Decision, TrustError> {
        let folder = canonical(folder)?;
        if self.folders.contains(&folder) || self.trees.iter().any(|t| folder.starts_with(t)) {
            Ok(Decision::Trusted)
        } else if self.denied.contains(&folder) {
            Ok(Decision::Denied)
        } else {
            Ok(Decision::Unknown)
        }
    }
}

/// The trust settings in a user config file.
pub struct TrustStore {
    path: PathBuf,
}

const KEYS: [&str; 3] = ["folders", "trees", "denied"];

impl TrustStore {
    /// The store in `~/.agents/config.toml` of `home`.
    pub fn in_home(home: Option<&Path>) -> Result<TrustStore, TrustError> {
        let home = home.ok_or(TrustError::NoHome)?;
        Ok(TrustStore {
            path: home.join(".agents").join("config.toml"),
        })
    }

    /// The config file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the settings say about `folder`.
    pub fn decision(&self, folder: &Path) -> Result<Decision, TrustError> {
        self.list()?.decision(folder)
    }

    /// The `[trust]` lists (empty when the file or the table is missing).
    pub fn list(&self) -> Result<Listing, TrustError> {
        Listing::of(self.read()?.as_table(), &self.path)
    }

    /// Trusts `folder` (with `children`, every folder below it too). Returns the path stored.
    pub fn trust(&self, folder: &Path, children: bool) -> Result<PathBuf, TrustError> {
        let folder = canonical(folder)?;
        let key = if children { "trees" } else { "folders" };
        self.edit(|doc, store| {
            store.remove_from(doc, "denied", &folder)?;
            store.add_to(doc, key, &folder)
        })?;
        Ok(folder)
    }

    /// Remembers that the user said no for `folder`.
    pub fn deny(&self, folder: &Path) -> Result<PathBuf, TrustError> {
        let folder = canonical(folder)?;
        self.edit(|doc, store| store.add_to(doc, "denied", &folder))?;
        Ok(folder)
    }

    /// Forgets `folder` in every list (a folder that no longer exists is matched as given).
    /// Whether it was listed.
    pub fn revoke(&self, folder: &Path) -> Result<bool, TrustError> {
        let folder = canonical(folder).unwrap_or_else(|_| folder.to_path_buf());
        let mut found = false;
        self.edit(|doc, store| {
            for key in KEYS {
                found |= store.remove_from(doc, key, &folder)?;
            }
            Ok(())
        })?;
        Ok(found)
    }

    fn read(&self) -> Result<DocumentMut, TrustError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(TrustError::Read {
                    path: self.path.clone(),
                    source,
                })
            }
        };
        text.parse::<DocumentMut>().map_err(|e| TrustError::Parse {
            path: self.path.clone(),
            message: e.message().to_string(),
        })
    }

    /// Reads the file, applies `change`, writes it back (atomically).
    fn edit(
        &self,
        change: impl FnOnce(&mut DocumentMut, &Self) -> Result<(), TrustError>,
    ) -> Result<(), TrustError> {
        let mut doc = self.read()?;
        change(&mut doc, self)?;
        let write_err = |source| TrustError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let tmp = self.path.with_extension("toml.tmp");
        std::fs::write(&tmp, doc.to_string()).map_err(write_err)?;
        std::fs::rename(&tmp, &self.path).map_err(write_err)
    }

    /// The array `trust.key`, created when missing.
    fn array<'d>(
        &self,
        doc: &'d mut DocumentMut,
        key: &'static str,
    ) -> Result<&'d mut Array, TrustError> {
        let shape = || TrustError::Shape {
            path: self.path.clone(),
            key,
        };
        let table = doc
            .entry("trust")
            .or_insert_with(|| Item::Table(Table::new()))
            .as_table_like_mut()
            .ok_or_else(shape)?;
        table
            .entry(key)
            .or_insert(Item::Value(Array::new().into()))
            .as_array_mut()
            .ok_or_else(shape)
    }

    fn add_to(
        &self,
        doc: &mut DocumentMut,
        key: &'static str,
        folder: &Path,
    ) -> Result<(), TrustError> {
        let text = folder.to_string_lossy();
        let array = self.array(doc, key)?;
        if !array.iter().any(|v| v.as_str() == Some(&text)) {
            array.push(text.as_ref());
        }
        Ok(())
    }

    fn remove_from(
        &self,
        doc: &mut DocumentMut,
        key: &'static str,
        folder: &Path,
    ) -> Result<bool, TrustError> {
        if doc.get("trust").and_then(|t| t.get(key)).is_none() {
            return Ok(false);
        }
        let text = folder.to_string_lossy();
        let array = self.array(doc, key)?;
        let before = array.len();
        array.retain(|v| v.as_str() != Some(&text));
        Ok(array.len() != before)
    }
}

/// `folder` with symbolic links resolved.
fn canonical(folder: &Path) -> Result<PathBuf, TrustError> {
    folder.canonicalize().map_err(|source| TrustError::Folder {
        path: folder.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("mypi-trust-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(p.join("home")).unwrap();
        std::fs::create_dir_all(p.join("work/app/sub")).unwrap();
        p
    }

    #[test]
    fn answers_are_remembered_and_other_settings_kept() {
        let t = temp("store");
        let home = t.join("home");
        std::fs::create_dir_all(home.join(".agents")).unwrap();
        std::fs::write(
            home.join(".agents/config.toml"),
            "# my settings\nmodel = \"x\"\n",
        )
        .unwrap();
        let store = TrustStore::in_home(Some(&home)).unwrap();
        let app = t.join("work/app");
        assert_eq!(store.decision(&app).unwrap(), Decision::Unknown);
        store.deny(&app).unwrap();
        assert_eq!(store.decision(&app).unwrap(), Decision::Denied);
        store.trust(&app, false).unwrap();
        assert_eq!(store.decision(&app).unwrap(), Decision::Trusted);
        // A folder is not a tree: its children are not trusted...
        assert_eq!(store.decision(&app.join("sub")).unwrap(), Decision::Unknown);
        // ...unless trusted with its children.
        store.trust(&t.join("work"), true).unwrap();
        assert_eq!(store.decision(&app.join("sub")).unwrap(), Decision::Trusted);
        let text = std::fs::read_to_string(home.join(".agents/config.toml")).unwrap();
        assert!(text.starts_with("# my settings\nmodel = \"x\"\n"), "{text}");
        assert!(store.revoke(&app).unwrap());
        assert!(!store.revoke(&app).unwrap());
        let list = store.list().unwrap();
        assert!(list.folders.is_empty() && list.denied.is_empty());
        assert_eq!(list.trees.len(), 1);
        let _ = std::fs::remove_dir_all(&t);
    }

    #[test]
    fn a_broken_config_is_a_clear_error() {
        let t = temp("broken");
        let home = t.join("home");
        std::fs::create_dir_all(home.join(".agents")).unwrap();
        std::fs::write(home.join(".agents/config.toml"), "[trust\n").unwrap();
        let store = TrustStore::in_home(Some(&home)).unwrap();
        let e = store.decision(&t).unwrap_err().to_string();
        assert!(e.contains("config.toml is not valid TOML"), "{e}");
        std::fs::write(home.join(".agents/config.toml"), "[trust]\nfolders = 3\n").unwrap();
        let e = store.decision(&t).unwrap_err().to_string();
        assert!(e.contains("`trust.folders` must be a list"), "{e}");
        let _ = std::fs::remove_dir_all(&t);
    }
}
