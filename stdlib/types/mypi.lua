---@meta mypi
-- LuaLS annotations for mypi extension scripts: the global `api`, the `ctx` every callback
-- receives, the event payloads and result tables, and the standard modules `json`, `fs`,
-- `path` and `schema`. Point LuaLS at this folder (`"workspace.library": ["<mypi>/stdlib/types"]`);
-- see stdlib/README.md, "Editor setup". Nothing here runs: mypi provides the real values.
--
-- The standard modules are `require`d, not globals. This file describes them as the classes
-- `mypi.json`, `mypi.fs`, `mypi.path` and `mypi.schema`; give LuaLS the type with a cast:
--
--   local json = require("json") --[[@as mypi.json]]
--   local fs = require("fs") --[[@as mypi.fs]]
--   local path = require("path") --[[@as mypi.path]]
--   local schema = require("schema") --[[@as mypi.schema]]

-------------------------------------------------------------------------------------------
-- Basic shapes
-------------------------------------------------------------------------------------------

---@alias mypi.EventName
---| "session_start"
---| "session_shutdown"
---| "input"
---| "before_agent_start"
---| "turn_start"
---| "context"
---| "before_provider_request"
---| "message_update"
---| "message_end"
---| "tool_call"
---| "tool_result"
---| "turn_end"
---| "agent_end"
---| "extension_loaded"
---| "session_before_compact"
---| "session_before_new"
---| "session_before_resume"
---| "before_quit"
---| "model_select"
---| "user_shell"

---@alias mypi.Mode "repl"|"print"|"json"|"acp"

---@alias mypi.Role "system"|"user"|"assistant"|"tool"

---@alias mypi.Language "lua"|"rhai"

---A JSON Schema object (plain tables: `{type = "object", properties = {...}, required = {...}}`).
---@alias mypi.JsonSchema table<string, any>

---One tool call requested by the model.
---@class mypi.ToolCall
---@field id string
---@field name string
---@field arguments table<string, any> the parsed arguments (an object for a well-formed call)
---@field invalid_arguments? string set when the model sent arguments that are not valid JSON: the raw text (the call is answered with an error and never run)

---A message of the conversation, as stored in the session and sent to providers.
---@class mypi.Message
---@field role mypi.Role
---@field content string
---@field tool_calls? mypi.ToolCall[] assistant messages that call tools
---@field tool_call_id? string tool results: the call answered
---@field name? string tool results: the tool that produced it
---@field is_error? boolean tool results: whether the tool failed (absent = false)
---@field usage? {input_tokens: integer, output_tokens: integer} assistant messages: the tokens of the request that produced it

-------------------------------------------------------------------------------------------
-- Handles and ctx
-------------------------------------------------------------------------------------------

---What `api.on`, `api.tool`, `api.command` and `api.renderer` return.
---@class mypi.Handle
local Handle = {}

---Unregisters what was registered. Returns false when it was already removed.
---@return boolean
function Handle:remove() end

---`ctx.ui`: talking to the user.
---@class mypi.Ui
local Ui = {}

---Asks a yes/no question on the REPL (in an editor, `mypi acp`: a permission request, whose
---"always" answers are kept for the session) and waits for the answer, however long it takes
---(the wait does not count against the call's time budget). Always false in print and json
---mode and in `mypi ext check`, and false when the run is cancelled while it waits.
---@param question string
---@param opts? {timeout_ms?: integer} false once it has passed
---@return boolean
function Ui.confirm(question, opts) end

---Shows numbered choices and waits for one (a number or the option's text; in an editor, a
---permission request with an answer per option). nil for no answer, after `timeout_ms`, and
---at once in print and json mode.
---@param title string
---@param options string[]
---@param opts? {timeout_ms?: integer}
---@return string|nil
function Ui.select(title, options, opts) end

---Asks for a line: an empty answer gives the default. Print and json mode: the default (or
---nil) at once, in an editor (`mypi acp`) too (with a notice); a timeout: nil.
---@param prompt string
---@param options? {default?: string, timeout_ms?: integer}
---@return string|nil
function Ui.input(prompt, options) end

---Opens `$VISUAL` / `$EDITOR` on a temp file holding `initial`; the text saved, or nil
---when the editor failed (and in print and json mode, and in an editor: `mypi acp`).
---@param initial? string
---@return string|nil
function Ui.editor(initial) end

---Sets (nil: clears) this extension's status text `key`, shown with the others' above the
---prompt. Nothing in print and json mode.
---@param key string
---@param text? string one line, at most 200 bytes
function Ui.set_status(key, text) end

---Shows the plan of the work at hand, replacing the last one (an empty list clears it): a
---checklist on the REPL, a `plan` event with `-p --json`, the session's plan in an editor
---(`mypi acp`). A wrong entry is an error naming it.
---@param entries mypi.PlanEntry[]
function Ui.set_plan(entries) end

---One step of `ctx.ui.set_plan`.
---@class mypi.PlanEntry
---@field content string what the step is
---@field status? "pending"|"in_progress"|"completed" default "pending"
---@field priority? "high"|"medium"|"low" default "medium"

---Sets the terminal's title (when the REPL's output is a terminal).
---@param text string
function Ui.set_title(text) end

