//! The table: a header once, a row per delta, and a `~` line per reflector event saying
//! what happened and why. Column widths only grow, so rows do not jitter as they stream.
//! Every string from the server is sanitized; colour only when asked.

use std::io::{self, BufWriter, Write};
use std::time::Duration;

use crossterm::style::{Color, Stylize};

use super::sanitize::sanitize;
use super::{Body, Options, Printer, Record};
use crate::delta::DeltaType;
use crate::reflector::ReflectorEvent;

pub struct TablePrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    /// Current width of each column; never shrinks.
    widths: Vec<usize>,
    header_done: bool,
}

impl<W: Write> TablePrinter<W> {
    pub fn new(opts: Options, w: W) -> Self {
        TablePrinter {
            opts,
            w: BufWriter::new(w),
            // TYPE is as wide as its longest value from the start.
            widths: vec!["Replaced".len()],
            header_done: false,
        }
    }

    fn headers(&self) -> Vec<&'static str> {
        let mut h = vec!["TYPE"];
        if self.opts.multi {
            h.push("KIND");
        }
        if self.opts.all_namespaces {
            h.push("NAMESPACE");
        }
        h.extend(["NAME", "RESOURCEVERSION", "AGE"]);
        h
    }

    fn write_row(&mut self, cells: &[String], color: Option<Color>) -> io::Result<()> {
        if self.widths.len() < cells.len() {
            self.widths.resize(cells.len(), 0);
        }
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let n = cell.chars().count();
            self.widths[i] = self.widths[i].max(n);
            if i + 1 == cells.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', self.widths[i] - n + 3));
            }
        }
        match color.filter(|_| self.opts.color) {
            Some(c) => {
                // Colour only the TYPE cell, keeping the alignment of the rest.
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

/// kubectl's `duration.HumanDuration`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    let (m, h, days) = (s / 60, s / 3600, s / 86400);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        format!("{m}m{}s", s % 60)
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        format!("{h}h{}m", m % 60)
    } else if h < 48 {
        format!("{h}h")
    } else if h < 24 * 8 {
        format!("{days}d{}h", h % 24)
    } else if days < 365 * 2 {
        format!("{days}d")
    } else if days < 365 * 8 {
        format!("{}y{}d", days / 365, days % 365)
    } else {
        format!("{}y", days / 365)
    }
}

fn age(created: Option<&str>, now: jiff::Timestamp) -> String {
    let Some(t) = created.and_then(|c| c.parse::<jiff::Timestamp>().ok()) else {
        return "<unknown>".into();
    };
    let secs = now.as_second().saturating_sub(t.as_second()).max(0);
    human_duration(Duration::from_secs(secs.unsigned_abs()))
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
            let s = if *pages == 1 { "" } else { "s" };
            let how = if *streaming {
                "streamed".to_owned()
            } else {
                format!("in {pages} page{s}")
            };
            format!(
                "listed {name}: {items} items {how} at rv={resource_version} in {}{fallback}",
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
                "watch {name} {how} after {} and {events} events: {reason}",
                secs(elapsed)
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
    })
}

impl<W: Write + Send> Printer for TablePrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let name = &rec.resource.name;
        match &rec.body {
            Body::Event(e) => match event_text(name, e) {
                Some(t) => self.write_event(t),
                None => Ok(()),
            },
            Body::Synced => self.write_event(format!("synced {name}")),
            Body::Delta { key, delta, .. } => {
                if !self.header_done {
                    self.header_done = true;
                    let h: Vec<String> = self.headers().into_iter().map(String::from).collect();
                    self.write_row(&h, None)?;
                }
                let (ns, obj_name) = key.split_once('/').unwrap_or(("", key));
                let obj = delta.object.object();
                let mut cells = vec![delta.kind.as_str().to_owned()];
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
                cells.push(age(
                    obj.and_then(|o| o.meta().creation_timestamp.as_deref()),
                    rec.time,
                ));
                self.write_row(&cells, Some(color_of(delta.kind)))
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
