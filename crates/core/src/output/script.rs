//! kubectl's formats for scripts, applied per delta: `-o name`, `-o jsonpath=…`,
//! `-o custom-columns=…`. They print objects only (no reflector events), one line per
//! delta, so `while read` loops work. Server strings are written as they are into a pipe
//! (as kubectl's jsonpath does) and escaped for a terminal.
//!
//! Reflector trouble after the first sync is reported on the diagnostics writer, one
//! line per change of state ([`super::health`]).
//!
//! With several contexts, each line says which: `-o name` prefixes `CONTEXT/`,
//! custom-columns get a CONTEXT column first; a jsonpath template is the user's own.

use std::borrow::Cow;
use std::io::{self, BufWriter, Write};
use std::time::Instant;

use serde_json::Value;

use super::columns;
use super::diagnostics::{self, Diagnostics};
use super::health::Health;
use super::options::{Format, Options};
use super::table::{HOLD_FOR, HOLD_ROWS};
use crate::context::ContextName;
use crate::informer::record::{Body, Record};
use crate::informer::sink::Sink;
use crate::template::{self, Template};
use crate::text::sanitize;

pub struct ScriptPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    diag: Diagnostics,
    health: Health,
    /// custom-columns: current column widths, never shrinking.
    widths: Vec<usize>,
    /// custom-columns: the initial lists' rows, held back until every resource has synced
    /// (on a terminal at most [`HOLD_ROWS`] rows or [`HOLD_FOR`], as the table) and then
    /// printed aligned as a whole, as kubectl aligns a list; `None` once released.
    held: Option<Vec<Vec<String>>>,
    held_since: Option<Instant>,
    /// Resources that have synced or were left out.
    done: usize,
    /// The informers that have joined ([`Sink::joined`]).
    joined: std::collections::BTreeSet<(String, Option<ContextName>)>,
    /// jsonpath and custom-columns: the parts of each object the templates read, parsed
    /// instead of the whole (`None`: the whole).
    reads: Option<template::Reads>,
}

impl<W: Write> ScriptPrinter<W> {
    pub fn new(opts: Options, w: W, diag: Diagnostics) -> Self {
        let reads = match &opts.format {
            Format::JsonPath(t) => t.reads(),
            Format::CustomColumns(cols) => {
                cols.iter()
                    .try_fold(template::Reads::default(), |mut all, c| {
                        all.merge(&c.template.reads()?);
                        Some(all)
                    })
            }
            _ => None,
        };
        ScriptPrinter {
            reads,
            opts,
            w: BufWriter::new(w),
            diag,
            health: Health::default(),
            widths: Vec::new(),
            held: Some(Vec::new()),
            held_since: None,
            done: 0,
            joined: Default::default(),
        }
    }

    /// Server text as this output shows it: escaped on a terminal, as is into a pipe.
    fn shown<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if self.opts.terminal {
            sanitize(s)
        } else {
            Cow::Borrowed(s)
        }
    }

    /// custom-columns: the header and the held rows, aligned together; from then on rows
    /// are printed as they come.
    fn release(&mut self) -> io::Result<()> {
        let Format::CustomColumns(cols) = &self.opts.format else {
            return Ok(());
        };
        let mut header: Vec<String> = Vec::with_capacity(cols.len() + 1);
        if self.opts.contexts {
            header.push("CONTEXT".into());
        }
        header.extend(cols.iter().map(|c| c.header.clone()));
        let Some(held) = self.held.take() else {
            return Ok(());
        };
        let shown = (!self.opts.no_headers).then_some(&header);
        for cells in shown.into_iter().chain(&held) {
            self.widths.resize(self.widths.len().max(cells.len()), 0);
            for (w, c) in self.widths.iter_mut().zip(cells) {
                *w = (*w).max(c.chars().count());
            }
        }
        if let Some(h) = shown {
            self.row(h)?;
        }
        held.iter().try_for_each(|cells| self.row(cells))
    }

    /// The held rows go out once every resource has synced, or on a terminal past the
    /// hold's limits.
    fn release_if_due(&mut self) -> io::Result<()> {
        let Some(held) = self.held.as_ref().map(Vec::len) else {
            return Ok(());
        };
        let exceeded = self.opts.terminal
            && (held >= HOLD_ROWS || self.held_since.is_some_and(|s| s.elapsed() >= HOLD_FOR));
        if self.done >= self.opts.targets.max(self.joined.len()).max(1) || exceeded {
            self.release()?;
        }
        Ok(())
    }

    fn row(&mut self, cells: &[String]) -> io::Result<()> {
        if self.widths.len() < cells.len() {
            self.widths.resize(cells.len(), 0);
        }
        let mut line = String::new();
        for (i, c) in cells.iter().enumerate() {
            let n = c.chars().count();
            self.widths[i] = self.widths[i].max(n);
            line.push_str(c);
            if i + 1 < cells.len() {
                line.extend(std::iter::repeat_n(' ', self.widths[i] - n + 3));
            }
        }
        writeln!(self.w, "{line}")
    }
}

/// `kind.group/name`, lowercase kind, as `kubectl get -o name` prints it.
pub fn name_of(r: &crate::client::target::Resource, name: &str) -> String {
    let kind = r.kind.to_lowercase();
    match columns::group(r) {
        "" => format!("{kind}/{name}"),
        g => format!("{kind}.{g}/{name}"),
    }
}

/// Reports a change of the reflector's health on the diagnostics writer, after what
/// stdout holds so a terminal shows both in order.
pub(super) fn report_health(
    health: &mut Health,
    rec: &Record<'_>,
    w: &mut impl Write,
    diag: &mut Diagnostics,
) -> io::Result<()> {
    if let Some(line) = health.observe(rec) {
        w.flush()?;
        writeln!(diag, "{line}")?;
        diag.flush()?;
    }
    Ok(())
}

