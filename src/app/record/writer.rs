//! The database recorder's writer: a thread of its own (with its own tokio runtime), so
//! that nothing the database does (a slow commit, a server gone) ever holds up the
//! informers. The sink hands it each record's JSON line with its number through an
//! unbounded channel (a send is a push: the informer never waits); the writer takes
//! what has arrived, up to [`BATCH`] rows at once, and writes them in one transaction.
//!
//! When the database cannot take them, records wait: in memory up to `--record-buffer`
//! bytes, then appended to the run's spill file ([`super::backlog`]); the first are
//! written first once it is back, retried with a backoff of 250 ms doubling to 5 s. Each
//! record is (writer, seq): a batch written again (its commit's answer lost, a dead run's
//! spill resumed) adds nothing twice. One `~` line when writes start failing, one when
//! records start going to disk, one when the backlog is written.

use std::collections::VecDeque;
use std::io::{self, Write as _};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::{self, error::TryRecvError};

use super::backlog::{RunDir, RunInfo, Spill};
use super::db::{Db, Row};
use super::status::Status;
use super::target::Target;

/// The most rows one transaction writes: large enough that a 10,000-object list is 20
/// commits, small enough that a commit's work stays well under a second.
pub const BATCH: usize = 500;

/// How long the writer goes on writing its backlog at the end of a run before it leaves
/// the rest in its spill file for the next run.
const FINISH_LIMIT: Duration = Duration::from_secs(60);

/// The backoff between failed writes: from 250 ms, doubled up to 5 s, so that a database
/// back after a restart is written to within seconds.
const BACKOFF_START: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// What the sink sends.
pub enum Msg {
    /// Record `seq`'s JSON line.
    Line(i64, String),
    /// The run ends: write what is left (or leave it in the spill file), then answer
    /// with the line to print, if any.
    Finish(std::sync::mpsc::Sender<Option<String>>),
}

/// What the writer needs to start.
pub struct Setup {
    pub target: Target,
    /// This run, its `writer` a new id.
    pub run: RunInfo,
    /// The runs' directories.
    pub root: PathBuf,
    /// Bytes of records held in memory before they go to the spill file.
    pub bound: usize,
    pub status: Arc<Status>,
}

/// The sink's end of a running writer.
pub struct Handle {
    pub tx: mpsc::UnboundedSender<Msg>,
}

impl Handle {
    /// Ends the writer: its backlog written (or left on disk, said in a `~` line).
    pub fn finish(&self) {
        let (tx, rx) = std::sync::mpsc::channel();
        if self.tx.send(Msg::Finish(tx)).is_err() {
            return;
        }
        // The writer bounds its own work (FINISH_LIMIT); this bounds a writer stuck in
        // a call that does not return.
        if let Ok(Some(line)) = rx.recv_timeout(FINISH_LIMIT + Duration::from_secs(30)) {
            say(&line);
        }
    }
}

/// A `~` line on stderr.
fn say(line: &str) {
    let _ = writeln!(io::stderr(), "{}", kwatch_core::text::sanitize(line));
}

/// Starts the writer's thread and waits for its first connection attempt: `Err` when
/// the database can never be written (bad credentials, no such database, a newer
/// schema, an SQLite file that cannot be opened); unreachable, it buffers and the watch
/// goes on.
pub async fn start(setup: Setup) -> anyhow::Result<Handle> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("kwatch-recorder".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(anyhow::Error::new(e)));
                    return;
                }
            };
            rt.block_on(run(setup, rx, ready_tx));
        })?;
    match ready_rx.await {
        Ok(Ok(())) => Ok(Handle { tx }),
        Ok(Err(e)) => Err(e),
        Err(_) => anyhow::bail!("the recorder's writer stopped before it started"),
    }
}

