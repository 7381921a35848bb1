//! `require` in the Lua engine: helper modules next to the script and in its root, and the
//! standard modules `json`, `path` and `schema`.

use super::*;

#[test]
fn require_finds_helpers_and_the_standard_modules() {
    on_worker(|| {
        let ext = load_files(&[
            (
                "main.lua",
                r#"
                local util = require("_util")
                local x = require("lib.x")
                local y = require("lib.y")
                local json = require("json")
                local path = require("path")
                local s = require("schema")
                assert(util.twice(2) == 4 and x.name == "x" and y.name == "y")
                assert(require("_util") == util)
                local text = json.encode({a = {1, 2}, e = {}, l = json.array()})
                local back = json.decode('{"a": [1, 2, null], "b": {"c": "d"}}')
                assert(back.a[2] == 2 and back.b.c == "d")
                assert(path.join("a", "b/c", "d.lua") == "a/b/c/d.lua")
                assert(path.dirname("a/b/c.lua") == "a/b" and path.basename("a/b/c.lua") == "c.lua")
                assert(path.ext("x.tar.gz") == "gz" and path.normalize("a/./b/../c//") == "a/c")
                api.tool{
                  name = "t", execute = function() end,
                  parameters = s.object{
                    path = s.string("file to read"),
                    n = s.integer("count"):optional(),
                    mode = s.enum({"head", "tail"}):default("head"),
                  },
                }
                api.state.text = text
                "#,
            ),
            ("_util.lua", "return {twice = function(n) return n * 2 end}"),
            ("lib/x.lua", "return {name = 'x'}"),
            ("lib/y/init.lua", "return {name = 'y'}"),
        ]);
        let mut engine = ext.engine;
        assert_eq!(
            engine.state().0["text"],
            json!(r#"{"a":[1,2],"e":{},"l":[]}"#)
        );
        let tools = ext.rec.tools.lock().unwrap().clone();
        assert_eq!(
            tools[0].parameters,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "file to read"},
                    "n": {"type": "integer", "description": "count"},
                    "mode": {"type": "string", "enum": ["head", "tail"], "default": "head"},
                },
                "required": ["path"],
            })
        );
        let required = engine.required_files();
        let names: Vec<_> = required
            .iter()
            .map(|p| p.strip_prefix(&ext.dir.0).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            names,
            [
                Path::new("_util.lua"),
                Path::new("lib/x.lua"),
                Path::new("lib/y/init.lua")
            ]
        );
    });
}

#[test]
fn require_errors_are_clear() {
    on_worker(|| {
        let (_, err) = load_err("require('nowhere')", limits());
        assert!(
            err.message.contains("module 'nowhere' not found"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("not a standard module"),
            "{}",
            err.message
        );
        let mut ext = build(
            &[("main.lua", "require('_bad')"), ("_bad.lua", "\nlocal = 1")],
            limits(),
            json!({}),
        );
        let err = ext.engine.load().unwrap_err();
        let bad = ext.dir.0.join("_bad.lua").display().to_string();
        assert!(
            err.message.starts_with(&format!("{bad}:2:")),
            "{}",
            err.message
        );
        assert_eq!(ext.engine.required_files().len(), 1);
    });
}
