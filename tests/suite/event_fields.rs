//! The event fields handed to handlers on demand (`agent_end`'s `messages`, made in a
//! script only when it reads them), driven through the binary: every way a Lua or Rhai
//! handler can reach the field shows the whole conversation, and the other fields read as
//! they always did; an event kept past its handling gives `nil` for a field never read.

use serde_json::json;

use super::ext_util::{faux, install};
use crate::common::TestDir;

#[test]
fn agent_end_messages_read_every_way_in_lua_and_rhai() {
    let dir = TestDir::new();
    install(
        &dir,
        "ends.lua",
        r#"local json = require("json")
api.on("agent_end", function(e)
  local keys = {}
  for k in pairs(e) do keys[#keys + 1] = k end
  table.sort(keys)
  local n = #e.messages
  local again = json.decode(json.encode(e))
  api.notify("lua n=" .. n .. " first=" .. e.messages[1].content .. " last=" .. e.messages[n].content
    .. " keys=" .. table.concat(keys, ",") .. " encoded=" .. #again.messages .. " type=" .. again.type)
end)
api.on("agent_end", function(e)
  local keys = {}
  for k in pairs(e) do keys[#keys + 1] = k end
  table.sort(keys)
  api.notify("lua-pairs keys=" .. table.concat(keys, ","))
end)"#,
    );
    // An event kept past its handling does not keep the conversation: its unread
    // `messages` is nil then (documented), its other fields stay.
    install(
        &dir,
        "keeps.lua",
        r#"local kept
api.on("agent_end", function(e) kept = e end)
api.on("session_shutdown", function()
  api.notify("kept type=" .. kept.type .. " messages=" .. tostring(kept.messages))
end)"#,
    );
    install(
        &dir,
        "ends.rhai",
        r#"api.on("agent_end", |e| {
  let n = e.messages.len();
  let keys = e.keys();
  keys.sort();
  let again = json_decode(json_encode(e));
  api.notify(`rhai n=${n} first=${e["messages"][0].content} last=${e.messages[n - 1].content} keys=${keys} encoded=${again.messages.len()} type=${e.type}`);
});"#,
    );
    let out = faux(&dir, &[json!({"text": "the answer"})])
        .args(["--no-session", "-p", "the question"])
        .run();
    out.ok();
    let want = "n=2 first=the question last=the answer";
    for line in [
        format!("lua {want} keys=messages,type encoded=2 type=agent_end"),
        format!("rhai {want} keys=[\"messages\", \"type\"] encoded=2 type=agent_end"),
        "lua-pairs keys=messages,type".to_string(),
        "kept type=agent_end messages=nil".to_string(),
    ] {
        assert!(out.stderr.contains(&line), "{line}\n{}", out.describe());
    }
}
