//! The values a script passes to a member ([`Arg`]), what a member gives back ([`Ret`]),
//! and the one check of arguments against a member's parameters ([`checked`]) whose messages
//! both languages share.

use serde_json::Value as Json;

use super::{Field, Member, Ty};
use crate::extensions::script::CallbackId;

/// A value a script passed, as its engine converted it.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Nil,
    Bool(bool),
    Int(i64),
    Num(f64),
    Str(String),
    /// A table / map / array, as JSON.
    Data(Json),
    /// A script function the engine now keeps under this id.
    Func(CallbackId),
    /// A table read field by field for a [`Ty::Record`].
    Record(Vec<(String, Arg)>),
    /// Anything else, by the name of its type.
    Other(String),
}

impl Arg {
    /// The type's name as both languages' messages say it.
    pub fn type_name(&self) -> &str {
        match self {
            Arg::Nil => "nil",
            Arg::Bool(_) => "boolean",
            Arg::Int(_) | Arg::Num(_) => "number",
            Arg::Str(_) => "string",
            Arg::Data(_) | Arg::Record(_) => "table",
            Arg::Func(_) => "function",
            Arg::Other(t) => t,
        }
    }

    /// The callbacks this argument holds (to forget when the call fails).
    pub fn callbacks(&self) -> Vec<CallbackId> {
        match self {
            Arg::Func(cb) => vec![*cb],
            Arg::Record(fields) => fields.iter().flat_map(|(_, a)| a.callbacks()).collect(),
            _ => Vec::new(),
        }
    }

    /// A string argument (numbers as their text); `None` for anything else.
    pub fn opt_text(self) -> Option<String> {
        match self {
            Arg::Str(s) => Some(s),
            Arg::Int(i) => Some(i.to_string()),
            Arg::Num(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// [`Arg::opt_text`], `""` for anything else (a missing optional argument).
    pub fn text(self) -> String {
        self.opt_text().unwrap_or_default()
    }

    /// The callback a function argument is kept under.
    pub fn opt_callback(self) -> Option<CallbackId> {
        match self {
            Arg::Func(cb) => Some(cb),
            _ => None,
        }
    }

    /// [`Arg::opt_callback`] of a required function (checked already): 0 when absent.
    pub fn callback(self) -> CallbackId {
        self.opt_callback().unwrap_or(0)
    }

    /// An integer (a float without a fraction too).
    pub fn int(self) -> Option<i64> {
        match self {
            Arg::Int(i) => Some(i),
            Arg::Num(n) if n.fract() == 0.0 => Some(n as i64),
            _ => None,
        }
    }

    /// Field `name` of a record argument.
    pub fn field(self, name: &str) -> Option<Arg> {
        match self {
            Arg::Record(fields) => fields.into_iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A list of strings (numbers as their text); an empty Lua table is an empty list;
    /// `None` when it is not a list.
    pub fn strings(self) -> Option<Vec<String>> {
        match self {
            Arg::Data(Json::Array(items)) => Some(
                items
                    .into_iter()
                    .map(|v| match v {
                        Json::String(s) => s,
                        other => other.to_string(),
                    })
                    .collect(),
            ),
            Arg::Data(Json::Object(o)) if o.is_empty() => Some(Vec::new()),
            _ => None,
        }
    }

    /// The value as JSON data: records field by field, functions and what could not be
    /// converted as null.
    pub fn into_json(self) -> Json {
        match self {
            Arg::Record(fields) => Json::Object(
                fields
                    .into_iter()
                    .map(|(k, v)| (k, v.into_json()))
                    .collect(),
            ),
            Arg::Data(j) => j,
            Arg::Str(s) => Json::String(s),
            Arg::Int(i) => Json::from(i),
            Arg::Num(n) => Json::from(n),
            Arg::Bool(b) => Json::Bool(b),
            Arg::Nil | Arg::Func(_) | Arg::Other(_) => Json::Null,
        }
    }

    /// Plain data a script hands over to keep or send (`api.append_entry`,
    /// `api.events.emit`), at most `max` bytes of JSON; `what` names it in the error.
    pub fn into_data(self, what: &str, max: usize) -> Result<Json, String> {
        if let Arg::Other(t) = &self {
            return Err(format!("the data must be plain data, not a {t}"));
        }
        let data = self.into_json();
        let size = crate::vocab::text::json_len(&data);
        if size > max {
            return Err(format!(
                "the data is {} as JSON, more than the {} {what}",
                crate::extensions::crossing::mib(size),
                crate::extensions::crossing::mib(max)
            ));
        }
        Ok(data)
    }

    /// The value as text, the same in both languages (tables as JSON).
    pub fn display(&self) -> String {
        match self {
            Arg::Nil => "nil".into(),
            Arg::Bool(b) => b.to_string(),
            Arg::Int(i) => i.to_string(),
            Arg::Num(n) => n.to_string(),
            Arg::Str(s) => s.clone(),
            Arg::Data(j) => j.to_string(),
            Arg::Record(_) => "table".into(),
            Arg::Func(_) => "function".into(),
            Arg::Other(t) => t.clone(),
        }
    }
}

/// What a member returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Ret {
    Nil,
    Bool(bool),
    /// A registration's handle (`remove()` unregisters `id` and forgets `cb`).
    Handle {
        id: u64,
        cb: CallbackId,
    },
    /// A registration that holds several callbacks (`api.renderer`): `remove()` forgets
    /// them all.
    Handles {
        id: u64,
        cbs: Vec<CallbackId>,
    },
    Data(Json),
    /// `api.builtin_tool(name)`: the built-in's name and `{name, description, parameters}`;
    /// the engine adds its `execute`.
    Builtin {
        name: String,
        spec: Json,
    },
}

/// The checked arguments of one call, by parameter.
pub struct Args<'a> {
    /// The member's name for messages (`api.on`).
    pub(super) what: String,
    params: &'a [Field],
    values: Vec<Arg>,
}

impl Args<'_> {
    /// Takes the value of parameter `name` (nil when it was left out).
    pub(super) fn take(&mut self, name: &str) -> Arg {
        match self.params.iter().position(|p| p.name == name) {
            Some(i) if i < self.values.len() => std::mem::replace(&mut self.values[i], Arg::Nil),
            _ => Arg::Nil,
        }
    }
}

/// Checks `arg` against `ty`; the error names `what` (`api.on: the handler`).
fn check(what: &str, ty: Ty, arg: &Arg) -> Result<(), String> {
    let ok = match (ty, arg) {
        (Ty::Any, _) => true,
        (Ty::Str, Arg::Str(_) | Arg::Int(_) | Arg::Num(_)) => true,
        (Ty::Func, Arg::Func(_)) => true,
        (Ty::Int, Arg::Int(_)) => true,
        (Ty::Int, Arg::Num(n)) => n.fract() == 0.0,
        (Ty::Bool, Arg::Bool(_)) => true,
        (Ty::Table, Arg::Data(_)) => true,
        // Lua cannot tell an empty list from an empty table.
        (Ty::StrList, Arg::Data(Json::Object(o))) => o.is_empty(),
        (Ty::StrList, Arg::Data(Json::Array(items))) => {
            return match items.iter().find(|v| !(v.is_string() || v.is_number())) {
                Some(bad) => Err(format!(
                    "{what} must be a list of strings, but one is a {}",
                    json_type(bad)
                )),
                None => Ok(()),
            }
        }
        (Ty::Record(fields), Arg::Record(given)) => {
            for (key, value) in given {
                let Some(field) = fields.iter().find(|f| f.name == key) else {
                    let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
                    return Err(format!(
                        "{what}: unknown field '{key}'; the fields are {}",
                        names.join(", ")
                    ));
                };
                if !matches!(value, Arg::Nil) {
                    check(&format!("{what}: '{key}'"), field.ty, value)?;
                }
            }
            for f in fields.iter().filter(|f| f.required) {
                if given
                    .iter()
                    .all(|(k, v)| k != f.name || matches!(v, Arg::Nil))
                {
                    return Err(format!(
                        "{what}: '{}' ({}) is required",
                        f.name,
                        ty_name(f.ty)
                    ));
                }
            }
            true
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} must be {}, not {}",
            ty_name(ty),
            article(arg.type_name())
        ))
    }
}

