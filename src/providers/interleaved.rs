//! Interleaved thinking (Anthropic): which models need the beta header to think between tool
//! calls, and whether a request body asks for thinking with tools offered.

use serde::Deserialize;
use serde_json::Value;

use super::Payload;

/// The beta that lets the Claude 4 models up to 4.5 think between tool calls (interleaved
/// thinking); from 4.6 on it is built in.
pub const INTERLEAVED_THINKING: &str = "interleaved-thinking-2025-05-14";

/// Whether `model` needs (and accepts) the [`INTERLEAVED_THINKING`] beta to think between
/// tool calls: Claude Opus 4, 4.1 and 4.5, Sonnet 4 and 4.5, Haiku 4.5. Claude 3.7 does not
/// interleave, and the API refuses the header for models after 4.5 (which interleave
/// without it). Ids may carry a date or a vendor's prefix (`us.anthropic.claude-…`).
pub fn takes_interleaving_beta(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    let Some(at) = model.find("claude-") else {
        return false;
    };
    let rest = &model[at + "claude-".len()..];
    let Some(version) = ["opus-", "sonnet-", "haiku-"]
        .iter()
        .find_map(|family| rest.strip_prefix(family))
    else {
        return false;
    };
    let mut parts = version.split(['-', '.', '@', ':']);
    let major = parts.next().unwrap_or("");
    // A minor version is one digit; a date (20250514) is not one.
    let minor = parts
        .next()
        .filter(|p| p.len() == 1)
        .and_then(|p| p.parse::<u32>().ok())
        .unwrap_or(0);
    major == "4" && minor <= 5
}

/// Whether the body asks for thinking and offers tools: only then can thinking interleave.
/// The body is read as sent, so a `before_provider_request` handler's rewrite counts.
pub(super) fn thinks_with_tools(payload: &Payload) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        thinking: Option<Value>,
        #[serde(default)]
        tools: Vec<serde::de::IgnoredAny>,
    }
    let probe = match payload {
        Payload::Json(value) => Probe::deserialize(value).ok(),
        Payload::Encoded(bytes) => serde_json::from_slice::<Probe>(bytes).ok(),
    };
    probe.is_some_and(|p| {
        let enabled = p.thinking.as_ref().and_then(|t| t.get("type"));
        enabled.is_some_and(|t| t != "disabled") && !p.tools.is_empty()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_interleaving_beta_is_for_claude_4_up_to_4_5_thinking_with_tools() {
        for model in [
            "claude-opus-4-20250514",
            "claude-opus-4-1",
            "claude-opus-4-5-20251101",
            "claude-sonnet-4-20250514",
            "claude-sonnet-4-5",
            "claude-haiku-4-5-20251001",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "anthropic/claude-sonnet-4.5",
        ] {
            assert!(takes_interleaving_beta(model), "{model}");
        }
        for model in [
            "claude-3-7-sonnet-20250219",
            "claude-3-5-haiku",
            "claude-sonnet-4-6",
            "claude-opus-4-7",
            "claude-opus-5",
            "gpt-5",
            "claude",
        ] {
            assert!(!takes_interleaving_beta(model), "{model}");
        }
        let json = |v: Value| Payload::Json(v);
        let bytes = |v: Value| Payload::Encoded(v.to_string().into_bytes().into());
        let thinking = json!({"type": "enabled", "budget_tokens": 1024});
        let tools = json!([{"name": "read"}]);
        let both = json!({"messages": [], "tools": tools, "thinking": thinking});
        assert!(thinks_with_tools(&json(both.clone())));
        assert!(thinks_with_tools(&bytes(both)));
        assert!(!thinks_with_tools(&bytes(json!({"thinking": thinking}))));
        assert!(!thinks_with_tools(&json(json!({"tools": tools}))));
        let off = json!({"type": "disabled"});
        assert!(!thinks_with_tools(&json(
            json!({"tools": tools, "thinking": off})
        )));
    }
}
