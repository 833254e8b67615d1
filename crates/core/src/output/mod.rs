//! Printing what the informer sees: deltas and reflector events as a table, JSON lines or
//! YAML. Printers are generic over two writers, one for data (stdout) and one for
//! diagnostics (stderr: the table's `~` lines, the script formats' failure reports), and
//! know nothing of where records come from.
//!
//! JSON lines and YAML carry the same records ([`record::Line`], docs/output-schema.md); the
//! table is for people; `-o name|jsonpath|custom-columns|watch-events` are kubectl's script
//! formats, applied per delta.

pub mod blame;
pub mod columns;
pub mod diff;
mod fleet;
mod health;
mod json;
pub mod live;
mod printer;
pub mod progress;
pub mod record;
mod repeats;
mod script;
pub(crate) mod table;
pub mod template;
mod yaml;

pub use printer::*;