/// Whether a failure to connect will not fix itself: the run ends at once rather than
/// buffer for ever (SQLSTATE 28P01 bad password, 28000 no such role or not allowed,
/// 3D000 no such database, 42501 no privilege; a TLS failure; a newer schema).
fn fatal(e: &sqlx::Error, sqlite: bool) -> bool {
    match e {
        sqlx::Error::Database(d) => {
            sqlite
                || matches!(
                    d.code().as_deref(),
                    Some("28P01" | "28000" | "3D000" | "42501")
                )
        }
        sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) | sqlx::Error::Configuration(_) => true,
        sqlx::Error::Io(_) => sqlite,
        _ => false,
    }
}

/// An error in one line, as the database or the connection said it.
fn worded(e: &sqlx::Error) -> String {
    let s = match e {
        sqlx::Error::Database(d) => d.message().to_owned(),
        sqlx::Error::PoolTimedOut => "no connection within 5s".to_owned(),
        other => other.to_string(),
    };
    s.replace('\n', " ")
}

async fn run(
    setup: Setup,
    rx: mpsc::UnboundedReceiver<Msg>,
    ready: tokio::sync::oneshot::Sender<anyhow::Result<()>>,
) {
    let sqlite = matches!(setup.target, Target::Sqlite(_));
    let (db, name) = match Db::open(&setup.target, true) {
        Ok(d) => d,
        Err(why) => {
            let _ = ready.send(Err(anyhow::Error::new(crate::app::exit::Usage(why))));
            return;
        }
    };
    setup.status.named(&name);
    let dead = RunDir::dead(&setup.root, &name);
    let info = RunInfo {
        target: name.clone(),
        ..setup.run.clone()
    };
    let run = match RunDir::create(&setup.root, info) {
        Ok(r) => r,
        Err(e) => {
            let _ = ready.send(Err(anyhow::anyhow!(
                "cannot make the recorder's backlog directory in {}: {e}",
                setup.root.display()
            )));
            return;
        }
    };
    let spill = match run.spill() {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(anyhow::anyhow!(
                "cannot open the recorder's spill file: {e}"
            )));
            return;
        }
    };
    let mut resumed = VecDeque::new();
    for d in dead {
        match d.spill() {
            Ok(s) => resumed.push_back((d, s)),
            Err(e) => say(&format!(
                "~ recording: cannot read the backlog of an earlier run in {}: {e}",
                d.path.display()
            )),
        }
    }
    let mut w = Writer {
        db,
        name,
        run,
        spill,
        memory: VecDeque::new(),
        memory_bytes: 0,
        bound: setup.bound,
        retry: None,
        resumed,
        status: setup.status,
        connected: false,
        outage: None,
        spilling: None,
        backoff: BACKOFF_START,
        finishing: None,
        closed: false,
    };
    match w.connect().await {
        Ok(()) => {}
        Err(e) if fatal(&e, sqlite) => {
            let _ = ready.send(Err(anyhow::anyhow!(
                "cannot record into {}: {}",
                w.name,
                worded(&e)
            )));
            let _ = w.run.remove();
            return;
        }
        Err(e) => {
            // Said before the watch prints anything: the run goes on, buffering.
            for d in &w.resumed {
                say(&resumed_line(&d.0.info, d.1.pending(), None, &w.name));
            }
            w.went_down(&e);
        }
    }
    let _ = ready.send(Ok(()));
    w.work(rx).await;
}

/// The line that says which dead run is resumed and from where.
fn resumed_line(info: &RunInfo, pending: u64, last: Option<(i64, String)>, name: &str) -> String {
    let short = info.writer.get(..8).unwrap_or(&info.writer);
    let mut line = format!(
        "~ resuming: the run of {} (writer {short}) ended before it closed",
        info.started
    );
    match last {
        Some((seq, time)) => {
            line.push_str(&format!("; {name} has its records up to #{seq} ({time})"))
        }
        None => line.push_str(&format!("; {name} has none of its records yet")),
    }
    match pending {
        0 => line.push_str("; it left none waiting: nothing more to write"),
        n => line.push_str(&format!(
            "; {n} records of it not yet written: writing them first"
        )),
    }
    line
}

/// Where a batch's rows came from: what to mark written once they are.
enum From {
    /// The first resumed run's spill, up to this offset.
    Resumed(u64),
    Memory,
    Spill(u64),
}

