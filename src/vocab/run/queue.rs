//! The steer and follow-up queues. Steer messages are added as user messages after the
//! current tool batch, before the next model request; follow-ups run as new prompts once the
//! agent is idle. A steer that arrives while idle starts a run at once (it is treated as the
//! next prompt). Anyone holding the `Arc<Queues>` (scripts, the REPL) may push.
//!
//! Both are bounded, so a runaway script cannot fill memory or keep the agent busy forever:
//! each queue holds at most [`QueueLimits::max_len`] messages (a push beyond is refused with
//! [`QueueFull`]), and after the user's last prompt at most [`QueueLimits::max_chain`] queued
//! prompts run; the rest are dropped with a notice ([`Queues::next_chained`]).

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::Notify;

pub use crate::vocab::protocol::Delivery;

/// How much the queues hold and how many queued prompts run in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Messages one queue holds (`MYPI_QUEUE_MAX`, default 100).
    pub max_len: usize,
    /// Queued prompts that run after the user's last one (`MYPI_MAX_FOLLOW_UPS`, default 10).
    pub max_chain: usize,
    /// Bytes of text one queue holds.
    pub max_bytes: usize,
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            max_len: 100,
            max_chain: 10,
            max_bytes: 16 * 1024 * 1024,
        }
    }
}

/// A push was refused: the queue already holds its maximum.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {queue} queue is full ({what} wait already; MYPI_QUEUE_MAX raises the number)")]
pub struct QueueFull {
    pub queue: &'static str,
    /// `100 messages` or `16 MiB of text`.
    pub what: String,
}

/// Queued prompts were dropped: the chain after the user's last prompt reached its limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stopped after {ran} prompts queued by extensions in a row (MYPI_MAX_FOLLOW_UPS); {dropped} more dropped")]
pub struct ChainEnded {
    pub ran: usize,
    pub dropped: usize,
}

/// Both queues, and a notification for an idle front end that something arrived.
#[derive(Default, Debug)]
pub struct Queues {
    steer: Mutex<VecDeque<String>>,
    follow_up: Mutex<VecDeque<String>>,
    wake: Notify,
    limits: QueueLimits,
    chained: Mutex<usize>,
}

impl Queues {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_limits(limits: QueueLimits) -> Self {
        Queues {
            limits,
            ..Self::default()
        }
    }

    /// Queues `text`; refused when that queue is full.
    pub fn push(&self, text: impl Into<String>, delivery: Delivery) -> Result<(), QueueFull> {
        let (queue, name) = match delivery {
            Delivery::Steer => (&self.steer, "steer"),
            Delivery::FollowUp => (&self.follow_up, "follow-up"),
        };
        let text = text.into();
        {
            let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
            let what = if q.len() >= self.limits.max_len {
                Some(format!("{} messages", self.limits.max_len))
            } else if q.iter().map(String::len).sum::<usize>() + text.len() > self.limits.max_bytes
            {
                Some(format!("{} MiB of text", self.limits.max_bytes >> 20))
            } else {
                None
            };
            if let Some(what) = what {
                return Err(QueueFull { queue: name, what });
            }
            q.push_back(text);
        }
        self.wake.notify_one();
        Ok(())
    }

    /// The user typed a prompt: queued prompts may chain again.
    pub fn user_prompted(&self) {
        *self.chained.lock().unwrap_or_else(|p| p.into_inner()) = 0;
    }

    /// The next queued prompt to run while idle, counted against the chain limit. Past the
    /// limit both queues are emptied and `Err` says how many were dropped.
    pub fn next_chained(&self) -> Result<Option<(String, Delivery)>, ChainEnded> {
        let mut chained = self.chained.lock().unwrap_or_else(|p| p.into_inner());
        if *chained >= self.limits.max_chain {
            let dropped = self.clear();
            return match dropped {
                0 => Ok(None),
                dropped => Err(ChainEnded {
                    ran: *chained,
                    dropped,
                }),
            };
        }
        let next = self.next_idle_prompt();
        if next.is_some() {
            *chained += 1;
        }
        Ok(next)
    }

    /// Empties both queues; how many messages were dropped.
    fn clear(&self) -> usize {
        let mut n = 0;
        for q in [&self.steer, &self.follow_up] {
            let mut q = q.lock().unwrap_or_else(|p| p.into_inner());
            n += q.len();
            q.clear();
        }
        n
    }

    /// Takes every queued message, the steering ones first, each queue oldest first (a
    /// cancelled run gives them back to the user).
    pub fn take_all(&self) -> Vec<String> {
        let mut all = self.take_steer();
        all.extend(
            self.follow_up
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .drain(..),
        );
        all
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
    pub fn next_idle_prompt(&self) -> Option<(String, Delivery)> {
        let steer = self
            .steer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        let steer = steer.map(|t| (t, Delivery::Steer));
        steer.or_else(|| {
            self.follow_up
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front()
                .map(|t| (t, Delivery::FollowUp))
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
        q.push("later", Delivery::FollowUp).unwrap();
        q.push("now", Delivery::Steer).unwrap();
        assert_eq!(q.next_idle_prompt(), Some(("now".into(), Delivery::Steer)));
        assert_eq!(
            q.next_idle_prompt(),
            Some(("later".into(), Delivery::FollowUp))
        );
        assert_eq!(q.next_idle_prompt(), None);
    }

    #[test]
    fn take_steer_drains_in_order() {
        let q = Queues::new();
        q.push("a", Delivery::Steer).unwrap();
        q.push("b", Delivery::Steer).unwrap();
        assert_eq!(q.take_steer(), vec!["a", "b"]);
        assert!(q.take_steer().is_empty());
        assert_eq!(Delivery::parse("follow_up"), Some(Delivery::FollowUp));
        assert_eq!(Delivery::parse("x"), None);
    }

    #[test]
    fn queues_are_bounded_and_chains_end() {
        let q = Queues::with_limits(QueueLimits {
            max_len: 2,
            max_chain: 3,
            max_bytes: 1 << 20,
        });
        q.push("1", Delivery::FollowUp).unwrap();
        q.push("2", Delivery::FollowUp).unwrap();
        let full = q.push("3", Delivery::FollowUp).unwrap_err();
        assert!(
            full.to_string().contains("follow-up queue is full (2"),
            "{full}"
        );
        let big = "x".repeat((1 << 20) + 1);
        let full = q.push(big, Delivery::Steer).unwrap_err();
        assert!(full.to_string().contains("1 MiB of text"), "{full}");
        q.push("s", Delivery::Steer).unwrap();
        for _ in 0..3 {
            assert!(q.next_chained().unwrap().is_some());
        }
        q.push("4", Delivery::FollowUp).unwrap();
        let ended = q.next_chained().unwrap_err();
        assert_eq!(ended, ChainEnded { ran: 3, dropped: 1 });
        assert_eq!(q.next_chained(), Ok(None));
        q.user_prompted();
        q.push("5", Delivery::FollowUp).unwrap();
        assert_eq!(q.next_chained(), Ok(Some(("5".into(), Delivery::FollowUp))));
    }
}
