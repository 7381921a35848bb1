//! The line the REPL prints after a run: the model, the run's tokens (and what the prompt
//! cache served and took in), what spent tokens besides the agent's own turns, the session's
//! totals and cost, and the time taken.

/// A token count as people read it: `950`, `1.2k`, `34k`, `1.5M`.
fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=9_999 => format!("{:.1}k", n as f64 / 1e3),
        10_000..=999_999 => format!("{}k", (n as f64 / 1e3).round() as u64),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// The line after a run: the model, the run's tokens (every model call it made, what other
/// than its own turns spent some named), the session's, and the time taken.
pub fn run_summary(
    model: &str,
    run: crate::vocab::protocol::Usage,
    by: &[(crate::vocab::run::Spender, crate::vocab::protocol::Usage)],
    total: crate::vocab::protocol::Usage,
    took: std::time::Duration,
) -> String {
    let cost = total
        .cost_usd
        .map(|c| format!(" · ${c:.4}"))
        .unwrap_or_default();
    let parts: Vec<String> = by
        .iter()
        .filter(|(s, _)| *s != crate::vocab::run::Spender::Agent)
        .map(|(s, u)| {
            let (i, o) = (tokens(u.input_tokens), tokens(u.output_tokens));
            format!("{} {i} in / {o} out", s.name())
        })
        .collect();
    let parts = match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join(", ")),
    };
    format!(
        "· {model} · {} in{} / {} out{parts} · session {} in / {} out{cost} · {:.1} s",
        tokens(run.input_tokens),
        cache_part(&run),
        tokens(run.output_tokens),
        tokens(total.input_tokens),
        tokens(total.output_tokens),
        took.as_secs_f64()
    )
}

/// ` (N cached, M written)`: what of a run's input the provider's prompt cache served and
/// took in, when it said.
fn cache_part(u: &crate::vocab::protocol::Usage) -> String {
    let mut parts = Vec::new();
    if u.cached_tokens > 0 {
        parts.push(format!("{} cached", tokens(u.cached_tokens)));
    }
    if u.cache_write_tokens > 0 {
        parts.push(format!("{} written", tokens(u.cache_write_tokens)));
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::protocol::Usage;

    #[test]
    fn the_run_summary_reads_well() {
        let u = Usage::tokens;
        assert_eq!(
            run_summary(
                "m",
                u(1234, 56),
                &[],
                u(45_600, 1_500_000),
                std::time::Duration::from_millis(3420)
            ),
            "· m · 1.2k in / 56 out · session 46k in / 1.5M out · 3.4 s"
        );
    }

    #[test]
    fn the_run_summary_names_what_else_spent() {
        use crate::vocab::run::Spender;
        let u = Usage::tokens;
        let by = [
            (Spender::Agent, u(2100, 15)),
            (Spender::Children, u(1100, 50)),
        ];
        let line = run_summary("m", u(3200, 65), &by, u(3200, 65), Default::default());
        assert!(
            line.starts_with("· m · 3.2k in / 65 out (subagents 1.1k in / 50 out) · session"),
            "{line}"
        );
    }

    #[test]
    fn what_the_cache_served_and_took_in_is_in_the_line() {
        let run = Usage {
            cached_tokens: 10_000,
            cache_write_tokens: 1_200,
            ..Usage::tokens(12_000, 300)
        };
        let line = run_summary("m", run, &[], run, Default::default());
        assert!(
            line.starts_with("· m · 12k in (10k cached, 1.2k written) / 300 out"),
            "{line}"
        );
    }
}
