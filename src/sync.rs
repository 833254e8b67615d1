//! Locks that outlive a panic. Every `Mutex` in kwatch guards data that is consistent
//! between statements (a queue, a store, counters, a fault switch), so when a thread
//! panicked while holding one, the next holder goes on with the data as it was left
//! instead of panicking in turn.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// `m` locked, poisoned or not.
#[inline]
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
