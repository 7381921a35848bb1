//! The Lua side of a `code` call ([`run`]): the model's script in a fresh VM of its own, built
//! like an extension's ([`super::sandbox`]: the safe libraries, the prelude, the CPU budget
//! that `pcall` cannot swallow, the memory cap) with less in it: no `io`, no `require`, no
//! `loadfile` / `dofile`, `os` reduced to its clocks. What the script gets instead:
//!
//! - `tools.NAME(args)` and `mcp.SERVER.TOOL(args)`: a tool call through the host
//!   ([`Request::Tool`], [`Request::Mcp`]); it returns the result's text and its details
//!   (a table, or nil) and raises `tools.NAME: message` at the script's line when the call
//!   fails (blocked, invalid arguments, the tool's error);
//! - `search_tools(query, limit?)`: the tools that match, as a list of
//!   `{name, call, description, parameters, server?}`;
//! - `print(...)`: lines for the result (at most [`CodeLimits::output_bytes`]);
//! - `json.encode`, `json.decode`, `json.null`.
//!
//! The chunk is named `@script`, so an error names `script:LINE`. Host waits (the calls)
//! are left out of the script time the budget counts ([`Meter::host`]).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use mlua::{Function, Lua, MultiValue, Value};
use serde_json::Value as Json;

use super::sandbox::{self, Budget};
use super::{classify, convert};
use crate::extensions::meter::Meter;
use crate::extensions::script::ErrorKind;
use crate::vocab::run::RunContext;

/// A script's budgets.
#[derive(Debug, Clone, Copy)]
pub struct CodeLimits {
    /// Script time (CPU, host waits left out).
    pub budget: Duration,
    pub memory_bytes: usize,
    /// Bytes of printed text kept (the rest is dropped with a note).
    pub output_bytes: usize,
}

/// What a script asks of the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `tools.NAME(args)`.
    Tool { name: String, args: Json },
    /// `mcp.SERVER.TOOL(args)`.
    Mcp {
        server: String,
        tool: String,
        args: Json,
    },
    /// `search_tools(query, limit)`.
    Search { query: String, limit: usize },
}

/// The host's answer: the values returned to the script, or the message raised in it.
pub type Answer = Result<Vec<Json>, String>;

/// How a script ended well: what it returned (`null` for nothing) and what it printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub value: Json,
    pub printed: String,
}

/// How a script failed: the error (naming `script:LINE` when there is one) and what it
/// printed before.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    pub message: String,
    pub printed: String,
}

/// Binds the host's functions into the script's globals (`tools`, `mcp`, `search_tools`):
/// a failed call raises at the line of the script that made it.
const BIND: &str = r#"local call, search = ...
local error, setmetatable, type, tostring = error, setmetatable, type, tostring
tools = setmetatable({}, {
  __index = function(_, name)
    if type(name) ~= "string" then return nil end
    return function(args)
      local ok, text, details = call("tool", name, nil, args)
      if not ok then error("tools." .. name .. ": " .. tostring(text), 2) end
      return text, details
    end
  end,
  __newindex = function() error("tools is read-only", 2) end,
})
mcp = setmetatable({}, {
  __index = function(_, server)
    if type(server) ~= "string" then return nil end
    return setmetatable({}, {__index = function(_, tool)
      if type(tool) ~= "string" then return nil end
      return function(args)
        local ok, text, details = call("mcp", server, tool, args)
        if not ok then
          error("mcp." .. server .. "." .. tool .. ": " .. tostring(text), 2)
        end
        return text, details
      end
    end})
  end,
})
function search_tools(query, limit)
  if type(query) ~= "string" then error("search_tools: a query (text) is required", 2) end
  local ok, found = search(query, limit)
  if not ok then error("search_tools: " .. tostring(found), 2) end
  return found
end
io, package, require, loadfile, dofile = nil, nil, nil, nil, nil
local os_ = os
os = {clock = os_.clock, time = os_.time, date = os_.date, difftime = os_.difftime}
"#;

/// Runs `script` under `limits` on the calling thread (a thread of its own, never the async
/// runtime's), for the run `ctx` (whose cancellation stops it); `host` answers its calls.
pub fn run(
    script: &str,
    limits: CodeLimits,
    ctx: Arc<RunContext>,
    host: &mut dyn FnMut(Request) -> Answer,
) -> Result<Ran, Failed> {
    let budget = Rc::new(Budget::default());
    let printed = Rc::new(RefCell::new(Printed::new(limits.output_bytes)));
    let sink = printed.clone();
    let (lua, runner) = sandbox::new_vm(budget.clone(), move |line| sink.borrow_mut().push(line))
        .map_err(|e| Failed {
        message: format!("cannot set up the Lua VM: {e}"),
        printed: String::new(),
    })?;
    let meter = Arc::new(Meter::default());
    let host = RefCell::new(host);
    let out = lua.scope(|scope| {
        let call = scope.create_function(
            |lua, (kind, a, b, args): (String, String, Option<String>, Value)| {
                let args = match convert::lua_to_json(lua, &args, false) {
                    Ok(Json::Array(a)) if a.is_empty() => Json::Object(Default::default()),
                    Ok(Json::Null) => Json::Object(Default::default()),
                    Ok(j) => j,
                    Err(e) => return reply(lua, Err(e.describe("cannot pass", "arguments"))),
                };
                let request = match (kind.as_str(), b) {
                    ("mcp", Some(tool)) => Request::Mcp {
                        server: a,
                        tool,
                        args,
                    },
                    _ => Request::Tool { name: a, args },
                };
                let answer = {
                    let _wait = meter.host();
                    (host.borrow_mut())(request)
                };
                reply(lua, answer)
            },
        )?;
        let search = scope.create_function(|lua, (query, limit): (String, Option<i64>)| {
            let limit = limit.unwrap_or(10).clamp(1, 50) as usize;
            let answer = {
                let _wait = meter.host();
                (host.borrow_mut())(Request::Search { query, limit })
            };
            reply(lua, answer)
        })?;
        lua.globals()
            .set("json", super::modules::json_module(&lua)?)?;
        lua.load(BIND)
            .set_name("=code")
            .call::<()>((call, search))?;
        execute(
            &lua,
            &runner,
            (&budget, &meter),
            script,
            limits,
            ctx.clone(),
        )
    });
    let out = out.unwrap_or_else(|e| Err(failure(&e, None, limits.memory_bytes)));
    let printed = printed.borrow_mut().take();
    match out {
        Ok(value) => Ok(Ran { value, printed }),
        Err(message) => Err(Failed { message, printed }),
    }
}

