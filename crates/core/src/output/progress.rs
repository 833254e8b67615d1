//! The loading progress line: one line on stderr (a terminal) while the initial lists
//! load, rewritten in place.

use std::fmt;
use std::time::Duration;

/// Moves to the start of the line and erases it.
pub const CLEAR: &str = "\r\x1b[K";

/// What the progress line says.
pub struct Line<'a> {
    /// What the reflectors did last (`listing pods`, `listed pods: 500 in 1 page`,
    /// `listed pods: 10001 streamed`).
    pub note: &'a str,
    pub items: u64,
    /// Pages of LISTs; streaming lists have none (0: no pages are mentioned).
    pub pages: u64,
    pub popped: u64,
    pub synced: usize,
    pub targets: usize,
    pub elapsed: Duration,
}

impl Line<'_> {
    /// The line cut to fit a terminal `width` columns wide (one less, so the cursor never
    /// wraps: a wrapped line leaves a stale copy that `\r` cannot erase), with `…` at the
    /// cut; whole when the width is unknown.
    pub fn fit(&self, width: Option<usize>) -> String {
        let text = self.to_string();
        let Some(max) = width.map(|w| w.saturating_sub(1)).filter(|&m| m > 0) else {
            return text;
        };
        if text.chars().count() <= max {
            return text;
        }
        let mut cut: String = text.chars().take(max - 1).collect();
        cut.push('…');
        cut
    }
}

/// The width of the terminal stderr is, if it is one.
pub fn stderr_width() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stderr()).map(|(w, _)| usize::from(w.0))
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pages = match self.pages {
            0 => String::new(),
            1 => " in 1 page".to_owned(),
            n => format!(" in {n} pages"),
        };
        write!(
            f,
            "loading: {}; {} objects{pages} received, {} popped, {}/{} synced, {:.1}s",
            self.note,
            self.items,
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

    /// A line 1.04s into loading, nothing popped or synced yet.
    fn loading(note: &str, items: u64, pages: u64, targets: usize) -> Line<'_> {
        Line {
            note,
            items,
            pages,
            popped: 0,
            synced: 0,
            targets,
            elapsed: Duration::from_millis(1040),
        }
    }

    #[test]
    fn says_what_is_loading() {
        let l = loading("listing pods", 10500, 21, 1);
        assert_eq!(
            l.to_string(),
            "loading: listing pods; 10500 objects in 21 pages received, 0 popped, 0/1 synced, 1.0s"
        );
    }

    /// A streaming list has no pages to speak of.
    #[test]
    fn a_streaming_list_speaks_of_objects_not_pages() {
        let l = loading("listed pods: 10001 streamed", 10001, 0, 1);
        assert_eq!(
            l.to_string(),
            "loading: listed pods: 10001 streamed; 10001 objects received, 0 popped, 0/1 synced, 1.0s"
        );
    }

    /// At 80 columns the line never wraps (a wrapped line leaves stale
    /// copies behind).
    #[test]
    fn fits_the_terminal_width() {
        let l = loading(
            "listed horizontalpodautoscalers.autoscaling: 10000 in 20 pages",
            10500,
            21,
            9,
        );
        let fit = l.fit(Some(80));
        assert_eq!(fit.chars().count(), 79, "{fit}");
        assert!(fit.starts_with("loading: listed horizontalpodautoscalers") && fit.ends_with('…'));
        assert_eq!(l.fit(None), l.to_string());
        assert_eq!(l.fit(Some(400)), l.to_string());
    }
}