fn ty_name(ty: Ty) -> &'static str {
    match ty {
        Ty::Str => "a string",
        Ty::Func => "a function",
        Ty::Int => "an integer",
        Ty::Bool => "a boolean",
        Ty::Table => "a table",
        Ty::StrList => "a list of strings",
        Ty::Any => "a value",
        Ty::Record(_) => "a table",
    }
}

fn article(type_name: &str) -> String {
    match type_name {
        "nil" => "nil".into(),
        t if t.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {t}"),
        t => format!("a {t}"),
    }
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "nil",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) | Json::Object(_) => "table",
    }
}

/// Checks the arguments of a call of `member` against its parameters.
pub(super) fn checked(member: &Member, values: Vec<Arg>) -> Result<Args<'static>, String> {
    let params = member.params();
    let name = member.full_name();
    if values.len() > params.len() {
        let names: Vec<&str> = params.iter().map(|p| p.name).collect();
        return Err(format!(
            "{name} takes {} argument{} ({}), got {}",
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            names.join(", "),
            values.len()
        ));
    }
    for (i, p) in params.iter().enumerate() {
        let arg = values.get(i).unwrap_or(&Arg::Nil);
        // A table of fields speaks for itself: `api.tool: 'execute' ... is required`.
        let what = match p.ty {
            Ty::Record(_) => name.clone(),
            _ => format!("{name}: the {}", p.name),
        };
        match arg {
            Arg::Nil if p.required => {
                return Err(format!(
                    "{name}: the {} ({}) is missing",
                    p.name,
                    ty_name(p.ty)
                ));
            }
            Arg::Nil => {}
            arg => check(&what, p.ty, arg)?,
        }
    }
    Ok(Args {
        what: name,
        params,
        values,
    })
}
