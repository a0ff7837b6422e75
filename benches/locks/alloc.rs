//! The counting global allocator: live heap bytes, for the watchdog's memory per held lock.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};

/// Counts live heap bytes, for the watchdog's memory per held lock.
pub(crate) struct Counting;

pub(crate) static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE_BYTES.fetch_sub(layout.size() as i64, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE_BYTES.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The live heap's low and high over `window`, sampled every 5 ms: the low is what lasts (the
/// held locks), the high adds what a periodic burst of work (a renewal round) has in flight.
pub(crate) async fn heap_low_high(window: std::time::Duration) -> (i64, i64) {
    let end = tokio::time::Instant::now() + window;
    let (mut low, mut high) = (i64::MAX, i64::MIN);
    loop {
        let now = LIVE_BYTES.load(Ordering::Relaxed);
        (low, high) = (low.min(now), high.max(now));
        if tokio::time::Instant::now() >= end {
            return (low, high);
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}
