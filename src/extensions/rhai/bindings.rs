//! The `api` object of a Rhai script and the functions of `ctx.ui`, built from the
//! engine-neutral member table ([`surface::MEMBERS`]): `Api` is a custom type handed to scripts
//! by the engine's variable resolver (`on_var`); each function member is registered, for every
//! number of arguments it accepts, as a raw function that converts its Rhai arguments into
//! [`Arg`]s as the member's parameter types ask (closures and function names are kept as
//! callbacks), calls [`surface::call`], and converts the result back. Callbacks are kept as
//! `FnPtr`s in a [`Callbacks`] table keyed by [`CallbackId`].

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use ::rhai::{Dynamic, Engine, FnPtr, NativeCallContext, INT};

use super::convert::{script_err, to_dynamic, to_json};
use super::ctx::{Ctx, Session, Ui};
use super::state::State;
use crate::extensions::api::ApiLink;
use crate::extensions::script::CallbackId;
use crate::extensions::surface::{self, Arg, Member, Object, Ret, Shape, Ty};

type RhaiResult<T> = Result<T, Box<::rhai::EvalAltResult>>;

/// The callbacks a script registered.
///
/// Keyed by id in ordered maps: a call looks its callback up (and its line when it fails), and
/// ids are small integers that compare faster than they hash.
#[derive(Default)]
pub struct Callbacks {
    next: CallbackId,
    pub fns: BTreeMap<CallbackId, FnPtr>,
    /// The script line each callback was handed over on (where a limit that stops it is
    /// reported: Rhai gives such stops the position of the call into the script, which a
    /// callback called from the host does not have).
    lines: BTreeMap<CallbackId, usize>,
    /// The line of the `api` call being converted.
    line: Option<usize>,
    /// The names of the script's own functions (a callback given by name must be one).
    pub script_fns: HashSet<String>,
}

impl Callbacks {
    fn add(&mut self, f: FnPtr) -> CallbackId {
        self.next += 1;
        self.fns.insert(self.next, f);
        if let Some(line) = self.line {
            self.lines.insert(self.next, line);
        }
        self.next
    }

    /// The line `cb` was handed over on.
    pub fn line(&self, cb: CallbackId) -> Option<usize> {
        self.lines.get(&cb).copied()
    }
}

/// What `api` holds; cloned (one `Rc`) on every access to the `api` variable.
#[derive(Clone)]
pub struct Api(Rc<ApiInner>);

pub struct ApiInner {
    link: Arc<ApiLink>,
    callbacks: Rc<RefCell<Callbacks>>,
    /// `api.state`: a handle on the extension's one state map.
    state: State,
    /// `api.extension`: `#{name, path, language}`.
    extension: Dynamic,
}

impl Api {
    pub fn new(link: Arc<ApiLink>, callbacks: Rc<RefCell<Callbacks>>, state: State) -> Self {
        let extension = to_dynamic(&surface::extension_value(&link.info));
        Api(Rc::new(ApiInner {
            link,
            callbacks,
            state,
            extension,
        }))
    }

    pub fn link(&self) -> &Arc<ApiLink> {
        &self.0.link
    }

    fn keep(&self, f: FnPtr) -> CallbackId {
        self.0.callbacks.borrow_mut().add(f)
    }

    fn forget(&self, cb: CallbackId) {
        let mut callbacks = self.0.callbacks.borrow_mut();
        callbacks.fns.remove(&cb);
        callbacks.lines.remove(&cb);
    }

    /// Whether `name` is one of the script's own functions.
    fn has_fn(&self, name: &str) -> bool {
        self.0.callbacks.borrow().script_fns.contains(name)
    }
}

/// What `api.on`, `api.tool`, `api.command` and `api.renderer` return: `.remove()`
/// unregisters.
#[derive(Clone)]
pub struct ApiHandle {
    api: Api,
    id: u64,
    cbs: Vec<CallbackId>,
}

impl ApiHandle {
    fn remove(&mut self) -> bool {
        let removed = self.api.0.link.remove(self.id);
        if removed {
            for cb in &self.cbs {
                self.api.forget(*cb);
            }
        }
        removed
    }
}

/// A value as text: strings as they are, anything else as Rhai prints it.
pub fn display(value: &Dynamic) -> String {
    match value.as_immutable_string_ref() {
        Ok(s) => s.to_string(),
        Err(_) => value.to_string(),
    }
}

