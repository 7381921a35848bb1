//! `ctx`, the last argument of every callback: a custom type `Ctx` with read-only properties
//! `cwd`, `mode`, `session_id`, `model`, `depth` and `ui`, and the method `abort()`; `ctx.ui`
//! is a `Ui` with `confirm(q) -> bool` and `notify(msg)`. The same members as Lua's `ctx`.

use std::sync::Arc;

use ::rhai::{Dynamic, Engine, INT};

use super::bindings::display;
use crate::extensions::api::ApiLink;
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
    engine.register_fn("confirm", |u: &mut Ui, q: Dynamic| {
        u.0.confirm(&display(&q))
    });
    engine.register_fn("notify", |u: &mut Ui, msg: Dynamic| {
        u.0.notify(&display(&msg))
    });
}
