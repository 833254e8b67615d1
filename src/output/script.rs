//! kubectl's formats for scripts, applied per delta: `-o name`, `-o jsonpath=…`,
//! `-o custom-columns=…`. They print objects only (no reflector events), one line per
//! delta, so `while read` loops work; server strings are sanitized like everywhere.

use std::io::{self, BufWriter, Write};

use serde_json::Value;

use super::sanitize::sanitize;
use super::{columns, Body, Format, Options, Printer, Record};

pub struct ScriptPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
    /// custom-columns: current column widths, never shrinking.
    widths: Vec<usize>,
    header_done: bool,
}

impl<W: Write> ScriptPrinter<W> {
    pub fn new(opts: Options, w: W) -> Self {
        ScriptPrinter {
            opts,
            w: BufWriter::new(w),
            widths: Vec::new(),
            header_done: false,
        }
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
pub fn name_of(r: &super::Resource, name: &str) -> String {
    let kind = r.kind.to_lowercase();
    match columns::group(r) {
        "" => format!("{kind}/{name}"),
        g => format!("{kind}.{g}/{name}"),
    }
}

impl<W: Write + Send> Printer for ScriptPrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let Body::Delta { key, delta, .. } = &rec.body else {
            return Ok(());
        };
        let name = key.rsplit_once('/').map_or(*key, |(_, n)| n);
        let value = || delta.object.object().map_or(Value::Null, |o| o.to_value());
        match &self.opts.format {
            Format::Name => {
                let line = name_of(rec.resource, name);
                writeln!(self.w, "{}", sanitize(&line))
            }
            Format::JsonPath(t) => {
                let text = t.render(&value());
                // One line per delta: kubectl prints the bare template, which runs deltas
                // together in a watch.
                let text = sanitize_keep_layout(&text);
                if text.ends_with('\n') {
                    write!(self.w, "{text}")
                } else {
                    writeln!(self.w, "{text}")
                }
            }
            Format::CustomColumns(cols) => {
                let v = value();
                let cells: Vec<String> = cols
                    .iter()
                    .map(|c| sanitize(&super::template::cell(&c.template, &v)).into_owned())
                    .collect();
                if !self.header_done {
                    self.header_done = true;
                    // The header is as wide as the first row, so that row lines up.
                    self.widths = cells.iter().map(|c| c.chars().count()).collect();
                    if !self.opts.no_headers {
                        let h: Vec<String> = cols.iter().map(|c| c.header.clone()).collect();
                        self.row(&h)?;
                    }
                }
                self.row(&cells)
            }
            _ => Ok(()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
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
