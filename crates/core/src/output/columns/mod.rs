//! The resource columns of the table, as `kubectl get` prints them: built-in printers
//! for the common kinds (one file per kind family), a custom resource's
//! additionalPrinterColumns (`crd.rs`), the server's Table (`server_table.rs`), else AGE
//! alone. In `registry.rs`: the column type, the registry of printers (`BUILTIN`, `has_printer`,
//! `resource_columns`), `-L`/`--show-labels` and the once-per-row parse ([`RowObject`]).
//! Each column turns an object (parsed once per row, only when a column needs it) into
//! one cell. [`ServerPrinter`] prints the same columns as kube-apiserver's Table rows
//! (typed cells, every column), for the simulator.

mod cluster;
mod crd;
mod events;
mod format;
#[cfg(test)]
mod genuine;
mod network;
mod pod;
mod rbac;
mod registry;
mod server_table;
mod storage;
#[cfg(test)]
mod tests;
mod workloads;

pub use crd::PrinterColumn;
pub use events::event_tree_columns;
pub use format::{go_float, go_json, go_value};
pub use pod::PodColumn;
pub use registry::*;
pub use server_table::{server_cell, server_columns};
pub use storage::access_modes;
