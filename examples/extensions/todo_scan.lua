-- /todo_scan [folder] lists the TODO, FIXME and XXX comments of the files below a folder
-- (default: the working folder), one `path:line: TAG: text` per comment. Hidden files and
-- folders, target/ and node_modules/ are skipped, and so are files that are not UTF-8 text
-- or are too large to read. MYPI_TODO_TAGS=TODO,HACK changes the tags. The same in Rhai:
-- todo_scan.rhai. Copy to .agents/extensions/todo_scan.lua.
--
-- Uses the fs module (fs.list, fs.read within the script's limits) and os.getenv.
local fs = require("fs")

local MAX_FILES, MAX_HITS = 2000, 100

-- The tags to look for: MYPI_TODO_TAGS split at anything but letters, digits and `_`.
local function tag_list()
  local tags = {}
  for t in (os.getenv("MYPI_TODO_TAGS") or "TODO,FIXME,XXX"):gmatch("[%w_]+") do
    tags[#tags + 1] = t
  end
  if #tags == 0 then
    tags = { "TODO", "FIXME", "XXX" }
  end
  return tags
end

local function join(folder, name)
  if folder == "" or folder == "." then
    return name
  elseif folder:sub(-1) == "/" then
    return folder .. name
  end
  return folder .. "/" .. name
end

-- The files below `dir`, folder by folder, at most MAX_FILES. A subfolder that cannot be
-- listed is skipped; `dir` itself must be listable (a missing one has no files).
local function files_below(dir)
  local files, folders = {}, { dir }
  while #folders > 0 and #files < MAX_FILES do
    local folder = table.remove(folders, 1)
    local names
    if folder == dir then
      names = fs.list(folder)
    else
      local ok, listed = pcall(fs.list, folder)
      names = ok and listed or {}
    end
    for _, name in ipairs(names) do
      local skip = name:sub(1, 1) == "." or name == "target/" or name == "node_modules/"
      if not skip then
        local p = join(folder, name)
        if name:sub(-1) == "/" then
          folders[#folders + 1] = p
        elseif #files < MAX_FILES then
          files[#files + 1] = p
        end
      end
    end
  end
  return files
end

-- The leftmost tag of `line` (a whole word) and the text after it, or nil.
local function find_tag(line, tags)
  local best, tag
  for _, t in ipairs(tags) do
    local s, e = line:find("%f[%w_]" .. t .. "%f[^%w_]")
    if s and (not best or s < best[1]) then
      best, tag = { s, e }, t
    end
  end
  if not best then
    return nil
  end
  local said = line:sub(best[2] + 1):gsub("^:?%s*", "")
  said = said:gsub("%s+$", "")
  return tag, said
end

-- `path:line: TAG: text` for each tagged line of the files below `dir`, at most MAX_HITS.
local function scan(dir, tags)
  local hits = {}
  for _, file in ipairs(files_below(dir)) do
    local ok, text = pcall(fs.read, file)
    if ok and find_tag(text, tags) then
      local n = 0
      for line in (text .. "\n"):gmatch("(.-)\n") do
        n = n + 1
        local tag, said = find_tag(line, tags)
        if tag then
          hits[#hits + 1] = said == "" and ("%s:%d: %s"):format(file, n, tag)
            or ("%s:%d: %s: %s"):format(file, n, tag, said)
          if #hits == MAX_HITS then
            return hits
          end
        end
      end
    end
  end
  return hits
end

api.command("todo_scan", function(args)
  local dir = args == "" and "." or args
  local tags = tag_list()
  local hits = scan(dir, tags)
  if #hits == 0 then
    return ("no comments tagged %s below %s"):format(table.concat(tags, ", "), dir)
  end
  local out = table.concat(hits, "\n") .. "\n"
  if #hits == MAX_HITS then
    out = out .. "(stopped at 100 comments)\n"
  end
  return out
end, "list the TODO / FIXME / XXX comments below a folder (MYPI_TODO_TAGS changes the tags)")
