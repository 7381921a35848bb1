//! The `api` object of a Rhai script: a registered custom type `Api`, handed to scripts by
//! the engine's variable resolver (`on_var`), with methods registered as native functions
//! that call the extension's [`ApiLink`]. Callbacks (handlers, tools' `execute`, commands)
//! are kept as `FnPtr`s in a [`Callbacks`] table keyed by [`CallbackId`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use ::rhai::{Array, Dynamic, Engine, FnPtr, Map, INT};

use super::convert::{map_to_json, script_err, to_json};
use crate::extensions::api::{ApiLink, CallbackId, ToolDef};

type RhaiResult<T> = Result<T, Box<::rhai::EvalAltResult>>;

/// The callbacks a script registered.
#[derive(Default)]
pub struct Callbacks {
    next: CallbackId,
    pub fns: HashMap<CallbackId, FnPtr>,
}

impl Callbacks {
    fn add(&mut self, f: FnPtr) -> CallbackId {
        self.next += 1;
        self.fns.insert(self.next, f);
        self.next
    }
}

/// What `api` holds; cloned (one `Rc`) on every access to the `api` variable.
#[derive(Clone)]
pub struct Api(Rc<ApiInner>);

pub struct ApiInner {
    link: Arc<ApiLink>,
    callbacks: Rc<RefCell<Callbacks>>,
    /// `api.state`: a shared map, so `api.state.count += 1` changes it in place.
    state: Dynamic,
    /// `api.extension`: `#{name, path, language}`.
    extension: Dynamic,
}

impl Api {
    /// `state` must be a shared map (see [`Dynamic::into_shared`]).
    pub fn new(link: Arc<ApiLink>, callbacks: Rc<RefCell<Callbacks>>, state: Dynamic) -> Self {
        let mut ext = Map::new();
        ext.insert("name".into(), link.info.name.clone().into());
        ext.insert(
            "path".into(),
            link.info.path.to_string_lossy().into_owned().into(),
        );
        ext.insert("language".into(), "rhai".into());
        Api(Rc::new(ApiInner {
            link,
            callbacks,
            state,
            extension: Dynamic::from_map(ext),
        }))
    }

    fn add_callback(&self, f: FnPtr) -> CallbackId {
        self.0.callbacks.borrow_mut().add(f)
    }

    fn drop_callback(&self, cb: CallbackId) {
        self.0.callbacks.borrow_mut().fns.remove(&cb);
    }

    /// Wraps a registration: on failure the callback is forgotten again.
    fn register(
        &self,
        f: FnPtr,
        reg: impl FnOnce(&ApiLink, CallbackId) -> Result<u64, String>,
    ) -> RhaiResult<ApiHandle> {
        let cb = self.add_callback(f);
        match reg(&self.0.link, cb) {
            Ok(id) => Ok(ApiHandle {
                api: self.clone(),
                id,
                cb,
            }),
            Err(e) => {
                self.drop_callback(cb);
                Err(script_err(e))
            }
        }
    }
}

/// What `api.on`, `api.tool` and `api.command` return: `.remove()` unregisters.
#[derive(Clone)]
pub struct ApiHandle {
    api: Api,
    id: u64,
    cb: CallbackId,
}

impl ApiHandle {
    fn remove(&mut self) -> bool {
        let removed = self.api.0.link.remove(self.id);
        if removed {
            self.api.drop_callback(self.cb);
        }
        removed
    }
}

/// Registers `Api` and its handle type with their methods.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<Api>("Api");
    engine.register_type_with_name::<ApiHandle>("ApiHandle");
    engine.register_fn("remove", ApiHandle::remove);
    engine.register_get("id", |h: &mut ApiHandle| h.id as INT);
    engine.register_get("state", |api: &mut Api| api.0.state.clone());
    engine.register_get("extension", |api: &mut Api| api.0.extension.clone());
    register_registrations(engine);
    register_messages(engine);
    engine.register_fn("exec", |api: &mut Api, cmd: &str| {
        exec(api, cmd, Array::new(), Map::new())
    });
    engine.register_fn("exec", |api: &mut Api, cmd: &str, args: Array| {
        exec(api, cmd, args, Map::new())
    });
    engine.register_fn(
        "exec",
        |api: &mut Api, cmd: &str, args: Array, opts: Map| exec(api, cmd, args, opts),
    );
}

fn register_registrations(engine: &mut Engine) {
    engine.register_fn("on", |api: &mut Api, event: &str, f: FnPtr| {
        on(api, event, f)
    });
    engine.register_fn("on", |api: &mut Api, event: &str, name: &str| {
        on(api, event, FnPtr::new(name)?)
    });
    engine.register_fn("tool", tool);
    engine.register_fn("command", |api: &mut Api, name: &str, f: FnPtr| {
        command(api, name, f, "")
    });
    engine.register_fn(
        "command",
        |api: &mut Api, name: &str, f: FnPtr, description: &str| command(api, name, f, description),
    );
}