/// A Rhai value as an [`Arg`] for a parameter of type `ty`; closures (and, where a function is
/// expected, function names) become callbacks.
fn to_arg(api: &Api, ty: Ty, v: &Dynamic) -> Arg {
    if v.is_shared() {
        return to_arg(api, ty, &v.flatten_clone());
    }
    if v.is_unit() {
        return Arg::Nil;
    }
    if v.is_fnptr() {
        return match ty {
            Ty::Func => Arg::Func(api.keep(v.clone().cast::<FnPtr>())),
            _ => Arg::Other("function".into()),
        };
    }
    if let (Ty::Func, Ok(name)) = (ty, v.as_immutable_string_ref()) {
        if !api.has_fn(name.as_str()) {
            return Arg::Other(format!(
                "string naming no function of the script ('{}')",
                name.as_str()
            ));
        }
        if let Ok(f) = FnPtr::new(name.as_str()) {
            return Arg::Func(api.keep(f));
        }
    }
    if let (Ty::Record(fields), true) = (ty, v.is_map()) {
        let map = v
            .read_lock::<::rhai::Map>()
            .map(|m| m.clone())
            .unwrap_or_default();
        let mut out: Vec<(String, Arg)> = map
            .iter()
            .map(|(k, v)| {
                let field_ty = fields
                    .iter()
                    .find(|f| f.name == k.as_str())
                    .map_or(Ty::Any, |f| f.ty);
                (k.to_string(), to_arg(api, field_ty, v))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        return Arg::Record(out);
    }
    if let Ok(b) = v.as_bool() {
        return Arg::Bool(b);
    }
    if let Ok(i) = v.as_int() {
        return Arg::Int(i);
    }
    if let Ok(f) = v.as_float() {
        return Arg::Num(f);
    }
    if v.is_string() || v.is_char() {
        return Arg::Str(display(v));
    }
    if v.is_map() || v.is_array() {
        return match to_json(v) {
            Ok(j) => Arg::Data(j),
            Err(e) => Arg::Other(format!("table holding {e}")),
        };
    }
    Arg::Other(v.type_name().to_string())
}

fn from_ret(api: &Api, ret: Ret) -> Dynamic {
    match ret {
        Ret::Nil => Dynamic::UNIT,
        Ret::Bool(b) => Dynamic::from_bool(b),
        Ret::Handle { id, cb } => Dynamic::from(ApiHandle {
            api: api.clone(),
            id,
            cbs: vec![cb],
        }),
        Ret::Handles { id, cbs } => Dynamic::from(ApiHandle {
            api: api.clone(),
            id,
            cbs,
        }),
        Ret::Data(j) => to_dynamic(&j),
        Ret::Builtin { name, spec } => Dynamic::from(BuiltinTool {
            api: api.clone(),
            name,
            spec: to_dynamic(&spec),
        }),
    }
}

/// Calls `member` for `api` with the script's arguments; on failure the callbacks they
/// created are forgotten and the message raised at the script's line.
fn invoke(
    api: &Api,
    member: &'static Member,
    args: &[Dynamic],
    ctx: Option<&Ctx>,
    line: Option<usize>,
) -> RhaiResult<Dynamic> {
    api.0.callbacks.borrow_mut().line = line;
    let params = member.params();
    let values: Vec<Arg> = args
        .iter()
        .enumerate()
        .map(|(i, v)| to_arg(api, params.get(i).map_or(Ty::Any, |p| p.ty), v))
        .collect();
    let kept: Vec<CallbackId> = values.iter().flat_map(Arg::callbacks).collect();
    match surface::call(api.link(), member, values, ctx.map(Ctx::run)) {
        Ok(ret) => Ok(from_ret(api, ret)),
        Err(e) => {
            for cb in kept {
                api.forget(cb);
            }
            Err(script_err(e))
        }
    }
}

/// Registers `member` on the type `T` (the receiver: `api.on(...)`) for every number of
/// arguments from none to one too many, so that a missing or an extra argument gets the
/// member's own message (as in Lua), not Rhai's "function not found". `api_of` finds the `Api` behind the
/// receiver (and the `ctx`, for its functions).
fn register_member<T: Clone + 'static>(
    engine: &mut Engine,
    member: &'static Member,
    api_of: fn(&T) -> (Api, Option<Ctx>),
) {
    let params = member.params();
    let run = move |cx: Cx, this: &T, args: &[Dynamic]| {
        let (api, ctx) = api_of(this);
        invoke(&api, member, args, ctx.as_ref(), cx.call_position().line())
    };
    type D = Dynamic;
    type Cx<'a> = NativeCallContext<'a>;
    for n in 0..=(params.len() + 1).min(4) {
        let name = member.name;
        match n {
            0 => engine.register_fn(name, move |cx: Cx, t: &mut T| run(cx, t, &[])),
            1 => engine.register_fn(name, move |cx: Cx, t: &mut T, a: D| run(cx, t, &[a])),
            2 => engine.register_fn(name, move |cx: Cx, t: &mut T, a: D, b: D| {
                run(cx, t, &[a, b])
            }),
            3 => engine.register_fn(name, move |cx: Cx, t: &mut T, a: D, b: D, c: D| {
                run(cx, t, &[a, b, c])
            }),
            _ => engine.register_fn(name, move |cx: Cx, t: &mut T, a: D, b: D, c: D, d: D| {
                run(cx, t, &[a, b, c, d])
            }),
        };
    }
}

/// What `api.builtin_tool(name)` returns: reads like `#{name, description, parameters}`,
/// and `.execute(args, ctx?)` runs the built-in.
#[derive(Clone)]
pub struct BuiltinTool {
    api: Api,
    name: String,
    spec: Dynamic,
}

impl BuiltinTool {
    fn field(&mut self, key: &str) -> Dynamic {
        self.spec
            .read_lock::<::rhai::Map>()
            .and_then(|m| m.get(key).cloned())
            .unwrap_or(Dynamic::UNIT)
    }

    fn execute(&mut self, args: Dynamic) -> RhaiResult<Dynamic> {
        let Some(member) = surface::member(Object::Builtin, "execute") else {
            return Ok(Dynamic::UNIT);
        };
        let name = Dynamic::from(self.name.clone());
        invoke(&self.api, member, &[name, args], None, None)
    }
}

/// Registers [`BuiltinTool`].
fn register_builtin(engine: &mut Engine) {
    engine.register_type_with_name::<BuiltinTool>("BuiltinTool");
    for key in ["name", "description", "parameters"] {
        engine.register_get(key, move |t: &mut BuiltinTool| t.field(key));
    }
    engine.register_fn("execute", |t: &mut BuiltinTool, args: Dynamic| {
        t.execute(args)
    });
    engine.register_fn(
        "execute",
        |t: &mut BuiltinTool, args: Dynamic, _ctx: Dynamic| t.execute(args),
    );
}

/// `api.flags`: the declared options' values, read from the host (`api.flags.NAME` or
/// `api.flags["NAME"]`).
#[derive(Clone)]
pub struct Flags(Api);

impl Flags {
    fn get(&mut self, key: &str) -> Dynamic {
        self.0
            .link()
            .host()
            .control
            .flag_value(key)
            .map_or(Dynamic::UNIT, |v| to_dynamic(&v))
    }
}

/// `api.mcp`: the MCP functions, on the extension's `Api`.
#[derive(Clone)]
pub struct Mcp(Api);

/// `api.events`: events between extensions.
#[derive(Clone)]
pub struct Events(Api);

/// Registers `Api`, its handle type and `ctx.ui`'s functions.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<Api>("Api");
    engine.register_type_with_name::<ApiHandle>("ApiHandle");
    engine.register_fn("remove", ApiHandle::remove);
    engine.register_get("id", |h: &mut ApiHandle| h.id as INT);
    engine.register_get("state", |api: &mut Api| api.0.state.clone());
    engine.register_set("state", |api: &mut Api, map: ::rhai::Map| {
        api.0.state.clone().assign(map)
    });
    engine.register_get("extension", |api: &mut Api| api.0.extension.clone());
    engine.register_get("version", |_: &mut Api| {
        crate::extensions::surface::VERSION.to_string()
    });
    engine.register_type_with_name::<Mcp>("Mcp");
    engine.register_get("mcp", |api: &mut Api| Mcp(api.clone()));
    register_builtin(engine);
    engine.register_type_with_name::<Flags>("Flags");
    engine.register_get("flags", |api: &mut Api| Flags(api.clone()));
    engine.register_indexer_get(|f: &mut Flags, key: &str| f.get(key));
    engine.register_indexer_set(|_: &mut Flags, _: &str, _: Dynamic| -> RhaiResult<()> {
        Err(script_err(
            "api.flags is read-only: declare options with api.flag{...}".to_string(),
        ))
    });
    engine.register_type_with_name::<Events>("Events");
    engine.register_get("events", |api: &mut Api| Events(api.clone()));
    for m in surface::MEMBERS {
        match (m.object, m.shape) {
            (Object::Api, Shape::Function(..)) => {
                register_member::<Api>(engine, m, |api| (api.clone(), None))
            }
            (Object::Ui, _) => register_member::<Ui>(engine, m, |ui| (ui.api().clone(), None)),
            (Object::Session, _) => {
                register_member::<Session>(engine, m, |s| (s.api().clone(), None))
            }
            (Object::Mcp, _) => register_member::<Mcp>(engine, m, |mcp| (mcp.0.clone(), None)),
            (Object::Events, _) => register_member::<Events>(engine, m, |e| (e.0.clone(), None)),
            (Object::Ctx, Shape::Function(..)) => {
                register_member::<Ctx>(engine, m, |c| (c.api().clone(), Some(c.clone())))
            }
            _ => {}
        }
    }
}
