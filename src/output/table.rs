//! The table: a header once, a row per delta, and a `~` line per reflector event saying
//! what happened and why. Column widths only grow, so rows do not jitter as they stream.
//! Every string from the server is sanitized; colour only when asked.

use std::io::{self, BufWriter, Write};
use std::sync::Arc;
use std::time::Duration;

use crossterm::style::{Color, Stylize};

use std::collections::HashMap;

use super::columns::{resource_columns, Column, Getter, RowObject};
use super::sanitize::sanitize;
use super::{diff, Body, Format, Options, Printer, Record, Resource};
use crate::delta::DeltaType;
use crate::reflector::ReflectorEvent;

pub struct TablePrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    /// The width of each column, per header line seen (a handful); widths never shrink,
    /// so rows of one layout never jitter, and a layout shown again keeps its widths.
    widths: Vec<(Vec<String>, Vec<usize>)>,
    /// The header line printed last: a new one is printed only when it changes.
    current: Option<Vec<String>>,
    /// The columns and header line per resource name (built once).
    layouts: HashMap<String, Arc<Layout>>,
}

/// A resource's columns after NAME and RESOURCEVERSION, and its whole header line.
struct Layout {
    cols: Vec<Column>,
    headers: Vec<String>,
}

impl<W: Write> TablePrinter<W> {
    pub fn new(opts: Options, w: W) -> Self {
        TablePrinter {
            opts,
            w: BufWriter::new(w),
            widths: Vec::new(),
            current: None,
            layouts: HashMap::new(),
        }
    }

    /// The layout of `r`: its resource columns (kubectl's), then `-L` and `--show-labels`
    /// columns, and the header line over them.
    fn layout_of(&mut self, r: &Resource) -> Arc<Layout> {
        if let Some(l) = self.layouts.get(&r.name) {
            return l.clone();
        }
        let wide = self.opts.format == Format::Wide;
        let opts = &self.opts;
        let crd = opts.printer_columns.get(&r.name).map(Vec::as_slice);
        let mut cols = resource_columns(r, wide, crd);
        for l in &opts.label_columns {
            cols.push(Column {
                header: l.rsplit('/').next().unwrap_or(l).to_uppercase(),
                get: Getter::Label(l.clone()),
            });
        }
        if opts.show_labels {
            cols.push(Column {
                header: "LABELS".into(),
                get: Getter::Labels,
            });
        }
        let headers = self.headers(&cols);
        let l = Arc::new(Layout { cols, headers });
        self.layouts.insert(r.name.clone(), l.clone());
        l
    }

    /// The widths of the columns of `layout`; DELTA is as wide as its longest value from
    /// the start.
    fn widths_of(&mut self, layout: &[String]) -> &mut Vec<usize> {
        let i = match self.widths.iter().position(|(l, _)| l == layout) {
            Some(i) => i,
            None => {
                self.widths.push((layout.to_vec(), vec!["Replaced".len()]));
                self.widths.len() - 1
            }
        };
        &mut self.widths[i].1
    }

    fn headers(&self, cols: &[Column]) -> Vec<String> {
        let mut h = vec!["DELTA".to_owned()];
        if self.opts.timestamps {
            h.push("TIME".into());
        }
        if self.opts.contexts {
            h.push("CONTEXT".into());
        }
        if self.opts.multi {
            h.push("KIND".into());
        }
        if self.opts.all_namespaces {
            h.push("NAMESPACE".into());
        }
        h.extend(["NAME".to_owned(), "RESOURCEVERSION".to_owned()]);
        h.extend(cols.iter().map(|c| c.header.clone()));
        h
    }

    /// Grows the widths of `layout` to fit `cells`.
    fn grow(&mut self, layout: &[String], cells: &[String]) {
        let widths = self.widths_of(layout);
        if widths.len() < cells.len() {
            widths.resize(cells.len(), 0);
        }
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }

    fn write_row(
        &mut self,
        layout: &[String],
        cells: &[String],
        color: Option<Color>,
    ) -> io::Result<()> {
        let widths = self.widths_of(layout);
        if widths.len() < cells.len() {
            widths.resize(cells.len(), 0);
        }
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let n = cell.chars().count();
            widths[i] = widths[i].max(n);
            if i + 1 == cells.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', widths[i] - n + 3));
            }
        }
        match color.filter(|_| self.opts.color) {
            Some(c) => {
                // Colour only the DELTA cell, keeping the alignment of the rest.
                let type_len = cells.first().map_or(0, String::len);
                let (head, tail) = line.split_at(type_len.min(line.len()));
                writeln!(self.w, "{}{}", head.with(c), tail)
            }
            None => writeln!(self.w, "{line}"),
        }
    }

    fn write_event(&mut self, text: String) -> io::Result<()> {
        let line = format!("~ {}", sanitize(&text));
        if self.opts.color {
            writeln!(self.w, "{}", line.with(Color::DarkGrey))
        } else {
            writeln!(self.w, "{line}")
        }
    }

    /// `--diff`: one indented `path: old → new` line per changed path.
    fn write_diff(&mut self, d: &diff::Diff) -> io::Result<()> {
        for c in diff::changes(d) {
            let path = sanitize(&c.path).into_owned();
            let old = sanitize(&diff::short(&c.old)).into_owned();
            let new = sanitize(&diff::short(&c.new)).into_owned();
            if self.opts.color {
                writeln!(
                    self.w,
                    "    {path}: {} → {}",
                    old.with(Color::Red),
                    new.with(Color::Green)
                )?;
            } else {
                writeln!(self.w, "    {path}: {old} → {new}")?;
            }
        }
        Ok(())
    }
}

