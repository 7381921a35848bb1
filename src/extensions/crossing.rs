//! The host's backstop on values a script hands over: at most [`MAX_DEPTH`] levels of
//! nesting, and at most `Limits::max_value_bytes` bytes of JSON, every appearance of a string
//! counted ([`Crossing`], in the `mypi-crossing` crate, `crates/crossing`, built at opt-level 3
//! with the engines' conversions that use it). Here: its tests, and [`mib`] for its messages'
//! readers.

pub use mypi_crossing::{set_thread_abandoned, set_thread_cap, Crossing, MAX_DEPTH};

pub use crate::vocab::text::mib;

#[cfg(test)]
mod tests {
    use super::*;
    use mypi_crossing::DEFAULT_CAP;

    #[test]
    fn every_appearance_counts_and_depth_is_capped() {
        set_thread_cap(1000);
        let mut c = Crossing::for_thread();
        for _ in 0..9 {
            c.charge(90).unwrap();
        }
        let e = c.charge(90).unwrap_err();
        assert!(e.contains("larger than 1000 bytes"), "{e}");
        assert!(Crossing::check_depth(MAX_DEPTH).is_ok());
        assert!(Crossing::check_depth(MAX_DEPTH + 1).is_err());
        set_thread_cap(DEFAULT_CAP);
        assert_eq!(mib(16 << 20), "16 MiB");
    }
}