struct Batch {
    rows: Vec<Row>,
    from: From,
}

struct Writer {
    db: Db,
    /// The database as lines name it.
    name: String,
    run: RunDir,
    spill: Spill,
    /// Records waiting in memory, oldest first; none while any waits in `spill`, so that
    /// the oldest are always written first.
    memory: VecDeque<(i64, String)>,
    memory_bytes: usize,
    bound: usize,
    /// The batch a failed write leaves, written again first.
    retry: Option<Batch>,
    /// Earlier runs' directories whose spills are written before anything else.
    resumed: VecDeque<(RunDir, Spill)>,
    status: Arc<Status>,
    /// Migrated and the runs registered.
    connected: bool,
    /// When writes started failing.
    outage: Option<Instant>,
    /// Records go to disk: since when (memory filled up, the database down or slower
    /// than the watch), until the backlog is written.
    spilling: Option<Instant>,
    backoff: Duration,
    /// The run is ending: the answer to send, and since when.
    finishing: Option<(std::sync::mpsc::Sender<Option<String>>, Instant)>,
    /// The sink is gone without a Finish.
    closed: bool,
}

impl Writer {
    /// Migrates and registers the runs this writer writes for (its own, the resumed).
    async fn connect(&mut self) -> Result<(), sqlx::Error> {
        if self.connected {
            return Ok(());
        }
        self.db.migrate().await?;
        let row = |i: &RunInfo| super::db::RunRow {
            writer: i.writer.clone(),
            started: i.started.clone(),
            host: i.host.clone(),
            contexts: i.contexts.clone(),
        };
        self.db.add_run(&row(&self.run.info)).await?;
        for (d, s) in &self.resumed {
            self.db.add_run(&row(&d.info)).await?;
            let last = self.db.last_of(&d.info.writer).await?;
            say(&resumed_line(&d.info, s.pending(), last, &self.name));
        }
        self.connected = true;
        Ok(())
    }

    fn backlog(&self) -> u64 {
        let resumed: u64 = self.resumed.iter().map(|(_, s)| s.pending()).sum();
        let retry = self.retry.as_ref().map_or(0, |b| b.rows.len() as u64);
        resumed + retry + self.memory.len() as u64 + self.spill.pending()
    }

    fn update_backlog(&self) {
        self.status.backlog.store(self.backlog(), Ordering::Relaxed);
    }

    /// A message from the sink.
    fn take(&mut self, m: Msg) {
        match m {
            Msg::Line(seq, line) => self.hold(seq, line),
            Msg::Finish(reply) => self.finishing = Some((reply, Instant::now())),
        }
    }

    /// Holds a record until it is written: in memory, or on disk once memory is full.
    fn hold(&mut self, seq: i64, line: String) {
        if self.spill.pending() == 0 && self.memory_bytes + line.len() <= self.bound {
            self.memory_bytes += line.len();
            self.memory.push_back((seq, line));
            return;
        }
        self.spill_line(seq, &line);
    }

    fn spill_line(&mut self, seq: i64, line: &str) {
        if self.spilling.is_none() {
            self.spilling = Some(Instant::now());
            let why = match self.outage {
                Some(_) => "cannot take them",
                None => "takes them slower than the watch makes them",
            };
            say(&format!(
                "~ recording: {} records ({}) held in memory while {} {why}: the next go to \
                 {} until it has them all",
                self.memory.len(),
                crate::text::human_bytes(self.memory_bytes as u64),
                self.name,
                self.spill.path().display()
            ));
        }
        match self.spill.append(seq, line) {
            Ok(()) => Status::add(&self.status.spilled, 1),
            Err(e) => say(&format!(
                "~ recording: cannot write record #{seq} to {}: {e}: it is lost",
                self.spill.path().display()
            )),
        }
    }

