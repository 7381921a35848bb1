//! The extensions that ship inside the binary (`scripts/` in the source tree): embedded at
//! build time and loaded after the discovered ones, like user extensions. A discovered
//! extension of the same name (`subagent.lua` in any root) wins; `--no-builtin-extensions`
//! and `--no-extensions` turn them off.

use std::path::PathBuf;

use super::script::{ExtensionInfo, Language};

/// Where the shipped extensions seem to live (their paths in messages).
pub const ROOT: &str = "builtin:scripts";

/// `(file name, source)` of every shipped extension.
const SHIPPED: &[(&str, &str)] = &[("subagent.lua", include_str!("../../scripts/subagent.lua"))];

/// The shipped extensions no discovered one of the same name replaces.
pub fn infos(discovered: &[ExtensionInfo]) -> Vec<ExtensionInfo> {
    SHIPPED
        .iter()
        .filter_map(|(file, source)| {
            let path = PathBuf::from(format!("{ROOT}/{file}"));
            let language = Language::from_path(&path)?;
            let name = file.rsplit_once('.').map_or(*file, |(n, _)| n).to_string();
            if discovered.iter().any(|d| d.name == name) {
                return None;
            }
            Some(ExtensionInfo {
                name,
                path,
                language,
                root: PathBuf::from(ROOT),
                embedded: Some(source),
            })
        })
        .collect()
}

/// What discovery finds in `roots`, with the shipped extensions after it when `builtins`.
pub fn discover(roots: &[PathBuf], builtins: bool) -> Vec<ExtensionInfo> {
    let mut found = super::discovery::discover(roots);
    if builtins {
        let shipped = infos(&found);
        found.extend(shipped);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discovered_extension_of_the_same_name_wins() {
        let shipped = infos(&[]);
        assert!(shipped.iter().any(|i| i.name == "subagent"));
        assert!(shipped.iter().all(|i| i.embedded.is_some()));
        let mine = ExtensionInfo {
            name: "subagent".into(),
            path: PathBuf::from("/p/.agents/extensions/subagent.rhai"),
            language: Language::Rhai,
            root: PathBuf::from("/p/.agents/extensions"),
            embedded: None,
        };
        assert!(infos(&[mine]).iter().all(|i| i.name != "subagent"));
    }
}
