//! The names MCP things get inside mypi: a server's tool becomes the agent tool
//! `mcp__<server>__<tool>` and a server's prompt the command `/mcp__<server>__<prompt>`.
//! Characters outside `[A-Za-z0-9_]` become `_`; names longer than [`MAX_NAME`] or that
//! collide get a short hash suffix computed from the original names, so the same server and
//! tool always get the same name (a resumed session still matches).
//!
//! Collisions within a server are seen in its list. Across servers, a [`Namer`] decides from
//! the configured servers alone, never from what other servers list, so that a name does not
//! change when another server connects or changes its tools: a name that begins with the
//! `mcp__<server>__` of another configured server could be that server's too, and gets the
//! suffix. That covers servers whose names become the same (`p.q` and `p_q`: all their names)
//! and a server whose name continues another's (`a` and `a__b`: every name of `a__b`, and the
//! names of `a` that begin `mcp__a__b__`).

use std::collections::HashMap;

/// The longest tool name the model APIs accept.
pub const MAX_NAME: usize = 64;

/// Characters outside `[A-Za-z0-9_]` become `_`.
pub fn sanitize(text: &str) -> String {
    crate::vocab::text::identifier(text)
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

/// Names the tools and prompts of the configured servers (see the module's doc).
#[derive(Debug, Default)]
pub struct Namer {
    /// Each configured server's key ([`super::config::key`]) and `mcp__<server>__`.
    servers: Vec<(String, String)>,
}

impl Namer {
    /// A namer for these configured servers (all of them, enabled or not, so that enabling
    /// one changes no name).
    pub fn new<'a>(servers: impl IntoIterator<Item = &'a str>) -> Namer {
        Namer {
            servers: servers
                .into_iter()
                .map(|s| (super::config::key(s), format!("mcp__{}__", sanitize(s))))
                .collect(),
        }
    }

    /// Whether `plain`, a name of `server`, could be a name of another configured server.
    fn shared(&self, server: &str, plain: &str) -> bool {
        let own = super::config::key(server);
        self.servers
            .iter()
            .any(|(key, prefix)| *key != own && plain.starts_with(prefix.as_str()))
    }

    /// Whether `name` could be the agent name of one of `server`'s tools or prompts (before
    /// its lists are known): it begins with `mcp__<server>__`, or is that cut to make room for
    /// the hash suffix.
    pub fn could_name(server: &str, name: &str) -> bool {
        let prefix = plain(server, "");
        let tag = 9; // `_` and 8 hex digits
        name.starts_with(&prefix)
            || (name.len() == MAX_NAME
                && name
                    .get(..MAX_NAME - tag)
                    .is_some_and(|cut| prefix.starts_with(cut)))
    }

    /// The agent names of one server's tools (or prompts), in the order given. A name that
    /// is unique, short enough and no other server's stays `mcp__<server>__<tool>`; the
    /// others all get the hash suffix.
    pub fn names(&self, server: &str, tools: &[&str]) -> Vec<String> {
        let plains: Vec<String> = tools.iter().map(|t| plain(server, t)).collect();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for p in &plains {
            *counts.entry(p.as_str()).or_default() += 1;
        }
        plains
            .iter()
            .zip(tools)
            .map(|(p, tool)| {
                if p.len() > MAX_NAME || counts[p.as_str()] > 1 || self.shared(server, p) {
                    suffixed(p, server, tool)
                } else {
                    p.clone()
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of one server's tools when it is the only server configured.
    fn names(server: &str, tools: &[&str]) -> Vec<String> {
        Namer::new([server]).names(server, tools)
    }

    #[test]
    fn a_name_is_known_to_be_a_servers_before_its_lists_are() {
        assert!(Namer::could_name("my.server", "mcp__my_server__echo"));
        assert!(!Namer::could_name("my.server", "mcp__other__echo"));
        assert!(!Namer::could_name("fs", "mcp__fsx__read"));
        let long = "s".repeat(70);
        let name = &names(&long, &["t"])[0];
        assert_eq!(name.len(), MAX_NAME);
        assert!(Namer::could_name(&long, name));
        assert!(!Namer::could_name("short", name));
        assert!(!Namer::could_name(&long, "mcp__ä"));
    }

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
    fn names_two_servers_could_both_give_get_a_suffix_from_the_configuration_alone() {
        let namer = Namer::new(["p.q", "p_q", "a", "a__b", "fs"]);
        // Servers whose names become the same: every name.
        let (dot, under) = (namer.names("p.q", &["env"]), namer.names("p_q", &["env"]));
        assert!(
            dot[0].starts_with("mcp__p_q__env_") && dot[0].len() == 22,
            "{dot:?}"
        );
        assert!(under[0].starts_with("mcp__p_q__env_"), "{under:?}");
        assert_ne!(dot, under);
        // One name continuing another's: `mcp__a__b__c` could be either's.
        let a = namer.names("a", &["b__c", "x"]);
        let ab = namer.names("a__b", &["c"]);
        assert!(a[0].starts_with("mcp__a__b__c_"), "{a:?}");
        assert_eq!(a[1], "mcp__a__x", "no other server begins that way");
        assert!(ab[0].starts_with("mcp__a__b__c_"), "{ab:?}");
        assert_ne!(a[0], ab[0]);
        // An unrelated server keeps plain names; the same server under another spelling is
        // itself.
        assert_eq!(namer.names("fs", &["read"]), ["mcp__fs__read"]);
        assert_eq!(
            Namer::new(["my-srv"]).names("my_srv", &["t"]),
            ["mcp__my_srv__t"]
        );
        // Names depend on the configuration, not on order or on what is connected.
        let again = Namer::new(["fs", "a__b", "a", "p_q", "p.q"]);
        assert_eq!(again.names("a", &["b__c", "x"]), a);
        assert_eq!(again.names("p.q", &["env"]), dot);
    }

    #[test]
    fn unicode_becomes_underscores() {
        assert_eq!(names("é", &["ü"]), ["mcp______"]);
    }
}
