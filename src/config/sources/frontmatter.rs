//! The front matter of a Markdown file (`SKILL.md`, a prompt file): the lines between a
//! first line `---` and the next `---`, read as the small part of YAML these files use:
//! `key: value` with plain, `'single'` or `"double"` quoted values, folded (`>`) and literal
//! (`|`) blocks, indented continuation lines, and lists (`- item` lines or `[a, b]`). Nested
//! maps (`metadata:`) are kept as their text; nothing is typed (`yes` stays `yes`).
//!
//! Hand-written rather than a YAML crate: the maintained Rust YAML crates either are
//! deprecated (`serde_yaml`) or bring a full YAML model with implicit typing that these flat
//! files do not need, and this parser's errors name the file's own line. Only the head of a
//! file is read ([`HEAD_BYTES`]): a 50 MB `SKILL.md` costs a 64 KiB read.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most of a file read to find its front matter.
pub const HEAD_BYTES: usize = 64 * 1024;

/// A value of the front matter.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    List(Vec<String>),
}

impl Value {
    /// The value as one line of text (a list's items joined with `, `).
    pub fn text(&self) -> String {
        match self {
            Value::Text(t) => t.clone(),
            Value::List(items) => items.join(", "),
        }
    }
}

/// The keys and values of a front matter, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrontMatter {
    pub fields: Vec<(String, Value)>,
}

impl FrontMatter {
    /// The value of `key`, when given and not empty.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .filter(|v| !matches!(v, Value::Text(t) if t.trim().is_empty()))
    }

    /// The value of `key` as trimmed text on one line (line breaks as spaces).
    pub fn line(&self, key: &str) -> Option<String> {
        let text = self.get(key)?.text();
        let one: Vec<&str> = text.split_whitespace().collect();
        Some(one.join(" ")).filter(|s| !s.is_empty())
    }
}

/// Why a file's front matter could not be read; the Display names the file and line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FrontMatterError {
    #[error("{path}: cannot read: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path}:{line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// The head of a file: its front matter (`None` when it has none) and the text after it
/// that the head holds (the whole body when the file is short).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Head {
    pub front: Option<FrontMatter>,
    pub body: String,
}

/// Reads at most [`HEAD_BYTES`] of `path` and parses its front matter.
pub fn read_head(path: &Path) -> Result<Head, FrontMatterError> {
    let read = |e: std::io::Error| FrontMatterError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(read)?;
    let mut bytes = Vec::with_capacity(4096);
    file.take(HEAD_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    let whole = bytes.len() < HEAD_BYTES;
    split(&bytes, whole).map_err(|(line, message)| FrontMatterError::Syntax {
        path: path.to_path_buf(),
        line,
        message,
    })
}

/// Splits `bytes` (a file's head; `whole` when it is the whole file) into front matter
/// and body. The error is a line number and what is wrong there.
pub fn split(bytes: &[u8], whole: bool) -> Result<Head, (usize, String)> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut lines = bytes.split_inclusive(|b| *b == b'\n');
    let first = lines.next().unwrap_or_default();
    if trim_eol(first) != b"---" {
        return Ok(Head {
            front: None,
            body: lossy_body(bytes, whole),
        });
    }
    let mut offset = first.len();
    let mut end = None;
    for line in lines {
        let bare = trim_eol(line);
        if bare == b"---" || bare == b"..." {
            end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((inner_end, body_start)) = end else {
        let message = if whole {
            "the front matter opened by `---` on line 1 is never closed by a `---` line"
        } else {
            "the front matter opened by `---` on line 1 is not closed within its first 64 KiB"
        };
        return Err((1, message.to_string()));
    };
    let inner = &bytes[first.len()..inner_end];
    let text = std::str::from_utf8(inner).map_err(|e| {
        let line = 2 + inner[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        (line, "the front matter is not UTF-8 text".to_string())
    })?;
    let front = parse(text, 2)?;
    Ok(Head {
        front: Some(front),
        body: lossy_body(&bytes[body_start..], whole),
    })
}

/// The body as text: a head cut inside a character loses that character.
fn lossy_body(bytes: &[u8], whole: bool) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(e) if !whole && e.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.trim_ascii_end()
}

/// Whether `line` is indented (a continuation of the key above).
fn indented(line: &str) -> bool {
    line.starts_with([' ', '\t'])
}

/// Parses the lines of a front matter; `first` is the file's line number of its first line.
pub fn parse(text: &str, first: usize) -> Result<FrontMatter, (usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = FrontMatter::default();
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let number = first + i;
        i += 1;
        let bare = line.trim();
        if bare.is_empty() || bare.starts_with('#') {
            continue;
        }
        if indented(line) {
            return Err((number, "an indented line with no key above it".into()));
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err((number, format!("expected `key: value`, found {bare:?}")));
        };
        let key = key.trim().to_string();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err((number, format!("{key:?} is not a key")));
        }
        if let Some((_, at)) = seen.iter().find(|(k, _)| *k == key) {
            return Err((
                number,
                format!("`{key}` is given twice (also on line {at})"),
            ));
        }
        seen.push((key.clone(), number));
        let start = i;
        while i < lines.len() && (lines[i].trim().is_empty() || indented(lines[i])) {
            i += 1;
        }
        let more: Vec<&str> = lines[start..i].to_vec();
        let value = value(rest.trim(), &more).map_err(|m| (number, format!("`{key}`: {m}")))?;
        out.fields.push((key, value));
    }
    Ok(out)
}

