//! The agent's side of [`super::compact`]: how big its context is, and compacting it when a
//! request would not fit (or on `/compact`), writing the compaction to the session.

use std::borrow::Cow;
use std::sync::Arc;

use super::compact::{self, Compaction};
use super::{Agent, AgentError};
use crate::hooks::{CompactReason, EventKind, HookEvent};
use crate::providers::{ModelRequest, ProviderError};
use crate::vocab::protocol::Message;
use crate::vocab::run::RunContext;

/// What a request to compact came to.
#[derive(Debug, Clone)]
pub enum CompactOutcome {
    Done(Compacted),
    /// Nothing older than the last turn to compact.
    Nothing,
    /// A `session_before_compact` handler cancelled it: its reason.
    Cancelled(String),
}

impl CompactOutcome {
    /// What the user is told (nothing when there was nothing to do).
    pub fn notice(&self) -> Option<String> {
        match self {
            CompactOutcome::Done(done) => Some(done.describe()),
            CompactOutcome::Nothing => None,
            CompactOutcome::Cancelled(why) => Some(format!("compaction cancelled: {why}")),
        }
    }
}

/// A compaction made, and what went wrong on the way (the summary failed: trimmed only).
#[derive(Debug, Clone)]
pub struct Compacted {
    pub compaction: Compaction,
    pub warning: Option<String>,
}

impl Compacted {
    /// What the user is told.
    pub fn describe(&self) -> String {
        let c = &self.compaction;
        let how = if c.summary.is_some() {
            "summarised the older turns"
        } else {
            "trimmed the older turns' tool outputs"
        };
        let mut text = format!(
            "compacted the conversation: {how}, kept the last {} whole (about {} → {} tokens)",
            crate::vocab::text::plural(c.keep_last as u64, "message"),
            c.tokens_before,
            c.tokens_after
        );
        if let Some(w) = &self.warning {
            text.push_str(&format!("; {w}"));
        }
        text
    }
}

/// Whether a provider's error says the request was over the context window.
pub fn is_overflow(e: &ProviderError) -> bool {
    let ProviderError::Http {
        status, message, ..
    } = e
    else {
        return false;
    };
    let m = message.to_ascii_lowercase();
    (400..500).contains(status)
        && [
            "context length",
            "context_length",
            "context window",
            "prompt is too long",
            "maximum context",
            "too many tokens",
        ]
        .iter()
        .any(|p| m.contains(p))
}

impl Agent {
    /// The context's size in tokens: the last reported one and an estimate of the messages
    /// since, or (before the first answer, after a resume) an estimate of all a request
    /// carries: the system prompt, the tools' definitions and the messages.
    pub fn context_tokens(&self) -> u64 {
        match self.last_context {
            Some((tokens, count)) if count <= self.messages.len() => {
                tokens + compact::estimate(&self.messages[count..])
            }
            _ => {
                let tools: usize = self
                    .tools
                    .offered(&self.found)
                    .iter()
                    .map(|e| e.spec_chars())
                    .sum();
                ((self.system_prompt.len() + tools) / 4) as u64 + compact::estimate(&self.messages)
            }
        }
    }

    /// What a reply needs to be left of the window.
    fn reserve(&self) -> u64 {
        (self.context_window / 8).clamp(1024, 16_384)
    }

    /// Remembers the size the provider reported for the request that produced the last
    /// message.
    pub(super) fn reported(&mut self, input: u64, output: u64) {
        if input + output > 0 {
            self.last_context = Some((input + output, self.messages.len()));
        }
    }

    /// Before a request: compacts when the context would not fit with room for the reply.
    pub(super) async fn fit(
        &mut self,
        ctx: &Arc<RunContext>,
    ) -> Result<CompactOutcome, AgentError> {
        if self.context_tokens() + self.reserve() <= self.context_window {
            return Ok(CompactOutcome::Nothing);
        }
        self.compact(None, CompactReason::Auto, ctx).await
    }

