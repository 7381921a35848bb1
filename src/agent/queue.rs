//! The steer and follow-up queues. Steer messages are added as user messages after the
//! current tool batch, before the next model request; follow-ups run as new prompts once the
//! agent is idle. A steer that arrives while idle starts a run at once (it is treated as the
//! next prompt). Anyone holding the `Arc<Queues>` (scripts, the REPL) may push.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

/// How a queued message is delivered (`deliver_as` in `api.send_message`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    Steer,
    FollowUp,
}

impl Delivery {
    /// Parses `"steer"` / `"follow_up"` (also `"followup"` and `"follow-up"`).
    pub fn parse(s: &str) -> Option<Delivery> {
        match s {
            "steer" => Some(Delivery::Steer),
            "follow_up" | "followup" | "follow-up" => Some(Delivery::FollowUp),
            _ => None,
        }
    }
}

/// Both queues, and a notification for an idle front end that something arrived.
#[derive(Default, Debug)]
pub struct Queues {
    steer: Mutex<VecDeque<String>>,
    follow_up: Mutex<VecDeque<String>>,
    wake: Notify,
}

impl Queues {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&self, text: impl Into<String>, delivery: Delivery) {
        let queue = match delivery {
            Delivery::Steer => &self.steer,
            Delivery::FollowUp => &self.follow_up,
        };
        queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back(text.into());
        self.wake.notify_one();
    }

    /// Takes every queued steer message, oldest first.
    pub fn take_steer(&self) -> Vec<String> {
        self.steer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .collect()
    }

    /// The next prompt to run while idle: a pending steer first, then a follow-up.
    pub fn next_idle_prompt(&self) -> Option<String> {
        let steer = self
            .steer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        steer.or_else(|| {
            self.follow_up
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front()
        })
    }

    /// Resolves when something is pushed (for an idle front end).
    pub async fn wait(&self) {
        self.wake.notified().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steer_goes_before_follow_up_when_idle() {
        let q = Queues::new();
        q.push("later", Delivery::FollowUp);
        q.push("now", Delivery::Steer);
        assert_eq!(q.next_idle_prompt().as_deref(), Some("now"));
        assert_eq!(q.next_idle_prompt().as_deref(), Some("later"));
        assert_eq!(q.next_idle_prompt(), None);
    }

    #[test]
    fn take_steer_drains_in_order() {
        let q = Queues::new();
        q.push("a", Delivery::Steer);
        q.push("b", Delivery::Steer);
        assert_eq!(q.take_steer(), vec!["a", "b"]);
        assert!(q.take_steer().is_empty());
        assert_eq!(Delivery::parse("follow_up"), Some(Delivery::FollowUp));
        assert_eq!(Delivery::parse("x"), None);
    }
}
