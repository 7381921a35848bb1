//! What `edit` shows the model about the text it matched: line numbers of occurrences, a
//! numbered snippet of the edited region, and for text that does not occur, a hint at a near
//! match that differs only in whitespace or line endings.

/// Lines of context shown around an edit.
const CONTEXT_LINES: usize = 3;
/// Most lines shown in a snippet.
const SNIPPET_MAX_LINES: usize = 20;
/// Most line numbers listed for repeated occurrences.
const MAX_LISTED_LINES: usize = 20;

/// 1-based line numbers of sorted byte offsets.
pub(super) fn line_numbers(text: &str, starts: &[usize]) -> Vec<usize> {
    let mut line = 1;
    let mut pos = 0;
    starts
        .iter()
        .map(|&s| {
            line += text.get(pos..s).map_or(0, |t| t.matches('\n').count());
            pos = s;
            line
        })
        .collect()
}

/// "a, b, c", shortened when there are very many.
pub(super) fn list_lines(lines: &[usize]) -> String {
    let mut s: Vec<String> = lines
        .iter()
        .take(MAX_LISTED_LINES)
        .map(usize::to_string)
        .collect();
    if lines.len() > MAX_LISTED_LINES {
        s.push(format!("and {} more", lines.len() - MAX_LISTED_LINES));
    }
    s.join(", ")
}

/// Lines `first..first+count` of `text` with context, numbered, at most [`SNIPPET_MAX_LINES`].
pub(super) fn snippet(text: &str, first: usize, count: usize) -> String {
    let from = first.saturating_sub(CONTEXT_LINES).max(1);
    let to = first + count - 1 + CONTEXT_LINES;
    let mut out: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(n, _)| (from..=to).contains(n))
        .take(SNIPPET_MAX_LINES + 1)
        .map(|(n, l)| format!("{n:>6}\t{l}"))
        .collect();
    if out.len() > SNIPPET_MAX_LINES {
        out.truncate(SNIPPET_MAX_LINES);
        out.push("   ...".into());
    }
    out.join("\n")
}

/// The error for text that does not occur, with a hint when it does once whitespace is ignored.
pub(super) fn not_found(work: &str, old: &str, display: &str) -> String {
    let base = format!("old_text not found in {display}");
    let (hay, map) = normalize(work);
    let (needle, _) = normalize(old);
    let needle = needle.trim();
    let near = match needle.is_empty() {
        true => None,
        false => hay.find(needle),
    };
    let (Some(at), Some(&start)) = (near, near.and_then(|i| map.get(i))) else {
        return format!(
            "{base}; read the file again and copy the text to replace exactly, including \
             whitespace and indentation"
        );
    };
    let end = map
        .get(at + needle.len().saturating_sub(1))
        .copied()
        .unwrap_or(start);
    let lines = line_numbers(work, &[start, end]);
    let (l1, l2) = (lines[0], lines[1]);
    let span = if l1 == l2 {
        format!("line {l1}")
    } else {
        format!("lines {l1}-{l2}")
    };
    format!(
        "{base}. Hint: it matches {span} if whitespace and line endings are ignored, so the \
         indentation, spacing or line breaks differ. The file has there:\n{}\nCopy the text \
         exactly as shown (without the line numbers) and try again.",
        snippet_exact(work, l1, l2)
    )
}

/// Lines `l1..=l2` of `text`, numbered, at most [`SNIPPET_MAX_LINES`].
fn snippet_exact(text: &str, l1: usize, l2: usize) -> String {
    let mut out: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(n, _)| (l1..=l2).contains(n))
        .take(SNIPPET_MAX_LINES)
        .map(|(n, l)| format!("{n:>6}\t{l}"))
        .collect();
    if l2 + 1 - l1 > SNIPPET_MAX_LINES {
        out.push("   ...".into());
    }
    out.join("\n")
}

/// `text` with every run of whitespace collapsed to one space, and for each byte of the result
/// the byte offset in `text` it came from.
fn normalize(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len());
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                map.push(i);
            }
            in_space = true;
        } else {
            out.push(c);
            map.extend(std::iter::repeat_n(i, c.len_utf8()));
            in_space = false;
        }
    }
    (out, map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_maps_back_to_offsets() {
        let (n, map) = normalize("a  \t b\né");
        assert_eq!(n, "a b é");
        assert_eq!(map, vec![0, 1, 5, 6, 7, 7]);
    }

    #[test]
    fn snippet_is_bounded() {
        let text: String = (1..=100).map(|i| format!("l{i}\n")).collect();
        let s = snippet(&text, 10, 50);
        assert!(s.starts_with("     7\tl7"));
        assert_eq!(s.lines().count(), SNIPPET_MAX_LINES + 1);
        assert!(s.ends_with("..."));
    }
}
