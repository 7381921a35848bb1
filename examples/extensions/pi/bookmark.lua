-- Port of pi's examples/extensions/bookmark.ts.
--
-- /bookmark [label] marks the last assistant message of the session; /unbookmark removes
-- the newest bookmark; /bookmarks (a mypi addition, since mypi has no /tree view to show
-- labels in) lists them with the start of the message each one marks. A bookmark is kept in
-- the session file as a custom entry (api.append_entry("bookmark", {...}), never sent to the
-- model), so the list survives `mypi --continue`; removing one appends a
-- `bookmark.removed` entry, as the file is append-only.
--
-- Try it:
--   printf 'hello\n/bookmark greeting\n/bookmarks\n/unbookmark\n/bookmarks\n' | mypi --provider faux --extensions-dir DIR
--
-- Left out: pi's labels (pi.setLabel(entryId, label)) and their display in /tree. mypi's
-- session entries have no ids and there is no session tree, so a bookmark names the
-- message by its position and timestamp instead.

local function bookmarks(entries)
  local list = {}
  for _, e in ipairs(entries) do
    if e.type == "custom" and e.kind == "bookmark" then
      list[#list + 1] = e.data
    elseif e.type == "custom" and e.kind == "bookmark.removed" then
      for i = #list, 1, -1 do
        if list[i].label == e.data.label then table.remove(list, i) break end
      end
    end
  end
  return list
end

api.command("bookmark", function(args, ctx)
  local label = args ~= "" and args or ("bookmark-" .. os.time())
  local entries = ctx.session.entries()
  for i = #entries, 1, -1 do
    local e = entries[i]
    if e.type == "message" and e.message.role == "assistant" and e.message.content ~= "" then
      api.append_entry("bookmark", {
        label = label, entry = i, ts = e.ts, excerpt = e.message.content:sub(1, 60),
      })
      return "Bookmarked as: " .. label
    end
  end
  return "No assistant message to bookmark"
end, "bookmark the last assistant message: /bookmark [label]")

api.command("unbookmark", function(_, ctx)
  local list = bookmarks(ctx.session.entries())
  local last = list[#list]
  if not last then return "No bookmarked entry found" end
  api.append_entry("bookmark.removed", { label = last.label })
  return "Removed bookmark: " .. last.label
end, "remove the newest bookmark")

api.command("bookmarks", function(_, ctx)
  local list = bookmarks(ctx.session.entries())
  if #list == 0 then return "No bookmarks" end
  local lines = {}
  for _, b in ipairs(list) do
    lines[#lines + 1] = ("%s  (entry %d, %s) %s"):format(b.label, b.entry, os.date("%H:%M:%S", b.ts // 1000), b.excerpt)
  end
  return table.concat(lines, "\n")
end, "list the bookmarks of this session")
