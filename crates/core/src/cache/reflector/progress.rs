//! How far the list under way has got, for a progress display: counters the pager and
//! the streaming list add to as pages and objects arrive.

use std::sync::atomic::Ordering;

/// How far the list under way has got, for a progress display: pages and objects
/// received so far (reset when a list or watch-list starts).
#[derive(Debug, Default)]
pub struct ListProgress {
    pub pages: std::sync::atomic::AtomicU64,
    pub items: std::sync::atomic::AtomicU64,
}

impl ListProgress {
    pub(super) fn reset(&self) {
        self.pages.store(0, Ordering::Relaxed);
        self.items.store(0, Ordering::Relaxed);
    }

    pub(super) fn page(&self, items: usize) {
        self.pages.fetch_add(1, Ordering::Relaxed);
        self.items.fetch_add(items as u64, Ordering::Relaxed);
    }
}
