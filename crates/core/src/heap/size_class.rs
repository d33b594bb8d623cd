//! Small blocks served from free lists of a few size classes ([`SizeClasses`]), over a backing
//! allocator that is asked only for chunks and for large blocks.
//!
//! dlmalloc, the system allocator of `wasm32-unknown-unknown`, spends some tens of nanoseconds in
//! the engine on each allocation and on each free, splitting and coalescing its bins. Reading a
//! recording makes and frees millions of small blocks (a line's keys and values, its maps'
//! nodes: some two dozen a line of `INFO`), so the browser's modules keep freed small blocks on a
//! list of their size and hand them out again first: a push and a pop. Blocks of up to
//! [`LARGEST`] bytes (alignment up to [`ALIGN`]) are carved from chunks of [`CHUNK`] bytes and
//! never go back to the backing allocator; a freed one waits on its class's list for the next
//! block of that class. What a read holds at its peak is then held by its classes for good, which
//! a module that reads one recording after another reuses.
//!
//! Not for threads: the lists are plain cells. The browser's modules are single-threaded.

use std::alloc::Layout;
use std::cell::Cell;
use std::ptr;

/// Block sizes are multiples of this, which is also the largest alignment served.
pub const ALIGN: usize = 16;
/// The largest block served from the classes, in bytes; larger ones go to the backing allocator.
pub const LARGEST: usize = 512;
/// Bytes asked of the backing allocator at once for new blocks.
pub const CHUNK: usize = 256 << 10;
/// How many size classes there are.
const CLASSES: usize = LARGEST / ALIGN;

/// The class of a block of `layout`, when one serves it.
pub fn class_of(layout: Layout) -> Option<usize> {
    (layout.size() <= LARGEST && layout.align() <= ALIGN)
        .then(|| layout.size().max(1).div_ceil(ALIGN) - 1)
}

/// Free lists of small blocks by size class, and the chunk new blocks are carved from.
#[derive(Debug)]
pub struct SizeClasses {
    /// Each class's first free block; a free block holds the address of the next.
    free: [Cell<*mut u8>; CLASSES],
    /// Where the current chunk's unused part begins, and how many bytes it has.
    chunk: Cell<(*mut u8, usize)>,
}

impl Default for SizeClasses {
    fn default() -> Self {
        SizeClasses::new()
    }
}

impl SizeClasses {
    /// No blocks yet.
    pub const fn new() -> SizeClasses {
        SizeClasses {
            free: [const { Cell::new(ptr::null_mut()) }; CLASSES],
            chunk: Cell::new((ptr::null_mut(), 0)),
        }
    }

    /// A block of class `class` (from [`class_of`]): a freed one, else one carved from the chunk,
    /// a new chunk asked of `backing` when it has too little left (null if `backing` fails).
    ///
    /// # Safety
    ///
    /// `backing` must return null or a block of the layout it is given, valid for as long as
    /// this `SizeClasses` is used; no other thread may use it.
    pub unsafe fn alloc(&self, class: usize, backing: impl FnOnce(Layout) -> *mut u8) -> *mut u8 {
        let head = self.free[class].get();
        if !head.is_null() {
            // SAFETY: a block on the list is at least ALIGN bytes, aligned, and holds the next
            // block's address, written when it was freed.
            self.free[class].set(unsafe { head.cast::<*mut u8>().read() });
            return head;
        }
        let size = (class + 1) * ALIGN;
        let (mut at, mut left) = self.chunk.get();
        if left < size {
            // What is left of the old chunk is smaller than this block: it is given up.
            let Ok(layout) = Layout::from_size_align(CHUNK, ALIGN) else {
                return ptr::null_mut();
            };
            at = backing(layout);
            if at.is_null() {
                return ptr::null_mut();
            }
            left = CHUNK;
        }
        // SAFETY: `size <= left`, so the block and the rest stay inside the chunk.
        self.chunk.set((unsafe { at.add(size) }, left - size));
        at
    }

