//! Printing what the informer sees: every printer is a [`Sink`](crate::informer::sink::Sink)
//! of the informer's records, writing deltas, reflector events and observations as a
//! table, JSON lines or YAML. Printers are generic over two writers, one for data
//! (stdout) and one for diagnostics (stderr: the table's `~` lines, the script formats'
//! failure reports, the informer's own lines), and know nothing of where records come
//! from.
//!
//! JSON lines and YAML carry the same records ([`record::Line`], docs/output-schema.md); the
//! table is for people; `-o name|jsonpath|custom-columns|watch-events` are kubectl's script
//! formats, applied per delta. [`printer`] builds the one for a format; [`options`] holds
//! what the command line chose.

pub mod columns;
pub mod diagnostics;
mod fleet;
mod health;
mod json;
pub mod live;
pub mod object;
pub mod options;
mod printer;
pub mod progress;
pub mod record;
mod repeats;
pub(crate) mod script;
pub(crate) mod table;
pub mod yaml;

pub use options::{Format, FormatError, Options, View, FORMATS};
pub use printer::printer;

use crate::cache::reflector::ReflectorEvent;
use crate::informer::record::Observation;

/// The table's `~` line for a reflector event of the informer `name` (`pods`, `pods in
/// prod` with several contexts), without the `~`; `None` where the table prints none (a
/// bookmark). For views that tell the informer's story in the table's words, as the
/// application's timeline page does.
pub fn event_line(name: &str, e: &ReflectorEvent) -> Option<String> {
    table::event_text(name, e)
}

/// [`event_line`] of an observation (`None` for a freshness sample, which has no line).
pub fn observation_line(name: &str, o: &Observation) -> Option<String> {
    table::observation_text(name, o)
}

#[cfg(test)]
mod tests;
