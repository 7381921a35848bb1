//! `ctx`, the last argument of every callback: a custom type `Ctx` whose read-only properties
//! are the data fields of the engine-neutral member table (`cwd`, `mode`, `session_id`,
//! `model`, `depth`), plus `ui`; its functions (`abort()`) and `ctx.ui`'s (`confirm(q)`,
//! `notify(msg)`) are registered from the same table in `bindings.rs`. The same members as
//! Lua's `ctx`, and no others.
//!
//! Also [`LazyEvent`]: an event with a field read from the host only when the script asks for
//! it (`message_update`'s `text`, the reply so far; `agent_end`'s `messages`, the
//! conversation: `e.text`, `e["messages"]`); its other fields read like a map's.

use std::sync::Arc;

use ::rhai::{Dynamic, Engine, Map};

use super::bindings::Api;
use super::convert::{script_err, to_dynamic};
use crate::extensions::api::engine_value;
use crate::extensions::surface::{self, Object, Shape};
use crate::hooks::LazyField;
use crate::vocab::run::RunContext;

/// `ctx`: the context of the run that made the call.
#[derive(Clone)]
pub struct Ctx(Arc<RunContext>, Api);

impl Ctx {
    pub fn new(run: Arc<RunContext>, api: Api) -> Self {
        Ctx(run, api)
    }

    pub fn run(&self) -> &Arc<RunContext> {
        &self.0
    }

    pub fn api(&self) -> &Api {
        &self.1
    }

    fn field(&self, name: &str) -> Dynamic {
        surface::ctx_fields(&self.0)
            .into_iter()
            .find(|(n, _)| *n == name)
            .map_or(Dynamic::UNIT, |(_, v)| to_dynamic(&v))
    }
}

/// `ctx.ui`.
#[derive(Clone)]
pub struct Ui(Api);

impl Ui {
    pub fn api(&self) -> &Api {
        &self.0
    }
}

/// `ctx.session`.
#[derive(Clone)]
pub struct Session(Api);

impl Session {
    pub fn api(&self) -> &Api {
        &self.0
    }
}

/// An event with a field read on demand.
#[derive(Clone)]
pub struct LazyEvent {
    fields: Map,
    lazy: LazyField,
    /// `messages` once read (the text is made again on each read: a string is cheap).
    kept: Option<Dynamic>,
}

impl LazyEvent {
    pub fn new(fields: Map, lazy: LazyField) -> Self {
        LazyEvent {
            fields,
            lazy,
            kept: None,
        }
    }

    /// The whole event as a map, the on-demand field included (for `json_encode` and
    /// `keys()`).
    pub fn whole(&self) -> Map {
        let mut map = self.fields.clone();
        let field = match &self.kept {
            Some(kept) => kept.clone(),
            None => self.made(),
        };
        map.insert(self.lazy.name().into(), field);
        map
    }

    /// The on-demand field, made from the host's value.
    fn made(&self) -> Dynamic {
        match (self.lazy.text(), self.lazy.messages()) {
            (Some(text), _) => text.with(|t| Dynamic::from(t.to_string())),
            (None, Some(messages)) => {
                engine_value(&*messages, super::convert::tape_to_dynamic, to_dynamic)
            }
            // Unit once the event is over.
            (None, None) => Dynamic::UNIT,
        }
    }

    fn get(&mut self, key: &str) -> Dynamic {
        if key == self.lazy.name() {
            if self.lazy.text().is_some() {
                return self.made();
            }
            let kept = self.kept.take().unwrap_or_else(|| self.made());
            if !kept.is_unit() {
                self.kept = Some(kept.clone());
            }
            return kept;
        }
        self.fields.get(key).cloned().unwrap_or(Dynamic::UNIT)
    }
}

/// Registers `Ctx` (its data fields), `Ui` and `LazyEvent`.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<Ctx>("Ctx");
    engine.register_type_with_name::<Ui>("Ui");
    for m in surface::MEMBERS {
        if let (Object::Ctx, Shape::Data) = (m.object, m.shape) {
            let name = m.name;
            engine.register_get(name, move |c: &mut Ctx| c.field(name));
            // Only the data fields: Rhai writes `ctx.ui` back after a method call on it
            // (`ctx.ui.notify(..)`), which must stay quiet.
            engine.register_set(
                name,
                |_: &mut Ctx, _: Dynamic| -> Result<(), Box<::rhai::EvalAltResult>> {
                    Err(script_err("ctx is read-only".to_string()))
                },
            );
        }
    }
    engine.register_get("ui", |c: &mut Ctx| Ui(c.1.clone()));
    engine.register_type_with_name::<Session>("Session");
    engine.register_get("session", |c: &mut Ctx| Session(c.1.clone()));
    engine.register_type_with_name::<LazyEvent>("Event");
    engine.register_indexer_get(|e: &mut LazyEvent, key: &str| e.get(key));
    engine.register_fn("keys", |e: &mut LazyEvent| {
        // Strings as a map's `keys()` gives them (an `Identifier` would be a custom type).
        let key = |k: &str| Dynamic::from(::rhai::ImmutableString::from(k));
        let mut keys: ::rhai::Array = e.fields.keys().map(|k| key(k)).collect();
        keys.push(key(e.lazy.name()));
        keys
    });
    for field in ["type", "kind", "delta", "thinking", "text", "messages"] {
        engine.register_get(field, move |e: &mut LazyEvent| e.get(field));
    }
}