/// The value after `key:` (`rest`) with the indented lines below it (`more`).
fn value(rest: &str, more: &[&str]) -> Result<Value, String> {
    let items: Vec<&str> = more
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if let Some(style) = rest.strip_prefix(['>', '|']) {
        let literal = rest.starts_with('|');
        if !style
            .trim()
            .trim_matches(['-', '+'])
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            return Err(format!("unexpected {style:?} after the block indicator"));
        }
        return Ok(Value::Text(block(more, literal)));
    }
    if rest.is_empty() {
        if !items.is_empty() && items.iter().all(|l| l.starts_with('-')) {
            let list = items.iter().map(|l| unquote(l[1..].trim()));
            return list.collect::<Result<Vec<_>, _>>().map(Value::List);
        }
        return Ok(Value::Text(items.join(" ")));
    }
    if rest.starts_with('[') {
        let inner = rest
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .ok_or("a `[` list must end with `]` on its line")?;
        let list = inner.split(',').map(str::trim).filter(|s| !s.is_empty());
        return list
            .map(unquote)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::List);
    }
    if rest.starts_with(['"', '\'']) {
        if !items.is_empty() {
            return Err("a quoted value must end on its own line".into());
        }
        return unquote(rest).map(Value::Text);
    }
    let plain = strip_comment(rest);
    let mut words = vec![plain];
    words.extend(items);
    Ok(Value::Text(words.join(" ")))
}

/// A `|` (literal: lines kept) or `>` (folded: lines joined) block's text.
fn block(more: &[&str], literal: bool) -> String {
    let indent = more
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = more
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect();
    let text = if literal {
        lines.join("\n")
    } else {
        lines
            .split(|l| l.is_empty())
            .map(|para| para.join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    text.trim().to_string()
}

/// A plain value without a trailing ` # comment`.
fn strip_comment(s: &str) -> &str {
    match s.find(" #") {
        Some(i) => s[..i].trim_end(),
        None => s,
    }
}

/// A scalar: quoted (`'it''s'`, `"a \"b\""`) or plain.
fn unquote(s: &str) -> Result<String, String> {
    if let Some(inner) = s.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .ok_or("a value opened with ' is not closed on its line")?;
        return Ok(inner.replace("''", "'"));
    }
    let Some(inner) = s.strip_prefix('"') else {
        return Ok(strip_comment(s).to_string());
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let tail = strip_comment(chars.as_str()).trim();
                return match tail.is_empty() {
                    true => Ok(out),
                    false => Err(format!("unexpected {tail:?} after the closing quote")),
                };
            }
            '\\' => out.push(match chars.next() {
                Some('n') => '\n',
                Some('t') => '\t',
                Some(other) => other,
                None => '\\',
            }),
            c => out.push(c),
        }
    }
    Err("a value opened with \" is not closed on its line".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front(text: &str) -> FrontMatter {
        split(text.as_bytes(), true).unwrap().front.unwrap()
    }

    #[test]
    fn plain_quoted_block_and_list_values() {
        let f = front(
            "---\nname: pdf\ndescription: \"Read PDFs: \\\"all\\\" of them\"\nallowed-tools: [Read, 'Bash(git:*)']\nmetadata:\n  owner: me\nlong: >\n  one\n  two\n\n  three\nlist:\n  - a\n  - \"b\"\n---\nbody\n",
        );
        assert_eq!(f.line("name").unwrap(), "pdf");
        assert_eq!(f.line("description").unwrap(), "Read PDFs: \"all\" of them");
        assert_eq!(
            f.get("allowed-tools"),
            Some(&Value::List(vec!["Read".into(), "Bash(git:*)".into()]))
        );
        assert_eq!(f.get("long"), Some(&Value::Text("one two\nthree".into())));
        assert_eq!(
            f.get("list"),
            Some(&Value::List(vec!["a".into(), "b".into()]))
        );
        assert_eq!(f.line("metadata").unwrap(), "owner: me");
        let plain = front("---\ndescription: Does it. # a comment\n  and more\n---\n");
        assert_eq!(plain.line("description").unwrap(), "Does it. and more");
    }

    #[test]
    fn errors_name_the_line() {
        let err = |t: &str| split(t.as_bytes(), true).unwrap_err();
        assert_eq!(err("---\nname: a\n").0, 1);
        assert!(err("---\nname: a\n").1.contains("never closed"));
        assert_eq!(err("---\nname: a\nname: b\n---\n").0, 3);
        assert_eq!(err("---\nname: a\njust words\n---\n").0, 3);
        assert_eq!(err("---\n  x: 1\n---\n").0, 2);
        assert_eq!(err("---\nd: \"open\n---\n").0, 2);
        let bytes = b"---\nname: a\ndescription: \xff\xfe\n---\n";
        let e = split(bytes, true).unwrap_err();
        assert_eq!(e, (3, "the front matter is not UTF-8 text".into()));
        assert!(split(b"---\nname: a\n", false)
            .unwrap_err()
            .1
            .contains("64 KiB"));
    }

    #[test]
    fn no_front_matter_is_all_body() {
        let head = split(b"# Title\n\ntext", true).unwrap();
        assert_eq!(head.front, None);
        assert_eq!(head.body, "# Title\n\ntext");
        let head = split(b"---\r\ndescription: x\r\n---\r\nbody", true).unwrap();
        assert_eq!(head.front.unwrap().line("description").unwrap(), "x");
        assert_eq!(head.body, "body");
    }
}
