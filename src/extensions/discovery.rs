//! Finding extension scripts: every `*.lua` and `*.rhai` file below each root, recursively,
//! in sorted path order; a file or folder whose name starts with `_` or `.` is skipped (it is
//! for `require` / `import`, not for loading). An extension's name is its path relative to its
//! root without the suffix (`git/guard`).

use std::fs;
use std::path::{Path, PathBuf};

use super::script::{ExtensionInfo, Language};

/// Whether a file or folder name is skipped by discovery.
pub fn is_hidden(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.')
}

/// Every extension below `roots`, root by root, each root in sorted path order. A root that
/// does not exist contributes nothing. A path given directly as a root that is a script file
/// is loaded as it is (for `mypi ext check FILE`).
pub fn discover(roots: &[PathBuf]) -> Vec<ExtensionInfo> {
    let mut found = Vec::new();
    for root in roots {
        if root.is_file() {
            if let Some(info) = info_for(root.parent().unwrap_or(Path::new(".")), root) {
                found.push(info);
            }
            continue;
        }
        let mut files = Vec::new();
        walk(root, &mut files);
        files.sort();
        found.extend(files.iter().filter_map(|f| info_for(root, f)));
    }
    found
}

/// The extension a script file is, relative to `root`; `None` for other files.
pub fn info_for(root: &Path, path: &Path) -> Option<ExtensionInfo> {
    let language = Language::from_path(path)?;
    let rel = path.strip_prefix(root).unwrap_or(path).with_extension("");
    let name = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    Some(ExtensionInfo {
        name,
        path: path.to_path_buf(),
        language,
        root: root.to_path_buf(),
        embedded: None,
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if is_hidden(&name.to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, out),
            Ok(_) if Language::from_path(&path).is_some() && path.is_file() => out.push(path),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;

    #[test]
    fn finds_scripts_recursively_sorted_skipping_hidden() {
        let dir = TempDir::new("discover");
        let root = dir.0.join("ext");
        for f in [
            "b.lua",
            "a.rhai",
            "git/guard.lua",
            "_helpers.lua",
            ".hidden.lua",
            "_lib/x.lua",
            ".git/y.lua",
            "notes.txt",
        ] {
            let p = root.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, "").unwrap();
        }
        let names: Vec<(String, Language)> = discover(&[root.clone(), dir.0.join("missing")])
            .into_iter()
            .map(|i| (i.name, i.language))
            .collect();
        assert_eq!(
            names,
            vec![
                ("a".to_string(), Language::Rhai),
                ("b".into(), Language::Lua),
                ("git/guard".into(), Language::Lua)
            ]
        );
        let single = discover(&[root.join("git/guard.lua")]);
        assert_eq!(single[0].name, "guard");
    }
}
