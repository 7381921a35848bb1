//! The names MCP things get inside mypi: a server's tool becomes the agent tool
//! `mcp__<server>__<tool>` and a server's prompt the command `/mcp__<server>__<prompt>`.
//! Characters outside `[A-Za-z0-9_]` become `_`; names longer than [`MAX_NAME`] or that
//! collide after that all get a short hash suffix computed from the original names, so the
//! same server and tool always get the same name (a resumed session still matches).

use std::collections::HashMap;

/// The longest tool name the model APIs accept.
pub const MAX_NAME: usize = 64;

/// Characters outside `[A-Za-z0-9_]` become `_`.
pub fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `mcp__<server>__<tool>` before collisions and length are looked at.
fn plain(server: &str, tool: &str) -> String {
    format!("mcp__{}__{}", sanitize(server), sanitize(tool))
}

/// FNV-1a, 32 bits: short, stable across builds and platforms (a std hasher is neither).
fn fnv1a(parts: &[&str]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0xff;
            h = h.wrapping_mul(0x0100_0193);
        }
        for b in part.bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// `base` cut to fit [`MAX_NAME`] with `_` and an 8-hex-digit hash of the original names.
fn suffixed(base: &str, server: &str, tool: &str) -> String {
    let tag = format!("_{:08x}", fnv1a(&[server, tool]));
    let keep = MAX_NAME - tag.len();
    let mut cut: String = base.chars().take(keep).collect();
    cut.push_str(&tag);
    cut
}

/// The agent names of one server's tools (or prompts), in the order given. A name that is
/// unique and short enough stays `mcp__<server>__<tool>`; the others all get the hash suffix.
pub fn names(server: &str, tools: &[&str]) -> Vec<String> {
    let plains: Vec<String> = tools.iter().map(|t| plain(server, t)).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for p in &plains {
        *counts.entry(p.as_str()).or_default() += 1;
    }
    plains
        .iter()
        .zip(tools)
        .map(|(p, tool)| {
            if p.len() > MAX_NAME || counts[p.as_str()] > 1 {
                suffixed(p, server, tool)
            } else {
                p.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_keep_their_shape() {
        assert_eq!(
            names("fs", &["read_file", "list-dir"]),
            ["mcp__fs__read_file", "mcp__fs__list_dir"]
        );
        assert_eq!(names("my.server", &["a b"]), ["mcp__my_server__a_b"]);
    }

    #[test]
    fn collisions_all_get_a_stable_suffix() {
        let got = names("s", &["get-x", "get_x", "other"]);
        assert_eq!(got[2], "mcp__s__other");
        assert!(got[0].starts_with("mcp__s__get_x_") && got[0].len() == 22);
        assert!(got[1].starts_with("mcp__s__get_x_"));
        assert_ne!(got[0], got[1]);
        assert_eq!(got, names("s", &["get-x", "get_x", "other"]));
    }

    #[test]
    fn long_names_are_cut_to_64_with_a_suffix() {
        let long = "t".repeat(80);
        let got = names("server", &[&long]);
        assert_eq!(got[0].len(), MAX_NAME);
        assert!(got[0].starts_with("mcp__server__ttt"));
        let other = names("server", &[&format!("{long}x")]);
        assert_ne!(got[0], other[0]);
    }

    #[test]
    fn unicode_becomes_underscores() {
        assert_eq!(names("é", &["ü"]), ["mcp______"]);
    }
}
