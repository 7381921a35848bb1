//! The acts of `ctx.ui`: the dialogs (`confirm`, `select`, `input`, `editor`: refused while
//! extensions are only checked) and what the front end shows (`set_status`, `set_title`,
//! `set_plan`).

use serde_json::Value as Json;

use super::{Arg, Call, Ret};

/// `ctx.ui.confirm(question, {timeout_ms?})`.
pub(super) fn confirm(c: &mut Call<'_>) -> Result<Ret, String> {
    c.acting()?;
    let question = c.args.take("question").text();
    let timeout = timeout_ms(c.args.take("opts"))?;
    Ok(Ret::Bool(c.link.confirm_within(&question, timeout)))
}

/// `ctx.ui.select(title, options, {timeout_ms?})`.
pub(super) fn select(c: &mut Call<'_>) -> Result<Ret, String> {
    c.acting()?;
    let title = c.args.take("title").text();
    let options = c.args.take("options").strings().unwrap_or_default();
    let timeout = timeout_ms(c.args.take("opts"))?;
    Ok(opt_string(c.link.select(&title, &options, timeout)))
}

/// `ctx.ui.input(prompt, {default?, timeout_ms?})`.
pub(super) fn input(c: &mut Call<'_>) -> Result<Ret, String> {
    c.acting()?;
    let prompt = c.args.take("prompt").text();
    let options = c.args.take("options");
    let default = options.clone().field("default").and_then(Arg::opt_text);
    let timeout = timeout_ms(options)?;
    Ok(opt_string(c.link.input(&prompt, default, timeout)))
}

/// `ctx.ui.editor(initial?)`.
pub(super) fn editor(c: &mut Call<'_>) -> Result<Ret, String> {
    c.acting()?;
    Ok(opt_string(c.link.editor(&c.args.take("initial").text())))
}

/// `ctx.ui.set_status(key, text?)`: the key is the extension's own.
pub(super) fn set_status(c: &mut Call<'_>) -> Result<Ret, String> {
    let key = crate::agent::control::status_key(&c.link.info.name, &c.args.take("key").text());
    let value = c.args.take("text").opt_text();
    c.link
        .host()
        .control
        .set_status(&key, value.as_deref())
        .map(|()| Ret::Nil)
}

/// `ctx.ui.set_plan(entries)`: to the sink of the line that runs the call, else to the
/// front end's outlet.
pub(super) fn set_plan(c: &mut Call<'_>) -> Result<Ret, String> {
    let entries = c.args.take("entries").into_json();
    let entries = crate::vocab::protocol::PlanEntry::list(&entries)?;
    let event = crate::vocab::protocol::AgentEvent::Plan { entries };
    c.link.host().control.show(event, c.ctx.map(|c| &**c));
    Ok(Ret::Nil)
}

/// `ctx.ui.set_title(text)`.
pub(super) fn set_title(c: &mut Call<'_>) -> Result<Ret, String> {
    c.link.host().control.set_title(&c.args.take("text").text());
    Ok(Ret::Nil)
}

/// `{timeout_ms = N}` of a dialog: none, or a positive duration.
fn timeout_ms(options: Arg) -> Result<Option<std::time::Duration>, String> {
    match options.field("timeout_ms").and_then(Arg::int) {
        None => Ok(None),
        Some(ms) if ms > 0 => Ok(Some(std::time::Duration::from_millis(ms as u64))),
        Some(_) => Err("'timeout_ms' must be a positive integer".into()),
    }
}

fn opt_string(s: Option<String>) -> Ret {
    match s {
        Some(s) => Ret::Data(Json::String(s)),
        None => Ret::Nil,
    }
}
