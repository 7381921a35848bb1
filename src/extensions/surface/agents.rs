//! `api.run_agent`, `api.run_agents` and `api.complete`: a script's table read into a
//! [`ChildSpec`](crate::agent::child::ChildSpec) / [`CompleteRequest`], the children run by the
//! host (the fan-out of `run_agents` happens in Rust, not on the script's thread), the
//! outcomes handed back as plain data. A child that fails is an outcome with `error`, not a
//! script error.

use serde_json::{json, Map, Value as Json};

use super::{Call, Ret};
use crate::agent::child::{self, CompleteRequest, MAX_CHILDREN};
use crate::vocab::protocol::{ChildOutcome, Message, Role};

/// How many children `api.run_agents` runs at once unless told.
const DEFAULT_CONCURRENCY: usize = 4;

fn outcome_json(o: ChildOutcome) -> Json {
    let mut v = json!({
        "text": o.text,
        "turns": o.turns,
        "usage": {"input_tokens": o.usage.input_tokens, "output_tokens": o.usage.output_tokens},
    });
    if let Some(e) = o.error {
        v["error"] = json!(e);
    }
    v
}

/// `api.run_agent{task, ...} -> {text, turns, usage, error?}`.
pub(super) fn run_agent(c: &mut Call<'_>) -> Result<Ret, String> {
    let (link, args) = (c.link, &mut c.args);
    let spec = child::spec_from_json(&args.take("agent").into_json())?;
    let mut outcomes = link.run_agents(vec![spec], 1)?;
    let outcome = outcomes.pop().unwrap_or_default();
    Ok(Ret::Data(outcome_json(outcome)))
}

/// `api.run_agents({ {...}, {...}, concurrency = 4 })` (or the list and `{concurrency}`
/// apart) -> the outcomes in order.
pub(super) fn run_agents(c: &mut Call<'_>) -> Result<Ret, String> {
    let (link, args) = (c.link, &mut c.args);
    let options = args.take("options").into_json();
    let (items, inline) = agent_list(args.take("agents").into_json())?;
    let concurrency = match options.get("concurrency").or(inline.as_ref()) {
        None | Some(Json::Null) => DEFAULT_CONCURRENCY,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n as usize,
            _ => {
                return Err(format!(
                    "'concurrency' must be a whole number of 1 or more, not {v}"
                ))
            }
        },
    };
    if items.len() > MAX_CHILDREN {
        return Err(format!(
            "{} agents asked for; at most {MAX_CHILDREN} run in one call",
            items.len()
        ));
    }
    let specs = items
        .iter()
        .enumerate()
        .map(|(i, v)| child::spec_from_json(v).map_err(|e| format!("agent {}: {e}", i + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    let outcomes = link.run_agents(specs, concurrency)?;
    Ok(Ret::Data(Json::Array(
        outcomes.into_iter().map(outcome_json).collect(),
    )))
}

/// The agents of `run_agents`' first argument, and a `concurrency` given inside it. A Lua
/// table with both list items and `concurrency` arrives as an object keyed "1", "2", ...
fn agent_list(value: Json) -> Result<(Vec<Json>, Option<Json>), String> {
    match value {
        Json::Array(items) => Ok((items, None)),
        Json::Object(mut map) => {
            let inline = map.remove("concurrency");
            let mut keyed: Vec<(usize, Json)> = Vec::with_capacity(map.len());
            for (k, v) in map {
                match k.parse::<usize>() {
                    Ok(i) => keyed.push((i, v)),
                    Err(_) => {
                        return Err(format!(
                            "unknown field '{k}'; give the agents as a list, and concurrency"
                        ))
                    }
                }
            }
            keyed.sort_by_key(|(i, _)| *i);
            Ok((keyed.into_iter().map(|(_, v)| v).collect(), inline))
        }
        other => Err(format!("the agents must be a list of tables, not {other}")),
    }
}

/// `api.complete{prompt | messages, system_prompt?, model?, provider?, max_tokens?, thinking?}` ->
/// `{text, usage}`.
pub(super) fn complete(c: &mut Call<'_>) -> Result<Ret, String> {
    let (link, args) = (c.link, &mut c.args);
    let Json::Object(req) = args.take("request").into_json() else {
        return Err("the request must be a table".into());
    };
    let messages = match (req.get("prompt"), req.get("messages")) {
        (Some(Json::String(p)), None) => vec![Message::user(p.clone())],
        (None, Some(list)) => messages_from(list)?,
        (Some(_), Some(_)) => return Err("give either 'prompt' or 'messages', not both".into()),
        _ => return Err("'prompt' (a string) or 'messages' (a list) is required".into()),
    };
    let text = |k: &str| req.get(k).and_then(Json::as_str).map(str::to_string);
    let max_tokens = match req.get("max_tokens") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => {
                return Err(format!(
                    "'max_tokens' must be a whole number of 1 or more, not {v}"
                ))
            }
        },
    };
    let done = link.complete(CompleteRequest {
        messages,
        system_prompt: text("system_prompt"),
        model: text("model"),
        provider: text("provider"),
        max_tokens,
        thinking: child::thinking_from_json(req.get("thinking"))?,
    })?;
    Ok(Ret::Data(json!({
        "text": done.text,
        "usage": {"input_tokens": done.usage.input_tokens, "output_tokens": done.usage.output_tokens},
    })))
}

/// `{role, content}` items as messages (roles `user`, `assistant`, `system`).
fn messages_from(list: &Json) -> Result<Vec<Message>, String> {
    let items: Vec<&Json> = match list {
        Json::Array(items) => items.iter().collect(),
        Json::Object(o) if o.is_empty() => Vec::new(),
        _ => return Err("'messages' must be a list of {role, content}".into()),
    };
    if items.is_empty() {
        return Err("'messages' is empty".into());
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            let empty = Map::new();
            let m = m.as_object().unwrap_or(&empty);
            let content = m.get("content").and_then(Json::as_str).unwrap_or_default();
            let role = match m.get("role").and_then(Json::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some("system") => Role::System,
                other => {
                    return Err(format!(
                        "message {}: the role must be user, assistant or system, not {}",
                        i + 1,
                        other.unwrap_or("missing")
                    ))
                }
            };
            let mut message = Message::user(content.to_string());
            message.role = role;
            Ok(message)
        })
        .collect()
}
