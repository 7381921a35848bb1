//! The `ctx` a Lua callback gets: a read-only table of the run's data (`cwd`, `mode`, ...),
//! the VM's `ctx.ui` / `ctx.session` tables, and the functions bound to the run (`abort`,
//! `progress`, ...). One is made per run context ([`CtxMaker::make`]) and given to every
//! call of that run; each call of a `code` script's is a context of its own, so making one is
//! on the path of every such call: the proxy's code is compiled once per VM, the data table
//! is shared by the contexts whose data is the same, and the bound functions are made when
//! first read (`pairs` makes them all first, so it lists them).

use std::cell::{OnceCell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use mlua::{Function, Lua, Table, Value};

use super::convert::json_to_lua;
use super::globals::{lazy_members, member_function, Shared};
use crate::extensions::surface::{self, Object, Shape};
use crate::vocab::run::RunContext;

/// Makes the read-only `ctx` of one run from a table of its data (shared with the runs
/// whose data is the same: never handed to the script) and `make(name)`, which makes the
/// function `name` bound to the run (for the names in `names`) when first read. Reads go to
/// the data, then to the bound functions; writes fail; `pairs` walks a copy of both.
const CTX_PROXY: &str = r#"local next, names = ...
local error, setmetatable = error, setmetatable
local function read_only() error("ctx is read-only", 2) end
return function(data, make)
  local bound = {}
  local function get(k)
    local v = data[k]
    if v == nil and names[k] then
      v = bound[k]
      if v == nil then
        v = make(k)
        bound[k] = v
      end
    end
    return v
  end
  return setmetatable({}, {
    __index = function(_, k) return get(k) end,
    __newindex = read_only,
    __pairs = function()
      local all = {}
      for k, v in next, data do all[k] = v end
      for k in next, names do all[k] = get(k) end
      return next, all, nil
    end,
    __metatable = "ctx",
  })
end"#;

/// [`CTX_PROXY`] compiled by the first VM that needed it (see [`super::sandbox::compiled`]).
static PROXY_CODE: OnceLock<Vec<u8>> = OnceLock::new();

/// The data fields of a run's `ctx` (see [`surface::ctx_fields`]).
type Data = [(&'static str, serde_json::Value); 6];

/// What makes the `ctx` tables of one VM.
pub(super) struct CtxMaker {
    /// `ctx.ui` and `ctx.session`, made once per VM.
    objects: Vec<(&'static str, Table)>,
    /// [`CTX_PROXY`]'s factory, made at the first `ctx` (an extension that is never called
    /// does not pay for it).
    proxy: OnceCell<Function>,
    /// The data table made last, and what it holds (the calls of one run, and the nested
    /// calls of a `code` call, share theirs).
    data: RefCell<Option<(Data, Table)>>,
}

impl CtxMaker {
    pub fn new(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<CtxMaker> {
        let mut objects = Vec::new();
        for (name, object) in [("ui", Object::Ui), ("session", Object::Session)] {
            objects.push((name, lazy_members(lua, shared, object)?));
        }
        Ok(CtxMaker {
            objects,
            proxy: OnceCell::new(),
            data: RefCell::new(None),
        })
    }

    /// The proxy's factory, made on first use.
    fn proxy(&self, lua: &Lua) -> mlua::Result<&Function> {
        if let Some(proxy) = self.proxy.get() {
            return Ok(proxy);
        }
        let names = lua.create_table()?;
        for m in functions() {
            names.raw_set(m.name, true)?;
        }
        let next: Function = lua.globals().raw_get("next")?;
        let chunk = super::sandbox::compiled(lua, &PROXY_CODE, "=ctx", CTX_PROXY)?;
        let proxy = chunk.call::<Function>((next, names))?;
        Ok(self.proxy.get_or_init(|| proxy))
    }

    /// The `ctx` of run context `ctx`.
    pub fn make(
        &self,
        lua: &Lua,
        shared: &Rc<Shared>,
        ctx: &Arc<RunContext>,
    ) -> mlua::Result<Table> {
        let data = self.data(lua, surface::ctx_fields(ctx))?;
        let (shared, ctx) = (shared.clone(), ctx.clone());
        let make = lua.create_function(move |lua, name: mlua::String| {
            let Some(m) = functions().find(|m| m.name.as_bytes() == name.as_bytes().as_ref())
            else {
                return Ok(Value::Nil);
            };
            let f = member_function(lua, &shared, m, Some(ctx.clone()))?;
            Ok(Value::Function(f))
        })?;
        self.proxy(lua)?.call((data, make))
    }

    /// The table of `data` (and the objects): the last one made when it held the same.
    fn data(&self, lua: &Lua, data: Data) -> mlua::Result<Table> {
        let mut last = self.data.borrow_mut();
        if let Some((seen, table)) = &*last {
            if *seen == data {
                return Ok(table.clone());
            }
        }
        let table = lua.create_table_with_capacity(0, 8)?;
        for (name, value) in &data {
            table.raw_set(*name, json_to_lua(lua, value)?)?;
        }
        for (name, object) in &self.objects {
            table.raw_set(*name, object)?;
        }
        *last = Some((data, table.clone()));
        Ok(table)
    }
}

/// The function members of `ctx`.
fn functions() -> impl Iterator<Item = &'static surface::Member> {
    surface::MEMBERS
        .iter()
        .filter(|m| m.object == Object::Ctx && matches!(m.shape, Shape::Function(..)))
}
