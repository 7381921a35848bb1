//! `api.skills()` (every skill the model is told about, as data) and `api.skill{name,
//! description, path}` (a script adds one; the handle removes it). A script's skill is
//! listed like a `SKILL.md` found in a folder: its name, description and path in each
//! request, its file read by the model when it needs it.

use serde_json::{json, Value as Json};

use super::{Arg, Call, Ret};
use crate::config::sources::catalog::Skill;
use crate::extensions::api::ApiLink;

/// The longest description a script may give (the Agent Skills format's limit).
const MAX_DESCRIPTION: usize = 1024;

/// `api.skills()`.
pub(super) fn skills(c: &mut Call<'_>) -> Result<Ret, String> {
    Ok(Ret::Data(listing(c.link)))
}

/// `api.skill{name, description, path}`.
pub(super) fn skill(c: &mut Call<'_>) -> Result<Ret, String> {
    let skill = definition(c.link, c.args.take("definition"))?;
    let id = c.link.skill(skill)?;
    Ok(Ret::Handles {
        id,
        cbs: Vec::new(),
    })
}

/// `{name, description, path, source, listed}` for each skill, in the model's order.
fn listing(link: &ApiLink) -> Json {
    let listing = link.host().skills.listing();
    Json::Array(
        listing
            .skills
            .into_iter()
            .map(|(s, listed)| {
                json!({
                    "name": s.name,
                    "description": s.description,
                    "path": s.path.display().to_string(),
                    "source": s.source,
                    "listed": listed,
                })
            })
            .collect(),
    )
}

/// `path` with its `.` and `..` parts resolved without the file system (links kept).
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The skill `api.skill{...}` describes: a relative path is the script's folder's.
fn definition(link: &ApiLink, arg: Arg) -> Result<Skill, String> {
    let field = |name: &str| {
        arg.clone()
            .field(name)
            .map(|a| a.text())
            .unwrap_or_default()
    };
    let (name, description, path) = (field("name"), field("description"), field("path"));
    let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c.is_control() || c == '/') {
        return Err(format!("the name {name:?} must be one word"));
    }
    if description.is_empty() || description.chars().count() > MAX_DESCRIPTION {
        return Err(format!(
            "the description must be 1 to {MAX_DESCRIPTION} characters"
        ));
    }
    let base = link.info.path.parent().unwrap_or(&link.info.root);
    let path = lexical(&base.join(path));
    if !path.is_file() {
        return Err(format!("there is no file at {}", path.display()));
    }
    Ok(Skill {
        name,
        description,
        path,
        source: format!("extension {}", link.info.name),
        manual: false,
    })
}