---Shows a line to the user (prefixed with the extension's name), like `api.notify`.
---@param message any
function Ui.notify(message) end

---The last argument of every callback (handlers, tools' `execute`, commands): the context of
---the agent run that made the call.
---@class mypi.Ctx
---@field cwd string mypi's working folder
---@field mode mypi.Mode `"repl"`, `"print"` (`-p`), `"json"` (`-p --json`) or `"acp"` (`mypi acp`)
---@field session_id string the run's session id, known before its file is written; `""` with `--no-session`
---@field model string the model id in use
---@field thinking mypi.Thinking the thinking level asked of the model
---@field depth integer 0 for the user's agent, 1+ inside a child agent
---@field ui mypi.Ui
---@field session mypi.Session
local Ctx = {}

---`ctx.session`: the session file of the user's agent.
---@class mypi.Session
local Session = {}

---The session's entries in order, as stored (`{type, ts, ...}`: `message` with its
---`message` (tool results carry their `details`), `custom` with `kind` and `data`,
---`model_change`, `compaction`, `session_info`, ...), then those not written yet.
---@return table[]
function Session.entries() end

---The session's name (`set_name`), or nil.
---@return string|nil
function Session.name() end

---Names the session: `/session` and the `/resume` list show it; kept in the file.
---@param name string one line, at most 200 bytes
function Session.set_name(name) end

---@class mypi.ContextUsage
---@field tokens integer about how many tokens the next request sends
---@field window integer the model's context window
---@field percent number tokens as a share of the window, in percent (one decimal)

---The same as `ctx.progress`.
---@param message any
function Ctx.update(message) end

---Whether the user's agent is not running a prompt now.
---@return boolean
function Ctx.is_idle() end

---Leaves mypi once the agent is idle (`before_quit` handlers may keep it open).
function Ctx.shutdown() end

---Reloads every extension (re-discovering files) once the current call has ended.
function Ctx.reload() end

---Starts a new session once the agent is idle (`session_before_new` may cancel it).
function Ctx.new_session() end

---The system prompt in effect (as the last run sent it, rewrites included).
---@return string
function Ctx.system_prompt() end

---The context's size and the model's window.
---@return mypi.ContextUsage
function Ctx.context_usage() end

---Cancels the run that made the call, and its child agents (like Ctrl-C in the REPL).
function Ctx.abort() end

---Reports progress of the running tool call: the REPL shows the latest message under the
---status line once the tool has run two seconds; `--json` has a `tool_update` event with
---`kind = "progress"`. Outside a tool call (a handler, a command) it does nothing.
---@param message any
function Ctx.progress(message) end

-------------------------------------------------------------------------------------------
-- Event payloads. Every payload also has `type`, the event's name.
-------------------------------------------------------------------------------------------

---@class mypi.SessionStartEvent
---@field type "session_start"
---@field reason "startup"|"reload"|"new"|"resume"

---@class mypi.SessionShutdownEvent
---@field type "session_shutdown"
---@field reason "quit"|"reload"|"new"

---A prompt about to run (slash commands never get here).
---@class mypi.InputEvent
---@field type "input"
---@field text string the prompt, as rewritten by earlier handlers
---@field source "user"|"extension" `extension`: queued by `api.send_message`

---@class mypi.BeforeAgentStartEvent
---@field type "before_agent_start"
---@field prompt string
---@field system_prompt string

---@class mypi.TurnStartEvent
---@field type "turn_start"
---@field turn integer 1 for the first model request of a run

---The messages of the next model request (the system prompt is not among them).
---@class mypi.ContextEvent
---@field type "context"
---@field messages mypi.Message[]

---@class mypi.BeforeProviderRequestEvent
---@field type "before_provider_request"
---@field provider "openai"|"anthropic"|"faux"|string
---@field payload table<string, any> the JSON body about to be sent

---One piece of the streamed reply (`kind = "text"`; pieces that come within 4 ms of the
---previous call arrive together as one `delta`) or of the model's reasoning
---(`kind = "thinking"`).
---@class mypi.MessageUpdateEvent
---@field type "message_update"
---@field kind "text"|"thinking"
---@field delta string the text new since the previous text update ("" in a thinking update)
---@field thinking? string the new piece of reasoning (thinking updates only)
---@field text string the reply's text so far, `delta` included (never the reasoning)

---@class mypi.MessageEndEvent
---@field type "message_end"
---@field message mypi.Message the complete assistant message (with its `tool_calls`)

---@class mypi.ToolCallEvent
---@field type "tool_call"
---@field id string
---@field name string
---@field args table<string, any> the arguments, as rewritten by earlier handlers
---@field hints? table the tool's MCP annotations (`readOnlyHint`, `destructiveHint`, ...): the server's claims, to be trusted for nothing
---@field origin? {extension: string} set when a script made the call (`api.mcp.call`), not the model
---@field parent_tool_call_id? string set when a `code` call's script made the call: that call's `id`

---@class mypi.ToolResultEvent
---@field type "tool_result"
---@field id string
---@field name string
---@field args table<string, any> the arguments the tool ran with
---@field result string the result text (already cut to 50 KiB), as rewritten by earlier handlers
---@field is_error boolean
---@field hints? table the tool's MCP annotations, as in `tool_call`
---@field origin? {extension: string} set when a script made the call
---@field parent_tool_call_id? string set when a `code` call's script made the call: that call's `id`

---A turn that ran tools ended (the last turn of a run, which answers without tools, has none).
---@class mypi.TurnEndEvent
---@field type "turn_end"
---@field turn integer
---@field message mypi.Message the assistant message of this turn
---@field tool_results mypi.Message[] the tool results of this turn, in call order

---@class mypi.AgentEndEvent
---@field type "agent_end"
---@field messages mypi.Message[] the whole conversation of the session so far (made on first read)

---@class mypi.ExtensionLoadedEvent
---@field type "extension_loaded"
---@field name string the extension's name (`git/guard`)
---@field path string
---@field reason "startup"|"reload"

---@class mypi.SessionBeforeCompactEvent
---@field type "session_before_compact"
---@field reason "auto"|"manual"|"overflow"
---@field tokens integer the context's estimated size
---@field window integer the model's context window
---@field messages mypi.Message[] the older messages about to be compacted
---@field keep_last integer how many recent messages stay whole
---@field instructions string|nil what `/compact` was asked to keep

---@class mypi.SessionBeforeNewEvent
---@field type "session_before_new"
---@field session_id string the session being left

---@class mypi.SessionBeforeResumeEvent
---@field type "session_before_resume"
---@field session_id string the session being left
---@field target_id string the session to resume
---@field target_path string its file

---@class mypi.BeforeQuitEvent
---@field type "before_quit"
---@field source "command"|"eof"|"extension" `/quit`, Ctrl-D or the end of input, `ctx.shutdown()`

---@class mypi.ModelSelectEvent
---@field type "model_select"
---@field provider string
---@field model string
---@field previous_provider string
---@field previous_model string
---@field source "command"|"extension"|"resume" `/model`, `api.set_model`, a resumed session's model

---The user typed `!cmd` or `!!cmd` on the REPL (or `mypi -p '!cmd'`): the command is about to
---run with `sh -c` in the working folder.
---@class mypi.UserShellEvent
---@field type "user_shell"
---@field command string the command, as rewritten by earlier handlers
---@field add_to_context boolean `true` for `!cmd` (its output goes to the model with the next prompt), `false` for `!!cmd`
---@field output? string set when an earlier handler gave the output (`updated_output`)

-------------------------------------------------------------------------------------------
-- Result tables. Return nil to only observe. Other fields are reported and ignored.
-------------------------------------------------------------------------------------------

---@class mypi.InputResult
---@field block? boolean stop: the model is not called and `reason` is shown as the answer
---@field reason? string
---@field updated_input? string the prompt to run instead

---@class mypi.BeforeAgentStartResult
---@field updated_system_prompt? string the system prompt for this run only

---@class mypi.ContextResult
---@field updated_messages? mypi.Message[] sent for this request only; the session keeps the original

---@class mypi.BeforeProviderRequestResult
---@field updated_payload? table<string, any> the JSON body to send instead

---@class mypi.MessageUpdateResult
---@field block? boolean cut the stream; the partial text is dropped, never stored
---@field reason? string

---@class mypi.ToolCallResult
---@field block? boolean do not run the call; the model gets "blocked: <reason>" as an error result
---@field reason? string
---@field updated_args? table<string, any> the arguments to run with instead (validated against the tool's schema)

---@class mypi.ToolResultResult
---@field updated_result? string the result text the model gets instead

---@class mypi.SessionBeforeCompactResult
---@field cancel? boolean keep the conversation as it is
---@field reason? string why (shown to the user)
---@field summary? string your summary of the older messages, used instead of the model's

---@class mypi.UserShellResult
---@field block? boolean do not run the command; the user sees "the command was not run: <reason>"
---@field reason? string
---@field updated_command? string the command to run instead (the output is attributed to it)
---@field updated_output? string the output to show (and keep for `!cmd`) instead of running the command

---What `session_before_new`, `session_before_resume` and `before_quit` handlers may return.
---@class mypi.CancelResult
---@field cancel? boolean stop it (`before_quit`: not when the input has ended)
---@field reason? string why (shown to the user)

-------------------------------------------------------------------------------------------
-- Tools, commands, exec, messages
-------------------------------------------------------------------------------------------

---What a tool's `execute` may return instead of a string.
---@class mypi.ToolOutput
---@field content string the text the model gets
---@field is_error? boolean default false
---@field details? any data kept with the result for extensions and renderers (never sent to the model)

---@class mypi.ToolDef
---@field name string letters, digits, `_` or `-`
---@field description string what the model reads to decide when to call it
---@field parameters mypi.JsonSchema a JSON Schema with `type = "object"`; arguments are validated against it
---@field execute fun(args: table<string, any>, ctx: mypi.Ctx): string|mypi.ToolOutput|nil
---@field parallel_safe? boolean may run at the same time as other parallel-safe calls (default false)
---@field timeout_ms? integer this tool's CPU budget per call (default 1000)

---@class mypi.Renderer
---@field call? fun(args: table<string, any>, ctx: mypi.Ctx): string|nil the call line
---@field result? fun(result: string, details: any, ctx: mypi.Ctx): string|nil the result lines

---@class mypi.ExecOptions
---@field timeout_ms? integer wall-clock limit; default 30000; the process group is killed when it passes
---@field cwd? string folder to run in, relative to mypi's working folder (default: that folder)

---@class mypi.ExecResult
---@field code integer|nil exit code; nil when it timed out or was killed by a signal
---@field stdout string
---@field stderr string
---@field timed_out boolean

---@class mypi.SendOptions
---@field deliver_as? "steer"|"follow_up" default "steer"

---@class mypi.ExtensionInfo
---@field name string path below its root without the suffix (`git/guard`)
---@field path string the script file
---@field language mypi.Language

-------------------------------------------------------------------------------------------
-- api
-------------------------------------------------------------------------------------------

---The script API: a global in every extension.
---@class mypi.Api
---@field state table<string, any> kept per extension across hot reloads (plain data only: no functions)
---@field extension mypi.ExtensionInfo who this script is
---@field version string mypi's version, e.g. "0.1.0"
---@field mcp mypi.Mcp the MCP servers
---@field events mypi.Events events between extensions
---@field flags table<string, boolean|string|nil> the declared options' values (`api.flags.NAME`; read-only)
api = {}

---@class mypi.FlagDef
---@field name string 1 to 64 lowercase letters, digits, `-`, `_`
---@field type "bool"|"string" a switch `--NAME`, or `--NAME=VALUE`
---@field default? boolean|string the value when it is not given
---@field description? string shown by `mypi --help`

---Declares the command-line option `--NAME` for this extension (see `api.flags`).
---@param definition mypi.FlagDef
function api.flag(definition) end

---`api.events`: events between extensions. An event is queued and delivered, in order, to
---every extension that handles its name (the emitter's own handlers included), each on its
---own worker; `emit` never waits for the handlers.
---@class mypi.Events
Events = {}

---Handles the events named `name` that extensions emit: `handler(data, ctx)`.
---@param name string
---@param handler fun(data: any, ctx: mypi.Ctx)
---@return mypi.Handle
function Events.on(name, handler) end

---Sends an event to the extensions that handle `name`, without waiting for them.
---@param name string 1 to 200 bytes
---@param data? any plain data, at most 1 MiB as JSON
function Events.emit(name, data) end

---Calls `handler(ctx)` after `ms` milliseconds, or every `ms` with `{repeat = true}` (at
---least 10 ms then); the next tick waits for a call still running. Removed with the extension
---on reload, or by the handle.
---@param ms integer 0 to 86400000
---@param handler fun(ctx: mypi.Ctx)
---@param options? {repeat?: boolean}
---@return mypi.Handle
function api.timer(ms, handler, options) end

---Calls `handler({paths = {...}}, ctx)` when the file or folder (with what is in it) at
---`path` changes, once per burst of changes (150 ms quiet). Removed with the extension on
---reload, or by the handle.
---@param path string relative to mypi's working folder
---@param handler fun(change: {paths: string[]}, ctx: mypi.Ctx)
---@return mypi.Handle
function api.watch(path, handler) end

---Subscribes `handler` to `event`. Handlers run in load order, then registration order.
---@overload fun(event: "session_start", handler: fun(e: mypi.SessionStartEvent, ctx: mypi.Ctx)): mypi.Handle
---@overload fun(event: "session_shutdown", handler: fun(e: mypi.SessionShutdownEvent, ctx: mypi.Ctx)): mypi.Handle
---@overload fun(event: "input", handler: fun(e: mypi.InputEvent, ctx: mypi.Ctx): mypi.InputResult|nil): mypi.Handle
---@overload fun(event: "before_agent_start", handler: fun(e: mypi.BeforeAgentStartEvent, ctx: mypi.Ctx): mypi.BeforeAgentStartResult|nil): mypi.Handle
---@overload fun(event: "turn_start", handler: fun(e: mypi.TurnStartEvent, ctx: mypi.Ctx)): mypi.Handle
---@overload fun(event: "context", handler: fun(e: mypi.ContextEvent, ctx: mypi.Ctx): mypi.ContextResult|nil): mypi.Handle
---@overload fun(event: "before_provider_request", handler: fun(e: mypi.BeforeProviderRequestEvent, ctx: mypi.Ctx): mypi.BeforeProviderRequestResult|nil): mypi.Handle
---@overload fun(event: "message_update", handler: fun(e: mypi.MessageUpdateEvent, ctx: mypi.Ctx): mypi.MessageUpdateResult|nil): mypi.Handle
---@overload fun(event: "message_end", handler: fun(e: mypi.MessageEndEvent, ctx: mypi.Ctx)): mypi.Handle
---@overload fun(event: "tool_call", handler: fun(e: mypi.ToolCallEvent, ctx: mypi.Ctx): mypi.ToolCallResult|nil): mypi.Handle
---@overload fun(event: "tool_result", handler: fun(e: mypi.ToolResultEvent, ctx: mypi.Ctx): mypi.ToolResultResult|nil): mypi.Handle
---@overload fun(event: "turn_end", handler: fun(e: mypi.TurnEndEvent, ctx: mypi.Ctx)): mypi.Handle
---@overload fun(event: "agent_end", handler: fun(e: mypi.AgentEndEvent, ctx: mypi.Ctx)): mypi.Handle
---@overload fun(event: "extension_loaded", handler: fun(e: mypi.ExtensionLoadedEvent, ctx: mypi.Ctx)): mypi.Handle
---@overload fun(event: "session_before_compact", handler: fun(e: mypi.SessionBeforeCompactEvent, ctx: mypi.Ctx): mypi.SessionBeforeCompactResult|nil): mypi.Handle
---@overload fun(event: "user_shell", handler: fun(e: mypi.UserShellEvent, ctx: mypi.Ctx): mypi.UserShellResult|nil): mypi.Handle
---@overload fun(event: "session_before_new", handler: fun(e: mypi.SessionBeforeNewEvent, ctx: mypi.Ctx): mypi.CancelResult|nil): mypi.Handle
---@overload fun(event: "session_before_resume", handler: fun(e: mypi.SessionBeforeResumeEvent, ctx: mypi.Ctx): mypi.CancelResult|nil): mypi.Handle
---@overload fun(event: "before_quit", handler: fun(e: mypi.BeforeQuitEvent, ctx: mypi.Ctx): mypi.CancelResult|nil): mypi.Handle
---@overload fun(event: "model_select", handler: fun(e: mypi.ModelSelectEvent, ctx: mypi.Ctx)): mypi.Handle
---@param event mypi.EventName an unknown name raises an error listing the events
---@param handler fun(e: table, ctx: mypi.Ctx): table|nil
---@return mypi.Handle
function api.on(event, handler) end

---Registers a tool the model can call. A tool of the same name (built-in or registered
---earlier) is overridden, with a notice naming both; removing this one brings it back.
---@param definition mypi.ToolDef
---@return mypi.Handle
function api.tool(definition) end

---Registers the slash command `/name`. `handler` gets the text after the name (trimmed) and
---returns the command's output. A name already taken is registered as `name:2` (`:3`, ...).
---@param name string one word, without spaces (a leading `/` is dropped)
---@param handler fun(args: string, ctx: mypi.Ctx): string|nil
---@param description? string shown by `/help`
---@return mypi.Handle
function api.command(name, handler, description) end

---Prints tool `tool`'s call line and result lines your way in the REPL (never in print mode or
---`--json`). Each function returns the text to print (SGR colours kept, other control
---characters shown as text such as `^[`, at most 8 KiB) or nil for the default line; an
---error result is always shown the default way. A renderer that fails gets the default lines and one notice per run.
---The newest renderer of a tool wins; removing it brings back the one before.
---@param tool string the tool's name
---@param renderer mypi.Renderer `call`, `result` or both
---@return mypi.Handle
function api.renderer(tool, renderer) end

---Queues a user message. `steer` (default): added after the current tool batch, before the
---next model request; when the agent is idle it starts a run now. `follow_up`: run as a new
---prompt once the agent is idle. Either way it goes through the `input` event with
---`source = "extension"` when it starts a run. A queued text is never a slash command.
---@param text string
---@param options? mypi.SendOptions
function api.send_message(text, options) end

---Runs a program without a shell (stdin empty), in its own process group, and waits for it.
---The wait does not count against the call's time budget. The group is killed at the timeout
---and when the run is cancelled. Raises when the program cannot be started, and during
---`mypi ext check` (which runs nothing a file asks for).
---@param command string program name (looked up in PATH) or path
---@param arguments? string[]
---@param options? mypi.ExecOptions
---@return mypi.ExecResult
function api.exec(command, arguments, options) end

---The names in a folder, sorted, folders ending in `/`; `{}` when it does not exist. `~/` is
---the home folder; relative paths are against the working folder.
---@param path string
---@return string[]
function api.read_dir(path) end

---@class mypi.AgentSpec
---@field task string the child's one user message
---@field name? string what the user sees it called
---@field system_prompt? string default: the agent's
---@field tools? string[] default: the parent's tools
---@field model? string default: the parent run's
---@field provider? "openai"|"anthropic"|"faux" default: the parent run's
---@field max_turns? integer
---@field thinking? mypi.Thinking default: the parent run's level

---@class mypi.AgentOutcome
---@field text string its final answer
---@field turns integer
---@field usage {input_tokens: integer, output_tokens: integer}
---@field error? string why it did not finish

---Runs a child agent in-process (fresh conversation, the same hooks, `ctx.depth` + 1, at most
---3 deep) and waits for it. A failed child is an outcome with `error`, not a script error.
---@param agent mypi.AgentSpec
---@return mypi.AgentOutcome
function api.run_agent(agent) end

---Runs several children at once (default 4 at a time) and returns their outcomes in order.
---@param agents (mypi.AgentSpec[])|table list of specs, optionally with `concurrency = N`
---@param options? {concurrency?: integer}
---@return mypi.AgentOutcome[]
function api.run_agents(agents, options) end

---@class mypi.CompleteRequest
---@field prompt? string one user message
---@field messages? {role: "user"|"assistant"|"system", content: string}[]
---@field system_prompt? string
---@field model? string
---@field provider? "openai"|"anthropic"|"faux"
---@field max_tokens? integer
---@field thinking? mypi.Thinking default: "off"

---One model call without tools; raises the provider's error on failure.
---@param request mypi.CompleteRequest
---@return {text: string, usage: {input_tokens: integer, output_tokens: integer}}
function api.complete(request) end

---@class mypi.McpResult
---@field text string the result as the model would get it (after `tool_result` handlers)
---@field content table[] the server's content blocks
---@field structured any the server's `structuredContent` (nil when none)
---@field is_error boolean always false (a tool error is raised)

---The MCP servers (`.mcp.json`, `~/.agents/mcp.json`, `--mcp-config`). Every function waits
---without CPU or budget cost and raises an error with the server's message on failure (or
---saying that no server is configured, or that MCP is turned off and by what).
---@class mypi.Mcp
Mcp = {}

---Every configured server: `{name, transport, state, protocol?, tools?, resources?, prompts?, need_tasks?, error?, stderr?}` (`transport`: `stdio`, `http` or `sse`).
---@return table[]
function Mcp.servers() end

---A server's tools: `{name, title, description, input_schema, annotations, agent_name, exposure}`
---(`annotations`: `readOnlyHint`, `destructiveHint`, ... as the server gave them; `exposure`:
---`direct`, `deferred` or `hidden`).
---@param server string
---@return table[]
function Mcp.tools(server) end

---Calls a server's tool through the same `tool_call` / `tool_result` hooks as the model's
---calls (the event carries `origin = {extension = NAME}`).
---@param server string
---@param tool string
---@param arguments? table
---@return mypi.McpResult
function Mcp.call(server, tool, arguments) end

---`api.mcp.call` under the name Rhai can use (Rhai reserves `.call`).
---@param server string
---@param tool string
---@param arguments? table
---@return mypi.McpResult
function Mcp.call_tool(server, tool, arguments) end

---Reads a resource: `{text, contents}`.
---@param server string
---@param uri string
---@return {text: string, contents: table[]}
function Mcp.read_resource(server, uri) end

---Gets a prompt with its arguments: `{text, messages}`.
---@param server string
---@param name string
---@param arguments? table<string, string>
---@return {text: string, messages: table[]}
function Mcp.prompt(server, name, arguments) end

---@class mypi.McpServerDef
---@field name string the server's name (its tools are `mcp__<name>__<tool>`)
---@field command? string a stdio server's program
---@field args? string[]
---@field env? table<string, string>
---@field cwd? string
---@field url? string a Streamable HTTP server's URL
---@field headers? table<string, string>
---@field type? "stdio"|"http"
---@field timeout? integer seconds a request may take (default 60)
---@field protocol? string
---@field exposure? "direct"|"deferred"|"code"|"hidden"
---@field tool_exposure? table<string, "direct"|"deferred"|"code"|"hidden"> by tool name or `*` pattern

---Adds an MCP server for this session, with the fields of a `.mcp.json` entry; a configured
---server of the same name wins (`added = false`, with a notice).
---@param server mypi.McpServerDef
---@return {added: boolean, configured_in?: string}
function Mcp.add_server(server) end

---What `api.builtin_tool(name)` returns.
---@class mypi.BuiltinTool
---@field name string
---@field description string
---@field parameters mypi.JsonSchema
BuiltinTool = {}

---Runs the built-in with `args` (checked against its schema) in the running call; the wait
---does not count against the budget.
---@param args table<string, any>
---@param ctx? mypi.Ctx
---@return mypi.ToolOutput
function BuiltinTool.execute(args, ctx) end

---The built-in tool `name` (`read`, `write`, `edit`, `bash`), even when overridden, to wrap.
---@param name string
---@return mypi.BuiltinTool
function api.builtin_tool(name) end

---Whether the project folder is trusted (`--trust`, `mypi trust`, a "yes" in the REPL): only
---then do its own extensions, `.mcp.json` and agent files load.
---@return boolean
function api.project_trusted() end

---Switches the model (in `opts.provider`, or the current provider) once the call has ended
---and the agent is idle; `model_select` follows. A failure is a notice.
---@param model string
---@param options? {provider?: string}
function api.set_model(model, options) end

---@alias mypi.Thinking "off"|"minimal"|"low"|"medium"|"high"

---Sets the thinking level (as `/thinking LEVEL` does) once the call has ended; the next
---request asks for it. A name that is not a level is an error naming the levels.
---@param level mypi.Thinking
function api.set_thinking(level) end

---@class mypi.ProviderModel
---@field name string
---@field context_window? integer
---@field max_output_tokens? integer the longest reply it may write
---@field thinking? boolean false: it cannot think, no thinking parameters are sent
---@field input_price? number US dollars per million input tokens
---@field output_price? number US dollars per million output tokens
---@field cache_read_price? number US dollars per million input tokens read from the prompt cache
---@field cache_write_price? number US dollars per million input tokens written to the prompt cache

---@class mypi.ProviderDef
---@field name string letters, digits, `_ - .`; not `openai`, `anthropic` or `faux`
---@field api "openai"|"anthropic"
---@field base_url? string http:// or https://
---@field api_key_env? string the environment variable holding the key
---@field models? (string|mypi.ProviderModel)[] the first is the default

---Registers a provider for `/model`, `api.set_model` and `--provider`, like a
---`[providers.NAME]` table of the configuration.
---@param definition mypi.ProviderDef
function api.provider(definition) end

---Keeps `data` in the session file as a `custom` entry (never sent to the model); it is
---written with the next message, or once the line ends, and read back by `ctx.session.entries()`.
---@param kind string 1 to 200 letters, digits, `_ - . :`
---@param data? any plain data, at most 1 MiB as JSON
function api.append_entry(kind, data) end

---Every tool by name: `{name, description, owner, active, exposure}` (`owner` is `core`, an
---extension's name or `mcp:SERVER`; `exposure` is how it reaches the model).
---@return {name: string, description: string, owner: string, active: boolean, exposure: "direct"|"deferred"|"code"|"hidden"}[]
function api.tools() end

---Offers the model only the tools named (built-ins included); nil offers all again. An
---unknown name is an error and changes nothing. Tools registered later are not offered
---until named.
---@param names? string[]
function api.set_active_tools(names) end

---Every slash command: `{name, description, owner}`.
---@return {name: string, description: string, owner: string}[]
function api.commands() end

---Every skill the model is told about, in the model's order: `source` is `project`,
---`user` or `extension NAME`; `listed` is false for one left out by the `[skills] budget`.
---@return {name: string, description: string, path: string, source: string, listed: boolean}[]
function api.skills() end

---@class mypi.SkillDef
---@field name string one word; a skill of the same name from a folder is replaced
---@field description string when to use it (1 to 1024 characters)
---@field path string its SKILL.md; a relative path is the script's folder's

---Adds a skill: its name, description and path are listed in each request, and the model
---reads the file when a task needs it. Removed with the handle, or with the extension.
---@param definition mypi.SkillDef
---@return mypi.Handle
function api.skill(definition) end

---A debug line on stderr, prefixed `[extension name]`; shown only with `MYPI_LOG=1`.
---@param message any
function api.log(message) end

---A line shown to the user, prefixed `[extension name]`.
---@param message any
function api.notify(message) end

-------------------------------------------------------------------------------------------
-- Standard modules: require("json"), require("fs"), require("path"), require("schema")
-------------------------------------------------------------------------------------------

---`require("json")`
---@class mypi.json
---@field null lightuserdata a value that encodes as JSON `null` (a `nil` field is simply absent)
local json = {}

---Encodes a value as JSON text. A table is an array when its keys are exactly `1..n`
---(n > 0) or it was marked with `json.array`; otherwise an object (so `{}` is `{}`).
---Functions, coroutines and userdata raise an error.
---@param value any
---@param opts? {pretty?: boolean}
---@return string
function json.encode(value, opts) end

---Decodes JSON text; `null` becomes nil. Raises on invalid JSON.
---@param text string
---@return any
function json.decode(text) end

---Marks `t` (or a new empty table) so it encodes as an array even when empty.
---@generic T: table
---@param t? T
---@return T
function json.array(t) end

---`require("fs")`: files and folders within the limits of Rhai's file functions. Relative
---paths are against the working folder, a leading `~/` is the home folder. Failures raise an
---error at the caller's line (`fs.read: cannot read PATH: why`).
---@class mypi.fs
local fs = {}

---The names in a folder, sorted, folders ending in `/`, hidden ones included; `{}` when the
---folder does not exist. Raises for a file or a folder of more than 10,000 entries.
---@param path string
---@return string[]
function fs.list(path) end

---A regular file's UTF-8 text, up to 16 MiB. Raises for a missing file, a folder, a FIFO or
---device, a larger file or one that is not UTF-8.
---@param path string
---@return string
function fs.read(path) end

---Writes (replaces) a file, creating its parent folders.
---@param path string
---@param text string|number
function fs.write(path, text) end

---Whether something exists at `path`.
---@param path string
---@return boolean
function fs.exists(path) end

---Whether `path` is a folder.
---@param path string
---@return boolean
function fs.is_dir(path) end

---`require("path")`: string helpers for `/`-separated paths (no file system access).
---@class mypi.path
---@field sep "/"
local path = {}

---Joins parts with `/`; an absolute part starts over; empty parts are skipped.
---`path.join("a", "b/c", "d.lua") --> "a/b/c/d.lua"`
---@param ... string
---@return string
function path.join(...) end

---`"a/b/c.lua" --> "a/b"`; `"."` for a bare name, `"/"` for `"/x"`.
---@param p string
---@return string
function path.dirname(p) end

---`"a/b/c.lua" --> "c.lua"`
---@param p string
---@return string
function path.basename(p) end

---The extension without the dot: `"c.tar.gz" --> "gz"`; `""` when none (`".bashrc"` has none).
---@param p string
---@return string
function path.ext(p) end

---The base name without its extension: `"a/c.tar.gz" --> "c.tar"`.
---@param p string
---@return string
function path.stem(p) end

---Removes `.`, `..` and repeated or trailing slashes: `"a/./b/../c//" --> "a/c"`
---(leading `..` of a relative path stay; `""` becomes `"."`).
---@param p string
---@return string
function path.normalize(p) end

---@param p string
---@return boolean
function path.is_absolute(p) end

---A schema node built by `require("schema")`: a JSON Schema table with builder methods.
---@class mypi.SchemaNode: table<string, any>
---@field type? string
---@field description? string
local SchemaNode = {}

---Leaves this property out of the enclosing object's `required` list.
---@return self
function SchemaNode:optional() end

---Sets a default value (which also makes the property optional).
---@param value any
---@return self
function SchemaNode:default(value) end

---Sets the description.
---@param text string
---@return self
function SchemaNode:describe(text) end

---`require("schema")`: builds the JSON Schema of a tool's parameters. Every property of
---`schema.object{...}` is required unless marked `:optional()` or given a `:default()`.
---@class mypi.schema
local schema = {}

---`{type = "object", properties = properties, required = {...}}`
---@param properties? table<string, mypi.SchemaNode>
---@param description? string
---@return mypi.SchemaNode
function schema.object(properties, description) end

---@param description? string
---@return mypi.SchemaNode
function schema.string(description) end

---@param description? string
---@return mypi.SchemaNode
function schema.integer(description) end

---@param description? string
---@return mypi.SchemaNode
function schema.number(description) end

---@param description? string
---@return mypi.SchemaNode
function schema.boolean(description) end

---`{type = "array", items = items}`
---@param items? mypi.SchemaNode
---@param description? string
---@return mypi.SchemaNode
function schema.array(items, description) end

---One of `values` (`type = "string"` when they are all strings).
---@param values (string|number)[]
---@param description? string
---@return mypi.SchemaNode
function schema.enum(values, description) end

---Any JSON value.
---@param description? string
---@return mypi.SchemaNode
function schema.any(description) end

---Whether `node` was marked optional.
---@param node mypi.SchemaNode
---@return boolean
function schema.is_optional(node) end