impl<W: Write + Send> Sink for ScriptPrinter<W> {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        report_health(&mut self.health, rec, &mut self.w, &mut self.diag)?;
        if let Body::Synced = rec.body {
            self.done += 1;
            return self.release_if_due();
        }
        let Body::Delta {
            key,
            delta,
            initial_list,
            ..
        } = &rec.body
        else {
            return Ok(());
        };
        let name = key.rsplit_once('/').map_or(*key, |(_, n)| n);
        let reads = &self.reads;
        let value = || {
            delta.object.object().map_or(Value::Null, |o| match reads {
                Some(r) => r.value(o.raw()),
                None => o.to_value(),
            })
        };
        match &self.opts.format {
            Format::Name => {
                let mut line = name_of(rec.resource, name);
                if let Some(c) = rec.context {
                    line = format!("{c}/{line}");
                }
                let line = self.shown(&line).into_owned();
                writeln!(self.w, "{line}")
            }
            Format::JsonPath(t) => {
                let text = match t.render(&value()) {
                    Ok(text) => text,
                    // kubectl stops at such an object; a watch goes on to the next one.
                    Err(e) => return cannot_print(&mut self.diag, &e, key),
                };
                // One line per delta: kubectl prints the bare template, which runs deltas
                // together in a watch.
                let text = if self.opts.terminal {
                    sanitize_keep_layout(&text)
                } else {
                    text
                };
                if text.ends_with('\n') {
                    write!(self.w, "{text}")
                } else {
                    writeln!(self.w, "{text}")
                }
            }
            Format::CustomColumns(cols) => {
                let v = value();
                let mut cells: Vec<String> = Vec::with_capacity(cols.len() + 1);
                if self.opts.contexts {
                    cells.push(
                        self.shown(crate::context::or_empty(rec.context))
                            .into_owned(),
                    );
                }
                for c in cols {
                    let cell = match cell(&c.template, &v) {
                        Ok(cell) => cell,
                        Err(e) => return cannot_print(&mut self.diag, &e, key),
                    };
                    cells.push(self.shown(&cell).into_owned());
                }
                match &mut self.held {
                    Some(held) if *initial_list => {
                        held.push(cells);
                        self.held_since.get_or_insert_with(Instant::now);
                        self.release_if_due()
                    }
                    _ => {
                        self.release()?;
                        self.row(&cells)
                    }
                }
            }
            _ => Ok(()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.release_if_due()?;
        self.w.flush()?;
        self.diag.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.release()?;
        self.flush()
    }

    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        diagnostics::say(&mut self.diag, line)
    }

    fn joined(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        self.joined.insert((resource.to_owned(), context.cloned()));
        Ok(())
    }

    fn left_out(&mut self, _resource: &str, _context: Option<&ContextName>) -> io::Result<()> {
        self.done += 1;
        self.release_if_due()
    }
}

/// An object the template cannot be applied to (an index past a list's end, values of two
/// kinds compared): one line on the diagnostics writer naming it, and no data line.
fn cannot_print(diag: &mut Diagnostics, e: &template::ExecError, key: &str) -> io::Result<()> {
    let line = format!("error: {e} (object {key})");
    writeln!(diag, "{}", sanitize(&line))
}

/// A custom column's cell: the selected values joined by commas, each as Go's `%v` prints
/// it (a map `map[k:v]`, a list `[a b]`, a null `<nil>`), `<none>` when the path selects
/// nothing (kubectl's customcolumn.go).
pub(crate) fn cell(t: &Template, v: &Value) -> Result<String, template::ExecError> {
    let groups = t.results(v)?;
    let mut cells = Vec::new();
    if groups.first().is_none_or(Vec::is_empty) {
        cells.push("<none>".to_owned());
    }
    cells.extend(groups.iter().flatten().map(crate::gofmt::go_value));
    Ok(cells.join(","))
}

/// Sanitizes each line and tab-separated field of a template's output, keeping the
/// template's own newlines and tabs.
fn sanitize_keep_layout(s: &str) -> String {
    s.split('\n')
        .map(|line| {
            line.split('\t')
                .map(|f| sanitize(f).into_owned())
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::parse_custom_columns;
    use serde_json::json;

    fn pod() -> Value {
        json!({"metadata": {"name": "web"},
               "spec": {"containers": [{"name": "a", "image": "i1"}, {"name": "b", "image": "i2"}]}})
    }

    #[test]
    fn custom_columns_split_and_fill_like_kubectl() {
        let cols =
            parse_custom_columns("NAME:.metadata.name,IMAGES:.spec.containers[*].image,X:.nope")
                .unwrap();
        let p = pod();
        let cells: Vec<String> = cols
            .iter()
            .map(|c| cell(&c.template, &p).unwrap())
            .collect();
        assert_eq!(cells, ["web", "i1,i2", "<none>"]);
        assert!(parse_custom_columns("NAME").is_err());
        // Maps and lists as Go's %v, as kubectl's custom columns print
        // them (`map[k:new]`), not as JSON.
        let cols = parse_custom_columns("L:.metadata.labels,C:.spec.containers[0],N:.n").unwrap();
        let v = json!({"metadata": {"labels": {"tier-x": "f", "app": "w"}},
                       "spec": {"containers": [{"name": "a", "ports": [80, 443]}]}, "n": 1.5});
        let cells: Vec<String> = cols
            .iter()
            .map(|c| cell(&c.template, &v).unwrap())
            .collect();
        assert_eq!(
            cells,
            ["map[app:w tier-x:f]", "map[name:a ports:[80 443]]", "1.5"]
        );
    }
}
