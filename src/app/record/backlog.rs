//! The recorder's local state, one directory per run under kwatch's state directory
//! (`$XDG_STATE_HOME/kwatch/record/`, else `~/.local/state/kwatch/record/`): the run's
//! identity (`run.json`), a lock a live run holds (`flock(2)`, released by the kernel
//! when the process dies, `kill -9` too), and the spill file where records go that the
//! database could not take while memory was full (`spill.jsonl`: `SEQ<TAB>LINE` per
//! record). A directory whose lock nobody holds is a run that ended before its records
//! were all written: the next run recording into the same database writes them first.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead as _, BufReader, BufWriter, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{flock, FlockOperation};
use serde::{Deserialize, Serialize};

/// Where the runs' directories live.
pub fn state_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".local/state"),
    };
    Some(base.join("kwatch").join("record"))
}

/// What `run.json` says of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    /// The run's id: its records' `writer`.
    pub writer: String,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// The database, as lines name it: a directory is resumed by a run into the same one.
    pub target: String,
    /// The context of its records that name none (a run of one context).
    pub context: String,
    /// The contexts it watched, comma-separated.
    pub contexts: String,
    pub host: String,
}

/// A run's directory, locked: this run's, or a dead run's being resumed.
#[derive(Debug)]
pub struct RunDir {
    pub path: PathBuf,
    pub info: RunInfo,
    /// Held while the directory is in use: the lock.
    _lock: File,
}

impl RunDir {
    /// Creates this run's directory, locked: made under a temporary name and renamed once
    /// locked, so that no other run ever sees it unlocked.
    pub fn create(root: &Path, info: RunInfo) -> io::Result<RunDir> {
        fs::create_dir_all(root)?;
        let tmp = root.join(format!("{}.new", info.writer));
        fs::create_dir(&tmp)?;
        let lock = private(&tmp.join("lock"), false)?;
        flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
        let json = serde_json::to_vec_pretty(&info).map_err(io::Error::other)?;
        fs::write(tmp.join("run.json"), json)?;
        let path = root.join(&info.writer);
        fs::rename(&tmp, &path)?;
        Ok(RunDir {
            path,
            info,
            _lock: lock,
        })
    }

    /// The runs under `root` that no live process holds and that recorded into `target`,
    /// each locked now by this one (two runs starting together do not both resume one).
    pub fn dead(root: &Path, target: &str) -> Vec<RunDir> {
        let Ok(entries) = fs::read_dir(root) else {
            return Vec::new();
        };
        let mut dead = Vec::new();
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "new") {
                continue;
            }
            let Ok(lock) = File::open(path.join("lock")) else {
                continue;
            };
            if flock(&lock, FlockOperation::NonBlockingLockExclusive).is_err() {
                continue;
            }
            let info = fs::read(path.join("run.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<RunInfo>(&b).ok());
            match info {
                Some(info) if info.target == target => dead.push(RunDir {
                    path,
                    info,
                    _lock: lock,
                }),
                _ => {}
            }
        }
        dead.sort_by(|a, b| a.info.started.cmp(&b.info.started));
        dead
    }

    /// The run's spill file.
    pub fn spill(&self) -> io::Result<Spill> {
        Spill::open(self.path.join("spill.jsonl"))
    }

    /// The directory removed: its records are all written.
    pub fn remove(self) -> io::Result<()> {
        fs::remove_dir_all(&self.path)
    }
}

/// A file only its owner reads (records hold Secrets' data too), appended to.
fn private(path: &Path, append: bool) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(append)
        .write(true)
        .read(true)
        .mode(0o600)
        .open(path)
}

/// Records waiting on disk, first in first out: appended at the end, read from an
/// offset that moves once they are written.
#[derive(Debug)]
pub struct Spill {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    /// Where the records not yet written begin.
    read_at: u64,
    /// How many records are after `read_at`.
    pending: u64,
}

