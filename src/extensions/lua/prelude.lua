-- Runs once in every extension VM, before the extension itself (see sandbox.rs).
--
-- 1. A call over its CPU budget must end even when the script catches errors: the instruction
--    hook raises again on every tick, and the functions that catch errors (pcall, xpcall,
--    coroutine.resume / close, load with a reader function) re-raise while the call is over
--    budget, so no loop of them can keep the call alive.
-- 2. Only text chunks load: load / loadfile / dofile force mode "t", string.dump is gone.
-- 3. __gc metamethods are refused: finalizers run with hooks off, so an endless loop in one
--    could never be stopped.
-- 4. What must not run in an agent process: os.exit, os.execute, io.popen (use api.exec),
--    os.setlocale (process-wide). print, io.write and io.stdout / io.stderr go to the debug
--    log, never to mypi's stdout (which carries the answer or JSON events); io.read, io.lines
--    without a file and io.stdin cannot read mypi's stdin; io.input / io.output are gone and
--    io.open refuses the standard streams and the terminal (/dev/stdout, /dev/fd/1, ...).
-- 5. An error raised by mypi's own functions (api.on with a bad argument, ...) is caught by
--    pcall as its message, a plain string, like an error the script raised itself.
-- 6. Every call runs in a coroutine of its own (`run`, returned to the host, resumes it): past
--    its budget the hook suspends it, and it is dropped as it is. Nothing unwinds, so no __close method,
--    message handler or metamethod of the script runs after the budget is spent. The string
--    metatable is hidden, so no script can give every string a __close or __index of its own.
local over, log, plain, over_message = ...

local error, select, type, rawget = error, select, type, rawget
local tostring, concat = tostring, table.concat
local pcall_, xpcall_, load_, loadfile_ = pcall, xpcall, load, loadfile
local resume_, close_ = coroutine.resume, coroutine.close
local status_ = coroutine.status
local setmetatable_ = setmetatable

local function check(ok, ...)
  if not ok then
    if over() then
      error((...), 0)
    end
    return ok, plain((...))
  end
  return ok, ...
end

function pcall(...)
  return check(pcall_(...))
end

function xpcall(...)
  return check(xpcall_(...))
end

function coroutine.resume(...)
  return check(resume_(...))
end

function coroutine.close(...)
  return check(close_(...))
end

local function checkload(f, ...)
  if f == nil and over() then
    error((...), 0)
  end
  return f, ...
end

function load(chunk, name, mode, ...)
  return checkload(load_(chunk, name, "t", ...))
end

function loadfile(name, mode, ...)
  if type(name) ~= "string" then
    error("loadfile: a file name is required", 2)
  end
  return checkload(loadfile_(name, "t", ...))
end

function dofile(name)
  if type(name) ~= "string" then
    error("dofile: a file name is required", 2)
  end
  local f, err = checkload(loadfile_(name, "t"))
  if not f then
    error(err, 2)
  end
  return f()
end

function setmetatable(t, mt)
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    error("setmetatable: __gc metamethods are not available to extensions", 2)
  end
  return setmetatable_(t, mt)
end

function print(...)
  local parts = {}
  for i = 1, select("#", ...) do
    parts[i] = tostring((select(i, ...)))
  end
  log(concat(parts, "\t"))
end

local function logged(...)
  local parts = {}
  for i = 1, select("#", ...) do
    parts[i] = tostring((select(i, ...)))
  end
  log(concat(parts))
end

local function no_stdin()
  error("extensions cannot read mypi's standard input", 2)
end

-- The three standard streams share their methods and metatable (one set per VM, not three).
local stream_methods = {
  write = function(self, ...)
    logged(...)
    return self
  end,
  flush = function(self)
    return self
  end,
  setvbuf = function()
    return true
  end,
  close = function()
    return true
  end,
  read = no_stdin,
  lines = no_stdin,
  seek = no_stdin,
}
local stream_meta = {
  __name = "FILE*",
  __index = stream_methods,
  __tostring = function(s)
    return "file (" .. rawget(s, 1) .. ", to the debug log)"
  end,
}
local function stream(name)
  return setmetatable_({ name }, stream_meta)
end

local open_, lines_ = io.open, io.lines
local stdout = stream("stdout")
io.stdout, io.stderr, io.stdin = stdout, stream("stderr"), stream("stdin")
function io.write(...)
  logged(...)
  return stdout
end
io.read = no_stdin
io.input, io.output = nil, nil
local function standard_stream(name)
  return type(name) == "string"
    and (name:match("^/dev/std") or name:match("^/dev/fd/") or name:match("^/dev/tty")
      or name:match("^/proc/[^/]+/fd/") or name:match("^/dev/pts/") or name == "/dev/console")
end
function io.lines(name, ...)
  if name == nil or standard_stream(name) then
    no_stdin()
  end
  return lines_(name, ...)
end
function io.open(name, ...)
  if standard_stream(name) then
    return nil, name .. ": extensions cannot open mypi's standard streams or terminal"
  end
  return open_(name, ...)
end

getmetatable("").__metatable = false

local function finish(co, ok, ...)
  if not ok then
    error((...), 0)
  end
  if status_(co) == "suspended" then
    if over() then
      error(over_message, 0)
    end
    error("coroutine.yield was called outside a coroutine", 0)
  end
  return ...
end

local function run(co, ...)
  return finish(co, resume_(co, ...))
end

string.dump = nil
os.exit, os.execute, os.setlocale = nil, nil, nil
io.popen = nil
package.loadlib, package.cpath = nil, ""

return run
