//! `ctx`, the second argument of every callback: a custom type `Ctx` with read-only
//! properties `cwd`, `mode`, `session_id`, `model` and `ui`, and methods `abort()`,
//! `confirm(q)` and `notify(msg)`; `ctx.ui` is a `Ui` with `confirm(q) -> bool` and
//! `notify(msg)`. `ctx.to_map()` gives the data fields as a map.

use std::rc::Rc;
use std::sync::Arc;

use ::rhai::{Dynamic, Engine, Map};

use super::bindings::display;
use crate::extensions::api::{ApiLink, CallCtx};

/// `ctx`.
#[derive(Clone)]
pub struct Ctx(Rc<(CallCtx, Arc<ApiLink>)>);

impl Ctx {
    pub fn new(data: CallCtx, link: Arc<ApiLink>) -> Self {
        Ctx(Rc::new((data, link)))
    }

    fn data(&self) -> &CallCtx {
        &self.0 .0
    }

    fn link(&self) -> &ApiLink {
        &self.0 .1
    }
}

/// `ctx.ui`.
#[derive(Clone)]
pub struct Ui(Arc<ApiLink>);

/// Registers `Ctx` and `Ui`.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<Ctx>("Ctx");
    engine.register_type_with_name::<Ui>("Ui");
    engine.register_get("cwd", |c: &mut Ctx| c.data().cwd.clone());
    engine.register_get("mode", |c: &mut Ctx| c.data().mode.clone());
    engine.register_get("session_id", |c: &mut Ctx| c.data().session_id.clone());
    engine.register_get("model", |c: &mut Ctx| c.data().model.clone());
    engine.register_get("ui", |c: &mut Ctx| Ui(c.0 .1.clone()));
    engine.register_fn("abort", |c: &mut Ctx| c.link().abort());
    engine.register_fn("confirm", |c: &mut Ctx, q: Dynamic| {
        c.link().confirm(&display(&q))
    });
    engine.register_fn("notify", |c: &mut Ctx, msg: Dynamic| {
        c.link().notify(&display(&msg))
    });
    engine.register_fn("to_map", |c: &mut Ctx| {
        let d = c.data();
        let mut m = Map::new();
        m.insert("cwd".into(), d.cwd.clone().into());
        m.insert("mode".into(), d.mode.clone().into());
        m.insert("session_id".into(), d.session_id.clone().into());
        m.insert("model".into(), d.model.clone().into());
        m
    });
    engine.register_fn("confirm", |u: &mut Ui, q: Dynamic| {
        u.0.confirm(&display(&q))
    });
    engine.register_fn("notify", |u: &mut Ui, msg: Dynamic| {
        u.0.notify(&display(&msg))
    });
}
