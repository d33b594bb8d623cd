//! The wasm heap grown ahead, in doublings (`AheadHeap`), for the browser's wasm modules.
//!
//! Rust's allocator on `wasm32-unknown-unknown` (dlmalloc) asks the engine for more linear memory
//! (`memory.grow`) a little at a time, as its pool runs out, and a grow costs V8 about the same
//! whatever its size: in Node 20, growing a memory to 300 MiB a page at a time took 4,783 grows
//! and 2.8 s, 16 pages at a time 59 ms, 1,024 pages at a time 1 ms. Reading the 24 h × 6-node
//! recording spent 46 % of its time there (`node --cpu-prof`: dlmalloc's `System::alloc`, the
//! one caller of `memory.grow`, 27 %; the garbage collector 19 %), and took 8.0 s where it takes
//! 3.9 s with `AheadHeap` (BENCHMARKS.md, "Issue 26, part 4: the day-long recording in a
//! worker"). `AheadHeap` wraps the system allocator: whenever an allocation had to grow the
//! memory, it grows it once more by as much as the memory then holds (at most [`MOST_AHEAD`]),
//! by allocating a block that size and freeing it at once: the block goes back to dlmalloc's
//! pool, where the next allocations find it. The memory then grows a number of times
//! logarithmic in its peak, and never to more than about twice the peak (346 MiB for that
//! recording's 285 MiB).
//!
//! A wasm module built with the `module` feature of the reader or the what-if crate declares it
//! its global allocator; native builds never use it (the type exists only on `wasm32`).

#![allow(unsafe_code)] // GlobalAlloc is an unsafe trait: every method forwards to `System`.

#[cfg(target_arch = "wasm32")]
pub use ahead::AheadHeap;

/// The most memory grown ahead at once, in bytes: past it the heap grows by this much at a time
/// (a 1 GiB heap does not reserve another GiB it may never use).
pub const MOST_AHEAD: usize = 64 << 20;

/// The size of a wasm page, in bytes.
pub const PAGE: usize = 64 << 10;

/// How many bytes to grow ahead when an allocation grew the memory to `pages` wasm pages: as
/// much as the memory holds, at most [`MOST_AHEAD`].
pub fn ahead_of(pages: usize) -> usize {
    pages.saturating_mul(PAGE).min(MOST_AHEAD)
}

#[cfg(target_arch = "wasm32")]
mod ahead {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::arch::wasm32::memory_size;

    use super::ahead_of;

    /// The system allocator with the memory grown ahead in doublings (see the module).
    #[derive(Debug, Default, Clone, Copy)]
    pub struct AheadHeap;

    impl AheadHeap {
        /// Grows the memory ahead if it grew since `before` pages.
        fn after(before: usize) {
            let now = memory_size(0);
            if now <= before {
                return;
            }
            let Ok(block) = Layout::from_size_align(ahead_of(now), 16) else {
                return;
            };
            // SAFETY: `block` has a non-zero size; the pointer is freed with the same layout,
            // and only when the allocation succeeded.
            unsafe {
                let p = System.alloc(block);
                if !p.is_null() {
                    System.dealloc(p, block);
                }
            }
        }
    }

    // SAFETY: every method forwards to `System` with the caller's arguments, unchanged; the
    // extra block allocated and freed in `after` is never handed out.
    unsafe impl GlobalAlloc for AheadHeap {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let before = memory_size(0);
            // SAFETY: the caller's contract for `alloc`.
            let p = unsafe { System.alloc(layout) };
            AheadHeap::after(before);
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let before = memory_size(0);
            // SAFETY: the caller's contract for `alloc_zeroed`.
            let p = unsafe { System.alloc_zeroed(layout) };
            AheadHeap::after(before);
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: the caller's contract for `dealloc`: `ptr` came from this allocator,
            // which is `System`'s.
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let before = memory_size(0);
            // SAFETY: the caller's contract for `realloc`.
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            AheadHeap::after(before);
            p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_doubles_until_the_cap() {
        assert_eq!(ahead_of(17), 17 * PAGE);
        assert_eq!(ahead_of(MOST_AHEAD / PAGE), MOST_AHEAD);
        assert_eq!(ahead_of(10 * MOST_AHEAD / PAGE), MOST_AHEAD);
        assert_eq!(ahead_of(usize::MAX), MOST_AHEAD);
    }
}
