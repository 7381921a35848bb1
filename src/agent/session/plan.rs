//! Which messages of a session file a resume keeps. The first pass over the file notes where
//! each message line is and replays the compactions on those places alone (a summary drops
//! the messages before the ones it keeps; a trimming cuts their long tool outputs), so the
//! second pass reads only the messages the conversation still has. A session compacted after
//! a long history resumes in the memory of what is left, not of the history.
//!
//! The replay is [`compact::apply`]'s, on places instead of messages.

use crate::agent::compact::{self, Compaction};
use crate::vocab::protocol::Message;

/// One message of the conversation as resumed.
enum Slot {
    /// The message on the file's message line `n` (counting message lines from 0), with
    /// its long tool output trimmed when `trim`.
    File { n: usize, trim: bool },
    /// A message a summary stands in with.
    Made(Box<Message>),
}

/// The conversation as the compactions seen so far leave it.
#[derive(Default)]
pub(super) struct Plan {
    slots: Vec<Slot>,
    /// How many message lines were seen.
    lines: usize,
}

impl Plan {
    /// The next message line.
    pub(super) fn message(&mut self) {
        self.slots.push(Slot::File {
            n: self.lines,
            trim: false,
        });
        self.lines += 1;
    }

    /// A compaction line: applies it as [`compact::apply`] does.
    pub(super) fn compaction(&mut self, c: &Compaction) {
        let split = self.slots.len().saturating_sub(c.keep_last);
        if let Some(summary) = &c.summary {
            let kept = self.slots.split_off(split);
            self.slots = compact::summary_messages(summary)
                .into_iter()
                .map(|m| Slot::Made(Box::new(m)))
                .collect();
            self.slots.extend(kept);
        } else if c.trimmed {
            for slot in &mut self.slots[..split] {
                if let Slot::File { trim, .. } = slot {
                    *trim = true;
                }
            }
        }
    }

    /// Whether message line `n` is still part of the conversation (in ascending order of
    /// `n`, as the file is read).
    pub(super) fn needed(&self) -> Vec<bool> {
        let mut needed = vec![false; self.lines];
        for slot in &self.slots {
            if let Slot::File { n, .. } = slot {
                needed[*n] = true;
            }
        }
        needed
    }

    /// The conversation, with `read` giving message line `n` (`None`: it could not be read,
    /// and is left out).
    pub(super) fn assemble(self, mut read: impl FnMut(usize) -> Option<Message>) -> Vec<Message> {
        let mut out = Vec::with_capacity(self.slots.len());
        for slot in self.slots {
            match slot {
                Slot::Made(m) => out.push(*m),
                Slot::File { n, trim } => {
                    if let Some(mut m) = read(n) {
                        if trim {
                            compact::trim_outputs(std::slice::from_mut(&mut m));
                        }
                        out.push(m);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message per line `n`: a tool result whose output is `n` repeated, long enough to be
    /// trimmed.
    fn line(n: usize) -> Message {
        Message {
            role: crate::vocab::protocol::Role::Tool,
            tool_call_id: Some(format!("c{n}")),
            ..Message::user(n.to_string().repeat(5_000))
        }
    }

    #[test]
    fn the_plan_gives_what_applying_each_compaction_gives() {
        let compactions = [
            Compaction {
                keep_last: 2,
                trimmed: true,
                summary: None,
                tokens_before: 0,
                tokens_after: 0,
            },
            Compaction {
                keep_last: 5,
                trimmed: true,
                summary: Some("so far".into()),
                tokens_before: 0,
                tokens_after: 0,
            },
        ];
        // Lines: 5 messages, trimming, 2 messages, summary, 2 messages.
        let script: [(usize, Option<&Compaction>); 3] = [
            (5, Some(&compactions[0])),
            (2, Some(&compactions[1])),
            (2, None),
        ];
        let (mut plan, mut applied, mut n) = (Plan::default(), Vec::new(), 0);
        for (count, compaction) in script {
            for _ in 0..count {
                plan.message();
                applied.push(line(n));
                n += 1;
            }
            if let Some(c) = compaction {
                plan.compaction(c);
                applied = compact::apply(applied, c);
            }
        }
        let needed = plan.needed();
        assert_eq!(
            needed,
            vec![false, false, true, true, true, true, true, true, true]
        );
        let mut asked = Vec::new();
        let resumed = plan.assemble(|n| {
            asked.push(n);
            Some(line(n))
        });
        assert_eq!(asked, (2..9).collect::<Vec<_>>());
        assert_eq!(resumed, applied);
        assert!(
            resumed[2].content.contains("trimmed"),
            "line 2 kept trimmed"
        );
        assert_eq!(
            resumed.len(),
            9 - 2 + 2,
            "two messages stand in for the summary"
        );
    }
}
