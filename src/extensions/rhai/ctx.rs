//! `ctx`, the last argument of every callback: a custom type `Ctx` with read-only properties
//! `cwd`, `mode`, `session_id`, `model`, `depth` and `ui`, and the method `abort()`; `ctx.ui`
//! is a `Ui` with `confirm(q) -> bool` and `notify(msg)`. The same members as Lua's `ctx`.
//!
//! Also [`LazyEvent`]: an event whose `text` (`message_update`'s reply so far) is read from the
//! host only when the script asks for it (`e.text`, `e["text"]`); its other fields read like a
//! map's.

use std::sync::Arc;

use ::rhai::{Dynamic, Engine, Map, INT};

use super::bindings::display;
use crate::extensions::api::ApiLink;
use crate::hooks::SharedText;
use crate::run::RunContext;

/// `ctx`: the context of the run that made the call.
#[derive(Clone)]
pub struct Ctx(Arc<RunContext>, Arc<ApiLink>);

impl Ctx {
    pub fn new(data: Arc<RunContext>, link: Arc<ApiLink>) -> Self {
        Ctx(data, link)
    }
}

/// `ctx.ui`.
#[derive(Clone)]
pub struct Ui(Arc<ApiLink>);

/// An event with a field read on demand.
#[derive(Clone)]
pub struct LazyEvent {
    fields: Map,
    text: SharedText,
}

impl LazyEvent {
    pub fn new(fields: Map, text: SharedText) -> Self {
        LazyEvent { fields, text }
    }

    fn get(&mut self, key: &str) -> Dynamic {
        if key == "text" {
            return self.text.with(|t| Dynamic::from(t.to_string()));
        }
        self.fields.get(key).cloned().unwrap_or(Dynamic::UNIT)
    }
}

/// Registers `Ctx` and `Ui`.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<Ctx>("Ctx");
    engine.register_type_with_name::<Ui>("Ui");
    engine.register_get("cwd", |c: &mut Ctx| c.0.cwd.display().to_string());
    engine.register_get("mode", |c: &mut Ctx| c.0.mode.name().to_string());
    engine.register_get("session_id", |c: &mut Ctx| c.0.session_id.clone());
    engine.register_get("model", |c: &mut Ctx| c.0.model.clone());
    engine.register_get("depth", |c: &mut Ctx| INT::from(c.0.depth));
    engine.register_get("ui", |c: &mut Ctx| Ui(c.1.clone()));
    engine.register_fn("abort", |c: &mut Ctx| c.0.cancel.cancel());
    engine.register_type_with_name::<LazyEvent>("Event");
    engine.register_indexer_get(|e: &mut LazyEvent, key: &str| e.get(key));
    for field in ["type", "delta", "text"] {
        engine.register_get(field, move |e: &mut LazyEvent| e.get(field));
    }
    engine.register_fn("confirm", |u: &mut Ui, q: Dynamic| {
        u.0.confirm(&display(&q))
    });
    engine.register_fn("notify", |u: &mut Ui, msg: Dynamic| {
        u.0.notify(&display(&msg))
    });
}
