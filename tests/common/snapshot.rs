//! Snapshot files: [`assert_snapshot`] compares text with `tests/snapshots/NAME.txt` and, on
//! a difference, fails with a unified diff; `MYPI_UPDATE_SNAPSHOTS=1` writes the new text
//! instead (then review it with `git diff`, as the change it is). Written here rather than
//! with `insta` to keep a second `similar` major version and `console` out of the build; the
//! review step is `git diff` either way.

use std::path::PathBuf;

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("snapshots")
        .join(format!("{name}.txt"))
}

/// Fails unless `text` is the stored snapshot `name` (or stores it, when updating).
pub fn assert_snapshot(name: &str, text: &str) {
    let file = path(name);
    if std::env::var_os("MYPI_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        return;
    }
    let stored = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        panic!(
            "no snapshot {} ({e}); run with MYPI_UPDATE_SNAPSHOTS=1 to write it:\n{text}",
            file.display()
        )
    });
    if stored != text {
        let diff = similar::TextDiff::from_lines(&stored, text)
            .unified_diff()
            .header("stored", "now")
            .to_string();
        panic!(
            "snapshot {} changed (MYPI_UPDATE_SNAPSHOTS=1 stores the new one):\n{diff}",
            file.display()
        );
    }
}