    /// Compacts the older turns: trims their long tool outputs, and when that is not enough
    /// (or it was asked for, or the provider said the request was over), has the model
    /// summarise them. A `session_before_compact` handler may cancel it or give the summary.
    pub async fn compact(
        &mut self,
        instructions: Option<&str>,
        reason: CompactReason,
        ctx: &Arc<RunContext>,
    ) -> Result<CompactOutcome, AgentError> {
        let before = self.context_tokens();
        let summarise = reason != CompactReason::Auto;
        // Asked for (or the provider said it was over): only the last turn stays whole.
        let keep_tokens = if summarise {
            0
        } else {
            self.context_window * 2 / 5
        };
        let Some(keep_last) = compact::plan(&self.messages, keep_tokens) else {
            return Ok(CompactOutcome::Nothing);
        };
        let mut given = None;
        if self.hooks.has(EventKind::SessionBeforeCompact) {
            let split = self.messages.len() - keep_last;
            let event = HookEvent::SessionBeforeCompact {
                reason,
                tokens: before,
                window: self.context_window,
                messages: self.messages[..split].to_vec(),
                keep_last,
                instructions: instructions.map(str::to_string),
                summary: None,
            };
            let out = self.hooks.emit(event, ctx).await;
            if let Some(why) = out.blocked {
                return Ok(CompactOutcome::Cancelled(why));
            }
            if let HookEvent::SessionBeforeCompact { summary, .. } = out.event {
                given = summary.filter(|s| !s.trim().is_empty());
            }
        }
        let mut c = Compaction {
            keep_last,
            trimmed: true,
            summary: None,
            tokens_before: before,
            tokens_after: 0,
        };
        let trimmed = compact::apply(self.messages.clone(), &c);
        let target = self.context_window * 3 / 5;
        let mut warning = None;
        if let Some(summary) = given {
            c.summary = Some(summary);
        } else if summarise || compact::estimate(&trimmed) > target {
            let split = self.messages.len() - keep_last;
            match self.summarise(&trimmed[..split], instructions, ctx).await {
                Ok(summary) => c.summary = Some(summary),
                // Trimming alone is still worth keeping when the summary failed.
                Err(e) if !summarise => {
                    warning = Some(format!(
                        "the summary of the older turns failed ({e}); their tool outputs were trimmed only"
                    ))
                }
                Err(e) => {
                    let e = format!("could not summarise the conversation: {e}");
                    return Err(ProviderError::Config(e).into());
                }
            }
        }
        let messages = compact::apply(std::mem::take(&mut self.messages), &c);
        c.tokens_after = (self.system_prompt.len() / 4) as u64 + compact::estimate(&messages);
        self.messages = messages;
        self.last_context = None;
        self.session.append_compaction(&c)?;
        Ok(CompactOutcome::Done(Compacted {
            compaction: c,
            warning,
        }))
    }

    /// The model's summary of `older`.
    async fn summarise(
        &self,
        older: &[Message],
        instructions: Option<&str>,
        ctx: &Arc<RunContext>,
    ) -> Result<String, String> {
        let mut messages = older.to_vec();
        messages.push(compact::summary_request(instructions));
        let request = ModelRequest {
            model: self.provider.model().to_string(),
            system_prompt: compact::SUMMARY_SYSTEM.to_string(),
            messages: Cow::Owned(messages),
            tools: Vec::new(),
            max_tokens: Some(4096),
            cache_key: None,
            thinking: Default::default(),
        };
        let (text, usage) =
            crate::providers::complete(self.provider.as_ref(), &request, &ctx.cancel).await?;
        ctx.spent.add(
            crate::vocab::run::Spender::Compaction,
            usage.priced(self.prices),
        );
        if text.trim().is_empty() {
            return Err("the model answered with no text".into());
        }
        Ok(text.trim().to_string())
    }
}
