//! A plan a script shows (`ctx.ui.set_plan`): the steps of the work at hand, each with its
//! status and priority. The REPL shows it as a checklist, `--json` as a `plan` event, an
//! editor (`mypi acp`) as its `plan` update. [`PlanEntry::list`] reads a script's entries and
//! says which one is wrong.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most entries one plan may have.
pub const MAX_PLAN_ENTRIES: usize = 100;
/// The longest an entry's text may be (bytes; longer is an error).
pub const MAX_PLAN_TEXT: usize = 2000;

/// Where a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

/// How much a step matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanPriority {
    High,
    Medium,
    Low,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEntry {
    pub content: String,
    pub status: PlanStatus,
    pub priority: PlanPriority,
}

impl PlanEntry {
    /// The entries of a script's list (`{content, status?, priority?}` each; status
    /// `pending` and priority `medium` when left out), or what is wrong, naming the entry
    /// (`entry 2: ...`). An empty list clears the plan.
    pub fn list(value: &Value) -> Result<Vec<PlanEntry>, String> {
        let items: &[Value] = match value {
            Value::Array(items) => items,
            // An empty script table is an empty object in JSON.
            Value::Object(map) if map.is_empty() => &[],
            _ => return Err("the entries must be a list of tables".into()),
        };
        if items.len() > MAX_PLAN_ENTRIES {
            return Err(format!(
                "a plan has at most {MAX_PLAN_ENTRIES} entries, not {}",
                items.len()
            ));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| PlanEntry::one(item).map_err(|e| format!("entry {}: {e}", i + 1)))
            .collect()
    }

    fn one(item: &Value) -> Result<PlanEntry, String> {
        let Value::Object(fields) = item else {
            return Err("must be a table {content, status?, priority?}".into());
        };
        if let Some(k) = fields
            .keys()
            .find(|k| !["content", "status", "priority"].contains(&k.as_str()))
        {
            return Err(format!(
                "unknown field '{k}' (the fields are content, status, priority)"
            ));
        }
        let content = match fields.get("content") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) | None => return Err("'content' is missing or empty".into()),
            Some(_) => return Err("'content' must be a string".into()),
        };
        if content.len() > MAX_PLAN_TEXT {
            return Err(format!("'content' is longer than {MAX_PLAN_TEXT} bytes"));
        }
        let status = word(fields.get("status"), "status", "pending", |w| match w {
            "pending" => Some(PlanStatus::Pending),
            "in_progress" => Some(PlanStatus::InProgress),
            "completed" => Some(PlanStatus::Completed),
            _ => None,
        })?;
        let priority = word(fields.get("priority"), "priority", "medium", |w| match w {
            "high" => Some(PlanPriority::High),
            "medium" => Some(PlanPriority::Medium),
            "low" => Some(PlanPriority::Low),
            _ => None,
        })?;
        Ok(PlanEntry {
            content,
            status,
            priority,
        })
    }
}

/// A field that is one of a few words (`default` when left out).
fn word<T>(
    value: Option<&Value>,
    name: &str,
    default: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T, String> {
    let text = match value {
        None | Some(Value::Null) => default,
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(format!("'{name}' must be a string")),
    };
    parse(text).ok_or_else(|| {
        let allowed = match name {
            "status" => "\"pending\", \"in_progress\" or \"completed\"",
            _ => "\"high\", \"medium\" or \"low\"",
        };
        format!("'{name}' must be {allowed}, not {text:?}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_are_read_with_defaults_and_the_bad_one_is_named() {
        let plan = PlanEntry::list(&json!([
            {"content": "read", "status": "completed", "priority": "high"},
            {"content": "write"}
        ]))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&plan).unwrap(),
            json!([
                {"content": "read", "status": "completed", "priority": "high"},
                {"content": "write", "status": "pending", "priority": "medium"}
            ])
        );
        assert_eq!(PlanEntry::list(&json!({})).unwrap(), []);
        let bad = |v| PlanEntry::list(&v).unwrap_err();
        assert_eq!(
            bad(json!([{"content": "a"}, {"content": "b", "status": "done"}])),
            "entry 2: 'status' must be \"pending\", \"in_progress\" or \"completed\", not \"done\""
        );
        assert_eq!(
            bad(json!([{"content": ""}])),
            "entry 1: 'content' is missing or empty"
        );
        assert!(bad(json!([{"content": "a", "prio": "high"}])).contains("unknown field 'prio'"));
        assert!(bad(json!([{"content": "a", "priority": 1}])).contains("must be a string"));
        assert!(bad(json!("x")).contains("list"));
        assert!(bad(json!(["x"])).starts_with("entry 1: must be a table"));
    }
}
