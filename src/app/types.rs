//! `mypi ext types [DIR]`: the editor stubs for a user who has only the binary. Writes the
//! LuaLS annotations of the script API (`stdlib/types/mypi.lua`, embedded) to
//! `DIR/_types/mypi.lua` (a `_` folder is never loaded as an extension) and a `.luarc.json`
//! pointing the Lua language server at it, unless the folder already has one (that is the
//! user's: the answer says what to add to it). DIR defaults to `.agents/extensions`.

use std::path::{Path, PathBuf};

/// The LuaLS annotations of `api`, `ctx` and the events, as this binary has them.
pub const LUA_STUBS: &str = include_str!("../../stdlib/types/mypi.lua");

/// The `.luarc.json` written next to the extensions.
const LUARC: &str = r#"{
  "runtime.version": "Lua 5.4",
  "workspace.library": ["_types"],
  "diagnostics.globals": ["api"]
}
"#;

/// Writes the stubs into `dir`; the lines to show, or what could not be written.
pub fn write_types(dir: &Path) -> Result<Vec<String>, String> {
    let types = dir.join("_types");
    let fail = |p: &Path, e: std::io::Error| format!("cannot write {}: {e}", p.display());
    std::fs::create_dir_all(&types).map_err(|e| fail(&types, e))?;
    let stubs = types.join("mypi.lua");
    std::fs::write(&stubs, LUA_STUBS).map_err(|e| fail(&stubs, e))?;
    let mut lines = vec![format!("wrote {}", stubs.display())];
    let luarc: PathBuf = dir.join(".luarc.json");
    if luarc.exists() {
        lines.push(format!(
            "kept {} (it is yours): add \"_types\" to its \"workspace.library\"",
            luarc.display()
        ));
    } else {
        std::fs::write(&luarc, LUARC).map_err(|e| fail(&luarc, e))?;
        lines.push(format!("wrote {}", luarc.display()));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stubs_and_a_luarc_are_written_and_a_users_luarc_is_kept() {
        let dir = crate::platform::testutil::TempDir::new("types");
        let lines = write_types(&dir.0).unwrap();
        assert_eq!(lines.len(), 2, "{lines:?}");
        let stubs = std::fs::read_to_string(dir.0.join("_types/mypi.lua")).unwrap();
        assert!(stubs.contains("function api.run_agent(agent) end"));
        let luarc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.0.join(".luarc.json")).unwrap())
                .unwrap();
        assert_eq!(luarc["workspace.library"][0], "_types");
        std::fs::write(dir.0.join(".luarc.json"), "{}").unwrap();
        let lines = write_types(&dir.0).unwrap();
        assert!(lines[1].starts_with("kept "), "{lines:?}");
        assert_eq!(
            std::fs::read_to_string(dir.0.join(".luarc.json")).unwrap(),
            "{}"
        );
    }
}