    /// The rows of the next batch: a failed one again, else a resumed run's, else the
    /// oldest waiting.
    fn next_batch(&mut self) -> io::Result<Option<Batch>> {
        if let Some(b) = self.retry.take() {
            return Ok(Some(b));
        }
        while let Some((d, s)) = self.resumed.front_mut() {
            let (lines, at) = s.peek(BATCH)?;
            if lines.is_empty() {
                if let Some((d, _)) = self.resumed.pop_front() {
                    let _ = d.remove();
                }
                continue;
            }
            let info = &d.info;
            let rows = rows(&info.writer, &info.context, lines);
            return Ok(Some(Batch {
                rows,
                from: From::Resumed(at),
            }));
        }
        if !self.memory.is_empty() {
            let n = self.memory.len().min(BATCH);
            let lines: Vec<(i64, String)> = self.memory.drain(..n).collect();
            self.memory_bytes -= lines.iter().map(|(_, l)| l.len()).sum::<usize>();
            let info = &self.run.info;
            return Ok(Some(Batch {
                rows: rows(&info.writer, &info.context, lines),
                from: From::Memory,
            }));
        }
        let (lines, at) = self.spill.peek(BATCH)?;
        if lines.is_empty() {
            return Ok(None);
        }
        let info = &self.run.info;
        Ok(Some(Batch {
            rows: rows(&info.writer, &info.context, lines),
            from: From::Spill(at),
        }))
    }

    /// Marks `b` written.
    fn written(&mut self, b: &Batch, added: u64) -> io::Result<()> {
        let n = b.rows.len();
        match b.from {
            From::Resumed(at) => {
                if let Some((_, s)) = self.resumed.front_mut() {
                    s.written(n, at)?;
                }
            }
            From::Memory => {}
            From::Spill(at) => self.spill.written(n, at)?,
        }
        Status::add(&self.status.rows, added);
        Status::add(&self.status.duplicates, n as u64 - added.min(n as u64));
        Status::add(&self.status.batches, 1);
        self.status.up.store(true, Ordering::Relaxed);
        self.backoff = BACKOFF_START;
        Ok(())
    }

    /// A write failed: said once per outage.
    fn went_down(&mut self, e: &sqlx::Error) {
        self.status.up.store(false, Ordering::Relaxed);
        if self.outage.is_some() {
            tracing::info!("recording: {} still unreachable: {}", self.name, worded(e));
            return;
        }
        Status::add(&self.status.outages, 1);
        self.outage = Some(Instant::now());
        say(&format!(
            "~ recording: cannot write to {}: {}; the watch goes on, its records held (in \
             memory up to --record-buffer's {}, then in {}) and written once it is back",
            self.name,
            worded(e),
            crate::text::human_bytes(self.bound as u64),
            self.spill.path().display()
        ));
    }

    /// Everything waiting is written after an outage, or after records went to disk:
    /// said once.
    fn caught_up(&mut self) {
        if self.backlog() > 0 {
            return;
        }
        let spilled = self.spilling.take();
        let disk = match spilled {
            Some(_) => format!(", some through {}", self.spill.path().display()),
            None => String::new(),
        };
        match (self.outage.take(), spilled) {
            (Some(since), _) => say(&format!(
                "~ recording: {} is back: every record held over the last {:.0?} is written{disk}",
                self.name,
                since.elapsed()
            )),
            (None, Some(since)) => say(&format!(
                "~ recording: {} caught up: every record held over the last {:.0?} is written{disk}",
                self.name,
                since.elapsed()
            )),
            (None, None) => {}
        }
    }

    /// Receives what the sink sent while `fut` runs.
    async fn while_receiving<T>(
        &mut self,
        rx: &mut mpsc::UnboundedReceiver<Msg>,
        fut: impl std::future::Future<Output = T>,
    ) -> T {
        tokio::pin!(fut);
        loop {
            tokio::select! {
                r = &mut fut => return r,
                m = rx.recv(), if !self.closed => match m {
                    Some(m) => self.take(m),
                    None => self.closed = true,
                },
            }
        }
    }

