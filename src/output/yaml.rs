//! YAML: the JSON-lines records as a multi-document stream. The only file that uses
//! serde_yaml (archived upstream), so a swap touches nothing else.

use std::io::{self, BufWriter, Write};

use serde_json::Value;

use super::{diff, fields, object_json, record_diff, Options, Printer, Record};

pub struct YamlPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
}

impl<W: Write> YamlPrinter<W> {
    pub fn new(opts: Options, w: W) -> Self {
        YamlPrinter {
            opts,
            w: BufWriter::new(w),
        }
    }
}

impl<W: Write + Send> Printer for YamlPrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let (mut m, obj) = fields(rec);
        if let Some(d) = record_diff(rec, self.opts.diff) {
            m.insert("changed".into(), Value::Bool(d.changed));
            if d.known {
                // For people: `path: old → new`, one string per changed path.
                let lines = diff::lines(&d).into_iter().map(Value::String).collect();
                m.insert("diff".into(), Value::Array(lines));
            }
        }
        if let Some(o) = obj {
            // An object kwatch holds as raw JSON may still be beyond what a recursive
            // parser takes (nesting deeper than 128): say so instead of failing the stream.
            match serde_json::from_str(&object_json(&o, self.opts.show_managed_fields)) {
                Ok(v) => {
                    m.insert("object".into(), v);
                }
                Err(e) => {
                    m.insert("object".into(), Value::Null);
                    m.insert("objectError".into(), Value::String(e.to_string()));
                }
            }
        }
        let text = serde_yaml::to_string(&m).map_err(io::Error::other)?;
        self.w.write_all(b"---\n")?;
        self.w.write_all(text.as_bytes())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
