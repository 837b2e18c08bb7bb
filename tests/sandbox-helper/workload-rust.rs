// SPDX-License-Identifier: LGPL-2.1-or-later
// workload-rust.rs: a Rust program for the demangling test. A hot chain of
// functions in a module (`workload::deep::chain_a` → chain_b → chain_c)
// that must show up demangled, without hash or `_R` prefix, in both
// symbol manglings (rustc's default, legacy, and
// `-C symbol-mangling-version=v0`); one generic
// function whose legacy name needs `$LT$`-style escapes decoded.
use std::time::{Duration, Instant};

pub mod deep {
    /// Keeps the optimizer from folding the loop away (std::hint::black_box
    /// is unstable in Debian 12's rustc 1.63).
    #[inline(always)]
    fn black_box(v: u64) -> u64 {
        unsafe { std::ptr::read_volatile(&v) }
    }

    #[inline(never)]
    pub fn chain_c(x: u64) -> u64 {
        let mut v = x;
        for i in 0..20000u64 {
            v = black_box(v.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        v
    }

    #[inline(never)]
    pub fn chain_b(x: u64) -> u64 {
        black_box(chain_c(x) ^ 0x5555)
    }

    #[inline(never)]
    pub fn chain_a(x: u64) -> u64 {
        black_box(chain_b(x).rotate_left(7))
    }

    #[inline(never)]
    pub fn generic_spin<T: Into<u64> + Copy>(x: T) -> u64 {
        chain_a(x.into())
    }
}

fn main() {
    let ms: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1500);
    let end = Instant::now() + Duration::from_millis(ms);
    let mut acc = 0u64;
    while Instant::now() < end {
        acc = acc.wrapping_add(deep::generic_spin(acc as u32));
    }
    println!("{}", acc & 1);
}