    async fn work(mut self, mut rx: mpsc::UnboundedReceiver<Msg>) {
        loop {
            loop {
                match rx.try_recv() {
                    Ok(m) => self.take(m),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        self.closed = true;
                        break;
                    }
                }
            }
            self.update_backlog();
            let ending = self.finishing.is_some() || self.closed;
            if ending && self.outage.is_some() && !self.connected {
                break;
            }
            if let Some((_, since)) = &self.finishing {
                if since.elapsed() > FINISH_LIMIT {
                    break;
                }
            }
            let batch = match self.next_batch() {
                Ok(Some(b)) => b,
                Ok(None) if ending => break,
                Ok(None) => {
                    let _ = self.spill.flush();
                    match rx.recv().await {
                        Some(m) => self.take(m),
                        None => self.closed = true,
                    }
                    continue;
                }
                Err(e) => {
                    say(&format!("~ recording: cannot read its spill file: {e}"));
                    break;
                }
            };
            let db = self.db.clone();
            let connected = self.connected;
            let result = self
                .while_receiving(&mut rx, async {
                    if !connected {
                        // Registers the runs first (kwatch_runs), then the rows.
                        return Err(None);
                    }
                    db.insert(&batch.rows).await.map_err(Some)
                })
                .await;
            let result = match result {
                Err(None) => match self.connect().await {
                    Ok(()) => {
                        let db = self.db.clone();
                        self.while_receiving(&mut rx, db.insert(&batch.rows)).await
                    }
                    Err(e) => Err(e),
                },
                Err(Some(e)) => Err(e),
                Ok(n) => Ok(n),
            };
            match result {
                Ok(added) => {
                    if let Err(e) = self.written(&batch, added) {
                        say(&format!(
                            "~ recording: cannot move on in its spill file: {e}"
                        ));
                        break;
                    }
                    self.update_backlog();
                    self.caught_up();
                }
                Err(e) => {
                    self.retry = Some(batch);
                    self.went_down(&e);
                    if self.finishing.is_some() || self.closed {
                        break;
                    }
                    let pause = self.backoff;
                    self.backoff = (self.backoff * 2).min(BACKOFF_MAX);
                    self.while_receiving(&mut rx, tokio::time::sleep(pause))
                        .await;
                }
            }
        }
        self.end(&mut rx);
    }

    /// The run's end: anything not written goes to the spill file, where the next run
    /// into this database finds it; else the run's directory goes.
    fn end(mut self, rx: &mut mpsc::UnboundedReceiver<Msg>) {
        while let Ok(m) = rx.try_recv() {
            self.take(m);
        }
        // What waits in memory (a failed batch first) goes to disk after what is there
        // already: the order on disk does not matter to the records' identity.
        if let Some(b) = self.retry.take() {
            if matches!(b.from, From::Memory) {
                for r in &b.rows {
                    self.spill_row(r.seq, &r.writer, &r.record, r.object.as_deref());
                }
            }
        }
        let memory: Vec<(i64, String)> = self.memory.drain(..).collect();
        self.memory_bytes = 0;
        for (seq, line) in memory {
            self.spill_line(seq, &line);
        }
        let _ = self.spill.flush();
        self.update_backlog();
        let left = self.backlog();
        let line = if left == 0 {
            let _ = self.run.remove();
            None
        } else {
            Some(format!(
                "~ recording: {} records not written to {}: kept in {}; the next kwatch \
                 --record into it writes them first",
                left,
                self.name,
                self.run.path.display()
            ))
        };
        match self.finishing.take() {
            Some((reply, _)) => {
                let _ = reply.send(line);
            }
            None => {
                if let Some(l) = line {
                    say(&l);
                }
            }
        }
    }

    /// A row of a failed batch back to its line, to disk.
    fn spill_row(&mut self, seq: i64, _writer: &str, record: &str, object: Option<&str>) {
        let line = super::db::join_line(record, object);
        self.spill_line(seq, &line);
    }
}

/// The rows of `lines` of run `writer` (whose records that name no context are
/// `context`'s). A line that is no record is left out, logged (not reached: the recorder
/// wrote them).
fn rows(writer: &str, context: &str, lines: Vec<(i64, String)>) -> Vec<Row> {
    lines
        .into_iter()
        .filter_map(|(seq, line)| match Row::of(writer, context, seq, &line) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!("recording: left out: {e}");
                None
            }
        })
        .collect()
}
