//! JSON lines: one self-contained object per record, `type` first, the object spliced in
//! as the raw bytes the server sent (minus managedFields), never re-serialised.

use std::io::{self, BufWriter, Write};

use super::{fields, object_json, Options, Printer, Record};

pub struct JsonPrinter<W: Write> {
    opts: Options,
    w: BufWriter<W>,
}

impl<W: Write> JsonPrinter<W> {
    pub fn new(opts: Options, w: W) -> Self {
        JsonPrinter {
            opts,
            w: BufWriter::with_capacity(64 * 1024, w),
        }
    }
}

impl<W: Write + Send> Printer for JsonPrinter<W> {
    fn print(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let (m, obj) = fields(rec);
        let head = serde_json::to_string(&m).map_err(io::Error::other)?;
        match obj {
            Some(o) => {
                // `head` is a JSON object: replace its closing brace with the object field.
                self.w.write_all(&head.as_bytes()[..head.len() - 1])?;
                self.w.write_all(b",\"object\":")?;
                self.w
                    .write_all(object_json(&o, self.opts.show_managed_fields).as_bytes())?;
                self.w.write_all(b"}\n")
            }
            None => {
                self.w.write_all(head.as_bytes())?;
                self.w.write_all(b"\n")
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