    /// Puts back a block of class `class`.
    ///
    /// # Safety
    ///
    /// `block` came from [`SizeClasses::alloc`] of this `SizeClasses` with the same class and is
    /// not used after.
    pub unsafe fn dealloc(&self, block: *mut u8, class: usize) {
        // SAFETY: the block is ALIGN-aligned and at least ALIGN bytes, and no longer in use.
        unsafe { block.cast::<*mut u8>().write(self.free[class].get()) };
        self.free[class].set(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::{alloc, dealloc};
    use std::collections::BTreeSet;

    /// Chunks from the system allocator, freed at the end.
    struct Chunks(Vec<(*mut u8, Layout)>);

    impl Chunks {
        fn take(&mut self, l: Layout) -> *mut u8 {
            // SAFETY: a non-zero size.
            let p = unsafe { alloc(l) };
            self.0.push((p, l));
            p
        }
    }

    impl Drop for Chunks {
        fn drop(&mut self) {
            for (p, l) in self.0.drain(..) {
                // SAFETY: allocated above with `l`.
                unsafe { dealloc(p, l) };
            }
        }
    }

    #[test]
    fn small_layouts_have_a_class_and_large_or_overaligned_ones_none() {
        let l = |size, align| Layout::from_size_align(size, align).unwrap();
        assert_eq!(class_of(l(0, 1)), Some(0));
        assert_eq!(class_of(l(1, 1)), Some(0));
        assert_eq!(class_of(l(16, 8)), Some(0));
        assert_eq!(class_of(l(17, 8)), Some(1));
        assert_eq!(class_of(l(LARGEST, 16)), Some(CLASSES - 1));
        assert_eq!(class_of(l(LARGEST + 1, 1)), None);
        assert_eq!(class_of(l(8, 32)), None);
    }

    #[test]
    fn blocks_are_aligned_disjoint_and_reused_after_a_free() {
        let classes = SizeClasses::new();
        let mut chunks = Chunks(Vec::new());
        let mut live: Vec<(usize, *mut u8)> = Vec::new();
        // Blocks of every class, more than one chunk's worth.
        for _ in 0..40 {
            for class in 0..CLASSES {
                let p = unsafe { classes.alloc(class, |l| chunks.take(l)) };
                assert!(!p.is_null());
                assert_eq!(p as usize % ALIGN, 0);
                // Written whole: a block overlapping another would spoil its pattern.
                unsafe { p.write_bytes(u8::try_from(class % 251).unwrap(), (class + 1) * ALIGN) };
                live.push((class, p));
            }
        }
        for &(class, p) in &live {
            let bytes = unsafe { std::slice::from_raw_parts(p, (class + 1) * ALIGN) };
            assert!(bytes.iter().all(|&b| usize::from(b) == class % 251));
        }
        let starts: BTreeSet<usize> = live.iter().map(|&(_, p)| p as usize).collect();
        assert_eq!(starts.len(), live.len(), "every block its own");
        let chunks_before = chunks.0.len();
        assert!(chunks_before >= 2, "more than one chunk was needed");
        // Freed blocks come back first, latest freed first, and no chunk is asked for.
        let (class, p) = live[5];
        unsafe { classes.dealloc(p, class) };
        let (class2, p2) = live[5 + CLASSES];
        assert_eq!(class2, class);
        unsafe { classes.dealloc(p2, class2) };
        assert_eq!(unsafe { classes.alloc(class, |l| chunks.take(l)) }, p2);
        assert_eq!(unsafe { classes.alloc(class, |l| chunks.take(l)) }, p);
        assert_eq!(chunks.0.len(), chunks_before);
    }

    #[test]
    fn a_failing_backing_allocator_gives_null() {
        let classes = SizeClasses::new();
        assert!(unsafe { classes.alloc(3, |_| ptr::null_mut()) }.is_null());
    }
}
