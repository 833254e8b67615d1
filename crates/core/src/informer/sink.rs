//! Where the informer's records go: a [`Sink`] takes each record in order (the printers,
//! the `--record` recorder, the live view are sinks), and an [`Observer`] watches them
//! without printing (`--stats`, `--metrics`). The informer defines both and knows none of
//! their implementations, as ripgrep's searcher hands its matches to a `Sink` that
//! grep-printer implements.

use std::io;

use super::record::Record;
use crate::context::ContextName;

/// Takes the informer's records, in the order the informer made them, under the lock that
/// every informer of a run shares (so a sink needs no lock of its own).
///
/// Errors are the sink's writer's: a closed pipe ends the run quietly, any other error
/// fails it.
///
/// A sink that counts what an informer tells, on an in-memory source:
///
/// ```
/// use std::io;
/// use std::sync::{Arc, Mutex};
/// use kwatch_core::cache::fake::FakeSource;
/// use kwatch_core::cache::release::Release;
/// use kwatch_core::informer::builder::SharedInformer;
/// use kwatch_core::informer::record::{Body, Record};
/// use kwatch_core::informer::sink::Sink;
/// # use kwatch_core::client::target::{Resource, Target};
/// # fn pods() -> Target {
/// #     let (name, kind, api_version) = ("pods".into(), "Pod".into(), "v1".into());
/// #     let resource = Resource { name, kind, api_version, namespaced: true };
/// #     Target { resource, group: String::new(), version: "v1".into(), plural: "pods".into() }
/// # }
///
/// #[derive(Default)]
/// struct Counts { deltas: usize, events: usize, synced: usize }
///
/// struct Count(Arc<Mutex<Counts>>);
///
/// impl Sink for Count {
///     fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
///         let mut c = self.0.lock().unwrap();
///         match rec.body {
///             Body::Delta { .. } => c.deltas += 1,
///             Body::Event(_) => c.events += 1,
///             Body::Synced => c.synced += 1,
///             Body::Handler { .. } | Body::Observed(_) => {}
///         }
///         Ok(())
///     }
///     fn flush(&mut self) -> io::Result<()> {
///         Ok(())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let source = FakeSource::new();
/// for name in ["a", "b", "c"] {
///     let meta = serde_json::json!({"name": name, "namespace": "ns"});
///     source.apply(serde_json::json!({"kind": "Pod", "metadata": meta}))?;
/// }
/// let counts = Arc::new(Mutex::new(Counts::default()));
/// let mut informer = SharedInformer::new(pods(), Release::V0_34)
///     .sink(Count(counts.clone()))
///     .run(source);
/// // Every sink has taken the Synced record once `synced` returns.
/// assert!(informer.synced().await);
/// let c = counts.lock().unwrap();
/// assert_eq!((c.deltas, c.synced), (3, 1));
/// // The reflector's List and Listed came before the deltas.
/// assert!(c.events >= 2);
/// # Ok(())
/// # }
/// ```
pub trait Sink: Send {
    /// A record to show.
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()>;
    /// A record a filter hides (`--types`, `--quiet-relists`, …). Only a sink that keeps
    /// everything the informer did, as `--record` does, takes it.
    fn hidden(&mut self, _rec: &Record<'_>) -> io::Result<()> {
        Ok(())
    }
    /// A line for people about the run (a `~` line: a resource left out, an object that
    /// does not exist yet): diagnostics, never data.
    fn diagnostic(&mut self, _line: &str) -> io::Result<()> {
        Ok(())
    }
    /// `resource` (of `context`, with several) starts: its records follow, its initial
    /// list first. Told of every informer before its first record; again when a context
    /// that stopped or could not start comes back.
    fn joined(&mut self, _resource: &str, _context: Option<&ContextName>) -> io::Result<()> {
        Ok(())
    }
    /// `resource` (of `context`, with several) was left out before it synced (the server
    /// refused it, or failed for good), or its context stopped: it syncs no more, unless it
    /// joins again.
    fn left_out(&mut self, _resource: &str, _context: Option<&ContextName>) -> io::Result<()> {
        Ok(())
    }
    /// Called when the queue is drained: push buffered output out.
    fn flush(&mut self) -> io::Result<()>;
    /// Called once when the run ends: push everything out, held output too.
    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        (**self).record(rec)
    }
    fn hidden(&mut self, rec: &Record<'_>) -> io::Result<()> {
        (**self).hidden(rec)
    }
    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        (**self).diagnostic(line)
    }
    fn joined(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        (**self).joined(resource, context)
    }
    fn left_out(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        (**self).left_out(resource, context)
    }
    fn flush(&mut self) -> io::Result<()> {
        (**self).flush()
    }
    fn finish(&mut self) -> io::Result<()> {
        (**self).finish()
    }
}

/// A sink that keeps every record, shown or hidden: what `--record` writes is everything
/// the informer did, whatever the filters print.
pub struct KeepAll<S>(pub S);

impl<S: Sink> Sink for KeepAll<S> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        self.0.record(rec)
    }
    fn hidden(&mut self, rec: &Record<'_>) -> io::Result<()> {
        self.0.record(rec)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
    fn finish(&mut self) -> io::Result<()> {
        self.0.finish()
    }
}

/// A feature that watches the informer without steering it (`--stats`, `--metrics`, the
/// application's): told every record in the order the sinks take them, printed or hidden
/// by a filter, and every pop's delivery, under the sinks' lock.
pub trait Observer: std::any::Any + Send {
    /// A record, `shown` when printed (else hidden by a filter but recorded); `targets`:
    /// the resources the run still waits for (those left out not counted).
    fn record(&mut self, rec: &Record<'_>, shown: bool, targets: usize);

    /// A pop of `resource` in `context` is about to be delivered.
    fn popped(&mut self, _resource: &str, _context: Option<&ContextName>) {}

    /// A pop that held deltas was delivered, `took` after it was taken from the queue:
    /// client-go 0.36's processing latency, from the pop to the handlers' return.
    fn processed(
        &mut self,
        _resource: &str,
        _context: Option<&ContextName>,
        _took: std::time::Duration,
    ) {
    }
}
