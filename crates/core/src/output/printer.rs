//! Which printer for which format: [`printer`], every printer behind one [`Sink`].

use std::io::{self, Write};

use super::diagnostics::Diagnostics;
use super::options::{Format, Options, View};
use super::{fleet, json, script, table, yaml};
use crate::context::ContextName;
use crate::informer::record::{Body, Record};
use crate::informer::sink::Sink;

/// The printer for `opts.format`: data to `w`, diagnostics to `diag`. JSON and YAML carry
/// reflector events as records on `w`; the table's `~` lines, the script formats' error
/// lines and the informer's own lines ([`Sink::diagnostic`]) go to `diag`, so `w` carries
/// data only.
///
/// JSON lines (`-o json`, docs/output-schema.md) of one delta, into memory:
///
/// ```
/// use std::io::{self, Write};
/// use std::sync::{Arc, Mutex};
/// use kwatch_core::cache::delta::{Delta, DeltaType};
/// use kwatch_core::cache::object::Object;
/// use kwatch_core::client::target::Resource;
/// use kwatch_core::informer::record::{Body, Record};
/// use kwatch_core::informer::sink::Sink;
/// use kwatch_core::output::{self, Format, Options};
///
/// /// A writer whose bytes the example reads back.
/// #[derive(Clone, Default)]
/// struct Shared(Arc<Mutex<Vec<u8>>>);
/// impl Write for Shared {
///     fn write(&mut self, b: &[u8]) -> io::Result<usize> { self.0.lock().unwrap().write(b) }
///     fn flush(&mut self) -> io::Result<()> { Ok(()) }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let out = Shared::default();
/// let opts = Options { format: Format::Json, ..Options::default() };
/// let mut printer = output::printer(opts, out.clone(), io::sink());
///
/// let (name, kind, api_version) = ("pods".into(), "Pod".into(), "v1".into());
/// let pods = Resource { name, kind, api_version, namespaced: true };
/// let meta = serde_json::json!({"name": "a", "namespace": "ns", "resourceVersion": "7"});
/// let obj = Object::from_json(&serde_json::json!({"kind": "Pod", "metadata": meta}).to_string())?;
/// let delta = Delta::new(DeltaType::Added, Arc::new(obj));
/// let body = Body::Delta { key: "ns/a", delta: &delta, initial_list: false, prev: None };
/// printer.record(&Record::new(&pods, None, jiff::Timestamp::UNIX_EPOCH, body))?;
/// printer.flush()?;
///
/// let text = String::from_utf8(out.0.lock().unwrap().clone())?;
/// let line: serde_json::Value = serde_json::from_str(text.trim_end())?;
/// assert_eq!(line["type"], "Added");
/// assert_eq!(line["key"], "ns/a");
/// assert_eq!(line["resourceVersion"], "7");
/// assert_eq!(line["object"]["metadata"]["name"], "a");
/// # Ok(())
/// # }
/// ```
pub fn printer<W, D>(opts: Options, w: W, diag: D) -> Box<dyn Sink>
where
    W: Write + Send + 'static,
    D: Write + Send + 'static,
{
    let diag: Diagnostics = Box::new(diag);
    let view = opts.view;
    if view == View::Fleet {
        // The table prints only its `~` lines here: the fleet's lines are the data.
        let contexts = opts.context_names.clone();
        if opts.format == Format::Json {
            return Box::new(fleet::FleetPrinter::new(w, None, Some(diag), contexts));
        }
        let table = Box::new(table::TablePrinter::new(opts, io::sink(), diag));
        return Box::new(fleet::FleetPrinter::new(w, Some(table), None, contexts));
    }
    let inner: Box<dyn Sink> = match opts.format {
        Format::Json => Box::new(json::JsonPrinter::new(opts, w, diag)),
        Format::WatchEvents => Box::new(json::WatchEventPrinter::new(opts, w, diag)),
        Format::Yaml => Box::new(yaml::YamlPrinter::new(opts, w, diag)),
        Format::Table | Format::Wide => Box::new(table::TablePrinter::new(opts, w, diag)),
        Format::Name | Format::CustomColumns(_) | Format::JsonPath(_) => {
            Box::new(script::ScriptPrinter::new(opts, w, diag))
        }
    };
    Box::new(ViewFilter { view, inner })
}

/// The view that shows `body`; `None`: every view (events, observations, Synced).
fn view_of(body: &Body<'_>) -> Option<View> {
    match body {
        Body::Delta { .. } => Some(View::Deltas),
        Body::Handler { .. } => Some(View::Handlers),
        Body::Event(_) | Body::Observed(_) | Body::Synced => None,
    }
}

/// Passes on the records of its view (and the events every view shows), so a printer
/// sees deltas or handler calls, never both.
struct ViewFilter {
    view: View,
    inner: Box<dyn Sink>,
}

impl Sink for ViewFilter {
    fn record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        if view_of(&rec.body).is_some_and(|v| v != self.view) {
            return Ok(());
        }
        self.inner.record(rec)
    }

    fn diagnostic(&mut self, line: &str) -> io::Result<()> {
        self.inner.diagnostic(line)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.inner.finish()
    }

    fn joined(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        self.inner.joined(resource, context)
    }

    fn left_out(&mut self, resource: &str, context: Option<&ContextName>) -> io::Result<()> {
        self.inner.left_out(resource, context)
    }
}