impl Spill {
    /// The spill file at `path`, with the records it already holds (a dead run's).
    fn open(path: PathBuf) -> io::Result<Spill> {
        let pending = match File::open(&path) {
            Ok(f) => BufReader::new(f).lines().count() as u64,
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e),
        };
        Ok(Spill {
            path,
            out: None,
            read_at: 0,
            pending,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records waiting in the file.
    pub fn pending(&self) -> u64 {
        self.pending
    }

    /// Appends record `seq`.
    pub fn append(&mut self, seq: i64, line: &str) -> io::Result<()> {
        if self.out.is_none() {
            let f = private(&self.path, true)?;
            self.out = Some(BufWriter::with_capacity(256 * 1024, f));
        }
        if let Some(out) = &mut self.out {
            writeln!(out, "{seq}\t{line}")?;
        }
        self.pending += 1;
        Ok(())
    }

    /// Pushes what is appended to the file (the OS keeps it if kwatch dies).
    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }

    /// Up to `n` records from the first not written, and where the next would begin:
    /// [`Spill::written`] with it once they are.
    pub fn peek(&mut self, n: usize) -> io::Result<(Vec<(i64, String)>, u64)> {
        self.flush()?;
        if self.pending == 0 {
            return Ok((Vec::new(), self.read_at));
        }
        let mut f = File::open(&self.path)?;
        f.seek(SeekFrom::Start(self.read_at))?;
        let mut r = BufReader::new(f);
        let mut out = Vec::new();
        let mut at = self.read_at;
        let mut line = String::new();
        while out.len() < n {
            line.clear();
            let read = r.read_line(&mut line)?;
            if read == 0 || !line.ends_with('\n') {
                break;
            }
            at += read as u64;
            let text = line.trim_end_matches('\n');
            let (seq, record) = text
                .split_once('\t')
                .and_then(|(s, l)| Some((s.parse::<i64>().ok()?, l)))
                .ok_or_else(|| {
                    io::Error::other(format!("{}: not a spilled record", self.path.display()))
                })?;
            out.push((seq, record.to_owned()));
        }
        Ok((out, at))
    }

    /// The `n` records [`Spill::peek`] gave are written: the next begin at `at`. An empty
    /// file starts again from its beginning.
    pub fn written(&mut self, n: usize, at: u64) -> io::Result<()> {
        self.read_at = at;
        self.pending = self.pending.saturating_sub(n as u64);
        if self.pending == 0 {
            self.flush()?;
            self.out = None;
            private(&self.path, false)?.set_len(0)?;
            self.read_at = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(writer: &str, target: &str) -> RunInfo {
        RunInfo {
            writer: writer.into(),
            started: "2026-11-28T12:00:00.000Z".into(),
            target: target.into(),
            context: "c".into(),
            contexts: "c".into(),
            host: "h".into(),
        }
    }

    #[test]
    fn a_spill_gives_its_records_back_in_order_across_writes() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(dir.path(), info("w1", "db")).unwrap();
        let mut s = run.spill().unwrap();
        for i in 1..=5 {
            s.append(i, &format!("{{\"n\":{i}}}")).unwrap();
        }
        let (first, at) = s.peek(3).unwrap();
        assert_eq!(first.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3]);
        // Not yet written: the same again.
        assert_eq!(s.peek(3).unwrap().0, first);
        s.written(3, at).unwrap();
        s.append(6, "{}").unwrap();
        let (rest, at) = s.peek(10).unwrap();
        assert_eq!(rest.iter().map(|r| r.0).collect::<Vec<_>>(), [4, 5, 6]);
        s.written(3, at).unwrap();
        assert_eq!(s.pending(), 0);
        assert_eq!(fs::metadata(s.path()).unwrap().len(), 0);
    }

    #[test]
    fn a_run_is_dead_once_its_lock_is_released_and_resumed_by_its_database_only() {
        let dir = tempfile::tempdir().unwrap();
        let live = RunDir::create(dir.path(), info("live", "db")).unwrap();
        let gone = RunDir::create(dir.path(), info("gone", "db")).unwrap();
        let other = RunDir::create(dir.path(), info("other", "elsewhere")).unwrap();
        let mut s = gone.spill().unwrap();
        s.append(7, "{}").unwrap();
        s.flush().unwrap();
        drop((gone, other, s));
        let dead = RunDir::dead(dir.path(), "db");
        assert_eq!(
            dead.iter()
                .map(|d| d.info.writer.as_str())
                .collect::<Vec<_>>(),
            ["gone"]
        );
        assert_eq!(dead[0].spill().unwrap().pending(), 1);
        // Held by this resumer now: no other sees it dead.
        assert!(RunDir::dead(dir.path(), "db").is_empty());
        drop(live);
    }
}
