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
//! Small blocks (up to [`size_class::LARGEST`] bytes) do not reach dlmalloc one by one: they are
//! carved from chunks and kept, once freed, on free lists by size ([`size_class`]), as a read
//! makes and frees millions of them.
//!
//! A wasm module built with the `module` feature of the reader or the what-if crate declares it
//! its global allocator; native builds never use it (the type exists only on `wasm32`).

#![allow(unsafe_code)] // GlobalAlloc is an unsafe trait; the size classes hand out raw blocks.

pub mod size_class;

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
    use super::size_class::{class_of, SizeClasses};

    #[cfg(target_feature = "atomics")]
    compile_error!("AheadHeap's size classes are plain cells: not for a threaded wasm module");

    /// The size classes of the one (single-threaded) module.
    struct Classes(SizeClasses);

    // SAFETY: a wasm module without the `atomics` feature has one thread (checked above).
    unsafe impl Sync for Classes {}

    static CLASSES: Classes = Classes(SizeClasses::new());

    /// The system allocator with the memory grown ahead in doublings, and small blocks kept in
    /// size classes (see the module).
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

        /// What `allocate` returns, the memory grown ahead if it had to grow meanwhile.
        fn grown(allocate: impl FnOnce() -> *mut u8) -> *mut u8 {
            let before = memory_size(0);
            let p = allocate();
            AheadHeap::after(before);
            p
        }

        /// A block of the system allocator, the memory grown ahead if it had to grow.
        fn system(layout: Layout) -> *mut u8 {
            // SAFETY: every layout asked here has a non-zero size (a chunk, or a block too large
            // for the classes).
            AheadHeap::grown(|| unsafe { System.alloc(layout) })
        }
    }

    // SAFETY: a small block comes from the size classes, whose chunks come from `System` and are
    // never freed; any other block is `System`'s, with the caller's arguments unchanged; the
    // extra block allocated and freed in `after` is never handed out.
    unsafe impl GlobalAlloc for AheadHeap {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            match class_of(layout) {
                // SAFETY: chunks from `System`, kept for the module's life; one thread.
                Some(class) => unsafe { CLASSES.0.alloc(class, AheadHeap::system) },
                None => AheadHeap::system(layout),
            }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            if class_of(layout).is_some() {
                // SAFETY: the caller's contract for `alloc_zeroed`; a block from the classes
                // may hold what its last user wrote.
                unsafe {
                    let p = self.alloc(layout);
                    if !p.is_null() {
                        p.write_bytes(0, layout.size());
                    }
                    return p;
                }
            }
            // SAFETY: the caller's contract for `alloc_zeroed`.
            AheadHeap::grown(|| unsafe { System.alloc_zeroed(layout) })
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            match class_of(layout) {
                // SAFETY: the caller's contract: `ptr` came from `alloc` with this layout, so
                // from this class.
                Some(class) => unsafe { CLASSES.0.dealloc(ptr, class) },
                // SAFETY: the caller's contract for `dealloc`: `ptr` is `System`'s.
                None => unsafe { System.dealloc(ptr, layout) },
            }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY (for the layout): the caller's contract for `realloc` makes the new size
            // with the old alignment a valid layout.
            let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            match (class_of(layout), class_of(new)) {
                // SAFETY: the caller's contract for `realloc`; both blocks are `System`'s.
                (None, None) => {
                    AheadHeap::grown(|| unsafe { System.realloc(ptr, layout, new_size) })
                }
                // The same class: the block already has room.
                (Some(a), Some(b)) if a == b => ptr,
                _ => {
                    // SAFETY: a new block of the new layout; the old one copied (as much as
                    // both hold) and freed with its own layout, as the caller's contract allows.
                    unsafe {
                        let p = self.alloc(new);
                        if !p.is_null() {
                            std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                            self.dealloc(ptr, layout);
                        }
                        p
                    }
                }
            }
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
