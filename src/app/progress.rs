//! The loading line: while the initial lists load, a one-line report on stderr (a
//! terminal) of what the informers have delivered, rewritten in place. The printer sits
//! behind [`Cleared`], which erases the line before anything the printer writes, and
//! [`Loading`] watches the records for what the line and a `--timeout` before the sync
//! say.

use std::io::{self, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::app::run::Shared;
use crate::cache::reflector::ReflectorEvent;
use crate::context::ContextName;
use crate::informer::record::{Body, Record};
use crate::informer::sink::{Observer, Sink};
use crate::output::progress;

/// Whether the loading line is on stderr now: set by [`run`] when it draws the line,
/// cleared (and the line erased) by [`Cleared`] before the printer writes. Both under the
/// informers' lock.
pub type Shown = Arc<AtomicBool>;

/// Erases the loading line, if it is shown.
fn clear(shown: &Shown) {
    if shown.swap(false, Ordering::Relaxed) {
        let _ = write!(io::stderr(), "{}", progress::CLEAR);
    }
}

/// The printer, with the loading line erased before each thing it writes (a record, a
/// diagnostic, its end).
pub struct Cleared<S> {
    pub inner: S,
    pub shown: Shown,
}

impl<S: Sink> Sink for Cleared<S> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        clear(&self.shown);
        self.inner.record(rec)
    }
    fn hidden(&mut self, rec: &Record<'_>) -> io::Result<()> {
        self.inner.hidden(rec)
    }
    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        clear(&self.shown);
        self.inner.diagnostic(line)
    }
    fn joined(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        self.inner.joined(resource, context)
    }
    fn left_out(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        self.inner.left_out(resource, context)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
    fn finish(&mut self) -> io::Result<()> {
        clear(&self.shown);
        self.inner.finish()
    }
}

/// What the reflectors did last while loading (the loading line's note), and the last
/// failure one reported (`resource: cause`), for the line that ends a run whose
/// `--timeout` came before every resource synced.
#[derive(Debug, Default)]
pub struct Loading {
    note: String,
    last_error: Option<String>,
}

impl Observer for Loading {
    fn record(&mut self, rec: &Record<'_>, _shown: bool, _targets: usize) {
        let Body::Event(e) = &rec.body else { return };
        let name = &rec.resource.name;
        match e {
            ReflectorEvent::List { .. } => self.note = format!("listing {name}"),
            // A streaming list has no pages.
            ReflectorEvent::Listed {
                items,
                streaming: true,
                ..
            } => self.note = format!("listed {name}: {items} streamed"),
            ReflectorEvent::Listed { items, pages, .. } => {
                let s = if *pages == 1 { "" } else { "s" };
                self.note = format!("listed {name}: {items} in {pages} page{s}")
            }
            ReflectorEvent::Backoff { cause, .. } => {
                self.last_error = Some(format!("{name}: {cause}"))
            }
            ReflectorEvent::Retry(r) => {
                let code = r.code.map(|c| format!("{c} ")).unwrap_or_default();
                self.last_error = Some(format!("{name}: {}: {code}{}", r.verb.as_str(), r.reason))
            }
            _ => {}
        }
    }
}

impl Loading {
    /// The one line for a `--timeout` of `after` that came before every resource of
    /// `targets` synced (`synced` did): how many did, and the last error, if any.
    pub fn timed_out_before_sync(
        &self,
        after: std::time::Duration,
        synced: usize,
        targets: usize,
    ) -> String {
        let mut line = format!(
            "error: timed out after {after:?} waiting for the initial list ({synced} of {targets} synced)"
        );
        if let Some(e) = &self.last_error {
            line.push_str(&format!("; the last error, retried with backoff: {e}"));
        }
        line
    }
}

/// While the initial lists load, a one-line progress report on stderr (a terminal),
/// rewritten in place and erased before anything goes to stdout and once synced.
pub async fn run(shared: Arc<Shared>, shown: Shown) {
    let start = Instant::now();
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        let mut delivery = shared.lock();
        if delivery.finished || delivery.all_synced() {
            clear(&shown);
            return;
        }
        // Whatever stdout holds goes out first, so it never lands after the progress text.
        let _ = delivery.flush();
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
        let note = delivery
            .observer::<Loading>()
            .map(|l| l.note.as_str())
            .unwrap_or_default();
        let line = progress::Line {
            note,
            items,
            pages,
            popped: delivery.deltas,
            synced: delivery.synced(),
            targets: delivery.targets(),
            elapsed: start.elapsed(),
        };
        let line = line.fit(progress::stderr_width());
        let _ = write!(io::stderr(), "{}{line}", progress::CLEAR);
        shown.store(true, Ordering::Relaxed);
    }
}
