//! The process's allocator: the system allocator, with every block of alignment 8 or less
//! charged to the [`Meter`] that was current on the thread that allocated it, until the
//! block is freed on whatever thread frees it (how a Rhai VM gets a real memory cap). The
//! allocator itself, and the `#[global_allocator]` attribute that makes it the process's, are
//! the `mypi-alloc` crate (`crates/alloc`), built at opt-level 3; this module holds its tests.

pub use mypi_alloc::{Meter, Metered};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_charged_until_freed_on_any_thread() {
        let meter = Meter::new().unwrap();
        let before = meter.bytes();
        meter.enter();
        let big: Vec<u8> = vec![1; 1 << 20];
        let mut grown: Vec<u64> = Vec::with_capacity(1);
        grown.extend(0..10_000);
        Meter::leave();
        let charged = meter.bytes() - before;
        assert!(charged >= (1 << 20) + 80_000, "{charged}");
        // Freed on another thread: the charge goes with the block.
        std::thread::spawn(move || drop((big, grown)))
            .join()
            .unwrap();
        assert!(meter.bytes() - before < 1024, "{}", meter.bytes());
        // Blocks of other threads are not charged.
        let other: Vec<u8> = vec![0; 1 << 20];
        assert!(meter.bytes() - before < 1024);
        drop(other);
    }

    #[test]
    fn aligned_blocks_work_and_are_not_charged() {
        #[repr(align(64))]
        struct Wide([u8; 64]);
        #[repr(align(16))]
        struct Sixteen([u8; 48]);
        let meter = Meter::new().unwrap();
        meter.enter();
        let mut v: Vec<Wide> = (0..100).map(|_| Wide([7; 64])).collect();
        let mut w: Vec<Sixteen> = (0..100).map(|_| Sixteen([9; 48])).collect();
        let small: Vec<u16> = vec![3; 1000];
        Meter::leave();
        assert_eq!(v.as_ptr() as usize % 64, 0);
        assert_eq!(w.as_ptr() as usize % 16, 0);
        assert_eq!(small.as_ptr() as usize % 2, 0);
        v.extend((0..1000).map(|_| Wide([8; 64])));
        w.extend((0..1000).map(|_| Sixteen([5; 48])));
        assert!(v.iter().take(100).all(|x| x.0[63] == 7) && v[1099].0[0] == 8);
        assert!(w.iter().take(100).all(|x| x.0[47] == 9) && w[1099].0[0] == 5);
        // Only the block of alignment 8 or less counts.
        let charged = meter.bytes();
        assert!((2000..2000 + 1024).contains(&charged), "{charged}");
        drop((v, w, small));
        assert!(meter.bytes() < 1024, "{}", meter.bytes());
    }
}
