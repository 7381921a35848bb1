//! Thinking levels: how much a model reasons before it answers (`--thinking`, `thinking = "…"`
//! in the configuration, `/thinking LEVEL`, `api.set_thinking`). Each wire turns a level into
//! its own parameter: Chat Completions' `reasoning_effort`, the Messages API's thinking budget.

/// A thinking level; `Off` asks for nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Thinking {
    #[default]
    Off,
    Minimal,
    Low,
    Medium,
    High,
}

/// The levels' names, in order, as the user writes them.
pub const LEVELS: [&str; 5] = ["off", "minimal", "low", "medium", "high"];

/// The least thinking budget the Messages API takes.
pub const MIN_BUDGET: u64 = 1024;

/// Room kept for the reply after the thinking budget when `max_tokens` is raised.
const REPLY_ROOM: u64 = 4096;

impl Thinking {
    const ALL: [Thinking; 5] = [
        Thinking::Off,
        Thinking::Minimal,
        Thinking::Low,
        Thinking::Medium,
        Thinking::High,
    ];

    /// The level named `name` (as in [`LEVELS`], any case), if it is one.
    pub fn parse(name: &str) -> Option<Thinking> {
        let name = name.trim().to_ascii_lowercase();
        LEVELS
            .iter()
            .position(|l| *l == name)
            .map(|i| Thinking::ALL[i])
    }

    /// The level's name.
    pub fn name(self) -> &'static str {
        LEVELS[self as usize]
    }

    /// Whether any thinking is asked for.
    pub fn is_on(self) -> bool {
        self != Thinking::Off
    }

    /// The Messages API's thinking budget for this level, in tokens (none when off).
    pub fn budget(self) -> Option<u64> {
        match self {
            Thinking::Off => None,
            Thinking::Minimal => Some(MIN_BUDGET),
            Thinking::Low => Some(4_000),
            Thinking::Medium => Some(10_000),
            Thinking::High => Some(32_000),
        }
    }

    /// `(max_tokens, budget_tokens)` for a request whose limit is `max_tokens`: the budget
    /// must be below `max_tokens`, so `max_tokens` is raised to the budget plus room for the
    /// reply, up to `ceiling` (the model's known output limit, when it is known); when that
    /// cannot hold the budget, the budget shrinks, down to the API's least ([`MIN_BUDGET`]).
    pub fn fit(self, max_tokens: u64, ceiling: Option<u64>) -> Option<(u64, u64)> {
        let budget = self.budget()?;
        let ceiling = ceiling.unwrap_or(max_tokens).max(max_tokens);
        let max_tokens = max_tokens.max((budget + REPLY_ROOM).min(ceiling));
        let budget = budget
            .min(max_tokens.saturating_sub(REPLY_ROOM))
            .max(MIN_BUDGET);
        // Too small a limit for even the least budget: the API needs it below max_tokens.
        let max_tokens = max_tokens.max(budget + MIN_BUDGET);
        Some((max_tokens, budget))
    }
}

impl std::fmt::Display for Thinking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_name_and_nothing_else() {
        for name in LEVELS {
            assert_eq!(Thinking::parse(name).map(Thinking::name), Some(name));
        }
        assert_eq!(Thinking::parse(" High "), Some(Thinking::High));
        assert_eq!(Thinking::parse("max"), None);
        assert_eq!(Thinking::default(), Thinking::Off);
    }

    #[test]
    fn the_budget_fits_under_max_tokens() {
        assert_eq!(Thinking::Off.fit(8192, None), None);
        // Room enough already.
        assert_eq!(
            Thinking::Low.fit(64_000, Some(64_000)),
            Some((64_000, 4_000))
        );
        // Raised within the model's limit.
        assert_eq!(
            Thinking::High.fit(8192, Some(64_000)),
            Some((36_096, 32_000))
        );
        // The limit cannot hold it: the budget shrinks.
        assert_eq!(
            Thinking::High.fit(8192, Some(16_000)),
            Some((16_000, 11_904))
        );
        assert_eq!(Thinking::Medium.fit(8192, None), Some((8192, 4096)));
        // Never under the API's least budget, always below max_tokens.
        assert_eq!(Thinking::Minimal.fit(2000, None), Some((2048, 1024)));
    }
}
