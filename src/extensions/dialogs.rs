//! The dialogs of `ctx.ui`: `confirm` (yes/no), `select` (choices: the front end's own when
//! it shows them, an editor's permission request; else numbered, answered by a line), `input`
//! (a line, with a default) and `editor` (the user's editor on a temp file). Each waits on the
//! host without spinning and outside the call's budget; dialogs of several extensions (or
//! several calls) are asked one after another, never interleaved. A timeout, the run's
//! cancellation, or nobody to ask (print mode) gives no answer: false / nil / the default.

use std::future::Future;
use std::time::Duration;

use super::api::ApiLink;
use crate::vocab::ui::Asker;

/// How often `select` asks again after an answer that is not a choice.
const SELECT_TRIES: usize = 3;

impl ApiLink {
    /// Asks one dialog: waits for the others to end, then for `ask`'s answer, at most
    /// `timeout`, and not past the cancellation of the run that asked.
    fn dialog<T, F, A>(&self, ask: A, timeout: Option<Duration>) -> Option<T>
    where
        A: FnOnce() -> F,
        F: Future<Output = Option<T>>,
    {
        let host = self.host();
        let cancel = self.current().map(|c| c.cancel.clone()).unwrap_or_default();
        self.host_wait(async move {
            let _one_at_a_time = tokio::select! {
                guard = host.dialogs.lock() => guard,
                _ = cancel.cancelled() => return None,
            };
            let answer = async {
                match timeout {
                    Some(t) => tokio::time::timeout(t, ask()).await.ok().flatten(),
                    None => ask().await,
                }
            };
            tokio::select! {
                a = answer => a,
                _ = cancel.cancelled() => None,
            }
        })
        .ok()
        .flatten()
    }

    fn prefixed(&self, text: &str) -> String {
        format!("[{}] {text}", self.info.name)
    }

    /// Who asks `question`, and the tool call it is about (the running one, or the one a
    /// `tool_call` handler decides on).
    fn asker(&self, question: &str) -> Asker {
        // A child agent's calls are shown under ids of the front end's making: none here.
        let ctx = self.current().filter(|c| c.depth == 0);
        let running = ctx.as_ref().and_then(|c| c.call_id.clone());
        let about = ctx.as_ref().and_then(|c| c.about_call.clone());
        Asker {
            extension: self.info.name.to_string(),
            question: question.to_string(),
            call_shown: running.is_some(),
            call_id: running.or(about),
        }
    }

    /// `ctx.ui.confirm(question)`: false in print mode, on cancellation or without answer.
    pub fn confirm(&self, question: &str) -> bool {
        self.confirm_within(question, None)
    }

    /// `ctx.ui.confirm(question, {timeout_ms?})`: false after the timeout too.
    pub fn confirm_within(&self, question: &str, timeout: Option<Duration>) -> bool {
        let (services, q) = (self.services.clone(), self.prefixed(question));
        let asker = self.asker(question);
        self.dialog(
            || async move { Some(services.confirm_from(&q, &asker).await) },
            timeout,
        )
        .unwrap_or(false)
    }

    /// `ctx.ui.select(title, options, {timeout_ms?})`: the chosen option, or `None`.
    pub fn select(
        &self,
        title: &str,
        options: &[String],
        timeout: Option<Duration>,
    ) -> Option<String> {
        if options.is_empty() {
            return None;
        }
        // The front end's own choices, when it shows them (nothing is sent before the
        // dialog's turn: the request goes out when the answer is awaited).
        let own = self
            .services
            .choose(&self.prefixed(title), options, &self.asker(title));
        if let Some(asked) = own {
            let chosen = self.dialog(|| asked, timeout)?;
            return options.get(chosen).cloned();
        }
        let mut question = self.prefixed(title);
        for (i, o) in options.iter().enumerate() {
            question.push_str(&format!("\n  {}. {o}", i + 1));
        }
        question.push_str(&format!("\nChoose 1-{} (Enter: none):", options.len()));
        let services = self.services.clone();
        let options = options.to_vec();
        self.dialog(
            || async move {
                let mut q = question;
                for _ in 0..SELECT_TRIES {
                    let answer = services.ask(&q).await?;
                    let answer = answer.trim();
                    if answer.is_empty() {
                        return None;
                    }
                    if let Some(chosen) = choice(answer, &options) {
                        return Some(chosen);
                    }
                    q = format!("'{answer}' is not one of them; choose 1-{}:", options.len());
                }
                None
            },
            timeout,
        )
    }

    /// `ctx.ui.input(prompt, {default?, timeout_ms?})`: the line typed (the default for an
    /// empty one), the default when nobody can answer, `None` on timeout or cancellation.
    pub fn input(
        &self,
        prompt: &str,
        default: Option<String>,
        timeout: Option<Duration>,
    ) -> Option<String> {
        let question = match &default {
            Some(d) => self.prefixed(&format!("{prompt} [{d}]")),
            None => self.prefixed(prompt),
        };
        let services = self.services.clone();
        let fallback = default.clone();
        let answered = self.dialog(
            || async move {
                match services.ask(&question).await {
                    Some(line) if line.trim().is_empty() => Some(fallback),
                    Some(line) => Some(Some(line.trim_end_matches(['\r', '\n']).to_string())),
                    // Nobody can answer (print mode): the default.
                    None => Some(fallback),
                }
            },
            timeout,
        );
        answered.unwrap_or_default()
    }

    /// `ctx.ui.editor(initial)`: the text as the user saved it, or `None`.
    pub fn editor(&self, initial: &str) -> Option<String> {
        let (services, initial) = (self.services.clone(), initial.to_string());
        self.dialog(|| async move { services.edit(&initial).await }, None)
    }
}

/// The option an answer names: its number, or its text.
fn choice(answer: &str, options: &[String]) -> Option<String> {
    if let Ok(n) = answer.parse::<usize>() {
        return options.get(n.checked_sub(1)?).cloned();
    }
    options.iter().find(|o| o.as_str() == answer).cloned()
}

#[cfg(test)]
mod tests {
    use super::choice;

    #[test]
    fn an_answer_names_an_option_by_number_or_text() {
        let options = vec!["red".to_string(), "green".to_string()];
        assert_eq!(choice("2", &options).as_deref(), Some("green"));
        assert_eq!(choice("red", &options).as_deref(), Some("red"));
        assert_eq!(choice("0", &options), None);
        assert_eq!(choice("3", &options), None);
        assert_eq!(choice("blue", &options), None);
    }
}
