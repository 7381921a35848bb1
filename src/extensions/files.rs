//! The file access scripts get through the host: folders listed and files read with the
//! host's backstops (at most [`MAX_DIR_ENTRIES`] names, regular files of a bounded size,
//! UTF-8 only), whatever a script asks for.

use std::path::Path;

use super::script::MAX_DIR_ENTRIES;

/// How a folder is listed: `api.read_dir`'s way (folders marked with `/`, a missing
/// folder empty) or Rhai's `list_dir` way (plain names, a missing folder an error).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Listing {
    Marked,
    Plain,
}

/// The names in the folder `p`, sorted, at most [`MAX_DIR_ENTRIES`].
pub(super) fn list_folder(p: &Path, how: Listing) -> Result<Vec<String>, String> {
    let entries = match std::fs::read_dir(p) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && how == Listing::Marked => {
            return Ok(Vec::new())
        }
        Err(e) => return Err(format!("cannot list {}: {e}", p.display())),
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        if names.len() == MAX_DIR_ENTRIES {
            return Err(format!(
                "cannot list {}: it has more than {MAX_DIR_ENTRIES} entries",
                p.display()
            ));
        }
        let mut name = entry.file_name().to_string_lossy().into_owned();
        if how == Listing::Marked && entry.path().is_dir() {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// The text of a regular file (a FIFO would block the call) of at most `max` bytes, UTF-8.
pub(super) fn read_text(p: &Path, max: usize) -> Result<String, String> {
    use std::io::Read;
    let shown = p.display();
    let meta = std::fs::metadata(p).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("cannot read {shown}: not a regular file"));
    }
    let too_big = || {
        format!(
            "cannot read {shown}: it is larger than {} (the script size limits)",
            crate::extensions::crossing::mib(max)
        )
    };
    if meta.len() > max as u64 {
        return Err(too_big());
    }
    let file = std::fs::File::open(p).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() > max {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|_| format!("cannot read {shown}: it is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_mark_folders_or_not_and_treat_a_missing_folder_by_their_rule() {
        let dir = crate::platform::testutil::TempDir::new("files");
        std::fs::create_dir(dir.0.as_path().join("sub")).unwrap();
        std::fs::write(dir.0.as_path().join("a.txt"), "").unwrap();
        assert_eq!(
            list_folder(dir.0.as_path(), Listing::Marked).unwrap(),
            ["a.txt", "sub/"]
        );
        assert_eq!(
            list_folder(dir.0.as_path(), Listing::Plain).unwrap(),
            ["a.txt", "sub"]
        );
        let missing = dir.0.as_path().join("nope");
        assert!(list_folder(&missing, Listing::Marked).unwrap().is_empty());
        let e = list_folder(&missing, Listing::Plain).unwrap_err();
        assert!(e.starts_with("cannot list "), "{e}");
    }

    #[test]
    fn a_folder_with_too_many_entries_is_an_error_for_both_listings() {
        let dir = crate::platform::testutil::TempDir::new("files");
        for i in 0..=MAX_DIR_ENTRIES {
            std::fs::write(dir.0.as_path().join(i.to_string()), "").unwrap();
        }
        for how in [Listing::Marked, Listing::Plain] {
            let e = list_folder(dir.0.as_path(), how).unwrap_err();
            assert!(e.contains("more than 10000 entries"), "{e}");
        }
    }
}
