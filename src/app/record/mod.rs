//! `--record`: every record the informers make, shown or hidden, written where the run
//! was told. A file gets the JSON lines of `-o json`; a database ([`db`]: PostgreSQL or
//! SQLite, one schema, `migrations/`) gets the same lines, one row each, written in
//! batches by a thread of its own ([`writer`]) so that the informers never wait on it,
//! with the run's local backlog for when it cannot take them ([`backlog`]). `kwatch
//! replay` reads either back (`crate::app::replay`).
//!
//! The line is the row's source of truth: the sink is the file recorder's printer,
//! writing into a tap that hands each line to the writer. So a database holds exactly
//! what a file would, and replay reads both with one parser.

pub mod status;
pub mod target;

#[cfg(feature = "database")]
pub mod backlog;
#[cfg(feature = "database")]
pub mod db;
#[cfg(feature = "database")]
pub mod writer;

use std::io;
use std::sync::Arc;

use anyhow::{Context as _, Result};

use crate::informer::sink::{KeepAll, Sink};
use crate::output::{self, Format};
use status::Status;
use target::Target;

/// What a kwatch built without the cargo feature `database` says of a database URL.
pub const NO_DATABASE: &str = "this kwatch was built without database recording: rebuild \
                               with --features database, or record into a file";

/// `--record`: where, and what the database recorder needs.
#[derive(Debug, Clone)]
pub struct Recording {
    pub target: Target,
    /// `--record-buffer`: bytes of records held in memory while the database cannot take
    /// them, before they go to disk.
    pub buffer: usize,
    /// The context a run of one context watches, which its records do not name: a row
    /// in the database names it (several kwatch into one database are one fleet).
    pub context: String,
    /// Every context watched, for the run's row.
    pub contexts: Vec<String>,
}

/// The recorders' sinks, one per `--record`, and the database recorder's counters
/// (`--stats`, `--metrics`).
pub type Recorder = (Vec<Box<dyn Sink>>, Option<Arc<Status>>);

/// The printer options every recording is written with.
fn options() -> output::Options {
    output::Options {
        format: Format::Json,
        color: false,
        // Kept whatever is printed, so that `replay --blame` can name managers also when
        // the recorded watch itself did not blame.
        show_managed_fields: true,
        ..output::Options::default()
    }
}

/// `--record`'s sink: every record, shown or hidden. A file is created 0600, as kubectl
/// writes its kubeconfig and cache (a recording holds whatever was watched, Secrets'
/// data included). A database's writer is started and has tried to connect: `Err` when
/// it never could be written; unreachable, it holds the records and the watch goes on.
pub async fn recorders(recordings: &[Recording]) -> Result<Recorder> {
    let mut sinks = Vec::new();
    let mut status = None;
    for rec in recordings {
        let (sink, s) = recorder(rec).await?;
        sinks.push(sink);
        status = status.or(s);
    }
    Ok((sinks, status))
}

/// One `--record`'s sink.
async fn recorder(rec: &Recording) -> Result<(Box<dyn Sink>, Option<Arc<Status>>)> {
    match &rec.target {
        Target::File(path) => {
            use std::os::unix::fs::OpenOptionsExt;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let sink = KeepAll(output::printer(options(), file, io::sink()));
            Ok((Box::new(sink), None))
        }
        _ => database(rec).await,
    }
}

#[cfg(not(feature = "database"))]
async fn database(_: &Recording) -> Result<(Box<dyn Sink>, Option<Arc<Status>>)> {
    Err(anyhow::Error::new(crate::app::exit::Usage(
        NO_DATABASE.to_owned(),
    )))
}

#[cfg(feature = "database")]
async fn database(rec: &Recording) -> Result<(Box<dyn Sink>, Option<Arc<Status>>)> {
    let root = backlog::state_dir().ok_or_else(|| {
        anyhow::anyhow!(
            "--record into a database needs a directory for its backlog: set HOME or \
             XDG_STATE_HOME"
        )
    })?;
    let status = Arc::new(Status::new(rec.target.to_string()));
    let run = backlog::RunInfo {
        writer: uuid::Uuid::new_v4().to_string(),
        started: crate::text::format_time(jiff::Timestamp::now()),
        target: String::new(),
        context: rec.context.clone(),
        contexts: rec.contexts.join(","),
        host: rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned(),
    };
    let setup = writer::Setup {
        target: rec.target.clone(),
        run,
        root,
        bound: rec.buffer,
        status: status.clone(),
    };
    let handle = writer::start(setup).await?;
    let tap = Tap {
        tx: handle.tx.clone(),
        partial: Vec::new(),
        seq: 0,
    };
    let printer = output::printer(options(), tap, io::sink());
    Ok((Box::new(DbRecorder { printer, handle }), Some(status)))
}

/// The database recorder: the file recorder's printer, its lines tapped to the writer.
#[cfg(feature = "database")]
struct DbRecorder {
    printer: Box<dyn Sink>,
    handle: writer::Handle,
}

#[cfg(feature = "database")]
impl Sink for DbRecorder {
    fn record(&mut self, rec: &crate::informer::record::Record<'_>) -> io::Result<()> {
        self.printer.record(rec)
    }
    /// Every record is kept, whatever the filters print (as [`KeepAll`]).
    fn hidden(&mut self, rec: &crate::informer::record::Record<'_>) -> io::Result<()> {
        self.printer.record(rec)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.printer.flush()
    }
    fn finish(&mut self) -> io::Result<()> {
        self.printer.finish()?;
        self.handle.finish();
        Ok(())
    }
}

/// Cuts what the printer writes into lines, each numbered (from 1, in the order the
/// informers made them: the record's identity with the run's id) and sent to the writer.
#[cfg(feature = "database")]
struct Tap {
    tx: tokio::sync::mpsc::UnboundedSender<writer::Msg>,
    partial: Vec<u8>,
    seq: i64,
}

#[cfg(feature = "database")]
impl io::Write for Tap {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = memchr_newline(rest) {
            self.partial.extend_from_slice(&rest[..i]);
            rest = &rest[i + 1..];
            let line = String::from_utf8(std::mem::take(&mut self.partial))
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            self.seq += 1;
            // The writer gone (it failed for good): the records are lost, as said.
            let _ = self.tx.send(writer::Msg::Line(self.seq, line));
        }
        self.partial.extend_from_slice(rest);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "database")]
fn memchr_newline(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}
