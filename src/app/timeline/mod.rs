//! `--timeline OUT.html`: what the informer lived through as one self-contained HTML page
//! — a lane per informer (lists, watches and why each ended, backoffs, relists, bookmarks,
//! the sync, stalls and staleness) and a lane per object (each delta by type, with its
//! diff and who made it) on one time axis, with zoom, filters and search.
//!
//! The page is a [`Sink`] of records like any printer: [`Timeline`] keeps what it draws of
//! each record compactly ([`story`]) and writes the page once, at [`Sink::finish`]
//! ([`page`]: the committed `page.html`, `page.css` and `page.js` with the data inlined,
//! gzipped). So `kwatch replay FILE --timeline OUT.html` (replay's records, in place of the
//! printer) and `kwatch … --timeline OUT.html` (the watch's, beside the printer) make the
//! same page of the same records. Like a printer it takes the records shown: the print
//! filters (`--types`, `--changes`, `--quiet-relists`, `--watch-only`) leave out of the
//! page what they leave out of the output.

mod page;
mod story;

use std::fs::File;
use std::io::{self, Seek as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::app::record::target::Target;
use crate::informer::diff::DiffMode;
use crate::informer::record::Record;
use crate::informer::sink::Sink;

pub use story::Story;

/// `kwatch replay FILE|URL --timeline OUT.html`'s page, titled with the recording's name;
/// `None` without `--timeline`.
pub fn for_replay(
    source: &Target,
    out: Option<&Path>,
    mode: DiffMode,
) -> Result<Option<Box<dyn Sink>>> {
    let Some(out) = out else {
        return Ok(None);
    };
    let title = match source {
        Target::File(file) if file.as_os_str() == "-" => "a recording read from stdin".to_owned(),
        Target::File(file) => match file.file_name() {
            Some(name) => name.to_string_lossy().into_owned(),
            None => file.display().to_string(),
        },
        // A database as every line names it: its password masked.
        database => database.to_string(),
    };
    Ok(Some(Timeline::create(out, &title, mode)?.boxed()))
}

/// The page being made: created (with a page saying the run goes on) when the run starts,
/// so that a path that cannot be written fails at once, and written whole at the end.
pub struct Timeline {
    path: PathBuf,
    file: File,
    /// What was recorded, for the page's title: the recording's name, or `live run`.
    title: String,
    story: Option<Story>,
}

impl Timeline {
    /// Creates `path` (0600, as `--record` does: diffs show Secrets' values too) and
    /// writes a placeholder page into it; `mode`: `--diff-all` shows the noise in diffs.
    pub fn create(path: &Path, title: &str, mode: DiffMode) -> Result<Timeline> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| {
                anyhow::anyhow!(
                    "--timeline {}: cannot create it ({e}): give a path in a directory that \
                     exists and that you can write to",
                    path.display()
                )
            })?;
        file.write_all(page::PENDING.as_bytes())?;
        Ok(Timeline {
            path: path.to_owned(),
            file,
            title: title.to_owned(),
            story: Some(Story::new(mode)),
        })
    }

    /// As a sink of a run.
    pub fn boxed(self) -> Box<dyn Sink> {
        Box::new(self)
    }
}

impl Sink for Timeline {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        if let Some(s) = &mut self.story {
            s.observe(rec);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Writes the page (once).
    fn finish(&mut self) -> io::Result<()> {
        let Some(story) = self.story.take() else {
            return Ok(());
        };
        let deltas = story.deltas();
        let generator = concat!("kwatch ", env!("CARGO_PKG_VERSION"));
        let html = page::render(&story.json(&self.title, generator))?;
        self.file.set_len(0)?;
        self.file.rewind()?;
        self.file.write_all(html.as_bytes())?;
        self.file.flush()?;
        let line = format!(
            "~ timeline of {deltas} deltas written to {} ({})",
            self.path.display(),
            size(html.len())
        );
        let _ = writeln!(io::stderr(), "{}", crate::text::sanitize(&line));
        Ok(())
    }
}

/// A size for people: `812 kB`, `2.4 MB`.
fn size(bytes: usize) -> String {
    match bytes {
        b if b < 1_000_000 => format!("{} kB", b.div_ceil(1000)),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}
