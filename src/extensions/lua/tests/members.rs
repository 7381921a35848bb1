//! The `api` table's function members, made when a script first reads them.

use super::{load, on_worker};
use crate::extensions::surface::{Object, Shape, MEMBERS};

#[test]
fn api_members_are_made_when_read_and_pairs_lists_them_all() {
    on_worker(|| {
        let ext = load("");
        let lua = &ext.engine.lua;
        let untouched = lua.used_memory();
        let (function, kept, unknown, mcp): (bool, bool, bool, bool) = lua
            .load(
                "local f = api.tool
                 return type(f) == 'function', rawequal(f, api.tool),
                   api.no_such_member == nil, type(api.mcp.call) == 'function'",
            )
            .eval()
            .unwrap();
        assert!(function && kept && unknown && mcp);
        let listed: i64 = lua
            .load(
                "local n = 0
                 for _, v in pairs(api) do if type(v) == 'function' then n = n + 1 end end
                 return n",
            )
            .eval()
            .unwrap();
        let members = MEMBERS
            .iter()
            .filter(|m| m.object == Object::Api && matches!(m.shape, Shape::Function(..)))
            .count();
        assert_eq!(listed as usize, members);
        let all = lua.used_memory();
        assert!(
            all > untouched + members * 64,
            "{members} functions made cost {} bytes",
            all - untouched
        );
    });
}

#[test]
#[ignore = "probe"]
fn probe_vm_memory() {
    use mlua::{Lua, LuaOptions, StdLib};
    let gc = |l: &Lua| {
        l.gc_collect().unwrap();
        l.gc_collect().unwrap();
        l.used_memory()
    };
    let bare = Lua::new_with(StdLib::NONE, LuaOptions::default()).unwrap();
    println!("bare {}", gc(&bare));
    let safe = Lua::new_with(StdLib::ALL_SAFE, LuaOptions::default()).unwrap();
    println!("all_safe {}", gc(&safe));
    for (name, lib) in [("string", StdLib::STRING), ("table", StdLib::TABLE), ("math", StdLib::MATH), ("io", StdLib::IO), ("os", StdLib::OS), ("package", StdLib::PACKAGE), ("coroutine", StdLib::COROUTINE), ("utf8", StdLib::UTF8)] {
        let l = Lua::new_with(lib, LuaOptions::default()).unwrap();
        println!("{name} {}", gc(&l) as i64 - gc(&bare) as i64);
    }
    on_worker(move || {
        let ext = load("");
        println!("engine after empty load {}", gc(&ext.engine.lua));
        let ext = load("api.on('input', function(e) return {ok = true} end)");
        println!("engine after one handler {}", gc(&ext.engine.lua));
    });
}