/// Loads `script` and runs it under the memory cap and the CPU budget.
fn execute(
    lua: &Lua,
    runner: &Function,
    (budget, meter): (&Budget, &Arc<Meter>),
    script: &str,
    limits: CodeLimits,
    ctx: Arc<RunContext>,
) -> mlua::Result<Result<Json, String>> {
    lua.set_memory_limit(limits.memory_bytes)?;
    budget.set_memory_cap(limits.memory_bytes);
    let chunk = match lua
        .load(script)
        .set_name("@script")
        .set_mode(mlua::ChunkMode::Text)
        .into_function()
    {
        Ok(f) => f,
        Err(e) => return Ok(Err(syntax(&e))),
    };
    budget.start(meter.begin(limits.budget, Some(ctx)), limits.budget);
    let (out, failed_at) = resume(lua, runner, &chunk);
    let spent = budget.stop();
    meter.end();
    if spent.cancelled {
        return Ok(Err("stopped: the call was cancelled".to_string()));
    }
    if let Some(at) = spent.over {
        let at = at.map(|a| format!("{a}: ")).unwrap_or_default();
        return Ok(Err(format!(
            "{at}stopped after {:.1} s of script time (the CPU budget); does it loop forever?",
            limits.budget.as_secs_f64()
        )));
    }
    Ok(match out {
        Ok(v) => returned(lua, &v),
        Err(e) => Err(failure(&e, failed_at, limits.memory_bytes)),
    })
}

/// Runs `chunk` in a coroutine through the prelude's `run` (as the extension engine's calls
/// run); with the place of a failure, read from the coroutine's stack.
fn resume(lua: &Lua, runner: &Function, chunk: &Function) -> (mlua::Result<Value>, Option<String>) {
    mypi_crossing::lua::Coroutines::new(runner.clone()).call(lua, chunk, MultiValue::new())
}

/// The values a host answer gives the script: `true, values...` or `false, message`.
fn reply(lua: &Lua, answer: Answer) -> mlua::Result<MultiValue> {
    let mut out = MultiValue::new();
    match answer {
        Ok(values) => {
            out.push_back(Value::Boolean(true));
            for v in &values {
                out.push_back(convert::json_to_lua(lua, v)?);
            }
        }
        Err(message) => {
            out.push_back(Value::Boolean(false));
            out.push_back(Value::String(lua.create_string(&message)?));
        }
    }
    Ok(out)
}

/// What the script returned, as JSON (what has no JSON form is dropped).
fn returned(lua: &Lua, v: &Value) -> Result<Json, String> {
    convert::lua_to_json(lua, v, true)
        .map_err(|e| format!("script: {}", e.describe("cannot return", "result")))
}

fn syntax(e: &mlua::Error) -> String {
    let (_, message) = classify(e);
    format!("syntax error: {message}")
}

/// A failed script's error text: Lua's message (which names `script:LINE`), or for memory,
/// where it was.
fn failure(e: &mlua::Error, at: Option<String>, cap: usize) -> String {
    let (kind, message) = classify(e);
    match kind {
        ErrorKind::Memory => format!(
            "{}stopped: the script used more than its {} of memory",
            at.map(|a| format!("{a}: ")).unwrap_or_default(),
            crate::vocab::text::mib(cap)
        ),
        _ => message,
    }
}

/// Printed lines, kept up to a size.
struct Printed {
    text: String,
    cap: usize,
    dropped: usize,
}

impl Printed {
    fn new(cap: usize) -> Self {
        Printed {
            text: String::new(),
            cap,
            dropped: 0,
        }
    }

    fn push(&mut self, line: &str) {
        if self.text.len() + line.len() < self.cap {
            self.text.push_str(line);
            self.text.push('\n');
        } else {
            self.dropped += line.len() + 1;
        }
    }

    fn take(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        if self.dropped > 0 {
            text.push_str(&format!(
                "[{} more bytes printed, past the {} kept]\n",
                self.dropped,
                crate::vocab::text::mib(self.cap)
            ));
        }
        text
    }
}
