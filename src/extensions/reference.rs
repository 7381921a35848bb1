//! Keeps the script API reference (`stdlib/README.md`) true to the code: every member of
//! `api` and `ctx` that scripts can reach has a `### api.NAME` / `### ctx.NAME` heading, every
//! heading names a real member, and every event has a `#### NAME` section. Lua members are
//! read from a live VM; Rhai's from the engine's registrations on its `Api` type.

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use crate::extensions::api::{ApiLink, Engine, ExtensionInfo, Language, Limits};
    use crate::extensions::lua::LuaEngine;
    use crate::extensions::registrar::Recording;
    use crate::hooks::EventKind;
    use crate::owner::Owner;
    use crate::testutil::TempDir;

    const REFERENCE: &str = include_str!("../../stdlib/README.md");
    const RHAI_BINDINGS: &str = include_str!("rhai/bindings.rs");

    fn headings(prefix: &str) -> BTreeSet<String> {
        REFERENCE
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .map(|s| s.trim().to_string())
            .collect()
    }

    fn documented(object: &str) -> BTreeSet<String> {
        headings("### ")
            .into_iter()
            .filter_map(|h| h.strip_prefix(&format!("{object}.")).map(str::to_string))
            .collect()
    }

    /// The names of `api`'s and `ctx`'s members as a Lua script sees them.
    fn lua_members() -> (BTreeSet<String>, BTreeSet<String>) {
        let dir = TempDir::new("reference");
        let path = dir.0.join("names.lua");
        std::fs::write(
            &path,
            r#"api.command("names", function(_, ctx)
              local a, c = {}, {}
              for k in pairs(api) do a[#a + 1] = k end
              for k, v in pairs(ctx) do
                if type(v) == "table" then
                  for k2 in pairs(v) do c[#c + 1] = k .. "." .. k2 end
                else
                  c[#c + 1] = k
                end
              end
              return table.concat(a, ",") .. ";" .. table.concat(c, ",")
            end)"#,
        )
        .unwrap();
        let registrar = Recording::new(dir.0.clone());
        let info = ExtensionInfo {
            name: "names".into(),
            path,
            language: Language::Lua,
            root: dir.0.clone(),
        };
        let link = Arc::new(ApiLink::new(
            info,
            Owner::new("names", 1),
            registrar.clone(),
            json!({}),
        ));
        let mut engine = LuaEngine::new(link, Limits::default()).unwrap();
        engine.load().unwrap();
        let cb = registrar.of("command")[0].1;
        let out = engine
            .call(
                cb,
                &[json!("")],
                &crate::testutil::run_ctx(&dir.0),
                Duration::from_secs(1),
            )
            .unwrap();
        let text = out.as_str().unwrap().to_string();
        let (a, c) = text.split_once(';').unwrap();
        let set = |s: &str| {
            s.split(',')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        };
        (set(a), set(c))
    }

    /// Members registered on Rhai's `Api` type (`register_fn("name", |api: &mut Api ...`).
    fn rhai_members() -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        let mut rest = RHAI_BINDINGS;
        while let Some(i) = rest.find("engine.register_") {
            rest = &rest[i + "engine.register_".len()..];
            let Some(open) = rest.find("(\"") else { break };
            let after = &rest[open + 2..];
            let Some(close) = after.find('"') else { break };
            let name = &after[..close];
            let window = &after[close..after.len().min(close + 120)];
            let on_api = window.contains("Api") && !window.contains("ApiHandle");
            if on_api {
                names.insert(name.to_string());
            }
        }
        names
    }

    #[test]
    fn every_lua_api_member_is_documented_and_the_other_way_round() {
        let (api, ctx) = lua_members();
        assert_eq!(
            api,
            documented("api"),
            "api members (code) vs ### api.* headings"
        );
        assert_eq!(
            ctx,
            documented("ctx"),
            "ctx members (code) vs ### ctx.* headings"
        );
    }

    #[test]
    fn every_rhai_api_member_is_documented_and_the_other_way_round() {
        let members = rhai_members();
        assert!(members.contains("on"), "the scan found {members:?}");
        assert_eq!(
            members,
            documented("api"),
            "Rhai Api registrations vs ### api.* headings"
        );
    }

    #[test]
    fn every_event_has_a_section() {
        let documented = headings("#### ");
        for kind in EventKind::ALL {
            assert!(
                documented.contains(kind.name()),
                "no #### {} section",
                kind.name()
            );
        }
    }
}
