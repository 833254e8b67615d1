//! The loading progress line: one line on stderr (a terminal) while the initial lists
//! load, rewritten in place.

use std::fmt;
use std::time::Duration;

/// Moves to the start of the line and erases it.
pub const CLEAR: &str = "\r\x1b[K";

/// What the progress line says.
pub struct Line<'a> {
    /// What the reflectors did last (`listing pods`, `listed pods: 500 in 1 pages`).
    pub note: &'a str,
    pub items: u64,
    pub pages: u64,
    pub popped: u64,
    pub synced: usize,
    pub targets: usize,
    pub elapsed: Duration,
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "loading: {}; {} objects in {} pages received, {} popped, {}/{} synced, {:.1}s",
            self.note,
            self.items,
            self.pages,
            self.popped,
            self.synced,
            self.targets,
            self.elapsed.as_secs_f64()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_is_loading() {
        let l = Line {
            note: "listing pods",
            items: 10500,
            pages: 21,
            popped: 0,
            synced: 0,
            targets: 1,
            elapsed: Duration::from_millis(1040),
        };
        assert_eq!(
            l.to_string(),
            "loading: listing pods; 10500 objects in 21 pages received, 0 popped, 0/1 synced, 1.0s"
        );
    }
}