fn register_messages(engine: &mut Engine) {
    engine.register_fn("send_message", |api: &mut Api, text: &str| {
        api.0.link.send_message(text, None).map_err(script_err)
    });
    engine.register_fn("send_message", |api: &mut Api, text: &str, opts: Map| {
        let deliver_as = opt_string(&opts, "deliver_as")?;
        api.0
            .link
            .send_message(text, deliver_as.as_deref())
            .map_err(script_err)
    });
    engine.register_fn("log", |api: &mut Api, msg: Dynamic| {
        api.0.link.log(&display(&msg))
    });
    engine.register_fn("notify", |api: &mut Api, msg: Dynamic| {
        api.0.link.notify(&display(&msg))
    });
}

/// A value as text: strings as they are, anything else as Rhai prints it.
pub fn display(value: &Dynamic) -> String {
    match value.as_immutable_string_ref() {
        Ok(s) => s.to_string(),
        Err(_) => value.to_string(),
    }
}

fn on(api: &mut Api, event: &str, f: FnPtr) -> RhaiResult<ApiHandle> {
    if crate::hooks::EventKind::parse(event).is_none() {
        return Err(script_err(format!("api.on: unknown event '{event}'")));
    }
    api.register(f, |link, cb| link.on(event, cb))
}

fn command(api: &mut Api, name: &str, f: FnPtr, description: &str) -> RhaiResult<ApiHandle> {
    api.register(f, |link, cb| link.command(name, description, cb))
}

fn tool(api: &mut Api, def: Map) -> RhaiResult<ApiHandle> {
    let name = opt_string(&def, "name")?
        .ok_or_else(|| script_err("api.tool: 'name' (a string) is required"))?;
    let execute = match def.get("execute") {
        Some(f) if f.is_fnptr() => f.clone().cast::<FnPtr>(),
        _ => {
            return Err(script_err(format!(
                "api.tool '{name}': 'execute' (a function) is required"
            )))
        }
    };
    let parameters = match def.get("parameters") {
        None => serde_json::json!({"type": "object", "properties": {}}),
        Some(p) => match p.as_map_ref() {
            Ok(m) => map_to_json(&m)
                .map_err(|e| script_err(format!("api.tool '{name}': parameters: {e}")))?,
            Err(_) => {
                return Err(script_err(format!(
                    "api.tool '{name}': 'parameters' must be a map (a JSON Schema object)"
                )))
            }
        },
    };
    let timeout_ms = match def.get("timeout_ms") {
        None => None,
        Some(t) => match t.as_int() {
            Ok(ms) if ms > 0 => Some(ms as u64),
            _ => {
                return Err(script_err(format!(
                    "api.tool '{name}': 'timeout_ms' must be a positive integer"
                )))
            }
        },
    };
    let tool = ToolDef {
        description: opt_string(&def, "description")?.unwrap_or_default(),
        parallel_safe: def
            .get("parallel_safe")
            .and_then(|b| b.as_bool().ok())
            .unwrap_or(false),
        name,
        parameters,
        timeout_ms,
    };
    api.register(execute, move |link, cb| link.tool(tool, cb))
}

/// `api.exec(cmd, args, #{timeout_ms, cwd})` -> `#{code, stdout, stderr, timed_out}`.
fn exec(api: &mut Api, cmd: &str, args: Array, opts: Map) -> RhaiResult<Map> {
    let args: Vec<String> = args.iter().map(display).collect();
    let timeout_ms = match opts.get("timeout_ms") {
        None => None,
        Some(t) => match t.as_int() {
            Ok(ms) if ms >= 0 => Some(ms as u64),
            _ => return Err(script_err("api.exec: 'timeout_ms' must be an integer")),
        },
    };
    let cwd = opt_string(&opts, "cwd")?;
    let r = api
        .0
        .link
        .exec(cmd, &args, timeout_ms, cwd.as_deref())
        .map_err(script_err)?;
    let mut out = Map::new();
    let code = r
        .code
        .map_or(Dynamic::UNIT, |c| Dynamic::from_int(c as INT));
    out.insert("code".into(), code);
    out.insert("stdout".into(), r.stdout.into());
    out.insert("stderr".into(), r.stderr.into());
    out.insert("timed_out".into(), r.timed_out.into());
    Ok(out)
}

/// A string field of an options map (`()` or missing -> `None`).
fn opt_string(map: &Map, key: &str) -> RhaiResult<Option<String>> {
    match map.get(key) {
        None => Ok(None),
        Some(v) if v.is_unit() => Ok(None),
        Some(v) => match v.as_immutable_string_ref() {
            Ok(s) => Ok(Some(s.to_string())),
            Err(t) => Err(script_err(format!("'{key}' must be a string, not {t}"))),
        },
    }
}

/// `api.state` as JSON (`{}` if the script put non-data into it).
pub fn state_json(state: &Dynamic) -> Result<serde_json::Value, String> {
    to_json(state)
}
