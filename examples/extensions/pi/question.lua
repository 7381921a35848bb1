-- Port of pi's examples/extensions/question.ts.
--
-- A `question` tool: the model asks you a question with options
-- ({question, options = [{label, description?}]}); you answer with a number or an option's
-- text (ctx.ui.select), or choose "Type something." to write your own answer
-- (ctx.ui.input; an empty line goes back to the options). The model gets "User selected:
-- N. LABEL", "User wrote: TEXT" or "User cancelled the selection"; the `details` keep the
-- question, the options and the answer, and a renderer shows them compactly in the REPL.
-- In print and json mode the tool answers that no user is there to ask.
--
-- Try it (s.jsonl: {"tool_calls": [{"name": "question", "arguments": {"question": "Which
--   database?", "options": [{"label": "Postgres"}, {"label": "SQLite", "description": "a file"}]}}]}
--   {"text": "ok"}):
--   printf 'pick\n3\nMariaDB\n' | mypi --provider faux --faux-script s.jsonl --extensions-dir DIR
--
-- Left out: pi's custom component (arrow keys, an inline editor under the options, Escape to
-- go back): mypi's dialogs are line-based, so "Type something." leads to a second question
-- instead. Option descriptions are shown on the option's line.

local schema = require("schema")

local OTHER = "Type something."

api.tool{
  name = "question",
  description = "Ask the user a question and let them pick from options. Use when you need user input to proceed.",
  parameters = schema.object{
    question = schema.string("The question to ask the user"),
    options = schema.array(schema.object{
      label = schema.string("Display label for the option"),
      description = schema.string("Optional description shown below label"):optional(),
    }, "Options for the user to choose from"),
  },
  execute = function(args, ctx)
    local labels = {}
    for i, o in ipairs(args.options) do labels[i] = o.label end
    local function out(content, answer, custom)
      return { content = content, details = {
        question = args.question, options = labels, answer = answer, was_custom = custom } }
    end
    if ctx.mode ~= "repl" then
      return out("Error: UI not available (running in non-interactive mode)")
    end
    if #args.options == 0 then return out("Error: No options provided") end

    local shown = {}
    for i, o in ipairs(args.options) do
      shown[i] = o.description and (o.label .. " — " .. o.description) or o.label
    end
    shown[#shown + 1] = OTHER

    while true do
      local choice = ctx.ui.select(args.question, shown)
      if choice == nil then return out("User cancelled the selection") end
      if choice == OTHER then
        local text = ctx.ui.input("Your answer (empty: back to the options):")
        text = text and text:match("^%s*(.-)%s*$") or ""
        if text ~= "" then return out("User wrote: " .. text, text, true) end
      else
        for i, s in ipairs(shown) do
          if s == choice then return out(("User selected: %d. %s"):format(i, labels[i]), labels[i], false) end
        end
      end
    end
  end,
}

local GREEN, DIM, ACCENT, YELLOW, RESET = "\27[32m", "\27[2m", "\27[36m", "\27[33m", "\27[0m"

api.renderer("question", {
  call = function(args)
    local s = "question " .. DIM .. tostring(args.question) .. RESET
    if type(args.options) == "table" and #args.options > 0 then
      local items = {}
      for i, o in ipairs(args.options) do items[i] = i .. ". " .. tostring(o.label) end
      items[#items + 1] = (#items + 1) .. ". " .. OTHER
      s = s .. "\n" .. DIM .. "  Options: " .. table.concat(items, ", ") .. RESET
    end
    return s
  end,
  result = function(text, d)
    if not d then return nil end
    if d.answer == nil then return YELLOW .. "Cancelled" .. RESET end
    if d.was_custom then return GREEN .. "✓ " .. RESET .. DIM .. "(wrote) " .. RESET .. ACCENT .. d.answer .. RESET end
    for i, l in ipairs(d.options) do
      if l == d.answer then return GREEN .. "✓ " .. RESET .. ACCENT .. i .. ". " .. l .. RESET end
    end
    return GREEN .. "✓ " .. RESET .. ACCENT .. d.answer .. RESET
  end,
})
