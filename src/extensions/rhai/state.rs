//! `api.state` in Rhai: a handle on one map that the extension keeps for its whole life (a
//! custom type around a shared map). Rhai copies maps on `let`, so a plain map could never be
//! aliased; a handle can: `let s = api.state;` is the state itself, as `local s = api.state`
//! is in Lua, and it stays so across a reload (the hand-over fills the same map). Fields read
//! and write like a map's (`api.state.count += 1`, `api.state.items.push(x)`, `"k" in
//! api.state`, `keys()`, `len()`, `remove(k)`, `clear()`), within the map size limit.

use std::cell::RefCell;
use std::rc::Rc;

use ::rhai::{Array, Dynamic, Engine, Map, INT};

use super::convert::{map_to_json, script_err};

type RhaiResult<T> = Result<T, Box<::rhai::EvalAltResult>>;

/// The handle; clones share the map.
#[derive(Clone, Default)]
pub struct State(Rc<RefCell<Map>>, usize);

impl State {
    /// A state holding `map`; at most `max_len` fields.
    pub fn new(map: Map, max_len: usize) -> Self {
        State(Rc::new(RefCell::new(map)), max_len)
    }

    /// Replaces what the state holds (aliases see the new contents).
    pub fn replace(&self, map: Map) {
        *self.0.borrow_mut() = map;
    }

    pub fn to_json(&self) -> Result<serde_json::Value, String> {
        map_to_json(&self.0.borrow())
    }

    /// What a reload carries over: every field that is plain data within the limits; the
    /// others are left out, each with the reason.
    pub fn to_json_lenient(&self) -> (serde_json::Value, Vec<String>) {
        let mut out = serde_json::Map::new();
        let mut dropped = Vec::new();
        for (k, v) in self.0.borrow().iter() {
            match super::convert::to_json(v) {
                Ok(j) => {
                    out.insert(k.to_string(), j);
                }
                Err(e) => dropped.push(format!("api.state.{k} is not kept: {e}")),
            }
        }
        (serde_json::Value::Object(out), dropped)
    }

    /// `api.state = #{...}`: the state takes the map's fields (aliases of the state see them).
    pub fn assign(&mut self, map: Map) -> RhaiResult<()> {
        if map.len() > self.1 {
            return Err(script_err(format!(
                "api.state: more than {} fields (the map size limit)",
                self.1
            )));
        }
        self.replace(map);
        Ok(())
    }

    fn get(&mut self, key: &str) -> Dynamic {
        self.0.borrow().get(key).cloned().unwrap_or(Dynamic::UNIT)
    }

    fn set(&mut self, key: &str, value: Dynamic) -> RhaiResult<()> {
        let mut map = self.0.borrow_mut();
        if map.len() >= self.1 && !map.contains_key(key) {
            return Err(script_err(format!(
                "api.state: more than {} fields (the map size limit)",
                self.1
            )));
        }
        map.insert(key.into(), value);
        Ok(())
    }
}

/// Registers the `State` type and its map-like functions.
pub fn register(engine: &mut Engine) {
    engine.register_type_with_name::<State>("State");
    engine.register_indexer_get(State::get);
    engine.register_indexer_set(State::set);
    engine.register_fn("contains", |s: &mut State, key: &str| {
        s.0.borrow().contains_key(key)
    });
    engine.register_fn("keys", |s: &mut State| -> Array {
        s.0.borrow()
            .keys()
            .map(|k| Dynamic::from(k.to_string()))
            .collect()
    });
    engine.register_fn("values", |s: &mut State| -> Array {
        s.0.borrow().values().cloned().collect()
    });
    engine.register_fn("len", |s: &mut State| s.0.borrow().len() as INT);
    engine.register_fn("is_empty", |s: &mut State| s.0.borrow().is_empty());
    engine.register_fn("remove", |s: &mut State, key: &str| {
        s.0.borrow_mut().remove(key).unwrap_or(Dynamic::UNIT)
    });
    engine.register_fn("clear", |s: &mut State| s.0.borrow_mut().clear());
    engine.register_fn("to_string", |s: &mut State| {
        Dynamic::from_map(s.0.borrow().clone()).to_string()
    });
    engine.register_fn("to_debug", |s: &mut State| {
        format!("{:?}", Dynamic::from_map(s.0.borrow().clone()))
    });
}