fn color_of(t: DeltaType) -> Color {
    match t {
        DeltaType::Added => Color::Green,
        DeltaType::Updated => Color::Yellow,
        DeltaType::Deleted => Color::Red,
        DeltaType::Replaced => Color::Cyan,
        DeltaType::Sync => Color::Blue,
    }
}

/// `1 item`, `2 items`.
fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn secs(d: &Duration) -> String {
    if *d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

fn event_text(name: &str, e: &ReflectorEvent) -> Option<String> {
    Some(match e {
        ReflectorEvent::List {
            resource_version,
            limit,
            reason,
            streaming,
        } => {
            let how = if *streaming { "watch-list" } else { "list" };
            let paging = if *limit > 0 {
                format!(", {limit} per page")
            } else {
                String::new()
            };
            if reason == "initial" {
                format!("{how} {name} at rv={resource_version:?}{paging}")
            } else {
                format!("relist {name}: {reason} → {how} at rv={resource_version:?}{paging}")
            }
        }
        ReflectorEvent::Listed {
            resource_version,
            items,
            pages,
            elapsed,
            full_list_fallback,
            streaming,
        } => {
            let fallback = if *full_list_fallback {
                " (continue token expired: fell back to one full list)"
            } else {
                ""
            };
            let how = if *streaming {
                "streamed".to_owned()
            } else {
                format!("in {}", plural(u64::from(*pages), "page"))
            };
            format!(
                "listed {name}: {} {how} at rv={resource_version} in {}{fallback}",
                plural(*items as u64, "item"),
                secs(elapsed)
            )
        }
        ReflectorEvent::Watch {
            resource_version, ..
        } => format!("watch {name} from rv={resource_version}"),
        ReflectorEvent::WatchEnded {
            reason,
            events,
            elapsed,
            error,
        } => {
            let how = if *error { "ended" } else { "closed" };
            format!(
                "watch {name} {how} after {} and {}: {reason}",
                secs(elapsed),
                plural(*events, "event")
            )
        }
        ReflectorEvent::Bookmark { .. } => return None,
        ReflectorEvent::Backoff { delay, cause } => {
            format!("backoff {name} {}: {cause}", secs(delay))
        }
        ReflectorEvent::Resync => format!("resync {name}"),
        ReflectorEvent::WatchListFallback { error } => {
            format!("watch-list of {name} failed, using LIST: {error}")
        }
        ReflectorEvent::Retry(r) => {
            let code = r.code.map(|c| format!("{c} ")).unwrap_or_default();
            format!(
                "retry {} {name} in {} (attempt {} of {}): {code}{}",
                r.verb.as_str(),
                secs(&r.delay),
                r.attempt,
                r.max_retries,
                r.reason
            )
        }
    })
}

impl<W: Write + Send> Printer for TablePrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        // With several contexts, event lines say which cluster they are about.
        let name = &match rec.context {
            Some(c) => format!("{} in {c}", rec.resource.name),
            None => rec.resource.name.clone(),
        };
        match &rec.body {
            Body::Event(e) => match event_text(name, e) {
                Some(t) => self.write_event(t),
                None => Ok(()),
            },
            Body::Synced => self.write_event(format!("synced {name}")),
            Body::Delta {
                key, delta, prev, ..
            } => {
                let l = self.layout_of(rec.resource);
                let (cols, layout) = (&l.cols, &l.headers);
                let (ns, obj_name) = key.split_once('/').unwrap_or(("", key));
                let obj = delta.object.object();
                let mut cells = Vec::with_capacity(layout.len());
                cells.push(delta.kind.as_str().to_owned());
                if self.opts.timestamps {
                    cells.push(super::format_time(rec.time));
                }
                if self.opts.contexts {
                    cells.push(sanitize(rec.context.unwrap_or_default()).into_owned());
                }
                if self.opts.multi {
                    cells.push(sanitize(&rec.resource.kind).into_owned());
                }
                if self.opts.all_namespaces {
                    cells.push(sanitize(ns).into_owned());
                }
                let mut shown = sanitize(obj_name).into_owned();
                if delta.object.is_tombstone() {
                    shown.push_str(" (final state unknown)");
                }
                cells.push(shown);
                cells.push(obj.map_or("<unknown>".into(), |o| {
                    sanitize(o.resource_version()).into_owned()
                }));
                let row = RowObject::parse(cols, obj.map(|o| o.raw()));
                let created = obj.and_then(|o| o.meta().creation_timestamp.as_deref());
                for c in cols {
                    cells.push(sanitize(&row.cell(c, created, rec.time)).into_owned());
                }
                if self.current.as_ref() != Some(layout) {
                    self.current = Some(layout.clone());
                    // A new header is as wide as its first row, so that row lines up.
                    self.grow(layout, &cells);
                    if !self.opts.no_headers {
                        self.write_row(layout, layout, None)?;
                    }
                }
                self.write_row(layout, &cells, Some(color_of(delta.kind)))?;
                if let Some(d) = diff::compute(self.opts.diff, delta.kind, *prev, obj) {
                    self.write_diff(&d)?;
                }
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
