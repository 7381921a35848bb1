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
