//! What a server prompt's slash command (`/mcp__<server>__<prompt> ARGS`) needs besides the
//! server: the words of the command line mapped onto the prompt's arguments, and the prompt's
//! messages as the text of the user's message.

use serde_json::{json, Map, Value};

use super::content;

/// Maps `a b` (by position) or `x=1 y=2` (by name) onto the prompt's arguments.
pub fn prompt_args(prompt: &Value, text: &str) -> Result<Map<String, Value>, String> {
    let declared: Vec<(String, bool)> = prompt["arguments"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    (
                        x["name"].as_str().unwrap_or("").to_string(),
                        x["required"].as_bool().unwrap_or(false),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut map = Map::new();
    let mut position = 0;
    for word in text.split_whitespace() {
        match word.split_once('=') {
            Some((k, v)) if declared.iter().any(|(n, _)| n == k) => {
                map.insert(k.to_string(), json!(v));
            }
            _ => {
                let Some((name, _)) = declared.get(position) else {
                    return Err(format!(
                        "too many arguments; it takes: {}",
                        arg_list(&declared)
                    ));
                };
                position += 1;
                let slot = map.entry(name.clone()).or_insert(json!(""));
                let joined = format!("{} {word}", slot.as_str().unwrap_or(""))
                    .trim()
                    .to_string();
                *slot = json!(joined);
            }
        }
    }
    for (name, required) in &declared {
        if *required && !map.contains_key(name) {
            return Err(format!(
                "missing argument '{name}'; it takes: {}",
                arg_list(&declared)
            ));
        }
    }
    Ok(map)
}

fn arg_list(declared: &[(String, bool)]) -> String {
    if declared.is_empty() {
        return "no arguments".into();
    }
    declared
        .iter()
        .map(|(n, r)| if *r { n.clone() } else { format!("[{n}]") })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `prompts/get` result as the text of one user message.
pub fn prompt_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for m in result["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let c = &m["content"];
        let blocks: Vec<Value> = match c {
            Value::Array(a) => a.clone(),
            other => vec![other.clone()],
        };
        let text = content::tool_output("prompt", &json!({"content": blocks})).content;
        parts.push(text);
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_arguments_by_position_and_name() {
        let p = json!({"name": "p", "arguments": [
            {"name": "city", "required": true}, {"name": "state"}
        ]});
        assert_eq!(
            prompt_args(&p, "Paris").unwrap(),
            json!({"city": "Paris"}).as_object().unwrap().clone()
        );
        assert_eq!(
            prompt_args(&p, "state=TX city=Austin").unwrap(),
            json!({"city": "Austin", "state": "TX"})
                .as_object()
                .unwrap()
                .clone()
        );
        assert!(prompt_args(&p, "")
            .unwrap_err()
            .contains("missing argument 'city'"));
        assert!(prompt_args(&p, "a b c").unwrap_err().contains("too many"));
    }

    #[test]
    fn prompt_messages_become_one_text() {
        let r = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hello"}},
            {"role": "user", "content": {"type": "text", "text": "world"}}
        ]});
        assert_eq!(prompt_text(&r), "hello\n\nworld");
    }
}
