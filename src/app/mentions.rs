//! `@path` mentions in a prompt (`explain @src/main.rs`): each file's content, as the `read`
//! tool would show it (within its limits), is added after the prompt, so the
//! model has it without a tool call. A word counts as a mention when it starts with `@` after
//! a space (or the line's start) and names a path (it has a `/` or a `.`, or such a file
//! exists): `me@example.com` and `@alice` are left alone. A mentioned file that cannot be read
//! is an error before anything is sent. Trailing punctuation (`@a.rs,`) is not part of the
//! path unless a file of that name exists.

use std::path::Path;

/// Most files one prompt may mention.
pub const MAX_MENTIONS: usize = 20;

/// The paths a prompt mentions, in order, each once.
pub fn mentioned(text: &str, cwd: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(raw) = word.strip_prefix('@') else {
            continue;
        };
        let trimmed = raw.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '"', '\'']);
        let path = if !trimmed.is_empty() && !cwd.join(raw).exists() {
            trimmed
        } else {
            raw
        };
        let looks_like_a_path = path.contains('/') || path.contains('.');
        if path.is_empty() || !(looks_like_a_path || cwd.join(path).exists()) {
            continue;
        }
        if !out.iter().any(|p| p == path) {
            out.push(path.to_string());
        }
    }
    out
}

/// The prompt with the content of every mentioned file after it; the error names the first
/// file that cannot be read and why.
pub fn expand(text: &str, cwd: &Path) -> Result<String, String> {
    let paths = mentioned(text, cwd);
    if paths.is_empty() {
        return Ok(text.to_string());
    }
    if paths.len() > MAX_MENTIONS {
        return Err(format!(
            "the prompt mentions {} files; at most {MAX_MENTIONS} can be attached",
            paths.len()
        ));
    }
    let mut out = text.to_string();
    for path in paths {
        let p = Path::new(&path);
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        };
        let content = crate::tools::read::read_whole(&full, &path)
            .map_err(|e| format!("@{path}: {e} (nothing was sent)"))?;
        out.push_str(&format!("\n\n<file path=\"{path}\">\n{content}\n</file>"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_paths_after_a_space_and_emails_are_not() {
        let dir = crate::platform::testutil::TempDir::new("mentions");
        std::fs::write(dir.0.join("notes"), "n\n").unwrap();
        let m = mentioned(
            "see @src/main.rs, @a.txt. and @notes but not me@x.com or @alice @src/main.rs",
            &dir.0,
        );
        assert_eq!(m, ["src/main.rs", "a.txt", "notes"]);
    }

    #[test]
    fn a_missing_file_is_an_error_and_a_present_one_is_attached() {
        let dir = crate::platform::testutil::TempDir::new("mentions2");
        std::fs::write(dir.0.join("a.txt"), "alpha\nbeta\n").unwrap();
        let out = expand("look at @a.txt", &dir.0).unwrap();
        assert!(
            out.starts_with("look at @a.txt\n\n<file path=\"a.txt\">\n"),
            "{out}"
        );
        assert!(out.contains("alpha") && out.ends_with("\n</file>"), "{out}");
        let e = expand("and @gone.rs", &dir.0).unwrap_err();
        assert!(
            e.starts_with("@gone.rs: ") && e.ends_with("(nothing was sent)"),
            "{e}"
        );
        assert_eq!(expand("no mentions", &dir.0).unwrap(), "no mentions");
    }
}
