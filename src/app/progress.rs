//! The loading line: while the initial lists load, a one-line report on stderr (a
//! terminal) of what the informers' sink has seen, rewritten in place; the sink clears it
//! before anything goes to stdout.

use std::io::{self, Write as _};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::app::run::Shared;
use crate::output::progress;

/// While the initial lists load, a one-line progress report on stderr (a terminal),
/// rewritten in place and cleared before anything goes to stdout and once synced.
pub async fn run(shared: Arc<Shared>) {
    let start = Instant::now();
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let mut sink = shared.lock();
        if sink.finished || sink.all_synced(shared.targets) {
            sink.clear_progress();
            return;
        }
        // Whatever stdout holds goes out first, so it never lands after the progress text.
        let _ = sink.printer.flush();
        let popped = sink.deltas;
        let (pages, items) = shared
            .lists
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .fold((0, 0), |(p, i), l| {
                (
                    p + l.pages.load(Ordering::Relaxed),
                    i + l.items.load(Ordering::Relaxed),
                )
            });
        let line = progress::Line {
            note: &sink.progress_note,
            items,
            pages,
            popped,
            synced: sink.synced,
            targets: shared.targets,
            elapsed: start.elapsed(),
        };
        let line = line.fit(progress::stderr_width());
        let _ = write!(io::stderr(), "{}{line}", progress::CLEAR);
        sink.progress_shown = true;
    }
}
