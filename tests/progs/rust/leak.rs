// SPDX-License-Identifier: MIT
// Three leaks from shop::restock (a Box, a Vec's buffer, a String's), built with plain rustc by
// tests/e2e/test_rust.py: the LINE: comments mark the calls its frames must name; black_box keeps them.
mod shop {
    use std::hint::black_box;

    #[inline(never)]
    pub fn restock() -> usize {
        let crate_: &'static mut [u8; 100] = Box::leak(Box::new([7u8; 100])); // LINE:box
        let shelf = Vec::<u64>::with_capacity(25); // LINE:vec
        let label = String::from("restocked"); // LINE:string
        black_box(&crate_);
        std::mem::forget(black_box(shelf));
        std::mem::forget(black_box(label));
        crate_[0] as usize
    }
}

fn main() {
    std::process::exit(if shop::restock() == 7 { 0 } else { 1 });
}
