//! Keeps the script API's documents true to the code. The member table
//! ([`surface::MEMBERS`](super::surface::MEMBERS)) is the definition; these tests hold to it:
//!
//! - what a live Lua VM exposes on `api`, `ctx` and `ctx.ui`;
//! - what the Rhai engine has registered on its `Api`, `Ctx` and `Ui` types (read from the
//!   engine's own function signatures, not from the source);
//! - the reference (`stdlib/README.md`): a `### api.NAME` / `### ctx.NAME` heading per member,
//!   no heading for a member that does not exist, a `#### NAME` section per event;
//! - the LuaLS stubs (`stdlib/types/mypi.lua`): a `function api.NAME` / `---@field NAME` per
//!   member of `api`, `ctx` and `ctx.ui`, and nothing else on those classes.

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use crate::extensions::api::{ApiLink, Engine};
    use crate::extensions::lua::LuaEngine;
    use crate::extensions::registrar::Recording;
    use crate::extensions::rhai::RhaiEngine;
    use crate::extensions::script::{ExtensionInfo, Language, Limits};
    use crate::extensions::surface::{Object, MEMBERS};
    use crate::hooks::EventKind;
    use crate::platform::testutil::TempDir;
    use crate::vocab::owner::Owner;

    const REFERENCE: &str = include_str!("../../stdlib/README.md");
    const STUBS: &str = include_str!("../../stdlib/types/mypi.lua");

    fn set<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> BTreeSet<String> {
        items.into_iter().map(Into::into).collect()
    }

    /// `api.on`, `ctx.cwd`, `ctx.ui.confirm`, ... as the member table has them.
    fn defined() -> BTreeSet<String> {
        set(MEMBERS.iter().map(|m| m.full_name()))
    }

    /// The members reachable by walking `api` and `ctx` (what `api.builtin_tool` returns is
    /// built per call, and tested through the binary).
    fn walkable() -> BTreeSet<String> {
        set(MEMBERS
            .iter()
            .filter(|m| m.object != crate::extensions::surface::Object::Builtin)
            .map(|m| m.full_name()))
    }

    fn link(dir: &TempDir, file: &str, language: Language, source: &str) -> Arc<ApiLink> {
        let path = dir.0.join(file);
        std::fs::write(&path, source).unwrap();
        let info = ExtensionInfo {
            name: "names".into(),
            path,
            language,
            root: dir.0.clone(),
            embedded: None,
        };
        let registrar = Recording::new(dir.0.clone());
        Arc::new(ApiLink::new(
            info,
            Owner::new("names", 1),
            registrar.link_host(),
            json!({}),
        ))
    }

    /// The members of `api`, `ctx` and `ctx.ui` a Lua script sees.
    fn lua_members() -> BTreeSet<String> {
        let dir = TempDir::new("reference");
        let link = link(
            &dir,
            "names.lua",
            Language::Lua,
            r#"api.command("names", function(_, ctx)
              local out = {}
              local data = { state = true, extension = true, flags = true }
              for k, v in pairs(api) do
                if type(v) == "table" and not data[k] then
                  for k2 in pairs(v) do out[#out + 1] = "api." .. k .. "." .. k2 end
                else
                  out[#out + 1] = "api." .. k
                end
              end
              for k, v in pairs(ctx) do
                if type(v) == "table" then
                  for k2 in pairs(v) do out[#out + 1] = "ctx." .. k .. "." .. k2 end
                else
                  out[#out + 1] = "ctx." .. k
                end
              end
              return table.concat(out, ",")
            end)"#,
        );
        let mut engine = LuaEngine::new(link, Limits::default()).unwrap();
        engine.load().unwrap();
        let out = engine
            .call(
                1,
                &[json!("")],
                &crate::platform::testutil::run_ctx(&dir.0),
                Duration::from_secs(1),
            )
            .unwrap();
        set(out.as_str().unwrap().split(','))
    }

    /// The members registered on Rhai's `Api`, `Ctx` and `Ui` types, from the engine's
    /// signatures (`on(Api, ?, ?)`, `get$state(Api)`, ...).
    fn rhai_members() -> BTreeSet<String> {
        let dir = TempDir::new("reference-rhai");
        let link = link(&dir, "names.rhai", Language::Rhai, "");
        let engine = RhaiEngine::new(link, Limits::default()).unwrap();
        let mut out = BTreeSet::new();
        for sig in engine.signatures() {
            let Some((name, rest)) = sig.split_once('(') else {
                continue;
            };
            let first = rest.split([',', ')']).next().unwrap_or("");
            let owner = match first.rsplit(':').next().unwrap_or("").trim() {
                t if t.ends_with("Api") && !t.ends_with("ApiHandle") => "api",
                t if t.ends_with("Ctx") => "ctx",
                t if t.ends_with("Ui") => "ctx.ui",
                t if t.ends_with("Mcp") => "api.mcp",
                t if t.ends_with("Session") => "ctx.session",
                t if t.ends_with("Events") => "api.events",
                _ => continue,
            };
            // Writes: `api.state = #{..}` (the same member) and the refusals of `ctx.x = ..`.
            if name.starts_with("set$") || name.starts_with("index$set$") {
                continue;
            }
            let name = name.strip_prefix("get$").unwrap_or(name);
            out.insert(format!("{owner}.{name}"));
        }
        out
    }

    #[test]
    fn the_lua_vm_exposes_exactly_the_members_of_the_table() {
        assert_eq!(lua_members(), walkable());
    }

    #[test]
    fn the_rhai_engine_registers_exactly_the_members_of_the_table() {
        let mut live = rhai_members();
        assert!(live.remove("ctx.ui"), "ctx.ui is a getter");
        assert!(live.remove("api.mcp"), "api.mcp is a getter");
        assert!(live.remove("ctx.session"), "ctx.session is a getter");
        assert!(live.remove("api.events"), "api.events is a getter");
        assert_eq!(
            live,
            walkable(),
            "no undocumented extras (ctx.confirm, ctx.to_map)"
        );
    }

    #[test]
    fn the_reference_has_a_section_per_member_and_event() {
        let headings = |prefix: &str| -> BTreeSet<String> {
            REFERENCE
                .lines()
                .filter_map(|l| l.strip_prefix(prefix))
                .map(|s| s.trim().to_string())
                .collect()
        };
        let members: BTreeSet<String> = headings("### ")
            .into_iter()
            .filter(|h| h.starts_with("api.") || h.starts_with("ctx."))
            .collect();
        assert_eq!(
            members,
            defined(),
            "### api.* / ctx.* headings vs the member table"
        );
        let events = headings("#### ");
        for kind in EventKind::ALL {
            assert!(
                events.contains(kind.name()),
                "no #### {} section",
                kind.name()
            );
        }
    }

    /// The members a LuaLS class declares: `---@field NAME` lines under `---@class CLASS`,
    /// and `function VAR.NAME(` / `function VAR:NAME(` lines anywhere.
    fn stub_members(class: &str, var: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut in_class = false;
        for line in STUBS.lines() {
            if let Some(c) = line.strip_prefix("---@class ") {
                in_class = c.split_whitespace().next() == Some(class);
                continue;
            }
            if !line.starts_with("---") {
                in_class = false;
            }
            if let Some(f) = line.strip_prefix("---@field ").filter(|_| in_class) {
                out.insert(f.split_whitespace().next().unwrap_or("").to_string());
            }
            for sep in ['.', ':'] {
                if let Some(f) = line.strip_prefix(&format!("function {var}{sep}")) {
                    out.insert(f.split('(').next().unwrap_or("").to_string());
                }
            }
        }
        out
    }

    #[test]
    fn the_luals_stubs_declare_exactly_the_members_of_the_table() {
        let mut stubs = BTreeSet::new();
        for (class, var, prefix) in [
            ("mypi.Api", "api", "api"),
            ("mypi.Ctx", "Ctx", "ctx"),
            ("mypi.Ui", "Ui", "ctx.ui"),
            ("mypi.Mcp", "Mcp", "api.mcp"),
            ("mypi.Session", "Session", "ctx.session"),
            ("mypi.Events", "Events", "api.events"),
            ("mypi.BuiltinTool", "BuiltinTool", "api.builtin_tool(name)"),
        ] {
            let found = stub_members(class, var);
            assert!(!found.is_empty(), "no members found for {class}");
            stubs.extend(found.into_iter().map(|n| format!("{prefix}.{n}")));
        }
        assert!(stubs.remove("ctx.ui"), "mypi.Ctx declares ui");
        assert!(stubs.remove("api.mcp"), "mypi.Api declares mcp");
        assert!(stubs.remove("ctx.session"), "mypi.Ctx declares session");
        assert!(stubs.remove("api.events"), "mypi.Api declares events");
        // The data of what `api.builtin_tool` returns: the built-in's spec.
        for field in ["name", "description", "parameters"] {
            assert!(stubs.remove(&format!("api.builtin_tool(name).{field}")));
        }
        assert_eq!(
            stubs,
            defined(),
            "stdlib/types/mypi.lua vs the member table"
        );
    }

    #[test]
    fn the_luals_stubs_type_a_handler_for_every_event() {
        for kind in EventKind::ALL {
            let overload = format!(
                "---@overload fun(event: \"{}\", handler: fun(e: ",
                kind.name()
            );
            assert!(
                STUBS.contains(&overload),
                "stdlib/types/mypi.lua: no api.on overload for {}",
                kind.name()
            );
        }
    }

    /// A stub function: its object, its name, and its parameters (name, optional).
    type StubSignature = (Object, String, Vec<(String, bool)>);

    /// Each stub function of the API's objects: `(object, name, [(param, optional)])`, its
    /// parameters read from the `function` line and their optionality from the `---@param`
    /// lines above it.
    fn stub_signatures() -> Vec<StubSignature> {
        let objects = [
            ("api", Object::Api),
            ("Ctx", Object::Ctx),
            ("Ui", Object::Ui),
            ("Mcp", Object::Mcp),
            ("Session", Object::Session),
            ("Events", Object::Events),
            ("BuiltinTool", Object::Builtin),
        ];
        let mut out = Vec::new();
        let mut optional = BTreeSet::new();
        for line in STUBS.lines() {
            if let Some(p) = line.strip_prefix("---@param ") {
                let name = p.split_whitespace().next().unwrap_or("");
                if let Some(n) = name.strip_suffix('?') {
                    optional.insert(n.to_string());
                }
                continue;
            }
            let Some(rest) = line.strip_prefix("function ") else {
                if !line.starts_with("---") {
                    optional.clear();
                }
                continue;
            };
            let (var, rest) = rest.split_at(rest.find(['.', ':']).unwrap_or(0));
            let Some((_, object)) = objects.iter().find(|(v, _)| *v == var) else {
                continue;
            };
            let name = rest[1..].split('(').next().unwrap_or("").to_string();
            let inside = rest.split('(').nth(1).and_then(|r| r.split(')').next());
            let params = inside
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| (p.to_string(), optional.contains(p)))
                .collect();
            out.push((*object, name, params));
            optional.clear();
        }
        out
    }

    #[test]
    fn the_luals_stubs_take_the_parameters_of_the_table() {
        let mut wrong = Vec::new();
        for (object, name, params) in stub_signatures() {
            // `api.builtin_tool(name).execute`'s first parameter is bound by mypi (the
            // tool's name) and `ctx` is the caller's: its reference section says so.
            let found = MEMBERS
                .iter()
                .find(|m| m.object == object && m.name == name && object != Object::Builtin);
            let Some(member) = found else {
                continue;
            };
            let defined: Vec<(String, bool)> = member
                .params()
                .iter()
                .map(|f| (f.name.to_string(), !f.required))
                .collect();
            if defined != params {
                wrong.push(format!(
                    "{}: the stub takes {params:?}, the table {defined:?}",
                    member.full_name()
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "stdlib/types/mypi.lua:\n{}",
            wrong.join("\n")
        );
    }

    /// The `{a, b?, ...}` shape that follows `marker` in `text`.
    fn shape_after(text: &str, marker: &str) -> String {
        let rest = &text[text.find(marker).expect(marker) + marker.len()..];
        let open = rest.find('{').expect("a shape");
        let close = rest[open..].find('}').expect("its end");
        rest[open..open + close + 1].split_whitespace().collect()
    }

    #[test]
    fn the_mcp_servers_stub_lists_the_fields_the_reference_lists() {
        assert_eq!(
            shape_after(STUBS, "---Every configured server:"),
            shape_after(
                REFERENCE,
                "`api.mcp.servers() -> list` gives every configured MCP server as"
            ),
        );
    }

    /// Nothing the reference documents (a `### api.NAME` heading) is said to be coming later.
    #[test]
    fn no_documented_member_is_coming_later() {
        for line in REFERENCE.lines().filter(|l| l.contains("coming later")) {
            for m in MEMBERS {
                let name = m.full_name();
                let documented = REFERENCE.contains(&format!("### {name}\n"));
                let mentioned = line.contains(&format!("`{name}"))
                    || line.contains(&format!(
                        "`{}.*`",
                        name.rsplit_once('.').map_or("", |p| p.0)
                    ));
                assert!(!(documented && mentioned), "{name} is documented: {line}");
            }
        }
    }
}
