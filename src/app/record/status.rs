//! What the database recorder has done, read by `--stats` and `--metrics` while it works:
//! counters the writer's thread moves and the readers load, no lock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The recorder's counters.
#[derive(Debug, Default)]
pub struct Status {
    /// Where it records, as lines name it (no password): the URL given, masked, until the
    /// writer has read the connection's settings (user, host, port, database).
    pub target: std::sync::Mutex<String>,
    /// Rows written (new ones: a row the database already had is not counted).
    pub rows: AtomicU64,
    /// Rows the database already had: a batch written again after its answer was lost.
    pub duplicates: AtomicU64,
    /// Batches committed.
    pub batches: AtomicU64,
    /// Records not yet written: in memory and in the local spill file.
    pub backlog: AtomicU64,
    /// Records ever written to the local spill file.
    pub spilled: AtomicU64,
    /// Times the database went unreachable (a write failed after one succeeded, or the
    /// first ones failed).
    pub outages: AtomicU64,
    /// The last write succeeded.
    pub up: AtomicBool,
}

impl Status {
    pub fn new(target: String) -> Status {
        Status {
            target: std::sync::Mutex::new(target),
            ..Status::default()
        }
    }

    /// The target as lines name it.
    pub fn named(&self, name: &str) {
        *self.target.lock().unwrap_or_else(|e| e.into_inner()) = name.to_owned();
    }

    pub fn get(n: &AtomicU64) -> u64 {
        n.load(Ordering::Relaxed)
    }

    pub fn add(n: &AtomicU64, by: u64) {
        n.fetch_add(by, Ordering::Relaxed);
    }

    /// `--stats`' line.
    pub fn line(&self) -> String {
        let get = Status::get;
        let mut s = format!(
            "recorder: {} rows in {} batches into {}",
            get(&self.rows),
            get(&self.batches),
            self.target.lock().unwrap_or_else(|e| e.into_inner())
        );
        let dup = get(&self.duplicates);
        if dup > 0 {
            s.push_str(&format!(" ({dup} already there)"));
        }
        s.push_str(&format!(
            "; backlog {}, spilled {}, unreachable {} times",
            get(&self.backlog),
            get(&self.spilled),
            get(&self.outages)
        ));
        s
    }
}
