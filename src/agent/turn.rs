//! One run of the loop: model -> tools -> model until the model answers without tool calls.
//! Hooks fire at each step (only when someone subscribed), the reply streams delta by delta,
//! failed requests are retried while nothing was streamed yet, and steer messages join
//! before the next request.

use crate::vocab::run::Spender;
use std::borrow::Cow;
use std::sync::Arc;

use super::updates::Held;
use super::{Agent, AgentError, EventSink, RunOutcome};
use crate::hooks::{CompactReason, EventKind, HookEvent, SharedMessages, UpdateKind};
use crate::providers::{
    Accumulator, EventStream, ModelRequest, Payload, ProviderError, StreamEvent,
};
use crate::vocab::protocol::{AgentEvent, Message, Usage};
use crate::vocab::run::RunContext;

/// What streaming one reply produced (one per turn, moved once: its size does not matter).
enum Reply {
    Message(Box<Message>, Usage),
    /// A `message_update` handler cut the stream: its reason.
    Blocked(String),
    /// The run was cancelled while the reply streamed: the text so far.
    Interrupted(String),
}

/// What an interrupted reply is stored with, so the model knows it was cut.
pub const INTERRUPTED: &str = "[interrupted by the user]";

/// A failed attempt, and whether anything had been streamed before it failed.
struct Failed {
    error: AgentError,
    streamed: bool,
}

impl Agent {
    pub(super) async fn run(
        &mut self,
        prompt: String,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<RunOutcome, AgentError> {
        sink.emit(AgentEvent::AgentStart {
            prompt: prompt.clone(),
        });
        let mut system_prompt = self.system_prompt.clone();
        if let Some(skills) = &self.skills {
            let (section, notice) = skills.prompt_section();
            if !section.is_empty() {
                system_prompt.push_str("\n\n");
                system_prompt.push_str(&section);
            }
            if let Some(message) = notice {
                sink.emit(AgentEvent::Notice { message });
            }
        }
        for section in self.sections.iter().filter_map(|s| s.section()) {
            system_prompt.push_str("\n\n");
            system_prompt.push_str(&section);
        }
        if self.hooks.has(EventKind::BeforeAgentStart) {
            let out = self
                .hooks
                .emit(
                    HookEvent::BeforeAgentStart {
                        prompt: prompt.clone(),
                        system_prompt,
                    },
                    ctx,
                )
                .await;
            system_prompt = match out.event {
                HookEvent::BeforeAgentStart { system_prompt, .. } => system_prompt,
                _ => self.system_prompt.clone(),
            };
        }
        if let Some(c) = &self.control {
            c.set_system_prompt(&system_prompt);
        }
        let images = std::mem::take(&mut self.images);
        self.record(Message {
            images,
            ..Message::user(prompt)
        })?;
        let mut outcome = RunOutcome::default();
        let result = self.turns(&system_prompt, &mut outcome, sink, ctx).await;
        if self.hooks.has(EventKind::AgentEnd) {
            // The conversation is lent to the event, not copied: handlers hold it weakly, so
            // it comes back whole once the last one returned.
            let messages = SharedMessages::from(std::mem::take(&mut self.messages));
            let event = HookEvent::AgentEnd {
                messages: messages.clone(),
            };
            self.hooks.emit(event, ctx).await;
            self.messages = messages.into_inner();
        }
        if ctx.depth == 0 {
            // The user's run counts every model call made for it: its children's, its
            // compactions', its scripts' completions (its `agent_end` handlers' too).
            outcome.spent = ctx.spent.take();
            outcome.usage = Usage::default();
            for (_, u) in &outcome.spent {
                outcome.usage.add(*u);
            }
        }
        self.usage.add(outcome.usage);
        result.map(|_| outcome)
    }

    async fn turns(
        &mut self,
        system_prompt: &str,
        outcome: &mut RunOutcome,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<(), AgentError> {
        let mut overflowed = false;
        loop {
            if outcome.turns >= self.max_turns {
                return Err(AgentError::TooManyTurns(self.max_turns));
            }
            outcome.turns += 1;
            let turn = outcome.turns;
            sink.emit(AgentEvent::TurnStart { turn });
            if self.hooks.has(EventKind::TurnStart) {
                self.hooks.emit(HookEvent::TurnStart { turn }, ctx).await;
            }
            if let Some(message) = self.fit(ctx).await?.notice() {
                sink.emit(AgentEvent::Notice { message });
            }
            let Some(reply) = self.ask(system_prompt, &mut overflowed, sink, ctx).await? else {
                outcome.turns -= 1;
                continue;
            };
            let Some((message, usage)) = self.settle(reply, outcome, sink)? else {
                return Ok(());
            };
            let spender = if ctx.depth == 0 {
                Spender::Agent
            } else {
                Spender::Children
            };
            ctx.spent.add(spender, usage);
            if !self
                .finish_turn(turn, message, usage, outcome, sink, ctx)
                .await?
            {
                return Ok(());
            }
        }
    }

    /// The model's reply to the next request; `None` when the request was over the model's
    /// context window and the conversation was compacted (once per run): ask again.
    async fn ask(
        &mut self,
        system_prompt: &str,
        overflowed: &mut bool,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<Option<Reply>, AgentError> {
        let payload = self.payload(system_prompt, ctx).await;
        match self.stream_with_retry(payload, sink, ctx).await {
            // Over the window after all: compact once (summarising) and ask again.
            Err(AgentError::Provider(e)) if !*overflowed && super::fit::is_overflow(&e) => {
                *overflowed = true;
                let compacted = self.compact(None, CompactReason::Overflow, ctx).await?;
                if let Some(message) = compacted.notice() {
                    sink.emit(AgentEvent::Notice {
                        message: format!(
                            "the request was over the model's context window; {message}"
                        ),
                    });
                }
                match compacted {
                    super::fit::CompactOutcome::Done(_) => Ok(None),
                    _ => Err(e.into()),
                }
            }
            other => other.map(Some),
        }
    }

    /// The assistant message of a reply, with its priced usage. `None` when a hook cut the
    /// reply (the run ends with its reason); an interrupted reply is kept as far as it came
    /// and ends the run as cancelled.
    fn settle(
        &mut self,
        reply: Reply,
        outcome: &mut RunOutcome,
        sink: &dyn EventSink,
    ) -> Result<Option<(Message, Usage)>, AgentError> {
        match reply {
            Reply::Message(mut message, usage) => {
                let usage = usage.priced(self.prices);
                outcome.usage.add(usage);
                if usage != Usage::default() {
                    message.usage = Some(usage);
                }
                Ok(Some((*message, usage)))
            }
            Reply::Interrupted(text) => {
                // What the user saw is kept: the next prompt's model sees where it stopped.
                let message = Message::assistant(format!("{text}\n\n{INTERRUPTED}"), vec![]);
                sink.emit(AgentEvent::MessageEnd {
                    message: message.clone(),
                });
                self.record(message)?;
                Err(AgentError::Cancelled)
            }
            Reply::Blocked(reason) => {
                sink.emit(AgentEvent::Notice {
                    message: format!("the reply was cut: {reason}"),
                });
                outcome.text = reason.clone();
                outcome.blocked = Some(reason);
                Ok(None)
            }
        }
    }

    /// Records the turn's message, runs its tool calls and ends the turn; whether the model
    /// called tools (then another turn follows).
    async fn finish_turn(
        &mut self,
        turn: u32,
        message: Message,
        usage: Usage,
        outcome: &mut RunOutcome,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<bool, AgentError> {
        sink.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        });
        if self.hooks.has(EventKind::MessageEnd) {
            let event = HookEvent::MessageEnd {
                message: message.clone(),
            };
            self.hooks.emit(event, ctx).await;
        }
        let calls = message.tool_calls.clone();
        outcome.text = message.content.clone();
        self.record(message.clone())?;
        self.reported(usage.input_tokens, usage.output_tokens);
        let mut results = Vec::new();
        if !calls.is_empty() {
            // Each result is stored as its call finishes.
            results = self.run_tools(&calls, sink, ctx).await?;
            if ctx.cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
            for steer in ctx.queues.take_steer() {
                sink.emit(AgentEvent::QueuedMessage {
                    text: steer.clone(),
                    delivery: crate::vocab::protocol::Delivery::Steer,
                });
                self.record(Message::user(steer))?;
            }
        }
        sink.emit(AgentEvent::TurnEnd { turn, usage });
        if self.hooks.has(EventKind::TurnEnd) {
            let event = HookEvent::TurnEnd {
                turn,
                message,
                tool_results: results,
            };
            self.hooks.emit(event, ctx).await;
        }
        Ok(!calls.is_empty())
    }

    /// The request body for the next model call, after the `context` and
    /// `before_provider_request` hooks. Without a `before_provider_request` handler the body
    /// is encoded straight from the conversation, which is then held only once more (as
    /// bytes), however long it is.
    async fn payload(&self, system_prompt: &str, ctx: &Arc<RunContext>) -> Payload {
        let mut messages = repair_transcript(&self.messages);
        if self.hooks.has(EventKind::Context) {
            let event = HookEvent::Context {
                messages: messages.into_owned(),
            };
            let out = self.hooks.emit(event, ctx).await;
            messages = match out.event {
                HookEvent::Context { messages } => Cow::Owned(messages),
                _ => repair_transcript(&self.messages),
            };
        }
        let offered = self.tools.offered(&self.found);
        let request = ModelRequest {
            model: self.provider.model().to_string(),
            system_prompt: system_prompt.to_string(),
            messages,
            tools: offered.iter().map(|e| e.spec()).collect(),
            max_tokens: self.max_output,
            cache_key: Some(ctx.session_id.clone()).filter(|id| !id.is_empty()),
            thinking: crate::providers::ThinkingAsk {
                level: match self.thinks {
                    true => self.thinking,
                    false => crate::vocab::thinking::Thinking::Off,
                },
                ceiling: super::compact::known_output(self.provider.model()),
            },
        };
        if !self.hooks.has(EventKind::BeforeProviderRequest) {
            return match self.provider.encode(&request) {
                Some(bytes) => Payload::Encoded(bytes.into()),
                None => Payload::Json(self.provider.payload(&request)),
            };
        }
        let event = HookEvent::BeforeProviderRequest {
            provider: self.provider.name().to_string(),
            payload: self.provider.payload(&request),
        };
        match self.hooks.emit(event, ctx).await.event {
            HookEvent::BeforeProviderRequest { payload, .. } => Payload::Json(payload),
            _ => Payload::Json(serde_json::Value::Null),
        }
    }

    async fn stream_with_retry(
        &self,
        payload: Payload,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<Reply, AgentError> {
        let mut attempt = 0;
        loop {
            let failed = match self.stream_once(&payload, sink, ctx).await {
                Ok(reply) => return Ok(reply),
                Err(failed) => failed,
            };
            let retryable = matches!(&failed.error, AgentError::Provider(e) if e.is_retryable());
            if failed.streamed || !retryable || attempt >= self.retry.max_retries {
                return Err(failed.error);
            }
            attempt += 1;
            let delay = self.retry.delay(attempt);
            sink.emit(AgentEvent::Retry {
                attempt,
                max_retries: self.retry.max_retries,
                delay_ms: delay.as_millis() as u64,
                error: failed.error.to_string(),
            });
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = ctx.cancel.cancelled() => return Err(AgentError::Cancelled),
            }
        }
    }

    async fn stream_once(
        &self,
        payload: &Payload,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<Reply, Failed> {
        let fail = |error: AgentError, streamed| Failed { error, streamed };
        // The cancellation first: a run cancelled already never starts a request.
        let mut stream: Box<dyn EventStream> = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(fail(AgentError::Cancelled, false)),
            s = self.provider.stream(payload) => s.map_err(|e| fail(e.into(), false))?,
        };
        let mut acc = Accumulator::default();
        let mut streamed = false;
        let watch_updates = self.hooks.has(EventKind::MessageUpdate);
        // Text on its way past the `message_update` handlers (see [`Held`]).
        let mut held = Held::new();
        loop {
            // The stream first: when a piece is ready, the cancellation is not even polled
            // (registering and dropping its waiter per delta costs more than the delta).
            let next = tokio::select! {
                biased;
                n = stream.next() => Some(n),
                () = held.due() => None,
                _ = ctx.cancel.cancelled() => {
                    // Text still held back was neither shown nor seen by the handlers.
                    if acc.text.is_empty() {
                        return Err(fail(AgentError::Cancelled, streamed));
                    }
                    return Ok(Reply::Interrupted(std::mem::take(&mut acc.text)));
                }
            };
            let Some(next) = next else {
                if let Some(reason) = self.hand_over(&mut held, &mut acc, sink, ctx).await {
                    return Ok(Reply::Blocked(reason));
                }
                continue;
            };
            let event = match next {
                None => break,
                Some(Ok(event)) => event,
                Some(Err(e)) => return Err(fail(e.into(), streamed)),
            };
            // Usage reports (Anthropic's `message_start`) are not content: an error event
            // right after one (`overloaded_error`) is still retried.
            if !matches!(event, StreamEvent::Usage(_)) {
                streamed = true;
            }
            if let StreamEvent::TextDelta(delta) = &event {
                if !watch_updates {
                    acc.text.push_str(delta);
                    sink.emit(AgentEvent::TextDelta {
                        delta: delta.clone(),
                    });
                } else if held.push(delta) {
                    if let Some(reason) = self.hand_over(&mut held, &mut acc, sink, ctx).await {
                        return Ok(Reply::Blocked(reason));
                    }
                }
                continue;
            }
            // Anything else comes after the text before it, which the handlers see first.
            if held.is_holding() {
                if let Some(reason) = self.hand_over(&mut held, &mut acc, sink, ctx).await {
                    return Ok(Reply::Blocked(reason));
                }
            }
            if let StreamEvent::ThinkingDelta(delta) = &event {
                self.thought(delta, sink);
                if watch_updates {
                    if let Some(reason) = self.thinking_update(delta, &held, ctx).await {
                        return Ok(Reply::Blocked(reason));
                    }
                }
            }
            acc.push(&event);
            if acc.done {
                break;
            }
        }
        if held.is_holding() {
            if let Some(reason) = self.hand_over(&mut held, &mut acc, sink, ctx).await {
                return Ok(Reply::Blocked(reason));
            }
        }
        self.finish_reply(acc, streamed, sink)
    }

    /// A streamed piece of reasoning to the `message_update` handlers (the reply's text so
    /// far with it); the reason, if one blocked.
    async fn thinking_update(
        &self,
        delta: &str,
        held: &Held,
        ctx: &Arc<RunContext>,
    ) -> Option<String> {
        let update = HookEvent::MessageUpdate {
            kind: UpdateKind::Thinking,
            delta: String::new(),
            thinking: Some(delta.to_string()),
            text: held.so_far.clone(),
        };
        self.hooks.emit(update, ctx).await.blocked
    }

    /// The reply a finished stream made: an error if it ended before any content, and a
    /// notice if the model ran out of output tokens.
    fn finish_reply(
        &self,
        acc: Accumulator,
        streamed: bool,
        sink: &dyn EventSink,
    ) -> Result<Reply, Failed> {
        if !acc.done && acc.text.is_empty() && acc.tool_calls().is_empty() {
            let error = ProviderError::Malformed {
                provider: self.provider.name().to_string(),
                message: "the reply ended before any content arrived".into(),
            };
            return Err(Failed {
                error: error.into(),
                streamed,
            });
        }
        if matches!(acc.stop_reason.as_deref(), Some("length" | "max_tokens")) {
            sink.emit(AgentEvent::Notice {
                message: "the reply was cut short: the model reached its output token limit".into(),
            });
        }
        Ok(Reply::Message(Box::new(acc.message()), acc.usage))
    }
}

impl Agent {
    /// Hands the held text to the `message_update` handlers as one delta; unless one of them
    /// cuts the stream (its reason), it is then kept and shown.
    async fn hand_over(
        &self,
        held: &mut Held,
        acc: &mut Accumulator,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Option<String> {
        let delta = held.take();
        let update = HookEvent::MessageUpdate {
            kind: UpdateKind::Text,
            text: held.so_far.push(&delta),
            delta: delta.clone(),
            thinking: None,
        };
        let blocked = self.hooks.emit(update, ctx).await.blocked;
        held.handed_over();
        if blocked.is_none() {
            acc.text.push_str(&delta);
            sink.emit(AgentEvent::TextDelta { delta });
        }
        blocked
    }

    /// Reasoning as it streams: shown, and kept for `/thinking show` (the accumulator keeps
    /// it too, to send it back when it comes signed).
    fn thought(&self, delta: &str, sink: &dyn EventSink) {
        self.thought_mut().push_str(delta);
        sink.emit(AgentEvent::Thinking {
            delta: delta.to_string(),
        });
    }
}

/// The conversation as a provider may receive it: an assistant tool call whose result is
/// missing (the process was stopped mid-batch) gets an "interrupted" result, so strict APIs
/// accept the transcript. Borrowed (not copied) when nothing is missing.
pub(super) fn repair_transcript(messages: &[Message]) -> Cow<'_, [Message]> {
    super::session::repair::for_request(messages)
}
